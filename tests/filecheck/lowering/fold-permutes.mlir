// RUN: irc-opt --split-input-file %s -p fold-permutes,dce | filecheck %s
// Layout conversions that cancel: a permute of a permute composes, and the identity permute is its input.

func.func @pair_cancels(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %a = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %b = tn.permute %a perm = [0, 3, 1, 2] : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  func.return %b : tensor<2x3x4x5xf32>
}
// NCHW -> NHWC -> NCHW is no conversion at all.
// CHECK-LABEL: func.func @pair_cancels
// CHECK-NEXT:  func.return %x : tensor<2x3x4x5xf32>

// -----
func.func @compose(%x: tensor<2x3x4x5xf32>) -> tensor<5x4x3x2xf32> {
  %a = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %b = tn.permute %a perm = [2, 1, 3, 0] : tensor<2x4x5x3xf32> -> tensor<5x4x3x2xf32>
  func.return %b : tensor<5x4x3x2xf32>
}
// Two permutes that do not cancel become one: result dim i is x's dim p[q[i]].
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:  %b = tn.permute %x perm = [3, 2, 1, 0] : tensor<2x3x4x5xf32> -> tensor<5x4x3x2xf32>
// CHECK-NEXT:  func.return %b

// -----
func.func @identity(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %a = tn.permute %x perm = [0, 1] : tensor<?x3xf32> -> tensor<?x3xf32>
  func.return %a : tensor<?x3xf32>
}
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:  func.return %x : tensor<?x3xf32>

// -----
func.func @shared_inner(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x4x5x3xf32>) {
  %a = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %b = tn.permute %a perm = [0, 3, 1, 2] : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  func.return %b, %a : tensor<2x3x4x5xf32>, tensor<2x4x5x3xf32>
}
// The inner permute stays while something else reads it.
// CHECK-LABEL: func.func @shared_inner
// CHECK-NEXT:  %a = tn.permute %x perm = [0, 2, 3, 1]
// CHECK-NEXT:  func.return %x, %a
