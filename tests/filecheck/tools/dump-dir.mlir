// RUN: irc-opt --stage loop --dump-dir %t/dumps %s | filecheck %s --check-prefix=OUT
// RUN: cat %t/dumps/00-input.mlir | filecheck %s --check-prefix=INPUT
// RUN: cat %t/dumps/07-cse.mlir %t/dumps/08-dce.mlir | filecheck %s --check-prefix=TENSOR-OPT
// RUN: cat %t/dumps/10-tensor-to-loop.mlir | filecheck %s --check-prefix=LOWERED
// RUN: cat %t/dumps/12-fuse-loops.mlir | filecheck %s --check-prefix=FUSED
// RUN: irc-opt %t/dumps/10-tensor-to-loop.mlir --stage loop | filecheck %s --check-prefix=RESUMED

// --dump-dir DIR writes the input and the IR after each pass, numbered in pipeline order; each
// file is an irc-opt input again (the loop stage is detected from its ops).

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = tn.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %r = tn.relu %s : tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// OUT: func.func @main

// INPUT:      // irc-opt: the input, before any pass
// INPUT-NEXT: builtin.module {
// INPUT:        %s = tn.add %a, %b

// TENSOR-OPT:      // irc-opt: after pass 7 'cse'
// TENSOR-OPT:      // irc-opt: after pass 8 'dce'

// LOWERED:      // irc-opt: after pass 10 'tensor-to-loop'
// LOWERED-COUNT-2: = loop.nest

// FUSED:      // irc-opt: after pass 12 'fuse-loops'
// FUSED:      %r = loop.nest
// FUSED:        arith.addf
// FUSED:        arith.maximumf

// RESUMED:     %r = loop.nest
