// RUN: irc-opt --split-input-file %s -p tensor-to-loop,fuse-loops,simplify-loop | filecheck %s
// A fused chain of bf16/f16 ops keeps its intermediates in float32 and rounds once, at its store: an op's own
// rounding (its truncf, marked irc.op_rounding) widened back by the next op is skipped. The program's casts
// (tn.convert without the mark) still round, and a widened value that is stored keeps the rounded value.

func.func @chain(%x: tensor<16xbf16>, %y: tensor<16xbf16>) -> tensor<16xbf16> {
  %r = tn.reciprocal %x : tensor<16xbf16>
  %m = tn.mul %r, %y : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
  func.return %m : tensor<16xbf16>
}
// CHECK-LABEL: func.func @chain
// CHECK:         %{{.*}} = arith.divf
// CHECK-NOT:     arith.truncf
// CHECK:         %[[M:.*]] = arith.mulf
// CHECK-NEXT:    %[[R:.*]] = arith.truncf %[[M]] {irc.op_rounding} : f32 to bf16
// CHECK-NEXT:    loop.yield %[[R]] : bf16

// -----

func.func @cast(%x: tensor<16xf32>) -> tensor<16xf32> {
  %n = tn.convert %x : tensor<16xf32> -> tensor<16xbf16>
  %w = tn.convert %n : tensor<16xbf16> -> tensor<16xf32>
  %e = tn.exp %w : tensor<16xf32>
  func.return %e : tensor<16xf32>
}
// CHECK-LABEL: func.func @cast
// CHECK:         %[[N:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[N]] : bf16 to f32
// CHECK-NEXT:    math.exp %[[W]]

// -----

func.func @stored(%x: tensor<16xbf16>) -> (tensor<16xf32>, tensor<16xf32>) {
  %n = tn.neg %x : tensor<16xbf16>
  %w = tn.convert %n : tensor<16xbf16> -> tensor<16xf32>
  %e = tn.exp %w : tensor<16xf32>
  func.return %w, %e : tensor<16xf32>, tensor<16xf32>
}
// CHECK-LABEL: func.func @stored
// CHECK:         %[[NEG:.*]] = arith.negf
// CHECK-NEXT:    %[[N:.*]] = arith.truncf %[[NEG]] {irc.op_rounding} : f32 to bf16
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[N]] : bf16 to f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:    loop.yield %[[E]], %[[W]] : f32, f32
