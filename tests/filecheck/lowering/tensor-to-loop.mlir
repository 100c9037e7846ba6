// RUN: irc-opt --split-input-file %s -p tensor-to-loop | filecheck %s
// Each tn op becomes one loop.nest; externs (matmul, convolution, ops with no scalar form) stay tn ops.

func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = tn.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @add_broadcast
// CHECK:       %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xf32> {
// CHECK-NEXT:    %0 = loop.load %a[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
// CHECK-NEXT:    %1 = loop.load %b[affine_map<(d0, d1) -> (d1)>] : tensor<8xf32> -> f32
// CHECK-NEXT:    %2 = arith.addf %0, %1 : f32
// CHECK-NEXT:    loop.yield %2 : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r : tensor<4x8xf32>

// -----
func.func @mean(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.mean %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
// CHECK-LABEL: func.func @mean
// CHECK:       %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x1xf32> {
// CHECK-NEXT:    %0 = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
// CHECK-NEXT:    %1 = loop.reduce sum %0 : f32 -> f32
// CHECK-NEXT:    %2 = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:    %3 = arith.divf %1, %2 : f32
// CHECK-NEXT:    loop.yield %3 : f32

// -----
func.func @var(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.var %x dims = [1] correction = 1.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
// Two passes over each row in one nest: the mean, then the sum of squared deviations.
// CHECK-LABEL: func.func @var
// CHECK:       loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x1xf32>
// CHECK:         %[[X:.*]] = loop.load %x
// CHECK:         %[[S:.*]] = loop.reduce sum %[[X]] : f32 -> f32
// CHECK:         %[[MEAN:.*]] = arith.divf %[[S]], %{{.*}} : f32
// CHECK:         %[[D:.*]] = arith.subf %[[X]], %[[MEAN]] : f32
// CHECK:         %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK:         %[[SS:.*]] = loop.reduce sum %[[SQ]] : f32 -> f32
// CHECK:         %[[V:.*]] = arith.divf %[[SS]], %{{.*}} : f32
// CHECK-NEXT:    loop.yield %[[V]] : f32

// -----
func.func @argmax(%x: tensor<4x8xf32>) -> tensor<4x1xi64> {
  %r = tn.argmax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xi64>
  func.return %r : tensor<4x1xi64>
}
// CHECK-LABEL: func.func @argmax
// CHECK:         %1 = loop.reduce argmax %0 : f32 -> i64
// CHECK-NEXT:    loop.yield %1 : i64

// -----
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.softmax %x dim = 1 : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// tn.softmax is one nest: max, exp-sum and a product by the sum's reciprocal (one division a row, as eager's
// kernel) over the rows it reduces.
// CHECK-LABEL: func.func @softmax
// CHECK:       %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x8xf32> {
// CHECK-NEXT:    %0 = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
// CHECK-NEXT:    %1 = loop.reduce max %0 : f32 -> f32
// CHECK-NEXT:    %2 = arith.subf %0, %1 : f32
// CHECK-NEXT:    %3 = math.exp %2 : f32
// CHECK-NEXT:    %4 = loop.reduce sum %3 : f32 -> f32
// CHECK-NEXT:    %5 = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %6 = arith.divf %5, %4 : f32
// CHECK-NEXT:    %7 = arith.mulf %3, %6 : f32
// CHECK-NEXT:    loop.yield %7 : f32
// CHECK-NOT:   loop.nest

// -----
func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %r, %m, %s = tn.layer_norm %x weight %w bias %b axis = 1 eps = 1.0e-05 : tensor<4x8xf32> weight tensor<8xf32> bias tensor<8xf32> -> tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>
  func.return %r, %m, %s : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}
// One nest with three outputs: the normalised rows, and mean and rstd (reduced: size 1 along the reduction dim).
// CHECK-LABEL: func.func @layer_norm
// CHECK:       %r, %m, %s = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32> {
// CHECK:         math.rsqrt
// CHECK:         loop.load %w[affine_map<(d0, d1) -> (d1)>] : tensor<8xf32> -> f32
// CHECK:         loop.load %b[affine_map<(d0, d1) -> (d1)>] : tensor<8xf32> -> f32
// CHECK:         loop.yield %15, %3, %10 : f32, f32, f32

// -----
func.func @reshape(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %r = tn.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
  func.return %r : tensor<2x16xf32>
}
// A reshape is an index map (floordiv/mod within the group of dims it splits); no copy survives fusion.
// CHECK-LABEL: func.func @reshape
// CHECK:       loop.load %x[affine_map<(d0, d1) -> ((((d0 * 16) + d1) floordiv 8), (((d0 * 16) + d1) mod 8))>] : tensor<4x8xf32> -> f32

// -----
func.func @permute(%x: tensor<4x8x3xf32>) -> tensor<3x4x8xf32> {
  %r = tn.permute %x perm = [2, 0, 1] : tensor<4x8x3xf32> -> tensor<3x4x8xf32>
  func.return %r : tensor<3x4x8xf32>
}
// CHECK-LABEL: func.func @permute
// CHECK:       loop.nest space = affine_map<() -> (3, 4, 8)>
// CHECK-NEXT:    loop.load %x[affine_map<(d0, d1, d2) -> (d1, d2, d0)>] : tensor<4x8x3xf32> -> f32

// -----
func.func @cat(%a: tensor<2x8xf32>, %b: tensor<3x8xf32>) -> tensor<5x8xf32> {
  %r = tn.cat %a, %b dim = 0 : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<5x8xf32>
  func.return %r : tensor<5x8xf32>
}
// cat selects between loads under an index condition (the discarded load may be out of range: never a fault).
// CHECK-LABEL: func.func @cat
// CHECK:         %0 = loop.load %b[affine_map<(d0, d1) -> ((d0 + -2), d1)>] : tensor<3x8xf32> -> f32
// CHECK-NEXT:    %1 = loop.load %a[affine_map<(d0, d1) -> (d0, d1)>] : tensor<2x8xf32> -> f32
// CHECK-NEXT:    %2 = loop.index affine_map<(d0, d1) -> (d0)>
// CHECK-NEXT:    %3 = arith.constant 2 : index
// CHECK-NEXT:    %4 = arith.cmpi slt, %2, %3 : index
// CHECK-NEXT:    %5 = arith.select %4, %1, %0 : f32

// -----
func.func @embedding(%w: tensor<100x16xf32>, %i: tensor<2x5xi64>) -> tensor<2x5x16xf32> {
  %r = tn.embedding %w[%i] : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>
  func.return %r : tensor<2x5x16xf32>
}
// A gather loads through a data-dependent index: the map's extra dim d3 is the index operand. The indices are
// checked against the table's rows before the nest (eager's error when one is outside), and the nest reads them.
// CHECK-LABEL: func.func @embedding
// CHECK:       %checked = tn.check_index %i bound = 100 error = "IndexError" message = "index out of range in self" : tensor<2x5xi64>
// CHECK-NEXT:  %r = loop.nest
// CHECK-NEXT:    %0 = loop.load %checked[affine_map<(d0, d1, d2) -> (d0, d1)>] : tensor<2x5xi64> -> i64
// CHECK-NEXT:    %1 = arith.index_cast %0 : i64 to index
// CHECK-NEXT:    %2 = loop.load %w[affine_map<(d0, d1, d2, d3) -> (d3, d2)>] (%1) : tensor<100x16xf32> -> f32

// -----
func.func @index_dynamic(%x: tensor<?x6xf32>, %i: tensor<3xi64>) -> tensor<3x6xf32> {
  %r = tn.index %x[%i] dims = [0] : tensor<?x6xf32>[tensor<3xi64>] -> tensor<3x6xf32>
  func.return %r : tensor<3x6xf32>
}
// Advanced indexing accepts [-size, size) (`wrap`: the nest adds the size to a negative index); a `?` size is
// the check's `size` operand, the same tn.dim the nest's symbol is bound to.
// CHECK-LABEL: func.func @index_dynamic
// CHECK:       %dim = tn.dim %x dim = 0 : tensor<?x6xf32>
// CHECK-NEXT:  %checked = tn.check_index %i size %dim wrap error = "IndexError" message = "index {index} is out of bounds for dimension 0 with size {size}" : tensor<3xi64>
// CHECK-NEXT:  %r = loop.nest space = affine_map<()[s0] -> (3, 6)> symbols(%dim)
// CHECK-NEXT:    %0 = loop.load %checked[affine_map<(d0, d1)[s0] -> (d0)>] : tensor<3xi64> -> i64
// CHECK-NEXT:    %1 = loop.index affine_map<(d0, d1)[s0] -> (s0)>
// CHECK:         arith.cmpi slt, %0
// CHECK:         loop.load %x[affine_map<(d0, d1, d2)[s0] -> (d2, d1)>]

// -----
func.func @index_clamped(%w: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %lo = tn.constant dense<0> : tensor<i64> -> tensor<i64>
  %hi = tn.constant dense<9> : tensor<i64> -> tensor<i64>
  %a = tn.maximum %i, %lo : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
  %c = tn.minimum %a, %hi : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
  %r = tn.index %w[%c] dims = [0] : tensor<10x4xf32>[tensor<3xi64>] -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}
// An index its producers keep inside [0, 10) (a clamp) needs no check (lowering/index_range.py): the nest reads it.
// CHECK-LABEL: func.func @index_clamped
// CHECK-NOT:   tn.check_index
// CHECK:       %r = loop.nest

// -----
func.func @index_clamped_past_the_end(%w: tensor<10x4xf32>, %i: tensor<3xi64>, %k: tensor<3xi1>) -> tensor<3x4xf32> {
  %lo = tn.constant dense<0> : tensor<i64> -> tensor<i64>
  %hi = tn.constant dense<10> : tensor<i64> -> tensor<i64>
  %a = tn.maximum %i, %lo : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
  %c = tn.minimum %a, %hi : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
  %r = tn.index %w[%c] dims = [0] : tensor<10x4xf32>[tensor<3xi64>] -> tensor<3x4xf32>
  %b = tn.minimum %i, %hi : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
  %s = tn.index %w[%b] dims = [0] : tensor<10x4xf32>[tensor<3xi64>] -> tensor<3x4xf32>
  %t = tn.where %k, %c, %i : tensor<3xi1>, tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %u = tn.index %w[%t] dims = [0] : tensor<10x4xf32>[tensor<3xi64>] -> tensor<3x4xf32>
  %v = tn.add %r, %s : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %o = tn.add %v, %u : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  func.return %o : tensor<3x4xf32>
}
// Checks stay where a bound is not proven: a clamp to 10 (one past the end), a minimum with no floor (wrap still
// needs [-10, 10)), a where that may pick the unclamped index.
// CHECK-LABEL: func.func @index_clamped_past_the_end
// CHECK-COUNT-3: tn.check_index

// -----
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = tn.exp %x : tensor<?x8xf32>
  func.return %r : tensor<?x8xf32>
}
// A `?` extent is a symbol bound to an index value (here the input's size).
// CHECK-LABEL: func.func @dynamic
// CHECK:       %dim = tn.dim %x dim = 0 : tensor<?x8xf32>
// CHECK-NEXT:  %r = loop.nest space = affine_map<()[s0] -> (s0, 8)> symbols(%dim) iterators = ["parallel", "parallel"] : tensor<?x8xf32> {
// CHECK-NEXT:    loop.load %x[affine_map<(d0, d1)[s0] -> (d0, d1)>] : tensor<?x8xf32> -> f32

