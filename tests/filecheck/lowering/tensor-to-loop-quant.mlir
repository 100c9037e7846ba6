// RUN: irc-opt --split-input-file %s -p tensor-to-loop | filecheck %s
// Dynamic quantization's parameters (tn.choose_qparams) as the nests fusion would make of their decomposition,
// built directly (lowering/lower_quant.py): determine_qparams' arithmetic in float32 as eager computes it.

func.func @small(%x: tensor<4x8xf32>) -> (tensor<1xf64>, tensor<1xi64>) {
  %s, %z = tn.choose_qparams %x range = [0, 255] eps = 2.44140625e-04 dtype = "uint8" : tensor<4x8xf32> -> tensor<1xf64>, tensor<1xi64>
  func.return %s, %z : tensor<1xf64>, tensor<1xi64>
}
// One nest reduces the whole tensor to its minimum and maximum and computes both parameters after it: the range
// widened to hold 0, divided (not multiplied by a reciprocal) by the integer range, at least eps (rounded to
// float32), the zero point rounded half to even, converted and clamped in int32; the results widened to f64, i64.
// CHECK-LABEL: func.func @small
// CHECK-NEXT:  %s, %z = loop.nest space = affine_map<() -> (4, 8)> iterators = ["reduction", "reduction"] : tensor<1xf64>, tensor<1xi64> {
// CHECK-NEXT:    %[[X:.*]] = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-NEXT:    %[[MN:.*]] = loop.reduce min %[[X]]
// CHECK-NEXT:    %[[MX:.*]] = loop.reduce max %[[X]]
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[LO:.*]] = arith.minimumf %[[MN]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[HI:.*]] = arith.maximumf %[[MX]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[W:.*]] = arith.subf %[[HI]], %[[LO]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.constant 2.550000e+02 : f32
// CHECK-NEXT:    %[[S0:.*]] = arith.divf %[[W]], %[[R]] : f32
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant 0.000244140625 : f32
// CHECK-NEXT:    %[[S:.*]] = arith.maximumf %[[S0]], %[[EPS]] : f32
// CHECK-NEXT:    %[[Q:.*]] = arith.divf %[[LO]], %[[S]] : f32
// CHECK-NEXT:    %[[RQ:.*]] = math.roundeven %[[Q]] : f32
// CHECK-NEXT:    %[[I:.*]] = arith.fptosi %[[RQ]] : f32 to i32
// CHECK-NEXT:    %[[QMIN:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[ZP:.*]] = arith.subi %[[QMIN]], %[[I]] : i32
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[ZL:.*]] = arith.maxsi %[[ZP]], %[[C0]] : i32
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 255 : i32
// CHECK-NEXT:    %[[ZC:.*]] = arith.minsi %[[ZL]], %[[C1]] : i32
// CHECK-NEXT:    %[[S64:.*]] = arith.extf %[[S]] : f32 to f64
// CHECK-NEXT:    %[[Z64:.*]] = arith.extsi %[[ZC]] : i32 to i64
// CHECK-NEXT:    loop.yield %[[S64]], %[[Z64]] : f64, i64
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %s, %z

// -----

func.func @large(%x: tensor<1x300x256xf32>) -> (tensor<1xf64>, tensor<1xi64>) {
  %s, %z = tn.choose_qparams %x range = [-128, 127] eps = 2.44140625e-04 dtype = "int8" : tensor<1x300x256xf32> -> tensor<1xf64>, tensor<1xi64>
  func.return %s, %z : tensor<1xf64>, tensor<1xi64>
}
// A large tensor (a transformer's activation, 76,800 elements) reduces its rows first, on every thread, then the
// rows' minima and maxima in the parameters' nest.
// CHECK-LABEL: func.func @large
// CHECK-NEXT:  %[[LOW:.*]], %[[HIGH:.*]] = loop.nest space = affine_map<() -> (1, 300, 256)> iterators = ["parallel", "parallel", "reduction"] : tensor<1x300x1xf32>, tensor<1x300x1xf32> {
// CHECK-NEXT:    %[[X:.*]] = loop.load %x
// CHECK-NEXT:    %[[MN:.*]] = loop.reduce min %[[X]]
// CHECK-NEXT:    %[[MX:.*]] = loop.reduce max %[[X]]
// CHECK-NEXT:    loop.yield %[[MN]], %[[MX]] : f32, f32
// CHECK-NEXT:  }
// CHECK-NEXT:  %s, %z = loop.nest space = affine_map<() -> (1, 300, 1)> iterators = ["reduction", "reduction", "reduction"] : tensor<1xf64>, tensor<1xi64> {
// CHECK-NEXT:    %[[A:.*]] = loop.load %[[LOW]]
// CHECK-NEXT:    %[[LO:.*]] = loop.reduce min %[[A]]
// CHECK-NEXT:    %[[B:.*]] = loop.load %[[HIGH]]
// CHECK-NEXT:    %[[HI:.*]] = loop.reduce max %[[B]]
// CHECK:         arith.constant 2.550000e+02 : f32
// CHECK:         arith.constant -128 : i32
// CHECK:         arith.constant 127 : i32
// CHECK:         loop.yield

