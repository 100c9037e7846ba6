// RUN: irc-opt --split-input-file %s -p "tensor-to-loop,simplify-loop,fuse-loops,fold-bias{every=true}" | filecheck %s
// RUN: irc-opt --split-input-file %s -p tensor-to-loop,simplify-loop,fuse-loops,fold-bias | filecheck %s --check-prefix=NONE
// A product's bias add that no kernel joined becomes part of the library call: tn.addmm (the CPU target's rule
// picks which products: its oneDNN ones, targets/cpu/target.py biased_products).

func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %y = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r = tn.add %y, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[R:.*]] = tn.addmm %x, %w bias %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[R]]
// NONE-LABEL: func.func @main
// NONE:       tn.mm %x, %w
// NONE:       loop.nest
// NONE-NOT:   tn.addmm

// -----
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %y = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r = tn.add %b, %y : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %s = tn.relu %r : tensor<4x16xf32>
  func.return %s : tensor<4x16xf32>
}
// A nest that does more than add the bias (here a relu: oneDNN's maps NaN to 0, eager's keeps it) stays a kernel.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[P:.*]] = tn.mm %x, %w
// CHECK-NEXT:  loop.nest
// CHECK-NOT:   tn.addmm

// -----
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %y = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r = tn.add %y, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %r, %y : tensor<4x16xf32>, tensor<4x16xf32>
}
// The product without its bias is also returned: both stay.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[P:.*]] = tn.mm %x, %w
// CHECK-NEXT:  loop.nest
// CHECK-NOT:   tn.addmm

// -----
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<4x1xf32>) -> tensor<4x16xf32> {
  %y = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r = tn.add %y, %b : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// A bias per row is not a linear layer's: it stays a kernel.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[P:.*]] = tn.mm %x, %w
// CHECK-NEXT:  loop.nest
// CHECK-NOT:   tn.addmm

// -----
func.func @main(%x: tensor<12x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x3x16xf32> {
  %y = tn.mm %x, %w : tensor<12x8xf32>, tensor<8x16xf32> -> tensor<12x16xf32>
  %y3 = tn.reshape %y : tensor<12x16xf32> -> tensor<4x3x16xf32>
  %r = tn.add %y3, %b : tensor<4x3x16xf32>, tensor<16xf32> -> tensor<4x3x16xf32>
  %g = tn.gelu %r approximate = "none" : tensor<4x3x16xf32>
  func.return %g : tensor<4x3x16xf32>
}
// A gelu after the bias, over the product's rows split in two dims (a transformer's feed-forward): the gelu is the
// library call's epilogue, and the nest's shape a reshape of its result.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[R:.*]] = tn.addmm %x, %w bias %b epilogue "gelu" : tensor<12x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<12x16xf32>
// CHECK-NEXT:  %[[G:.*]] = tn.reshape %[[R]] : tensor<12x16xf32> -> tensor<4x3x16xf32>
// CHECK-NEXT:  func.return %[[G]]

// -----
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %y = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r = tn.add %b, %y : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %g = tn.gelu %r approximate = "tanh" : tensor<4x16xf32>
  func.return %g : tensor<4x16xf32>
}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[R:.*]] = tn.addmm %x, %w bias %b epilogue "gelu_tanh" : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[R]]

// -----
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %y = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r = tn.add %y, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %s = tn.sigmoid %r : tensor<4x16xf32>
  %g = tn.mul %r, %s : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %g : tensor<4x16xf32>
}
// silu is no epilogue tn.addmm has: the nest stays a kernel.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[P:.*]] = tn.mm %x, %w
// CHECK-NEXT:  loop.nest
// CHECK-NOT:   tn.addmm

// -----

