// RUN: irc-opt -t triton %s | filecheck %s

// A linear layer with bias and relu: the mm stays an extern (torch's kernel by default, so the bias-relu
// kernel is printed on its own), and with options={"matmul": "dot"} it runs as the tl.dot template whose
// epilogue is that kernel's body: the product's load becomes the f32 accumulator tile.

func.func @main(%x: tensor<16x32xf32>, %wt: tensor<32x24xf32>, %b: tensor<24xf32>) -> tensor<16x24xf32> {
  %mm = tn.mm %x, %wt : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  %y = tn.add %mm, %b : tensor<16x24xf32>, tensor<24xf32> -> tensor<16x24xf32>
  %h = tn.relu %y : tensor<16x24xf32>
  func.return %h : tensor<16x24xf32>
}

// CHECK:      # @kernel0: pointwise
// CHECK:      # mm extern 0 with matmul=dot: tl.dot template, epilogue @kernel0
// CHECK-NEXT: @triton.jit
// CHECK-NEXT: def mm0_kernel0(a, a_n0, a_n1, a_s0, a_s1, b, b_n0, b_n1, b_s0, b_s1, in0, in0_n0, in0_n1, in0_s0, in0_s1, in1, in1_n0, in1_s0, out0, out0_n0, out0_n1, out0_s0, out0_s1, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
// CHECK-NEXT:     d0 = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
// CHECK-NEXT:     d1 = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
// CHECK-NEXT:     xmask = (d0 < M) & (d1 < N)
// CHECK-NEXT:     acc = tl.full([BLOCK_M, BLOCK_N], 0, tl.float32)
// CHECK-NEXT:     for k0 in range(0, K, BLOCK_K):
// CHECK-NEXT:         rk = k0 + tl.arange(0, BLOCK_K)
// CHECK-NEXT:         at = tl.load(a + d0 * a_s0 + rk[None, :] * a_s1, mask=(d0 < M) & (rk[None, :] < K), other=0)
// CHECK-NEXT:         bt = tl.load(b + rk[:, None] * b_s0 + d1 * b_s1, mask=(rk[:, None] < K) & (d1 < N), other=0)
// CHECK-NEXT:         acc += tl.dot(at, bt, input_precision="ieee")
// CHECK-NEXT:     acc_t = acc
// CHECK-NEXT:     v0 = acc_t
// CHECK-NEXT:     v1 = tl.load(in1 + d1 * in1_s0, mask=xmask, other=0)
// CHECK-NEXT:     v2 = (v0 + v1)
// CHECK-NEXT:     v3 = tl.full([1, 1], 0.0, tl.float32)
// CHECK-NEXT:     v4 = _maximumf(v2, v3)
// CHECK-NEXT:     tl.store(out0 + d0 * out0_s0 + d1 * out0_s1, v4, mask=xmask)
