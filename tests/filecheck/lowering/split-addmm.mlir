// RUN: irc-opt --split-input-file %s -p split-addmm | filecheck %s
// RUN: irc-opt --split-input-file %s -p 'split-addmm{keep="bfloat16"}' | filecheck %s --check-prefix=KEEP
// A bf16 linear layer where no library call runs it whole (the generated matmul, the Triton dot template): the
// float32 product of the widened operands, the bias added in float32, one rounding.

func.func @linear(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %c: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %r = tn.addmm %a, %b bias %c : tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<4x16xbf16>
  func.return %r : tensor<4x16xbf16>
}
// CHECK-LABEL: func.func @linear
// CHECK-NEXT:  %0 = tn.convert %a : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK-NEXT:  %1 = tn.convert %b : tensor<8x16xbf16> -> tensor<8x16xf32>
// CHECK-NEXT:  %2 = tn.convert %c : tensor<16xbf16> -> tensor<16xf32>
// CHECK-NEXT:  %3 = tn.mm %0, %1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %4 = tn.add %2, %3 : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %r = tn.convert %4 : tensor<4x16xf32> -> tensor<4x16xbf16>
// CHECK-NEXT:  func.return %r
// A library with bf16 kernels of its own runs the bf16 one whole:
// KEEP-LABEL: func.func @linear
// KEEP-NEXT:  %r = tn.addmm %a, %b bias %c : tensor<4x8xbf16>

// -----

// One with an epilogue (fold-bias's, at the loop stage) is a library call already: left as it is.
func.func @gelu(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %c: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %r = tn.addmm %a, %b bias %c epilogue "gelu" : tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<4x16xbf16>
  func.return %r : tensor<4x16xbf16>
}
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT:  %r = tn.addmm %a, %b bias %c epilogue "gelu"