// A bf16 linear layer is one tn.addmm from the importer; the gelu after it (widened, applied, rounded) joins it as
// its epilogue: oneDNN's gelu of the float32 sum, one rounding. A relu does not (oneDNN's maps NaN to 0).
func.func @narrow_gelu(%x: tensor<6x8xbf16>, %w: tensor<8x16xbf16>, %b: tensor<16xbf16>, %c: tensor<16xbf16>) -> (tensor<2x3x16xbf16>, tensor<6x16xbf16>) {
  %y = tn.addmm %x, %w bias %b : tensor<6x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<6x16xbf16>
  %v = tn.reshape %y : tensor<6x16xbf16> -> tensor<2x3x16xbf16>
  %g = tn.gelu %v approximate = "tanh" : tensor<2x3x16xbf16>
  %z = tn.addmm %x, %w bias %c : tensor<6x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<6x16xbf16>
  %r = tn.relu %z : tensor<6x16xbf16>
  func.return %g, %r : tensor<2x3x16xbf16>, tensor<6x16xbf16>
}
// CHECK-LABEL: func.func @narrow_gelu
// CHECK:         %[[G:.*]] = tn.addmm %x, %w bias %b epilogue "gelu_tanh" : tensor<6x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<6x16xbf16>
// CHECK-NEXT:    %[[V:.*]] = tn.reshape %[[G]] : tensor<6x16xbf16> -> tensor<2x3x16xbf16>
// CHECK-NEXT:    %[[Z:.*]] = tn.addmm %x, %w bias %c : tensor<6x8xbf16>
// CHECK-NEXT:    loop.nest
// CHECK:         arith.maximumf
// NONE-LABEL: func.func @narrow_gelu
// NONE-NOT:      epilogue

// -----

// GPT-2's gelu written out under bf16 autocast (NewGELUActivation: bf16 ops, each widened and rounded, the roundings
// between them dropped as fusion computes wide): one nest that widens the product once for each reader, the same
// gelu_tanh, so it joins the product too.
func.func @written_out_gelu_tanh(%x: tensor<6x8xbf16>, %w: tensor<8x16xbf16>, %b: tensor<16xbf16>) -> tensor<2x3x16xbf16> {
  %y = tn.addmm %x, %w bias %b : tensor<6x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<6x16xbf16>
  %v = tn.reshape %y : tensor<6x16xbf16> -> tensor<2x3x16xbf16>
  %e = tn.convert %v : tensor<2x3x16xbf16> -> tensor<2x3x16xf32>
  %half = tn.constant dense<5.000000e-01> : tensor<f32> -> tensor<f32>
  %h32 = tn.mul %e, %half : tensor<2x3x16xf32>, tensor<f32> -> tensor<2x3x16xf32>
  %h = tn.convert %h32 {irc.op_rounding} : tensor<2x3x16xf32> -> tensor<2x3x16xbf16>
  %sq = tn.mul %v, %v : tensor<2x3x16xbf16>, tensor<2x3x16xbf16> -> tensor<2x3x16xbf16>
  %cu = tn.mul %sq, %v : tensor<2x3x16xbf16>, tensor<2x3x16xbf16> -> tensor<2x3x16xbf16>
  %cu32 = tn.convert %cu : tensor<2x3x16xbf16> -> tensor<2x3x16xf32>
  %k = tn.constant dense<4.471500e-02> : tensor<f32> -> tensor<f32>
  %kc32 = tn.mul %cu32, %k : tensor<2x3x16xf32>, tensor<f32> -> tensor<2x3x16xf32>
  %kc = tn.convert %kc32 {irc.op_rounding} : tensor<2x3x16xf32> -> tensor<2x3x16xbf16>
  %s = tn.add %v, %kc : tensor<2x3x16xbf16>, tensor<2x3x16xbf16> -> tensor<2x3x16xbf16>
  %s32 = tn.convert %s : tensor<2x3x16xbf16> -> tensor<2x3x16xf32>
  %c = tn.constant dense<0.797884583> : tensor<f32> -> tensor<f32>
  %u32 = tn.mul %s32, %c : tensor<2x3x16xf32>, tensor<f32> -> tensor<2x3x16xf32>
  %u = tn.convert %u32 {irc.op_rounding} : tensor<2x3x16xf32> -> tensor<2x3x16xbf16>
  %t = tn.tanh %u : tensor<2x3x16xbf16>
  %one = tn.constant dense<1.000000e+00> : tensor<bf16> -> tensor<bf16>
  %p = tn.add %t, %one : tensor<2x3x16xbf16>, tensor<bf16> -> tensor<2x3x16xbf16>
  %g = tn.mul %h, %p : tensor<2x3x16xbf16>, tensor<2x3x16xbf16> -> tensor<2x3x16xbf16>
  func.return %g : tensor<2x3x16xbf16>
}
// CHECK-LABEL: func.func @written_out_gelu_tanh
// CHECK-NEXT:    %[[G:.*]] = tn.addmm %x, %w bias %b epilogue "gelu_tanh" : tensor<6x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<6x16xbf16>
// CHECK-NEXT:    %[[V:.*]] = tn.reshape %[[G]] : tensor<6x16xbf16> -> tensor<2x3x16xbf16>
// CHECK-NEXT:    func.return %[[V]]
// NONE-LABEL: func.func @written_out_gelu_tanh
// NONE-NOT:      epilogue
