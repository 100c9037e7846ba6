"""bench/plots.py: the figures of a compare run (PNG files from its JSON), the report's links to them, and
the README section `--publish` fills."""

import json

from irc.bench import plots


def _doc(first_call: bool = True) -> dict:
    def fc(cold, warm, peak):
        return {"first_call": {"cold": {"first_call_s": cold, "build_s": 0.1, "peak_mb": peak},
                               "warm": {"first_call_s": warm, "build_s": 0.1, "peak_mb": peak}}} if first_call else {}  # fmt: skip

    row = lambda e, i, c: {  # noqa: E731
        "eager": {"steady_s": e, "bytes": 1 << 20, "rounds": 9, **fc(0.0, 0.0, 24.0)},
        "inductor": {"steady_s": i, "max_error": 0.0, "rounds": 9, **fc(20.0, 3.0, 16.0)},
        "irc": {"steady_s": c, "max_error": 1e-7, "rounds": 9, **fc(2.0, 0.5, 0.0)},
    }
    cases = {"mlp-b32": row(0.010, 0.008, 0.005), "row-sum": row(0.004, 0.006, 0.002)}
    cases["row-sum"]["irc:no-freeze"] = {"steady_s": 0.003, "rounds": 9}
    meta = {"torch": "2.13.0", "threads": 2, "cpus": 2, "load_before": [0.5, 0.5, 0.5], "started": "2026-11-22 08:00:00",
            "machine": "Test CPU, 2 CPUs, Linux"}  # fmt: skip
    return {"meta": meta, "cases": cases, "goals": []}


def _png(path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_write_figures_draws_each_figure_and_the_latest_copies(tmp_path):
    figures = plots.write_figures(_doc(), tmp_path, "compare-x")
    assert list(figures) == list(plots.FIGURES)
    for name, path in figures.items():
        assert path == tmp_path / f"compare-x-{name}.png" and _png(path)
        assert (tmp_path / f"latest-{name}.png").read_bytes() == path.read_bytes()
    links = plots.markdown_links(figures)
    assert "![speedup](compare-x-speedup.png)" in links and "![peak-memory](compare-x-peak-memory.png)" in links


def test_a_run_without_first_calls_has_only_the_speedup_figure(tmp_path):
    figures = plots.write_figures(_doc(first_call=False), tmp_path, "compare-y")
    assert list(figures) == ["speedup"] and _png(figures["speedup"])


def test_publish_fills_the_readme_section_and_copies_the_figures(tmp_path):
    doc = _doc()
    readme = tmp_path / "README.md"
    readme.write_text(f"# irc\n\nintro\n\n{plots.MARK_START}\nstale figures\n{plots.MARK_END}\n\n## after\n")
    figures = plots.write_figures(doc, tmp_path, "compare-z")
    plots.publish(doc, figures, "bench/results/compare-z.json", root=tmp_path)
    text = readme.read_text()
    assert text.startswith("# irc\n\nintro\n\n") and text.endswith("\n\n## after\n") and "stale figures" not in text
    assert "on Test CPU, 2 CPUs, Linux" in text and "compare-z.json" in text
    assert "| mlp-b32 | 2.00x | 1.60x | 2.00 s / 0.50 s | 20.00 s / 3.00 s |" in text
    assert "![speedup](docs/figures/speedup.png)" in text
    assert all(_png(tmp_path / "docs" / "figures" / f"{n}.png") for n in plots.FIGURES)


def test_cli_draws_the_figures_of_a_json(tmp_path, capsys):
    path = tmp_path / "compare-20260101-000000.json"
    path.write_text(json.dumps(_doc()))
    assert plots.main([str(path)]) == 0
    assert (tmp_path / "compare-20260101-000000-first-call.png").exists()
    assert "compare-20260101-000000-speedup.png" in capsys.readouterr().out
