"""Tables and goal checks for bench/compare.py results (reported, never asserted). A low-precision run
(meta["dtype"] bf16 or f16: compare --dtype) says so in its title, shows its errors against the float64
reference instead of against eager, and states issue 52's low-precision goals."""

import math

from .cases import CASES

DTYPE_NAMES = {"bf16": "bfloat16", "f16": "float16"}


def _ms(s) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def _first(row, kind):
    fc = row.get("first_call", {}).get(kind)
    if not fc:
        return None, "-"
    if "error" in fc:
        return None, "error"
    return fc["first_call_s"], _ms(fc["first_call_s"])


def _mb(x) -> str:
    return f"{x:.0f}" if x is not None else "-"


def _iqr(r) -> str:
    q = r.get("iqr_s")
    return f"{_ms(q[0])}-{_ms(q[1])}" if q else "-"


def _lowp(meta: dict) -> str | None:
    """The run's autocast dtype ("bf16", "f16"), or None for a float32 run (and runs from before --dtype)."""
    d = meta.get("dtype", "f32")
    return None if d == "f32" else d


def _ratio(x) -> str:
    return f"{x:.2f}x" if x is not None else "-"


def markdown(results: dict, meta: dict, header: bool = True) -> str:
    lines, lowp = [], _lowp(meta)
    if header:
        rate = f" ({lowp} {meta['mm_gflops_dtype']:.0f})" if lowp and "mm_gflops_dtype" in meta else ""
        lines += [
            f"# irc vs eager vs inductor{f', {lowp} autocast' if lowp else ''}",
            "",
            f"torch {meta['torch']}, {meta['threads']} threads on {meta['cpus']} CPUs; copy bandwidth "
            f"{meta['copy_gbps']:.1f} GB/s; 1024^3 torch.mm {meta.get('mm_gflops', 0):.0f} GFLOP/s{rate}; load average {meta['load_before'][0]:.1f} before, "
            f"{meta.get('load_after', meta['load_before'])[0]:.1f} after ({meta['started']}). Steady: median of "
            "interleaved calls; first call: a fresh process (cold: empty caches; warm: the caches the cold one filled).",
            "",
        ]
        if lowp:
            lines += [
                f'Every backend runs every case under torch.autocast("cpu", {DTYPE_NAMES[lowp]}) (a training step: '
                f"its forward and loss). {lowp} ops: the aten calls of one eager call that returned {lowp}, of all "
                "(0: autocast lowers nothing there, the case runs in float32). err vs f64: max abs error against the "
                "case's float64 reference (no autocast); err / eager err: that over eager's own (goal <= 1.5x).",
                "",
            ]
        if ov := meta.get("overhead"):
            lines += [
                f"irc runtime overhead: {ov['launch_step_us']:.2f} us per kernel launch step, {ov['per_launch_us']:.2f} us "
                f"per launch with its output allocation and return, {ov['per_call_us']:.2f} us fixed per call "
                "(bench/graph_overhead.py).",
                "",
            ]
    cols = ["max err"] if not lowp else ["err vs f64", "err / eager err", f"{lowp} ops"]
    lines += [
        "| case | backend | first call cold | first call warm | steady | steady IQR | vs eager | vs inductor | first-call MB | peak MB | GB/s (% copy) | "
        + " | ".join(cols)
        + " |",
        "|---" * (11 + len(cols)) + "|",
    ]
    empty = " |" * (9 + len(cols))
    for name, row in results.items():
        if "skipped" in row:
            lines.append(f"| {name} | skipped: {row['skipped']} |{empty}")
            continue
        if "error" in row:
            lines.append(f"| {name} | error: {row['error'][:80]} |{empty}")
        eager = row.get("eager", {}).get("steady_s")
        ind = row.get("inductor", {}).get("steady_s")
        nbytes = row.get("eager", {}).get("bytes")
        for b in CASES[name].backends:
            r = row.get(b, {})
            s = r.get("steady_s")
            peak = r.get("first_call", {}).get("warm", {}).get("peak_mb")
            first_peak = r.get("first_call", {}).get("cold", {}).get("first_peak_mb")
            bw = "-"
            if s and nbytes and CASES[name].bandwidth:
                gbps = nbytes / s / 1e9
                bw = f"{gbps:.1f} ({100 * gbps / meta['copy_gbps']:.0f}%)"
            if not lowp:
                err = r.get("max_error")
                errs = [f"{err:.1e}" if err is not None else "-"]
            else:
                err, ops = r.get("ref_error"), r.get("lowp_ops")
                errs = [f"{err:.1e}" if err is not None else "-", _ratio(r.get("err_ratio"))]
                errs.append(f"{ops[0]} of {ops[1]}" if ops else "-")
            lines.append(
                f"| {name} | {b} | {_first(r, 'cold')[1]} | {_first(r, 'warm')[1]} | {_ms(s)} | {_iqr(r)} | "
                f"{f'{eager / s:.2f}x' if s and eager and b != 'eager' else '-'} | "
                f"{f'{ind / s:.2f}x' if s and ind and b.startswith('irc') else '-'} | "
                f"{_mb(first_peak)} | {_mb(peak)} | {bw} | {' | '.join(errs)} |"
            )
    if header:
        lines += ["", "Goals (measured, not asserted):", ""] + [f"- {g}" for g in goals(results, meta)]
    return "\n".join(lines) + "\n"


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def lowp_goals(results: dict, lowp: str) -> list[str]:
    """Issue 52's goals for an autocast run: the model geomean >= 1.6x eager's and >= inductor's, HF BERT and GPT-2
    >= 2.0x each, the training-step geomean >= 1.3x eager's, every error <= 1.5x eager's own."""
    out = []

    def speed(name, b):  # eager's steady time over the backend's
        e, s = (results.get(name, {}).get(k, {}).get("steady_s") for k in ("eager", b))
        return e / s if e and s else None

    def both(kind):  # the cases of `kind` timed on irc and inductor, and their geomean speeds
        names = [n for n in results if CASES[n].kind == kind and speed(n, "irc") and speed(n, "inductor")]
        return names, *(_geomean([speed(n, b) for n in names]) if names else None for b in ("irc", "inductor"))

    models, irc, ind = both("model")
    if models:
        out.append(
            f"models, geomean speed vs eager-{lowp} over {len(models)}: irc {irc:.2f}x, inductor {ind:.2f}x "
            f"(goal: irc >= 1.6x and >= inductor's: {'met' if irc >= 1.6 and irc >= ind else 'not met'})"
        )
    if hf := [(n, r) for n in ("hf-bert", "hf-gpt2") if (r := speed(n, "irc"))]:
        out.append(
            f"HF models vs eager-{lowp}: "
            + ", ".join(f"{n} {r:.2f}x" for n, r in hf)
            + f" (goal >= 2.0x each: {'met' if all(r >= 2.0 for _, r in hf) else 'not met'})"
        )
    trains, irc, ind = both("train")
    if trains:
        out.append(
            f"training steps, geomean speed vs eager under autocast over {len(trains)}: irc {irc:.2f}x, inductor "
            f"{ind:.2f}x (goal: irc >= 1.3x: {'met' if irc >= 1.3 else 'not met'})"
        )
    ratios = [(n, r) for n, row in results.items() if (r := row.get("irc", {}).get("err_ratio")) is not None]
    if ratios:
        worse = [f"{n} {r:.2f}x" for n, r in ratios if r > 1.5]
        out.append(
            f"irc's error vs float64 <= 1.5x eager-{lowp}'s own: {len(ratios) - len(worse)} of {len(ratios)} cases"
            + (f" (above: {', '.join(worse)})" if worse else "")
        )
    return out


