// RUN: irc-opt -t triton %s | filecheck %s

// A row of dynamic length is reduced in a loop over RBLOCK chunks: each lane keeps its own running
// (value, position) with _argmax's order (NaN largest, first position on ties), and after the loop the
// lanes are combined (_rargmax). The dynamic source dim gets a range check the bounds cannot prove.

func.func @main(%x: tensor<4x?xf32>) -> tensor<4x1xi64> {
  %m = tn.argmax %x dims = [1] : tensor<4x?xf32> -> tensor<4x1xi64>
  func.return %m : tensor<4x1xi64>
}

// CHECK:      # @kernel0: looped
// CHECK:          acc0_0_v = tl.full([XBLOCK, RBLOCK], float("-inf"), tl.float32)
// CHECK-NEXT:     acc0_0_i = tl.full([XBLOCK, RBLOCK], 2**62, tl.int64)
// CHECK-NEXT:     for roff in range(0, rnumel, RBLOCK):
// CHECK-NEXT:         rindex = roff + tl.arange(0, RBLOCK)[None, :]
// CHECK-NEXT:         rmask = rindex < rnumel
// CHECK-NEXT:         d1 = rindex
// CHECK-NEXT:         v0_1 = tl.load(in0 + d0 * in0_s0 + d1 * in0_s1, mask=xmask & rmask & (d1 < in0_n1), other=0)
// CHECK-NEXT:         acc0_0_v, acc0_0_i = _argmax(acc0_0_v, acc0_0_i, tl.where(rmask, {{.*}}), tl.broadcast_to(rindex, [XBLOCK, RBLOCK]).to(tl.int64))
// CHECK-NEXT:     v0 = _rargmax(acc0_0_v, acc0_0_i)
// CHECK-NEXT:     tl.store(out0 + d0 * out0_s0, v0, mask=xmask)
