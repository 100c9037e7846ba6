// RUN: irc-opt --split-input-file %s -p 'select-layout{layout=nhwc},fold-permutes,dce' | filecheck %s --check-prefix=NHWC
// RUN: irc-opt --split-input-file %s -p select-layout,fold-permutes,dce | filecheck %s --check-prefix=AUTO
// RUN: irc-opt --split-input-file %s -p 'select-layout{layout=nchw},fold-permutes,dce' | filecheck %s --check-prefix=NCHW
// Layout selection per convolution region. Without a measurement hook (irc-opt has none) the cost
// model estimates both layouts' convolutions from their flops (plus, in nchw, the library's reorder of each
// convolution's input and output; grouped convolutions pay a penalty in nhwc) and adds a read and a write
// for each conversion at the region's boundary.

func.func @block(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = tn.convolution %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  %n = tn.batch_norm_inference %c weight %m bias %v stats %m, %v eps = 1.000000e-05 : tensor<2x4x8x8xf32> weight tensor<4xf32> bias tensor<4xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  %r = tn.relu %n : tensor<2x4x8x8xf32>
  %c2 = tn.convolution %r, %w2 stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<2x4x8x8xf32>
  %s = tn.add %c2, %r : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  func.return %s : tensor<2x4x8x8xf32>
}
// Forced to nhwc, every op computes in nhwc (batch norm as elementwise ops with its [C] parameters along
// the last dim); the permute pairs between them cancel, one conversion in and one out remain.
// NHWC-LABEL: func.func @block
// NHWC-SAME:    irc.layout = ["region 0 (2 convs, 5 ops): nhwc: forced by layout=nhwc; {{.*}}conversions 2 nhwc
// NHWC-NEXT:    %[[X:.*]] = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x8x8xf32> -> tensor<2x8x8x3xf32>
// NHWC-NEXT:    %[[C:.*]] = tn.convolution %[[X]], %w, %b {{.*}} groups = 1 channels_last : tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x8x8x4xf32>
// NHWC:         %[[EPS:.*]] = tn.constant dense<1.000000e-05> : tensor<f32>
// NHWC-NEXT:    %[[VE:.*]] = tn.add %v, %[[EPS]] : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// NHWC-NEXT:    %[[RSTD:.*]] = tn.rsqrt %[[VE]] : tensor<4xf32>
// NHWC-NEXT:    %[[D:.*]] = tn.sub %[[C]], %m : tensor<2x8x8x4xf32>, tensor<4xf32> -> tensor<2x8x8x4xf32>
// NHWC-NEXT:    %[[Y:.*]] = tn.mul %[[D]], %[[RSTD]]
// NHWC-NEXT:    %[[YW:.*]] = tn.mul %[[Y]], %m
// NHWC-NEXT:    %[[YB:.*]] = tn.add %[[YW]], %v
// NHWC-NEXT:    %[[R:.*]] = tn.relu %[[YB]] : tensor<2x8x8x4xf32>
// NHWC-NEXT:    %[[C2:.*]] = tn.convolution %[[R]], %w2 {{.*}} channels_last : tensor<2x8x8x4xf32>, tensor<4x4x3x3xf32> -> tensor<2x8x8x4xf32>
// NHWC-NEXT:    %[[S:.*]] = tn.add %[[C2]], %[[R]] : tensor<2x8x8x4xf32>, tensor<2x8x8x4xf32> -> tensor<2x8x8x4xf32>
// NHWC-NEXT:    %[[OUT:.*]] = tn.permute %[[S]] perm = [0, 3, 1, 2] : tensor<2x8x8x4xf32> -> tensor<2x4x8x8xf32>
// NHWC-NEXT:    func.return %[[OUT]]
// In auto, nchw pays the library's reorders of two convolutions' inputs and outputs, more than nhwc's two
// conversions at the region's boundary: nhwc, one conversion in and one out.
// AUTO-LABEL: func.func @block
// AUTO-SAME:    irc.layout = ["region 0 (2 convs, 5 ops): nhwc: cost {{.*}}conversions 2 nhwc {{.*}} vs 0 nchw
// AUTO-NEXT:    tn.permute %x perm = [0, 2, 3, 1]
// AUTO:         channels_last
// AUTO:         tn.permute {{.*}} perm = [0, 3, 1, 2]
// AUTO-NEXT:    func.return
// NCHW-LABEL: func.func @block
// NCHW-SAME:    nchw: forced by layout=nchw
// NCHW-NOT:     tn.permute

