// RUN: irc-opt --split-input-file %s -p fuse-attention,simplify-tensor,dce | filecheck %s
// Attention written out (bmm, scale, mask, softmax, bmm) becomes one tn.sdpa; anything else stays as it is.

func.func @scaled_4d(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32> {
  %kt = tn.permute %k perm = [0, 1, 3, 2] : tensor<2x4x6x16xf32> -> tensor<2x4x16x6xf32>
  %q3 = tn.reshape %q : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
  %k3 = tn.reshape %kt : tensor<2x4x16x6xf32> -> tensor<8x16x6xf32>
  %s3 = tn.bmm %q3, %k3 : tensor<8x8x16xf32>, tensor<8x16x6xf32> -> tensor<8x8x6xf32>
  %s = tn.reshape %s3 : tensor<8x8x6xf32> -> tensor<2x4x8x6xf32>
  %c = tn.constant dense<4.0> : tensor<f32> -> tensor<f32>
  %d = tn.div %s, %c : tensor<2x4x8x6xf32>, tensor<f32> -> tensor<2x4x8x6xf32>
  %p = tn.softmax %d dim = 3 : tensor<2x4x8x6xf32>
  %p3 = tn.reshape %p : tensor<2x4x8x6xf32> -> tensor<8x8x6xf32>
  %v3 = tn.reshape %v : tensor<2x4x6x16xf32> -> tensor<8x6x16xf32>
  %o3 = tn.bmm %p3, %v3 : tensor<8x8x6xf32>, tensor<8x6x16xf32> -> tensor<8x8x16xf32>
  %o = tn.reshape %o3 : tensor<8x8x16xf32> -> tensor<2x4x8x16xf32>
  func.return %o : tensor<2x4x8x16xf32>
}
// q k^T / 4 over (2, 4) batch dims: scale 1/4, the reshapes around it folded away.
// CHECK-LABEL: func.func @scaled_4d
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v scale = 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT:  func.return
// CHECK-NOT:   tn.softmax

// -----
func.func @unscaled_3d(%q: tensor<3x5x8xf32>, %k: tensor<3x7x8xf32>, %v: tensor<3x7x2xf32>) -> tensor<3x5x2xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<3x7x8xf32> -> tensor<3x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<3x5x8xf32>, tensor<3x8x7xf32> -> tensor<3x5x7xf32>
  %p = tn.softmax %s dim = 2 : tensor<3x5x7xf32>
  %o = tn.bmm %p, %v : tensor<3x5x7xf32>, tensor<3x7x2xf32> -> tensor<3x5x2xf32>
  func.return %o : tensor<3x5x2xf32>
}
// No scale: 1.0 (SDPA's own default would be 1/sqrt(8)).
// CHECK-LABEL: func.func @unscaled_3d
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v scale = 1.000000e+00 : tensor<3x5x8xf32>, tensor<3x7x8xf32>, tensor<3x7x2xf32> -> tensor<3x5x2xf32>

// -----
func.func @masked_fill(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x8xf32>, %keep: tensor<2x1x7xi1>) -> tensor<2x5x8xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<2x7x8xf32> -> tensor<2x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<2x5x8xf32>, tensor<2x8x7xf32> -> tensor<2x5x7xf32>
  %c = tn.constant dense<0.5> : tensor<f32> -> tensor<f32>
  %m = tn.mul %c, %s : tensor<f32>, tensor<2x5x7xf32> -> tensor<2x5x7xf32>
  %drop = tn.bitwise_not %keep : tensor<2x1x7xi1>
  %ninf = tn.constant dense<0xFF800000> : tensor<f32> -> tensor<f32>
  %w = tn.where %drop, %ninf, %m : tensor<2x1x7xi1>, tensor<f32>, tensor<2x5x7xf32> -> tensor<2x5x7xf32>
  %p = tn.softmax %w dim = 2 : tensor<2x5x7xf32>
  %o = tn.bmm %p, %v : tensor<2x5x7xf32>, tensor<2x7x8xf32> -> tensor<2x5x8xf32>
  func.return %o : tensor<2x5x8xf32>
}
// masked_fill(~keep, -inf) is a boolean mask that keeps `keep`; a scale on the left works too.
// CHECK-LABEL: func.func @masked_fill
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v mask %keep scale = 5.000000e-01 : {{.*}} mask tensor<2x1x7xi1> -> tensor<2x5x8xf32>
// CHECK-NEXT:  func.return

