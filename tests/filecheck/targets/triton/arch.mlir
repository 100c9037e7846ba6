// RUN: irc-opt -t triton --arch sm_80,sm_90,gfx942 %s | filecheck %s
// RUN: not irc-opt -t triton --arch sm_75 %s 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not irc-opt --arch sm_90 %s 2>&1 | filecheck %s --check-prefix=MLIR

// --arch compiles every kernel ahead of time for GPUs that need not be present (targets/triton/aot.py), with the
// blocks the heuristic launches it with, and prints what it needs on each: registers per thread, bytes spilled per
// thread, shared memory per program. A softmax row of 8 is one `single` kernel; the cross-warp reduction of its
// row may use a little shared memory.

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tn.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = tn.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %e = tn.exp %d : tensor<4x8xf32>
  %s = tn.sum %e dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %r = tn.div %e, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK:      # @kernel0: single
// CHECK:      # @kernel0 on sm_80 [XBLOCK=4 RBLOCK=8 num_warps=4]: {{[0-9]+}} registers, 0 B spilled, {{[0-9]+}} B shared
// CHECK-NEXT: # @kernel0 on sm_90 [XBLOCK=4 RBLOCK=8 num_warps=4]: {{[0-9]+}} registers, 0 B spilled, {{[0-9]+}} B shared
// CHECK-NEXT: # @kernel0 on gfx942 [XBLOCK=4 RBLOCK=8 num_warps=4]: {{[0-9]+}} registers, 0 B spilled, {{[0-9]+}} B shared

// BAD: irc-opt: error: unknown --arch sm_75; valid: sm_80, sm_90, gfx942

// MLIR: irc-opt: error: --arch compiles Triton kernels for a GPU: it needs -t triton, not -t mlir
