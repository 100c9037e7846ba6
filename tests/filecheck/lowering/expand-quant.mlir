// RUN: irc-opt --split-input-file %s -p expand-quant | filecheck %s
// What fuse-quant leaves of PT2E's quantize / dequantize becomes eager's own decomposition
// (torch/ao/quantization/fx/_decomposed.py), in its order and dtypes: 1 / scale in double then float32, round half
// to even, the zero point added in float32, clamped, converted; per channel the parameters broadcast along `axis`.

func.func @per_tensor(%x: tensor<3x5xf32>, %q: tensor<3x5xui8>) -> (tensor<3x5xui8>, tensor<3x5xf32>) {
  %s = tn.constant dense<0.03> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<128> : tensor<i64> -> tensor<i64>
  %r = tn.quantize %x scale %s zero_point %z range = [0, 255] : tensor<3x5xf32>, tensor<f64>, tensor<i64> -> tensor<3x5xui8>
  %d = tn.dequantize %q scale %s zero_point %z range = [0, 255] : tensor<3x5xui8>, tensor<f64>, tensor<i64> -> tensor<3x5xf32>
  func.return %r, %d : tensor<3x5xui8>, tensor<3x5xf32>
}
// CHECK-LABEL: func.func @per_tensor
// CHECK:       %[[INV:.*]] = tn.reciprocal %s : tensor<f64>
// CHECK-NEXT:  %[[INV32:.*]] = tn.convert %[[INV]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT:  %[[M:.*]] = tn.mul %x, %[[INV32]] : tensor<3x5xf32>, tensor<f32> -> tensor<3x5xf32>
// CHECK-NEXT:  %[[R:.*]] = tn.round %[[M]] : tensor<3x5xf32>
// CHECK-NEXT:  %[[Z:.*]] = tn.convert %z : tensor<i64> -> tensor<f32>
// CHECK-NEXT:  %[[A:.*]] = tn.add %[[R]], %[[Z]]
// CHECK-NEXT:  %[[LO:.*]] = tn.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:  %[[MX:.*]] = tn.maximum %[[A]], %[[LO]]
// CHECK-NEXT:  %[[HI:.*]] = tn.constant dense<2.550000e+02> : tensor<f32>
// CHECK-NEXT:  %[[MN:.*]] = tn.minimum %[[MX]], %[[HI]]
// CHECK-NEXT:  %[[RES:.*]] = tn.convert %[[MN]] : tensor<3x5xf32> -> tensor<3x5xui8>
// CHECK-NEXT:  %[[QF:.*]] = tn.convert %q : tensor<3x5xui8> -> tensor<3x5xf32>
// CHECK-NEXT:  %[[ZF:.*]] = tn.convert %z : tensor<i64> -> tensor<f32>
// CHECK-NEXT:  %[[SUB:.*]] = tn.sub %[[QF]], %[[ZF]]
// CHECK-NEXT:  %[[S32:.*]] = tn.convert %s : tensor<f64> -> tensor<f32>
// CHECK-NEXT:  %[[D:.*]] = tn.mul %[[SUB]], %[[S32]] : tensor<3x5xf32>, tensor<f32> -> tensor<3x5xf32>
// CHECK-NEXT:  func.return %[[RES]], %[[D]]

// -----

