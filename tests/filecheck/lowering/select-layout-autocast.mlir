// RUN: irc-opt --split-input-file %s -p select-layout,fold-permutes,dce | filecheck %s
// A ConvNet's features and classifier under bf16 autocast: the input is cast to bf16, each batch norm normalises
// a bf16 convolution by float32 statistics and parameters, and the linear layer is one bf16 addmm. Each batch norm
// is a member of the convolutions' region (its NHWC form computes as its loop form does: x widened to float32, the
// result rounded once), so the two convolutions form one region and go NHWC together; the flatten into the addmm
// reads the NHWC activation as it lies and the weight's rows are reordered instead (what select-layout counts as
// that output's conversion). Before, each such batch norm was a region boundary: two regions of one convolution,
// each paying a conversion in and out, which left both NCHW on the library's slower path.

func.func @autocast(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xbf16>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<4x4x3x3xbf16>, %fc: tensor<256x2xbf16>, %fb: tensor<2xbf16>) -> tensor<2x2xbf16> {
  %xb = tn.convert %x : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xbf16>
  %c = tn.convolution %xb, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16> -> tensor<2x4x8x8xbf16>
  %n = tn.batch_norm_inference %c weight %m bias %v stats %m, %v eps = 1.000000e-05 : tensor<2x4x8x8xbf16> weight tensor<4xf32> bias tensor<4xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xbf16>
  %r = tn.relu %n : tensor<2x4x8x8xbf16>
  %c2 = tn.convolution %r, %w2 stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xbf16>, tensor<4x4x3x3xbf16> -> tensor<2x4x8x8xbf16>
  %n2 = tn.batch_norm_inference %c2 weight %m bias %v stats %m, %v eps = 1.000000e-05 : tensor<2x4x8x8xbf16> weight tensor<4xf32> bias tensor<4xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x4x8x8xbf16>
  %r2 = tn.relu %n2 : tensor<2x4x8x8xbf16>
  %flat = tn.reshape %r2 : tensor<2x4x8x8xbf16> -> tensor<2x256xbf16>
  %y = tn.addmm %flat, %fc bias %fb : tensor<2x256xbf16>, tensor<256x2xbf16>, tensor<2xbf16> -> tensor<2x2xbf16>
  func.return %y : tensor<2x2xbf16>
}
// CHECK-LABEL: func.func @autocast
// CHECK-SAME:    irc.layout = ["region 0 (2 convs, 7 ops): nhwc: cost
// CHECK-SAME:    conversions 2 nhwc
// CHECK-NEXT:    %[[XP:.*]] = tn.permute %x perm = [0, 2, 3, 1] : tensor<2x3x8x8xf32> -> tensor<2x8x8x3xf32>
// CHECK-NEXT:    %[[XB:.*]] = tn.convert %[[XP]] : tensor<2x8x8x3xf32> -> tensor<2x8x8x3xbf16>
// CHECK-NEXT:    %[[C:.*]] = tn.convolution %[[XB]], %w, %b {{.*}} channels_last : {{.*}} -> tensor<2x8x8x4xbf16>
// CHECK:         %[[RSTD:.*]] = tn.rsqrt {{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[CW:.*]] = tn.convert %[[C]] : tensor<2x8x8x4xbf16> -> tensor<2x8x8x4xf32>
// CHECK-NEXT:    %[[D:.*]] = tn.sub %[[CW]], %m : tensor<2x8x8x4xf32>, tensor<4xf32> -> tensor<2x8x8x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = tn.mul %[[D]], %[[RSTD]] : tensor<2x8x8x4xf32>, tensor<4xf32>
// CHECK-NEXT:    %[[YW:.*]] = tn.mul %[[Y]], %m : tensor<2x8x8x4xf32>, tensor<4xf32>
// CHECK-NEXT:    %[[YB:.*]] = tn.add %[[YW]], %v : tensor<2x8x8x4xf32>, tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = tn.convert %[[YB]] : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
// CHECK-NEXT:    %[[R:.*]] = tn.relu %[[N]] : tensor<2x8x8x4xbf16>
// CHECK-NEXT:    %[[C2:.*]] = tn.convolution %[[R]], %w2 {{.*}} channels_last : {{.*}} -> tensor<2x8x8x4xbf16>
// CHECK-NOT:     tn.permute {{.*}} perm = [0, 3, 1, 2]
// CHECK:         %[[R2:.*]] = tn.relu %{{.*}} : tensor<2x8x8x4xbf16>
// CHECK-NEXT:    %[[FLAT:.*]] = tn.reshape %[[R2]] : tensor<2x8x8x4xbf16> -> tensor<2x256xbf16>
// CHECK-NEXT:    %[[FCT:.*]] = tn.permute %fc perm = [1, 0] : tensor<256x2xbf16> -> tensor<2x256xbf16>
// CHECK-NEXT:    %[[FC:.*]] = tn.reshape %[[FCT]] : tensor<2x256xbf16> -> tensor<2x4x8x8xbf16>
// CHECK-NEXT:    %[[FCP:.*]] = tn.permute %[[FC]] perm = [0, 2, 3, 1] : tensor<2x4x8x8xbf16> -> tensor<2x8x8x4xbf16>
// CHECK-NEXT:    %[[FCR:.*]] = tn.reshape %[[FCP]] : tensor<2x8x8x4xbf16> -> tensor<2x256xbf16>
// CHECK-NEXT:    %[[FCB:.*]] = tn.permute %[[FCR]] perm = [1, 0] : tensor<2x256xbf16> -> tensor<256x2xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = tn.addmm %[[FLAT]], %[[FCB]] bias %fb : tensor<2x256xbf16>, tensor<256x2xbf16>, tensor<2xbf16> -> tensor<2x2xbf16>
// CHECK-NEXT:    func.return %[[OUT]]

