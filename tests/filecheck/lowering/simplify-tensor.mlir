// RUN: irc-opt --split-input-file %s -p simplify-tensor,dce | filecheck %s
// simplify-tensor: reshapes of reshapes fold, and a reshape that merges dims of a permute moves before it when the
// merged dims are neighbours, in order, in the permute's input (the merge is then free and the permute a view).

func.func @heads_of_transposed_scores(%x: tensor<16x8x128x64xf32>) -> tensor<128x64x128xf32> {
  %t = tn.permute %x perm = [0, 1, 3, 2] : tensor<16x8x128x64xf32> -> tensor<16x8x64x128xf32>
  %r = tn.reshape %t : tensor<16x8x64x128xf32> -> tensor<128x64x128xf32>
  func.return %r : tensor<128x64x128xf32>
}
// (B, H, S, D)^T merged to (B*H, D, S): merge B and H on x, then transpose the last two dims.
// CHECK-LABEL: func.func @heads_of_transposed_scores
// CHECK-NEXT:  %{{.*}} = tn.reshape %x : tensor<16x8x128x64xf32> -> tensor<128x128x64xf32>
// CHECK-NEXT:  %{{.*}} = tn.permute %{{.*}} perm = [0, 2, 1] : tensor<128x128x64xf32> -> tensor<128x64x128xf32>
// CHECK-NEXT:  func.return

// -----
func.func @split_heads_then_batch(%x: tensor<128x16x8x32xf32>) -> tensor<128x128x32xf32> {
  %t = tn.permute %x perm = [1, 2, 0, 3] : tensor<128x16x8x32xf32> -> tensor<16x8x128x32xf32>
  %r = tn.reshape %t : tensor<16x8x128x32xf32> -> tensor<128x128x32xf32>
  func.return %r : tensor<128x128x32xf32>
}
// nn.MultiheadAttention's q: (S, B, H, D) -> (B*H, S, D); B and H are x's dims 1 and 2.
// CHECK-LABEL: func.func @split_heads_then_batch
// CHECK-NEXT:  %{{.*}} = tn.reshape %x : tensor<128x16x8x32xf32> -> tensor<128x128x32xf32>
// CHECK-NEXT:  %{{.*}} = tn.permute %{{.*}} perm = [1, 0, 2] : tensor<128x128x32xf32> -> tensor<128x128x32xf32>

// -----
func.func @unit_dims_go_anywhere(%x: tensor<1x128x12x64xf32>) -> tensor<12x128x1x64xf32> {
  %t = tn.permute %x perm = [0, 2, 1, 3] : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
  %r = tn.reshape %t : tensor<1x12x128x64xf32> -> tensor<12x128x1x64xf32>
  func.return %r : tensor<12x128x1x64xf32>
}
// Batch 1 (BERT-base 1x128): the unit dims neither block the move nor get lost.
// CHECK-LABEL: func.func @unit_dims_go_anywhere
// CHECK-NEXT:  %{{.*}} = tn.reshape %x : tensor<1x128x12x64xf32> -> tensor<128x12x64x1xf32>
// CHECK-NEXT:  %{{.*}} = tn.permute %{{.*}} perm = [1, 0, 3, 2] : tensor<128x12x64x1xf32> -> tensor<12x128x1x64xf32>

// -----
func.func @merge_of_transposed_dims_stays(%x: tensor<4x6x5xf32>) -> tensor<4x30xf32> {
  %t = tn.permute %x perm = [0, 2, 1] : tensor<4x6x5xf32> -> tensor<4x5x6xf32>
  %r = tn.reshape %t : tensor<4x5x6xf32> -> tensor<4x30xf32>
  func.return %r : tensor<4x30xf32>
}
// Merging dims that the permute swapped moves data: nothing to fold.
// CHECK-LABEL: func.func @merge_of_transposed_dims_stays
// CHECK-NEXT:  %t = tn.permute %x perm = [0, 2, 1]
// CHECK-NEXT:  %r = tn.reshape %t

// -----
func.func @splits_stay(%x: tensor<4x30xf32>) -> tensor<30x2x2xf32> {
  %t = tn.permute %x perm = [1, 0] : tensor<4x30xf32> -> tensor<30x4xf32>
  %r = tn.reshape %t : tensor<30x4xf32> -> tensor<30x2x2xf32>
  func.return %r : tensor<30x2x2xf32>
}
// CHECK-LABEL: func.func @splits_stay
// CHECK-NEXT:  %t = tn.permute %x perm = [1, 0]
// CHECK-NEXT:  %r = tn.reshape %t

// -----
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %a = tn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = tn.reshape %a : tensor<6x4xf32> -> tensor<24xf32>
  func.return %b : tensor<24xf32>
}
// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-NEXT:  %b = tn.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>

