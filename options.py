"""Compile options: `torch.compile(m, backend="irc", mode=..., options={...})`, validated up front.

Bad input is a ValueError that names the valid choices (and the closest one, for a misspelling). Two
defaults come from the environment (env.py): `strict` from IRC_CPU_STRICT, `dump_dir` from IRC_DUMP_DIR,
else TORCH_COMPILE_DEBUG=1 (torch's debug folder); resolving also checks every variable irc reads.
"""

import difflib
import os
from dataclasses import dataclass, fields
from typing import Any

from irc import env

MODES = ("default", "reduce-overhead", "max-autotune")
# inductor's mode names irc gives the same meaning: irc has no CUDA graphs to leave out
MODE_ALIASES = {"max-autotune-no-cudagraphs": "max-autotune"}
LAYOUTS = (
    "auto",
    "nchw",
    "nhwc",
)  # convolution regions: chosen by the cost model (lowering/select_layout.py), or forced
TARGETS = ("cpu", "reference", "triton")
# "auto": the library's, except that cpu max-autotune measures generated against library for small products;
# "extern": torch's kernels; "loops": irc's generated loop nests (lowering/matmul_loops.py), the epilogue fused;
# "dot" (triton target only): irc's tl.dot template with the epilogue fused
MATMULS = ("auto", "extern", "loops", "dot")


@dataclass(frozen=True)
class Options:
    mode: str = "default"
    target: str = "cpu"  # where compiled graphs run: "cpu" (llvmlite-JITed kernels), "triton" (generated Triton kernels) or "reference" (the torch-backed tn executor); not named, GPU tensors take "triton" (dynamo/backend.py)
    dump_dir: str | None = None  # write every stage's IR of every graph here
    strict: bool = False  # raise irc's own compile errors instead of running that graph eagerly
    verify: bool = (
        False  # run each graph before and after every pass on random inputs; a pass that changes the result is reported
    )
    freeze: bool | None = (
        None  # inference graphs: parameters become constants, BatchNorm and constants folded, checked per call (frontend/freeze.py); None or "auto" (the default) and True: on; False: off
    )
    attention: bool = True  # attention as one tn.sdpa: torch's calls (frontend/importers/nn.py), written-out patterns (lowering/fuse_attention.py)
    layout: str = (
        "auto"  # per convolution region: "auto" (cost model: conversions, measured conv speed), "nchw" or "nhwc"
    )
    matmul: str = (
        "auto"  # matrix products: "auto", "extern", "loops" (generated nests) or, on triton, "dot" (see MATMULS)
    )
    prepack: bool | None = (
        None  # frozen weights in oneDNN's packed layout, a second copy of them: None or "auto" (the default): a convolution's (its packed path runs 1.6x its plain one) but not a linear layer's (a few percent), True: every one, False: none (docs/guide.md)
    )
    cache: bool = True  # reuse compiled code and extern choices from the on-disk cache (IRC_CACHE_DIR, see cache.py)
    eager_ops: frozenset[str] = (
        frozenset()
    )  # aten ops run by eager torch ("aten::addmm" every overload, "aten::addmm.default" one)

    @classmethod
    def resolve(cls, mode: str | None = None, options: dict[str, Any] | None = None) -> "Options":
        env.check_all()
        options = dict(options or {})
        # torch.compile takes mode= or options=, not both: options={"mode": ...} carries it alongside others
        in_options = options.pop("mode", None)
        if mode and in_options and mode != in_options:
            raise ValueError(f"irc: mode={mode!r} and options['mode']={in_options!r} disagree")
        mode = mode or in_options or "default"
        mode = MODE_ALIASES.get(mode, mode)
        _check_choice("mode", mode, MODES, "modes")
        valid = [f.name for f in fields(cls)]
        if unknown := sorted(set(options) - set(valid)):
            hints = "".join(_did_you_mean(u, valid) for u in unknown)
            raise ValueError(
                f"irc: unknown option(s) {', '.join(map(repr, unknown))}{hints}; valid options: {', '.join(valid)}"
            )
        _check_choice("target", options.get("target", "cpu"), TARGETS, "targets")
        _check_choice("layout", options.get("layout", "auto"), LAYOUTS, "layouts")
        if not (options.get("freeze") is None or isinstance(options["freeze"], bool) or options["freeze"] == "auto"):
            raise ValueError("irc: option 'freeze' must be True, False or 'auto'")
        if options.get("freeze") == "auto":
            options["freeze"] = None
        _check_choice("matmul", options.get("matmul", "auto"), MATMULS, "choices")
        if options.get("matmul") == "dot" and options.get("target", "cpu") != "triton":
            raise ValueError("irc: matmul='dot' is a tl.dot template: it needs target='triton'")
        if not (options.get("prepack") is None or isinstance(options["prepack"], bool) or options["prepack"] == "auto"):
            raise ValueError("irc: option 'prepack' must be True, False or 'auto'")
        if options.get("prepack") == "auto":
            options["prepack"] = None
        for name in ("strict", "verify", "cache", "attention"):
            if name in options and not isinstance(options[name], bool):
                raise ValueError(f"irc: option {name!r} must be a bool")
        options.setdefault("strict", env.get("IRC_CPU_STRICT"))
        if "dump_dir" not in options:
            options["dump_dir"] = _dump_dir_from_env()
        elif options["dump_dir"] is not None:
            if not isinstance(options["dump_dir"], (str, os.PathLike)):
                raise ValueError("irc: option 'dump_dir' must be a path (str or os.PathLike) or None")
            options["dump_dir"] = os.fspath(options["dump_dir"])
        if "eager_ops" in options:
            options["eager_ops"] = eager_op_names(options["eager_ops"])
        return cls(mode=mode, **options)


