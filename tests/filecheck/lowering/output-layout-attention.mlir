// RUN: irc-opt --split-input-file %s -p output-layout | filecheck %s
// A heads-last attention's query computed by a nest (a training forward: GPT-2's c_attn bias add split into
// q, k and v heads, one nest of three results) is computed heads-last: torch's flash kernel writes its output
// in its query's layout, and a (batch, heads, rows, d) query gave a copy into the heads-last result every call.

func.func @main(%mm: tensor<32x96xf32>, %b: tensor<96xf32>) -> (tensor<2x16x4x8xf32>, tensor<2x4x16x8xf32>) {
  %k, %v, %q = loop.nest space = affine_map<() -> (2, 4, 16, 8)> iterators = ["parallel", "parallel", "parallel", "parallel"] : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> {
    %0 = loop.load %b[affine_map<(d0, d1, d2, d3) -> ((((d1 * 8) + d3) + 32))>] : tensor<96xf32> -> f32
    %1 = loop.load %mm[affine_map<(d0, d1, d2, d3) -> (((d0 * 16) + d2), (((d1 * 8) + d3) + 32))>] : tensor<32x96xf32> -> f32
    %2 = arith.addf %0, %1 : f32
    %3 = loop.load %b[affine_map<(d0, d1, d2, d3) -> ((((d1 * 8) + d3) + 64))>] : tensor<96xf32> -> f32
    %4 = loop.load %mm[affine_map<(d0, d1, d2, d3) -> (((d0 * 16) + d2), (((d1 * 8) + d3) + 64))>] : tensor<32x96xf32> -> f32
    %5 = arith.addf %3, %4 : f32
    %6 = loop.load %b[affine_map<(d0, d1, d2, d3) -> (((d1 * 8) + d3))>] : tensor<96xf32> -> f32
    %7 = loop.load %mm[affine_map<(d0, d1, d2, d3) -> (((d0 * 16) + d2), ((d1 * 8) + d3))>] : tensor<32x96xf32> -> f32
    %8 = arith.addf %6, %7 : f32
    loop.yield %2, %5, %8 : f32, f32, f32
  }
  %o, %lse = tn.sdpa %q, %k, %v scale = 0.35 causal heads_last : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x16x4x8xf32>, tensor<2x16x4xf32>
  func.return %o, %q : tensor<2x16x4x8xf32>, tensor<2x4x16x8xf32>
}
// The nest runs over (batch, rows, heads, d), its loads reindexed; each result is a view in the old dims, the
// attention and the return read the views.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[K:.*]], %[[V:.*]], %[[Q:.*]] = loop.nest space = affine_map<() -> (2, 16, 4, 8)> iterators = ["parallel", "parallel", "parallel", "parallel"] : tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32> {
// CHECK-NEXT:    loop.load %b[affine_map<(d0, d1, d2, d3) -> ((((d2 * 8) + d3) + 32))>]
// CHECK-NEXT:    loop.load %mm[affine_map<(d0, d1, d2, d3) -> (((d0 * 16) + d1), (((d2 * 8) + d3) + 32))>]
// CHECK:       }
// CHECK-NEXT:  %k = loop.view %[[K]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>] : tensor<2x16x4x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT:  %v = loop.view %[[V]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>]
// CHECK-NEXT:  %q = loop.view %[[Q]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>]
// CHECK-NEXT:  %o, %lse = tn.sdpa %q, %k, %v scale = 3.500000e-01 causal heads_last
// CHECK-NEXT:  func.return %o, %q

// -----
func.func @main(%x: tensor<2x4x16x8xf32>) -> (tensor<2x16x4x8xf32>, tensor<2x4x16x1xf32>) {
  %q = loop.nest space = affine_map<() -> (2, 4, 16, 8)> iterators = ["parallel", "parallel", "parallel", "parallel"] : tensor<2x4x16x8xf32> {
    %0 = loop.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>] : tensor<2x4x16x8xf32> -> f32
    %1 = math.exp %0 : f32
    loop.yield %1 : f32
  }
  %o, %lse = tn.sdpa %q, %q, %q scale = 0.35 heads_last : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x16x4x8xf32>, tensor<2x16x4xf32>
  %s = loop.nest space = affine_map<() -> (2, 4, 16, 8)> iterators = ["parallel", "parallel", "parallel", "reduction"] : tensor<2x4x16x1xf32> {
    %2 = loop.load %q[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>] : tensor<2x4x16x8xf32> -> f32
    %3 = loop.reduce sum %2 : f32 -> f32
    loop.yield %3 : f32
  }
  func.return %o, %s : tensor<2x16x4x8xf32>, tensor<2x4x16x1xf32>
}
// Not when a kernel reads the query too: it was fused for the order the query has.
// CHECK-LABEL: func.func @main
// CHECK-NOT:   loop.view
// CHECK:       func.return

// -----
func.func @main(%x: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %q = loop.nest space = affine_map<() -> (2, 4, 16, 8)> iterators = ["parallel", "parallel", "parallel", "parallel"] : tensor<2x4x16x8xf32> {
    %0 = loop.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>] : tensor<2x4x16x8xf32> -> f32
    %1 = math.exp %0 : f32
    loop.yield %1 : f32
  }
  %o = tn.sdpa %q, %q, %q scale = 0.35 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  func.return %o : tensor<2x4x16x8xf32>
}
// Nor for an attention whose result is (batch, heads, rows, d): the query's row-major order is that layout.
// CHECK-LABEL: func.func @main
// CHECK-NOT:   loop.view
// CHECK:       func.return
