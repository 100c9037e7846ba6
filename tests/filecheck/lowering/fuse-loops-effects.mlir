// RUN: irc-opt --split-input-file %s -p fuse-loops | filecheck %s
// A producer fused with its results kept moves the ops that read them after the fused nest, and past an eager call
// (an op with effects) that moves, every later one too, to keep their order. Here the zero %0 feeds, through a view,
// an eager select %3; moving %3 would move the other eager select %4 as well, which the consumer %5 reads: keeping
// %0 in %5 would make a cycle ("fusion created a cycle", irc-fuzz seed 1201). %0 stays for the view, and %5 and %9
// fuse with the zero recomputed.

func.func @main(%primals: index, %select_scatter: tensor<?xf32>, %tangents: tensor<?xf32>) -> tensor<?xf32> {
  %0 = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<f32> {
    %1 = arith.constant 0.000000e+00 : f32
    loop.yield %1 : f32
  }
  %2 = loop.view %0[affine_map<(d0) -> ()>] sizes(%primals) : tensor<f32> -> tensor<?xf32>
  %3 = tn.aten_call "aten::select.int" args = "([{'t': 0}, 0, 1], {})" reason = "select on a dynamic dim or at a symbolic index"(%2) : (tensor<?xf32>) -> (tensor<f32>)
  %4 = tn.aten_call "aten::select.int" args = "([{'t': 0}, 0, 1], {})" reason = "select on a dynamic dim or at a symbolic index"(%select_scatter) : (tensor<?xf32>) -> (tensor<f32>)
  %5 = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<i1> {
    %6 = loop.load %4[affine_map<() -> ()>] : tensor<f32> -> f32
    %7 = loop.load %0[affine_map<() -> ()>] : tensor<f32> -> f32
    %8 = arith.cmpf ole, %6, %7 : f32
    loop.yield %8 : i1
  }
  %9 = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<f32> {
    %10 = loop.load %5[affine_map<() -> ()>] : tensor<i1> -> i1
    %11 = loop.load %0[affine_map<() -> ()>] : tensor<f32> -> f32
    %12 = loop.load %3[affine_map<() -> ()>] : tensor<f32> -> f32
    %13 = arith.select %10, %11, %12 : f32
    loop.yield %13 : f32
  }
  %14 = tn.aten_call "aten::select_scatter.default" args = "([{'t': 0}, {'t': 1}, 0, 1], {})" reason = "select_scatter along a dynamic dim"(%2, %9) : (tensor<?xf32>, tensor<f32>) -> (tensor<?xf32>)
  func.return %14 : tensor<?xf32>
}
// CHECK:       %0 = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<f32> {
// CHECK:       %2 = loop.view %0
// CHECK-NEXT:  %3 = tn.aten_call "aten::select.int"{{.*}}(%2)
// CHECK-NEXT:  %4 = tn.aten_call "aten::select.int"{{.*}}(%select_scatter)
// CHECK-NEXT:  %[[F:.*]] = loop.nest space = affine_map<() -> ()> iterators = []
// CHECK-NEXT:    loop.load %4
// CHECK:         loop.load %3
// CHECK:       tn.aten_call "aten::select_scatter.default"{{.*}}(%2, %[[F]])

// -----
// Siblings alike: fused at %b, the results of %a move there, so the eager call %e1 that reads them moves after it,
// and the eager call %e2 after %e1 (their order kept); %b reads %e2. The pair is refused with that reason.

func.func @siblings_around_eager_calls(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = loop.nest space = affine_map<() -> (8)> iterators = ["parallel"] : tensor<8xf32> {
    %0 = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<8xf32> -> f32
    %1 = math.exp %0 : f32
    loop.yield %1 : f32
  }
  %e1 = tn.aten_call "aten::sin.default" args = "([{'t': 0}], {})" reason = "test"(%a) : (tensor<8xf32>) -> (tensor<8xf32>)
  %e2 = tn.aten_call "aten::cos.default" args = "([{'t': 0}], {})" reason = "test"(%y) : (tensor<8xf32>) -> (tensor<8xf32>)
  %b = loop.nest space = affine_map<() -> (8)> iterators = ["parallel"] : tensor<8xf32> {
    %2 = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<8xf32> -> f32
    %3 = loop.load %e2[affine_map<(d0) -> (d0)>] : tensor<8xf32> -> f32
    %4 = arith.addf %2, %3 : f32
    loop.yield %4 : f32
  }
  func.return %b, %e1 : tensor<8xf32>, tensor<8xf32>
}
// CHECK-LABEL: func.func @siblings_around_eager_calls
// CHECK:       %a = loop.nest
// CHECK:       %e1 = tn.aten_call "aten::sin.default"
// CHECK-NEXT:  %e2 = tn.aten_call "aten::cos.default"
// CHECK-NEXT:  %b = loop.nest {{.*}}"sibling loop.nest@0: an eager call between them would move after the second, which reads it"
