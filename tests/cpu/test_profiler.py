"""torch.profiler sees irc's work: every launch under its kernel's name, every extern under its op and library
path, every reduce-overhead launcher under the kernels it runs, and the Triton runner's launches. The compile
report says which library path each extern problem took (GraphReport.extern_paths), by externs.py's rule."""

import torch

from irc import report
from irc.dynamo.backend import compile_function
from irc.targets.cpu.libs import externs
from tests.conftest import compile_irc

G = torch.Generator().manual_seed(0)


def randn(*shape):
    return torch.randn(*shape, generator=G)


def profiled(fn, *args):
    """(fn's result, the names of the profiler events recorded while it ran)."""
    with torch.profiler.profile() as prof:
        out = fn(*args)
    return out, [e.name for e in prof.events()]


def kernel_names(program) -> set[str]:
    return {ln.step.op.callee.root_reference.data for ln in program.compiled.launches}


def mlp(x, w1, w2):
    return torch.relu(x @ w1) @ w2 + x.sum(-1, keepdim=True)


def mlp_inputs():
    return randn(64, 256), randn(256, 512), randn(512, 16)


def test_default_mode_events_name_every_kernel_and_each_extern_with_its_path():
    args = mlp_inputs()
    program, consts = compile_function(mlp, *args, cache=False)
    plain = program([*args, *consts])
    got, names = profiled(program, [*args, *consts])
    torch.testing.assert_close(got, plain, rtol=0, atol=0)  # the same calls, inside events
    assert len(kernel_names(program)) >= 2
    assert {f"irc::{k}" for k in kernel_names(program)} <= set(names), names
    paths = set(program.compiled.extern_paths.values())
    externs_seen = [n for n in names if n.startswith("irc::tn.mm (")]
    assert len(externs_seen) == 2 and {n[len("irc::tn.mm (") : -1] for n in externs_seen} <= paths, (names, paths)


def test_reduce_overhead_events_name_the_kernels_each_launcher_runs():
    args = mlp_inputs()
    program, consts = compile_function(mlp, *args, cache=False, mode="reduce-overhead")
    assert program.compiled.segments, program.mode_notes
    plain = program([*args, *consts])
    got, names = profiled(program, [*args, *consts])
    torch.testing.assert_close(got, plain, rtol=0, atol=0)
    launchers = [n for n in names if n.startswith("irc::seg")]
    assert len(launchers) == len(program.compiled.segments), names
    listed = ", ".join(launchers)
    assert all(k in listed for k in kernel_names(program)), (launchers, kernel_names(program))
    assert "tn.mm sgemm_" in listed  # the f32 products run as MKL's sgemm_ inside the launcher


def test_no_event_and_no_trace_when_no_profiler_records():
    """The profiled calls are only taken while a profiler records: a call outside leaves nothing to a later one."""
    args = mlp_inputs()
    program, consts = compile_function(mlp, *args, cache=False)
    program([*args, *consts])
    _, names = profiled(lambda: torch.zeros(1) + 1)
    assert not [n for n in names if n.startswith("irc::")], names


def test_torch_compile_trace_names_the_graph_and_its_kernels_and_the_report_its_paths():
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 8)).eval()
    x = randn(64, 256)
    mark = report.mark()
    compiled = compile_irc(model, prepack=True)
    with torch.no_grad():
        compiled(x)
        _, names = profiled(compiled, x)
    (rep,) = report.reports_since(mark).graphs
    prefix = f"irc::graph{rep.index}."
    assert f"{prefix}kernel0" in names, names
    want = "mkldnn_packed" if externs.onednn_available() else "aten"  # externs.py's rule: f32, constant weight
    assert rep.extern_paths["tn.mm 64x256 @ 256x512 float32, constant weight"] == want, rep.extern_paths
    assert rep.extern_paths["tn.mm 64x512 @ 512x8 float32, constant weight"] == "aten"  # under SMALL_FLOPS
    assert f"{prefix}tn.mm ({want})" in names, names
    assert f"    extern tn.mm 64x256 @ 256x512 float32, constant weight: {want}" in str(rep).splitlines()


def test_extern_paths_of_a_plain_operand_and_of_a_launcher():
    x, w = randn(64, 256), randn(256, 512)
    program, consts = compile_function(lambda x, w: x @ (w * 2), x, w, cache=False)  # an operand computed per call
    program([x, w, *consts])
    plain = "mkldnn" if externs.onednn_available() and externs.onednn_outruns_mkl() else "aten"  # not constant
    assert program.compiled.extern_paths == {"tn.mm 64x256 @ 256x512 float32": plain}
    launched, consts = compile_function(lambda x, w: x @ w, x, w, cache=False, mode="reduce-overhead")
    launched([x, w, *consts])
    # a launcher runs MKL's products itself (sgemm_); oneDNN's stay externs, so every mode rounds as the default does
    problem = "tn.mm 64x256 @ 256x512 float32"
    want = {f"{problem}, in a launcher": "sgemm_"} if plain == "aten" else {problem: plain}
    assert launched.compiled.extern_paths == want


def test_convolution_path_by_the_input_layout():
    conv = torch.nn.Conv2d(8, 16, 3, padding=1, bias=False).eval()
    for layout, want in (("nchw", {"aten"}), ("nhwc", {"mkldnn_packed", "aten_cl"})):
        x = randn(2, 8, 12, 12)
        if layout == "nhwc":  # a channels-last input, as a user gives one (an NCHW one: tests/numeric/test_layout.py)
            x = x.contiguous(memory_format=torch.channels_last)
        mark = report.mark()
        with torch.no_grad():
            compile_irc(conv, layout=layout)(x)
        (rep,) = report.reports_since(mark).graphs
        ((problem, path),) = rep.extern_paths.items()
        kind = "NCHW" if layout == "nchw" else "NHWC region"
        assert problem == f"tn.convolution 2x8x12x12 * 16x8x3x3 float32, {kind} input, constant weight", problem
        assert path in want, (layout, path)


def test_triton_runner_launches_are_named_events():
    program, consts = compile_function(
        lambda x: torch.relu(x * 2 + 1).sum(-1), randn(8, 32), cache=False, target="triton"
    )
    x = randn(8, 32)
    got, names = profiled(program, [x, *consts])
    torch.testing.assert_close(got[0], torch.relu(x * 2 + 1).sum(-1))
    launches = [n for n in names if n.startswith("irc::kernel")]
    assert launches, names