// -----
func.func @cast_whole(%x: tensor<2x4x8x8xbf16>, %w: tensor<4x4x3x3xbf16>, %m: tensor<4xbf16>, %v: tensor<4xbf16>) -> tensor<2x4x8x8xbf16> {
  %c = tn.convolution %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xbf16>, tensor<4x4x3x3xbf16> -> tensor<2x4x8x8xbf16>
  %n = tn.batch_norm_inference %c weight %m bias %v stats %m, %v eps = 1.000000e-05 : tensor<2x4x8x8xbf16> weight tensor<4xbf16> bias tensor<4xbf16> stats tensor<4xbf16>, tensor<4xbf16> -> tensor<2x4x8x8xbf16>
  %c2 = tn.convolution %n, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xbf16>, tensor<4x4x3x3xbf16> -> tensor<2x4x8x8xbf16>
  func.return %c2 : tensor<2x4x8x8xbf16>
}
// A batch norm of a model cast whole to bf16 computes in float32 in its NHWC form too, as its loop form does (each
// load widened, one rounding at the store): its statistics widened exactly, the normalised value rounded once.
// CHECK-LABEL: func.func @cast_whole
// CHECK-SAME:    irc.layout = ["region 0 (2 convs, 3 ops): nhwc
// CHECK:         %[[C:.*]] = tn.convolution {{.*}} channels_last : {{.*}} -> tensor<2x8x8x4xbf16>
// CHECK:         %[[VW:.*]] = tn.convert %v : tensor<4xbf16> -> tensor<4xf32>
// CHECK:         %[[RSTD:.*]] = tn.rsqrt %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    %[[CW:.*]] = tn.convert %[[C]] : tensor<2x8x8x4xbf16> -> tensor<2x8x8x4xf32>
// CHECK-NEXT:    tn.sub %[[CW]], %{{.*}} : tensor<2x8x8x4xf32>, tensor<4xf32> -> tensor<2x8x8x4xf32>
// CHECK-NEXT:    tn.mul
// CHECK-NEXT:    tn.mul
// CHECK-NEXT:    %[[YB:.*]] = tn.add %{{.*}}, %[[VW]] : tensor<2x8x8x4xf32>, tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = tn.convert %[[YB]] : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
// CHECK-NEXT:    tn.convolution %[[N]], %w {{.*}} channels_last
