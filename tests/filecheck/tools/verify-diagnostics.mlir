// RUN: irc-opt --split-input-file --verify-diagnostics %s | filecheck %s
// RUN: not irc-opt --split-input-file --verify-diagnostics %s.mismatch 2>&1 | filecheck %s --check-prefix=MISMATCH
// RUN: not irc-opt --split-input-file %s 2>&1 | filecheck %s --check-prefix=FIRST

// --verify-diagnostics checks the errors against expected-error comments (on the same line, or
// @+N, @-N, @above, @below), case by case with --split-input-file; exit code 1 on any mismatch.
// Cases without errors still print their IR.

func.func @unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{Operation tn.frobnicate is not registered}}
  %r = tn.frobnicate %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

func.func @ill_typed(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %bad = tn.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi32>  // expected-error {{tn.add: result element type i32 is wrong}}
  func.return %a : tensor<4xf32>
}

// -----

func.func @wrong_return(%a: tensor<4xf32>) -> tensor<8xf32> {
  func.return %a : tensor<4xf32>
  // expected-error @above {{Expected arguments to have the same types as the function output types}}
}

// -----

func.func @undefined(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{use of undefined value %y}}
  %r = tn.neg %y : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

func.func @fine(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// CHECK:      // -{{-+}}
// CHECK-NEXT: // -{{-+}}
// CHECK-NEXT: // -{{-+}}
// CHECK-NEXT: // -{{-+}}
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @fine

// Without --verify-diagnostics the first error ends irc-opt, located.
// FIRST: verify-diagnostics.mlir:11:8: error: Operation tn.frobnicate is not registered

// MISMATCH: verify-diagnostics.mlir.mismatch:3:8: error: unexpected error: Operation tn.frobnicate is not registered
// MISMATCH: verify-diagnostics.mlir.mismatch:2:6: error: expected error "a different message" was not produced (on line 3)
// MISMATCH: verify-diagnostics.mlir.mismatch:9:6: error: expected error "never reported" was not produced (on line 10)
