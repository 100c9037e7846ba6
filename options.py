"""Compile options: `torch.compile(m, backend="irc", mode=..., options={...})`, validated up front."""

from dataclasses import dataclass, fields
from typing import Any

MODES = ("default", "reduce-overhead", "max-autotune")
LAYOUTS = ("auto", "nchw", "nhwc")  # convolution regions: chosen by the cost model (lowering/select_layout.py), or forced
TARGETS = ("cpu", "reference", "triton")
# "auto": the library's, except that cpu max-autotune measures generated against library for small products;
# "extern": torch's kernels; "loops": irc's generated loop nests (lowering/matmul_loops.py), the epilogue fused;
# "dot" (triton target only): irc's tl.dot template with the epilogue fused
MATMULS = ("auto", "extern", "loops", "dot")


@dataclass(frozen=True)
class Options:
    mode: str = "default"
    target: str = "cpu"  # where compiled graphs run: "cpu" (llvmlite-JITed kernels), "triton" (generated Triton kernels) or "reference" (the torch-backed tn executor)
    dump_dir: str | None = None  # write every stage's IR of every graph here
    strict: bool = False  # raise irc's own compile errors instead of running that graph eagerly
    verify: bool = False  # run each graph before and after every pass on random inputs; a pass that changes the result is reported
    freeze: bool | None = None  # inference graphs: parameters become constants, BatchNorm and constants folded, checked per call (frontend/freeze.py); None or "auto" (the default) and True: on; False: off
    attention: bool = True  # substitute matmul-softmax-matmul attention with one scaled_dot_product_attention (lowering/fuse_attention.py)
    layout: str = "auto"  # per convolution region: "auto" (cost model: conversions, measured conv speed), "nchw" or "nhwc"
    matmul: str = "auto"  # matrix products: "auto", "extern" (torch's mm/bmm), "loops" (generated nests) or, on triton, "dot" (see MATMULS)
    cache: bool = True  # reuse compiled code and extern choices from the on-disk cache (IRC_CACHE_DIR, see targets/cpu/cache.py)

    @classmethod
    def resolve(cls, mode: str | None = None, options: dict[str, Any] | None = None) -> "Options":
        options = dict(options or {})
        # torch.compile takes mode= or options=, not both: options={"mode": ...} carries it alongside others
        mode = mode or options.pop("mode", None) or "default"
        if mode not in MODES:
            raise ValueError(f"irc: unknown mode {mode!r}; valid modes: {', '.join(MODES)}")
        valid = [f.name for f in fields(cls) if f.name != "mode"]
        if unknown := sorted(set(options) - set(valid)):
            raise ValueError(f"irc: unknown option(s) {', '.join(map(repr, unknown))}; valid options: {', '.join(valid)}")
        if options.get("target", "cpu") not in TARGETS:
            raise ValueError(f"irc: unknown target {options['target']!r}; valid targets: {', '.join(TARGETS)}")
        if options.get("layout", "auto") not in LAYOUTS:
            raise ValueError(f"irc: unknown layout {options['layout']!r}; valid layouts: {', '.join(LAYOUTS)}")
        if not (options.get("freeze") is None or isinstance(options["freeze"], bool) or options["freeze"] == "auto"):
            raise ValueError("irc: option 'freeze' must be True, False or 'auto'")
        if options.get("freeze") == "auto":
            options["freeze"] = None
        if options.get("matmul", "extern") not in MATMULS:
            raise ValueError(f"irc: unknown matmul {options['matmul']!r}; valid choices: {', '.join(MATMULS)}")
        if options.get("matmul") == "dot" and options.get("target", "cpu") != "triton":
            raise ValueError("irc: matmul='dot' is a tl.dot template: it needs target='triton'")
        for name in ("strict", "verify", "cache", "attention"):
            if name in options and not isinstance(options[name], bool):
                raise ValueError(f"irc: option {name!r} must be a bool")
        if options.get("dump_dir") is not None and not isinstance(options["dump_dir"], str):
            raise ValueError("irc: option 'dump_dir' must be a path string")
        return cls(mode=mode, **options)