// -----
func.func @masked_where_keep(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x8xf32>, %drop: tensor<2x5x7xi1>) -> tensor<2x5x8xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<2x7x8xf32> -> tensor<2x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<2x5x8xf32>, tensor<2x8x7xf32> -> tensor<2x5x7xf32>
  %ninf = tn.constant dense<0xFF800000> : tensor<f32> -> tensor<f32>
  %w = tn.where %drop, %ninf, %s : tensor<2x5x7xi1>, tensor<f32>, tensor<2x5x7xf32> -> tensor<2x5x7xf32>
  %p = tn.softmax %w dim = 2 : tensor<2x5x7xf32>
  %o = tn.bmm %p, %v : tensor<2x5x7xf32>, tensor<2x7x8xf32> -> tensor<2x5x8xf32>
  func.return %o : tensor<2x5x8xf32>
}
// A condition that is not a negation is negated once (SDPA's boolean mask keeps where true).
// CHECK-LABEL: func.func @masked_where_keep
// CHECK-NEXT:  %[[KEEP:.*]] = tn.logical_not %drop
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v mask %[[KEEP]] scale = 1.000000e+00

// -----
func.func @additive_mask(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x8xf32>, %bias: tensor<5x7xf32>) -> tensor<2x5x8xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<2x7x8xf32> -> tensor<2x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<2x5x8xf32>, tensor<2x8x7xf32> -> tensor<2x5x7xf32>
  %c = tn.constant dense<0.125> : tensor<f32> -> tensor<f32>
  %m = tn.mul %s, %c : tensor<2x5x7xf32>, tensor<f32> -> tensor<2x5x7xf32>
  %a = tn.add %bias, %m : tensor<5x7xf32>, tensor<2x5x7xf32> -> tensor<2x5x7xf32>
  %p = tn.softmax %a dim = 2 : tensor<2x5x7xf32>
  %o = tn.bmm %p, %v : tensor<2x5x7xf32>, tensor<2x7x8xf32> -> tensor<2x5x8xf32>
  func.return %o : tensor<2x5x8xf32>
}
// A float mask added after the scale is SDPA's additive mask.
// CHECK-LABEL: func.func @additive_mask
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v mask %bias scale = 1.250000e-01 : {{.*}} mask tensor<5x7xf32> -> tensor<2x5x8xf32>

// -----
func.func @probabilities_used_twice(%q: tensor<3x5x8xf32>, %k: tensor<3x7x8xf32>, %v: tensor<3x7x2xf32>) -> (tensor<3x5x2xf32>, tensor<3x5x7xf32>) {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<3x7x8xf32> -> tensor<3x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<3x5x8xf32>, tensor<3x8x7xf32> -> tensor<3x5x7xf32>
  %p = tn.softmax %s dim = 2 : tensor<3x5x7xf32>
  %o = tn.bmm %p, %v : tensor<3x5x7xf32>, tensor<3x7x2xf32> -> tensor<3x5x2xf32>
  func.return %o, %p : tensor<3x5x2xf32>, tensor<3x5x7xf32>
}
// The probabilities are needed elsewhere (a training graph saves them): no substitution.
// CHECK-LABEL: func.func @probabilities_used_twice
// CHECK-NOT:   tn.sdpa
// CHECK:       tn.softmax

// -----
func.func @softmax_not_over_keys(%q: tensor<3x5x8xf32>, %k: tensor<3x7x8xf32>, %v: tensor<3x5x2xf32>) -> tensor<3x7x2xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<3x7x8xf32> -> tensor<3x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<3x5x8xf32>, tensor<3x8x7xf32> -> tensor<3x5x7xf32>
  %p = tn.softmax %s dim = 1 : tensor<3x5x7xf32>
  %pt = tn.permute %p perm = [0, 2, 1] : tensor<3x5x7xf32> -> tensor<3x7x5xf32>
  %o = tn.bmm %pt, %v : tensor<3x7x5xf32>, tensor<3x5x2xf32> -> tensor<3x7x2xf32>
  func.return %o : tensor<3x7x2xf32>
}
// CHECK-LABEL: func.func @softmax_not_over_keys
// CHECK-NOT:   tn.sdpa

