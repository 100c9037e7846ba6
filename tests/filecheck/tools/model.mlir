// RUN: irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 4x1024xf32 | filecheck %s
// RUN: irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 4x1024xf32 | irc-opt --split-input-file --stage tensor-opt | filecheck %s --check-prefix=REPARSED
// RUN: irc-opt --model irc.tools.examples.mlp:gelu_residual --inputs 8x64xf32 8x64xf32 --dynamic --stage tensor-opt | filecheck %s --check-prefix=DYN
// RUN: irc-opt --model irc.tools.examples.mlp:gelu_residual --inputs 8x64xf32,8x64xf32 --stage fx | filecheck %s --check-prefix=FX

// irc-opt on the example model of the README: each graph torch.compile captures, at the asked
// stage, under a header naming the graph and what the importer did with it.

// CHECK:      // irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 4x1024xf32 --stage tensor
// CHECK-NEXT: // graph {{[0-9]+}} (inference, dynamo graph {{[0-9]+}}): {{[0-9]+}} FX nodes
// The module records what continuing it needs (compiler.record): the target, the options, the arguments.
// CHECK:      builtin.module attributes {irc.plan = {target = "cpu", attention = true, layout = "auto", matmul = "extern", prepack = "auto"}, irc.args = [{name = "arg0_1", kind = "tensor", dtype = "float32", sizes = [1024 : i64], strides = [1 : i64]}
// CHECK-NEXT:   func.func @main(
// CHECK-SAME:     tensor<4x1024xf32>
// CHECK-SAME:     -> tensor<4x1024xf32> attributes {irc.output_layout = {{\[\[}}0 : i64, 1 : i64]]} {
// CHECK:          tn.gelu %{{.*}} approximate = "none" : tensor<4x4096xf32>
// CHECK:          func.return %{{.*}} : tensor<4x1024xf32>

// The output is MLIR that irc-opt reads back (the header is comments):
// REPARSED:      builtin.module attributes {irc.plan = {{.*}}irc.stage = "tensor-opt"} {
// REPARSED-NEXT:   func.func @main(
// REPARSED:          tn.gelu
// REPARSED:          func.return %{{.*}} : tensor<4x1024xf32>
// REPARSED-NOT:  // -----

// DYN:      // irc-opt --model irc.tools.examples.mlp:gelu_residual --inputs 8x64xf32 8x64xf32 --dynamic --stage tensor-opt
// DYN-NEXT: // graph {{[0-9]+}} (inference, dynamo graph {{[0-9]+}})
// DYN:      func.func @main({{.*}}: index, {{.*}}tensor<?x?xf32>{{.*}}) -> tensor<?x?xf32>{{.*}} {
// DYN-NEXT:   %[[G:.*]] = tn.gelu %[[X:[a-z0-9_]+]] approximate = "none" : tensor<?x?xf32>
// DYN-NEXT:   %[[S:.*]] = tn.sigmoid %{{.*}} : tensor<?x?xf32>
// DYN-NEXT:   %[[M:.*]] = tn.mul %[[G]], %[[S]]
// DYN-NEXT:   %[[R:.*]] = tn.add %[[M]], %[[X]]
// DYN-NEXT:   func.return %[[R]] : tensor<?x?xf32>

// FX:      // graph {{[0-9]+}} (inference
// FX:      // class <lambda>(torch.nn.Module):
// FX:      aten.gelu.default
// FX:      aten.sigmoid.default
