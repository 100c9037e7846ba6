// RUN: irc-opt --split-input-file %s -p tensor-to-loop,fuse-loops | filecheck %s
// Fusion rules: vertical (pointwise chains, prologues into reductions, reduction epilogues), sibling, kept
// producers, output reshapes; refusals are attached to the consumer as irc.unfused with their reasons.

func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = tn.constant dense<2.0> : tensor<f32> -> tensor<f32>
  %one = tn.constant dense<1.0> : tensor<f32> -> tensor<f32>
  %a = tn.mul %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %b = tn.add %a, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %c = tn.relu %b : tensor<4x8xf32>
  %d = tn.sigmoid %x : tensor<4x8xf32>
  %e = tn.mul %c, %d : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %r = tn.tanh %e : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// The issue's chain ((x * 2 + 1).relu() * x.sigmoid()).tanh() is one nest.
// CHECK-LABEL: func.func @chain
// CHECK:       %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xf32> {
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CHECK:         arith.maximumf
// CHECK:         math.exp
// CHECK:         arith.divf
// CHECK:         arith.mulf
// CHECK:         math.tanh
// CHECK-NEXT:    loop.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r

// -----
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tn.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = tn.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %e = tn.exp %d : tensor<4x8xf32>
  %s = tn.sum %e dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %r = tn.div %e, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// Decomposed softmax (amax, sub, exp, sum, div): one nest, two reductions and the epilogue.
// CHECK-LABEL: func.func @softmax
// CHECK:       %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x8xf32> {
// CHECK:         loop.reduce max
// CHECK:         math.exp
// CHECK:         loop.reduce sum
// CHECK:         arith.divf
// CHECK-NEXT:    loop.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r

// -----
func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tn.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = tn.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %e = tn.exp %d : tensor<4x8xf32>
  %s = tn.sum %e dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %l = tn.log %s : tensor<4x1xf32>
  %r = tn.sub %d, %l : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @log_softmax
// CHECK:       %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x8xf32> {
// CHECK:         loop.reduce max
// CHECK:         loop.reduce sum
// CHECK:         math.log
// CHECK:         arith.subf
// CHECK-NEXT:    loop.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r

// -----
func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %eps = tn.constant dense<1.0e-05> : tensor<f32> -> tensor<f32>
  %mean = tn.mean %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = tn.sub %x, %mean : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %var = tn.var %x dims = [1] correction = 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  %ve = tn.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %rstd = tn.rsqrt %ve : tensor<4x1xf32>
  %n = tn.mul %d, %rstd : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %y = tn.mul %n, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %r = tn.add %y, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// Decomposed layer norm (mean, centring, variance, rsqrt, affine): one nest.
// CHECK-LABEL: func.func @layer_norm
// CHECK:       %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x8xf32> {
// CHECK:         loop.reduce sum
// CHECK:         math.rsqrt
// CHECK:         loop.load %w
// CHECK:         loop.load %b
// CHECK:         loop.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r

