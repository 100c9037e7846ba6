// RUN: not irc-opt -p cse,no-such-pass %s 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not irc-opt -p 'fuse-loops{max-body-ops=many}' %s 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not irc-opt -p 'fuse-loops{no-such-option=1}' %s 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not irc-opt -p 'cse dce' %s 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not irc-opt -p 'builtin.module(func.func(cse))' %s 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not irc-opt --print-ir-after=no-such-pass %s 2>&1 | filecheck %s --check-prefix=PRINT
// RUN: not irc-opt --stage no-such-stage %s 2>&1 | filecheck %s --check-prefix=STAGE
// RUN: not irc-opt --from-stage mem --stage loop %s 2>&1 | filecheck %s --check-prefix=ORDER

// A bad pass pipeline is located in the pipeline text, with a note naming what exists; exit code 1.

func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  func.return %a : tensor<8xf32>
}

// NAME:      <pass-pipeline>:1:5: error: unknown pass 'no-such-pass'
// NAME-NEXT: cse,no-such-pass
// NAME-NEXT:     ^^^^^^^^^^^^
// NAME-NEXT: note: available passes: fuse-quant, expand-quant, fuse-attention, simplify-tensor, select-layout, fold-permutes, cse, dce, tensor-to-loop, {{.*}}fuse-loops

// VALUE:      <pass-pipeline>:1:12: error: option 'max-body-ops' of pass 'fuse-loops' expects int, got many
// VALUE-NEXT: fuse-loops{max-body-ops=many}
// VALUE-NEXT:            ^^^^^^^^^^^^
// VALUE-NEXT: note: options of 'fuse-loops': max-body-ops: int = {{[0-9]+}}

// OPTION: <pass-pipeline>:1:12: error: pass 'fuse-loops' has no option 'no-such-option'

// SYNTAX:      <pass-pipeline>:1:4: error: Expected a comma or pass arguments here
// SYNTAX-NEXT: cse dce
// SYNTAX-NEXT:    ^

// NESTED: <pass-pipeline>:1:16: error: nested pass pipelines are not supported

// PRINT: irc-opt: error: --print-ir-after: unknown pass 'no-such-pass'

// STAGE: irc-opt: error: argument --stage: invalid choice: 'no-such-stage'

// ORDER: irc-opt: error: --stage loop comes before the input's stage mem
