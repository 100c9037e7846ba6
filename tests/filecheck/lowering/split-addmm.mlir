// RUN: irc-opt --split-input-file %s -p split-addmm | filecheck %s
// RUN: irc-opt --split-input-file %s -p 'split-addmm{keep="bfloat16"}' | filecheck %s --check-prefix=KEEP
// RUN: irc-opt --split-input-file %s -p 'split-addmm{keep="bfloat16" widen="float16"}' | filecheck %s --check-prefix=WIDEN
// RUN: irc-opt --split-input-file %s -p 'split-addmm{keep="bfloat16" attention="bfloat16"}' | filecheck %s --check-prefix=ATTN
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

// -----

// A library without float16 kernels of its own (widen="float16": torch's reference loop on a CPU without
// AVX512-FP16): mm, bmm and the convolutions become float32 products of the widened operands, rounded once;
// bfloat16 ones, which it runs on kernels of its own, stay as they are.
func.func @products(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>, %q: tensor<2x4x8xf16>, %k: tensor<2x8x4xf16>, %h: tensor<4x8xbf16>, %i: tensor<8x16xbf16>) -> (tensor<4x16xf16>, tensor<2x4x4xf16>, tensor<4x16xbf16>) {
  %r = tn.mm %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
  %s = tn.bmm %q, %k : tensor<2x4x8xf16>, tensor<2x8x4xf16> -> tensor<2x4x4xf16>
  %t = tn.mm %h, %i : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  func.return %r, %s, %t : tensor<4x16xf16>, tensor<2x4x4xf16>, tensor<4x16xbf16>
}
// WIDEN-LABEL: func.func @products
// WIDEN-NEXT:  %0 = tn.convert %a : tensor<4x8xf16> -> tensor<4x8xf32>
// WIDEN-NEXT:  %1 = tn.convert %b : tensor<8x16xf16> -> tensor<8x16xf32>
// WIDEN-NEXT:  %2 = tn.mm %0, %1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// WIDEN-NEXT:  %r = tn.convert %2 : tensor<4x16xf32> -> tensor<4x16xf16>
// WIDEN-NEXT:  %3 = tn.convert %q : tensor<2x4x8xf16> -> tensor<2x4x8xf32>
// WIDEN-NEXT:  %4 = tn.convert %k : tensor<2x8x4xf16> -> tensor<2x8x4xf32>
// WIDEN-NEXT:  %5 = tn.bmm %3, %4 : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
// WIDEN-NEXT:  %s = tn.convert %5 : tensor<2x4x4xf32> -> tensor<2x4x4xf16>
// WIDEN-NEXT:  %t = tn.mm %h, %i : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
// Without the rule (a target whose library runs every dtype, irc-opt on IR that names none) nothing changes:
// CHECK-LABEL: func.func @products
// CHECK-NEXT:  %r = tn.mm %a, %b : tensor<4x8xf16>

// -----

func.func @convolutions(%x: tensor<2x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %c: tensor<4xf16>, %g: tensor<2x4x8x8xf16>) -> (tensor<2x4x8x8xf16>, tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>) {
  %r = tn.convolution %x, %w, %c stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<4xf16> -> tensor<2x4x8x8xf16>
  %gx, %gw = tn.convolution_backward %g, %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 output_mask = [1, 1, 0] : tensor<2x4x8x8xf16>, tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16> -> tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>
  func.return %r, %gx, %gw : tensor<2x4x8x8xf16>, tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>
}
// WIDEN-LABEL: func.func @convolutions
// WIDEN-NEXT:  %0 = tn.convert %x : tensor<2x3x8x8xf16> -> tensor<2x3x8x8xf32>
// WIDEN-NEXT:  %1 = tn.convert %w : tensor<4x3x3x3xf16> -> tensor<4x3x3x3xf32>
// WIDEN-NEXT:  %2 = tn.convert %c : tensor<4xf16> -> tensor<4xf32>
// WIDEN-NEXT:  %3 = tn.convolution %0, %1, %2 {{.*}} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
// WIDEN-NEXT:  %r = tn.convert %3 : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf16>
// WIDEN-NEXT:  %4 = tn.convert %g : tensor<2x4x8x8xf16> -> tensor<2x4x8x8xf32>
// WIDEN-NEXT:  %5 = tn.convert %x : tensor<2x3x8x8xf16> -> tensor<2x3x8x8xf32>
// WIDEN-NEXT:  %6 = tn.convert %w : tensor<4x3x3x3xf16> -> tensor<4x3x3x3xf32>
// WIDEN-NEXT:  %7, %8 = tn.convolution_backward %4, %5, %6 {{.*}} output_mask = [1, 1, 0] : tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
// WIDEN-NEXT:  %gx = tn.convert %7 : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf16>
// WIDEN-NEXT:  %gw = tn.convert %8 : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf16>

