// RUN: irc-opt --split-input-file %s -p fold-permutes,dce | filecheck %s
// Layout conversions that cancel: a permute of a permute composes, and the identity permute is its input;
// a max pool of an NHWC value pools it as such; an attention whose heads are merged gives them after its rows.

func.func @pair_cancels(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %a = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %b = tn.permute %a perm = [0, 3, 1, 2] : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  func.return %b : tensor<2x3x4x5xf32>
}
// NCHW -> NHWC -> NCHW is no conversion at all.
// CHECK-LABEL: func.func @pair_cancels
// CHECK-NEXT:  func.return %x : tensor<2x3x4x5xf32>

// -----
func.func @compose(%x: tensor<2x3x4x5xf32>) -> tensor<5x4x3x2xf32> {
  %a = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %b = tn.permute %a perm = [2, 1, 3, 0] : tensor<2x4x5x3xf32> -> tensor<5x4x3x2xf32>
  func.return %b : tensor<5x4x3x2xf32>
}
// Two permutes that do not cancel become one: result dim i is x's dim p[q[i]].
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:  %b = tn.permute %x perm = [3, 2, 1, 0] : tensor<2x3x4x5xf32> -> tensor<5x4x3x2xf32>
// CHECK-NEXT:  func.return %b

// -----
func.func @identity(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %a = tn.permute %x perm = [0, 1] : tensor<?x3xf32> -> tensor<?x3xf32>
  func.return %a : tensor<?x3xf32>
}
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:  func.return %x : tensor<?x3xf32>

// -----
func.func @shared_inner(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x4x5x3xf32>) {
  %a = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %b = tn.permute %a perm = [0, 3, 1, 2] : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  func.return %b, %a : tensor<2x3x4x5xf32>, tensor<2x4x5x3xf32>
}
// The inner permute stays while something else reads it.
// CHECK-LABEL: func.func @shared_inner
// CHECK-NEXT:  %a = tn.permute %x perm = [0, 2, 3, 1]
// CHECK-NEXT:  func.return %x, %a

// -----
func.func @max_pool_of_nhwc(%x: tensor<2x9x9x4xf32>) -> (tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>) {
  %a = tn.permute %x perm = [0, 3, 1, 2] : tensor<2x9x9x4xf32> -> tensor<2x4x9x9xf32>
  %p, %i = tn.max_pool2d %a kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>
  func.return %p, %i : tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>
}
// A max pool of an NHWC value pools it channels-last; the conversion moves below it, to both results.
// CHECK-LABEL: func.func @max_pool_of_nhwc
// CHECK-NEXT:  %[[P:.*]], %[[I:.*]] = tn.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] channels_last : tensor<2x9x9x4xf32> -> tensor<2x5x5x4xf32>, tensor<2x5x5x4xi64>
// CHECK-NEXT:  %[[PN:.*]] = tn.permute %[[P]] perm = [0, 3, 1, 2] : tensor<2x5x5x4xf32> -> tensor<2x4x5x5xf32>
// CHECK-NEXT:  %[[IN:.*]] = tn.permute %[[I]] perm = [0, 3, 1, 2] : tensor<2x5x5x4xi64> -> tensor<2x4x5x5xi64>
// CHECK-NEXT:  func.return %[[PN]], %[[IN]]

// -----
func.func @attention_heads_last(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x16xf32>, %m: tensor<2x1x1x6xi1>) -> tensor<16x64xf32> {
  %o = tn.sdpa %q, %k, %v mask %m scale = 0.25 causal : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<2x1x1x6xi1> -> tensor<2x4x8x16xf32>
  %t = tn.permute %o perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %r = tn.reshape %t : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
  func.return %r : tensor<16x64xf32>
}
// The head merge reads the attention heads after rows: the attention gives that layout itself (torch's flash
// kernel writes it), and the reshape reads it as it lies.
// CHECK-LABEL: func.func @attention_heads_last
// CHECK-NEXT:  %[[O:.*]] = tn.sdpa %q, %k, %v mask %m scale = 2.500000e-01 causal heads_last : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<2x1x1x6xi1> -> tensor<2x8x4x16xf32>
// CHECK-NEXT:  %r = tn.reshape %[[O]] : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
// CHECK-NEXT:  func.return %r

