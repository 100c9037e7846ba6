// RUN: irc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not irc-opt %s 2>&1 | filecheck %s --check-prefix=FIRST

// Verifier errors of tn ops, one case per split-input-file chunk. Each CHECK line sits under the op that
// must be rejected and names its line, column and message, like MLIR's `expected-error`.
// Without --split-input-file irc-opt stops at the first error and exits 1:
// FIRST: invalid.mlir:[[# @LINE + 4]]:3: error: tn.add: shapes {{.*}} do not broadcast
// FIRST-NOT: error:

func.func @add_no_broadcast(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %r = tn.add %a, %b : tensor<4xf32>, tensor<3xf32> -> tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.add: shapes {{.*}} do not broadcast
  func.return %r : tensor<4xf32>
}

// -----

func.func @add_mixed_elements(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  %r = tn.add %a, %b : tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.add: operand element types f32 and i32 differ
  func.return %r : tensor<4xf32>
}

// -----

func.func @add_wrong_result_shape(%a: tensor<4x1xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %r = tn.add %a, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x1xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.add: result shape [4, 1] does not match expected [4, 8]
  func.return %r : tensor<4x1xf32>
}

// -----

func.func @eq_not_i1(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.eq %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.eq: result element type f32 is wrong
  func.return %r : tensor<4xf32>
}

// -----

func.func @neg_result_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  %r = "tn.neg"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.neg: result 'result' at position 0 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// -----

func.func @neg_not_tensor(%x: f32) -> f32 {
  %r = "tn.neg"(%x) : (f32) -> f32
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.neg: operand 'input' at position 0 does not verify: f32 should be of base attribute tensor
  func.return %r : f32
}

// -----

func.func @isnan_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.isnan %x : tensor<4xf32> -> tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.isnan: result must have i1 elements
  func.return %r : tensor<4xf32>
}

// -----

func.func @gelu_mode(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.gelu %x approximate = "fast" : tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.gelu: approximate must be "none" or "tanh"
  func.return %r : tensor<4xf32>
}

// -----

func.func @where_cond(%c: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.where %c, %a, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.where: condition must have i1 elements
  func.return %r : tensor<4xf32>
}

// -----

func.func @convert_shape(%x: tensor<4xf32>) -> tensor<5xi64> {
  %r = tn.convert %x : tensor<4xf32> -> tensor<5xi64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.convert: result shape [5] does not match expected [4]
  func.return %r : tensor<5xi64>
}

// -----

func.func @sum_dims(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.sum %x dims = [2] : tensor<4x8xf32> -> tensor<4x1xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.sum: dims [2] out of range for rank 2
  func.return %r : tensor<4x1xf32>
}

// -----

func.func @sum_result(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = tn.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.sum: result shape [4] does not match expected [4, 1]
  func.return %r : tensor<4xf32>
}

// -----

func.func @argmax_two_dims(%x: tensor<4x8xf32>) -> tensor<1x1xi64> {
  %r = tn.argmax %x dims = [0, 1] : tensor<4x8xf32> -> tensor<1x1xi64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.argmax: reduces exactly one dim
  func.return %r : tensor<1x1xi64>
}

// -----

func.func @cumsum_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.cumsum %x dim = 2 : tensor<4x8xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.cumsum: dims [2] out of range for rank 2
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @topk_k(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {
  %v, %i = tn.topk %x k = 9 dim = 1 largest sorted : tensor<4x8xf32> -> tensor<4x9xf32>, tensor<4x9xi64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.topk: k must lie in [0, 8]
  func.return %v : tensor<4x9xf32>
}

// -----

func.func @kthvalue_k(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %v, %i = tn.kthvalue %x k = 0 dim = 1 : tensor<4x8xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.kthvalue: k must lie in [1, 8]
  func.return %v : tensor<4x1xf32>
}

// -----

func.func @sort_indices(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %v, %i = tn.sort %x dim = 1 : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xi32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.sort: indices must have i64 elements
  func.return %v : tensor<4x8xf32>
}

// -----

func.func @median_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %v, %i = tn.median %x dim = 1 : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xi64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.median: values
  func.return %v : tensor<4x8xf32>
}

// -----

