// RUN: irc-opt %s -p cse,dce | filecheck %s
// xDSL's CSE and DCE on tn ops (pure, value semantics): repeated computations are computed once, unused ones dropped.

func.func @repeated_and_unused(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %a = tn.exp %x : tensor<4x8xf32>
  %b = tn.exp %x : tensor<4x8xf32>
  %wt1 = tn.permute %w perm = [1, 0] : tensor<8x3xf32> -> tensor<3x8xf32>
  %s = tn.add %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %unused = tn.neg %s : tensor<4x8xf32>
  %r = tn.mm %s, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// CHECK-LABEL: func.func @repeated_and_unused
// CHECK-NEXT:  %a = tn.exp %x
// CHECK-NEXT:  %s = tn.add %a, %a
// CHECK-NEXT:  %r = tn.mm %s, %w
// CHECK-NEXT:  func.return %r
