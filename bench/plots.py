"""Figures of a `python -m irc.bench.compare` run (matplotlib, PNG), and the README's latest-figures section.

    .venv/bin/python -m irc.bench.plots                        # figures of the newest bench/results/compare-*.json
    .venv/bin/python -m irc.bench.plots bench/results/compare-20261122-073408.json
    .venv/bin/python -m irc.bench.plots --publish              # also copy them and the run's JSON to docs/figures/
                                                               # and fill README's latest-figures section (commit both)
    .venv/bin/python -m irc.bench.plots --redraw               # redraw docs/figures/*.png from the JSON kept there
                                                               # (after a change to the plotting)

compare.py calls `write_figures` at the end of every run. Three figures per run, each beside its JSON as
compare-<time>-<figure>.png and copied to bench/results/latest-<figure>.png (a `compare --dtype bf16` run:
compare-bf16-<time>-<figure>.png and latest-bf16-<figure>.png, its caption naming the autocast dtype):

    speedup       steady-state latency of eager / that of each compiled backend, per case (log scale; above
                  1 is faster than eager): inductor, irc, and irc's variants (irc:<label>) where a case has them
    first-call    seconds from torch.compile to the first result in a fresh process, cold (empty compile
                  caches) and warm (the caches the cold process filled), inductor and irc (log scale)
    peak-memory   resident-memory peak of steady calls above the level before them, per backend (MB)

A figure with no data in the run (compare --no-first-call has no first-call or memory data) is not drawn.
"""

import argparse
import json
import math
import platform
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
FIGURES = ("speedup", "first-call", "peak-memory")
PUBLISHED = "compare.json"  # the published run's JSON, in docs/figures/
MARK_START, MARK_END = "<!-- latest-figures:start -->", "<!-- latest-figures:end -->"
COLORS = {"eager": "#9e9e9e", "inductor": "#1f77b4", "irc": "#d62728"}
# irc's variants (irc:<label>): colours apart from the three above and from each other (tab10's rest)
VARIANT_COLORS = ("#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
VARIANT_HATCHES = (None, "//", "..")


def machine() -> str:
    """This host in words: CPU model, cores, OS (for runs whose JSON does not name its machine)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def _backends(cases: dict) -> list[str]:
    seen: list[str] = []
    for row in cases.values():
        seen += [b for b in row if isinstance(row[b], dict) and b not in seen]
    return seen


def _styles(cases: dict) -> dict[str, tuple[str, str | None]]:
    """(colour, hatch) of every backend in the run, the same in each figure: eager, inductor and irc their
    own colours, each irc variant a colour of its own (past VARIANT_COLORS, the colours again hatched)."""
    styles = {b: (c, None) for b, c in COLORS.items()}
    variants = [b for b in _backends(cases) if b not in COLORS]
    for i, b in enumerate(variants):
        styles[b] = (
            VARIANT_COLORS[i % len(VARIANT_COLORS)],
            VARIANT_HATCHES[i // len(VARIANT_COLORS) % len(VARIANT_HATCHES)],
        )
    return styles


def _first(row: dict, backend: str, kind: str) -> float | None:
    fc = row.get(backend, {}).get("first_call", {}).get(kind) or {}
    return fc.get("first_call_s")


def _bars(
    ax, names: list[str], series: list[tuple[str, list, tuple]], zero: bool = False, labels: bool = False
) -> None:
    """Grouped bars: one group per case, one bar per (label, values, (colour, hatch)) with a value there
    (None, or 0 unless `zero`, draws none); a case's bars sit side by side, centred on it. `labels` writes
    each bar's value above it."""
    shown = [
        [i for i, (_, values, _) in enumerate(series) if values[k] is not None and (values[k] or zero)]
        for k in range(len(names))
    ]
    width = 0.8 / max(1, *map(len, shown))
    for i, (label, values, (color, hatch)) in enumerate(series):
        at = [(k, here.index(i) - (len(here) - 1) / 2) for k, here in enumerate(shown) if i in here]
        bars = ax.bar(
            [k + offset * width for k, offset in at],
            [values[k] for k, _ in at],
            width,
            label=label,
            color=color,
            hatch=hatch,
            edgecolor="white" if hatch else None,
            linewidth=0,
        )
        if labels:
            ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    # Above the axes, under the title: inside them it would hide the bars of the last cases.
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=min(len(series), 5), fontsize=8, frameon=False)


