"""Bugs irc-fuzz found, one test each, written as the shrunk program it printed. Open bugs in code other
engineers own are xfail(strict=True) with the reason, and listed in tools/fuzz/known.py."""

import pytest
import torch

import irc
from irc.tools.fuzz.frontdoor import LOCATED, run_opt
from irc.tools.fuzz.oracle import compare

from .conftest import targets


def matches_eager(fn, make_inputs, target: str) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=irc.backend, options={"strict": True, "target": target})
    assert compare(fn, compiled, make_inputs) is None


def opt_fails_located(text: str, *flags: str) -> str:
    code, _, err = run_opt(text, flags, timeout=20)
    assert code == 1 and LOCATED.search(err) and "internal error" not in err, err
    return err


# -- fixed ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", targets())
@pytest.mark.parametrize("dims", [(), []])
def test_all_any_over_no_dims_reduce_nothing(target, dims):
    """torch.all(x, dim=()) is x != 0 elementwise (eager), not a full reduction (irc imported it as one)."""
    def fn(x):
        return torch.all(x, dim=dims), torch.any(x, dim=dims, keepdim=True)

    matches_eager(fn, lambda: [torch.tensor([[0.0, 1.5, float("nan")], [2.0, 0.0, -1.0]])[:, 1:]], target)


@pytest.mark.parametrize("target", targets())
def test_all_any_of_uint8_stay_uint8(target):
    """any/all of a uint8 tensor are uint8 in eager (legacy); irc built i1 and failed its own type check."""
    def fn(x):
        return torch.all(x), torch.any(x, dim=1), torch.all(x, dim=(0,), keepdim=True)

    matches_eager(fn, lambda: [torch.tensor([[0, 3, 1], [2, 0, 255]], dtype=torch.uint8)], target)


def test_irc_opt_unterminated_string_literal_does_not_hang():
    """A `"` with no closing quote on its line sent xDSL's string-literal regex into exponential backtracking."""
    err = opt_fails_located('func.func @neg_result_eg"(%x) : (tensor<4xf32>) -> tensor<8xf32>\n  func.return %r : tensor<8xf32>\n}\n')
    assert ":1:25: error: " in err


@pytest.mark.parametrize("text", ['"\n', ".func @constant_typ\n"])
def test_irc_opt_error_in_the_first_token_is_located(text):
    """The parser lexes the first token when it is built, outside parse_located's handler: the error was unlocated."""
    assert ":1:1: error: " in opt_fails_located(text)


# -- open (owned by other engineers) ------------------------------------------------------------------


@pytest.mark.xfail(strict=True, raises=Exception, reason="targets/cpu/externs.py LinearKernel.choose divides by x.shape[-1]: "
                   "ZeroDivisionError for mm with K == 0 (known bug cpu-linear-k0)")
def test_cpu_mm_with_empty_inner_dim():
    def fn(a, b):
        return torch.mm(a, b)

    matches_eager(fn, lambda: [torch.ones(3, 0), torch.ones(0, 3)], "cpu")
