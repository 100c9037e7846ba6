// RUN: irc-opt --split-input-file %s -p merge-products | filecheck %s
// Sibling int8 products of one input and constant weights become one product of the weights side by side (one
// library call), each result a slice of its columns. Without a frozen graph's table only tn.constant weights count.

func.func @query_key_value(%x: tensor<6x8xui8>, %s: tensor<f64>, %z: tensor<i64>) -> (tensor<6x4xf32>, tensor<6x3xf32>, tensor<6x5xf32>) {
  %w1 = tn.constant dense<1> : tensor<4x8xi8> -> tensor<4x8xi8>
  %w2 = tn.constant dense<2> : tensor<3x8xi8> -> tensor<3x8xi8>
  %w3 = tn.constant dense<3> : tensor<5x8xi8> -> tensor<5x8xi8>
  %ws1 = tn.constant dense<0.5> : tensor<4xf32> -> tensor<4xf32>
  %ws2 = tn.constant dense<0.25> : tensor<3xf32> -> tensor<3xf32>
  %ws3 = tn.constant dense<0.125> : tensor<5xf32> -> tensor<5xf32>
  %wz1 = tn.constant dense<0> : tensor<4xi64> -> tensor<4xi64>
  %wz2 = tn.constant dense<0> : tensor<3xi64> -> tensor<3xi64>
  %wz3 = tn.constant dense<0> : tensor<5xi64> -> tensor<5xi64>
  %b1 = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %b2 = tn.constant dense<2.0> : tensor<3xf32> -> tensor<3xf32>
  %b3 = tn.constant dense<3.0> : tensor<5xf32> -> tensor<5xf32>
  %q = tn.qlinear_dynamic %x scale %s zero_point %z, %w1, %ws1, %wz1, %b1 post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32> -> tensor<6x4xf32>
  %k = tn.qlinear_dynamic %x scale %s zero_point %z, %w2, %ws2, %wz2, %b2 post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<3x8xi8>, tensor<3xf32>, tensor<3xi64>, tensor<3xf32> -> tensor<6x3xf32>
  %v = tn.qlinear_dynamic %x scale %s zero_point %z, %w3, %ws3, %wz3, %b3 post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<5x8xi8>, tensor<5xf32>, tensor<5xi64>, tensor<5xf32> -> tensor<6x5xf32>
  func.return %q, %k, %v : tensor<6x4xf32>, tensor<6x3xf32>, tensor<6x5xf32>
}
// CHECK-LABEL: func.func @query_key_value
// CHECK:       %weight = tn.cat %w1, %w2, %w3 dim = 0 : tensor<4x8xi8>, tensor<3x8xi8>, tensor<5x8xi8> -> tensor<12x8xi8>
// CHECK-NEXT:  %[[WS:.*]] = tn.cat %ws1, %ws2, %ws3 dim = 0 : {{.*}} -> tensor<12xf32>
// CHECK-NEXT:  %[[WZ:.*]] = tn.cat %wz1, %wz2, %wz3 dim = 0 : {{.*}} -> tensor<12xi64>
// CHECK-NEXT:  %[[B:.*]] = tn.cat %b1, %b2, %b3 dim = 0 : {{.*}} -> tensor<12xf32>
// CHECK-NEXT:  %[[Y:.*]] = tn.qlinear_dynamic %x scale %s zero_point %z, %weight, %[[WS]], %[[WZ]], %[[B]] post_op = "none" : {{.*}} -> tensor<6x12xf32>
// CHECK-NEXT:  %q = tn.slice %[[Y]] dim = 1 start = 0 end = 4 step = 1 : tensor<6x12xf32> -> tensor<6x4xf32>
// CHECK-NEXT:  %k = tn.slice %[[Y]] dim = 1 start = 4 end = 7 step = 1 : tensor<6x12xf32> -> tensor<6x3xf32>
// CHECK-NEXT:  %v = tn.slice %[[Y]] dim = 1 start = 7 end = 12 step = 1 : tensor<6x12xf32> -> tensor<6x5xf32>
// CHECK-NEXT:  func.return %q, %k, %v

// -----

