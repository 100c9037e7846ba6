// RUN: irc-opt -t triton %s | filecheck %s

// A row sum with keepdim over a dynamic batch: whole rows of the static extent 33 in registers
// (RBLOCK, a power of two, masked by rmask), masked lanes hold the identity, tl.reduce with the standard
// sum combine keeps the reduced axis; the reduced output is written once per row.

func.func @main(%x: tensor<?x33xf32>) -> tensor<?x1xf32> {
  %s = tn.sum %x dims = [1] : tensor<?x33xf32> -> tensor<?x1xf32>
  func.return %s : tensor<?x1xf32>
}

// CHECK:      # @kernel0: single
// CHECK-NEXT: @triton.jit
// CHECK-NEXT: def kernel0(in0, in0_n0, in0_n1, in0_s0, in0_s1, out0, out0_n0, out0_n1, out0_s0, out0_s1, s0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK-NEXT:     xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
// CHECK-NEXT:     xmask = xindex < xnumel
// CHECK-NEXT:     d0 = xindex
// CHECK-NEXT:     rindex = tl.arange(0, RBLOCK)[None, :]
// CHECK-NEXT:     rmask = rindex < rnumel
// CHECK-NEXT:     d1 = rindex
// CHECK-NEXT:     v0 = tl.load(in0 + d0 * in0_s0 + d1 * in0_s1, mask=xmask & rmask & (d0 < in0_n0), other=0)
// CHECK-NEXT:     v1 = _rsum(tl.where(rmask, tl.broadcast_to(v0, [XBLOCK, RBLOCK]), tl.full([1, 1], 0, tl.float32)))
// CHECK-NEXT:     tl.store(out0 + d0 * out0_s0, v1, mask=xmask)