// -----
func.func @attention_read_twice(%q: tensor<2x4x8x16xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x4x8x16xf32>) {
  %o = tn.sdpa %q, %q, %q scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %t = tn.permute %o perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  func.return %t, %o : tensor<2x8x4x16xf32>, tensor<2x4x8x16xf32>
}
// Something else reads the attention in its own layout: one attention, its permute stays.
// CHECK-LABEL: func.func @attention_read_twice
// CHECK-NEXT:  %o = tn.sdpa %q, %q, %q scale = 2.500000e-01 : {{.*}} -> tensor<2x4x8x16xf32>
// CHECK-NEXT:  %t = tn.permute %o perm = [0, 2, 1, 3]

// -----
func.func @attention_other_permute(%q: tensor<2x4x8x16xf32>) -> tensor<4x2x8x16xf32> {
  %o = tn.sdpa %q, %q, %q scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %t = tn.permute %o perm = [1, 0, 2, 3] : tensor<2x4x8x16xf32> -> tensor<4x2x8x16xf32>
  func.return %t : tensor<4x2x8x16xf32>
}
// Only heads after rows is the flash kernel's layout.
// CHECK-LABEL: func.func @attention_other_permute
// CHECK-NEXT:  %o = tn.sdpa %q, %q, %q scale = 2.500000e-01 : {{.*}} -> tensor<2x4x8x16xf32>
// CHECK-NEXT:  %t = tn.permute %o perm = [1, 0, 2, 3]

// -----
func.func @training_attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x16xf32>, %g: tensor<2x8x4x16xf32>) -> (tensor<16x64xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) {
  %o, %l = tn.sdpa %q, %k, %v scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x4x8xf32>
  %t = tn.permute %o perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %r = tn.reshape %t : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
  %go = tn.permute %g perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %dq, %dk, %dv = tn.sdpa_backward %go, %q, %k, %v, %o, %l scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> -> tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>
  func.return %r, %o, %l, %dq, %dk, %dv : tensor<16x64xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>
}
// A training attention and its backward (torch's flash kernels) take their results heads-last, in the layouts
// those kernels write whatever their operands': the forward's result and logsumexp, and each gradient; a
// permute views each back, and the head merge reads the result as it lies.
// CHECK-LABEL: func.func @training_attention
// CHECK-NEXT:  %[[O:.*]], %[[L:.*]] = tn.sdpa %q, %k, %v scale = 2.500000e-01 heads_last : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x8x4x16xf32>, tensor<2x8x4xf32>
// CHECK-NEXT:  %[[OB:.*]] = tn.permute %[[O]] perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT:  %[[LB:.*]] = tn.permute %[[L]] perm = [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:  %r = tn.reshape %[[O]] : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
// CHECK-NEXT:  %go = tn.permute %g perm = [0, 2, 1, 3]
// CHECK-NEXT:  %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = tn.sdpa_backward %go, %q, %k, %v, %[[OB]], %[[LB]] scale = 2.500000e-01 heads_last : {{.*}} -> tensor<2x8x4x16xf32>, tensor<2x6x4x16xf32>, tensor<2x6x4x16xf32>
// CHECK-NEXT:  %[[DQB:.*]] = tn.permute %[[DQ]] perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT:  %[[DKB:.*]] = tn.permute %[[DK]] perm = [0, 2, 1, 3] : tensor<2x6x4x16xf32> -> tensor<2x4x6x16xf32>
// CHECK-NEXT:  %[[DVB:.*]] = tn.permute %[[DV]] perm = [0, 2, 1, 3] : tensor<2x6x4x16xf32> -> tensor<2x4x6x16xf32>
// CHECK-NEXT:  func.return %r, %[[OB]], %[[LB]], %[[DQB]], %[[DKB]], %[[DVB]]

