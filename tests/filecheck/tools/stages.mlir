// RUN: irc-opt %s | filecheck %s --check-prefix=TENSOR
// RUN: irc-opt --stage tensor %s | filecheck %s --check-prefix=TENSOR
// RUN: irc-opt --stage tensor-opt %s | filecheck %s --check-prefix=OPT
// RUN: irc-opt --from-stage tensor-opt --stage tensor-opt %s | filecheck %s --check-prefix=TENSOR
// RUN: irc-opt -p dce %s | filecheck %s --check-prefix=DCE

// An .mlir input is at the tensor stage unless --from-stage says otherwise; --stage NAME runs the
// passes of every stage after it up to NAME (tensor-opt: cse, dce); -p runs passes by name.

func.func @twice(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %s = tn.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %t = tn.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %unused = tn.exp %a : tensor<4xf32>
  %r = tn.mul %s, %t : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// TENSOR-LABEL: func.func @twice
// TENSOR-NEXT:    %s = tn.add %a, %b
// TENSOR-NEXT:    %t = tn.add %a, %b
// TENSOR-NEXT:    %unused = tn.exp %a
// TENSOR-NEXT:    %r = tn.mul %s, %t
// TENSOR-NEXT:    func.return %r

// OPT-LABEL: func.func @twice
// OPT-NEXT:    %s = tn.add %a, %b
// OPT-NEXT:    %r = tn.mul %s, %s
// OPT-NEXT:    func.return %r

// DCE-LABEL: func.func @twice
// DCE-NEXT:    %s = tn.add %a, %b
// DCE-NEXT:    %t = tn.add %a, %b
// DCE-NEXT:    %r = tn.mul %s, %t
