// RUN: irc-opt --split-input-file %s -p 'fuse-quant{weight_only=true}' | filecheck %s
// RUN: irc-opt --split-input-file %s -p fuse-quant | filecheck %s --check-prefix=OFF
// A weight-only int8 linear layer (torchao's Int8WeightOnlyConfig after AOT autograd: the int8 weight transposed,
// widened, the product, each column times its scale) becomes one tn.weight_int8_mm that reads the weight as int8
// (Rules.weight_int8_products); without it the chain stays.

func.func @per_row(%x: tensor<?x37xf32>, %w: tensor<53x37xi8>, %s: tensor<53x1xf32>) -> tensor<?x53xf32> {
  %t = tn.permute %w perm = [1, 0] : tensor<53x37xi8> -> tensor<37x53xi8>
  %f = tn.convert %t : tensor<37x53xi8> -> tensor<37x53xf32>
  %m = tn.mm %x, %f : tensor<?x37xf32>, tensor<37x53xf32> -> tensor<?x53xf32>
  %r = tn.reshape %s : tensor<53x1xf32> -> tensor<53xf32>
  %y = tn.mul %m, %r : tensor<?x53xf32>, tensor<53xf32> -> tensor<?x53xf32>
  func.return %y : tensor<?x53xf32>
}
// CHECK-LABEL: func.func @per_row
// CHECK-NEXT:  %[[S:.*]] = tn.reshape %s : tensor<53x1xf32> -> tensor<53xf32>
// CHECK-NEXT:  %[[Y:.*]] = tn.weight_int8_mm %x, %w, %[[S]] : tensor<?x37xf32>, tensor<53x37xi8>, tensor<53xf32> -> tensor<?x53xf32>
// CHECK-NEXT:  func.return %[[Y]]
// OFF-LABEL: func.func @per_row
// OFF:       tn.convert
// OFF:       tn.mm
// OFF-NOT:   tn.weight_int8_mm

// -----

// The scale as a row (1, N), on the left of the mul, in bfloat16.
func.func @row_scale_bf16(%x: tensor<3x5xbf16>, %w: tensor<7x5xi8>, %s: tensor<1x7xbf16>) -> tensor<3x7xbf16> {
  %t = tn.permute %w perm = [1, 0] : tensor<7x5xi8> -> tensor<5x7xi8>
  %f = tn.convert %t : tensor<5x7xi8> -> tensor<5x7xbf16>
  %m = tn.mm %x, %f : tensor<3x5xbf16>, tensor<5x7xbf16> -> tensor<3x7xbf16>
  %y = tn.mul %s, %m : tensor<1x7xbf16>, tensor<3x7xbf16> -> tensor<3x7xbf16>
  func.return %y : tensor<3x7xbf16>
}
// CHECK-LABEL: func.func @row_scale_bf16
// CHECK-NEXT:  %[[S:.*]] = tn.reshape %s : tensor<1x7xbf16> -> tensor<7xbf16>
// CHECK-NEXT:  %[[Y:.*]] = tn.weight_int8_mm %x, %w, %[[S]] : tensor<3x5xbf16>, tensor<7x5xi8>, tensor<7xbf16> -> tensor<3x7xbf16>
// CHECK-NEXT:  func.return %[[Y]]

// -----

// Not the pattern: the unscaled product read twice, a uint8 weight, a scale per element of the result.
func.func @not_weight_only(%x: tensor<3x5xf32>, %w: tensor<7x5xi8>, %u: tensor<7x5xui8>, %s: tensor<7xf32>, %e: tensor<3x7xf32>) -> (tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>) {
  %t = tn.permute %w perm = [1, 0] : tensor<7x5xi8> -> tensor<5x7xi8>
  %f = tn.convert %t : tensor<5x7xi8> -> tensor<5x7xf32>
  %m = tn.mm %x, %f : tensor<3x5xf32>, tensor<5x7xf32> -> tensor<3x7xf32>
  %y = tn.mul %m, %s : tensor<3x7xf32>, tensor<7xf32> -> tensor<3x7xf32>
  %tu = tn.permute %u perm = [1, 0] : tensor<7x5xui8> -> tensor<5x7xui8>
  %fu = tn.convert %tu : tensor<5x7xui8> -> tensor<5x7xf32>
  %mu = tn.mm %x, %fu : tensor<3x5xf32>, tensor<5x7xf32> -> tensor<3x7xf32>
  %yu = tn.mul %mu, %s : tensor<3x7xf32>, tensor<7xf32> -> tensor<3x7xf32>
  %m2 = tn.mm %x, %f : tensor<3x5xf32>, tensor<5x7xf32> -> tensor<3x7xf32>
  %ye = tn.mul %m2, %e : tensor<3x7xf32>, tensor<3x7xf32> -> tensor<3x7xf32>
  func.return %y, %m, %yu, %ye : tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>
}
// CHECK-LABEL: func.func @not_weight_only
// CHECK-NOT:   tn.weight_int8_mm
// CHECK:       func.return