// A weight that arrives with every call (an argument: not frozen) stays in its own product; so does a product
// with another post-op, or of another input. The two that remain merge.
func.func @only_constant_siblings(%x: tensor<6x8xui8>, %x2: tensor<6x8xui8>, %s: tensor<f64>, %z: tensor<i64>, %warg: tensor<4x8xi8>) -> (tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x3xf32>) {
  %w1 = tn.constant dense<1> : tensor<4x8xi8> -> tensor<4x8xi8>
  %w2 = tn.constant dense<2> : tensor<3x8xi8> -> tensor<3x8xi8>
  %ws = tn.constant dense<0.5> : tensor<4xf32> -> tensor<4xf32>
  %ws2 = tn.constant dense<0.25> : tensor<3xf32> -> tensor<3xf32>
  %wz = tn.constant dense<0> : tensor<4xi64> -> tensor<4xi64>
  %wz2 = tn.constant dense<0> : tensor<3xi64> -> tensor<3xi64>
  %a = tn.qlinear_dynamic %x scale %s zero_point %z, %warg, %ws, %wz post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<6x4xf32>
  %b = tn.qlinear_dynamic %x scale %s zero_point %z, %w1, %ws, %wz post_op = "gelu" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<6x4xf32>
  %c = tn.qlinear_dynamic %x2 scale %s zero_point %z, %w1, %ws, %wz post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<6x4xf32>
  %d = tn.qlinear_dynamic %x scale %s zero_point %z, %w1, %ws, %wz post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<6x4xf32>
  %e = tn.qlinear_dynamic %x scale %s zero_point %z, %w2, %ws2, %wz2 post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<3x8xi8>, tensor<3xf32>, tensor<3xi64> -> tensor<6x3xf32>
  func.return %a, %b, %c, %d, %e : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x3xf32>
}
// CHECK-LABEL: func.func @only_constant_siblings
// CHECK:       %a = tn.qlinear_dynamic %x scale %s zero_point %z, %warg, %ws, %wz post_op = "none"
// CHECK-NEXT:  %b = tn.qlinear_dynamic %x scale %s zero_point %z, %w1, %ws, %wz post_op = "gelu"
// CHECK-NEXT:  %c = tn.qlinear_dynamic %x2 scale
// CHECK-NEXT:  %[[W:.*]] = tn.cat %w1, %w2 dim = 0
// CHECK-NEXT:  %[[WS:.*]] = tn.cat %ws, %ws2 dim = 0
// CHECK-NEXT:  %[[WZ:.*]] = tn.cat %wz, %wz2 dim = 0
// CHECK-NEXT:  %[[Y:.*]] = tn.qlinear_dynamic %x scale %s zero_point %z, %[[W]], %[[WS]], %[[WZ]] post_op = "none" : {{.*}} -> tensor<6x7xf32>
// CHECK-NEXT:  %d = tn.slice %[[Y]] dim = 1 start = 0 end = 4
// CHECK-NEXT:  %e = tn.slice %[[Y]] dim = 1 start = 4 end = 7
// CHECK-NEXT:  func.return %a, %b, %c, %d, %e

// -----

// A constant defined after the first sibling is not there yet where the merged product would go: no merge.
func.func @weight_defined_later(%x: tensor<6x8xui8>, %s: tensor<f64>, %z: tensor<i64>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
  %w1 = tn.constant dense<1> : tensor<4x8xi8> -> tensor<4x8xi8>
  %ws = tn.constant dense<0.5> : tensor<4xf32> -> tensor<4xf32>
  %wz = tn.constant dense<0> : tensor<4xi64> -> tensor<4xi64>
  %a = tn.qlinear_dynamic %x scale %s zero_point %z, %w1, %ws, %wz post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<6x4xf32>
  %w2 = tn.constant dense<2> : tensor<4x8xi8> -> tensor<4x8xi8>
  %b = tn.qlinear_dynamic %x scale %s zero_point %z, %w2, %ws, %wz post_op = "none" : tensor<6x8xui8>, tensor<f64>, tensor<i64>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<6x4xf32>
  func.return %a, %b : tensor<6x4xf32>, tensor<6x4xf32>
}
// CHECK-LABEL: func.func @weight_defined_later
// CHECK-NOT:   tn.cat
// CHECK:       %a = tn.qlinear_dynamic
// CHECK:       %b = tn.qlinear_dynamic

// -----

// Weight-only int8 products of one activation merge the same way (weight rows and their scales side by side).
func.func @weight_only(%x: tensor<3x8xf32>) -> (tensor<3x4xf32>, tensor<3x2xf32>) {
  %w1 = tn.constant dense<1> : tensor<4x8xi8> -> tensor<4x8xi8>
  %w2 = tn.constant dense<-3> : tensor<2x8xi8> -> tensor<2x8xi8>
  %s1 = tn.constant dense<0.5> : tensor<4xf32> -> tensor<4xf32>
  %s2 = tn.constant dense<0.25> : tensor<2xf32> -> tensor<2xf32>
  %a = tn.weight_int8_mm %x, %w1, %s1 : tensor<3x8xf32>, tensor<4x8xi8>, tensor<4xf32> -> tensor<3x4xf32>
  %b = tn.weight_int8_mm %x, %w2, %s2 : tensor<3x8xf32>, tensor<2x8xi8>, tensor<2xf32> -> tensor<3x2xf32>
  func.return %a, %b : tensor<3x4xf32>, tensor<3x2xf32>
}
// CHECK-LABEL: func.func @weight_only
// CHECK:       %[[W:.*]] = tn.cat %w1, %w2 dim = 0 : tensor<4x8xi8>, tensor<2x8xi8> -> tensor<6x8xi8>
// CHECK-NEXT:  %[[S:.*]] = tn.cat %s1, %s2 dim = 0 : tensor<4xf32>, tensor<2xf32> -> tensor<6xf32>
// CHECK-NEXT:  %[[Y:.*]] = tn.weight_int8_mm %x, %[[W]], %[[S]] : {{.*}} -> tensor<3x6xf32>
// CHECK-NEXT:  %a = tn.slice %[[Y]] dim = 1 start = 0 end = 4
// CHECK-NEXT:  %b = tn.slice %[[Y]] dim = 1 start = 4 end = 6
// CHECK-NEXT:  func.return %a, %b