// -----
func.func @training_attention_without_heads(%q: tensor<4x8x16xf32>) -> (tensor<4x8x16xf32>, tensor<4x8xf32>) {
  %o, %l = tn.sdpa %q, %q, %q scale = 0.25 : tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32> -> tensor<4x8x16xf32>, tensor<4x8xf32>
  func.return %o, %l : tensor<4x8x16xf32>, tensor<4x8xf32>
}
// Without a heads dim (rank 3) there is no heads-last form: the attention stays as it is.
// CHECK-LABEL: func.func @training_attention_without_heads
// CHECK-NEXT:  %o, %l = tn.sdpa %q, %q, %q scale = 2.500000e-01 : {{.*}} -> tensor<4x8x16xf32>, tensor<4x8xf32>

// -----
func.func @main(%x: tensor<2x8x9x9xf32>, %y: tensor<2x8x9x9xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x8x5x5xi64>, tensor<2x8x5x5xf32>) attributes {irc.input_layout = [[0, 2, 3, 1], []]} {
  %p, %i = tn.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x8x9x9xf32> -> tensor<2x8x5x5xf32>, tensor<2x8x5x5xi64>
  %q, %j = tn.max_pool2d %y kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x8x9x9xf32> -> tensor<2x8x5x5xf32>, tensor<2x8x5x5xi64>
  func.return %p, %i, %q : tensor<2x8x5x5xf32>, tensor<2x8x5x5xi64>, tensor<2x8x5x5xf32>
}
// The caller passes %x channels-last (irc.input_layout): its pool reads it as NHWC, a view; %y is row-major.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[V:.*]] = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x8x9x9xf32> -> tensor<2x9x9x8xf32>
// CHECK-NEXT:  %[[P:.*]], %[[I:.*]] = tn.max_pool2d %[[V]] {{.*}} channels_last : tensor<2x9x9x8xf32> -> tensor<2x5x5x8xf32>, tensor<2x5x5x8xi64>
// CHECK-NEXT:  %[[PB:.*]] = tn.permute %[[P]] perm = [0, 3, 1, 2]
// CHECK-NEXT:  %[[IB:.*]] = tn.permute %[[I]] perm = [0, 3, 1, 2]
// CHECK-NEXT:  %{{.*}}, %{{.*}} = tn.max_pool2d %y kernel = [3, 3] {{.*}} dilation = [1, 1] : tensor<2x8x9x9xf32>
// CHECK-NEXT:  func.return %[[PB]], %[[IB]]

// -----
func.func @global_pool_of_nhwc(%x: tensor<2x7x7x16xf32>) -> (tensor<2x16x1x1xf32>, tensor<2x1x7x7xf32>) {
  %t = tn.permute %x perm = [0, 3, 1, 2] : tensor<2x7x7x16xf32> -> tensor<2x16x7x7xf32>
  %m = tn.mean %t dims = [2, 3] : tensor<2x16x7x7xf32> -> tensor<2x16x1x1xf32>
  %c = tn.amax %t dims = [1] : tensor<2x16x7x7xf32> -> tensor<2x1x7x7xf32>
  func.return %m, %c : tensor<2x16x1x1xf32>, tensor<2x1x7x7xf32>
}
// A reduction that keeps the channels reduces the NHWC value over the same dims of it (H and W are its 1 and 2)
// and converts its small result; one over the channels stays on the NCHW view.
// CHECK-LABEL: func.func @global_pool_of_nhwc
// CHECK-NEXT:  %t = tn.permute %x perm = [0, 3, 1, 2]
// CHECK-NEXT:  %[[M:.*]] = tn.mean %x dims = [1, 2] : tensor<2x7x7x16xf32> -> tensor<2x1x1x16xf32>
// CHECK-NEXT:  %[[MB:.*]] = tn.permute %[[M]] perm = [0, 3, 1, 2] : tensor<2x1x1x16xf32> -> tensor<2x16x1x1xf32>
// CHECK-NEXT:  %c = tn.amax %t dims = [1]
// CHECK-NEXT:  func.return %[[MB]], %c

