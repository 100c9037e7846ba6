// RUN: irc-opt --stage loop --timing %s 2>&1 | filecheck %s
// RUN: irc-opt -p cse --time-passes %s 2>&1 | filecheck %s --check-prefix=ALIAS

// --timing: after the output, on stderr, the wall time of each pass in pipeline order (a pass
// that runs twice is listed twice), then parsing, verifying and printing, and the total.

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = tn.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %r = tn.relu %s : tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// CHECK:      func.return
// CHECK:      ===-------------------------------------------------------------------------===
// CHECK-NEXT:                          ... Execution time report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT:   Total Execution Time: {{[0-9.]+}} seconds
// CHECK-EMPTY:
// CHECK-NEXT:   ----Wall Time----  ----Name----
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  fuse-quant{products=false}
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  expand-quant
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  fuse-attention
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  simplify-tensor
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  select-layout
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  fold-permutes
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  cse
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  dce
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  split-addmm
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  tensor-to-loop
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  simplify-loop
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  fuse-loops
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  fold-bias
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  orient-products
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  simplify-loop
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  output-layout
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  input-layout
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  (output)
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  (parse)
// CHECK-NEXT:   {{ *[0-9.]+ \( *[0-9.]+%\)}}  (verifier)
// CHECK-NEXT:   {{ *[0-9.]+ \(100.0%\)}}  Total

// ALIAS: Execution time report
// ALIAS: cse
