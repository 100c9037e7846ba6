// RUN: irc-opt --split-input-file %s -p fuse-quant | filecheck %s
// RUN: irc-opt --split-input-file %s -p 'fuse-quant{products=false}' | filecheck %s --check-prefix=NOLIB
// PT2E's int8 patterns become one oneDNN int8 product (Rules.int8_products): dq -> convolution / linear -> relu? -> q
// writes the integer type, a product no quantize takes writes float32; q(reshape?(dq(x))) of the same parameters
// is x. Without the library only the last holds.

func.func @conv_relu_q(%x: tensor<2x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %ws: tensor<4xf32>, %wz: tensor<4xi64>, %b: tensor<4xf32>) -> tensor<2x4x8x8xui8> {
  %s = tn.constant dense<0.03> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<128> : tensor<i64> -> tensor<i64>
  %os = tn.constant dense<0.05> : tensor<f64> -> tensor<f64>
  %oz = tn.constant dense<0> : tensor<i64> -> tensor<i64>
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<2x3x8x8xui8>, tensor<f64>, tensor<i64> -> tensor<2x3x8x8xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<4x3x3x3xf32>
  %c = tn.convolution %dx, %dw, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  %r = tn.relu %c : tensor<2x4x8x8xf32>
  %q = tn.quantize %r scale %os zero_point %oz range = [0, 255] : tensor<2x4x8x8xf32>, tensor<f64>, tensor<i64> -> tensor<2x4x8x8xui8>
  func.return %q : tensor<2x4x8x8xui8>
}
// oneDNN computes channels-last: the convolution reads and writes NHWC between permutes (fold-permutes cancels
// those of consecutive convolutions).
// CHECK-LABEL: func.func @conv_relu_q
// CHECK-NEXT:  %[[X:.*]] = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x8x8xui8> -> tensor<2x8x8x3xui8>
// CHECK-NEXT:  %[[Y:.*]] = tn.qconv %[[X]], %w, %ws, %wz, %b x = (3.000000e-02 : f64, 128) out = (5.000000e-02 : f64, 0) post_op = "relu" stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : {{.*}} -> tensor<2x8x8x4xui8>
// CHECK-NEXT:  %[[R:.*]] = tn.permute %[[Y]] perm = [0, 3, 1, 2] : tensor<2x8x8x4xui8> -> tensor<2x4x8x8xui8>
// CHECK-NEXT:  func.return %[[R]]
// NOLIB-LABEL: func.func @conv_relu_q
// NOLIB:       tn.convolution
// NOLIB:       tn.quantize

// -----

