// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// The mem dialect prints, parses and prints the same.

func.func @main(%x: memref<4x8xf32, strided<[?, ?], offset: ?>>, %w: memref<8x2xf32>, %n: index) -> memref<4x2xf32> {
  %a = mem.arena : memref<256xi8>
  %t = mem.slot %a offset = 0 : memref<256xi8> -> memref<4x8xf32>
  mem.launch @kernel0 ins(%x : memref<4x8xf32, strided<[?, ?], offset: ?>>) outs(%t : memref<4x8xf32>)
  %r = mem.reshape %t : memref<4x8xf32> -> memref<32xf32>
  %v = mem.view %w[affine_map<(d0, d1) -> (d1, d0)>] : memref<8x2xf32> -> memref<2x8xf32, strided<[?, ?], offset: ?>>
  %o = mem.alloc : memref<4x2xf32>
  mem.extern ins(%t, %w : memref<4x8xf32>, memref<8x2xf32>) outs(%o : memref<4x2xf32>) {
  ^bb0(%p: tensor<4x8xf32>, %q: tensor<8x2xf32>):
    %m = tn.mm %p, %q : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
    mem.yield %m : tensor<4x2xf32>
  }
  %d = mem.alloc[%n] : memref<?xf32>
  %k = mem.dim %d dim = 0 : memref<?xf32>
  func.return %o : memref<4x2xf32>
}
func.func @kernel0(%x: memref<4x8xf32, strided<[?, ?], offset: ?>>, %y: memref<4x8xf32>) {
  loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] outs(%y : memref<4x8xf32>) {
    %v = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : memref<4x8xf32, strided<[?, ?], offset: ?>> -> f32
    loop.yield %v : f32
  }
  func.return
}
// CHECK:       %a = mem.arena : memref<256xi8>
// CHECK-NEXT:  %t = mem.slot %a offset = 0 : memref<256xi8> -> memref<4x8xf32>
// CHECK-NEXT:  mem.launch @kernel0 ins(%x : memref<4x8xf32, strided<[?, ?], offset: ?>>) outs(%t : memref<4x8xf32>)
// CHECK-NEXT:  %r = mem.reshape %t : memref<4x8xf32> -> memref<32xf32>
// CHECK-NEXT:  %v = mem.view %w[affine_map<(d0, d1) -> (d1, d0)>] : memref<8x2xf32> -> memref<2x8xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT:  %o = mem.alloc : memref<4x2xf32>
// CHECK-NEXT:  mem.extern ins(%t, %w : memref<4x8xf32>, memref<8x2xf32>) outs(%o : memref<4x2xf32>) {
// CHECK-NEXT:  ^bb0(%p: tensor<4x8xf32>, %q: tensor<8x2xf32>):
// CHECK-NEXT:    %m = tn.mm %p, %q
// CHECK-NEXT:    mem.yield %m : tensor<4x2xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %d = mem.alloc[%n] : memref<?xf32>
// CHECK-NEXT:  %k = mem.dim %d dim = 0 : memref<?xf32>
// CHECK:       loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] outs(%y : memref<4x8xf32>) {