// -----
func.func @main(%x: tensor<2x8x9x9xf32>, %y: tensor<2x9x9x8xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x8x4x4xf32>) attributes {irc.input_layout = [[0, 2, 3, 1], []]} {
  %p = tn.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] count_include_pad : tensor<2x8x9x9xf32> -> tensor<2x8x5x5xf32>
  %t = tn.permute %y perm = [0, 3, 1, 2] : tensor<2x9x9x8xf32> -> tensor<2x8x9x9xf32>
  %q = tn.avg_pool2d %t kernel = [2, 2] stride = [2, 2] padding = [0, 0] divisor = 3 : tensor<2x8x9x9xf32> -> tensor<2x8x4x4xf32>
  func.return %p, %q : tensor<2x8x5x5xf32>, tensor<2x8x4x4xf32>
}
// Average pools too: of a channels-last argument, and of an NHWC value seen as NCHW; their options stay.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[V:.*]] = tn.permute %x perm = [0, 2, 3, 1]
// CHECK-NEXT:  %[[P:.*]] = tn.avg_pool2d %[[V]] kernel = [3, 3] stride = [2, 2] padding = [1, 1] count_include_pad channels_last : tensor<2x9x9x8xf32> -> tensor<2x5x5x8xf32>
// CHECK-NEXT:  %[[PB:.*]] = tn.permute %[[P]] perm = [0, 3, 1, 2]
// CHECK-NEXT:  %[[Q:.*]] = tn.avg_pool2d %y kernel = [2, 2] stride = [2, 2] padding = [0, 0] divisor = 3 channels_last : tensor<2x9x9x8xf32> -> tensor<2x4x4x8xf32>
// CHECK-NEXT:  %[[QB:.*]] = tn.permute %[[Q]] perm = [0, 3, 1, 2]
// CHECK-NEXT:  func.return %[[PB]], %[[QB]]

// -----
func.func @main(%x: tensor<2x8x20x15xf32>) -> (tensor<2x8x1x1xf32>, tensor<2x8x20x1xf32>, tensor<2x1x20x15xf32>) attributes {irc.input_layout = [[0, 2, 3, 1]]} {
  %m = tn.mean %x dims = [2, 3] : tensor<2x8x20x15xf32> -> tensor<2x8x1x1xf32>
  %a = tn.amax %x dims = [3] : tensor<2x8x20x15xf32> -> tensor<2x8x20x1xf32>
  %s = tn.sum %x dims = [1] : tensor<2x8x20x15xf32> -> tensor<2x1x20x15xf32>
  func.return %m, %a, %s : tensor<2x8x1x1xf32>, tensor<2x8x20x1xf32>, tensor<2x1x20x15xf32>
}
// Reductions of a channels-last argument read it as NHWC, a mean over 300 elements in one op; one over the channels
// stays on x.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[V:.*]] = tn.permute %x perm = [0, 2, 3, 1]
// CHECK-NEXT:  %[[H:.*]] = tn.mean %[[V]] dims = [1, 2] : tensor<2x20x15x8xf32> -> tensor<2x1x1x8xf32>
// CHECK-NEXT:  %[[M:.*]] = tn.permute %[[H]] perm = [0, 3, 1, 2]
// CHECK-NEXT:  %[[V2:.*]] = tn.permute %x perm = [0, 2, 3, 1]
// CHECK-NEXT:  %[[A:.*]] = tn.amax %[[V2]] dims = [2] : tensor<2x20x15x8xf32> -> tensor<2x20x1x8xf32>
// CHECK-NEXT:  %[[AB:.*]] = tn.permute %[[A]] perm = [0, 3, 1, 2]
// CHECK-NEXT:  %s = tn.sum %x dims = [1]
// CHECK-NEXT:  func.return %[[M]], %[[AB]], %s

