// RUN: irc-opt --help | filecheck %s

// irc-opt --help lists every flag, then the stages, the passes and examples.

// CHECK: usage: irc-opt
// CHECK-DAG: -p {{.*}}--passes PIPELINE, --pass-pipeline PIPELINE
// CHECK-DAG: -t {{.*}}--emit TARGET
// CHECK-DAG: --stage NAME
// CHECK-DAG: --from-stage NAME
// CHECK-DAG: --list-passes
// CHECK-DAG: --split-input-file
// CHECK-DAG: --print-op-generic
// CHECK-DAG: --print-ir-after-all
// CHECK-DAG: --print-ir-before-all
// CHECK-DAG: --print-ir-before PASS[,PASS]
// CHECK-DAG: --print-ir-after PASS[,PASS]
// CHECK-DAG: --print-ir-after-change
// CHECK-DAG: --print-ir-after-failure
// CHECK-DAG: --dump-dir DIR
// CHECK-DAG: --timing
// CHECK-DAG: --statistics
// CHECK-DAG: --verify-each
// CHECK-DAG: --seed SEED
// CHECK-DAG: --reproducer FILE
// CHECK-DAG: --run-reproducer FILE
// CHECK-DAG: --verify-diagnostics
// CHECK-DAG: --model MODULE:FACTORY
// CHECK-DAG: --inputs SHAPE
// CHECK-DAG: --debug
// CHECK: stages (in order): fx, tensor, tensor-opt, loop, mem
// CHECK: passes: fuse-quant, expand-quant, fuse-attention, simplify-tensor, select-layout, fold-permutes, cse, dce, tensor-to-loop
// CHECK: examples:
// CHECK: irc-opt --stage mem --verify-each model.mlir
// CHECK: irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 32x1024xf32
// CHECK: exit codes:
