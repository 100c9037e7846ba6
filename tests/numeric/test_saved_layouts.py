"""A training forward hands the activations it saves to the backward in the layout its program computed them
(dynamo/saved_layouts.py: AOT autograd's report_output_strides), not copied into eager's strides; the backward
is compiled for that layout, and gradients stay eager's."""

import torch
import torch.fx
from torch.profiler import profile

from irc.bench import models as M
from irc.bench.check import compare_steps, loss_fn, targets_for, train_step, twin
from irc.dynamo.saved_layouts import in_eager_layouts, take_saved_layouts
from tests.conftest import compile_irc

LAYERS = 2
TINY = {"vocab": 100, "d_model": 32, "heads": 4, "layers": LAYERS, "d_ff": 64, "max_len": 32}


def _forward_copies(step) -> int:
    """aten::copy_ calls the compiled forward's runtime makes itself (its outputs restrided), in one step."""
    with profile() as p:
        step()
    return sum(
        1
        for e in p.events()
        if e.name == "aten::copy_" and e.cpu_parent is not None and e.cpu_parent.name == "CompiledFunction"
    )


def test_encoder_forward_saves_q_k_v_without_copying_them():
    """nn.TransformerEncoder splits q, k and v out of one in-projection: in eager they are strided views of it,
    irc computes each in its own dense buffer. Each was copied into eager's strides every step (3 per layer, 2 MB
    each at d256 16x128); now only the attention output is, whose head merge the forward also returns as a view
    of it (views replay on eager's layout). Gradients and the step equal eager's."""
    model, inputs = M.torch_transformer(batch=2, seq=16, **TINY)
    mine = twin(model)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
    loss = compile_irc(loss_fn(mine))
    got = train_step(mine, inputs, loss, target, optimizer="sgd")
    want = train_step(model, inputs, loss_fn(model), target, optimizer="sgd")
    compare_steps(got, want)
    assert _forward_copies(lambda: loss(*inputs, target).backward()) == LAYERS


def _reads_layout(x):
    return torch.ops.aten.as_strided.default(x, (2, 3), (1, 2)) * 2


def test_a_backward_input_read_by_as_strided_gets_eagers_layout():
    """as_strided reads memory, traced on eager's layout of its input: a saved input it reads keeps eager's strides
    in the compiled backward's metadata, and the runtime copies it into them (the others take the new layout)."""
    gm = torch.fx.symbolic_trace(_reads_layout)
    (ph,) = [n for n in gm.graph.nodes if n.op == "placeholder"]
    ph.meta["val"] = torch.empty_strided((3, 2), (1, 3))  # eager's: column-major
    relaid, restore = take_saved_layouts(gm, [torch.empty(3, 2)])  # the forward's own: row-major
    assert (relaid, restore) == ({}, {0: (1, 3)})
    assert ph.meta["val"].stride() == (1, 3)
    x = torch.arange(6.0).view(3, 2)
    want = _reads_layout(torch.empty_strided((3, 2), (1, 3)).copy_(x))
    assert not torch.equal(_reads_layout(x), want)  # the layout matters here
    args = [x]
    torch.testing.assert_close(in_eager_layouts(lambda a: [_reads_layout(*a)], restore)(args)[0], want)
    assert args[0] is x  # the caller's list is left as it was


def test_other_backward_inputs_take_the_new_layout():
    gm = torch.fx.symbolic_trace(lambda x: x * 2)
    (ph,) = [n for n in gm.graph.nodes if n.op == "placeholder"]
    ph.meta["val"] = torch.empty_strided((3, 2), (1, 3))
    relaid, restore = take_saved_layouts(gm, [torch.empty(3, 2)])
    assert (relaid, restore) == ({0: (1, 3)}, {})
    assert ph.meta["val"].stride() == (2, 1)
