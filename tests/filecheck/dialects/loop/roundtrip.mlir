// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// The loop dialect prints, parses and prints the same, in its own syntax and in the generic one.

func.func @nest(%x: tensor<?x8xf32>, %i: tensor<3xi64>, %n: index) -> (tensor<?xf32>, tensor<?x8xf32>, tensor<8x3xf32>, tensor<8x?xf32>) {
  %s, %o = loop.nest space = affine_map<()[s0] -> (s0, 8)> symbols(%n) iterators = ["parallel", "reduction"] : tensor<?xf32>, tensor<?x8xf32> {
    %a = loop.load %x[affine_map<(d0, d1)[s0] -> (d0, d1)>] : tensor<?x8xf32> -> f32
    %m = loop.reduce max %a : f32 -> f32
    %e = arith.subf %a, %m : f32
    %k = loop.reduce argmax %e : f32 -> i64
    %t = loop.reduce sum %e : f32 -> f32
    loop.yield %t, %e : f32, f32
  }
  %g = loop.nest space = affine_map<() -> (8, 3)> iterators = ["parallel", "parallel"] : tensor<8x3xf32> {
    %j = loop.load %i[affine_map<(d0, d1) -> (d1)>] : tensor<3xi64> -> i64
    %ji = arith.index_cast %j : i64 to index
    %v = loop.load %x[affine_map<(d0, d1, d2) -> (d2, d0)>] (%ji) : tensor<?x8xf32> -> f32
    %p = loop.index affine_map<(d0, d1) -> (d0 * 3 + d1)>
    loop.yield %v : f32
  }
  %t = loop.view %x[affine_map<(d0, d1) -> (d1, d0)>] sizes(%n) : tensor<?x8xf32> -> tensor<8x?xf32>
  func.return %s, %o, %g, %t : tensor<?xf32>, tensor<?x8xf32>, tensor<8x3xf32>, tensor<8x?xf32>
}
// CHECK-LABEL: func.func @nest
// CHECK:       %s, %o = loop.nest space = affine_map<()[s0] -> (s0, 8)> symbols(%n) iterators = ["parallel", "reduction"] : tensor<?xf32>, tensor<?x8xf32> {
// CHECK-NEXT:    %a = loop.load %x[affine_map<(d0, d1)[s0] -> (d0, d1)>] : tensor<?x8xf32> -> f32
// CHECK-NEXT:    %m = loop.reduce max %a : f32 -> f32
// CHECK-NEXT:    %e = arith.subf %a, %m : f32
// CHECK-NEXT:    %k = loop.reduce argmax %e : f32 -> i64
// CHECK-NEXT:    %t = loop.reduce sum %e : f32 -> f32
// CHECK-NEXT:    loop.yield %t, %e : f32, f32
// CHECK:         %v = loop.load %x[affine_map<(d0, d1, d2) -> (d2, d0)>] (%ji) : tensor<?x8xf32> -> f32
// CHECK-NEXT:    %p = loop.index affine_map<(d0, d1) -> (((d0 * 3) + d1))>
// CHECK:       %t_1 = loop.view %x[affine_map<(d0, d1) -> (d1, d0)>] sizes(%n) : tensor<?x8xf32> -> tensor<8x?xf32>