// No quantize after it: the float32 result.
func.func @conv_float(%x: tensor<1x3x5x5xui8>, %w: tensor<2x3x3x3xi8>, %ws: tensor<2xf32>, %wz: tensor<2xi64>) -> tensor<1x2x3x3xf32> {
  %s = tn.constant dense<0.5> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<7> : tensor<i64> -> tensor<i64>
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<1x3x5x5xui8>, tensor<f64>, tensor<i64> -> tensor<1x3x5x5xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<2xi64> -> tensor<2x3x3x3xf32>
  %c = tn.convolution %dx, %dw stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x3x3xf32>
  func.return %c : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @conv_float
// CHECK-NEXT:  %[[X:.*]] = tn.permute %x perm = [0, 2, 3, 1]
// CHECK-NEXT:  %[[Y:.*]] = tn.qconv %[[X]], %w, %ws, %wz x = (5.000000e-01 : f64, 7) out = (1.000000e+00 : f64, 0) post_op = "none" {{.*}} -> tensor<1x3x3x2xf32>
// CHECK-NEXT:  %[[R:.*]] = tn.permute %[[Y]] perm = [0, 3, 1, 2] : tensor<1x3x3x2xf32> -> tensor<1x2x3x3xf32>
// CHECK-NEXT:  func.return %[[R]]

// -----

// A linear layer as AOT autograd writes it (addmm of the transposed weight), its output quantized to int8.
func.func @linear_q(%x: tensor<4x16xui8>, %w: tensor<8x16xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>, %b: tensor<8xf32>) -> tensor<4x8xi8> {
  %s = tn.constant dense<0.02> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<100> : tensor<i64> -> tensor<i64>
  %os = tn.constant dense<0.1> : tensor<f64> -> tensor<f64>
  %oz = tn.constant dense<-3> : tensor<i64> -> tensor<i64>
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<4x16xui8>, tensor<f64>, tensor<i64> -> tensor<4x16xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<8x16xf32>
  %t = tn.permute %dw perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = tn.addmm %dx, %t bias %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %q = tn.quantize %y scale %os zero_point %oz range = [-128, 127] : tensor<4x8xf32>, tensor<f64>, tensor<i64> -> tensor<4x8xi8>
  func.return %q : tensor<4x8xi8>
}
// CHECK-LABEL: func.func @linear_q
// CHECK-NEXT:  %q = tn.qlinear %x, %w, %ws, %wz, %b x = (2.000000e-02 : f64, 100) out = (1.000000e-01 : f64, -3) post_op = "none" : tensor<4x16xui8>, tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64>, tensor<8xf32> -> tensor<4x8xi8>
// CHECK-NEXT:  func.return %q

// -----

// The importer's form of a linear layer with a bias: add(bias, mm(...)); the relu and quantize after it go in too.
func.func @linear_bias_add(%x: tensor<4x16xui8>, %w: tensor<8x16xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>, %b: tensor<8xf32>) -> tensor<4x8xui8> {
  %s = tn.constant dense<0.02> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<100> : tensor<i64> -> tensor<i64>
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<4x16xui8>, tensor<f64>, tensor<i64> -> tensor<4x16xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<8x16xf32>
  %t = tn.permute %dw perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %m = tn.mm %dx, %t : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %y = tn.add %b, %m : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %r = tn.relu %y : tensor<4x8xf32>
  %q = tn.quantize %r scale %s zero_point %z range = [0, 255] : tensor<4x8xf32>, tensor<f64>, tensor<i64> -> tensor<4x8xui8>
  func.return %q : tensor<4x8xui8>
}
// CHECK-LABEL: func.func @linear_bias_add
// CHECK-NEXT:  %q = tn.qlinear %x, %w, %ws, %wz, %b x = (2.000000e-02 : f64, 100) out = (2.000000e-02 : f64, 100) post_op = "relu" {{.*}} -> tensor<4x8xui8>
// CHECK-NEXT:  func.return %q

// -----

// The ConvNet's flatten: q(reshape(dq(x))) of the same parameters is reshape(x); the linear after it reads uint8.
func.func @requantize(%x: tensor<2x4x3x3xui8>, %w: tensor<5x36xi8>, %ws: tensor<5xf32>, %wz: tensor<5xi64>) -> tensor<2x5xf32> {
  %s = tn.constant dense<0.0065164482221007347> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<0> : tensor<i64> -> tensor<i64>
  %d = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<2x4x3x3xui8>, tensor<f64>, tensor<i64> -> tensor<2x4x3x3xf32>
  %v = tn.reshape %d : tensor<2x4x3x3xf32> -> tensor<2x36xf32>
  %q = tn.quantize %v scale %s zero_point %z range = [0, 255] : tensor<2x36xf32>, tensor<f64>, tensor<i64> -> tensor<2x36xui8>
  %dq = tn.dequantize %q scale %s zero_point %z range = [0, 255] : tensor<2x36xui8>, tensor<f64>, tensor<i64> -> tensor<2x36xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<5x36xi8>, tensor<5xf32>, tensor<5xi64> -> tensor<5x36xf32>
  %t = tn.permute %dw perm = [1, 0] : tensor<5x36xf32> -> tensor<36x5xf32>
  %y = tn.mm %dq, %t : tensor<2x36xf32>, tensor<36x5xf32> -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}
// CHECK-LABEL: func.func @requantize
// CHECK-NEXT:  %q = tn.reshape %x : tensor<2x4x3x3xui8> -> tensor<2x36xui8>
// CHECK-NEXT:  %y = tn.qlinear %q, %w, %ws, %wz x = (0.0065164482221007347 : f64, 0) out = (1.000000e+00 : f64, 0) post_op = "none" {{.*}} -> tensor<2x5xf32>
// CHECK-NEXT:  func.return %y
// NOLIB-LABEL: func.func @requantize
// NOLIB:       %q = tn.reshape %x : tensor<2x4x3x3xui8> -> tensor<2x36xui8>
// NOLIB:       tn.mm

// -----

// Left as they are: int8 activations (oneDNN's kernels take uint8), a quantize of a range short of its dtype's
// (oneDNN saturates to the dtype), a weight quantized per tensor, a scale known only at run time.
func.func @not_fused(%x: tensor<1x3x5x5xi8>, %u: tensor<1x3x5x5xui8>, %w: tensor<2x3x3x3xi8>, %ws: tensor<2xf32>, %wz: tensor<2xi64>, %rs: tensor<f64>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xui8>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %s = tn.constant dense<0.5> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<7> : tensor<i64> -> tensor<i64>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<2xi64> -> tensor<2x3x3x3xf32>
  %dx = tn.dequantize %x scale %s zero_point %z range = [-128, 127] : tensor<1x3x5x5xi8>, tensor<f64>, tensor<i64> -> tensor<1x3x5x5xf32>
  %c1 = tn.convolution %dx, %dw stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x3x3xf32>
  %du = tn.dequantize %u scale %s zero_point %z range = [0, 255] : tensor<1x3x5x5xui8>, tensor<f64>, tensor<i64> -> tensor<1x3x5x5xf32>
  %dw2 = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<2xi64> -> tensor<2x3x3x3xf32>
  %c2 = tn.convolution %du, %dw2 stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x3x3xf32>
  %q2 = tn.quantize %c2 scale %s zero_point %z range = [0, 127] : tensor<1x2x3x3xf32>, tensor<f64>, tensor<i64> -> tensor<1x2x3x3xui8>
  %dt = tn.dequantize %w scale %s zero_point %z range = [-128, 127] : tensor<2x3x3x3xi8>, tensor<f64>, tensor<i64> -> tensor<2x3x3x3xf32>
  %du3 = tn.dequantize %u scale %s zero_point %z range = [0, 255] : tensor<1x3x5x5xui8>, tensor<f64>, tensor<i64> -> tensor<1x3x5x5xf32>
  %c3 = tn.convolution %du3, %dt stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x3x3xf32>
  %dr = tn.dequantize %u scale %rs zero_point %z range = [0, 255] : tensor<1x3x5x5xui8>, tensor<f64>, tensor<i64> -> tensor<1x3x5x5xf32>
  %dw4 = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<2xi64> -> tensor<2x3x3x3xf32>
  %c4 = tn.convolution %dr, %dw4 stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x3x3xf32>
  func.return %c1, %q2, %c3, %c4 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xui8>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
// The short range's product is still int8, its float32 result quantized as the graph says:
// CHECK-LABEL: func.func @not_fused
// CHECK:       %c1 = tn.convolution %dx, %dw
// CHECK-NEXT:  %[[U:.*]] = tn.permute %u
// CHECK-NEXT:  %[[C2:.*]] = tn.qconv %[[U]], %w, %ws, %wz {{.*}} -> tensor<1x3x3x2xf32>
// CHECK-NEXT:  %[[C2N:.*]] = tn.permute %[[C2]]
// CHECK-NEXT:  %q2 = tn.quantize %[[C2N]] scale %s zero_point %z range = [0, 127]
// CHECK:       %c3 = tn.convolution %du3, %dt
// CHECK:       %c4 = tn.convolution %dr, %dw4
// CHECK-NEXT:  func.return %c1, %q2, %c3, %c4

// -----

// A residual connection: q(relu(add(conv(dq(x), dq(w)), dq(identity)))) is one convolution with oneDNN's sum
// post-op, the identity its uint8 accum (with the scale and zero point it was quantized by).
func.func @residual(%x: tensor<1x8x4x4xui8>, %id: tensor<1x8x4x4xui8>, %w: tensor<8x8x3x3xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>, %b: tensor<8xf32>) -> tensor<1x8x4x4xui8> {
  %s = tn.constant dense<0.03> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<0> : tensor<i64> -> tensor<i64>
  %as = tn.constant dense<0.02> : tensor<f64> -> tensor<f64>
  %az = tn.constant dense<3> : tensor<i64> -> tensor<i64>
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<1x8x4x4xui8>, tensor<f64>, tensor<i64> -> tensor<1x8x4x4xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<8x8x3x3xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<8x8x3x3xf32>
  %c = tn.convolution %dx, %dw, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>, tensor<8xf32> -> tensor<1x8x4x4xf32>
  %di = tn.dequantize %id scale %as zero_point %az range = [0, 255] : tensor<1x8x4x4xui8>, tensor<f64>, tensor<i64> -> tensor<1x8x4x4xf32>
  %a = tn.add %c, %di : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  %r = tn.relu %a : tensor<1x8x4x4xf32>
  %q = tn.quantize %r scale %s zero_point %z range = [0, 255] : tensor<1x8x4x4xf32>, tensor<f64>, tensor<i64> -> tensor<1x8x4x4xui8>
  func.return %q : tensor<1x8x4x4xui8>
}
// CHECK-LABEL: func.func @residual
// CHECK-NEXT:  %[[A:.*]] = tn.permute %id perm = [0, 2, 3, 1]
// CHECK-NEXT:  %[[X:.*]] = tn.permute %x perm = [0, 2, 3, 1]
// CHECK-NEXT:  %[[Y:.*]] = tn.qconv %[[X]], %w, %ws, %wz, %b accum %[[A]] scale 2.000000e-02 : f64 zero_point 3 x = (3.000000e-02 : f64, 0) out = (3.000000e-02 : f64, 0) post_op = "relu" {{.*}} channels_last
// CHECK-NEXT:  %[[R:.*]] = tn.permute %[[Y]] perm = [0, 3, 1, 2]
// CHECK-NEXT:  func.return %[[R]]

// -----

// Dynamic quantization: the activation's scale and zero point come from tn.choose_qparams at run time, so the
// linear layer takes them as tensors (oneDNN's qlinear_pointwise.tensor); its result is float32.
func.func @dynamic_linear(%x: tensor<4x16xf32>, %w: tensor<8x16xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s, %z = tn.choose_qparams %x range = [0, 255] eps = 2.44140625e-04 dtype = "uint8" : tensor<4x16xf32> -> tensor<1xf64>, tensor<1xi64>
  %s0 = tn.reshape %s : tensor<1xf64> -> tensor<f64>
  %z0 = tn.reshape %z : tensor<1xi64> -> tensor<i64>
  %q = tn.quantize %x scale %s0 zero_point %z0 range = [0, 255] : tensor<4x16xf32>, tensor<f64>, tensor<i64> -> tensor<4x16xui8>
  %dx = tn.dequantize %q scale %s0 zero_point %z0 range = [0, 255] : tensor<4x16xui8>, tensor<f64>, tensor<i64> -> tensor<4x16xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<8x16xf32>
  %t = tn.permute %dw perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = tn.addmm %dx, %t bias %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @dynamic_linear
// CHECK:       %q = tn.quantize %x scale %s0 zero_point %z0
// CHECK-NEXT:  %y = tn.qlinear_dynamic %q scale %s0 zero_point %z0, %w, %ws, %wz, %b post_op = "none" : {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %y

// -----

// A linear layer over (batch, tokens, features): the dequantized activation is reshaped to rows before the product;
// the reshape moves to the integer activation (it commutes with a per-tensor dequantize).
func.func @rows_of_tokens(%x: tensor<2x3x16xui8>, %s: tensor<f64>, %z: tensor<i64>, %w: tensor<8x16xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>) -> tensor<6x8xf32> {
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<2x3x16xui8>, tensor<f64>, tensor<i64> -> tensor<2x3x16xf32>
  %v = tn.reshape %dx : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<8x16xf32>
  %t = tn.permute %dw perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = tn.mm %v, %t : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  func.return %y : tensor<6x8xf32>
}
// CHECK-LABEL: func.func @rows_of_tokens
// CHECK-NEXT:  %[[R:.*]] = tn.reshape %x : tensor<2x3x16xui8> -> tensor<6x16xui8>
// CHECK-NEXT:  %[[Y:.*]] = tn.qlinear_dynamic %[[R]] scale %s zero_point %z, %w, %ws, %wz post_op = "none" {{.*}} -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[Y]]

// -----

// Attention's query, key and value projections read one dequantized activation, each through a reshape of its
// own: each becomes an int8 product over its own reshape of the integer activation, and the dequantize dies.
func.func @shared_activation(%x: tensor<2x3x16xui8>, %s: tensor<f64>, %z: tensor<i64>, %w: tensor<8x16xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>, %w2: tensor<4x16xi8>, %ws2: tensor<4xf32>, %wz2: tensor<4xi64>) -> (tensor<6x8xf32>, tensor<6x4xf32>) {
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<2x3x16xui8>, tensor<f64>, tensor<i64> -> tensor<2x3x16xf32>
  %v = tn.reshape %dx : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<8x16xf32>
  %t = tn.permute %dw perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = tn.mm %v, %t : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  %v2 = tn.reshape %dx : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %dw2 = tn.dequantize %w2 scale %ws2 zero_point %wz2 range = [-128, 127] axis 0 : tensor<4x16xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<4x16xf32>
  %t2 = tn.permute %dw2 perm = [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  %y2 = tn.mm %v2, %t2 : tensor<6x16xf32>, tensor<16x4xf32> -> tensor<6x4xf32>
  func.return %y, %y2 : tensor<6x8xf32>, tensor<6x4xf32>
}
// CHECK-LABEL: func.func @shared_activation
// CHECK-NOT:   tn.dequantize
// CHECK:       %[[R:.*]] = tn.reshape %x : tensor<2x3x16xui8> -> tensor<6x16xui8>
// CHECK-NEXT:  %[[Y:.*]] = tn.qlinear_dynamic %[[R]] scale %s zero_point %z, %w, %ws, %wz post_op = "none" {{.*}} -> tensor<6x8xf32>
// CHECK-NEXT:  %[[R2:.*]] = tn.reshape %x : tensor<2x3x16xui8> -> tensor<6x16xui8>
// CHECK-NEXT:  %[[Y2:.*]] = tn.qlinear_dynamic %[[R2]] scale %s zero_point %z, %w2, %ws2, %wz2 post_op = "none" {{.*}} -> tensor<6x4xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[Y2]]
// CHECK-NOT:   tn.dequantize

// -----

// A transformer's feed-forward: gelu, exact or tanh-approximated, after a float-output int8 linear layer over rows
// of tokens becomes the layer's post-op (oneDNN applies it while each block of the result is in cache).
func.func @gelu_post_op(%x: tensor<2x3x16xui8>, %s: tensor<f64>, %z: tensor<i64>, %w: tensor<8x16xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>, %b: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<6x8xf32>) {
  %dx = tn.dequantize %x scale %s zero_point %z range = [0, 255] : tensor<2x3x16xui8>, tensor<f64>, tensor<i64> -> tensor<2x3x16xf32>
  %v = tn.reshape %dx : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %dw = tn.dequantize %w scale %ws zero_point %wz range = [-128, 127] axis 0 : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64> -> tensor<8x16xf32>
  %t = tn.permute %dw perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = tn.addmm %v, %t bias %b : tensor<6x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  %y3 = tn.reshape %y : tensor<6x8xf32> -> tensor<2x3x8xf32>
  %g = tn.gelu %y3 approximate = "none" : tensor<2x3x8xf32>
  %v2 = tn.reshape %dx : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %y2 = tn.addmm %v2, %t bias %b : tensor<6x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  %g2 = tn.gelu %y2 approximate = "tanh" : tensor<6x8xf32>
  func.return %g, %g2 : tensor<2x3x8xf32>, tensor<6x8xf32>
}
// CHECK-LABEL: func.func @gelu_post_op
// CHECK-NOT:   tn.gelu
// CHECK:       %[[Y:.*]] = tn.qlinear_dynamic %{{.*}} scale %s zero_point %z, %w, %ws, %wz, %b post_op = "gelu" {{.*}} -> tensor<6x8xf32>
// CHECK-NEXT:  %[[G:.*]] = tn.reshape %[[Y]] : tensor<6x8xf32> -> tensor<2x3x8xf32>
// CHECK:       %[[Y2:.*]] = tn.qlinear_dynamic %{{.*}} scale %s zero_point %z, %w, %ws, %wz, %b post_op = "gelu_tanh" {{.*}} -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[G]], %[[Y2]]
// NOLIB-LABEL: func.func @gelu_post_op
// NOLIB:       tn.gelu %{{.*}} approximate = "none"
// NOLIB:       tn.gelu %{{.*}} approximate = "tanh"
