// RUN: irc-opt %s --stage loop | filecheck %s
// The whole loop stage (tensor-to-loop, simplify-loop, fuse-loops, simplify-loop) on Linear + bias + ReLU:
// one extern (the matmul, reading the weight through a strided view) and one nest for its epilogue.

func.func @linear_bias_relu(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %wt = tn.permute %w perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %mm = tn.mm %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = tn.add %mm, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = tn.relu %y : tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// CHECK-LABEL: func.func @linear_bias_relu
// CHECK-NEXT:  %wt = loop.view %w[affine_map<(d0, d1) -> (d1, d0)>] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %mm = tn.mm %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %r = loop.nest space = affine_map<() -> (4, 16)> iterators = ["parallel", "parallel"]
// CHECK:         arith.addf
// CHECK:         arith.maximumf
// CHECK:       func.return %r
// CHECK-NOT:   loop.nest
