// RUN: irc-opt --split-input-file %s -p simplify-loop | filecheck %s
// Loop-stage cleanups: views for externs, dead outputs, folded constants and sizes.

func.func @copy_to_view(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %wt = loop.nest space = affine_map<() -> (8, 16)> iterators = ["parallel", "parallel"] : tensor<8x16xf32> {
    %0 = loop.load %w[affine_map<(d0, d1) -> (d1, d0)>] : tensor<16x8xf32> -> f32
    loop.yield %0 : f32
  }
  %r = tn.mm %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// A copy read only by an extern, through a linear map, is a strided view: no kernel.
// CHECK-LABEL: func.func @copy_to_view
// CHECK-NEXT:  %wt = loop.view %w[affine_map<(d0, d1) -> (d1, d0)>] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %r = tn.mm %x, %wt
// CHECK-NOT:   loop.nest

// -----
func.func @copy_to_reshape(%a: tensor<2x4x8xf32>, %w: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %e = loop.nest space = affine_map<() -> (2, 4, 8)> iterators = ["parallel", "parallel", "parallel"] : tensor<2x4x8xf32> {
    %0 = loop.load %a[affine_map<(d0, d1, d2) -> (d0, d1, d2)>] : tensor<2x4x8xf32> -> f32
    %1 = math.exp %0 : f32
    loop.yield %1 : f32
  }
  %f = loop.nest space = affine_map<() -> (8, 8)> iterators = ["parallel", "parallel"] : tensor<8x8xf32> {
    %2 = loop.load %e[affine_map<(d0, d1) -> (d0 floordiv 4, d0 mod 4, d1)>] : tensor<2x4x8xf32> -> f32
    loop.yield %2 : f32
  }
  %r = tn.mm %f, %w : tensor<8x8xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
  func.return %r : tensor<8x3xf32>
}
// A row-major reshape copy read only by an extern stays a reshape (it aliases a contiguous buffer at the mem stage).
// CHECK-LABEL: func.func @copy_to_reshape
// CHECK:       %f = tn.reshape %e : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:  %r = tn.mm %f, %w

// -----
func.func @permuted_copy_under_a_reshape(%a: tensor<2x8x4xf32>, %w: tensor<32x3xf32>) -> tensor<2x3xf32> {
  %p = loop.nest space = affine_map<() -> (2, 4, 8)> iterators = ["parallel", "parallel", "parallel"] : tensor<2x4x8xf32> {
    %0 = loop.load %a[affine_map<(d0, d1, d2) -> (d0, d2, d1)>] : tensor<2x8x4xf32> -> f32
    loop.yield %0 : f32
  }
  %f = loop.nest space = affine_map<() -> (2, 32)> iterators = ["parallel", "parallel"] : tensor<2x32xf32> {
    %1 = loop.load %p[affine_map<(d0, d1) -> (d0, d1 floordiv 8, d1 mod 8)>] : tensor<2x4x8xf32> -> f32
    loop.yield %1 : f32
  }
  %r = tn.mm %f, %w : tensor<2x32xf32>, tensor<32x3xf32> -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// The flatten of a channels-last value before a linear layer: the reshape's source is a transposing copy. It stays a
// nest (its producers fuse into it) and the reshape aliases its row-major result; as a strided view, the mem stage
// would copy it with torch instead, as one more pass unfused.
// CHECK-LABEL: func.func @permuted_copy_under_a_reshape
// CHECK-NEXT:  %p = loop.nest
// CHECK-NEXT:    loop.load %a[affine_map<(d0, d1, d2) -> (d0, d2, d1)>]
// CHECK:       %f = tn.reshape %p : tensor<2x4x8xf32> -> tensor<2x32xf32>
// CHECK-NEXT:  %r = tn.mm %f, %w
// CHECK-NOT:   loop.view

// -----
func.func @dead_output_and_constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a, %b = loop.nest space = affine_map<() -> (4)> iterators = ["parallel"] : tensor<4xf32>, tensor<4xf32> {
    %0 = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<4xf32> -> f32
    %1 = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<4xf32> -> f32
    %c8 = arith.constant 8.0 : f32
    %c1 = arith.constant 1.0 : f32
    %c0 = arith.constant 0.0 : f32
    %2 = arith.subf %c8, %c1 : f32
    %3 = arith.maximumf %2, %c0 : f32
    %4 = arith.divf %1, %3 : f32
    %5 = math.exp %0 : f32
    loop.yield %5, %4 : f32, f32
  }
  func.return %b : tensor<4xf32>
}
// Outputs nobody reads go, loads are CSE'd, constants fold.
// CHECK-LABEL: func.func @dead_output_and_constants
// CHECK-NEXT:  %b = loop.nest space = affine_map<() -> (4)> iterators = ["parallel"] : tensor<4xf32> {
// CHECK-NEXT:    %0 = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<4xf32> -> f32
// CHECK-NEXT:    %1 = arith.constant 7.000000e+00 : f32
// CHECK-NEXT:    %2 = arith.divf %0, %1 : f32
// CHECK-NEXT:    loop.yield %2 : f32

// -----
func.func @dim_of_result(%x: tensor<?x8xf32>, %n: index) -> index {
  %y = loop.nest space = affine_map<()[s0] -> (s0, 8)> symbols(%n) iterators = ["parallel", "parallel"] : tensor<?x8xf32> {
    %0 = loop.load %x[affine_map<(d0, d1)[s0] -> (d0, d1)>] : tensor<?x8xf32> -> f32
    loop.yield %0 : f32
  }
  %d = tn.dim %y dim = 0 : tensor<?x8xf32>
  func.return %d : index
}
// The size of a nest's result is the symbol of its extent (and the nest, now unused, goes).
// CHECK-LABEL: func.func @dim_of_result
// CHECK-NEXT:  func.return %n : index

// -----
func.func @load_through_view(%w: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %v = loop.view %w[affine_map<(d0, d1) -> (d1, d0)>] : tensor<16x8xf32> -> tensor<8x16xf32>
  %r = loop.nest space = affine_map<() -> (8, 16)> iterators = ["parallel", "parallel"] : tensor<8x16xf32> {
    %0 = loop.load %v[affine_map<(d0, d1) -> (d0, d1)>] : tensor<8x16xf32> -> f32
    %1 = math.exp %0 : f32
    loop.yield %1 : f32
  }
  func.return %r : tensor<8x16xf32>
}
// A nest reads through a view by composing the maps.
// CHECK-LABEL: func.func @load_through_view
// CHECK-NEXT:  %r = loop.nest
// CHECK-NEXT:    loop.load %w[affine_map<(d0, d1) -> (d1, d0)>] : tensor<16x8xf32> -> f32

// -----
func.func @int_widened_and_narrowed(%x: tensor<8xui8>, %y: tensor<8xi8>) -> (tensor<8xui8>, tensor<8xi8>, tensor<8xi8>) {
  %r, %s, %t = loop.nest space = affine_map<() -> (8)> iterators = ["parallel"] : tensor<8xui8>, tensor<8xi8>, tensor<8xi8> {
    %0 = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<8xui8> -> ui8
    %1 = arith.extui %0 : ui8 to i16
    %2 = arith.trunci %1 : i16 to ui8
    %3 = loop.load %y[affine_map<(d0) -> (d0)>] : tensor<8xi8> -> i8
    %4 = arith.extsi %3 : i8 to i32
    %5 = arith.trunci %4 : i32 to i8
    %6 = arith.extsi %3 : i8 to i32
    %7 = arith.trunci %6 : i32 to i16
    %8 = arith.trunci %7 : i16 to i8
    loop.yield %2, %5, %8 : ui8, i8, i8
  }
  func.return %r, %s, %t : tensor<8xui8>, tensor<8xi8>, tensor<8xi8>
}
// An integer widened and narrowed back to its own type is itself (a quantized value the importer widened for
// a reshape's copy: the copy then reads as one, so the op writing it writes the reshape); a narrowing to another
// width stays.
// CHECK-LABEL: func.func @int_widened_and_narrowed
// CHECK:         %[[X:.*]] = loop.load %x
// CHECK-NEXT:    %[[Y:.*]] = loop.load %y
// CHECK:         %[[N:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK-NEXT:    %[[M:.*]] = arith.trunci %[[N]] : i16 to i8
// CHECK-NEXT:    loop.yield %[[X]], %[[Y]], %[[M]] : ui8, i8, i8
