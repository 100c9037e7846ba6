// RUN: irc-opt --split-input-file %s -p tensor-to-loop,simplify-loop,fuse-loops,simplify-loop,output-layout | filecheck %s
// A result eager returns column-major or channels-last (irc.output_layout on @main, set by the backend
// from eager's strides: dims outermost first) is computed in that layout: the nest's dims reordered,
// the result a view of it.

func.func @main(%x: tensor<3x5xf32>) -> tensor<5x3xf32> attributes {irc.output_layout = [[1, 0]]} {
  %t = tn.permute %x perm = [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>
  %r = tn.exp %t : tensor<5x3xf32>
  func.return %r : tensor<5x3xf32>
}
// exp(x.t()) is column-major in eager: the nest runs over (3, 5), reading x row by row.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[M:.*]] = loop.nest space = affine_map<() -> (3, 5)> iterators = ["parallel", "parallel"] : tensor<3x5xf32> {
// CHECK-NEXT:    loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<3x5xf32> -> f32
// CHECK-NEXT:    math.exp
// CHECK-NEXT:    loop.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  %r = loop.view %[[M]][affine_map<(d0, d1) -> (d1, d0)>] : tensor<3x5xf32> -> tensor<5x3xf32>
// CHECK-NEXT:  func.return %r : tensor<5x3xf32>

// -----
func.func @main(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> attributes {irc.output_layout = [[0, 2, 3, 1]]} {
  %r = tn.relu %x : tensor<2x3x4x5xf32>
  func.return %r : tensor<2x3x4x5xf32>
}
// Channels-last: the nest runs over (N, H, W, C).
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[M:.*]] = loop.nest space = affine_map<() -> (2, 4, 5, 3)>
// CHECK-NEXT:    loop.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>]
// CHECK:       %r = loop.view %[[M]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>] : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
// CHECK-NEXT:  func.return %r

// -----
func.func @main(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) attributes {irc.output_layout = [[0, 2, 3, 1], []]} {
  %r = tn.relu %x : tensor<2x3x4x5xf32>
  %s = tn.neg %x : tensor<2x3x4x5xf32>
  func.return %r, %s : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
}
// Results that fusion computes in one nest with other results keep its row-major order (the runtime
// then copies the channels-last one).
// CHECK-LABEL: func.func @main
// CHECK-NOT:   loop.view
// CHECK:       func.return

// -----
func.func @main(%x: tensor<2x6x4x8xf32>, %b: tensor<8xf32>) -> (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) attributes {irc.output_layout = [[0, 2, 1, 3], []]} {
  %y = tn.add %x, %b : tensor<2x6x4x8xf32>, tensor<8xf32> -> tensor<2x6x4x8xf32>
  %q = tn.permute %y perm = [0, 2, 1, 3] : tensor<2x6x4x8xf32> -> tensor<2x4x6x8xf32>
  %o = tn.sdpa %q, %q, %q scale = 0.25 : tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32> -> tensor<2x4x6x8xf32>
  func.return %q, %o : tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>
}
// A training forward's head split: returned in eager's layout and read by a library call (the attention), which
// takes the view as eager gives it; the nest writes the projection's rows as they lie.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[M:.*]] = loop.nest space = affine_map<() -> (2, 6, 4, 8)>
// CHECK:       %q = loop.view %[[M]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>] : tensor<2x6x4x8xf32> -> tensor<2x4x6x8xf32>
// CHECK-NEXT:  %o = tn.sdpa %q, %q, %q
// CHECK-NEXT:  func.return %q, %o

// -----
func.func @main(%x: tensor<2x6x4x8xf32>) -> (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) attributes {irc.output_layout = [[0, 2, 1, 3], []]} {
  %y = tn.exp %x : tensor<2x6x4x8xf32>
  %q = tn.permute %y perm = [0, 2, 1, 3] : tensor<2x6x4x8xf32> -> tensor<2x4x6x8xf32>
  %s = tn.sum %q dims = [3] : tensor<2x4x6x8xf32> -> tensor<2x4x6x1xf32>
  %r = tn.sub %q, %s : tensor<2x4x6x8xf32>, tensor<2x4x6x1xf32> -> tensor<2x4x6x8xf32>
  func.return %q, %r : tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>
}
// A result another kernel reads keeps the order that kernel was fused for (the runtime copies it into eager's).
// CHECK-LABEL: func.func @main
// CHECK-NOT:   loop.view
// CHECK:       func.return

// -----
func.func @main(%x: tensor<2x5x6x3xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<2x4x6x5xf32>, tensor<2x4x6x5xf32>) attributes {irc.output_layout = [[0, 1, 2, 3], []]} {
  %c = tn.convolution %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<2x5x6x3xf32>, tensor<4x3x3x3xf32> -> tensor<2x5x6x4xf32>
  %r = tn.permute %c perm = [0, 3, 2, 1] : tensor<2x5x6x4xf32> -> tensor<2x4x6x5xf32>
  func.return %r, %r : tensor<2x4x6x5xf32>, tensor<2x4x6x5xf32>
}
// A library call's result returned through a permuting view where eager's is row-major: a nest copies it (the
// emitter transposes in tiles; the runtime's torch copy was ~10x slower); a result of unknown layout ([]) is left.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[C:.*]] = tn.convolution
// CHECK-NEXT:  %[[V:.*]] = loop.view %[[C]][affine_map<(d0, d1, d2, d3) -> (d0, d3, d2, d1)>]
// CHECK-NEXT:  %[[N:.*]] = loop.nest space = affine_map<() -> (2, 4, 6, 5)> iterators = ["parallel", "parallel", "parallel", "parallel"] : tensor<2x4x6x5xf32> {
// CHECK-NEXT:    %{{.*}} = loop.load %[[C]][affine_map<(d0, d1, d2, d3) -> (d0, d3, d2, d1)>] : tensor<2x5x6x4xf32> -> f32
// CHECK-NEXT:    loop.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %[[N]], %[[V]]

// -----
func.func @main(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> attributes {irc.output_layout = [[0, 2, 3, 1]]} {
  %p = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x8x8xf32> -> tensor<2x8x8x3xf32>
  %m, %i = tn.max_pool2d %p kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] channels_last : tensor<2x8x8x3xf32> -> tensor<2x4x4x3xf32>, tensor<2x4x4x3xi64>
  %r = tn.permute %m perm = [0, 3, 1, 2] : tensor<2x4x4x3xf32> -> tensor<2x3x4x4xf32>
  func.return %r : tensor<2x3x4x4xf32>
}
// A channels-last pool returned channels-last: the pool's nest already computes (N, H, W, C), so the reordered copy
// of it would copy it in its own order. The result is a view of the pool's nest, with no copy.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[M:.*]] = loop.nest space = affine_map<() -> (2, 4, 9, 4, 3)>
// CHECK:         loop.reduce max
// CHECK:       %r = loop.view %[[M]][affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>] : tensor<2x4x4x3xf32> -> tensor<2x3x4x4xf32>
// CHECK-NEXT:  func.return %r

// -----
func.func @main(%x: tensor<2x3x8x8xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x4x4x3xf32>) attributes {irc.output_layout = [[0, 2, 3, 1], []]} {
  %p = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x8x8xf32> -> tensor<2x8x8x3xf32>
  %m, %i = tn.max_pool2d %p kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] channels_last : tensor<2x8x8x3xf32> -> tensor<2x4x4x3xf32>, tensor<2x4x4x3xi64>
  %r = tn.permute %m perm = [0, 3, 1, 2] : tensor<2x4x4x3xf32> -> tensor<2x3x4x4xf32>
  func.return %r, %m : tensor<2x3x4x4xf32>, tensor<2x4x4x3xf32>
}
// The pool's value is returned as well: the copy stays, so the two results are two buffers.
// CHECK-LABEL: func.func @main
// CHECK:       %[[N:.*]] = loop.nest space = affine_map<() -> (2, 4, 4, 3)> iterators = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-NEXT:    loop.load %m[affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NEXT:    loop.yield
// CHECK:       %r = loop.view %[[N]]
// CHECK-NEXT:  func.return %r, %m