// -----
func.func @nhwc_data(%x: tensor<1x16x16x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x16x16x8xf32> {
  %xn = tn.permute %x perm = [0, 3, 1, 2] : tensor<1x16x16x8xf32> -> tensor<1x8x16x16xf32>
  %c = tn.convolution %xn, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32> -> tensor<1x8x16x16xf32>
  %r = tn.relu %c : tensor<1x8x16x16xf32>
  %y = tn.permute %r perm = [0, 2, 3, 1] : tensor<1x8x16x16xf32> -> tensor<1x16x16x8xf32>
  func.return %y : tensor<1x16x16x8xf32>
}
// Data that arrives and leaves in nhwc: nchw would keep two conversions, nhwc needs none; the
// program's own permutes cancel against the region's and no permute is left.
// AUTO-LABEL: func.func @nhwc_data
// AUTO-SAME:    irc.layout = ["region 0 (1 convs, 2 ops): nhwc: {{.*}}conversions 0 nhwc (0 ms) vs 2 nchw
// AUTO-NEXT:    %[[C:.*]] = tn.convolution %x, %w {{.*}} channels_last : tensor<1x16x16x8xf32>, tensor<8x8x3x3xf32> -> tensor<1x16x16x8xf32>
// AUTO-NEXT:    %[[R:.*]] = tn.relu %[[C]] : tensor<1x16x16x8xf32>
// AUTO-NEXT:    func.return %[[R]] : tensor<1x16x16x8xf32>
// Forced to nchw, it keeps the program as it is.
// NCHW-LABEL: func.func @nhwc_data
// NCHW:         tn.permute %x perm = [0, 3, 1, 2]
// NCHW-NOT:     channels_last

// -----
func.func @grouped(%x: tensor<1x8x8x256xf32>, %w: tensor<256x128x3x3xf32>) -> tensor<1x8x8x256xf32> {
  %xn = tn.permute %x perm = [0, 3, 1, 2] : tensor<1x8x8x256xf32> -> tensor<1x256x8x8xf32>
  %c = tn.convolution %xn, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 2 : tensor<1x256x8x8xf32>, tensor<256x128x3x3xf32> -> tensor<1x256x8x8xf32>
  %y = tn.permute %c perm = [0, 2, 3, 1] : tensor<1x256x8x8xf32> -> tensor<1x8x8x256xf32>
  func.return %y : tensor<1x8x8x256xf32>
}
// A grouped convolution with much arithmetic per element: the nhwc penalty outweighs two conversions.
// AUTO-LABEL: func.func @grouped
// AUTO-SAME:    irc.layout = ["region 0 (1 convs, 1 ops): nchw: {{.*}}(estimated, 1 grouped with penalty); conversions 0 nhwc (0 ms) vs 2 nchw
// AUTO-NOT:     channels_last

// -----
func.func @two_regions(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %s: tensor<f32>) -> tensor<1x4x4x4xf32> {
  %c = tn.convolution %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  %m = tn.mul %c, %s : tensor<1x4x8x8xf32>, tensor<f32> -> tensor<1x4x8x8xf32>
  %p, %i = tn.max_pool2d %m kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>
  %c2 = tn.convolution %p, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x4x4xf32>
  func.return %c2 : tensor<1x4x4x4xf32>
}
// Pooling is not a region op: it separates two regions, each choosing its layout. A 0-d operand of an
// elementwise op needs no conversion. Both in NHWC, fold-permutes pools the first one's output channels-last,
// and the conversions between the two cancel.
// NHWC-LABEL: func.func @two_regions
// NHWC-SAME:    irc.layout = ["region 0 (1 convs, 2 ops): nhwc: {{.*}}", "region 1 (1 convs, 1 ops): nhwc: {{.*}}"]
// NHWC-NEXT:    %[[X:.*]] = tn.permute %x perm = [0, 2, 3, 1]
// NHWC-NEXT:    %[[C:.*]] = tn.convolution %[[X]], %w {{.*}} channels_last
// NHWC-NEXT:    %[[M:.*]] = tn.mul %[[C]], %s : tensor<1x8x8x4xf32>, tensor<f32> -> tensor<1x8x8x4xf32>
// NHWC-NEXT:    %[[P:.*]], %{{.*}} = tn.max_pool2d %[[M]] {{.*}} channels_last : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
// NHWC-NEXT:    %[[C2:.*]] = tn.convolution %[[P]], %w {{.*}} channels_last
// NHWC-NEXT:    %[[OUT:.*]] = tn.permute %[[C2]] perm = [0, 3, 1, 2]
// NHWC-NEXT:    func.return %[[OUT]]
// auto chooses the same: each region's reorders in nchw cost more than its conversions in nhwc.
// AUTO-LABEL: func.func @two_regions
// AUTO-SAME:    irc.layout = ["region 0 (1 convs, 2 ops): nhwc: {{.*}}", "region 1 (1 convs, 1 ops): nhwc: {{.*}}"]
// AUTO-NEXT:    tn.permute %x perm = [0, 2, 3, 1]
// AUTO-NEXT:    tn.convolution {{.*}} channels_last
// AUTO-NEXT:    tn.mul
// AUTO-NEXT:    tn.max_pool2d {{.*}} channels_last
// AUTO-NEXT:    tn.convolution {{.*}} channels_last
// AUTO-NEXT:    tn.permute {{.*}} perm = [0, 3, 1, 2]

// -----
func.func @pool_between_nhwc_regions(%x: tensor<1x8x8x4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %xn = tn.permute %x perm = [0, 3, 1, 2] : tensor<1x8x8x4xf32> -> tensor<1x4x8x8xf32>
  %c = tn.convolution %xn, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  %p, %i = tn.max_pool2d %c kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>
  %c2 = tn.convolution %p, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x4x4xf32>
  %y = tn.permute %c2 perm = [0, 2, 3, 1] : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
// Channels-last data through two regions with a max pool between them. The first region's output converts
// only after the pool (its 256 bytes against the NCHW input's 1 KB), and the second region's input, a max pool
// of a channels-last value, arrives channels-last; so both regions choose nhwc, and no conversion is left.
// AUTO-LABEL: func.func @pool_between_nhwc_regions
// AUTO-SAME:    irc.layout = ["region 0 (1 convs, 1 ops): nhwc: {{.*}}conversions 1 nhwc ({{.*}}) vs 1 nchw ({{.*}})", "region 1 (1 convs, 1 ops): nhwc: {{.*}}conversions 0 nhwc (0 ms) vs 2 nchw
// AUTO-NEXT:    %[[C:.*]] = tn.convolution %x, %w {{.*}} channels_last
// AUTO-NEXT:    %[[P:.*]], %{{.*}} = tn.max_pool2d %[[C]] {{.*}} channels_last
// AUTO-NEXT:    %[[C2:.*]] = tn.convolution %[[P]], %w {{.*}} channels_last
// AUTO-NEXT:    func.return %[[C2]]

// -----
// A dtype conversion between two convolutions (a quantize / dequantize chain, an autocast cast) is an elementwise op
// of the region: both convolutions stay in one region, nothing converts the layout between them.
func.func @converts(%x: tensor<2x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = tn.convolution %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<2x4x8x8xf32>
  %q = tn.convert %c : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xui8>
  %d = tn.convert %q : tensor<2x4x8x8xui8> -> tensor<2x4x8x8xf32>
  %c2 = tn.convolution %d, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<2x4x8x8xf32>
  func.return %c2 : tensor<2x4x8x8xf32>
}
// NHWC-LABEL: func.func @converts
// NHWC-SAME:    irc.layout = ["region 0 (2 convs, 4 ops): nhwc: forced by layout=nhwc; {{.*}}conversions 2 nhwc
// NHWC-NEXT:    %[[X:.*]] = tn.permute %x perm = [0, 2, 3, 1]
// NHWC-NEXT:    %[[C:.*]] = tn.convolution %[[X]], %w {{.*}} channels_last : tensor<2x8x8x4xf32>, tensor<4x4x3x3xf32> -> tensor<2x8x8x4xf32>
// NHWC-NEXT:    %[[Q:.*]] = tn.convert %[[C]] : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xui8>
// NHWC-NEXT:    %[[D:.*]] = tn.convert %[[Q]] : tensor<2x8x8x4xui8> -> tensor<2x8x8x4xf32>
// NHWC-NEXT:    %[[C2:.*]] = tn.convolution %[[D]], %w {{.*}} channels_last
// NHWC-NEXT:    %[[OUT:.*]] = tn.permute %[[C2]] perm = [0, 3, 1, 2]
// NHWC-NEXT:    func.return %[[OUT]]
// AUTO-LABEL: func.func @converts
// AUTO-SAME:    irc.layout = ["region 0 (2 convs, 4 ops): nhwc
// AUTO-NOT:     tn.permute {{.*}} perm = [0, 3, 1, 2] : tensor<2x8x8x4xf32>
// AUTO:         channels_last
// AUTO-NOT:     tn.permute
// AUTO:         channels_last
// AUTO:         tn.permute {{.*}} perm = [0, 3, 1, 2]
// AUTO-NEXT:    func.return
