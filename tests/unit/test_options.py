"""Options are validated up front with messages that name the valid choices; irc is a registered backend."""

import dataclasses

import pytest
import torch

import irc
from irc.options import MODES, TARGETS, Options

VALID_OPTIONS = [f.name for f in dataclasses.fields(Options) if f.name != "mode"]


def test_defaults():
    opts = Options.resolve()
    assert opts.mode == "default" and opts.target in TARGETS
    assert Options.resolve(None, None) == Options.resolve("default", {})


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_resolves(mode):
    assert Options.resolve(mode).mode == mode


@pytest.mark.parametrize("target", TARGETS)
def test_every_target_resolves(target):
    assert Options.resolve(options={"target": target}).target == target


def test_unknown_option_is_named_with_the_valid_ones():
    with pytest.raises(ValueError) as e:
        Options.resolve(options={"bogus": 1})
    msg = str(e.value)
    assert "'bogus'" in msg
    assert all(name in msg for name in VALID_OPTIONS), msg


def test_several_unknown_options_are_all_named():
    with pytest.raises(ValueError, match="'also_bogus', 'bogus'"):
        Options.resolve(options={"bogus": 1, "also_bogus": 2, "strict": True})


def test_bad_mode_lists_the_modes():
    with pytest.raises(ValueError) as e:
        Options.resolve("fastest")
    assert "'fastest'" in str(e.value) and all(m in str(e.value) for m in MODES)


def test_bad_target_lists_the_targets():
    with pytest.raises(ValueError) as e:
        Options.resolve(options={"target": "tpu"})
    assert "'tpu'" in str(e.value) and all(t in str(e.value) for t in TARGETS)


def test_bad_option_types():
    with pytest.raises(ValueError, match="strict"):
        Options.resolve(options={"strict": "yes"})
    with pytest.raises(ValueError, match="dump_dir"):
        Options.resolve(options={"dump_dir": 3})


def test_torch_compile_with_an_unknown_option_raises_when_called():
    compiled = torch.compile(lambda x: x + 1, backend=irc.backend, options={"bogus": 1})
    with pytest.raises(Exception, match="unknown option.*'bogus'.*valid options"):
        compiled(torch.randn(3))


def test_torch_compile_with_a_bad_mode_raises_when_called():
    compiled = torch.compile(lambda x: x + 1, backend=irc.backend, mode="fastest")
    with pytest.raises(Exception, match="unknown mode 'fastest'"):
        compiled(torch.randn(3))


def test_irc_is_a_registered_dynamo_backend():
    assert "irc" in torch.compiler.list_backends()


def test_compile_by_backend_name_matches_eager():
    fn = lambda x, y: torch.relu(x * y + 1).sum(0)  # noqa: E731
    x, y = torch.randn(5, 7), torch.randn(7)
    start = irc.report.mark()
    torch.testing.assert_close(torch.compile(fn, backend="irc")(x, y), fn(x, y))
    assert irc.report.reports_since(start).graphs, "backend='irc' did not reach irc"
