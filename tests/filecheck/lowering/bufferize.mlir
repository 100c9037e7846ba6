// RUN: irc-opt --split-input-file %s --stage loop -p bufferize | filecheck %s
// Tensors become buffers: graph outputs are allocated once and written by the op computing them,
// intermediates are placeholders (irc.intermediate) for plan-buffers, nests become kernels and launches.

func.func @mlp_layer(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %w2: tensor<3x16xf32>) -> tensor<4x3xf32> {
  %wt = tn.permute %w perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %mm = tn.mm %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = tn.add %mm, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %h = tn.relu %y : tensor<4x16xf32>
  %w2t = tn.permute %w2 perm = [1, 0] : tensor<3x16xf32> -> tensor<16x3xf32>
  %r = tn.mm %h, %w2t : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// Inputs are buffers of any strides; the transposed weight is a strided view; the matmul is an extern whose
// region says what it computes; its epilogue is a launched kernel; only the graph output is a real allocation.
// CHECK-LABEL: func.func @mlp_layer(%x: memref<4x8xf32, strided<[?, ?], offset: ?>>, %w: memref<16x8xf32, strided<[?, ?], offset: ?>>, %b: memref<16xf32, strided<[?], offset: ?>>, %w2: memref<3x16xf32, strided<[?, ?], offset: ?>>) -> memref<4x3xf32> {
// CHECK-NEXT:  %[[WT:.*]] = mem.view %w[affine_map<(d0, d1) -> (d1, d0)>] : memref<16x8xf32, strided<[?, ?], offset: ?>> -> memref<8x16xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT:  %[[MM:.*]] = mem.alloc {irc.intermediate} : memref<4x16xf32>
// CHECK-NEXT:  mem.extern ins(%x, %[[WT]] : {{.*}}) outs(%[[MM]] : memref<4x16xf32>) {
// CHECK-NEXT:  ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>):
// CHECK-NEXT:    %mm = tn.mm %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    mem.yield %mm : tensor<4x16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[H:.*]] = mem.alloc {irc.intermediate} : memref<4x16xf32>
// CHECK-NEXT:  mem.launch @kernel0 ins(%[[MM]], %b : memref<4x16xf32>, memref<16xf32, strided<[?], offset: ?>>) outs(%[[H]] : memref<4x16xf32>)
// CHECK:       %[[OUT:.*]] = mem.alloc : memref<4x3xf32>
// CHECK-NEXT:  mem.extern ins(%[[H]], %{{.*}} : {{.*}}) outs(%[[OUT]] : memref<4x3xf32>)
// CHECK:       func.return %[[OUT]] : memref<4x3xf32>
// CHECK:       func.func @kernel0(%0: memref<4x16xf32>, %1: memref<16xf32, strided<[?], offset: ?>>, %2: memref<4x16xf32>) {
// CHECK-NEXT:    loop.nest space = affine_map<() -> (4, 16)> iterators = ["parallel", "parallel"] outs(%2 : memref<4x16xf32>) {
// CHECK-NEXT:      loop.load %0[affine_map<(d0, d1) -> (d0, d1)>] : memref<4x16xf32> -> f32
// CHECK-NEXT:      loop.load %1[affine_map<(d0, d1) -> (d1)>] : memref<16xf32, strided<[?], offset: ?>> -> f32

// -----
func.func @outputs(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tn.exp %x : tensor<4x8xf32>
  func.return %e, %x, %e : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
// An output that is an input, or returned twice, gets its own copy.
// CHECK-LABEL: func.func @outputs
// CHECK-NEXT:  %[[E:.*]] = mem.alloc : memref<4x8xf32>
// CHECK-NEXT:  mem.launch @kernel0 ins(%x : {{.*}}) outs(%[[E]] : memref<4x8xf32>)
// CHECK-NEXT:  %[[X:.*]] = mem.alloc : memref<4x8xf32>
// CHECK-NEXT:  mem.launch @kernel1 ins(%x : {{.*}}) outs(%[[X]] : memref<4x8xf32>)
// CHECK-NEXT:  %[[E2:.*]] = mem.alloc : memref<4x8xf32>
// CHECK-NEXT:  mem.launch @kernel2 ins(%[[E]] : memref<4x8xf32>) outs(%[[E2]] : memref<4x8xf32>)
// CHECK-NEXT:  func.return %[[E]], %[[X]], %[[E2]]

// -----
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x1xf32> {
  %s = tn.sum %x dims = [1] : tensor<?x8xf32> -> tensor<?x1xf32>
  func.return %s : tensor<?x1xf32>
}
// A symbolic size is computed in the graph function and passed to the kernel as a symbol.
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:  %[[N:.*]] = mem.dim %x dim = 0
// CHECK-NEXT:  %[[O:.*]] = mem.alloc[%[[N]]] : memref<?x1xf32>
// CHECK-NEXT:  mem.launch @kernel0 ins(%x : {{.*}}) outs(%[[O]] : memref<?x1xf32>) symbols(%[[N]])
// CHECK:       func.func @kernel0(%0: memref<?x8xf32, strided<[?, ?], offset: ?>>, %1: memref<?x1xf32>, %2: index) {
// CHECK-NEXT:    loop.nest space = affine_map<()[s0] -> (s0, 8)> symbols(%2) iterators = ["parallel", "reduction"] outs(%1 : memref<?x1xf32>) {

// -----
func.func @conv_nhwc(%x: tensor<1x6x6x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x6x6x4xf32> {
  %c = tn.convolution %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 channels_last : tensor<1x6x6x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  %r = tn.relu %c : tensor<1x6x6x4xf32>
  func.return %r : tensor<1x6x6x4xf32>
}
// A channels-last convolution returns the library's own NHWC result (no out buffer, no copy into one).
// CHECK-LABEL: func.func @conv_nhwc
// CHECK:       %[[C:.*]] = mem.extern ins(%x, %w : {{.*}}) -> memref<1x6x6x4xf32> {
// CHECK:         tn.convolution {{.*}} channels_last
// CHECK:       mem.launch @{{.*}} ins(%[[C]] : memref<1x6x6x4xf32>)

// -----
func.func @embedding_grad(%g: tensor<3x4xf32>, %i: tensor<3xi64>) -> tensor<10x4xf32> {
  %t = tn.embedding_backward %g, %i padding_idx = -1 : tensor<3x4xf32>, tensor<3xi64> -> tensor<10x4xf32>
  %r = tn.neg %t : tensor<10x4xf32>
  func.return %r : tensor<10x4xf32>
}
// So does an embedding's gradient: torch's kernel allocates the zeroed table anyway.
// CHECK-LABEL: func.func @embedding_grad
// CHECK:       %[[T:.*]] = mem.extern ins(%g, %i : {{.*}}) -> memref<10x4xf32> {
// CHECK:         tn.embedding_backward
// CHECK:       mem.launch @{{.*}} ins(%[[T]] : memref<10x4xf32>)

// -----
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %r = tn.embedding %w[%i] : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}
// The bounds check is an extern that writes nothing (it only raises); the gather's kernel reads the index buffer itself.
// CHECK-LABEL: func.func @embedding
// CHECK-NEXT:  mem.extern ins(%i : memref<3xi64, strided<[?], offset: ?>>) outs(:) {
// CHECK-NEXT:  ^bb0(%[[I:.*]]: tensor<3xi64>):
// CHECK-NEXT:    tn.check_index %[[I]] bound = 10 error = "IndexError" message = "index out of range in self" : tensor<3xi64>
// CHECK-NEXT:    mem.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[OUT:.*]] = mem.alloc : memref<3x4xf32>
// CHECK-NEXT:  mem.launch @kernel0 ins(%i, %w : {{.*}}) outs(%[[OUT]] : memref<3x4xf32>)

// -----

func.func @first(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.exp %x : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

func.func @second(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.neg %x : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// Two functions of one module: their kernels are symbols of the one module, named apart (found by irc-fuzz's front
// door: both were @kernel0, a redefinition).
// CHECK-LABEL: func.func @first
// CHECK:         mem.launch @kernel0
// CHECK-LABEL: func.func @second
// CHECK:         mem.launch @kernel1
// CHECK:       func.func @kernel0
// CHECK:         math.exp
// CHECK:       func.func @kernel1
// CHECK:         arith.negf
