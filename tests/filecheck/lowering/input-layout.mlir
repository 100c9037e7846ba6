// RUN: irc-opt --split-input-file %s -p tensor-to-loop,simplify-loop,fuse-loops,simplify-loop,input-layout | filecheck %s
// An argument the caller passes in a permuted layout (irc.input_layout on @main: dims outermost first), read across
// its lines by a reducing nest, is read from a row-major copy made by a nest of its own (which the emitter
// transposes in tiles).

func.func @main(%x: tensor<2x3x4x5xf32>, %g: tensor<2x3x4x5xf32>) -> tensor<1x3x1x1xf32> attributes {irc.input_layout = [[0, 2, 3, 1], []]} {
  %p = tn.mul %x, %g : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  %s = tn.sum %p dims = [0, 2, 3] : tensor<2x3x4x5xf32> -> tensor<1x3x1x1xf32>
  func.return %s : tensor<1x3x1x1xf32>
}
// A batch norm gradient's per-channel sum of a channels-last x by a row-major gradient: x is copied row-major
// first; g, row-major already, is read as it is.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[C:.*]] = loop.nest space = affine_map<() -> (2, 3, 4, 5)> iterators = ["parallel", "parallel", "parallel", "parallel"] : tensor<2x3x4x5xf32> {
// CHECK-NEXT:    %[[V:.*]] = loop.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NEXT:    loop.yield %[[V]]
// CHECK-NEXT:  }
// CHECK-NEXT:  loop.nest space = affine_map<() -> (2, 3, 4, 5)> iterators = ["reduction", "parallel", "reduction", "reduction"]
// CHECK-NEXT:    loop.load %[[C]][affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NEXT:    loop.load %g[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]

// -----
func.func @main(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> attributes {irc.input_layout = [[0, 2, 3, 1]]} {
  %r = tn.relu %x : tensor<2x3x4x5xf32>
  func.return %r : tensor<2x3x4x5xf32>
}
// A nest without a reduction reads it as it lies (the emitter's transposed tiles): no copy.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  loop.nest space = affine_map<() -> (2, 3, 4, 5)>
// CHECK-NEXT:    loop.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NOT:   loop.nest

// -----
func.func @main(%x: tensor<2x3x4x5xf32>) -> tensor<1x3x1x1xf32> attributes {irc.input_layout = [[1, 0, 2, 3]]} {
  %s = tn.sum %x dims = [0, 2, 3] : tensor<2x3x4x5xf32> -> tensor<1x3x1x1xf32>
  func.return %s : tensor<1x3x1x1xf32>
}
// A reduction that reads it along its lines already (x permuted, but its innermost dim in memory is the nest's): no
// copy.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  loop.nest space = affine_map<() -> (2, 3, 4, 5)>
// CHECK-NEXT:    loop.load %x
// CHECK-NOT:   loop.nest

// -----
func.func @main(%x: tensor<2x3x4x5xf32>) -> (tensor<1x3x1x1xf32>, tensor<1x1x1x5xf32>) attributes {irc.input_layout = [[0, 2, 3, 1]]} {
  %s = tn.sum %x dims = [0, 2, 3] : tensor<2x3x4x5xf32> -> tensor<1x3x1x1xf32>
  %t = tn.amax %x dims = [0, 1, 2] : tensor<2x3x4x5xf32> -> tensor<1x1x1x5xf32>
  func.return %s, %t : tensor<1x3x1x1xf32>, tensor<1x1x1x5xf32>
}
// Two reducing nests that read x across its lines share one copy.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[C:.*]] = loop.nest space = affine_map<() -> (2, 3, 4, 5)> iterators = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-NEXT:    loop.load %x
// CHECK-NOT:   loop.load %x
// CHECK:       loop.load %[[C]]
// CHECK-NOT:   loop.load %x
// CHECK:       loop.load %[[C]]
// CHECK-NOT:   loop.load %x