// -----
func.func @linear_bias_relu(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %wt = tn.permute %w perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %mm = tn.mm %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = tn.add %mm, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = tn.relu %y : tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
// Linear + bias + ReLU: the matmul stays an extern and its epilogue (bias, ReLU) is one nest after it.
// (The transpose of the weight is a copy here; simplify-loop makes it a view, see simplify-loop.mlir.)
// CHECK-LABEL: func.func @linear_bias_relu
// CHECK:       %mm = tn.mm %x, %wt
// CHECK-NEXT:  %r = loop.nest space = affine_map<() -> (4, 16)> iterators = ["parallel", "parallel"] attributes {irc.unfused = ["producer tn.mm@1: producer is an extern (tn.mm)"]} : tensor<4x16xf32> {
// CHECK-NEXT:    loop.load %mm[affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-NEXT:    loop.load %b[affine_map<(d0, d1) -> (d1)>]
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    arith.maximumf
// CHECK-NEXT:    loop.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r

// -----
func.func @keep_producer(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %y = tn.exp %x : tensor<4x8xf32>
  %z = tn.add %y, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
}
// A producer with another user (here the function's result) becomes an extra output of the fused nest.
// CHECK-LABEL: func.func @keep_producer
// CHECK:       %z, %y = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xf32>, tensor<4x8xf32> {
// CHECK-NOT:   loop.nest
// CHECK:       func.return %y, %z

// -----
func.func @siblings(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = tn.sin %x : tensor<4x8xf32>
  %c = tn.cos %x : tensor<4x8xf32>
  func.return %s, %c : tensor<4x8xf32>, tensor<4x8xf32>
}
// Two nests reading the same input over the same space: one nest with two outputs.
// CHECK-LABEL: func.func @siblings
// CHECK:       %s, %c = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xf32>, tensor<4x8xf32> {
// CHECK:         math.sin
// CHECK:         math.cos
// CHECK-NOT:   loop.nest
// CHECK:       func.return %s, %c

// -----
func.func @epilogue(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = tn.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %q = tn.squeeze %s dims = [1] : tensor<4x1xf32> -> tensor<4xf32>
  %r = tn.sqrt %q : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// The squeeze is absorbed into the reduction's output shape, then sqrt runs over the reduced space inside it.
// CHECK-LABEL: func.func @epilogue
// CHECK:       %q, %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4xf32>, tensor<4xf32> {
// CHECK-NEXT:    %0 = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
// CHECK-NEXT:    %1 = loop.reduce sum %0 : f32 -> f32
// CHECK-NEXT:    %2 = math.sqrt %1 : f32
// CHECK-NEXT:    loop.yield %1, %2 : f32, f32
// CHECK-NOT:   loop.nest

// -----
func.func @prologue(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %e = tn.exp %x : tensor<4x8xf32>
  %s = tn.sum %e dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}
// A pointwise producer runs inside the reduction that consumes it.
// CHECK-LABEL: func.func @prologue
// CHECK:       %s = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x1xf32> {
// CHECK-NEXT:    %0 = loop.load %x
// CHECK-NEXT:    %1 = math.exp %0 : f32
// CHECK-NEXT:    %2 = loop.reduce sum %1 : f32 -> f32
// CHECK-NOT:   loop.nest

// -----
func.func @refuse_recompute_reduction(%x: tensor<4x8xf32>, %w: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %s = tn.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %u = tn.mm %s, %w : tensor<4x1xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %d = tn.div %x, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %r = tn.add %d, %u : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// The sum feeds a matmul that the consumer also reads: keeping the sum as an output of the fused nest would
// make a cycle, and recomputing a reduction is refused. The refusal is recorded on the consumer.
// CHECK-LABEL: func.func @refuse_recompute_reduction
// CHECK:       %d, %s = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"]
// CHECK:       %u = tn.mm %s, %w
// CHECK:       %r = loop.nest {{.*}} attributes {irc.unfused = ["producer loop.nest@0: would recompute a reduction 1 more time(s)", "producer tn.mm@1: producer is an extern (tn.mm)"]}

// -----
func.func @refuse_sibling_reductions(%x: tensor<4x8xf32>) -> (tensor<1x8xf32>, tensor<4x1xf32>) {
  %a = tn.sum %x dims = [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  %b = tn.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %a, %b : tensor<1x8xf32>, tensor<4x1xf32>
}
// Siblings reducing different dims cannot share one nest.
// CHECK-LABEL: func.func @refuse_sibling_reductions
// CHECK:       %a = loop.nest space = affine_map<() -> (4, 8)> iterators = ["reduction", "parallel"]
// CHECK:       %b = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] attributes {irc.unfused = ["sibling loop.nest@0: different reduction dims"]}

// -----
func.func @scalar_bookkeeping(%s1: tensor<f32>, %s2: tensor<f32>, %p1: tensor<4x8xf32>, %p2: tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %one = tn.constant dense<1.0> : tensor<f32> -> tensor<f32>
  %t1 = tn.add %s1, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  %c1 = tn.sqrt %t1 : tensor<f32>
  %u1 = tn.mul %p1, %c1 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %t2 = tn.add %s2, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  %c2 = tn.sqrt %t2 : tensor<f32>
  %u2 = tn.mul %p2, %c2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return %t1, %t2, %u1, %u2 : tensor<f32>, tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
}
// An optimizer's per-parameter step counts and bias corrections: the 0-d nests that read only arguments and each
// other are merged first, in one pass and in block order, into one nest that yields what others read (a load of
// an earlier member becomes its value). The tensor updates then take it in as any producer.
// CHECK-LABEL: func.func @scalar_bookkeeping
// CHECK:       %t1, %c1, %t2, %c2 = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32> {
// CHECK-NEXT:    %0 = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %1 = loop.load %s1[affine_map<() -> ()>]
// CHECK-NEXT:    %2 = arith.addf %1, %0 : f32
// CHECK-NEXT:    %3 = math.sqrt %2 : f32
// CHECK-NEXT:    %4 = loop.load %s2[affine_map<() -> ()>]
// CHECK-NEXT:    %5 = arith.addf %4, %0 : f32
// CHECK-NEXT:    %6 = math.sqrt %5 : f32
// CHECK-NEXT:    loop.yield %2, %3, %5, %6 : f32, f32, f32, f32
// CHECK:       %u1, %u2 = loop.nest space = affine_map<() -> (4, 8)>
// CHECK-NOT:   affine_map<() -> ()> iterators
// CHECK:       func.return %t1, %t2, %u1, %u2

// -----

// A reshape by size-1 dims read by several nests (a library result viewed as (batch, tokens, features), then
// choose_qparams' row min and max and a pointwise op): each reads the input in place, the same addresses in the
// same order, so no reader keeps the copy as an extra result, and the readers fuse into one pass.
func.func @unit_reshape_read_by_three(%x: tensor<128x64xf32>) -> (tensor<1x128x1xf32>, tensor<1x128x1xf32>, tensor<1x128x64xf32>) {
  %v = tn.reshape %x : tensor<128x64xf32> -> tensor<1x128x64xf32>
  %lo = tn.amin %v dims = [2] : tensor<1x128x64xf32> -> tensor<1x128x1xf32>
  %hi = tn.amax %v dims = [2] : tensor<1x128x64xf32> -> tensor<1x128x1xf32>
  %r = tn.relu %v : tensor<1x128x64xf32>
  func.return %lo, %hi, %r : tensor<1x128x1xf32>, tensor<1x128x1xf32>, tensor<1x128x64xf32>
}
// CHECK-LABEL: func.func @unit_reshape_read_by_three
// CHECK-NEXT:  %lo, %hi, %r = loop.nest space = affine_map<() -> (1, 128, 64)>
// CHECK-NOT:   loop.nest
// CHECK:       func.return %lo, %hi, %r

// -----
func.func @whole_min_max_over_a_unit_dim(%x: tensor<1x16x64xf32>) -> tensor<f32> {
  %lo3 = tn.amin %x dims = [0, 1, 2] : tensor<1x16x64xf32> -> tensor<1x1x1xf32>
  %lo = tn.reshape %lo3 : tensor<1x1x1xf32> -> tensor<f32>
  %hi3 = tn.amax %x dims = [0, 1, 2] : tensor<1x16x64xf32> -> tensor<1x1x1xf32>
  %hi = tn.reshape %hi3 : tensor<1x1x1xf32> -> tensor<f32>
  %r = tn.sub %hi, %lo : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return %r : tensor<f32>
}
// Dynamic quantization's range of a (1, tokens, features) activation: the min and the max over the whole tensor,
// read as scalars after their reductions, are one nest with both reductions (the unit dim is reduced like the others).
// CHECK-LABEL: func.func @whole_min_max_over_a_unit_dim
// CHECK:       loop.nest space = affine_map<() -> (1, 16, 64)> iterators = ["reduction", "reduction", "reduction"]
// CHECK:         %[[HI:.*]] = loop.reduce max
// CHECK:         %[[LO:.*]] = loop.reduce min
// CHECK-NEXT:    %[[R:.*]] = arith.subf %[[HI]], %[[LO]] : f32
// CHECK-NOT:   loop.nest
// CHECK:       func.return

// -----
func.func @layer_norm_kept_beside_its_rows_range(%x: tensor<1x4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %y, %m, %r = tn.layer_norm %x weight %w bias %b axis = 2 eps = 1.000000e-05 : tensor<1x4x8xf32> weight tensor<8xf32> bias tensor<8xf32> -> tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>
  %lo = tn.amin %y dims = [2] : tensor<1x4x8xf32> -> tensor<1x4x1xf32>
  %s = tn.amin %lo dims = [0, 1, 2] : tensor<1x4x1xf32> -> tensor<1x1x1xf32>
  %q = tn.sub %y, %s : tensor<1x4x8xf32>, tensor<1x1x1xf32> -> tensor<1x4x8xf32>
  %z = tn.add %y, %x : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  func.return %q, %z : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}
// A layer norm over (1, tokens, features) whose rows' minimum is read (dynamic quantization's range) while its
// output is also read after that minimum's use: the layer norm joins the rows' reduction and keeps its output, its
// sums computed once. The read at (0, l, n) and the kept output at (d0, l, n) are one point (d0 has extent 1).
// CHECK-LABEL: func.func @layer_norm_kept_beside_its_rows_range
// CHECK:       %z, %lo, %y, %m, %r = loop.nest space = affine_map<() -> (1, 4, 8)> iterators = ["parallel", "parallel", "reduction"]
// CHECK-COUNT-2: loop.reduce sum
// CHECK-NOT:     loop.reduce sum
// CHECK:         loop.reduce min
// CHECK-NOT:     loop.reduce sum
// CHECK:         loop.yield
