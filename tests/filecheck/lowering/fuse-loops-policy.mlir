// RUN: irc-opt %s -p 'tensor-to-loop,fuse-loops{max-recompute-cost=2}' | filecheck %s
// RUN: irc-opt %s -p tensor-to-loop,fuse-loops | filecheck %s --check-prefix=DEFAULT
// The policy bound on recomputation (fuse-loops option max-recompute-cost, default 24 scalar ops).

func.func @refuse_costly_recompute(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = tn.cos %x : tensor<4x8xf32>
  %b = tn.sin %a : tensor<4x8xf32>
  %p = tn.exp %b : tensor<4x8xf32>
  %f = tn.flip %p dims = [1] : tensor<4x8xf32>
  %r = tn.add %p, %f : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// A producer read at two index points would be computed twice; with the recompute budget at 2 ops, 3 ops are refused.
// CHECK-LABEL: func.func @refuse_costly_recompute
// CHECK:       %p = loop.nest
// CHECK:       %r = loop.nest {{.*}} attributes {irc.unfused = ["producer loop.nest@0: would recompute the producer (3 ops) 1 more time(s)"]}
// CHECK-NEXT:    loop.load %p[affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-NEXT:    loop.load %p[affine_map<(d0, d1) -> (d0, ((d1 * -1) + 7))>]
// DEFAULT-LABEL: func.func @refuse_costly_recompute
// DEFAULT-COUNT-1: loop.nest
// DEFAULT-NOT:   loop.nest
