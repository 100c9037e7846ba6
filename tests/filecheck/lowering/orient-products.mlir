// RUN: irc-opt --split-input-file %s -p "tensor-to-loop,simplify-loop,fuse-loops,orient-products{every=true},simplify-loop" | filecheck %s
// RUN: irc-opt --split-input-file %s -p tensor-to-loop,simplify-loop,fuse-loops,orient-products,simplify-loop | filecheck %s --check-prefix=NONE
// RUN: irc-opt --split-input-file %s -p "tensor-to-loop,simplify-loop,fuse-loops,orient-products{every=true},simplify-loop,bufferize" | filecheck %s --check-prefix=BUF
// A product computed as its transpose: x @ w^T becomes the view of w @ x^T, and the kernel after it reads
// that column-major result through its load map (the CPU target's rule picks which products: extern_ops.py).

func.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %wt = tn.permute %w perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tn.mm %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %yb = tn.add %y, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = tn.relu %yb : tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// The weight's transposing view folds away: w itself is the left operand.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[XT:.*]] = loop.view %x[affine_map<(d0, d1) -> (d1, d0)>] : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[P:.*]] = tn.mm %w, %[[XT]] : tensor<16x8xf32>, tensor<8x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT:  loop.nest space = affine_map<() -> (4, 16)>
// CHECK:         loop.load %[[P]][affine_map<(d0, d1) -> (d1, d0)>] : tensor<16x4xf32> -> f32
// NONE-LABEL: func.func @main
// NONE:       tn.mm %x, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>

// -----
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %y = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
// A returned product turns too (the rule limits it to few rows): the graph returns the transposing view, which
// bufferize copies into a row-major output, eager's layout (one pass over the result).
// CHECK-LABEL: func.func @main
// CHECK:       %[[P:.*]] = tn.mm %{{.*}}, %{{.*}} : tensor<16x8xf32>, tensor<8x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT:  %y = loop.view %[[P]][affine_map<(d0, d1) -> (d1, d0)>] : tensor<16x4xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %y
// BUF-LABEL: func.func @main
// BUF:       mem.extern
// BUF:       %[[V:.*]] = mem.view %{{.*}}[affine_map<(d0, d1) -> (d1, d0)>] : memref<16x4xf32> -> memref<4x16xf32
// BUF-NEXT:  %[[OUT:.*]] = mem.alloc : memref<4x16xf32>
// BUF-NEXT:  mem.launch @kernel0 ins(%[[V]] : {{.*}}) outs(%[[OUT]] : memref<4x16xf32>)
// BUF-NEXT:  func.return %[[OUT]] : memref<4x16xf32>

// -----
func.func @main(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %wt = tn.permute %w perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tn.mm %x, %wt : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
  %r = tn.relu %y : tensor<?x16xf32>
  func.return %r : tensor<?x16xf32>
}
// Dynamic sizes: left as it is (a view of a dynamic tensor takes its sizes as operands).
// CHECK-LABEL: func.func @main
// CHECK:       tn.mm %x, %{{.*}} : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
