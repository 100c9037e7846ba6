// RUN: irc-opt -t triton %s | filecheck %s

// A broadcast add and relu: one pointwise kernel over the flat index; each dim recovered by // and %,
// the broadcast operand read through its own stride, no range check where the bounds prove it.

func.func @main(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = tn.add %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %r = tn.relu %a : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK:      # @kernel0: pointwise
// CHECK-NEXT: @triton.jit
// CHECK-NEXT: def kernel0(in0, in0_n0, in0_n1, in0_s0, in0_s1, in1, in1_n0, in1_s0, out0, out0_n0, out0_n1, out0_s0, out0_s1, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
// CHECK-NEXT:     xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
// CHECK-NEXT:     xmask = xindex < xnumel
// CHECK-NEXT:     d0 = xindex // 8
// CHECK-NEXT:     d1 = xindex % 8
// CHECK-NEXT:     v0 = tl.load(in0 + d0 * in0_s0 + d1 * in0_s1, mask=xmask, other=0)
// CHECK-NEXT:     v1 = tl.load(in1 + d1 * in1_s0, mask=xmask, other=0)
// CHECK-NEXT:     v2 = (v0 + v1)
// CHECK-NEXT:     v3 = tl.full([1], 0.0, tl.float32)
// CHECK-NEXT:     v4 = _maximumf(v2, v3)
// CHECK-NEXT:     tl.store(out0 + d0 * out0_s0 + d1 * out0_s1, v4, mask=xmask)