// -----

// An attention backward in a dtype the rule widens (Rules.widened_attention_backward: torch's CPU flash backward ran
// 2-3x slower in bf16 and f16 than in float32): the float32 one on its narrow operands widened (the logsumexp is
// float32 already, a boolean mask stays one), each gradient rounded once. Without the rule it stays as it is.
func.func @attention_backward(%g: tensor<2x4x8x16xbf16>, %q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x6x16xbf16>, %v: tensor<2x4x6x16xbf16>, %o: tensor<2x4x8x16xbf16>, %l: tensor<2x4x8xf32>, %m: tensor<2x1x8x6xbf16>, %b: tensor<2x1x1x6xi1>) -> (tensor<2x8x4x16xbf16>, tensor<2x6x4x16xbf16>, tensor<2x6x4x16xbf16>, tensor<2x4x8x16xbf16>) {
  %dq, %dk, %dv = tn.sdpa_backward %g, %q, %k, %v, %o, %l mask %m scale = 0.25 heads_last : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8xf32> mask tensor<2x1x8x6xbf16> -> tensor<2x8x4x16xbf16>, tensor<2x6x4x16xbf16>, tensor<2x6x4x16xbf16>
  %bq, %bk, %bv = tn.sdpa_backward %g, %q, %k, %v, %o, %l mask %b scale = 0.25 : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8xf32> mask tensor<2x1x1x6xi1> -> tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x16xbf16>
  func.return %dq, %dk, %dv, %bq : tensor<2x8x4x16xbf16>, tensor<2x6x4x16xbf16>, tensor<2x6x4x16xbf16>, tensor<2x4x8x16xbf16>
}
// CHECK-LABEL: func.func @attention_backward
// CHECK-NEXT:  tn.sdpa_backward %g, %q, %k, %v, %o, %l mask %m
// ATTN-LABEL: func.func @attention_backward
// ATTN-NEXT:  %[[G:.*]] = tn.convert %g : tensor<2x4x8x16xbf16> -> tensor<2x4x8x16xf32>
// ATTN-NEXT:  %[[Q:.*]] = tn.convert %q : tensor<2x4x8x16xbf16> -> tensor<2x4x8x16xf32>
// ATTN-NEXT:  %[[K:.*]] = tn.convert %k : tensor<2x4x6x16xbf16> -> tensor<2x4x6x16xf32>
// ATTN-NEXT:  %[[V:.*]] = tn.convert %v : tensor<2x4x6x16xbf16> -> tensor<2x4x6x16xf32>
// ATTN-NEXT:  %[[O:.*]] = tn.convert %o : tensor<2x4x8x16xbf16> -> tensor<2x4x8x16xf32>
// ATTN-NEXT:  %[[M:.*]] = tn.convert %m : tensor<2x1x8x6xbf16> -> tensor<2x1x8x6xf32>
// ATTN-NEXT:  %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = tn.sdpa_backward %[[G]], %[[Q]], %[[K]], %[[V]], %[[O]], %l mask %[[M]] scale = 2.500000e-01 heads_last : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> mask tensor<2x1x8x6xf32> -> tensor<2x8x4x16xf32>, tensor<2x6x4x16xf32>, tensor<2x6x4x16xf32>
// ATTN-NEXT:  %dq = tn.convert %[[DQ]] : tensor<2x8x4x16xf32> -> tensor<2x8x4x16xbf16>
// ATTN-NEXT:  %dk = tn.convert %[[DK]] : tensor<2x6x4x16xf32> -> tensor<2x6x4x16xbf16>
// ATTN-NEXT:  %dv = tn.convert %[[DV]] : tensor<2x6x4x16xf32> -> tensor<2x6x4x16xbf16>
// ATTN:       tn.sdpa_backward {{.*}} mask %b scale = 2.500000e-01 : tensor<2x4x8x16xf32>, {{.*}} mask tensor<2x1x1x6xi1> -> tensor<2x4x8x16xf32>
