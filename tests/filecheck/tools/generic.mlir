// RUN: irc-opt --print-op-generic %s | filecheck %s --check-prefix=GENERIC
// RUN: irc-opt --print-op-generic %s | irc-opt | filecheck %s --check-prefix=PRETTY
// RUN: irc-opt --print-op-generic --stage loop %s | irc-opt --stage mem | filecheck %s --check-prefix=MEM

// Both forms: --print-op-generic prints the generic form, and irc-opt reads either.

func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = tn.sub %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %r = tn.relu %s : tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "func.func"() <{sym_name = "main", function_type = (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>}> ({
// GENERIC-NEXT:   ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
// GENERIC-NEXT:     %s = "tn.sub"(%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// GENERIC-NEXT:     %r = "tn.relu"(%s) : (tensor<8xf32>) -> tensor<8xf32>
// GENERIC-NEXT:     "func.return"(%r) : (tensor<8xf32>) -> ()

// PRETTY:      builtin.module {
// PRETTY-NEXT:   func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
// PRETTY-NEXT:     %s = tn.sub %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
// PRETTY-NEXT:     %r = tn.relu %s : tensor<8xf32>

// MEM: mem.launch @kernel0
