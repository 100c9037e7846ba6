// RUN: irc-opt --stage loop --statistics %s 2>&1 | filecheck %s

// --statistics: per pass, the number of ops before and after it and how often each rewrite fired:
// irc's rules by name (ir/rules.py), other xDSL patterns as Pattern(root op).

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = tn.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %t = tn.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %u = tn.mul %s, %t : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %r = tn.relu %u : tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// CHECK:      ... Pass statistics report ...
// CHECK:      'cse'
// CHECK-NEXT:   (S)      6 ops-before - operations in the module before the pass
// CHECK-NEXT:   (S)      5 ops-after  - operations in the module after the pass
// CHECK-NEXT: 'dce'
// CHECK:      'tensor-to-loop'
// CHECK-NEXT:   (S)      5 ops-before
// CHECK-NEXT:   (S)     {{ *[0-9]+}} ops-after
// CHECK-NEXT:   (S)      1 LowerTensorOp(tn.add) - rewrites
// CHECK-NEXT:   (S)      1 LowerTensorOp(tn.mul) - rewrites
// CHECK-NEXT:   (S)      1 LowerTensorOp(tn.relu) - rewrites
// CHECK:      'simplify-loop'
// CHECK:      'fuse-loops{{.*}}'
