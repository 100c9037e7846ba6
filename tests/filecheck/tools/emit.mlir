// RUN: irc-opt -t llvm %s | filecheck %s --check-prefix=LLVM
// RUN: irc-opt -t mlir %s | filecheck %s --check-prefix=MLIR
// RUN: not irc-opt -t bogus %s 2>&1 | filecheck %s --check-prefix=BOGUS
// RUN: not irc-opt -t llvm --stage loop %s 2>&1 | filecheck %s --check-prefix=STAGE

// -t/--emit prints target code generated from the mem stage. `-t llvm` prints the CPU target's LLVM IR:
// one function per kernel, `void kN(start, end, argv)` over a range of the outer iterations, here the
// exp of a 13-wide row as one vector of the host's width (16 lanes with AVX-512) whose last lanes are masked off, exp itself a polynomial.

func.func @main(%a: tensor<5x13xf32>) -> tensor<5x13xf32> {
  %b = tn.exp %a : tensor<5x13xf32>
  func.return %b : tensor<5x13xf32>
}

// LLVM:      define void @"k0"(i64 %{{.*}}, i64 %{{.*}}, i64** noalias %{{.*}})
// LLVM:        call <{{[0-9]+}} x float> @"llvm.masked.load.v{{[0-9]+}}f32
// LLVM:        call <{{[0-9]+}} x float> @"llvm.fma.v{{[0-9]+}}f32"
// LLVM:        call void @"llvm.masked.store.v{{[0-9]+}}f32
// LLVM-NOT:    reference evaluator
// MLIR:   func.func @main
// BOGUS:  irc-opt: error: argument -t/--emit/--target: invalid choice: 'bogus'
// STAGE:  irc-opt: error: -t llvm prints code generated from the mem stage, not from --stage loop