// Per channel along axis 1 of 3: the parameters reshaped to [C, 1]; the integer difference in int64, as eager.
func.func @per_channel(%x: tensor<2x4x3xf32>, %q: tensor<2x4x3xi8>, %s: tensor<4xf32>, %z: tensor<4xi64>) -> (tensor<2x4x3xi8>, tensor<2x4x3xf32>) {
  %r = tn.quantize %x scale %s zero_point %z range = [-128, 127] axis 1 : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xi64> -> tensor<2x4x3xi8>
  %d = tn.dequantize %q scale %s zero_point %z range = [-128, 127] axis 1 : tensor<2x4x3xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<2x4x3xf32>
  func.return %r, %d : tensor<2x4x3xi8>, tensor<2x4x3xf32>
}
// CHECK-LABEL: func.func @per_channel
// CHECK:       %[[INV:.*]] = tn.reciprocal %s : tensor<4xf32>
// CHECK-NEXT:  %[[INVC:.*]] = tn.reshape %[[INV]] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %[[ZC:.*]] = tn.reshape %z : tensor<4xi64> -> tensor<4x1xi64>
// CHECK-NEXT:  %[[M:.*]] = tn.mul %x, %[[INVC]] : tensor<2x4x3xf32>, tensor<4x1xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT:  %[[R:.*]] = tn.round %[[M]]
// CHECK-NEXT:  %[[ZF:.*]] = tn.convert %[[ZC]] : tensor<4x1xi64> -> tensor<4x1xf32>
// CHECK-NEXT:  tn.add %[[R]], %[[ZF]]
// CHECK:       %[[RES:.*]] = tn.convert {{.*}} : tensor<2x4x3xf32> -> tensor<2x4x3xi8>
// CHECK-NEXT:  %[[SC:.*]] = tn.reshape %s : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %[[QW:.*]] = tn.convert %q : tensor<2x4x3xi8> -> tensor<2x4x3xi64>
// CHECK-NEXT:  %[[ZW:.*]] = tn.reshape %z : tensor<4xi64> -> tensor<4x1xi64>
// CHECK-NEXT:  %[[D:.*]] = tn.sub %[[QW]], %[[ZW]] : tensor<2x4x3xi64>, tensor<4x1xi64> -> tensor<2x4x3xi64>
// CHECK-NEXT:  %[[DF:.*]] = tn.convert %[[D]] : tensor<2x4x3xi64> -> tensor<2x4x3xf32>
// CHECK-NEXT:  %[[DQ:.*]] = tn.mul %[[DF]], %[[SC]] : tensor<2x4x3xf32>, tensor<4x1xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT:  func.return %[[RES]], %[[DQ]]

// -----

// A module of int8 convolutions (NHWC, quant_layout.py): what lies between two of them is computed NHWC, each
// elementwise op on the unpermuted operands, so the permutes fuse-quant put around the convolutions cancel.
func.func @nhwc_region(%x: tensor<1x4x4x8xui8>, %w: tensor<8x8x1x1xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>) -> tensor<1x4x4x8xui8> {
  %s = tn.constant dense<0.03> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<0> : tensor<i64> -> tensor<i64>
  %y = tn.qconv %x, %w, %ws, %wz x = (3.000000e-02 : f64, 0) out = (3.000000e-02 : f64, 0) post_op = "none" stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<1x4x4x8xui8>, tensor<8x8x1x1xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<1x4x4x8xui8>
  %p = tn.permute %y perm = [0, 3, 1, 2] : tensor<1x4x4x8xui8> -> tensor<1x8x4x4xui8>
  %d = tn.dequantize %p scale %s zero_point %z range = [0, 255] : tensor<1x8x4x4xui8>, tensor<f64>, tensor<i64> -> tensor<1x8x4x4xf32>
  %r = tn.relu %d : tensor<1x8x4x4xf32>
  %q = tn.quantize %r scale %s zero_point %z range = [0, 255] : tensor<1x8x4x4xf32>, tensor<f64>, tensor<i64> -> tensor<1x8x4x4xui8>
  %n = tn.permute %q perm = [0, 2, 3, 1] : tensor<1x8x4x4xui8> -> tensor<1x4x4x8xui8>
  func.return %n : tensor<1x4x4x8xui8>
}
// CHECK-LABEL: func.func @nhwc_region
// CHECK-NOT:   tn.permute
// CHECK:       tn.convert %{{.*}} : tensor<1x4x4x8xui8> -> tensor<1x4x4x8xf32>
// CHECK:       tn.relu %{{.*}} : tensor<1x4x4x8xf32>
// CHECK-NOT:   tn.permute
// CHECK:       %[[Q:.*]] = tn.convert %{{.*}} : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xui8>
// CHECK-NEXT:  func.return %[[Q]]

// -----