// -----
func.func @scale_not_constant(%q: tensor<3x5x8xf32>, %k: tensor<3x7x8xf32>, %v: tensor<3x7x2xf32>, %t: tensor<f32>) -> tensor<3x5x2xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<3x7x8xf32> -> tensor<3x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<3x5x8xf32>, tensor<3x8x7xf32> -> tensor<3x5x7xf32>
  %d = tn.div %s, %t : tensor<3x5x7xf32>, tensor<f32> -> tensor<3x5x7xf32>
  %p = tn.softmax %d dim = 2 : tensor<3x5x7xf32>
  %o = tn.bmm %p, %v : tensor<3x5x7xf32>, tensor<3x7x2xf32> -> tensor<3x5x2xf32>
  func.return %o : tensor<3x5x2xf32>
}
// A temperature that is a graph input is not a compile-time scale.
// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT:   tn.sdpa

// -----
func.func @torch_sdpa_decomposed(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32> {
  %c = tn.constant dense<5.000000e-01> : tensor<f32> -> tensor<f32>
  %qs = tn.mul %q, %c : tensor<2x4x8x16xf32>, tensor<f32> -> tensor<2x4x8x16xf32>
  %kt = tn.permute %k perm = [0, 1, 3, 2] : tensor<2x4x6x16xf32> -> tensor<2x4x16x6xf32>
  %ks = tn.mul %kt, %c : tensor<2x4x16x6xf32>, tensor<f32> -> tensor<2x4x16x6xf32>
  %q3 = tn.reshape %qs : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
  %k3 = tn.reshape %ks : tensor<2x4x16x6xf32> -> tensor<8x16x6xf32>
  %s3 = tn.bmm %q3, %k3 : tensor<8x8x16xf32>, tensor<8x16x6xf32> -> tensor<8x8x6xf32>
  %s = tn.reshape %s3 : tensor<8x8x6xf32> -> tensor<2x4x8x6xf32>
  %p = tn.softmax %s dim = 3 : tensor<2x4x8x6xf32>
  %ninf = tn.constant dense<0xFF800000> : tensor<f32> -> tensor<f32>
  %isinf = tn.eq %s, %ninf : tensor<2x4x8x6xf32>, tensor<f32> -> tensor<2x4x8x6xi1>
  %dead = tn.all %isinf dims = [3] : tensor<2x4x8x6xi1> -> tensor<2x4x8x1xi1>
  %zero = tn.constant dense<0.000000e+00> : tensor<f32> -> tensor<f32>
  %zeros = tn.expand %zero : tensor<f32> -> tensor<2x4x8x6xf32>
  %safe = tn.where %dead, %zeros, %p : tensor<2x4x8x1xi1>, tensor<2x4x8x6xf32>, tensor<2x4x8x6xf32> -> tensor<2x4x8x6xf32>
  %p3 = tn.reshape %safe : tensor<2x4x8x6xf32> -> tensor<8x8x6xf32>
  %v3 = tn.reshape %v : tensor<2x4x6x16xf32> -> tensor<8x6x16xf32>
  %o3 = tn.bmm %p3, %v3 : tensor<8x8x6xf32>, tensor<8x6x16xf32> -> tensor<8x8x16xf32>
  %o = tn.reshape %o3 : tensor<8x8x16xf32> -> tensor<2x4x8x16xf32>
  func.return %o : tensor<2x4x8x16xf32>
}
// torch's scaled_dot_product_attention as AOT autograd decomposes it: q and k^T each scaled by sqrt(scale),
// a safe softmax (rows of -inf only give 0, as tn.sdpa does): one tn.sdpa with scale 0.5 * 0.5.
// CHECK-LABEL: func.func @torch_sdpa_decomposed
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v scale = 2.500000e-01
// CHECK-NEXT:  func.return

// -----
func.func @zeroed_rows_by_another_test(%q: tensor<3x5x8xf32>, %k: tensor<3x7x8xf32>, %v: tensor<3x7x2xf32>, %other: tensor<3x5x7xf32>) -> tensor<3x5x2xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<3x7x8xf32> -> tensor<3x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<3x5x8xf32>, tensor<3x8x7xf32> -> tensor<3x5x7xf32>
  %p = tn.softmax %s dim = 2 : tensor<3x5x7xf32>
  %ninf = tn.constant dense<0xFF800000> : tensor<f32> -> tensor<f32>
  %isinf = tn.eq %other, %ninf : tensor<3x5x7xf32>, tensor<f32> -> tensor<3x5x7xi1>
  %dead = tn.all %isinf dims = [2] : tensor<3x5x7xi1> -> tensor<3x5x1xi1>
  %zero = tn.constant dense<0.000000e+00> : tensor<f32> -> tensor<f32>
  %safe = tn.where %dead, %zero, %p : tensor<3x5x1xi1>, tensor<f32>, tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %o = tn.bmm %safe, %v : tensor<3x5x7xf32>, tensor<3x7x2xf32> -> tensor<3x5x2xf32>
  func.return %o : tensor<3x5x2xf32>
}
// Rows zeroed by a test of some other tensor than the scores are not SDPA's: no substitution.
// CHECK-LABEL: func.func @zeroed_rows_by_another_test
// CHECK-NOT:   tn.sdpa