func.func @linalg_unknown_function(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = tn.linalg "lu_solve_twice"(%a) {} : (tensor<3x3xf32>) -> (tensor<3x3xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: unknown function 'lu_solve_twice'
  func.return %r : tensor<3x3xf32>
}

// -----

func.func @linalg_not_square(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = tn.linalg "matrix_exp"(%a) {} : (tensor<3x4xf32>) -> (tensor<3x4xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: square matrix sizes 3 and 4 differ
  func.return %r : tensor<3x4xf32>
}

// -----

func.func @linalg_result_shape(%a: tensor<2x3x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %x, %lu, %p, %i = tn.linalg "solve_ex"(%a, %b) {} : (tensor<2x3x3xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: result 0 shape [3, 2] does not match expected [2, 3, 2]
  func.return %x : tensor<3x2xf32>
}

// -----

func.func @linalg_pivots_i64(%lu: tensor<3x3xf32>, %p: tensor<3xi64>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %x = tn.linalg "lu_solve"(%lu, %p, %b) {} : (tensor<3x3xf32>, tensor<3xi64>, tensor<3x2xf32>) -> (tensor<3x2xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: operand pivots must have i32 elements, got i64
  func.return %x : tensor<3x2xf32>
}

// -----

func.func @linalg_half(%a: tensor<3x3xf16>) -> tensor<3x3xf16> {
  %r = tn.linalg "matrix_exp"(%a) {} : (tensor<3x3xf16>) -> (tensor<3x3xf16>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: needs f32 or f64 matrices, got f16
  func.return %r : tensor<3x3xf16>
}

// -----

func.func @linalg_mode(%a: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %q, %r = tn.linalg "qr"(%a) {mode = "thin"} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: option mode must be one of ['reduced', 'complete', 'r'], got 'thin'
  func.return %r : tensor<3x3xf32>
}

// -----

func.func @linalg_unknown_option(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = tn.linalg "cholesky"(%a) {lower = true} : (tensor<3x3xf32>) -> (tensor<3x3xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg cholesky: no option 'lower'
  func.return %r : tensor<3x3xf32>
}

// -----

func.func @linalg_required_option(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %x = tn.linalg "solve_triangular"(%a, %b) {left = false} : (tensor<3x3xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: option upper has no default and must be given
  func.return %x : tensor<3x2xf32>
}

// -----

func.func @linalg_check_errors(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %l, %info = tn.linalg "cholesky_ex"(%a) {check_errors = true} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: check_errors raises from inside a pure op; the check is its own call
  func.return %l : tensor<3x3xf32>
}

// -----

func.func @linalg_missing_tolerance(%a: tensor<5x3xf32>) -> tensor<3x5xf32> {
  %r = tn.linalg "pinv"(%a) {rtol} : (tensor<5x3xf32>) -> (tensor<3x5xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg pinv: takes 2 operands, got 1
  func.return %r : tensor<3x5xf32>
}

// -----

func.func @linalg_column_major_vector(%a: tensor<3x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %x, %lu, %p, %i = tn.linalg "solve_ex"(%a, %b) {} column_major [1] : (tensor<3x3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.linalg: column_major names operands [1] that are no matrices
  func.return %x : tensor<3xf32>
}

// -----

func.func @check_linalg_info_type(%info: tensor<3xi64>) {
  tn.check_linalg %info api = "linalg.inv" : tensor<3xi64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.check_linalg: info must be a tensor of i32, not tensor<3xi64>
  func.return
}

// -----

func.func @check_linalg_matrix_batch(%info: tensor<3xi32>) {
  tn.check_linalg %info api = "linalg.inv" matrix : tensor<3xi32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.check_linalg: `matrix` needs a one-element info, not tensor<3xi32>
  func.return
}

// -----

func.func @check_linalg_matrix_dynamic(%info: tensor<?xi32>) {
  tn.check_linalg %info api = "linalg.inv" matrix : tensor<?xi32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.check_linalg: `matrix` needs a one-element info, not tensor<?xi32>
  func.return
}

// -----

func.func @sdpa_backward_logsumexp(%g: tensor<2x4x8x16xf32>, %q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x16xf32>, %o: tensor<2x4x8x16xf32>, %l: tensor<2x4x8x6xf32>) -> tensor<2x4x8x16xf32> {
  %dq, %dk, %dv = tn.sdpa_backward %g, %q, %k, %v, %o, %l scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x6xf32> -> tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.sdpa_backward: logsumexp
  func.return %dq : tensor<2x4x8x16xf32>
}

// -----

func.func @reshape_numel(%x: tensor<4x8xf32>) -> tensor<30xf32> {
  %r = tn.reshape %x : tensor<4x8xf32> -> tensor<30xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.reshape: 32 elements cannot take shape [30]
  func.return %r : tensor<30xf32>
}

// -----

func.func @reshape_sizes(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  %r = tn.reshape %x : tensor<?x8xf32> -> tensor<?xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.reshape: 0 dynamic sizes given for 1 `?` dims
  func.return %r : tensor<?xf32>
}

// -----

func.func @expand_bad(%x: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %r = tn.expand %x : tensor<3x8xf32> -> tensor<4x8xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.expand: cannot expand [3, 8] to [4, 8]
  func.return %r : tensor<4x8xf32>
}

// -----

func.func @permute_bad(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %r = tn.permute %x perm = [1, 1] : tensor<4x8xf32> -> tensor<8x4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.permute: [1, 1] is not a permutation of 2 dims
  func.return %r : tensor<8x4xf32>
}

// -----

func.func @squeeze_bad(%x: tensor<4x2xf32>) -> tensor<4xf32> {
  %r = tn.squeeze %x dims = [1] : tensor<4x2xf32> -> tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.squeeze: dims [1] do not have size 1
  func.return %r : tensor<4xf32>
}

// -----

func.func @slice_bad(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %r = tn.slice %x dim = 1 start = 2 end = 9 step = 2 : tensor<4x8xf32> -> tensor<4x3xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.slice: end 9 is past size 8
  func.return %r : tensor<4x3xf32>
}

// -----

func.func @select_bad(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %r = tn.select %x dim = 0 index = 4 : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.select: index 4 out of range for size 4
  func.return %r : tensor<8xf32>
}

// -----

func.func @cat_bad(%a: tensor<2x8xf32>, %b: tensor<3x7xf32>) -> tensor<5x8xf32> {
  %r = tn.cat %a, %b dim = 0 : tensor<2x8xf32>, tensor<3x7xf32> -> tensor<5x8xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.cat: operand shape [3, 7] does not match [5, 8] off dim 0
  func.return %r : tensor<5x8xf32>
}

// -----

func.func @pad_bad(%x: tensor<4x8xf32>, %v: tensor<f32>) -> tensor<4x11xf32> {
  %r = tn.pad %x, %v low = [0, 1] high = [0, 1] : tensor<4x8xf32>, tensor<f32> -> tensor<4x11xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.pad: result shape [4, 11] does not match expected [4, 10]
  func.return %r : tensor<4x11xf32>
}

// -----

func.func @dim_bad(%x: tensor<?x8xf32>) -> index {
  %n = tn.dim %x dim = 2 : tensor<?x8xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.dim: dims [2] out of range for rank 2
  func.return %n : index
}

// -----

func.func @iota_sizes() -> tensor<?xi64> {
  %r = tn.iota : tensor<?xi64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.iota: one index operand per `?` dim
  func.return %r : tensor<?xi64>
}

// -----

func.func @aten_call_target(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = tn.aten_call "sort" args = "[{'t': 0}]" reason = "no importer"(%x) : (tensor<8xf32>) -> (tensor<8xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.aten_call: target must be a qualified overload such as "aten::sort.default"
  func.return %r : tensor<8xf32>
}

// -----

func.func @aten_call_args(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = tn.aten_call "aten::sort.default" args = "[{'t': 0}" reason = "no importer"(%x) : (tensor<8xf32>) -> (tensor<8xf32>)
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.aten_call: args is not a Python literal: '[' was never closed (<unknown>, line 1)
  func.return %r : tensor<8xf32>
}

// -----

func.func @neg_result_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  %r = "tn.neg"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.neg: result 'result' at position 0 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// -----

func.func @constant_type() -> tensor<f64> {
  %c = tn.constant dense<2.0> : tensor<f32> -> tensor<f64>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: tn.constant: result type must be the value's type
  func.return %c : tensor<f64>
}

// -----

func.func @return_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  %r = tn.neg %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
  // CHECK: invalid.mlir:[[# @LINE - 1]]:3: error: func.return: Expected arguments to have the same types as the function output types: expected [tensor<8xf32>], got [tensor<4xf32>]
}