def goals(results: dict, meta: dict) -> list[str]:
    if lowp := _lowp(meta):  # the float32 goals below (bandwidth, inductor ratios) are not this run's
        return lowp_goals(results, lowp) + first_call_goals(results)
    out = []

    def steady(name, b):
        return results.get(name, {}).get(b, {}).get("steady_s")

    if s := steady("bandwidth-chain", "irc"):
        gbps = results["bandwidth-chain"]["eager"]["bytes"] / s / 1e9
        out.append(
            f"bandwidth chain: irc {gbps:.1f} GB/s = {100 * gbps / meta['copy_gbps']:.0f}% of copy bandwidth (goal >= 85%)"
        )
    if (s := steady("transcendental-chain", "irc")) and (i := steady("transcendental-chain", "inductor")):
        out.append(f"transcendental chain: irc {i / s:.2f}x inductor (goal >= 2x)")
    models = [n for n in results if CASES[n].kind == "model"]
    ratios = [
        (n, steady(n, "inductor") / steady(n, "irc")) for n in models if steady(n, "irc") and steady(n, "inductor")
    ]
    if ratios:
        worse = [f"{n} {r:.2f}x" for n, r in ratios if r < 1]
        out.append(
            f"demo models steady latency <= inductor's: {len(ratios) - len(worse)} of {len(ratios)}"
            + (f" (slower: {', '.join(worse)})" if worse else "")
        )
    trains = [
        (n, steady(n, "eager") / steady(n, "irc"), steady(n, "eager") / steady(n, "inductor"))
        for n in results
        if CASES[n].kind in ("train", "optimizer") and steady(n, "irc") and steady(n, "eager") and steady(n, "inductor")
    ]
    if trains:
        worse = [f"{n} {r:.2f}x" for n, r, _ in trains if r < 1]
        out.append(
            f"training steps at least as fast as eager: {len(trains) - len(worse)} of {len(trains)}"
            + (f" (slower: {', '.join(worse)})" if worse else "")
            + "; speed vs eager, irc / inductor: "
            + ", ".join(f"{n} {r:.2f}x / {i:.2f}x" for n, r, i in trains)
        )
    if (e := steady("mlp-b32", "eager")) and (s := steady("mlp-b32", "irc:reduce-overhead")):
        modes = ", ".join(
            f"{b} {e / t:.2f}x"
            for b in ("irc", "irc:reduce-overhead", "irc:max-autotune", "inductor")
            if (t := steady("mlp-b32", b))
        )
        out.append(
            f"MLP b32 under reduce-overhead faster than eager: {'yes' if s < e else 'no'} (speed vs eager: {modes})"
        )
    return out + first_call_goals(results)


def first_call_goals(results: dict) -> list[str]:
    out = []
    for kind, goal in (("cold", 5), ("warm", 50)):
        rs = []
        for n, row in results.items():
            a, b = _first(row.get("irc", {}), kind)[0], _first(row.get("inductor", {}), kind)[0]
            if a and b:
                rs.append((n, b / a))
        if rs:
            met = sum(r >= goal for _, r in rs)
            worst = min(rs, key=lambda x: x[1])
            out.append(
                f"first call {kind}: irc <= 1/{goal} of inductor's in {met} of {len(rs)} cases "
                f"(ratios {min(r for _, r in rs):.1f}x to {max(r for _, r in rs):.1f}x; worst {worst[0]})"
            )
    return out