// -----

func.func @dynamic(%x: tensor<?x8xf32>) -> (tensor<1xf64>, tensor<1xi64>) {
  %s, %z = tn.choose_qparams %x range = [0, 255] eps = 2.44140625e-04 dtype = "uint8" : tensor<?x8xf32> -> tensor<1xf64>, tensor<1xi64>
  func.return %s, %z : tensor<1xf64>, tensor<1xi64>
}
// A size known only at run time keeps the op (torch's own function, whose error an empty input gets).
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:  %s, %z = tn.choose_qparams %x

// -----

func.func @quantize_by_them(%x: tensor<4x8xf32>) -> tensor<4x8xui8> {
  %s, %z = tn.choose_qparams %x range = [0, 255] eps = 2.44140625e-04 dtype = "uint8" : tensor<4x8xf32> -> tensor<1xf64>, tensor<1xi64>
  %s0 = tn.reshape %s : tensor<1xf64> -> tensor<f64>
  %z0 = tn.reshape %z : tensor<1xi64> -> tensor<i64>
  %q = tn.quantize %x scale %s0 zero_point %z0 range = [0, 255] : tensor<4x8xf32>, tensor<f64>, tensor<i64> -> tensor<4x8xui8>
  func.return %q : tensor<4x8xui8>
}
// The quantize by those parameters, eager's decomposition in two nests: the 0-d multiplier f32(1.0 / double(scale))
// and zero point f32(zero_point) (fusion takes them into the parameters' nest), then the elementwise
// clamp(round(x * multiplier) + zero point) converted to uint8.
// CHECK-LABEL: func.func @quantize_by_them
// CHECK:       %[[M:.*]], %[[ZF:.*]] = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<f32>, tensor<f32> {
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %[[S:.*]] = loop.load %s0
// CHECK-NEXT:    %[[INV:.*]] = arith.divf %[[ONE]], %[[S]] : f64
// CHECK-NEXT:    %[[INV32:.*]] = arith.truncf %[[INV]] : f64 to f32
// CHECK-NEXT:    %[[Z:.*]] = loop.load %z0
// CHECK-NEXT:    %[[Z32:.*]] = arith.sitofp %[[Z]] : i64 to f32
// CHECK-NEXT:    loop.yield %[[INV32]], %[[Z32]] : f32, f32
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[Q:.*]] = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xui8> {
// CHECK-NEXT:    %[[X:.*]] = loop.load %x
// CHECK-NEXT:    %[[MUL:.*]] = loop.load %[[M]]
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[X]], %[[MUL]] : f32
// CHECK-NEXT:    %[[R:.*]] = math.roundeven %[[P]] : f32
// CHECK-NEXT:    %[[ZP:.*]] = loop.load %[[ZF]]
// CHECK-NEXT:    %[[A:.*]] = arith.addf %[[R]], %[[ZP]] : f32
// CHECK-NEXT:    %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[C:.*]] = arith.maximumf %[[A]], %[[LO]] : f32
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 2.550000e+02 : f32
// CHECK-NEXT:    %[[D:.*]] = arith.minimumf %[[C]], %[[HI]] : f32
// CHECK-NEXT:    %[[I:.*]] = arith.fptosi %[[D]] : f32 to i16
// CHECK-NEXT:    %[[U:.*]] = arith.trunci %[[I]] : i16 to ui8
// CHECK-NEXT:    loop.yield %[[U]] : ui8
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %[[Q]]
