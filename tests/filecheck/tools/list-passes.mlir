// RUN: irc-opt --list-passes | filecheck %s

// --list-passes: the stages with the pipeline that produces each, then every pass with its options.

// CHECK:      stages: fx -> tensor -> tensor-opt -> loop -> mem
// CHECK-NEXT:   tensor-opt  -p fuse-quant,expand-quant,fuse-attention,simplify-tensor,select-layout,fold-permutes,cse,dce
// CHECK-NEXT:   loop        -p tensor-to-loop,{{.*}}fuse-loops
// CHECK-NEXT:   mem         -p bufferize
// CHECK:      passes:
// CHECK-NEXT:   fuse-quant  [tensor-opt]
// CHECK:        cse  [tensor-opt]
// CHECK-NEXT:       Common subexpression elimination
// CHECK:        fuse-loops  [loop]
// CHECK-NEXT:       Fuse loop.nest ops
// CHECK-NEXT:       options: max-body-ops: int = {{[0-9]+}}
// CHECK:      test passes
// CHECK:        test-swap-operands
// CHECK:            options: limit: int = -1