def _did_you_mean(word, choices) -> str:
    close = difflib.get_close_matches(str(word), choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_choice(what: str, value, choices, plural: str) -> None:
    if value not in choices:
        raise ValueError(
            f"irc: unknown {what} {value!r}{_did_you_mean(value, choices)}; valid {plural}: {', '.join(choices)}"
        )


def _dump_dir_from_env() -> str | None:
    if path := env.get("IRC_DUMP_DIR"):
        return path
    if env.get("TORCH_COMPILE_DEBUG") == "1":  # as torch reads it: inductor's dumps and ours side by side
        from torch._dynamo.utils import get_debug_dir

        return os.path.join(get_debug_dir(), "irc")
    return None


def eager_op_names(ops) -> frozenset[str]:
    """options["eager_ops"] -> qualified names: "aten::addmm" (every overload) or "aten::addmm.default".
    Accepts those, "aten.addmm[.default]", a bare "addmm", and torch.ops.aten.addmm[.default] itself."""
    import torch

    if isinstance(ops, (str, torch._ops.OpOverload, torch._ops.OpOverloadPacket)) or not hasattr(ops, "__iter__"):
        raise ValueError(
            "irc: option 'eager_ops' must be a list of aten op names, e.g. ['aten.addmm', 'aten.mm.default']"
        )
    known = {name.split(".")[0] for name in torch._C._dispatch_get_all_op_names()}
    names = set()
    for op in ops:
        if isinstance(op, torch._ops.OpOverload):
            op = f"{op._schema.name}.{op._overloadname}"
        elif isinstance(op, torch._ops.OpOverloadPacket):
            op = op._qualified_op_name
        if not isinstance(op, str):
            raise ValueError(f"irc: option 'eager_ops': {op!r} is not an op name")
        text = op.strip().removeprefix("torch.ops.")
        qualified, _, overload = (text if "::" in text else "aten::" + text.removeprefix("aten.")).partition(".")
        if qualified not in known:
            raise ValueError(f"irc: option 'eager_ops': unknown op {op!r}{_did_you_mean(qualified, known)}")
        ns, name = qualified.split("::")
        overloads = getattr(getattr(torch.ops, ns), name).overloads()
        if overload and overload not in overloads:
            hint = _did_you_mean(overload, overloads)
            raise ValueError(
                f"irc: option 'eager_ops': {qualified} has no overload {overload!r}{hint}; "
                f"its overloads: {', '.join(overloads)}"
            )
        names.add(f"{qualified}.{overload}" if overload else qualified)
    return frozenset(names)
