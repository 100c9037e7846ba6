// RUN: irc-opt %s --split-input-file --verify-diagnostics
// Verifier errors of the loop dialect, one case per chunk, each named by an expected-error comment.

func.func @reduced_output_varies(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{loop.nest: output 0 has the reduced shape but its value varies along a reduction dim}}
  %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x1xf32> {
    %a = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
    loop.yield %a : f32
  }
  func.return %r : tensor<4x1xf32>
}

// -----
func.func @wrong_shape(%x: tensor<4x8xf32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{loop.nest: output 0 of shape [4, 7] is neither the space [4, 8] nor its reduced shape [4, 8]}}
  %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x7xf32> {
    %a = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
    loop.yield %a : f32
  }
  func.return %r : tensor<4x7xf32>
}

// -----
func.func @map_arity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{loop.nest: loop.load map (d0) -> (d0, d0) needs 2 dims and 0 symbols}}
  %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xf32> {
    %a = loop.load %x[affine_map<(d0) -> (d0, d0)>] : tensor<4x8xf32> -> f32
    loop.yield %a : f32
  }
  func.return %r : tensor<4x8xf32>
}

// -----
func.func @reduce_without_reduction(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{loop.nest: loop.reduce in a nest without reduction dims}}
  %r = loop.nest space = affine_map<() -> (4)> iterators = ["parallel"] : tensor<4xf32> {
    %a = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<4xf32> -> f32
    %s = loop.reduce sum %a : f32 -> f32
    loop.yield %s : f32
  }
  func.return %r : tensor<4xf32>
}

// -----
func.func @view_not_linear(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{loop.view: map (d0) -> ((d0 mod 4)) is not linear with non-negative coefficients}}
  %t = loop.view %x[affine_map<(d0) -> (d0 mod 4)>] : tensor<8xf32> -> tensor<8xf32>
  func.return %t : tensor<8xf32>
}

// -----
func.func @argmax_two_dims(%x: tensor<4x8xf32>) -> tensor<1x1xi64> {
  // expected-error @+1 {{loop.nest: argmax needs exactly one reduction dim}}
  %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["reduction", "reduction"] : tensor<1x1xi64> {
    %a = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
    %k = loop.reduce argmax %a : f32 -> i64
    loop.yield %k : i64
  }
  func.return %r : tensor<1x1xi64>
}
