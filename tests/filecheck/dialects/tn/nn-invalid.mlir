// RUN: irc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of the linalg, nn, norm and indexing tn ops, one case per chunk; each CHECK names the
// rejected op's line and column and the message, like MLIR's `expected-error`.

func.func @mm_contraction(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  %r = tn.mm %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.mm: contraction sizes 8 and 7 differ
  func.return %r : tensor<4x16xf32>
}

// -----

func.func @bmm_rank(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %r = tn.bmm %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.bmm: operands must have rank 3, got 2 and 2
  func.return %r : tensor<4x16xf32>
}

// -----

func.func @bmm_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<2x4x16xf32> {
  %r = tn.bmm %a, %b : tensor<2x4x8xf32>, tensor<3x8x16xf32> -> tensor<2x4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.bmm: batch sizes 2 and 3 differ
  func.return %r : tensor<2x4x16xf32>
}

// -----

func.func @conv_channels(%x: tensor<2x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %r = tn.convolution %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<2x4x6x6xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.convolution: input has 3 channels, the weight expects 2
  func.return %r : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_result(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %r = tn.convolution %x, %w stride = [2, 2] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.convolution: result shape [2, 4, 6, 6] does not match expected [2, 4, 3, 3]
  func.return %r : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_stride_length(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %r = tn.convolution %x, %w stride = [1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.convolution: stride needs 2 entries, got 1
  func.return %r : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_groups(%x: tensor<2x4x8x8xf32>, %w: tensor<5x2x3x3xf32>) -> tensor<2x5x6x6xf32> {
  %r = tn.convolution %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 2 : tensor<2x4x8x8xf32>, tensor<5x2x3x3xf32> -> tensor<2x5x6x6xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.convolution: 5 output channels do not split into 2 groups
  func.return %r : tensor<2x5x6x6xf32>
}

// -----

func.func @conv_bias(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<2x4x6x6xf32> {
  %r = tn.convolution %x, %w, %b stride = [1, 1] padding = [0, 0] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<2x4x6x6xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.convolution: bias shape [3] does not match expected [4]
  func.return %r : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_backward_results(%g: tensor<2x4x6xf32>, %x: tensor<2x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x3x8xf32> {
  %gx = tn.convolution_backward %g, %x, %w stride = [1] padding = [0] dilation = [1] output_padding = [0] groups = 1 output_mask = [1, 1, 0] : tensor<2x4x6xf32>, tensor<2x3x8xf32>, tensor<4x3x3xf32> -> tensor<2x3x8xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.convolution_backward: 1 results for 2 requested gradients
  func.return %gx : tensor<2x3x8xf32>
}

// -----

func.func @max_pool_rank(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  %r, %i = tn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<8x8xf32> -> tensor<4x4xf32>, tensor<4x4xi64>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.max_pool2d: input must be (C, H, W) or (N, C, H, W), got rank 2
  func.return %r : tensor<4x4xf32>
}

// -----

func.func @max_pool_padding(%x: tensor<1x8x8xf32>) -> tensor<1x6x4xf32> {
  %r, %i = tn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [2, 0] dilation = [1, 1] : tensor<1x8x8xf32> -> tensor<1x6x4xf32>, tensor<1x6x4xi64>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.max_pool2d: needs kernel, stride, dilation >= 1 and 0 <= padding <= kernel / 2
  func.return %r : tensor<1x6x4xf32>
}

// -----

func.func @avg_pool_ceil(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %r = tn.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [0, 0] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.avg_pool2d: result shape [1, 3, 4, 4] does not match expected [1, 3, 3, 3]
  func.return %r : tensor<1x3x4x4xf32>
}

// -----

func.func @avg_pool_channels_last_unbatched(%x: tensor<8x8x3xf32>) -> tensor<4x4x3xf32> {
  %r = tn.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] channels_last : tensor<8x8x3xf32> -> tensor<4x4x3xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.avg_pool2d: channels_last needs an (N, H, W, C) input
  func.return %r : tensor<4x4x3xf32>
}

// -----

func.func @adaptive_size(%x: tensor<2x3x7x7xf32>) -> tensor<2x3x1x1xf32> {
  %r = tn.adaptive_avg_pool2d %x output_size = [2, 2] : tensor<2x3x7x7xf32> -> tensor<2x3x1x1xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.adaptive_avg_pool2d: result shape [2, 3, 1, 1] does not match expected [2, 3, 2, 2]
  func.return %r : tensor<2x3x1x1xf32>
}

// -----

func.func @layer_norm_stats(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r, %m, %s = tn.layer_norm %x axis = 1 eps = 1.0e-05 : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.layer_norm: mean shape [4] does not match expected [4, 1]
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @layer_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) -> tensor<4x8xf32> {
  %r, %m, %s = tn.layer_norm %x weight %w axis = 1 eps = 1.0e-05 : tensor<4x8xf32> weight tensor<4xf32> -> tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.layer_norm: weight shape [4] does not match expected [8]
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @batch_norm_stats(%x: tensor<2x3x4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %r = tn.batch_norm_inference %x stats %m, %v eps = 1.0e-05 : tensor<2x3x4xf32> stats tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.batch_norm_inference: running_mean shape [4] does not match expected [3]
  func.return %r : tensor<2x3x4xf32>
}

// -----

func.func @batch_norm_int(%x: tensor<2x3xi32>, %m: tensor<3xi32>, %v: tensor<3xi32>) -> tensor<2x3xi32> {
  %r, %sm, %sr, %rm, %rv = tn.batch_norm_training %x stats %m, %v momentum = 0.1 eps = 1.0e-05 : tensor<2x3xi32> stats tensor<3xi32>, tensor<3xi32> -> tensor<2x3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.batch_norm_training: needs a float element type, got i32
  func.return %r : tensor<2x3xi32>
}

// -----

func.func @softmax_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.softmax %x dim = 2 : tensor<4x8xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.softmax: dims [2] out of range for rank 2
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @embedding_float_ids(%w: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  %r = tn.embedding %w[%i] : tensor<10x4xf32>, tensor<3xf32> -> tensor<3x4xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.embedding: index operands need integer elements, got f32
  func.return %r : tensor<3x4xf32>
}

// -----

func.func @embedding_backward_size(%g: tensor<3x4xf32>, %i: tensor<3xi64>) -> tensor<?x4xf32> {
  %r = tn.embedding_backward %g, %i padding_idx = -1 : tensor<3x4xf32>, tensor<3xi64> -> tensor<?x4xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.embedding_backward: num_weights is given exactly when the table size is `?`
  func.return %r : tensor<?x4xf32>
}

// -----

func.func @check_index_bound_and_size(%i: tensor<3xi64>, %n: index) -> tensor<3xi64> {
  %r = tn.check_index %i size %n bound = 4 error = "IndexError" message = "index out of range in self" : tensor<3xi64>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.check_index: needs a static `bound` or a `size` operand, not both
  func.return %r : tensor<3xi64>
}

// -----

func.func @check_index_error(%i: tensor<3xi64>) -> tensor<3xi64> {
  %r = tn.check_index %i bound = 4 error = "ValueError" message = "index out of range in self" : tensor<3xi64>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.check_index: error must be one of IndexError, RuntimeError
  func.return %r : tensor<3xi64>
}

// -----

func.func @gather_rank(%x: tensor<4x8xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  %r = tn.gather %x[%i] dim = 1 : tensor<4x8xf32>, tensor<4xi64> -> tensor<4xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.gather: index rank 1 differs from input rank 2
  func.return %r : tensor<4xf32>
}

// -----

func.func @gather_oversize(%x: tensor<4x8xf32>, %i: tensor<5x2xi64>) -> tensor<5x2xf32> {
  %r = tn.gather %x[%i] dim = 1 : tensor<4x8xf32>, tensor<5x2xi64> -> tensor<5x2xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.gather: index shape [5, 2] exceeds input shape [4, 8] off dim 1
  func.return %r : tensor<5x2xf32>
}

// -----

func.func @index_dims(%x: tensor<4x5x6xf32>, %i: tensor<3xi64>, %j: tensor<3xi64>) -> tensor<3x5xf32> {
  %r = tn.index %x[%i, %j] dims = [2, 0] : tensor<4x5x6xf32>[tensor<3xi64>, tensor<3xi64>] -> tensor<3x5xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.index: dims must be increasing and name one dim per index operand
  func.return %r : tensor<3x5xf32>
}

// -----

func.func @index_result(%x: tensor<4x5x6xf32>, %i: tensor<3xi64>, %j: tensor<3xi64>) -> tensor<3x5xf32> {
  %r = tn.index %x[%i, %j] dims = [0, 1] : tensor<4x5x6xf32>[tensor<3xi64>, tensor<3xi64>] -> tensor<3x5xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.index: result shape [3, 5] does not match expected [3, 6]
  func.return %r : tensor<3x5xf32>
}

// -----

func.func @scatter_src(%x: tensor<4x8xf32>, %i: tensor<4x2xi64>, %s: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %r = tn.scatter %x[%i], %s dim = 1 : tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x1xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.scatter: src shape [4, 1] is smaller than index shape [4, 2]
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @scatter_reduce_kind(%x: tensor<8xf32>, %i: tensor<5xi64>, %s: tensor<5xf32>) -> tensor<8xf32> {
  %r = tn.scatter_reduce %x[%i], %s dim = 0 reduce = "max" : tensor<8xf32>, tensor<5xi64>, tensor<5xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.scatter_reduce: reduce must be one of sum, prod, mean, amax, amin
  func.return %r : tensor<8xf32>
}

// -----

func.func @index_put_values(%x: tensor<8x4xf32>, %i: tensor<3xi64>, %v: tensor<2x4xf32>) -> tensor<8x4xf32> {
  %r = tn.index_put %x[%i], %v dims = [0] : tensor<8x4xf32>[tensor<3xi64>], tensor<2x4xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.index_put: shapes {{.*}} do not broadcast
  func.return %r : tensor<8x4xf32>
}

// -----

func.func @select_scatter_index(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = tn.select_scatter %x, %s dim = 0 index = 4 : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.select_scatter: index 4 out of range for size 4
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @slice_scatter_src(%x: tensor<4x8xf32>, %s: tensor<4x3xf32>) -> tensor<4x8xf32> {
  %r = tn.slice_scatter %x, %s dim = 1 start = 0 end = 8 step = 2 : tensor<4x8xf32>, tensor<4x3xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.slice_scatter: src shape [4, 3] does not match expected [4, 4]
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @sdpa_heads_last_rank(%q: tensor<4x8x16xf32>) -> tensor<8x4x16xf32> {
  %r = tn.sdpa %q, %q, %q scale = 0.25 heads_last : tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32> -> tensor<8x4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.sdpa: heads_last needs a heads dim (rank >= 4), got rank 3
  func.return %r : tensor<8x4x16xf32>
}

// -----

func.func @sdpa_heads_last_shape(%q: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %r = tn.sdpa %q, %q, %q scale = 0.25 heads_last : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.sdpa: result
  func.return %r : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_logsumexp_heads_last_shape(%q: tensor<2x4x8x16xf32>) -> tensor<2x4x8xf32> {
  %r, %l = tn.sdpa %q, %q, %q scale = 0.25 heads_last : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>, tensor<2x4x8xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.sdpa: logsumexp
  func.return %l : tensor<2x4x8xf32>
}

// -----

func.func @sdpa_backward_heads_last_rank(%q: tensor<4x8x16xf32>, %l: tensor<4x8xf32>) -> tensor<8x4x16xf32> {
  %dq, %dk, %dv = tn.sdpa_backward %q, %q, %q, %q, %q, %l scale = 0.25 heads_last : tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8xf32> -> tensor<8x4x16xf32>, tensor<8x4x16xf32>, tensor<8x4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.sdpa_backward: heads_last needs a heads dim (rank >= 4), got rank 3
  func.return %dq : tensor<8x4x16xf32>
}

// -----

func.func @sdpa_backward_gradient_shape(%q: tensor<2x4x8x16xf32>, %l: tensor<2x4x8xf32>) -> tensor<2x4x8x16xf32> {
  %dq, %dk, %dv = tn.sdpa_backward %q, %q, %q, %q, %q, %l scale = 0.25 heads_last : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> -> tensor<2x4x8x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.sdpa_backward: the query gradient
  func.return %dq : tensor<2x4x8x16xf32>
}

// -----

func.func @addmm_bias(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4xf32>) -> tensor<4x16xf32> {
  %r = tn.addmm %a, %b bias %c : tensor<4x8xf32>, tensor<8x16xf32>, tensor<4xf32> -> tensor<4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.addmm: bias shape [4] does not match expected [16]
  func.return %r : tensor<4x16xf32>
}

// -----

func.func @addmm_epilogue(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> {
  %r = tn.addmm %a, %b bias %c epilogue "relu" : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK: nn-invalid.mlir:[[# @LINE - 1]]:3: error: tn.addmm: epilogue must be one of gelu, gelu_tanh, got 'relu'
  func.return %r : tensor<4x16xf32>
}
