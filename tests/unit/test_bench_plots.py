"""bench/plots.py: the figures of a compare run (PNG files from its JSON), the report's links to them, and
the README section `--publish` fills."""

import json

from matplotlib.backends.backend_agg import FigureCanvasAgg

from irc.bench import plots


def _doc(first_call: bool = True) -> dict:
    def fc(cold, warm, peak):
        return (
            {
                "first_call": {
                    "cold": {"first_call_s": cold, "build_s": 0.1, "peak_mb": peak},
                    "warm": {"first_call_s": warm, "build_s": 0.1, "peak_mb": peak},
                }
            }
            if first_call
            else {}
        )

    row = lambda e, i, c: {  # noqa: E731
        "eager": {"steady_s": e, "bytes": 1 << 20, "rounds": 9, **fc(0.0, 0.0, 24.0)},
        "inductor": {"steady_s": i, "max_error": 0.0, "rounds": 9, **fc(20.0, 3.0, 16.0)},
        "irc": {"steady_s": c, "max_error": 1e-7, "rounds": 9, **fc(2.0, 0.5, 0.0)},
    }
    cases = {"mlp-b32": row(0.010, 0.008, 0.005), "row-sum": row(0.004, 0.006, 0.002)}
    cases["row-sum"]["irc:no-freeze"] = {"steady_s": 0.003, "rounds": 9}
    meta = {
        "torch": "2.13.0",
        "threads": 2,
        "cpus": 2,
        "load_before": [0.5, 0.5, 0.5],
        "started": "2026-11-22 08:00:00",
        "machine": "Test CPU, 2 CPUs, Linux",
    }
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


def _variants_doc(count: int) -> dict:
    doc = _doc()
    for i in range(count):
        doc["cases"]["mlp-b32"][f"irc:variant-{i}"] = {"steady_s": 0.004 + i / 1000, "rounds": 9}
    return doc


def test_every_backend_has_its_own_colour_and_hatch():
    doc = _variants_doc(len(plots.VARIANT_COLORS) + 2)  # past the palette: colours come back hatched
    styles = plots._styles(doc["cases"])
    backends = plots._backends(doc["cases"])
    assert len({styles[b] for b in backends}) == len(backends) == 3 + len(plots.VARIANT_COLORS) + 3
    bars = plots.figure(doc, "speedup").axes[0].containers
    drawn = {c.get_label(): (c.patches[0].get_facecolor(), c.patches[0].get_hatch()) for c in bars}
    assert len(set(drawn.values())) == len(drawn) == len(backends) - 1  # eager has no speedup bar


def _inside(box, outer) -> bool:
    return box.x0 >= outer.x0 - 1 and box.x1 <= outer.x1 + 1 and box.y0 >= outer.y0 - 1 and box.y1 <= outer.y1 + 1


def test_titles_fit_the_figure_and_the_legend_is_off_the_bars():
    doc = _variants_doc(6)
    doc["meta"]["machine"] = "Intel(R) Xeon(R) Processor with a long model name, 2 CPUs, Linux 6.18.44-fc-v669"
    for name in plots.FIGURES:
        fig = plots.figure(doc, name)
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        page, ax = fig.bbox, fig.axes[0]
        texts = [fig._suptitle, fig._supxlabel, *ax.get_xticklabels(), ax.yaxis.label]
        assert all(_inside(t.get_window_extent(renderer), page) for t in texts), name
        legend = ax.get_legend().get_window_extent(renderer)
        assert _inside(legend, page) and legend.y0 >= ax.get_window_extent(renderer).y1, name


def test_publish_keeps_the_runs_json_and_redraw_draws_the_same_figures_from_it(tmp_path):
    doc = _doc()
    (tmp_path / "README.md").write_text(f"{plots.MARK_START}\n{plots.MARK_END}\n")
    plots.publish(doc, plots.write_figures(doc, tmp_path, "compare-r"), "compare-r.json", root=tmp_path)
    figures = tmp_path / "docs" / "figures"
    assert json.loads((figures / plots.PUBLISHED).read_text()) == doc
    published = {n: (figures / f"{n}.png").read_bytes() for n in plots.FIGURES}
    readme = (tmp_path / "README.md").read_text()
    for n in plots.FIGURES:
        (figures / f"{n}.png").unlink()
    assert plots.redraw(root=tmp_path) == {n: figures / f"{n}.png" for n in plots.FIGURES}
    assert {n: (figures / f"{n}.png").read_bytes() for n in plots.FIGURES} == published
    assert (tmp_path / "README.md").read_text() == readme


def test_the_published_figures_data_draws_every_figure(tmp_path):
    doc = json.loads((plots.ROOT / "docs" / "figures" / plots.PUBLISHED).read_text())
    assert list(plots.write_figures(doc, tmp_path)) == list(plots.FIGURES)
