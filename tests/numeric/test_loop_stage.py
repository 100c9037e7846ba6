"""Every tn op that lowers to a loop nest gives eager's results at the loop stage (after each pass) and at the mem stage.

Each case runs on contiguous and on strided (non-contiguous) inputs, with odd sizes (1 and primes).
The table names the torch function; the frontend imports it into the tn op under test.
"""

import pytest
import torch
import torch.nn.functional as F

from .stages import non_contiguous, run_stages

torch.manual_seed(0)


def f(*shape):
    return lambda: torch.randn(*shape)


def pos(*shape):
    return lambda: torch.rand(*shape) + 0.1


def unit(*shape):
    return lambda: torch.rand(*shape) * 1.8 - 0.9


def ints(*shape, lo=-9, hi=10, dtype=torch.int64):
    return lambda: torch.randint(lo, hi, shape, dtype=dtype)


def nonzero_ints(*shape):
    return lambda: torch.randint(1, 7, shape) * (torch.randint(0, 2, shape) * 2 - 1)


def bools(*shape):
    return lambda: torch.rand(*shape) > 0.5


S = (5, 7)
UNARY_FLOAT = {
    "neg": (torch.neg, f(*S)),
    "abs": (torch.abs, f(*S)),
    "exp": (torch.exp, f(*S)),
    "exp2": (torch.exp2, f(*S)),
    "expm1": (torch.expm1, f(*S)),
    "log": (torch.log, pos(*S)),
    "log2": (torch.log2, pos(*S)),
    "log10": (torch.log10, pos(*S)),
    "log1p": (torch.log1p, pos(*S)),
    "sqrt": (torch.sqrt, pos(*S)),
    "rsqrt": (torch.rsqrt, pos(*S)),
    "reciprocal": (torch.reciprocal, pos(*S)),
    "sin": (torch.sin, f(*S)),
    "cos": (torch.cos, f(*S)),
    "tan": (torch.tan, unit(*S)),
    "asin": (torch.asin, unit(*S)),
    "acos": (torch.acos, unit(*S)),
    "atan": (torch.atan, f(*S)),
    "sinh": (torch.sinh, f(*S)),
    "cosh": (torch.cosh, f(*S)),
    "tanh": (torch.tanh, f(*S)),
    "asinh": (torch.asinh, f(*S)),
    "acosh": (lambda x: torch.acosh(x + 1), pos(*S)),
    "atanh": (torch.atanh, unit(*S)),
    "sigmoid": (torch.sigmoid, f(*S)),
    "erf": (torch.erf, f(*S)),
    "floor": (torch.floor, f(*S)),
    "ceil": (torch.ceil, f(*S)),
    "round": (lambda x: torch.round(x * 2), f(*S)),
    "trunc": (torch.trunc, f(*S)),
    "sign": (torch.sign, f(*S)),
    "relu": (torch.relu, f(*S)),
    "gelu": (F.gelu, f(*S)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), f(*S)),
    "isnan": (lambda x: torch.isnan(x.log()), f(*S)),
    "isinf": (lambda x: torch.isinf(1 / x.round()), f(*S)),
    "logical_not": (torch.logical_not, f(*S)),
    "signbit": (torch.signbit, f(*S)),
    "silu": (F.silu, f(*S)),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), f(*S)),
    "leaky_relu": (F.leaky_relu, f(*S)),
    "hardtanh": (F.hardtanh, f(*S)),
}
UNARY_INT = {
    "neg_i": (torch.neg, ints(*S)),
    "abs_i": (torch.abs, ints(*S)),
    "sign_i": (torch.sign, ints(*S)),
    "relu_i": (torch.relu, ints(*S)),
    "bitwise_not_i": (torch.bitwise_not, ints(*S)),
    "not_b": (torch.logical_not, bools(*S)),
    "abs_i32": (torch.abs, ints(*S, dtype=torch.int32)),
}
BINARY = {
    "add": (torch.add, f(*S), f(*S)),
    "sub": (torch.sub, f(*S), f(*S)),
    "mul": (torch.mul, f(*S), f(*S)),
    "div": (torch.div, f(*S), pos(*S)),
    "floor_divide": (torch.floor_divide, f(*S), pos(*S)),
    "remainder": (torch.remainder, f(*S), pos(*S)),
    "fmod": (torch.fmod, f(*S), pos(*S)),
    "pow": (torch.pow, pos(*S), f(*S)),
    "maximum": (torch.maximum, f(*S), f(*S)),
    "minimum": (torch.minimum, f(*S), f(*S)),
    "atan2": (torch.atan2, f(*S), f(*S)),
    "hypot": (torch.hypot, f(*S), f(*S)),
    "copysign": (torch.copysign, f(*S), f(*S)),
    "add_broadcast": (torch.add, f(*S), f(S[1])),
    "mul_scalar": (lambda a, b: a * 3.0 + b, f(*S), f(1, S[1])),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=2), f(*S), f(*S)),
    "eq": (lambda a, b: a.round() == b.round(), f(*S), f(*S)),
    "ne": (lambda a, b: a.round() != b.round(), f(*S), f(*S)),
    "lt": (torch.lt, f(*S), f(*S)),
    "le": (torch.le, f(*S), f(*S)),
    "gt": (torch.gt, f(*S), f(*S)),
    "ge": (torch.ge, f(*S), f(*S)),
    "where": (lambda a, b: torch.where(a > 0, a, b), f(*S), f(*S)),
    "masked_fill": (lambda a, b: a.masked_fill(b > 0, float("-inf")), f(*S), f(*S)),
    "add_i": (torch.add, ints(*S), ints(*S)),
    "mul_i": (torch.mul, ints(*S), ints(*S)),
    "floordiv_i": (torch.floor_divide, ints(*S), nonzero_ints(*S)),
    "remainder_i": (torch.remainder, ints(*S), nonzero_ints(*S)),
    "fmod_i": (torch.fmod, ints(*S), nonzero_ints(*S)),
    "truncdiv_i": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), ints(*S), nonzero_ints(*S)),
    "and_i": (torch.bitwise_and, ints(*S), ints(*S)),
    "or_i": (torch.bitwise_or, ints(*S), ints(*S)),
    "xor_i": (torch.bitwise_xor, ints(*S), ints(*S)),
    "shl_i": (torch.bitwise_left_shift, ints(*S), ints(*S, lo=0, hi=5)),
    "shr_i": (torch.bitwise_right_shift, ints(*S), ints(*S, lo=0, hi=5)),
    "max_i": (torch.maximum, ints(*S), ints(*S)),
    "pow_i": (torch.pow, ints(*S, lo=0, hi=4), ints(*S, lo=0, hi=4)),
    "and_b": (torch.logical_and, bools(*S), bools(*S)),
    "or_b": (torch.logical_or, bools(*S), bools(*S)),
    "xor_b": (torch.logical_xor, bools(*S), bools(*S)),
    "lt_i": (torch.lt, ints(*S), ints(*S)),
    "fmax": (lambda a, b: torch.fmax(a.log(), b), f(*S), f(*S)),
    "fmin": (lambda a, b: torch.fmin(a, b.log()), f(*S), f(*S)),
    "promote": (lambda a, b: a + b, ints(*S), f(*S)),
}
CONVERT = {
    "to_int": (lambda x: (x * 4).to(torch.int64), f(*S)),
    "to_float": (lambda x: x.to(torch.float32), ints(*S)),
    "to_bool": (lambda x: x.round().to(torch.bool), f(*S)),
    "bool_to_float": (lambda x: x.float(), bools(*S)),
    "to_f64": (lambda x: x.double() * 2, f(*S)),
    "to_i32": (lambda x: x.to(torch.int32), ints(*S)),
    "f16": (lambda x: (x.half() * 2).exp(), f(*S)),
    "bf16": (lambda x: x.bfloat16() + 1, f(*S)),
}
REDUCE = {
    "sum": (lambda x: x.sum(1), f(*S)),
    "sum_keep": (lambda x: x.sum(0, keepdim=True), f(*S)),
    "sum_all": (torch.sum, f(*S)),
    "sum_dims": (lambda x: x.sum((0, 2)), f(3, 5, 7)),
    "prod": (lambda x: x.prod(1), unit(*S)),
    "mean": (lambda x: x.mean(-1), f(*S)),
    "mean_all": (torch.mean, f(*S)),
    "amax": (lambda x: x.amax(1), f(*S)),
    "amin": (lambda x: x.amin(0), f(*S)),
    "max_dim": (lambda x: x.max(1), f(*S)),
    "min_dim": (lambda x: x.min(0), f(*S)),
    "argmax": (lambda x: x.argmax(1), f(*S)),
    "argmin": (lambda x: x.argmin(0), f(*S)),
    "argmax_all": (torch.argmax, f(*S)),
    "any": (lambda x: (x > 1).any(1), f(*S)),
    "all": (lambda x: (x > -1).all(0), f(*S)),
    "var": (lambda x: x.var(1), f(*S)),
    "var0": (lambda x: x.var(0, correction=0), f(*S)),
    "std": (lambda x: x.std(-1, keepdim=True), f(*S)),
    "sum_i": (lambda x: x.sum(1), ints(*S)),
    "amax_i": (lambda x: x.amax(0), ints(*S)),
    "sum_b": (lambda x: x.sum(1), bools(*S)),
    "norm": (lambda x: x.norm(dim=1), f(*S)),
    "logsumexp": (lambda x: x.logsumexp(1), f(*S)),
}
VIEWS = {
    "reshape": (lambda x: x.reshape(7, 5) + 1, f(*S)),
    "flatten": (lambda x: x.flatten() * 2, f(3, 5, 7)),
    "view_split": (lambda x: x.reshape(5, 7, 1).reshape(35) - 1, f(*S)),
    "permute": (lambda x: x.permute(2, 0, 1) * 2, f(3, 5, 7)),
    "t": (lambda x: x.t() * 2, f(*S)),
    "squeeze": (lambda x: x.squeeze(1) + 1, f(5, 1, 7)),
    "unsqueeze": (lambda x: x.unsqueeze(1) * 2, f(*S)),
    "slice": (lambda x: x[1:4, ::2] + 1, f(*S)),
    "select": (lambda x: x[2] * 2, f(*S)),
    "narrow": (lambda x: x.narrow(1, 2, 3) * 2, f(*S)),
    "flip": (lambda x: x.flip(1) * 2, f(*S)),
    "expand": (lambda x: x.expand(3, 5, 7) * 1, f(5, 1)),
    "as_strided": (lambda x: torch.as_strided(x.contiguous() + 0, (3, 3), (1, 7)) * 2, f(*S)),
    "cat": (lambda x: torch.cat([x, x * 2, x[:2]], 0), f(*S)),
    "cat1": (lambda x: torch.cat([x, x.exp()], 1), f(*S)),
    "stack": (lambda x: torch.stack([x, -x], 1), f(*S)),
    "pad": (lambda x: F.pad(x, (1, 2, 0, 1), value=3.0), f(*S)),
    "pad_crop": (lambda x: F.pad(x, (-1, 2)), f(*S)),
    "repeat": (lambda x: x.repeat(2, 1) + 1, f(*S)),
    "transpose_reshape": (lambda x: x.transpose(0, 1).reshape(-1) + 1, f(*S)),
    "one_row": (lambda x: x.sum(1) * x[:, 0], f(1, 13)),
}
CREATE = {
    "arange": (lambda x: x + torch.arange(7.0), f(*S)),
    "full": (lambda x: x * torch.full((5, 7), 2.5), f(*S)),
    "zeros_like": (lambda x: torch.zeros_like(x) + x, f(*S)),
    "constant": (lambda x: x + 1.5, f(*S)),
    "tril": (lambda x: torch.tril(x), f(*S)),
}
NN = {
    "softmax": (lambda x: torch.softmax(x, -1), f(*S)),
    "softmax0": (lambda x: torch.softmax(x, 0), f(*S)),
    "log_softmax": (lambda x: torch.log_softmax(x, 1), f(*S)),
    "softmax_masked": (lambda x: torch.softmax(x.masked_fill(x > 1, float("-inf")), -1), f(*S)),
    "layer_norm": (lambda x: F.layer_norm(x, (7,)), f(*S)),
    "layer_norm_affine": (lambda x, w, b: F.layer_norm(x, (7,), w, b), f(*S), f(7), f(7)),
    "layer_norm_2d": (lambda x, w: F.layer_norm(x, (5, 7), w), f(3, 5, 7), f(5, 7)),
    "batch_norm_eval": (lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b), f(2, 3, 5, 5), f(3), pos(3), f(3), f(3)),
    "batch_norm_train": (
        lambda x, m, v: F.batch_norm(x, m.clone(), v.clone(), training=True),
        f(2, 3, 5, 5),
        f(3),
        pos(3),
    ),
    "embedding": (lambda w, i: F.embedding(i, w), f(11, 7), ints(3, 5, lo=0, hi=11)),
    "index_select": (lambda x, i: x.index_select(1, i), f(*S), ints(4, lo=0, hi=7)),
    "gather": (lambda x, i: x.gather(1, i), f(*S), ints(5, 3, lo=0, hi=7)),
    "index": (lambda x, i: x[i], f(*S), ints(4, lo=-5, hi=5)),
    "index2": (lambda x, i, j: x[i, :, j], f(5, 3, 7), ints(4, lo=0, hi=5), ints(4, lo=0, hi=7)),
    "select_scatter": (lambda x, s: torch.select_scatter(x, s, 0, 2), f(*S), f(7)),
    "slice_scatter": (lambda x, s: torch.slice_scatter(x, s, 1, 1, 7, 2), f(*S), f(5, 3)),
    "max_pool": (lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), f(2, 3, 7, 9)),
    "max_pool_dilated": (lambda x: F.max_pool2d(x, 2, 1, 0, dilation=2, ceil_mode=True), f(3, 7, 5)),
    "avg_pool": (lambda x: F.avg_pool2d(x, 3, 2, 1), f(2, 3, 7, 9)),
    "avg_pool_no_pad": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), f(2, 3, 7, 9)),
    "avg_pool_divisor": (lambda x: F.avg_pool2d(x, 2, divisor_override=3), f(1, 2, 6, 5)),
    "adaptive_avg_pool": (lambda x: F.adaptive_avg_pool2d(x, (3, 2)), f(2, 3, 7, 5)),
    "global_avg_pool": (lambda x: F.adaptive_avg_pool2d(x, 1), f(2, 3, 7, 5)),
}
CASES = {**UNARY_FLOAT, **UNARY_INT, **BINARY, **CONVERT, **REDUCE, **VIEWS, **CREATE, **NN}


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("name", list(CASES))
def test_op(name, layout):
    fn, *makers = CASES[name]
    inputs = [m() for m in makers]
    if layout == "strided":
        inputs = [non_contiguous(x) if x.dtype.is_floating_point or x.dim() > 1 else x for x in inputs]
    run = run_stages(fn, *inputs)
    assert run.kernels >= 1 or run.externs >= 1


@pytest.mark.parametrize("shape", [(1, 1), (1, 13), (13, 1), (2, 3, 5), (17,)])
def test_odd_sizes(shape):
    x = torch.randn(*shape)
    run_stages(lambda x: (torch.softmax(x * 2, -1) + x.sum(-1, keepdim=True)).relu() - x.mean(), x)


@pytest.mark.parametrize("n", [1, 3, 13])
def test_dynamic_sizes(n):
    run_stages(lambda x: torch.softmax(x * 2, -1).view(-1) * x.shape[0], torch.randn(n + 1, 17), dynamic=True)
    run_stages(lambda x: F.layer_norm(x, (x.shape[-1],)) + x.amax(0), torch.randn(n + 2, 7), dynamic=True)