// A residual convolution may sum into its accum in place when the accum is another int8 convolution's result read
// otherwise only by int8 convolutions before it (%b's accum %a), not when anything reads it after (%d's accum %c,
// read again by the add).
func.func @donated_accums(%x: tensor<1x4x4x8xui8>, %w: tensor<8x8x1x1xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>) -> (tensor<1x4x4x8xui8>, tensor<1x4x4x8xui8>) {
  %a = tn.qconv %x, %w, %ws, %wz x = (3.000000e-02 : f64, 0) out = (3.000000e-02 : f64, 0) post_op = "none" stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<1x4x4x8xui8>, tensor<8x8x1x1xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<1x4x4x8xui8>
  %h = tn.qconv %a, %w, %ws, %wz x = (3.000000e-02 : f64, 0) out = (3.000000e-02 : f64, 0) post_op = "relu" stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<1x4x4x8xui8>, tensor<8x8x1x1xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<1x4x4x8xui8>
  %b = tn.qconv %h, %w, %ws, %wz accum %a scale 3.000000e-02 : f64 zero_point 0 x = (3.000000e-02 : f64, 0) out = (3.000000e-02 : f64, 0) post_op = "relu" stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<1x4x4x8xui8>, tensor<8x8x1x1xi8>, tensor<8xf32>, tensor<8xi64> accum tensor<1x4x4x8xui8> -> tensor<1x4x4x8xui8>
  %c = tn.qconv %b, %w, %ws, %wz x = (3.000000e-02 : f64, 0) out = (3.000000e-02 : f64, 0) post_op = "none" stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<1x4x4x8xui8>, tensor<8x8x1x1xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<1x4x4x8xui8>
  %d = tn.qconv %b, %w, %ws, %wz accum %c scale 3.000000e-02 : f64 zero_point 0 x = (3.000000e-02 : f64, 0) out = (3.000000e-02 : f64, 0) post_op = "relu" stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<1x4x4x8xui8>, tensor<8x8x1x1xi8>, tensor<8xf32>, tensor<8xi64> accum tensor<1x4x4x8xui8> -> tensor<1x4x4x8xui8>
  %e = tn.add %c, %d : tensor<1x4x4x8xui8>, tensor<1x4x4x8xui8> -> tensor<1x4x4x8xui8>
  func.return %b, %e : tensor<1x4x4x8xui8>, tensor<1x4x4x8xui8>
}
// CHECK-LABEL: func.func @donated_accums
// CHECK:       %b = tn.qconv %h, %w, %ws, %wz accum %a {{.*}} channels_last accum_donated :
// CHECK:       %d = tn.qconv %b, %w, %ws, %wz accum %c {{.*}} channels_last :

// -----

// Dynamic quantization's parameters and the quantize by them stay one op each: tensor-to-loop builds their nests
// directly (lower_quant.py, tests/filecheck/lowering/tensor-to-loop-quant.mlir).
func.func @choose_qparams(%x: tensor<4x8xf32>) -> tensor<4x8xui8> {
  %s, %z = tn.choose_qparams %x range = [0, 255] eps = 2.44140625e-04 dtype = "uint8" : tensor<4x8xf32> -> tensor<1xf64>, tensor<1xi64>
  %s0 = tn.reshape %s : tensor<1xf64> -> tensor<f64>
  %z0 = tn.reshape %z : tensor<1xi64> -> tensor<i64>
  %q = tn.quantize %x scale %s0 zero_point %z0 range = [0, 255] : tensor<4x8xf32>, tensor<f64>, tensor<i64> -> tensor<4x8xui8>
  func.return %q : tensor<4x8xui8>
}
// CHECK-LABEL: func.func @choose_qparams
// CHECK-NEXT:  %s, %z = tn.choose_qparams %x
// CHECK-NEXT:  %s0 = tn.reshape %s
// CHECK-NEXT:  %z0 = tn.reshape %z
// CHECK-NEXT:  %q = tn.quantize %x scale %s0 zero_point %z0
// CHECK-NEXT:  func.return %q

// -----

// A size known only at run time keeps the extern (torch's own function, whose error an empty input gets).
func.func @choose_qparams_dynamic(%x: tensor<?x8xf32>) -> (tensor<1xf64>, tensor<1xi64>) {
  %s, %z = tn.choose_qparams %x range = [0, 255] eps = 2.44140625e-04 dtype = "uint8" : tensor<?x8xf32> -> tensor<1xf64>, tensor<1xi64>
  func.return %s, %z : tensor<1xf64>, tensor<1xi64>
}
// CHECK-LABEL: func.func @choose_qparams_dynamic
// CHECK-NEXT:  %s, %z = tn.choose_qparams %x
