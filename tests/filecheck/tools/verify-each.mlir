// RUN: irc-opt --verify-each --stage mem --reproducer %t/ok.mlir %s | filecheck %s --check-prefix=OK
// RUN: not irc-opt --verify-each -p cse,test-swap-operands,dce --reproducer %t/repro.mlir %s 2>&1 | filecheck %s
// RUN: cat %t/repro.mlir | filecheck %s --check-prefix=REPRO
// RUN: not irc-opt --run-reproducer %t/repro.mlir 2>&1 | filecheck %s --check-prefix=REPLAY
// RUN: not irc-opt --verify-each --stage loop -p 'test-swap-operands{limit=1}' --seed 3 --reproducer %t/loop.mlir %s 2>&1 | filecheck %s --check-prefix=LOOP
// RUN: not irc-opt --run-reproducer %t/loop.mlir 2>&1 | filecheck %s --check-prefix=LOOP-REPLAY

// --verify-each runs the IR before and after every pass on the same random inputs (f64 where the
// program is all f32) with the reference executors of each stage, names the first pass that
// changes the result, and writes a reproducer that --run-reproducer replays.

func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %s = tn.sub %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %t = tn.sub %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %e = tn.exp %s : tensor<4x8xf32>
  %m = tn.mul %e, %t : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %r = tn.sum %m dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// The whole pipeline keeps the result: irc-opt prints the mem stage.
// OK: func.func @main(
// OK: mem.launch @kernel0

// CHECK:      irc-opt: error: --verify-each: pass 'test-swap-operands' changed the result of @main: result 0 at [0, 0] is {{.*}}, was {{.*}} (4 of 4 elements differ) (run in f64)
// CHECK-NEXT: note: the IR before the pass, the pass and the seed are in {{.*}}repro.mlir; replay with: irc-opt --run-reproducer {{.*}}repro.mlir

// The reproducer is the IR before the pass (after cse), with the pass and the seed in comments.
// REPRO:      // irc-opt reproducer: pass 'test-swap-operands' changed the result of @main
// REPRO-NEXT: // replay: irc-opt --run-reproducer {{.*}}repro.mlir
// REPRO-NEXT: // pass: test-swap-operands
// REPRO-NEXT: // seed: 0
// REPRO-NEXT: builtin.module {
// REPRO:        %s = tn.sub %a, %b
// REPRO-NEXT:   %e = tn.exp %s
// REPRO-NEXT:   %m = tn.mul %e, %s

// REPLAY: irc-opt: error: reproduced: pass 'test-swap-operands' changed the result of @main: result 0 at [0, 0] is {{.*}} (run in f64)

// A wrong rewrite at the loop stage, with an option, on another seed's inputs.
// LOOP:      irc-opt: error: --verify-each: pass 'test-swap-operands{limit=1}' changed the result of @main
// LOOP-REPLAY: irc-opt: error: reproduced: pass 'test-swap-operands{limit=1}' changed the result of @main
