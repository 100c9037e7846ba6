// RUN: irc-opt --split-input-file %s -p matmul-to-loops | filecheck %s
// RUN: irc-opt --split-input-file %s -p matmul-to-loops,tensor-to-loop,simplify-loop,fuse-loops,simplify-loop | filecheck %s --check-prefix=FUSED
// The generated matmul (options={"matmul": "loops"}): a product is one nest over (batch..., M, K, N) with K
// the reduction, N innermost; fusion appends the epilogue to it.

func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %r = tn.mm %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// CHECK-LABEL: func.func @mm
// CHECK-NEXT:  %r = loop.nest space = affine_map<() -> (4, 8, 16)> iterators = ["parallel", "reduction", "parallel"] : tensor<4x16xf32> {
// CHECK-NEXT:    %0 = loop.load %a[affine_map<(d0, d1, d2) -> (d0, d1)>] : tensor<4x8xf32> -> f32
// CHECK-NEXT:    %1 = loop.load %b[affine_map<(d0, d1, d2) -> (d1, d2)>] : tensor<8x16xf32> -> f32
// CHECK-NEXT:    %2 = arith.mulf %0, %1 : f32
// CHECK-NEXT:    %3 = loop.reduce sum %2 : f32 -> f32
// CHECK-NEXT:    loop.yield %3 : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r

// -----
func.func @bmm_dynamic(%a: tensor<?x5x7xf32>, %b: tensor<?x7x3xf32>) -> tensor<?x5x3xf32> {
  %r = tn.bmm %a, %b : tensor<?x5x7xf32>, tensor<?x7x3xf32> -> tensor<?x5x3xf32>
  func.return %r : tensor<?x5x3xf32>
}
// The batch is the outermost dim; a dynamic size is a symbol bound to tn.dim.
// CHECK-LABEL: func.func @bmm_dynamic
// CHECK-NEXT:  %dim = tn.dim %a dim = 0 : tensor<?x5x7xf32>
// CHECK-NEXT:  %r = loop.nest space = affine_map<()[s0] -> (s0, 5, 7, 3)> symbols(%dim) iterators = ["parallel", "parallel", "reduction", "parallel"] : tensor<?x5x3xf32> {
// CHECK-NEXT:    loop.load %a[affine_map<(d0, d1, d2, d3)[s0] -> (d0, d1, d2)>]
// CHECK-NEXT:    loop.load %b[affine_map<(d0, d1, d2, d3)[s0] -> (d0, d2, d3)>]
// CHECK-NEXT:    arith.mulf
// CHECK-NEXT:    loop.reduce sum

// -----
func.func @integer(%a: tensor<5x7xi64>, %b: tensor<7x3xi64>) -> tensor<5x3xi64> {
  %r = tn.mm %a, %b : tensor<5x7xi64>, tensor<7x3xi64> -> tensor<5x3xi64>
  func.return %r : tensor<5x3xi64>
}
// An integer product stays torch's kernel.
// CHECK-LABEL: func.func @integer
// CHECK-NEXT:  %r = tn.mm %a, %b

// -----
func.func @linear_relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %p = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %s = tn.add %p, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = tn.relu %s : tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// Bias and ReLU after the sum, in the product's own nest: one kernel, the product never written.
// FUSED-LABEL: func.func @linear_relu
// FUSED-NEXT:  %r = loop.nest space = affine_map<() -> (4, 8, 16)> iterators = ["parallel", "reduction", "parallel"] : tensor<4x16xf32> {
// FUSED-NEXT:    loop.load %x
// FUSED-NEXT:    loop.load %w
// FUSED-NEXT:    arith.mulf
// FUSED-NEXT:    %[[S:.*]] = loop.reduce sum
// FUSED-NEXT:    %[[B:.*]] = loop.load %b[affine_map<(d0, d1, d2) -> (d2)>]
// FUSED-NEXT:    %[[Y:.*]] = arith.addf %[[S]], %[[B]] : f32
// FUSED-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// FUSED-NEXT:    %[[R:.*]] = arith.maximumf %[[Y]], %[[Z]] : f32
// FUSED-NEXT:    loop.yield %[[R]] : f32
// FUSED-NEXT:  }
// FUSED-NEXT:  func.return %r
