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