// -----
// A channels-last int8 convolution's input quantized from an NCHW image: the quantize is computed NHWC, so oneDNN
// reads it dense (a permuted view of an NCHW buffer it would copy into channels-last every call).
func.func @main(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xi8>, %ws: tensor<4xf32>, %wz: tensor<4xi64>) -> tensor<2x8x8x4xui8> {
  %s = tn.constant dense<0.03> : tensor<f64> -> tensor<f64>
  %z = tn.constant dense<128> : tensor<i64> -> tensor<i64>
  %q = tn.quantize %x scale %s zero_point %z range = [0, 255] : tensor<2x3x8x8xf32>, tensor<f64>, tensor<i64> -> tensor<2x3x8x8xui8>
  %p = tn.permute %q perm = [0, 2, 3, 1] : tensor<2x3x8x8xui8> -> tensor<2x8x8x3xui8>
  %y = tn.qconv %p, %w, %ws, %wz x = (3.000000e-02 : f64, 128) out = (5.000000e-02 : f64, 0) post_op = "relu" stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<2x8x8x3xui8>, tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<2x8x8x4xui8>
  func.return %y : tensor<2x8x8x4xui8>
}
// CHECK-LABEL: func.func @main
// CHECK:       %[[Q:.*]] = loop.nest space = affine_map<() -> (2, 8, 8, 3)> iterators = ["parallel", "parallel", "parallel", "parallel"] : tensor<2x8x8x3xui8>
// CHECK-NEXT:    loop.load %x[affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>]
// CHECK-NOT:   loop.view
// CHECK:       %y = tn.qconv %[[Q]], %w, %ws, %wz
