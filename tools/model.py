"""`irc-opt --model pkg.module:factory --inputs 32x1024xf32`: capture a model's graphs through irc's own backend.

The model runs once under `torch.compile(backend=irc.backend, options={"dump_dir": ...})` on random
inputs of the given shapes, so the graphs are exactly what a user's compile produces (Dynamo, AOT
autograd, irc's decompositions and importer); the compile report and the per-graph stage dumps
then give each graph's IR.
"""

import importlib
import importlib.util
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import TensorType
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError


class ModelError(Exception):
    """The --model/--inputs request cannot be carried out; the message says why."""


@dataclass
class CapturedGraph:
    index: int  # irc's graph number in this process (the compile report's)
    title: str  # "graph 0 (inference, dynamo graph 1): 9 FX nodes"
    notes: list[str] = field(default_factory=list)  # imported ops, fallbacks, why it runs eagerly
    stages: dict[str, str] = field(default_factory=dict)  # stage name -> dumped text


def load_factory(spec: str):
    """`pkg.module:name` or `path/to/file.py:name` -> the named attribute (default name: `model`)."""
    target, _, attr = spec.partition(":")
    attr = attr or "model"
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise ModelError(f"--model {spec}: no such file {target!r}")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            if "" not in sys.path:
                sys.path.insert(0, "")  # like `python -m`: modules in the working directory are found
            module = importlib.import_module(target)
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"--model {spec}: cannot import {target!r}: {type(e).__name__}: {e}") from None
    if not hasattr(module, attr):
        raise ModelError(f"--model {spec}: module {target!r} has no attribute {attr!r}")
    return getattr(module, attr)


def make_model(spec: str):
    """Call the factory (an nn.Module instance is used as it is)."""
    import torch

    factory = load_factory(spec)
    if isinstance(factory, torch.nn.Module):
        return factory
    try:
        model = factory()
    except Exception as e:
        raise ModelError(f"--model {spec}: the factory raised {type(e).__name__}: {e}") from None
    if not callable(model):
        raise ModelError(f"--model {spec}: the factory returned {type(model).__name__}, not an nn.Module or callable")
    return model


def parse_input(ctx: Context, spec: str):
    """`32x1024xf32` -> (shape, torch dtype), with MLIR's tensor type syntax (`f32` alone is a 0-d tensor)."""
    from irc.ir.types import torch_dtype

    try:
        t = Parser(ctx, f"tensor<{spec}>", "--inputs").parse_type()
        if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
            raise ModelError(f"--inputs {spec}: expected static sizes and an element type, e.g. 32x1024xf32")
        return tuple(t.get_shape()), torch_dtype(t.get_element_type())
    except ParseError as e:
        raise ModelError(f"--inputs {spec}: {e.msg} (expected e.g. 32x1024xf32, 8xi64, f32)") from None
    except KeyError:
        raise ModelError(f"--inputs {spec}: element type has no torch dtype") from None


def random_inputs(ctx: Context, specs: list[str]):
    import torch

    torch.manual_seed(0)
    tensors = []
    for spec in (s for arg in specs for s in arg.split(",") if s):
        shape, dtype = parse_input(ctx, spec)
        if dtype.is_floating_point or dtype.is_complex:
            tensors.append(torch.randn(shape, dtype=dtype))
        elif dtype == torch.bool:
            tensors.append(torch.rand(shape) > 0.5)
        else:
            tensors.append(torch.randint(0, 8, shape, dtype=dtype))
    return tensors


def capture(
    ctx: Context, model_spec: str, input_specs: list[str], *, dynamic: bool = False, backward: bool = False
) -> list[CapturedGraph]:
    """Compile and run the model once with irc; return each compiled graph's dumped stages and report."""
    import torch

    import irc
    from irc import report

    model = make_model(model_spec)
    inputs = random_inputs(ctx, input_specs)
    torch._dynamo.reset()
    start = report.mark()
    with tempfile.TemporaryDirectory(prefix="irc-opt-") as tmp:
        options = {"dump_dir": tmp, "strict": True}
        compiled = torch.compile(model, backend=irc.backend, dynamic=dynamic or None, options=options)
        try:
            if backward:
                for x in inputs:
                    x.requires_grad_(x.is_floating_point())
                outs = torch.utils._pytree.tree_leaves(compiled(*inputs))
                sum(o.float().sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad).backward()
            else:
                with torch.no_grad():
                    compiled(*inputs)
        except Exception as e:
            cause = getattr(e, "inner_exception", None) or e.__cause__ or e
            raise ModelError(
                f"--model {model_spec}: compiling or running it failed: {type(cause).__name__}: {cause}"
            ) from e
        return [_captured(g) for g in report.reports_since(start).graphs]


def _captured(g) -> CapturedGraph:
    title = f"graph {g.index} ({g.kind}, dynamo graph {g.dynamo_graph}): {g.nodes} FX nodes"
    notes = [f"runs eagerly: {g.eager_graph}"] if g.eager_graph else []
    if g.imported:
        notes.append("imported: " + ", ".join(f"{op} x{n}" for op, n in sorted(g.imported.items(), key=str)))
    notes += [f"fallback {target}: {reason}" for target, reason in sorted(set(g.fallbacks))]
    stages = {}
    if g.dump_dir:
        for f in sorted(Path(g.dump_dir).iterdir()):  # NN-<stage>.<ext>, written by the backend's dumper
            stages[f.stem.split("-", 1)[-1]] = f.read_text()
    return CapturedGraph(g.index, title, notes, stages)
