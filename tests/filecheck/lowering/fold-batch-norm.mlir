// RUN: irc-opt --split-input-file %s -p fold-batch-norm,fold-constants,dce | filecheck %s
// Inference BatchNorm after a convolution or a linear layer with constant parameters folds into its weight and bias.

func.func @conv_batch_norm(%x: tensor<2x3x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %w = tn.constant dense<0.5> : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  %b = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %gamma = tn.constant dense<2.0> : tensor<4xf32> -> tensor<4xf32>
  %beta = tn.constant dense<0.25> : tensor<4xf32> -> tensor<4xf32>
  %mean = tn.constant dense<3.0> : tensor<4xf32> -> tensor<4xf32>
  %var = tn.constant dense<3.99999> : tensor<4xf32> -> tensor<4xf32>
  %c = tn.convolution %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  %r = tn.batch_norm_inference %c weight %gamma bias %beta stats %mean, %var eps = 1.0e-05 : tensor<2x4x8x8xf32> weight tensor<4xf32> bias tensor<4xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  func.return %r : tensor<2x4x8x8xf32>
}
// s = 2 / sqrt(3.99999 + 1e-5) = 1: the weight 0.5 * 1, the bias (1 - 3) * 1 + 0.25, evaluated at compile time.
// CHECK-LABEL: func.func @conv_batch_norm
// CHECK-DAG:   %[[W:.*]] = tn.constant dense<5.000000e-01> : tensor<4x3x3x3xf32>
// CHECK-DAG:   %[[B:.*]] = tn.constant dense<-1.750000e+00> : tensor<4xf32>
// CHECK:       %{{.*}} = tn.convolution %x, %[[W]], %[[B]] stride = [1, 1]
// CHECK-NOT:   tn.batch_norm_inference

// -----
func.func @conv_batch_norm_autocast(%x: tensor<2x3x8x8xbf16>) -> tensor<2x4x8x8xbf16> {
  %w32 = tn.constant dense<1.006> : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  %b32 = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %w = tn.convert %w32 : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xbf16>
  %b = tn.convert %b32 : tensor<4xf32> -> tensor<4xbf16>
  %gamma = tn.constant dense<3.0> : tensor<4xf32> -> tensor<4xf32>
  %beta = tn.constant dense<0.25> : tensor<4xf32> -> tensor<4xf32>
  %mean = tn.constant dense<3.0> : tensor<4xf32> -> tensor<4xf32>
  %var = tn.constant dense<3.99999> : tensor<4xf32> -> tensor<4xf32>
  %c = tn.convolution %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16> -> tensor<2x4x8x8xbf16>
  %r = tn.batch_norm_inference %c weight %gamma bias %beta stats %mean, %var eps = 1.0e-05 : tensor<2x4x8x8xbf16> weight tensor<4xf32> bias tensor<4xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xbf16>
  func.return %r : tensor<2x4x8x8xbf16>
}
// Autocast: a bf16 convolution of autocast's rounded float32 weight, float32 statistics. s = 3 / 2: the weight folds
// from the float32 1.006 and rounds once (1.509 -> 1.5078125; rounding 1.006 first gives 1.0078125 * 1.5 -> 1.515625),
// the bias (1 - 3) * 1.5 + 0.25 = -2.75.
// CHECK-LABEL: func.func @conv_batch_norm_autocast
// CHECK-DAG:   %[[W:.*]] = tn.constant dense<1.507810e+00> : tensor<4x3x3x3xbf16>
// CHECK-DAG:   %[[B:.*]] = tn.constant dense<-2.750000e+00> : tensor<4xbf16>
// CHECK:       tn.convolution %x, %[[W]], %[[B]] {{.*}} -> tensor<2x4x8x8xbf16>
// CHECK-NOT:   tn.batch_norm_inference

// -----
func.func @conv_no_bias_batch_norm_no_affine(%x: tensor<2x3x8x8xf32>) -> tensor<2x4x6x6xf32> {
  %w = tn.constant dense<3.0> : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  %mean = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %var = tn.constant dense<8.99999> : tensor<4xf32> -> tensor<4xf32>
  %c = tn.convolution %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  %r = tn.batch_norm_inference %c stats %mean, %var eps = 1.0e-05 : tensor<2x4x6x6xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  func.return %r : tensor<2x4x6x6xf32>
}
// No conv bias, no BatchNorm weight or bias: s = 1/3, the weight 3 * 1/3, a new bias -mean * s.
// CHECK-LABEL: func.func @conv_no_bias_batch_norm_no_affine
// CHECK-DAG:   %[[W:.*]] = tn.constant dense<1.000000e+00> : tensor<4x3x3x3xf32>
// CHECK-DAG:   %[[B:.*]] = tn.constant dense<-0.333333{{[0-9]*}}> : tensor<4xf32>
// CHECK:       tn.convolution %x, %[[W]], %[[B]]
// CHECK-NOT:   tn.batch_norm_inference

// -----
func.func @linear_batch_norm(%x: tensor<5x3xf32>) -> tensor<5x4xf32> {
  %wt = tn.constant dense<0.5> : tensor<3x4xf32> -> tensor<3x4xf32>
  %b = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %gamma = tn.constant dense<4.0> : tensor<4xf32> -> tensor<4xf32>
  %beta = tn.constant dense<0.5> : tensor<4xf32> -> tensor<4xf32>
  %mean = tn.constant dense<2.0> : tensor<4xf32> -> tensor<4xf32>
  %var = tn.constant dense<3.99999> : tensor<4xf32> -> tensor<4xf32>
  %m = tn.mm %x, %wt : tensor<5x3xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  %y = tn.add %b, %m : tensor<4xf32>, tensor<5x4xf32> -> tensor<5x4xf32>
  %r = tn.batch_norm_inference %y weight %gamma bias %beta stats %mean, %var eps = 1.0e-05 : tensor<5x4xf32> weight tensor<4xf32> bias tensor<4xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<5x4xf32>
  func.return %r : tensor<5x4xf32>
}
// s = 2: the weight 0.5 * 2, the bias (1 - 2) * 2 + 0.5.
// CHECK-LABEL: func.func @linear_batch_norm
// CHECK-DAG:   %[[W:.*]] = tn.constant dense<1.000000e+00> : tensor<3x4xf32>
// CHECK-DAG:   %[[B:.*]] = tn.constant dense<-1.500000e+00> : tensor<4xf32>
// CHECK:       %[[M:.*]] = tn.mm %x, %[[W]]
// CHECK-NEXT:  %{{.*}} = tn.add %[[B]], %[[M]]
// CHECK-NOT:   tn.batch_norm_inference

// -----
func.func @weight_not_constant(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %mean = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %var = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %c = tn.convolution %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  %r = tn.batch_norm_inference %c stats %mean, %var eps = 1.0e-05 : tensor<2x4x6x6xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  func.return %r : tensor<2x4x6x6xf32>
}
// A weight that is a graph input (not frozen): folding would add a weight product to every call.
// CHECK-LABEL: func.func @weight_not_constant
// CHECK:       tn.batch_norm_inference

// -----
func.func @conv_read_twice(%x: tensor<2x3x8x8xf32>) -> (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) {
  %w = tn.constant dense<3.0> : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  %mean = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %var = tn.constant dense<1.0> : tensor<4xf32> -> tensor<4xf32>
  %c = tn.convolution %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  %r = tn.batch_norm_inference %c stats %mean, %var eps = 1.0e-05 : tensor<2x4x6x6xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  func.return %r, %c : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
}
// The convolution's own result is needed too: no fold.
// CHECK-LABEL: func.func @conv_read_twice
// CHECK:       tn.batch_norm_inference
