// RUN: irc-opt %s | filecheck %s
// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s

// Every tn op in its pretty form, one function each (a snapshot of the dialect, made from the
// ops' docstring examples): printing is exact, and print -> parse -> print is stable in both
// the pretty and the generic form. New ops also get checked by tests/unit/test_op_examples.py.

// CHECK: builtin.module {

func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.neg %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @neg(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.neg %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @abs(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.abs %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @abs(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.abs %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.exp %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @exp(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.exp %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @exp2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.exp2 %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @exp2(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.exp2 %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @expm1(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.expm1 %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @expm1(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.expm1 %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.log %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @log(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.log %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @log2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.log2 %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @log2(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.log2 %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @log10(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.log10 %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @log10(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.log10 %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @log1p(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.log1p %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @log1p(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.log1p %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.sqrt %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @sqrt(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.sqrt %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.rsqrt %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @rsqrt(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.rsqrt %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @reciprocal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.reciprocal %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @reciprocal(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.reciprocal %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.sin %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @sin(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.sin %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @cos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.cos %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @cos(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.cos %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @tan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.tan %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @tan(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.tan %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @asin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.asin %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @asin(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.asin %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @acos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.acos %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @acos(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.acos %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @atan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.atan %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @atan(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.atan %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @sinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.sinh %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @sinh(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.sinh %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @cosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.cosh %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @cosh(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.cosh %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.tanh %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @tanh(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.tanh %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @asinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.asinh %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @asinh(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.asinh %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @acosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.acosh %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @acosh(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.acosh %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @atanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.atanh %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @atanh(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.atanh %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.sigmoid %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @sigmoid(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.sigmoid %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.erf %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @erf(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.erf %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @erfinv(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.erfinv %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @erfinv(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.erfinv %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @lgamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.lgamma %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @lgamma(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.lgamma %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @digamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.digamma %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @digamma(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.digamma %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @floor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.floor %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @floor(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.floor %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @ceil(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.ceil %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @ceil(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.ceil %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @round(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.round %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @round(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.round %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @trunc(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.trunc %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @trunc(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.trunc %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @sign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.sign %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @sign(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.sign %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.relu %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @relu(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.relu %x : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @bitwise_not(%x: tensor<4xi32>) -> tensor<4xi32> {
  %r = tn.bitwise_not %x : tensor<4xi32>
  func.return %r : tensor<4xi32>
}
// CHECK-LABEL: func.func @bitwise_not(
// CHECK-SAME:    %x: tensor<4xi32>) -> tensor<4xi32> {
// CHECK-NEXT:    %r = tn.bitwise_not %x : tensor<4xi32>
// CHECK-NEXT:    func.return %r : tensor<4xi32>
// CHECK-NEXT:  }

func.func @gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.gelu %x approximate = "tanh" : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.gelu %x approximate = "tanh" : tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @isnan(%x: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.isnan %x : tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @isnan(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.isnan %x : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @isinf(%x: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.isinf %x : tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @isinf(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.isinf %x : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @logical_not(%x: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.logical_not %x : tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @logical_not(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.logical_not %x : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @signbit(%x: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.signbit %x : tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @signbit(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.signbit %x : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @add(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = tn.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @add(
// CHECK-SAME:    %a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = tn.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @sub(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.sub %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @sub(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.sub %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @mul(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %r = tn.mul %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @mul(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.mul %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @div(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.div %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @div(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.div %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @floordiv(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %r = tn.floordiv %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return %r : tensor<4xi64>
}
// CHECK-LABEL: func.func @floordiv(
// CHECK-SAME:    %a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
// CHECK-NEXT:    %r = tn.floordiv %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    func.return %r : tensor<4xi64>
// CHECK-NEXT:  }

func.func @truncdiv(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %r = tn.truncdiv %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return %r : tensor<4xi64>
}
// CHECK-LABEL: func.func @truncdiv(
// CHECK-SAME:    %a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
// CHECK-NEXT:    %r = tn.truncdiv %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    func.return %r : tensor<4xi64>
// CHECK-NEXT:  }

func.func @remainder(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.remainder %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @remainder(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.remainder %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @fmod(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.fmod %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @fmod(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.fmod %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @pow(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %r = tn.pow %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @pow(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.pow %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @maximum(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.maximum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @maximum(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.maximum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @minimum(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.minimum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @minimum(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.minimum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @atan2(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.atan2 %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @atan2(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.atan2 %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @hypot(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.hypot %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @hypot(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.hypot %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @copysign(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.copysign %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @copysign(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.copysign %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @nextafter(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tn.nextafter %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @nextafter(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.nextafter %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @bitwise_and(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %r = tn.bitwise_and %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @bitwise_and(
// CHECK-SAME:    %a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.bitwise_and %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @bitwise_or(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = tn.bitwise_or %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}
// CHECK-LABEL: func.func @bitwise_or(
// CHECK-SAME:    %a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
// CHECK-NEXT:    %r = tn.bitwise_or %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT:    func.return %r : tensor<4xi32>
// CHECK-NEXT:  }

func.func @bitwise_xor(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = tn.bitwise_xor %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}
// CHECK-LABEL: func.func @bitwise_xor(
// CHECK-SAME:    %a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
// CHECK-NEXT:    %r = tn.bitwise_xor %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT:    func.return %r : tensor<4xi32>
// CHECK-NEXT:  }

func.func @shift_left(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = tn.shift_left %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}
// CHECK-LABEL: func.func @shift_left(
// CHECK-SAME:    %a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
// CHECK-NEXT:    %r = tn.shift_left %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT:    func.return %r : tensor<4xi32>
// CHECK-NEXT:  }

func.func @shift_right(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = tn.shift_right %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}
// CHECK-LABEL: func.func @shift_right(
// CHECK-SAME:    %a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
// CHECK-NEXT:    %r = tn.shift_right %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT:    func.return %r : tensor<4xi32>
// CHECK-NEXT:  }

func.func @eq(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.eq %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @eq(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.eq %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @ne(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.ne %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @ne(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.ne %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @lt(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.lt %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @lt(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.lt %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @le(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.le %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @le(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.le %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @gt(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.gt %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @gt(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.gt %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @ge(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = tn.ge %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @ge(
// CHECK-SAME:    %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
// CHECK-NEXT:    %r = tn.ge %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return %r : tensor<4xi1>
// CHECK-NEXT:  }

func.func @where(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %r = tn.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @where(
// CHECK-SAME:    %c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @convert(%x: tensor<4xf32>) -> tensor<4xi64> {
  %r = tn.convert %x : tensor<4xf32> -> tensor<4xi64>
  func.return %r : tensor<4xi64>
}
// CHECK-LABEL: func.func @convert(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<4xi64> {
// CHECK-NEXT:    %r = tn.convert %x : tensor<4xf32> -> tensor<4xi64>
// CHECK-NEXT:    func.return %r : tensor<4xi64>
// CHECK-NEXT:  }

func.func @sum(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
// CHECK-LABEL: func.func @sum(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    %r = tn.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %r : tensor<4x1xf32>
// CHECK-NEXT:  }

func.func @prod(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  %r = tn.prod %x dims = [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  func.return %r : tensor<1x8xf32>
}
// CHECK-LABEL: func.func @prod(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<1x8xf32> {
// CHECK-NEXT:    %r = tn.prod %x dims = [0] : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    func.return %r : tensor<1x8xf32>
// CHECK-NEXT:  }

func.func @mean(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.mean %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
// CHECK-LABEL: func.func @mean(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    %r = tn.mean %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %r : tensor<4x1xf32>
// CHECK-NEXT:  }

func.func @amax(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
// CHECK-LABEL: func.func @amax(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    %r = tn.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %r : tensor<4x1xf32>
// CHECK-NEXT:  }

func.func @amin(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.amin %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
// CHECK-LABEL: func.func @amin(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    %r = tn.amin %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %r : tensor<4x1xf32>
// CHECK-NEXT:  }

func.func @any(%x: tensor<4x8xi1>) -> tensor<4x1xi1> {
  %r = tn.any %x dims = [1] : tensor<4x8xi1> -> tensor<4x1xi1>
  func.return %r : tensor<4x1xi1>
}
// CHECK-LABEL: func.func @any(
// CHECK-SAME:    %x: tensor<4x8xi1>) -> tensor<4x1xi1> {
// CHECK-NEXT:    %r = tn.any %x dims = [1] : tensor<4x8xi1> -> tensor<4x1xi1>
// CHECK-NEXT:    func.return %r : tensor<4x1xi1>
// CHECK-NEXT:  }

func.func @all(%x: tensor<4x8xi1>) -> tensor<4x1xi1> {
  %r = tn.all %x dims = [1] : tensor<4x8xi1> -> tensor<4x1xi1>
  func.return %r : tensor<4x1xi1>
}
// CHECK-LABEL: func.func @all(
// CHECK-SAME:    %x: tensor<4x8xi1>) -> tensor<4x1xi1> {
// CHECK-NEXT:    %r = tn.all %x dims = [1] : tensor<4x8xi1> -> tensor<4x1xi1>
// CHECK-NEXT:    func.return %r : tensor<4x1xi1>
// CHECK-NEXT:  }

func.func @argmax(%x: tensor<4x8xf32>) -> tensor<4x1xi64> {
  %r = tn.argmax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xi64>
  func.return %r : tensor<4x1xi64>
}
// CHECK-LABEL: func.func @argmax(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x1xi64> {
// CHECK-NEXT:    %r = tn.argmax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xi64>
// CHECK-NEXT:    func.return %r : tensor<4x1xi64>
// CHECK-NEXT:  }

func.func @argmin(%x: tensor<4x8xf32>) -> tensor<4x1xi64> {
  %r = tn.argmin %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xi64>
  func.return %r : tensor<4x1xi64>
}
// CHECK-LABEL: func.func @argmin(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x1xi64> {
// CHECK-NEXT:    %r = tn.argmin %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xi64>
// CHECK-NEXT:    func.return %r : tensor<4x1xi64>
// CHECK-NEXT:  }

func.func @var(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = tn.var %x dims = [1] correction = 1.000000e+00 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
// CHECK-LABEL: func.func @var(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    %r = tn.var %x dims = [1] correction = 1.000000e+00 : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %r : tensor<4x1xf32>
// CHECK-NEXT:  }

func.func @cumsum(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.cumsum %x dim = 1 : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @cumsum(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = tn.cumsum %x dim = 1 : tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @cumprod(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.cumprod %x dim = 1 : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @cumprod(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = tn.cumprod %x dim = 1 : tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @reshape(%x: tensor<?x8xf32>, %n: index) -> tensor<?xf32> {
  %r = tn.reshape %x[%n] : tensor<?x8xf32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %x: tensor<?x8xf32>, %n: index) -> tensor<?xf32> {
// CHECK-NEXT:    %r = tn.reshape %x[%n] : tensor<?x8xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %r : tensor<?xf32>
// CHECK-NEXT:  }

func.func @expand(%x: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %r = tn.expand %x : tensor<1x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @expand(
// CHECK-SAME:    %x: tensor<1x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = tn.expand %x : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @permute(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %r = tn.permute %x perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}
// CHECK-LABEL: func.func @permute(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT:    %r = tn.permute %x perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    func.return %r : tensor<8x4xf32>
// CHECK-NEXT:  }

func.func @squeeze(%x: tensor<4x1xf32>) -> tensor<4xf32> {
  %r = tn.squeeze %x dims = [1] : tensor<4x1xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @squeeze(
// CHECK-SAME:    %x: tensor<4x1xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = tn.squeeze %x dims = [1] : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

func.func @unsqueeze(%x: tensor<4xf32>) -> tensor<1x4xf32> {
  %r = tn.unsqueeze %x dim = 0 : tensor<4xf32> -> tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
// CHECK-LABEL: func.func @unsqueeze(
// CHECK-SAME:    %x: tensor<4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT:    %r = tn.unsqueeze %x dim = 0 : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    func.return %r : tensor<1x4xf32>
// CHECK-NEXT:  }

func.func @slice(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %r = tn.slice %x dim = 1 start = 2 end = 8 step = 2 : tensor<4x8xf32> -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x3xf32> {
// CHECK-NEXT:    %r = tn.slice %x dim = 1 start = 2 end = 8 step = 2 : tensor<4x8xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %r : tensor<4x3xf32>
// CHECK-NEXT:  }

func.func @select(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %r = tn.select %x dim = 0 index = 3 : tensor<4x8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}
// CHECK-LABEL: func.func @select(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    %r = tn.select %x dim = 0 index = 3 : tensor<4x8xf32> -> tensor<8xf32>
// CHECK-NEXT:    func.return %r : tensor<8xf32>
// CHECK-NEXT:  }

func.func @cat(%a: tensor<2x8xf32>, %b: tensor<3x8xf32>) -> tensor<5x8xf32> {
  %r = tn.cat %a, %b dim = 0 : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<5x8xf32>
  func.return %r : tensor<5x8xf32>
}
// CHECK-LABEL: func.func @cat(
// CHECK-SAME:    %a: tensor<2x8xf32>, %b: tensor<3x8xf32>) -> tensor<5x8xf32> {
// CHECK-NEXT:    %r = tn.cat %a, %b dim = 0 : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<5x8xf32>
// CHECK-NEXT:    func.return %r : tensor<5x8xf32>
// CHECK-NEXT:  }

func.func @flip(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tn.flip %x dims = [0] : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @flip(
// CHECK-SAME:    %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = tn.flip %x dims = [0] : tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @as_strided(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  %r = tn.as_strided %x strides = [1, 4] offset = 0 : tensor<16xf32> -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
// CHECK-LABEL: func.func @as_strided(
// CHECK-SAME:    %x: tensor<16xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    %r = tn.as_strided %x strides = [1, 4] offset = 0 : tensor<16xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %r : tensor<4x4xf32>
// CHECK-NEXT:  }

func.func @pad(%x: tensor<4x8xf32>, %v: tensor<f32>) -> tensor<4x11xf32> {
  %r = tn.pad %x, %v low = [0, 1] high = [0, 2] : tensor<4x8xf32>, tensor<f32> -> tensor<4x11xf32>
  func.return %r : tensor<4x11xf32>
}
// CHECK-LABEL: func.func @pad(
// CHECK-SAME:    %x: tensor<4x8xf32>, %v: tensor<f32>) -> tensor<4x11xf32> {
// CHECK-NEXT:    %r = tn.pad %x, %v low = [0, 1] high = [0, 2] : tensor<4x8xf32>, tensor<f32> -> tensor<4x11xf32>
// CHECK-NEXT:    func.return %r : tensor<4x11xf32>
// CHECK-NEXT:  }

func.func @dim(%x: tensor<?x8xf32>) -> index {
  %n = tn.dim %x dim = 0 : tensor<?x8xf32>
  func.return %n : index
}
// CHECK-LABEL: func.func @dim(
// CHECK-SAME:    %x: tensor<?x8xf32>) -> index {
// CHECK-NEXT:    %n = tn.dim %x dim = 0 : tensor<?x8xf32>
// CHECK-NEXT:    func.return %n : index
// CHECK-NEXT:  }

func.func @constant() -> tensor<f32> {
  %c = tn.constant dense<2.000000e+00> : tensor<f32> -> tensor<f32>
  func.return %c : tensor<f32>
}
// CHECK-LABEL: func.func @constant(
// CHECK-SAME:    ) -> tensor<f32> {
// CHECK-NEXT:    %c = tn.constant dense<2.000000e+00> : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %c : tensor<f32>
// CHECK-NEXT:  }

func.func @from_index(%n: index) -> tensor<i64> {
  %t = tn.from_index %n : tensor<i64>
  func.return %t : tensor<i64>
}
// CHECK-LABEL: func.func @from_index(
// CHECK-SAME:    %n: index) -> tensor<i64> {
// CHECK-NEXT:    %t = tn.from_index %n : tensor<i64>
// CHECK-NEXT:    func.return %t : tensor<i64>
// CHECK-NEXT:  }

func.func @iota(%n: index) -> tensor<?xi64> {
  %r = tn.iota[%n] : tensor<?xi64>
  func.return %r : tensor<?xi64>
}
// CHECK-LABEL: func.func @iota(
// CHECK-SAME:    %n: index) -> tensor<?xi64> {
// CHECK-NEXT:    %r = tn.iota[%n] : tensor<?xi64>
// CHECK-NEXT:    func.return %r : tensor<?xi64>
// CHECK-NEXT:  }

func.func @rand() -> tensor<4x8xf32> {
  %r = tn.rand : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @rand(
// CHECK-SAME:    ) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = tn.rand : tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @randn() -> tensor<4x8xf32> {
  %r = tn.randn : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @randn(
// CHECK-SAME:    ) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = tn.randn : tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @aten_call(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi64>) {
  %r, %r_1 = tn.aten_call "aten::sort.default" args = "[{'t': 0}, -1, False]" reason = "no importer"(%x) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi64>)
  func.return %r, %r_1 : tensor<8xf32>, tensor<8xi64>
}
// CHECK-LABEL: func.func @aten_call(
// CHECK-SAME:    %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi64>) {
// CHECK-NEXT:    %r, %r_1 = tn.aten_call "aten::sort.default" args = "[{'t': 0}, -1, False]" reason = "no importer"(%x) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi64>)
// CHECK-NEXT:    func.return %r, %r_1 : tensor<8xf32>, tensor<8xi64>
// CHECK-NEXT:  }

func.func @linalg(%a: tensor<?x3x3xf32>, %b: tensor<?x3xf32>, %rtol: tensor<f64>) -> (tensor<?x3xf32>, tensor<?x3x3xf32>, tensor<?x3x3xf32>) {
  %l, %info = tn.linalg "cholesky_ex"(%a) {upper = true} : (tensor<?x3x3xf32>) -> (tensor<?x3x3xf32>, tensor<?xi32>)
  %x, %lu, %p, %i = tn.linalg "solve_ex"(%a, %b) {} column_major [0] : (tensor<?x3x3xf32>, tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3x3xf32>, tensor<?x3xi32>, tensor<?xi32>)
  %pinv = tn.linalg "pinv"(%a, %rtol) {rtol, hermitian = true} : (tensor<?x3x3xf32>, tensor<f64>) -> (tensor<?x3x3xf32>)
  func.return %x, %l, %pinv : tensor<?x3xf32>, tensor<?x3x3xf32>, tensor<?x3x3xf32>
}
// CHECK-LABEL: func.func @linalg(
// CHECK-SAME:    %a: tensor<?x3x3xf32>, %b: tensor<?x3xf32>, %rtol: tensor<f64>) -> (tensor<?x3xf32>, tensor<?x3x3xf32>, tensor<?x3x3xf32>) {
// CHECK-NEXT:    %l, %info = tn.linalg "cholesky_ex"(%a) {upper = true} : (tensor<?x3x3xf32>) -> (tensor<?x3x3xf32>, tensor<?xi32>)
// CHECK-NEXT:    %x, %lu, %p, %i = tn.linalg "solve_ex"(%a, %b) {} column_major [0] : (tensor<?x3x3xf32>, tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3x3xf32>, tensor<?x3xi32>, tensor<?xi32>)
// CHECK-NEXT:    %pinv = tn.linalg "pinv"(%a, %rtol) {rtol, hermitian = true} : (tensor<?x3x3xf32>, tensor<f64>) -> (tensor<?x3x3xf32>)
// CHECK-NEXT:    func.return %x, %l, %pinv : tensor<?x3xf32>, tensor<?x3x3xf32>, tensor<?x3x3xf32>
// CHECK-NEXT:  }

func.func @check_linalg(%info: tensor<i32>, %infos: tensor<?x2xi32>) {
  tn.check_linalg %info api = "linalg.inv" matrix : tensor<i32>
  tn.check_linalg %infos api = "linalg.cholesky" : tensor<?x2xi32>
  func.return
}
// CHECK-LABEL: func.func @check_linalg(
// CHECK-SAME:    %info: tensor<i32>, %infos: tensor<?x2xi32>) {
// CHECK-NEXT:    tn.check_linalg %info api = "linalg.inv" matrix : tensor<i32>
// CHECK-NEXT:    tn.check_linalg %infos api = "linalg.cholesky" : tensor<?x2xi32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @attention_training(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %l: tensor<2x4x8xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x8x4xf32>, tensor<2x8x4x16xf32>, tensor<2x6x4x16xf32>) {
  %o, %lh = tn.sdpa %q, %k, %k scale = 0.25 causal heads_last : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x8x4x16xf32>, tensor<2x8x4xf32>
  %dq, %dk, %dv = tn.sdpa_backward %q, %q, %k, %k, %q, %l scale = 0.25 causal heads_last : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> -> tensor<2x8x4x16xf32>, tensor<2x6x4x16xf32>, tensor<2x6x4x16xf32>
  func.return %o, %lh, %dq, %dk : tensor<2x8x4x16xf32>, tensor<2x8x4xf32>, tensor<2x8x4x16xf32>, tensor<2x6x4x16xf32>
}
// CHECK-LABEL: func.func @attention_training(
// CHECK:         %o, %lh = tn.sdpa %q, %k, %k scale = 2.500000e-01 causal heads_last : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x8x4x16xf32>, tensor<2x8x4xf32>
// CHECK-NEXT:    %dq, %dk, %dv = tn.sdpa_backward %q, %q, %k, %k, %q, %l scale = 2.500000e-01 causal heads_last : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> -> tensor<2x8x4x16xf32>, tensor<2x6x4x16xf32>, tensor<2x6x4x16xf32>
// CHECK-NEXT:    func.return %o, %lh, %dq, %dk
