// RUN: irc-opt %s | filecheck %s --check-prefix=AS-IS
// RUN: irc-opt --stage mem %s | filecheck %s --check-prefix=MEM
// RUN: irc-opt --stage mem %s | irc-opt | filecheck %s --check-prefix=MEM
// RUN: irc-opt --stage mem --verify-each --reproducer %t/r.mlir %s | filecheck %s --check-prefix=MEM
// RUN: not irc-opt --stage tensor-opt %s 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: not irc-opt --verify-each -p test-swap-operands --reproducer %t/r.mlir %s 2>&1 | filecheck %s --check-prefix=SWAP

// An input at the loop stage (it holds loop ops): irc-opt prints it as it is, --stage mem runs
// the mem stage's passes on it (stdin works the same), --verify-each checks them with the loop and
// mem reference executors, and asking for an earlier stage is an error.

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %r = loop.nest space = affine_map<() -> (8)> iterators = ["parallel"] : tensor<8xf32> {
    %0 = loop.load %a[affine_map<(d0) -> (d0)>] : tensor<8xf32> -> f32
    %1 = loop.load %b[affine_map<(d0) -> (d0)>] : tensor<8xf32> -> f32
    %2 = arith.subf %0, %1 : f32
    %3 = arith.constant 0.000000e+00 : f32
    %4 = arith.maximumf %2, %3 : f32
    loop.yield %4 : f32
  }
  func.return %r : tensor<8xf32>
}

// AS-IS:      %r = loop.nest
// AS-IS-NEXT:   %0 = loop.load %a

// MEM:      func.func @main(%a: memref<8xf32{{.*}}>, %b: memref<8xf32{{.*}}>) -> memref<8xf32>
// MEM:        mem.launch @kernel0
// MEM:      func.func @kernel0(
// MEM:        arith.subf

// BEFORE: irc-opt: error: --stage tensor-opt comes before the input's stage loop

// SWAP: irc-opt: error: --verify-each: pass 'test-swap-operands' changed the result of @main: result 0 at [{{[0-9]+}}] is {{.*}} (run in f64)
