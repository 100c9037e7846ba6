"""Int8 models (issue 53): PT2E with torchao's X86InductorQuantizer, calibrated on the example input, against eager
float32, interleaved in one run (`python -m irc.bench.compare --quant int8`). The CNNs are quantized statically; the
transformers (MiniTransformer b16x128, HF BERT-base 1x128 with its attention mask) dynamically
(`is_dynamic=True`: activations' scale and zero point computed per call, int8 linears, the rest float32).
`--quant int8wo`: weight-only int8 (torchao's quantize_(model, Int8WeightOnlyConfig()): int8 weights with per-row
scales, float32 activations) on the MLP b1 and HF BERT-base 1x128.

Per model: eager float32, irc float32, eager int8 (the converted graph as it is: quantize / dequantize around float
products), inductor int8 with torch._inductor.config.freezing on (its docs require it for the int8 kernels), irc
int8 (for weight-only: eager float32, irc float32, eager weight-only, inductor with freezing, irc). Steady calls in rounds, each round every variant once in a rotating order; medians and quartiles; each
variant's relative error against float32 (||y - y32|| / ||y32||) and its largest difference from eager int8 in
quantization steps of the output; irc's compile report's eager fallbacks and reference kernels per variant; the
model's weight bytes and each variant's resident memory left after its first call (a float copy of int8 weights
shows there).
torchao is the `bench` extra's, not irc's: without it the run says so and stops.
"""

import json
import os
import statistics
import time
import warnings
from pathlib import Path

import torch

from . import models

RESULTS = Path(__file__).resolve().parent / "results"


def _bert_base():
    from . import hf_models

    return hf_models.bert(batch=1, seq=128, hidden=768, layers=12, heads=12, ff=3072)


MODELS = {  # name -> (model and inputs, scheme: PT2E "static" / "dynamic", or torchao's "weight-only")
    "convnet-b32": (lambda: models.convnet(batch=32), "static"),
    "resnet18-b8": (lambda: models.resnet18(batch=8), "static"),
    "mini-transformer-dyn-b16": (lambda: models.mini_transformer(batch=16, seq=128), "dynamic"),
    "hf-bert-base-dyn-b1": (_bert_base, "dynamic"),
    "mlp-wo-b1": (lambda: models.mlp(batch=1), "weight-only"),
    "hf-bert-base-wo-b1": (_bert_base, "weight-only"),
}
SCHEMES = {"int8": ("static", "dynamic"), "int8wo": ("weight-only",)}  # --quant's choices
VARIANTS = ("eager-fp32", "irc-fp32", "eager-int8", "inductor-int8", "irc-int8")


def missing() -> str | None:
    """Why PT2E cannot run here (torchao absent), else None."""
    try:
        import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401
    except ImportError as e:
        return f"torchao is not installed ({e}); pip install irc[bench]"
    return None


def quantize(model: torch.nn.Module, x, dynamic: bool = False) -> torch.nn.Module:
    """The int8 model PT2E makes: export, prepare with X86InductorQuantizer's default (static, or `dynamic`;
    per-channel weights), calibrate on `x` (one input, or a tuple of them), convert."""
    warnings.filterwarnings("ignore", module="torchao")
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    inputs = x if isinstance(x, tuple) else (x,)
    exported = torch.export.export(model.eval(), inputs).module()
    config = xiq.get_default_x86_inductor_quantization_config(is_dynamic=dynamic)
    prepared = prepare_pt2e(exported, xiq.X86InductorQuantizer().set_global(config))
    with torch.no_grad():
        prepared(*inputs)
    return convert_pt2e(prepared)


def output_step(q_model: torch.nn.Module) -> float | None:
    """The scale of the last quantize in a converted graph: one quantization step of what feeds the output layer."""
    scales = [
        n.args[1]
        for n in q_model.graph.nodes
        if n.op == "call_function" and "quantize_per_tensor" in str(n.target) and isinstance(n.args[1], float)
    ]
    return scales[-1] if scales else None