// -----
func.func @half(%x: tensor<4xf16>) -> tensor<4xf16> {
  %r = tn.tanh %x : tensor<4xf16>
  func.return %r : tensor<4xf16>
}
// f16 computes in f32: loads widen, the yield narrows (the op's own rounding: fuse-loops may skip it).
// CHECK-LABEL: func.func @half
// CHECK:         %1 = arith.extf %0 : f16 to f32
// CHECK-NEXT:    %2 = math.tanh %1 : f32
// CHECK-NEXT:    %3 = arith.truncf %2 {irc.op_rounding} : f32 to f16
// CHECK-NEXT:    loop.yield %3 : f16

// -----
func.func @externs(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x8xf32>) {
  %r = tn.mm %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %g = tn.lgamma %a : tensor<4x8xf32>
  func.return %r, %g : tensor<4x2xf32>, tensor<4x8xf32>
}
// Matmul stays a call of torch's kernel; an op with no arith/math form stays a tn op too.
// CHECK-LABEL: func.func @externs
// CHECK-NEXT:  %r = tn.mm %a, %b
// CHECK-NEXT:  %g = tn.lgamma %a
// CHECK-NOT:   loop.nest
// -----
func.func @max_pool(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>) {
  %r, %i = tn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
  func.return %r, %i : tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
}
// Pooling: the window is one reduction dim (kh = r floordiv 2, kw = r mod 2) between the output rows and columns,
// so a row's columns are the vector dim; indices come from argmax.
// CHECK-LABEL: func.func @max_pool
// CHECK:       %r, %i = loop.nest space = affine_map<() -> (1, 3, 4, 4, 4)> iterators = ["parallel", "parallel", "parallel", "reduction", "parallel"] : tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64> {
// CHECK-NEXT:    %0 = loop.load %x[affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, ((d2 * 2) + (d3 floordiv 2)), ((d4 * 2) + (d3 mod 2)))>] : tensor<1x3x8x8xf32> -> f32
// CHECK-NEXT:    %1 = loop.reduce max %0 : f32 -> f32
// CHECK-NEXT:    %2 = loop.reduce argmax %0 : f32 -> i64
// CHECK:         loop.yield %1, %{{.*}} : f32, i64

