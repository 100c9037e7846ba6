// RUN: irc-opt --split-input-file %s --stage mem | filecheck %s
// Intermediates get slots of one arena by liveness (reuse, in-place writes); @main states the plan.

func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %w2: tensor<3x16xf32>) -> tensor<4x3xf32> {
  %wt = tn.permute %w perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %mm = tn.mm %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = tn.add %mm, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %h = tn.relu %y : tensor<4x16xf32>
  %w2t = tn.permute %w2 perm = [1, 0] : tensor<3x16xf32> -> tensor<16x3xf32>
  %r = tn.mm %h, %w2t : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// The bias + ReLU kernel reads the matmul's result only at the point it writes, and that result dies there:
// it writes in place (same slot), so two 256-byte intermediates need one 256-byte arena.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:  attributes {irc.plan = "arena 256 bytes for 2 intermediates of 512 bytes, 1 in place"}
// CHECK-NEXT:  %[[ARENA:.*]] = mem.arena : memref<256xi8>
// CHECK:       %[[MM:.*]] = mem.slot %[[ARENA]] offset = 0 : memref<256xi8> -> memref<4x16xf32>
// CHECK:       %[[H:.*]] = mem.slot %[[ARENA]] offset = 0 : memref<256xi8> -> memref<4x16xf32>
// CHECK-NEXT:  mem.launch @kernel0 ins(%[[MM]], %b : {{.*}}) outs(%[[H]] : memref<4x16xf32>)

// -----
func.func @reuse(%x: tensor<64xf32>, %w: tensor<64x64xf32>) -> tensor<64xf32> {
  %a = tn.exp %x : tensor<64xf32>
  %ar = tn.reshape %a : tensor<64xf32> -> tensor<1x64xf32>
  %b = tn.mm %ar, %w : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
  %c = tn.mm %b, %w : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
  %d = tn.mm %c, %w : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
  %e = tn.reshape %d : tensor<1x64xf32> -> tensor<64xf32>
  func.return %e : tensor<64xf32>
}
// A chain of matmuls (externs, never in place) ping-pongs between two slots. The last writes the returned buffer
// itself: the returned reshape of its result aliases it (no copy kernel, no fourth slot).
// CHECK-LABEL: func.func @reuse
// CHECK-SAME:  attributes {irc.plan = "arena 512 bytes for 3 intermediates of 768 bytes, 0 in place"}
// CHECK-NEXT:  %[[ARENA:.*]] = mem.arena : memref<512xi8>
// CHECK-NEXT:  mem.slot %[[ARENA]] offset = 0 : memref<512xi8> -> memref<64xf32>
// CHECK:       mem.slot %[[ARENA]] offset = 256 : memref<512xi8> -> memref<1x64xf32>
// CHECK:       mem.slot %[[ARENA]] offset = 0 : memref<512xi8> -> memref<1x64xf32>
// CHECK:       %[[D:.*]] = mem.alloc : memref<1x64xf32>
// CHECK:       %[[OUT:.*]] = mem.reshape %[[D]] : memref<1x64xf32> -> memref<64xf32>
// CHECK-NEXT:  func.return %[[OUT]]

// -----
func.func @two_outputs(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %w2: tensor<16x3xf32>) -> tensor<4x3xf32> {
  %m = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = tn.exp %m : tensor<4x16xf32>
  %b = tn.relu %m : tensor<4x16xf32>
  %ra = tn.mm %a, %w2 : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
  %rb = tn.mm %b, %w2 : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
  %r = tn.add %ra, %rb : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// One kernel writes exp and relu of the matmul, which dies there: only one of its two outputs may take the
// matmul's slot; the other needs its own (both in one slot gave wrong gradients of scatter_reduce prod).
// CHECK-LABEL: func.func @two_outputs
// CHECK-SAME:  attributes {irc.plan = "arena 576 bytes for 5 intermediates of 864 bytes, 1 in place"}
// CHECK:       %[[MM:.*]] = mem.slot %[[ARENA:.*]] offset = 0 : memref<576xi8> -> memref<4x16xf32>
// CHECK:       %[[A:.*]] = mem.slot %[[ARENA]] offset = 0 : memref<576xi8> -> memref<4x16xf32>
// CHECK-NEXT:  %[[B:.*]] = mem.slot %[[ARENA]] offset = 256 : memref<576xi8> -> memref<4x16xf32>
// CHECK-NEXT:  mem.launch @kernel0 ins(%[[MM]] : memref<4x16xf32>) outs(%[[A]], %[[B]] : memref<4x16xf32>, memref<4x16xf32>)

// -----
func.func @over_conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %w2: tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = tn.convolution %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %h = tn.relu %c : tensor<2x4x8x8xf32>
  %r = tn.convolution %h, %w2 stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<2x4x8x8xf32>
  func.return %r : tensor<2x4x8x8xf32>
}
// The convolution's result is torch's fresh tensor and dies at the relu: the relu rewrites it in place (the lines
// the library has just written) and the next convolution reads it there; no arena is left.
// CHECK-LABEL: func.func @over_conv
// CHECK-SAME:  attributes {irc.plan = "arena 0 bytes for 1 intermediates of 2048 bytes, 1 in place"}
// CHECK-NOT:   mem.arena
// CHECK:       %[[C:.*]] = mem.extern
// CHECK:       mem.launch @kernel0 ins(%[[C]] : memref<2x8x8x4xf32>) outs(%[[C]] : memref<2x8x8x4xf32>)
// CHECK-NEXT:  mem.extern ins(%[[C]], %w2

// -----
func.func @conv_read_later(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %w2: tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = tn.convolution %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %h = tn.relu %c : tensor<2x4x8x8xf32>
  %r = tn.convolution %h, %w2 stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<2x4x8x8xf32>
  %o = tn.mul %r, %c : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  func.return %o : tensor<2x4x8x8xf32>
}
// The convolution's result is read again after the relu: the relu writes a slot of its own.
// CHECK-LABEL: func.func @conv_read_later
// CHECK-SAME:  attributes {irc.plan = "arena 2048 bytes for 1 intermediates of 2048 bytes, 0 in place"}
// CHECK:       %[[C:.*]] = mem.extern
// CHECK:       %[[H:.*]] = mem.slot
// CHECK-NEXT:  mem.launch @kernel0 ins(%[[C]] : memref<2x8x8x4xf32>) outs(%[[H]] : memref<2x8x8x4xf32>)
// CHECK:       mem.launch @kernel1 ins(%{{.*}}, %[[C]] :
