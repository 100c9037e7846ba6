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

func.func @scalar_math_stays_apart(%s: tensor<8x48xf32>, %x: tensor<8x48x32xf32>) -> tensor<8x1x32xf32> {
  %e = tn.exp %s : tensor<8x48xf32>
  %e3 = tn.reshape %e : tensor<8x48xf32> -> tensor<8x48x1xf32>
  %m = tn.mul %e3, %x : tensor<8x48x1xf32>, tensor<8x48x32xf32> -> tensor<8x48x32xf32>
  %r = tn.sum %m dims = [1] : tensor<8x48x32xf32> -> tensor<8x1x32xf32>
  func.return %r : tensor<8x1x32xf32>
}
// The exp varies along dims 0 and 1 only: inside the weighted sum, whose vector dim is 2, it would run 384 times
// as a scalar; in a nest of its own it runs along 48 vectorised rows.
// DEFAULT-LABEL: func.func @scalar_math_stays_apart
// DEFAULT:       %e3 = loop.nest space = affine_map<() -> (8, 48)>
// DEFAULT:         math.exp
// DEFAULT:       loop.nest {{.*}}irc.unfused = [{{.*}}would run the producer's math functions as scalars
// DEFAULT-NOT:     math.exp
// DEFAULT:       func.return

func.func @cheap_broadcast_fuses(%s: tensor<8x48xf32>, %x: tensor<8x48x32xf32>) -> tensor<8x1x32xf32> {
  %e = tn.neg %s : tensor<8x48xf32>
  %e3 = tn.reshape %e : tensor<8x48xf32> -> tensor<8x48x1xf32>
  %m = tn.mul %e3, %x : tensor<8x48x1xf32>, tensor<8x48x32xf32> -> tensor<8x48x32xf32>
  %r = tn.sum %m dims = [1] : tensor<8x48x32xf32> -> tensor<8x1x32xf32>
  func.return %r : tensor<8x1x32xf32>
}
// Without math functions a value uniform along the vector dim costs a scalar op per row: it fuses.
// DEFAULT-LABEL: func.func @cheap_broadcast_fuses
// DEFAULT-COUNT-1: loop.nest
// DEFAULT-NOT:   loop.nest
// DEFAULT:       func.return

func.func @a_staying_producer_is_read_not_recomputed(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>, %w: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %s = tn.add %a, %b : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  %p = tn.relu %s : tensor<4x64xf32>
  %m = tn.mm %p, %w : tensor<4x64xf32>, tensor<64x64xf32> -> tensor<4x64xf32>
  %r = tn.add %m, %p : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  func.return %r : tensor<4x64xf32>
}
// A ResNet block's residual: relu(a + b) goes to the product and to the sum after it, so it stays a nest of its own
// (the product needs it first). A copy inside the sum would read a and b where reading it reads one buffer.
// DEFAULT-LABEL: func.func @a_staying_producer_is_read_not_recomputed
// DEFAULT:       %p = loop.nest
// DEFAULT:       tn.mm %p
// DEFAULT:       loop.nest {{.*}}irc.unfused = [{{.*}}the producer stays for other users: its copy would read 2 large inputs where its result is one
// DEFAULT-NOT:     loop.load %a
// DEFAULT:         loop.load %p
// DEFAULT-NOT:     loop.load %a
// DEFAULT:       func.return