// -----
func.func @max_pool_channels_last(%x: tensor<1x8x8x3xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xi64>) {
  %r, %i = tn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] channels_last : tensor<1x8x8x3xf32> -> tensor<1x4x4x3xf32>, tensor<1x4x4x3xi64>
  func.return %r, %i : tensor<1x4x4x3xf32>, tensor<1x4x4x3xi64>
}
// Channels-last (NHWC) pooling: the space is (N, OH, window, OW, C), so the channels are the vector dim; the
// indices are the same h * W + w as NCHW's.
// CHECK-LABEL: func.func @max_pool_channels_last
// CHECK:       %r, %i = loop.nest space = affine_map<() -> (1, 4, 4, 4, 3)> iterators = ["parallel", "parallel", "reduction", "parallel", "parallel"] : tensor<1x4x4x3xf32>, tensor<1x4x4x3xi64> {
// CHECK-NEXT:    %0 = loop.load %x[affine_map<(d0, d1, d2, d3, d4) -> (d0, ((d1 * 2) + (d2 floordiv 2)), ((d3 * 2) + (d2 mod 2)), d4)>] : tensor<1x8x8x3xf32> -> f32
// CHECK:         arith.constant 8 : i64
// CHECK:         loop.yield %{{.*}}, %{{.*}} : f32, i64