def _log_scale(ax) -> None:
    """A log y axis whose ticks read 1, 2, 3, 5, 10 rather than 2x10^0 (the other minor ticks unlabelled)."""
    from matplotlib.ticker import FuncFormatter

    def label(v, _) -> str:
        return f"{v:g}" if v > 0 and round(v / 10 ** math.floor(math.log10(v))) in (1, 2, 3, 5) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(label))
    ax.yaxis.set_minor_formatter(FuncFormatter(label))


def _title(ax, doc: dict, what: str) -> None:
    """The figure's title and, smaller, the run it shows, wrapped to the figure's width."""
    meta = doc.get("meta", {})
    where = meta.get("machine") or f"{meta.get('cpus', '?')} CPUs"
    run = f"{where}; torch {meta.get('torch', '?')}, {meta.get('threads', '?')} threads, {meta.get('started', '')}"
    if meta.get("dtype", "f32") != "f32":
        run += f"; {meta['dtype']} autocast"
    fig = ax.figure
    fig.suptitle(what, fontsize=11)
    # A caption under the case names; constrained layout keeps room for it (a second title line did not fit).
    fig.supxlabel(textwrap.fill(run, int(fig.get_figwidth() * 16)), fontsize=8, color="#444444")  # 8 pt: ~18 chars/inch


def speedup(doc: dict, ax) -> bool:
    cases = doc["cases"]
    names = [n for n, r in cases.items() if r.get("eager", {}).get("steady_s")]
    styles = _styles(cases)
    series = []
    for b in _backends(cases):
        if b == "eager":
            continue
        vals = [
            cases[n]["eager"]["steady_s"] / s if (s := cases[n].get(b, {}).get("steady_s")) else None for n in names
        ]
        if any(vals):
            series.append((b, vals, styles[b]))
    if not series:
        return False
    _bars(ax, names, series)
    _log_scale(ax)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_ylabel("speedup over eager (eager time / backend time)")
    _title(ax, doc, "Steady-state speedup over eager (higher is better)")
    return True


def first_call(doc: dict, ax) -> bool:
    cases = doc["cases"]
    names = [n for n in cases if any(_first(cases[n], b, "cold") for b in ("inductor", "irc"))]
    series = [
        (f"{b} {kind}", [_first(cases[n], b, kind) for n in names], (COLORS[b], "//" if kind == "warm" else None))
        for b in ("inductor", "irc")
        for kind in ("cold", "warm")
    ]
    series = [s for s in series if any(s[1])]
    if not series:
        return False
    _bars(ax, names, series)
    _log_scale(ax)
    ax.set_ylabel("seconds to the first result (fresh process)")
    _title(ax, doc, "First call: compile + one run, cold and warm caches (lower is better)")
    return True


def peak_memory(doc: dict, ax) -> bool:
    cases = doc["cases"]
    backends, styles = _backends(cases), _styles(cases)

    def peak(n, b):
        fc = cases[n].get(b, {}).get("first_call", {}).get("warm") or {}
        return fc.get("peak_mb")

    names = [n for n in cases if any(peak(n, b) is not None for b in backends)]
    series = [
        (b, [max(peak(n, b), 0.0) if peak(n, b) is not None else None for n in names], styles[b]) for b in backends
    ]
    series = [s for s in series if any(v is not None for v in s[1])]
    if not series:
        return False
    _bars(ax, names, series, zero=True, labels=True)
    ax.set_ylabel("peak resident memory above the start (MB)")
    _title(ax, doc, "Peak memory of steady calls (lower is better)")
    return True


DRAW = {"speedup": speedup, "first-call": first_call, "peak-memory": peak_memory}


def figure(doc: dict, name: str):
    """The figure `name` (one of FIGURES) of the run, or None where the run has no data for it."""
    from matplotlib.figure import Figure  # no pyplot: files only, no display

    # 8 in at 110 dpi: 880 pixels, about the width of a README on GitHub
    fig = Figure(figsize=(max(8.0, 0.6 * len(doc["cases"]) + 3), 5.2), dpi=110, layout="constrained")
    return fig if DRAW[name](doc, fig.subplots()) else None


def write_figures(doc: dict, out_dir: Path = RESULTS, stem: str = "compare", latest: str = "latest") -> dict[str, Path]:
    """Draw each figure that has data: out_dir/<stem>-<figure>.png, also copied to out_dir/<latest>-<figure>.png
    (compare --dtype bf16 passes latest-bf16)."""
    written = {}
    for name in FIGURES:
        if (fig := figure(doc, name)) is not None:
            path = out_dir / f"{stem}-{name}.png"
            fig.savefig(path)
            shutil.copyfile(path, out_dir / f"{latest}-{name}.png")
            written[name] = path
    return written


