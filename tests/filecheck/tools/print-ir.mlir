// RUN: irc-opt -p cse,dce --print-ir-after-all %s 2>&1 | filecheck %s --check-prefix=AFTER-ALL
// RUN: irc-opt -p cse,dce --print-ir-before-all %s 2>&1 | filecheck %s --check-prefix=BEFORE-ALL
// RUN: irc-opt --stage loop --print-ir-before=fuse-loops --print-ir-after=tensor-to-loop %s 2>&1 | filecheck %s --check-prefix=SELECTED
// RUN: irc-opt -p cse,dce,tensor-to-loop,simplify-loop,fuse-loops,simplify-loop --print-ir-after-change %s 2>&1 | filecheck %s --check-prefix=CHANGE
// RUN: irc-opt -p dce,dce --print-ir-after-all --print-ir-after-change %s 2>&1 | filecheck %s --check-prefix=CHANGE-ALL
// RUN: not irc-opt -p cse,test-break-types,dce --print-ir-after-failure %s 2>&1 | filecheck %s --check-prefix=FAILURE

// Printing around passes, on stderr (as mlir-opt does), under MLIR's headers; the pass's options
// are part of its name. (The conftest appends stderr after stdout: the printed result comes first.)

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = tn.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %dead = tn.neg %a : tensor<8xf32>
  %r = tn.relu %s : tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// AFTER-ALL:      // -----// IR Dump After cse //----- //
// AFTER-ALL-NEXT: builtin.module {
// AFTER-ALL-NOT:  tn.neg
// AFTER-ALL:      // -----// IR Dump After dce //----- //
// AFTER-ALL-NEXT: builtin.module {
// AFTER-ALL-NOT:  IR Dump

// BEFORE-ALL:      builtin.module {
// BEFORE-ALL:      // -----// IR Dump Before cse //----- //
// BEFORE-ALL-NEXT: builtin.module {
// BEFORE-ALL:        %dead = tn.neg %a
// BEFORE-ALL:      // -----// IR Dump Before dce //----- //
// BEFORE-ALL-NOT:    tn.neg

// SELECTED-NOT: IR Dump {{.*}} cse
// SELECTED:     // -----// IR Dump After tensor-to-loop //----- //
// SELECTED:       %s = loop.nest
// SELECTED:       %r = loop.nest
// SELECTED:     // -----// IR Dump Before fuse-loops //----- //
// SELECTED-NOT: IR Dump

// Only the passes that changed the IR: dce finds nothing left to do after cse.
// CHANGE:     IR Dump After cse //
// CHANGE-NOT: IR Dump After dce //
// CHANGE:     IR Dump After tensor-to-loop //
// CHANGE:     IR Dump After fuse-loops{{.*}} //

// CHANGE-ALL:     IR Dump After dce //
// CHANGE-ALL-NOT: IR Dump

// The IR the failing pass left (here: invalid), then the located error.
// FAILURE:      // -----// IR Dump After test-break-types Failed //----- //
// FAILURE-NEXT: builtin.module {
// FAILURE-NEXT:   func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4xi32> {
// FAILURE:      print-ir.mlir:[[# @LINE - 37]]:3: error: func.return: Expected arguments to have the same types as the function output types
// FAILURE:      note: the IR verified before pass 'test-break-types', which left it invalid