// -----
// Powers of the constant exponents ATen's pow kernel writes out become those expressions (eager's numbers, no
// exp/log per element); other exponents, and half precision (a pow in ATen too), stay powers.
func.func @small_exponents(%x: tensor<4x8xf32>, %h: tensor<4x8xf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf16>) {
  %c3 = tn.constant dense<3.000000e+00> : tensor<f32> -> tensor<f32>
  %cube = tn.pow %x, %c3 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %cm2 = tn.constant dense<-2.000000e+00> : tensor<4x8xf32> -> tensor<4x8xf32>
  %inv2 = tn.pow %x, %cm2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %ch = tn.constant dense<-5.000000e-01> : tensor<f32> -> tensor<f32>
  %rs = tn.pow %x, %ch : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %c25 = tn.constant dense<2.500000e+00> : tensor<f32> -> tensor<f32>
  %other = tn.pow %x, %c25 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %self = tn.pow %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c3h = tn.constant dense<3.000000e+00> : tensor<f16> -> tensor<f16>
  %half = tn.pow %h, %c3h : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  func.return %cube, %inv2, %rs, %other, %self, %half : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf16>
}
// CHECK-LABEL: func.func @small_exponents
// CHECK-NEXT:  %[[SQ:[^ ]+]] = tn.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[CUBE:[^ ]+]] = tn.mul %[[SQ]], %x
// CHECK-NEXT:  %[[SQ2:[^ ]+]] = tn.mul %x, %x
// CHECK-NEXT:  %[[INV2:[^ ]+]] = tn.reciprocal %[[SQ2]]
// CHECK-NEXT:  %rs = tn.rsqrt %x
// CHECK-NEXT:  %c25 = tn.constant
// CHECK-NEXT:  %other = tn.pow %x, %c25
// CHECK-NEXT:  %self = tn.pow %x, %x
// CHECK-NEXT:  %c3h = tn.constant
// CHECK-NEXT:  %half = tn.pow %h, %c3h
// CHECK-NEXT:  func.return %[[CUBE]], %[[INV2]], %rs, %other, %self, %half