def markdown_links(figures: dict[str, Path]) -> str:
    """The markdown that shows the figures, for the report beside them."""
    if not figures:
        return ""
    return "\n## Figures\n\n" + "\n".join(f"![{n}]({p.name})" for n, p in figures.items()) + "\n"


def readme_section(doc: dict, source: str, root: Path = ROOT) -> str:
    meta = doc.get("meta", {})
    cases = doc["cases"]
    lines = [
        MARK_START,
        "",
        f"From `{source}` ({meta.get('started', '?')}), on {meta.get('machine') or machine()}: torch "
        f"{meta.get('torch', '?')}, {meta.get('threads', '?')} threads, load average "
        f"{_load(meta)}. Regenerate with `python -m irc.bench.compare` then "
        "`python -m irc.bench.plots --publish`.",
        "",
    ]
    rows = []
    for n, r in cases.items():
        e, i, c = (r.get(b, {}).get("steady_s") for b in ("eager", "inductor", "irc"))
        if e and c:
            rows.append(
                f"| {n} | {e / c:.2f}x | {f'{i / c:.2f}x' if i else '-'} | "
                f"{_fmt(_first(r, 'irc', 'cold'))} / {_fmt(_first(r, 'irc', 'warm'))} | "
                f"{_fmt(_first(r, 'inductor', 'cold'))} / {_fmt(_first(r, 'inductor', 'warm'))} |"
            )
    if rows:
        lines += [
            "| case | irc vs eager | irc vs inductor | irc first call cold / warm | inductor cold / warm |",
            "|---|---|---|---|---|",
            *rows,
            "",
        ]
    lines += [f"![{n}](docs/figures/{n}.png)" for n in FIGURES if (root / "docs" / "figures" / f"{n}.png").exists()]
    return "\n".join([*lines, "", MARK_END])


def _load(meta: dict) -> str:
    load = (meta.get("load_before") or [None])[0]
    return f"{load:.1f}" if isinstance(load, (int, float)) else "?"


def _fmt(s: float | None) -> str:
    return "-" if s is None else f"{s:.2f} s"


def publish(doc: dict, figures: dict[str, Path], source: str, root: Path = ROOT) -> None:
    """Copy the figures to docs/figures/<figure>.png, keep the run's JSON beside them (`redraw` draws them
    again from it), and replace README's latest-figures section."""
    readme, dest = root / "README.md", root / "docs" / "figures"
    dest.mkdir(parents=True, exist_ok=True)
    for name, path in figures.items():
        shutil.copyfile(path, dest / f"{name}.png")
    (dest / PUBLISHED).write_text(json.dumps(doc, indent=1) + "\n")
    text = readme.read_text()
    if MARK_START not in text or MARK_END not in text:
        raise SystemExit(f"{readme}: no {MARK_START} ... {MARK_END} section to fill")
    head, rest = text.split(MARK_START, 1)
    tail = rest.split(MARK_END, 1)[1]
    readme.write_text(head + readme_section(doc, source, root) + tail)


def redraw(root: Path = ROOT) -> dict[str, Path]:
    """Draw docs/figures/<figure>.png again from the JSON `publish` kept there; README stays as it is."""
    dest = root / "docs" / "figures"
    doc = json.loads((dest / PUBLISHED).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        figures = write_figures(doc, Path(tmp))
        for name, path in figures.items():
            shutil.copyfile(path, dest / f"{name}.png")
    return {name: dest / f"{name}.png" for name in figures}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="?", help="a compare-*.json (default: the newest in bench/results/)")
    ap.add_argument(
        "--publish", action="store_true", help="copy the figures to docs/figures/ and fill README's section"
    )
    ap.add_argument("--redraw", action="store_true", help=f"redraw docs/figures/*.png from docs/figures/{PUBLISHED}")
    args = ap.parse_args(argv)
    if args.redraw:
        for p in redraw().values():
            print(p)
        return 0
    path = (
        Path(args.json)
        if args.json
        else max(RESULTS.glob("compare-*.json"), default=None, key=lambda p: p.stat().st_mtime)
    )
    if path is None or not path.exists():
        print("no compare-*.json: run python -m irc.bench.compare first", file=sys.stderr)
        return 1
    doc = json.loads(path.read_text())
    figures = write_figures(doc, path.parent, path.stem)
    for p in figures.values():
        print(p)
    if args.publish:
        source = f"bench/results/{path.name}" if path.parent.resolve() == RESULTS else str(path)
        publish(doc, figures, source)
        print(f"docs/figures/ and README.md updated from {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
