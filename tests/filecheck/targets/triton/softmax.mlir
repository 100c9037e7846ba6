// RUN: irc-opt -t triton %s | filecheck %s

// Softmax is one fused kernel: max, then the sum of exponentials, then the quotient, over rows held in
// registers; the max propagates NaN (_rmax), and both reductions keep their axis to broadcast back.

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tn.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = tn.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %e = tn.exp %d : tensor<4x8xf32>
  %s = tn.sum %e dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %r = tn.div %e, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK:      # @kernel0: single
// CHECK:          v0 = tl.load(in0 + d0 * in0_s0 + d1 * in0_s1, mask=xmask & rmask, other=0)
// CHECK-NEXT:     v1 = _rmax(tl.where(rmask, tl.broadcast_to(v0, [XBLOCK, RBLOCK]), tl.full([1, 1], float("-inf"), tl.float32)))
// CHECK-NEXT:     v2 = (v0 - v1)
// CHECK-NEXT:     v3 = tl.exp(v2)
// CHECK-NEXT:     v4 = _rsum(tl.where(rmask, tl.broadcast_to(v3, [XBLOCK, RBLOCK]), tl.full([1, 1], 0, tl.float32)))
// CHECK-NEXT:     v5 = (v3 / v4)
// CHECK-NEXT:     tl.store(out0 + d0 * out0_s0 + d1 * out0_s1, v5, mask=xmask & rmask)
// CHECK-NOT:  @triton.jit
