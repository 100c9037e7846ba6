// RUN: irc-opt --split-input-file %s -p fold-constants,dce | filecheck %s
// tn ops whose operands are all constants are evaluated at compile time (irc-opt folds splat results;
// frozen parameters, folded into new @main arguments, come only with the frontend: tests/numeric/test_freeze.py).

func.func @arithmetic(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %a = tn.constant dense<3.0> : tensor<3xf32> -> tensor<3xf32>
  %b = tn.constant dense<1.0> : tensor<f32> -> tensor<f32>
  %c = tn.add %a, %b : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %d = tn.rsqrt %c : tensor<3xf32>
  %r = tn.mul %x, %d : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// rsqrt(3 + 1) = 0.5, one constant; the chain that computed it is gone.
// CHECK-LABEL: func.func @arithmetic
// CHECK-NEXT:  %[[D:.*]] = tn.constant dense<5.000000e-01> : tensor<3xf32>
// CHECK-NEXT:  %r = tn.mul %x, %[[D]]
// CHECK-NEXT:  func.return

// -----
func.func @through_a_view(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %a = tn.constant dense<2.0> : tensor<2x3xf32> -> tensor<2x3xf32>
  %t = tn.permute %a perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %e = tn.exp %t : tensor<3x2xf32>
  %r = tn.add %x, %e : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}
// A view of constants folds with the computation that reads it.
// CHECK-LABEL: func.func @through_a_view
// CHECK-NEXT:  %[[E:.*]] = tn.constant dense<7.3890{{[0-9]*}}> : tensor<3x2xf32>
// CHECK-NEXT:  %r = tn.add %x, %[[E]]

// -----
func.func @not_all_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = tn.constant dense<2.0> : tensor<3xf32> -> tensor<3xf32>
  %r = tn.mul %x, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
// CHECK-LABEL: func.func @not_all_constant
// CHECK-NEXT:  %a = tn.constant
// CHECK-NEXT:  %r = tn.mul %x, %a
