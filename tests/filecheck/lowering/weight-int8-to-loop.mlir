// RUN: irc-opt --split-input-file %s -p tensor-to-loop | filecheck %s
// A weight-only int8 product of few static rows is one generated nest that reads the int8 weight along its rows
// (the reduction innermost) and widens each element in registers; more rows, or a dynamic count, stay the extern.

func.func @one_row(%x: tensor<1x37xf32>, %w: tensor<53x37xi8>, %s: tensor<53xf32>) -> tensor<1x53xf32> {
  %y = tn.weight_int8_mm %x, %w, %s : tensor<1x37xf32>, tensor<53x37xi8>, tensor<53xf32> -> tensor<1x53xf32>
  func.return %y : tensor<1x53xf32>
}
// CHECK-LABEL: func.func @one_row
// CHECK-NEXT:  %[[Y:.*]] = loop.nest space = affine_map<() -> (1, 53, 37)> iterators = ["parallel", "parallel", "reduction"] : tensor<1x53xf32> {
// CHECK-NEXT:    %[[X:.*]] = loop.load %x[affine_map<(d0, d1, d2) -> (d0, d2)>] : tensor<1x37xf32> -> f32
// CHECK-NEXT:    %[[W:.*]] = loop.load %w[affine_map<(d0, d1, d2) -> (d1, d2)>] : tensor<53x37xi8> -> i8
// CHECK-NEXT:    %[[WF:.*]] = arith.sitofp %[[W]] : i8 to f32
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[X]], %[[WF]] : f32
// CHECK-NEXT:    %[[R:.*]] = loop.reduce sum %[[P]] : f32 -> f32
// CHECK-NEXT:    %[[S:.*]] = loop.load %s[affine_map<(d0, d1, d2) -> (d1)>] : tensor<53xf32> -> f32
// CHECK-NEXT:    %[[O:.*]] = arith.mulf %[[R]], %[[S]] : f32
// CHECK-NEXT:    loop.yield %[[O]] : f32
// CHECK-NOT:   tn.weight_int8_mm

// -----

func.func @many_rows(%x: tensor<7x37xf32>, %w: tensor<53x37xi8>, %s: tensor<53xf32>, %d: tensor<?x37xf32>) -> (tensor<7x53xf32>, tensor<?x53xf32>) {
  %y = tn.weight_int8_mm %x, %w, %s : tensor<7x37xf32>, tensor<53x37xi8>, tensor<53xf32> -> tensor<7x53xf32>
  %z = tn.weight_int8_mm %d, %w, %s : tensor<?x37xf32>, tensor<53x37xi8>, tensor<53xf32> -> tensor<?x53xf32>
  func.return %y, %z : tensor<7x53xf32>, tensor<?x53xf32>
}
// CHECK-LABEL: func.func @many_rows
// CHECK-NEXT:  tn.weight_int8_mm %x, %w, %s
// CHECK-NEXT:  tn.weight_int8_mm %d, %w, %s
