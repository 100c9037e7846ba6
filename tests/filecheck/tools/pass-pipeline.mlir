// RUN: irc-opt -p cse %s | filecheck %s --check-prefix=CSE
// RUN: irc-opt -p dce %s | filecheck %s --check-prefix=DCE
// RUN: irc-opt --pass-pipeline 'builtin.module(cse,dce)' %s | filecheck %s --check-prefix=BOTH
// RUN: irc-opt -p 'tensor-to-loop,fuse-loops{max-body-ops=1}' %s | filecheck %s --check-prefix=NOFUSE
// RUN: irc-opt -p 'tensor-to-loop,fuse-loops{max-body-ops=64 sibling=false}' %s | filecheck %s --check-prefix=FUSED
// RUN: irc-opt --stage tensor-opt -p tensor-to-loop %s | filecheck %s --check-prefix=AFTER-STAGE

// -p runs passes by name (xDSL's flat syntax, options in braces); a single MLIR-style
// builtin.module(...) wrapper is accepted. With --stage, the stage passes run first.

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = tn.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %t = tn.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %dead = tn.neg %a : tensor<8xf32>
  %r = tn.mul %s, %t : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// CSE-LABEL: func.func @main
// CSE-NEXT:    %s = tn.add %a, %b
// CSE-NEXT:    %r = tn.mul %s, %s

// DCE-LABEL: func.func @main
// DCE-NEXT:    %s = tn.add %a, %b
// DCE-NEXT:    %t = tn.add %a, %b
// DCE-NEXT:    %r = tn.mul %s, %t

// BOTH-LABEL: func.func @main
// BOTH-NEXT:    %s = tn.add %a, %b
// BOTH-NEXT:    %r = tn.mul %s, %s
// BOTH-NEXT:    func.return %r

// NOFUSE-COUNT-3: = loop.nest
// NOFUSE-NOT:     = loop.nest

// FUSED:     loop.nest
// FUSED:       arith.addf
// FUSED:       arith.mulf
// FUSED:     func.return
// FUSED-NOT: loop.nest

// AFTER-STAGE-COUNT-2: loop.nest
// AFTER-STAGE-NOT:     tn.neg
