"""The compile report: per graph what was imported, what fell back to eager and why, and time per stage."""

from collections import Counter
from dataclasses import dataclass, field

from irc import lifetime


@dataclass
class GraphReport:
    index: int  # order of compilation in this process
    dynamo_graph: int  # which Dynamo graph (backend call) it came from
    kind: str  # forward, backward or inference
    nodes: int = 0
    imported: Counter = field(default_factory=Counter)
    fallbacks: list[tuple[str, str]] = field(default_factory=list)  # (aten overload, reason)
    eager_graph: str | None = None  # why the whole graph runs eagerly, if it does
    stage_seconds: dict[str, float] = field(default_factory=dict)
    dump_dir: str | None = None
    verify_failure: str | None = None  # with options={"verify": True}: the first pass that changed the result
    freeze: str | None = None  # inference graphs: what freezing folded (frontend/freeze.py)
    attention: int = 0  # tn.sdpa ops: torch's attention calls, and matmul-softmax-matmul patterns fuse-attention found
    target: str = ""  # where the graph runs: "cpu" or "reference"
    kernels: int = 0  # cpu: JITed kernel functions; triton: generated Triton kernels
    fused_kernels: int = 0  # loop.nest ops after fusion
    externs: list[str] = field(default_factory=list)  # tn ops run as torch kernels
    planned_peak_bytes: int = 0  # the arena the buffer plan needs
    intermediate_bytes: int = 0  # sum of all intermediates (no reuse)
    fusion_refusals: list[str] = field(default_factory=list)
    cache_hit: bool | None = None  # cpu: the machine code came from the on-disk cache
    target_fallbacks: list[tuple[str, str]] = field(
        default_factory=list
    )  # (kernel or extern, why it runs on the reference)
    layouts: list[str] = field(default_factory=list)  # per convolution region: the layout select-layout chose, and why
    mode: str = "default"  # the compile mode (options.MODES)
    python_steps: int | None = None  # cpu: Python-level steps one call runs (a JITed launcher counts as one)
    mode_notes: list[str] = field(default_factory=list)  # cpu: what the mode did (launchers, autotuned choices)
    compile_notes: list[str] = field(default_factory=list)  # cpu: machine code compiled at a cheaper level, and why
    extern_paths: dict[str, str] = field(
        default_factory=dict
    )  # cpu: extern problem -> library path it took (filled by calls)
    kernel_resources: list[str] = field(
        default_factory=list
    )  # triton: per kernel and GPU compiled for, registers, spills, shared memory
    input_writes: int = 0  # inputs the graph writes (AOT autograd's kept input mutations: an optimizer step)
    in_place_writes: int = 0  # cpu: of those, the ones the program computes in the input's own memory (no copy)

    @property
    def native(self) -> bool:
        return self.eager_graph is None and not self.fallbacks

    @property
    def compile_seconds(self) -> float:
        return sum(self.stage_seconds.values())

    def __str__(self) -> str:
        head = f"graph {self.index} ({self.kind}, dynamo graph {self.dynamo_graph}): {self.nodes} FX nodes"
        lines = [head]
        if self.eager_graph:
            lines.append(f"  runs eagerly: {self.eager_graph}")
        if self.verify_failure:
            lines.append(f"  verify: {self.verify_failure}")
        if self.freeze:
            lines.append(f"  freeze: {self.freeze}")
        if self.attention:
            lines.append(f"  attention: {self.attention} tn.sdpa (scaled_dot_product_attention)")
        ops = sum(self.imported.values())
        lines.append(
            f"  imported {ops} aten calls ({len(self.imported)} distinct ops), {len(self.fallbacks)} eager fallbacks"
        )
        for target, reason in sorted(set(self.fallbacks)):
            lines.append(f"    fallback {target}: {reason}")
        lines += [f"  layout {note}" for note in self.layouts]
        if self.fused_kernels or self.externs:
            lines.append(
                f"  {self.fused_kernels} fused kernels, {len(self.externs)} externs; planned peak "
                f"{self.planned_peak_bytes} bytes (intermediates {self.intermediate_bytes} bytes)"
            )
            lines += [f"    unfused {r}" for r in sorted(set(self.fusion_refusals))]
        if self.target == "cpu":
            cached = {True: ", from the disk cache", False: ", compiled", None: ""}[self.cache_hit]
            lines.append(
                f"  cpu: {self.kernels} JITed kernels{cached}, {len(self.target_fallbacks)} on the reference evaluator"
            )
            for what, reason in self.target_fallbacks:
                lines.append(f"    reference {what}: {reason}")
            lines += [f"    llvm: {note}" for note in self.compile_notes]
            if self.input_writes:
                lines.append(
                    f"  writes {self.input_writes} inputs, {self.in_place_writes} of them in place (the others copied after a call)"
                )
            lines.append(f"  mode {self.mode}: a call runs {self.python_steps} Python steps")
            lines += [f"    {note}" for note in self.mode_notes]
            lines += [f"    extern {problem}: {path}" for problem, path in self.extern_paths.items()]
        elif self.target == "triton":
            lines.append(
                f"  triton: {self.kernels} generated kernels, {len(self.target_fallbacks)} on the reference evaluator"
            )
            lines += [f"    reference {what}: {reason}" for what, reason in self.target_fallbacks]
            lines += [f"    {line}" for line in self.kernel_resources]
        elif self.target:
            lines.append(f"  runs on the {self.target} target")
        if self.input_writes and self.target != "cpu":
            lines.append(f"  writes {self.input_writes} inputs (copied after a call)")
        times = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in self.stage_seconds.items())
        lines.append(f"  compile {self.compile_seconds * 1e3:.1f} ms ({times})")
        return "\n".join(lines)


@dataclass
class CompileReport:
    graphs: list[GraphReport] = field(default_factory=list)

    @property
    def fallbacks(self) -> list[tuple[str, str]]:
        return [f for g in self.graphs for f in g.fallbacks]

    @property
    def native(self) -> bool:
        return bool(self.graphs) and all(g.native for g in self.graphs)

    def __str__(self) -> str:
        if not self.graphs:
            return "irc compiled no graph"
        dynamo = len({g.dynamo_graph for g in self.graphs})
        head = f"irc compiled {len(self.graphs)} graph(s) from {dynamo} Dynamo graph(s)"
        return "\n".join([head, *map(str, self.graphs)])


_GRAPHS: list[GraphReport] = []  # since the last torch._dynamo.reset() (lifetime.py), in index order
_COUNTS = {"graphs": 0, "dynamo": 0}  # never reset: indices stay unique in the process


def new_dynamo_graph() -> int:
    _COUNTS["dynamo"] += 1
    return _COUNTS["dynamo"]


def new_graph(dynamo_graph: int, kind: str) -> GraphReport:
    g = GraphReport(index=_COUNTS["graphs"], dynamo_graph=dynamo_graph, kind=kind)
    _COUNTS["graphs"] += 1
    _GRAPHS.append(g)
    return g


def reports_since(mark: int) -> CompileReport:
    """The reports of the graphs compiled since mark() returned `mark`, less those a reset has released since."""
    return CompileReport([g for g in _GRAPHS if g.index >= mark])


def mark() -> int:
    return _COUNTS["graphs"]


@lifetime.on_reset
def clear() -> None:
    """Release the reports (torch._dynamo.reset() does: irc/lifetime.py); marks stay valid."""
    _GRAPHS.clear()