// -----
func.func @full_shape_splats(%q: tensor<3x5x8xf32>, %k: tensor<3x7x8xf32>, %v: tensor<3x7x2xf32>) -> tensor<3x5x2xf32> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<3x7x8xf32> -> tensor<3x8x7xf32>
  %s = tn.bmm %q, %kt : tensor<3x5x8xf32>, tensor<3x8x7xf32> -> tensor<3x5x7xf32>
  %c = tn.constant dense<2.0> : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %d = tn.div %s, %c : tensor<3x5x7xf32>, tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %p = tn.softmax %d dim = 2 : tensor<3x5x7xf32>
  %ninf = tn.constant dense<0xFF800000> : tensor<f32> -> tensor<f32>
  %isinf = tn.eq %d, %ninf : tensor<3x5x7xf32>, tensor<f32> -> tensor<3x5x7xi1>
  %dead = tn.all %isinf dims = [2] : tensor<3x5x7xi1> -> tensor<3x5x1xi1>
  %zeros = tn.constant dense<0.000000e+00> : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %safe = tn.where %dead, %zeros, %p : tensor<3x5x1xi1>, tensor<3x5x7xf32>, tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  %o = tn.bmm %safe, %v : tensor<3x5x7xf32>, tensor<3x7x2xf32> -> tensor<3x5x2xf32>
  func.return %o : tensor<3x5x2xf32>
}
// Constants of the full shape holding one value (as fold-constants leaves a broadcast scalar) count as scalars.
// CHECK-LABEL: func.func @full_shape_splats
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v scale = 5.000000e-01

// -----
func.func @bf16_scaled_as_imported(%q: tensor<2x5x8xbf16>, %k: tensor<2x7x8xbf16>, %v: tensor<2x7x8xbf16>, %keep: tensor<2x1x7xi1>) -> tensor<2x5x8xbf16> {
  %kt = tn.permute %k perm = [0, 2, 1] : tensor<2x7x8xbf16> -> tensor<2x8x7xbf16>
  %s = tn.bmm %q, %kt : tensor<2x5x8xbf16>, tensor<2x8x7xbf16> -> tensor<2x5x7xbf16>
  %w = tn.convert %s : tensor<2x5x7xbf16> -> tensor<2x5x7xf32>
  %c = tn.constant dense<4.0> : tensor<f32> -> tensor<f32>
  %d = tn.div %w, %c : tensor<2x5x7xf32>, tensor<f32> -> tensor<2x5x7xf32>
  %n = tn.convert %d {irc.op_rounding} : tensor<2x5x7xf32> -> tensor<2x5x7xbf16>
  %drop = tn.bitwise_not %keep : tensor<2x1x7xi1>
  %ninf = tn.constant dense<0xff80> : tensor<bf16> -> tensor<bf16>
  %m = tn.where %drop, %ninf, %n : tensor<2x1x7xi1>, tensor<bf16>, tensor<2x5x7xbf16> -> tensor<2x5x7xbf16>
  %p = tn.softmax %m dim = 2 : tensor<2x5x7xbf16>
  %o = tn.bmm %p, %v : tensor<2x5x7xbf16>, tensor<2x7x8xbf16> -> tensor<2x5x8xbf16>
  func.return %o : tensor<2x5x8xbf16>
}
// A bf16 division as the importer writes it (widened, divided in f32, rounded once) is the scale.
// CHECK-LABEL: func.func @bf16_scaled_as_imported
// CHECK-NEXT:  %{{.*}} = tn.sdpa %q, %k, %v mask %keep scale = 2.500000e-01 : {{.*}} -> tensor<2x5x8xbf16>
// CHECK-NEXT:  func.return