// -----
func.func @flatten_into_product(%x: tensor<4x2x3x5xf32>, %w: tensor<3x30xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>) {
  %t = tn.permute %x perm = [0, 3, 1, 2] : tensor<4x2x3x5xf32> -> tensor<4x5x2x3xf32>
  %f = tn.reshape %t : tensor<4x5x2x3xf32> -> tensor<4x30xf32>
  %b = tn.permute %w perm = [1, 0] : tensor<3x30xf32> -> tensor<30x3xf32>
  %y = tn.mm %f, %b : tensor<4x30xf32>, tensor<30x3xf32> -> tensor<4x3xf32>
  %z = tn.mm %w, %b : tensor<3x30xf32>, tensor<30x3xf32> -> tensor<3x3xf32>
  func.return %y, %z : tensor<4x3xf32>, tensor<3x3xf32>
}
// A flatten of an NHWC value seen as NCHW into a product reads the NHWC value: the weight's rows (c, h, w) go to
// (h, w, c) instead, a copy of 90 elements for one of 120. The copy is made of the layer's weight %w, (K, C*H*W),
// its columns reordered, and the product reads its transpose, as it read %w's.
// CHECK-LABEL: func.func @flatten_into_product
// CHECK-NEXT:  %[[B:.*]] = tn.permute %w perm = [1, 0]
// CHECK-NEXT:  %[[X:.*]] = tn.reshape %x : tensor<4x2x3x5xf32> -> tensor<4x30xf32>
// CHECK-NEXT:  %[[W4:.*]] = tn.reshape %w : tensor<3x30xf32> -> tensor<3x5x2x3xf32>
// CHECK-NEXT:  %[[WP:.*]] = tn.permute %[[W4]] perm = [0, 2, 3, 1] : tensor<3x5x2x3xf32> -> tensor<3x2x3x5xf32>
// CHECK-NEXT:  %[[W:.*]] = tn.reshape %[[WP]] : tensor<3x2x3x5xf32> -> tensor<3x30xf32>
// CHECK-NEXT:  %[[WT:.*]] = tn.permute %[[W]] perm = [1, 0] : tensor<3x30xf32> -> tensor<30x3xf32>
// CHECK-NEXT:  %{{.*}} = tn.mm %[[X]], %[[WT]] : tensor<4x30xf32>, tensor<30x3xf32>

// -----
func.func @flatten_kept(%x: tensor<2x2x3x5xf32>, %w: tensor<30x3xf32>, %v: tensor<4x2x3x5xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x30xf32>) {
  %t = tn.permute %x perm = [0, 3, 1, 2] : tensor<2x2x3x5xf32> -> tensor<2x5x2x3xf32>
  %f = tn.reshape %t : tensor<2x5x2x3xf32> -> tensor<2x30xf32>
  %y = tn.mm %f, %w : tensor<2x30xf32>, tensor<30x3xf32> -> tensor<2x3xf32>
  %u = tn.permute %v perm = [0, 3, 1, 2] : tensor<4x2x3x5xf32> -> tensor<4x5x2x3xf32>
  %g = tn.reshape %u : tensor<4x5x2x3xf32> -> tensor<4x30xf32>
  %z = tn.mm %g, %w : tensor<4x30xf32>, tensor<30x3xf32> -> tensor<4x3xf32>
  func.return %y, %z, %g : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x30xf32>
}
// Not where the weight has more columns than the product rows (its copy would outgrow the activation's), nor where
// the NCHW flatten is read elsewhere too.
// CHECK-LABEL: func.func @flatten_kept
// CHECK-NEXT:  %t = tn.permute %x perm = [0, 3, 1, 2]
// CHECK-NEXT:  %f = tn.reshape %t
// CHECK-NEXT:  %y = tn.mm %f, %w
// CHECK-NEXT:  %u = tn.permute %v perm = [0, 3, 1, 2]
// CHECK-NEXT:  %g = tn.reshape %u
// CHECK-NEXT:  %z = tn.mm %g, %w