def weight_only(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of `model` whose linear layers torchao's Int8WeightOnlyConfig made int8 (per-row scales)."""
    import copy

    warnings.filterwarnings("ignore", module="torchao")
    from torchao.quantization import Int8WeightOnlyConfig, quantize_

    q = copy.deepcopy(model).eval()
    quantize_(q, Int8WeightOnlyConfig())
    return q


def weight_bytes(model: torch.nn.Module) -> int:
    """The bytes of a model's parameters and buffers, a tensor subclass's (torchao's) counted by its inner tensors."""
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    def size(t):
        if is_traceable_wrapper_subclass(t):
            return sum(size(getattr(t, name)) for name in t.__tensor_flatten__()[0])
        return t.nbytes

    return sum(size(t) for t in [*model.parameters(), *model.buffers()])


def _rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def variants(model, inputs, scheme="static"):
    """name -> callable for every variant, compiled lazily at its first call (inside the caller's no_grad)."""
    import irc

    q = weight_only(model) if scheme == "weight-only" else quantize(model, inputs, scheme == "dynamic")
    return {
        "eager-fp32": model,
        "irc-fp32": torch.compile(model, backend=irc.backend),
        "eager-int8": q,
        "inductor-int8": torch.compile(q),
        "irc-int8": torch.compile(q, backend=irc.backend),
    }


def measure(name: str, budget: float) -> dict:
    """Interleaved steady calls of one model's variants, with first calls, errors and irc's reports."""
    from irc import report

    make, scheme = MODELS[name]
    model, x = make()
    model.eval()
    fns = variants(model, x, scheme)
    out: dict = {v: {} for v in VARIANTS}
    out["weight_mb"] = {"fp32": weight_bytes(model) / 2**20, "int8": weight_bytes(fns["eager-int8"]) / 2**20}
    with torch.no_grad():
        want = fns["eager-fp32"](*x)
        ys = {}
        for v, fn in fns.items():
            mark, rss = report.mark(), _rss()
            t0 = time.perf_counter()
            ys[v] = fn(*x)
            out[v]["first_call_s"] = time.perf_counter() - t0
            out[v]["rss_left_mb"] = (_rss() - rss) / 2**20
            if v.startswith("irc"):
                rep = report.reports_since(mark)
                out[v]["fallbacks"] = sorted({t for t, _ in rep.fallbacks})
                out[v]["reference_kernels"] = [w for g in rep.graphs for w, _ in g.target_fallbacks]
                out[v]["eager_graphs"] = sum(g.eager_graph is not None for g in rep.graphs)
            fn(*x)
        for v, y in ys.items():
            out[v]["rel_error"] = ((y - want).norm() / want.norm()).item()
            out[v]["max_vs_eager_int8"] = (y - ys["eager-int8"]).abs().max().item()
        times: dict = {v: [] for v in VARIANTS}
        deadline = time.perf_counter() + budget
        for r in range(1000):
            order = VARIANTS[r % len(VARIANTS) :] + VARIANTS[: r % len(VARIANTS)]
            for v in order:
                t0 = time.perf_counter()
                fns[v](*x)
                times[v].append(time.perf_counter() - t0)
            if r >= 4 and time.perf_counter() > deadline:
                break
    for v, ts in times.items():
        q = statistics.quantiles(ts, n=4, method="inclusive")
        out[v].update(steady_s=statistics.median(ts), iqr_s=[q[0], q[2]], rounds=len(ts))
    out["output_step"] = output_step(fns["eager-int8"]) if scheme != "weight-only" else None  # no quantize
    return out


def markdown(results: dict, meta: dict) -> str:
    how = "weight-only, torchao Int8WeightOnlyConfig" if meta["quant"] == "int8wo" else "PT2E, X86InductorQuantizer"
    lines = [
        (
            f"# int8 ({how}) on {meta['cpu']}, {meta['threads']} threads, load "
            f"{meta['load_before'][0]:.1f} before / {meta['load_after'][0]:.1f} after"
        ),
        "",
        (
            "| model | variant | median ms | IQR ms | x eager fp32 | rel. error vs fp32 | max diff vs eager int8 "
            "| first call s | RSS left MB |"
        ),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, row in results.items():
        base = row["eager-fp32"]["steady_s"]
        for v in VARIANTS:
            r = row[v]
            lo, hi = (t * 1e3 for t in r["iqr_s"])
            lines.append(
                f"| {name} | {v} | {r['steady_s'] * 1e3:.2f} | {lo:.2f}-{hi:.2f} | {base / r['steady_s']:.2f}x | "
                f"{r['rel_error']:.2e} | {r['max_vs_eager_int8']:.2e} | {r['first_call_s']:.2f} | "
                f"{r['rss_left_mb']:.0f} |"
            )
        irc = row["irc-int8"]
        lines.append("")
        lines.append(
            f"{name}: irc int8 / inductor int8 = {row['inductor-int8']['steady_s'] / irc['steady_s']:.2f}x speed; "
            f"irc int8 eager fallbacks: {irc['fallbacks'] or 'none'}; reference kernels: "
            f"{irc['reference_kernels'] or 'none'}; graphs run eagerly: {irc['eager_graphs']}; output step "
            f"{row['output_step']}; weights {row['weight_mb']['fp32']:.1f} MB float32, "
            f"{row['weight_mb']['int8']:.1f} MB int8"
        )
        lines.append("")
    return "\n".join(lines)


def main(names: list[str], budget: float, flag: str = "int8") -> int:
    """Run `names` (those of --quant `flag`'s schemes; none: all of them) and write the results."""
    if why := missing():
        print(f"--quant {flag}: skipped ({why})")
        return 0
    import platform

    names = [n for n in names if MODELS[n][1] in SCHEMES[flag]] or [n for n in MODELS if MODELS[n][1] in SCHEMES[flag]]
    torch._inductor.config.freezing = True  # inductor's int8 kernels need it (its docs); irc freezes on its own
    cpu = next(
        (ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in ln),
        platform.processor(),
    )
    meta = {"cpu": cpu, "threads": torch.get_num_threads(), "load_before": os.getloadavg(), "torch": torch.__version__}
    meta["quant"] = flag
    results = {n: measure(n, budget) for n in names}
    meta["load_after"] = os.getloadavg()
    md = markdown(results, meta)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = f"quant-{flag}-{time.strftime('%Y%m%d-%H%M%S')}"
    (RESULTS / f"{stem}.json").write_text(json.dumps({"meta": meta, "cases": results}, indent=1, default=str))
    (RESULTS / f"{stem}.md").write_text(md)
    print(md)
    return 0


__all__ = ["MODELS", "SCHEMES", "main", "missing", "quantize", "weight_bytes", "weight_only"]
