// RUN: irc-opt %s | filecheck %s --check-prefix=AS-IS
// RUN: irc-opt %s --verify-each -p dce --reproducer %t/r.mlir 2>&1 | filecheck %s --check-prefix=AS-IS
// RUN: not irc-opt %s --verify-each -p test-swap-operands --reproducer %t/r.mlir 2>&1 | filecheck %s --check-prefix=SWAP
// RUN: not irc-opt --run-reproducer %t/r.mlir 2>&1 | filecheck %s --check-prefix=REPLAY

// An input at the mem stage (it holds mem ops), with its buffer plan: an arena of typed slots.
// --verify-each runs it with the mem-stage reference executor; byte-level slots keep the program
// at its own precision (f32, with f32 tolerances) instead of widening it to f64.

func.func @main(%a: memref<4x8xf32, strided<[?, ?], offset: ?>>, %w: memref<8x8xf32, strided<[?, ?], offset: ?>>) -> memref<4x8xf32> attributes {irc.plan = "arena 256 bytes for 2 intermediates of 256 bytes, 0 in place"} {
  %0 = mem.arena : memref<256xi8>
  %1 = mem.slot %0 offset = 0 : memref<256xi8> -> memref<4x8xf32>
  mem.launch @kernel0 ins(%a : memref<4x8xf32, strided<[?, ?], offset: ?>>) outs(%1 : memref<4x8xf32>)
  %2 = mem.slot %0 offset = 128 : memref<256xi8> -> memref<4x8xf32>
  mem.extern ins(%1, %w : memref<4x8xf32>, memref<8x8xf32, strided<[?, ?], offset: ?>>) outs(%2 : memref<4x8xf32>) {
  ^bb0(%3: tensor<4x8xf32>, %4: tensor<8x8xf32>):
    %m = tn.mm %3, %4 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    mem.yield %m : tensor<4x8xf32>
  }
  %5 = mem.alloc : memref<4x8xf32>
  mem.launch @kernel1 ins(%2, %a : memref<4x8xf32>, memref<4x8xf32, strided<[?, ?], offset: ?>>) outs(%5 : memref<4x8xf32>)
  func.return %5 : memref<4x8xf32>
}
func.func @kernel0(%0: memref<4x8xf32, strided<[?, ?], offset: ?>>, %1: memref<4x8xf32>) {
  loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] outs(%1 : memref<4x8xf32>) {
    %2 = loop.load %0[affine_map<(d0, d1) -> (d0, d1)>] : memref<4x8xf32, strided<[?, ?], offset: ?>> -> f32
    %3 = math.exp %2 : f32
    loop.yield %3 : f32
  }
  func.return
}
func.func @kernel1(%0: memref<4x8xf32>, %1: memref<4x8xf32, strided<[?, ?], offset: ?>>, %2: memref<4x8xf32>) {
  loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] outs(%2 : memref<4x8xf32>) {
    %3 = loop.load %0[affine_map<(d0, d1) -> (d0, d1)>] : memref<4x8xf32> -> f32
    %4 = loop.load %1[affine_map<(d0, d1) -> (d0, d1)>] : memref<4x8xf32, strided<[?, ?], offset: ?>> -> f32
    %5 = arith.subf %3, %4 : f32
    loop.yield %5 : f32
  }
  func.return
}

// AS-IS:      %0 = mem.arena : memref<256xi8>
// AS-IS-NEXT: %1 = mem.slot %0 offset = 0

// SWAP:       irc-opt: error: --verify-each: pass 'test-swap-operands' changed the result of @main: result 0 at [0, 0] is {{.*}} (32 of 32 elements differ){{$}}
// REPLAY:     irc-opt: error: reproduced: pass 'test-swap-operands' changed the result of @main