// -----
func.func @pool_of_relu(%x: tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32> {
  %r = tn.relu %x : tensor<2x4x9x9xf32>
  %p, %i = tn.max_pool2d %r kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>
  func.return %p : tensor<2x4x5x5xf32>
}
// relu is non-decreasing: the pool reads x and the relu its result (a quarter of the elements here).
// CHECK-LABEL: func.func @pool_of_relu
// CHECK-NEXT:  %{{.*}}, %{{.*}} = tn.max_pool2d %x kernel = [3, 3]
// CHECK-NEXT:  %[[R:.*]] = tn.relu %{{.*}} : tensor<2x4x5x5xf32>
// CHECK-NEXT:  func.return %[[R]]

// -----
func.func @pool_of_relu_whose_indices_are_read(%x: tensor<2x4x9x9xf32>) -> (tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>, tensor<2x4x5x5xf32>, tensor<2x4x9x9xf32>) {
  %r = tn.relu %x : tensor<2x4x9x9xf32>
  %p, %i = tn.max_pool2d %r kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>
  %r2 = tn.relu %x : tensor<2x4x9x9xf32>
  %p2, %i2 = tn.max_pool2d %r2 kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>
  func.return %p, %i, %p2, %r2 : tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>, tensor<2x4x5x5xf32>, tensor<2x4x9x9xf32>
}
// The first maximum of a window of relus is not the first of its inputs (negatives tie at 0), and a relu read
// elsewhere is computed anyway: both pools keep reading their relus.
// CHECK-LABEL: func.func @pool_of_relu_whose_indices_are_read
// CHECK-NEXT:  %[[R:.*]] = tn.relu %x
// CHECK-NEXT:  %{{.*}}, %{{.*}} = tn.max_pool2d %[[R]]
// CHECK-NEXT:  %[[R2:.*]] = tn.relu %x
// CHECK-NEXT:  %{{.*}}, %{{.*}} = tn.max_pool2d %[[R2]]

// -----

// A whole large tensor's min and max (dynamic quantization's choose_qparams): each row first, on every thread, then
// the rows' results. A small tensor, a float sum (its rounding would change) and a partial reduction stay.
func.func @whole_reductions(%x: tensor<1x128x3072xf32>, %small: tensor<64x64xf32>, %b: tensor<4x128x256xi1>) -> (tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1xf32>, tensor<1x1x1xf32>, tensor<1x128x1xf32>, tensor<1x1x1xi1>) {
  %lo = tn.amin %x dims = [0, 1, 2] : tensor<1x128x3072xf32> -> tensor<1x1x1xf32>
  %hi = tn.amax %x dims = [0, 1, 2] : tensor<1x128x3072xf32> -> tensor<1x1x1xf32>
  %s = tn.amax %small dims = [0, 1] : tensor<64x64xf32> -> tensor<1x1xf32>
  %t = tn.sum %x dims = [0, 1, 2] : tensor<1x128x3072xf32> -> tensor<1x1x1xf32>
  %r = tn.amax %x dims = [2] : tensor<1x128x3072xf32> -> tensor<1x128x1xf32>
  %a = tn.any %b dims = [0, 1, 2] : tensor<4x128x256xi1> -> tensor<1x1x1xi1>
  func.return %lo, %hi, %s, %t, %r, %a : tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1xf32>, tensor<1x1x1xf32>, tensor<1x128x1xf32>, tensor<1x1x1xi1>
}
// CHECK-LABEL: func.func @whole_reductions
// CHECK-NEXT:  %[[L:.*]] = tn.amin %x dims = [2] : tensor<1x128x3072xf32> -> tensor<1x128x1xf32>
// CHECK-NEXT:  %[[LO:.*]] = tn.amin %[[L]] dims = [0, 1, 2] : tensor<1x128x1xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:  %[[H:.*]] = tn.amax %x dims = [2] : tensor<1x128x3072xf32> -> tensor<1x128x1xf32>
// CHECK-NEXT:  %[[HI:.*]] = tn.amax %[[H]] dims = [0, 1, 2] : tensor<1x128x1xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:  %s = tn.amax %small dims = [0, 1]
// CHECK-NEXT:  %t = tn.sum %x dims = [0, 1, 2]
// CHECK-NEXT:  %r = tn.amax %x dims = [2]
// CHECK-NEXT:  %[[A:.*]] = tn.any %b dims = [2] : tensor<4x128x256xi1> -> tensor<4x128x1xi1>
// CHECK-NEXT:  %[[AA:.*]] = tn.any %[[A]] dims = [0, 1, 2] : tensor<4x128x1xi1> -> tensor<1x1x1xi1>
// CHECK-NEXT:  func.return %[[LO]], %[[HI]], %s, %t, %r, %[[AA]]

// -----

// A runtime size: how many elements is unknown, so the reduction stays whole.
func.func @whole_reduction_of_runtime_size(%x: tensor<?x3072xf32>) -> tensor<1x1xf32> {
  %m = tn.amax %x dims = [0, 1] : tensor<?x3072xf32> -> tensor<1x1xf32>
  func.return %m : tensor<1x1xf32>
}
// CHECK-LABEL: func.func @whole_reduction_of_runtime_size
// CHECK-NEXT:  %m = tn.amax %x dims = [0, 1] : tensor<?x3072xf32> -> tensor<1x1xf32>
// CHECK-NEXT:  func.return %m

// -----
// A batched product by one matrix broadcast over the batch (a linear layer on a transposed 3-D input) is one product
// of all the rows (a 1xKxN matrix reshaped to KxN first); a matrix that differs per batch, or one whose own dims
// the expand broadcasts, stays batched.
func.func @bmm_by_one_matrix(%x: tensor<128x16x256xbf16>, %w: tensor<256x768xbf16>, %w3: tensor<1x256x768xbf16>, %per: tensor<128x256x768xbf16>, %one: tensor<1x1xbf16>) -> (tensor<128x16x768xbf16>, tensor<128x16x768xbf16>, tensor<128x16x768xbf16>, tensor<128x16x768xbf16>) {
  %e = tn.expand %w : tensor<256x768xbf16> -> tensor<128x256x768xbf16>
  %y = tn.bmm %x, %e : tensor<128x16x256xbf16>, tensor<128x256x768xbf16> -> tensor<128x16x768xbf16>
  %e3 = tn.expand %w3 : tensor<1x256x768xbf16> -> tensor<128x256x768xbf16>
  %y3 = tn.bmm %x, %e3 : tensor<128x16x256xbf16>, tensor<128x256x768xbf16> -> tensor<128x16x768xbf16>
  %z = tn.bmm %x, %per : tensor<128x16x256xbf16>, tensor<128x256x768xbf16> -> tensor<128x16x768xbf16>
  %e1 = tn.expand %one : tensor<1x1xbf16> -> tensor<128x256x768xbf16>
  %s = tn.bmm %x, %e1 : tensor<128x16x256xbf16>, tensor<128x256x768xbf16> -> tensor<128x16x768xbf16>
  func.return %y, %y3, %z, %s : tensor<128x16x768xbf16>, tensor<128x16x768xbf16>, tensor<128x16x768xbf16>, tensor<128x16x768xbf16>
}
// CHECK-LABEL: func.func @bmm_by_one_matrix
// CHECK-NEXT:  %[[R:.*]] = tn.reshape %x : tensor<128x16x256xbf16> -> tensor<2048x256xbf16>
// CHECK-NEXT:  %[[P:.*]] = tn.mm %[[R]], %w : tensor<2048x256xbf16>, tensor<256x768xbf16> -> tensor<2048x768xbf16>
// CHECK-NEXT:  %[[Y:.*]] = tn.reshape %[[P]] : tensor<2048x768xbf16> -> tensor<128x16x768xbf16>
// CHECK-NEXT:  %[[W:.*]] = tn.reshape %w3 : tensor<1x256x768xbf16> -> tensor<256x768xbf16>
// CHECK-NEXT:  %[[R3:.*]] = tn.reshape %x : tensor<128x16x256xbf16> -> tensor<2048x256xbf16>
// CHECK-NEXT:  %[[P3:.*]] = tn.mm %[[R3]], %[[W]] : tensor<2048x256xbf16>, tensor<256x768xbf16> -> tensor<2048x768xbf16>
// CHECK-NEXT:  %[[Y3:.*]] = tn.reshape %[[P3]] : tensor<2048x768xbf16> -> tensor<128x16x768xbf16>
// CHECK-NEXT:  %z = tn.bmm %x, %per
// CHECK-NEXT:  %e1 = tn.expand %one
// CHECK-NEXT:  %s = tn.bmm %x, %e1
// CHECK-NEXT:  func.return %[[Y]], %[[Y3]], %z, %s

// -----
// A narrow tanh-form gelu written out (GPT-2's: x/2 as the importer writes a bf16 times a float32 scalar, widened and
// rounded back) becomes x * sigmoid(2t): the same function, cheaper and without the sum's cancellation for x < 0.
func.func @gelu_tanh_written_out(%x: tensor<4x8xbf16>, %t: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %w = tn.convert %x : tensor<4x8xbf16> -> tensor<4x8xf32>
  %h = tn.constant dense<5.000000e-01> : tensor<f32> -> tensor<f32>
  %m = tn.mul %w, %h : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %a = tn.convert %m {irc.op_rounding} : tensor<4x8xf32> -> tensor<4x8xbf16>
  %one = tn.constant dense<1.000000e+00> : tensor<bf16> -> tensor<bf16>
  %th = tn.tanh %t : tensor<4x8xbf16>
  %p = tn.add %one, %th : tensor<bf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %r = tn.mul %p, %a : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  func.return %r : tensor<4x8xbf16>
}
// CHECK-LABEL: func.func @gelu_tanh_written_out
// CHECK-NEXT:  %[[TWO:.*]] = tn.constant dense<2.000000e+00> : tensor<bf16> -> tensor<bf16>
// CHECK-NEXT:  %[[T2:.*]] = tn.mul %t, %[[TWO]] : tensor<4x8xbf16>, tensor<bf16> -> tensor<4x8xbf16>
// CHECK-NEXT:  %[[S:.*]] = tn.sigmoid %[[T2]] : tensor<4x8xbf16>
// CHECK-NEXT:  %{{.*}} = tn.mul %x, %[[S]] : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
// CHECK-NEXT:  func.return

// -----
// In float32 it stays written out (fold-bias knows that form as tn.addmm's gelu_tanh epilogue), and so does a
// tanh another op also reads.
func.func @gelu_tanh_kept(%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %h = tn.constant dense<5.000000e-01> : tensor<f32> -> tensor<f32>
  %one = tn.constant dense<1.000000e+00> : tensor<f32> -> tensor<f32>
  %a = tn.mul %x, %h : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %th = tn.tanh %x : tensor<4x8xf32>
  %p = tn.add %th, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %r = tn.mul %a, %p : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %hb = tn.constant dense<5.000000e-01> : tensor<bf16> -> tensor<bf16>
  %oneb = tn.constant dense<1.000000e+00> : tensor<bf16> -> tensor<bf16>
  %ab = tn.mul %y, %hb : tensor<4x8xbf16>, tensor<bf16> -> tensor<4x8xbf16>
  %thb = tn.tanh %y : tensor<4x8xbf16>
  %pb = tn.add %thb, %oneb : tensor<4x8xbf16>, tensor<bf16> -> tensor<4x8xbf16>
  %rb = tn.mul %ab, %pb : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  func.return %r, %rb, %thb : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16>
}
// CHECK-LABEL: func.func @gelu_tanh_kept
// CHECK-NOT:   tn.sigmoid
// CHECK:       func.return
