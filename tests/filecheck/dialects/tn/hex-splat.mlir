// RUN: irc-opt %s | irc-opt | filecheck %s
// Float splats without a decimal spelling (inf, -inf) print as bit patterns and parse back as the same floats.

func.func @special_floats() -> (tensor<f32>, tensor<4xf64>, tensor<f16>) {
  %a = tn.constant dense<0xFF800000> : tensor<f32> -> tensor<f32>
  %b = tn.constant dense<0x7FF0000000000000> : tensor<4xf64> -> tensor<4xf64>
  %c = tn.constant dense<0xFC00> : tensor<f16> -> tensor<f16>
  func.return %a, %b, %c : tensor<f32>, tensor<4xf64>, tensor<f16>
}
// CHECK: tn.constant dense<0xff800000> : tensor<f32>
// CHECK: tn.constant dense<0x7ff0000000000000> : tensor<4xf64>
// CHECK: tn.constant dense<0xfc00> : tensor<f16>