// -----
// A train-mode batch norm of an NHWC value viewed as NCHW runs over (N, H, W, C): the channels innermost (a vector
// of them per step, not a gather along each channel's rows), the result viewed back as NCHW.
func.func @batch_norm_training_of_channels_last(%s: tensor<2x4x4x8xbf16>, %w: tensor<8xf32>, %b: tensor<8xf32>, %rm: tensor<8xf32>, %rv: tensor<8xf32>) -> (tensor<2x8x4x4xbf16>, tensor<8xf32>) {
  %x = tn.permute %s perm = [0, 3, 1, 2] : tensor<2x4x4x8xbf16> -> tensor<2x8x4x4xbf16>
  %y, %m, %r, %nm, %nv = tn.batch_norm_training %x weight %w bias %b stats %rm, %rv momentum = 1.000000e-01 eps = 1.000000e-05 : tensor<2x8x4x4xbf16> weight tensor<8xf32> bias tensor<8xf32> stats tensor<8xf32>, tensor<8xf32> -> tensor<2x8x4x4xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  func.return %y, %nm : tensor<2x8x4x4xbf16>, tensor<8xf32>
}
// CHECK-LABEL: func.func @batch_norm_training_of_channels_last
// CHECK:       %[[N:.*]], %{{.*}}, %{{.*}}, %[[RM:.*]], %{{.*}} = loop.nest space = affine_map<() -> (2, 4, 4, 8)> iterators = ["reduction", "reduction", "reduction", "parallel"] : tensor<2x4x4x8xbf16>, tensor<1x1x1x8xf32>
// CHECK-NEXT:    loop.load %s[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK:         loop.load %w[affine_map<(d0, d1, d2, d3) -> (d3)>]
// CHECK:       %y = loop.nest space = affine_map<() -> (2, 8, 4, 4)>
// CHECK-NEXT:    loop.load %[[N]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>]
