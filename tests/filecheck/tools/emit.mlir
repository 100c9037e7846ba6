// RUN: not irc-opt -t llvm %s 2>&1 | filecheck %s --check-prefix=LLVM
// RUN: not irc-opt --emit triton %s 2>&1 | filecheck %s --check-prefix=TRITON
// RUN: irc-opt -t mlir %s | filecheck %s --check-prefix=MLIR
// RUN: not irc-opt -t bogus %s 2>&1 | filecheck %s --check-prefix=BOGUS

// -t/--emit prints target code generated from the mem stage; the llvm and triton targets do not
// exist yet, and irc-opt says so rather than printing anything.

func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  func.return %a : tensor<8xf32>
}

// LLVM:   irc-opt: error: target 'llvm' is not available yet
// TRITON: irc-opt: error: target 'triton' is not available yet
// MLIR:   func.func @main
// BOGUS:  irc-opt: error: argument -t/--emit/--target: invalid choice: 'bogus'
