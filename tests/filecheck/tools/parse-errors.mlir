// RUN: irc-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Syntax errors irc-opt reports with their file:line:col (with --split-input-file each case is parsed on
// its own; without --parsing-diagnostics the first one ends irc-opt with exit code 1).

func.func @unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.frobnicate %x : tensor<4xf32>
  // CHECK: parse-errors.mlir:[[# @LINE - 1]]:8: error: Operation tn.frobnicate is not registered
  func.return %r : tensor<4xf32>
}

// -----

func.func @operand_type_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.neg %x : tensor<8xf32>
  // CHECK: parse-errors.mlir:[[# @LINE - 1]]:15: error: operand is used with type tensor<8xf32>, but has been previously used or defined with type tensor<4xf32>
  func.return %r : tensor<8xf32>
}

// -----

func.func @bad_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.neg %x : tensor<4xfoo>
  // CHECK: parse-errors.mlir:[[# @LINE - 1]]:29: error: Expected shape type.
  func.return %r : tensor<4xf32>
}

// -----

func.func @undefined_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.neg %y : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK: parse-errors.mlir:[[# @LINE - 3]]:15: error: use of undefined value %y

// -----

// The input ends inside the function: the error points at the last character.
func.func @truncated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.neg %x : tensor<4xf32>
// CHECK: parse-errors.mlir:[[# @LINE - 1]]:33: error: unexpected end of input
