"""The whole compiler on one screen: the named stages, the passes between them, and the one driver.

    fx --frontend--> tensor --TENSOR_OPT--> tensor-opt --LOOP--> loop --MEM--> mem

`run(module, plan)` takes a module from one stage to another in place: the passes a `Plan` (the
options of one compile) asks for, with dumps, timing, verification and the on-disk cache of mem
stages. The backend, irc-opt, irc-fuzz and the tests all call it (or `Plan.passes`), so they run the
same passes for the same options. A target then compiles the mem stage (targets/).
"""

import functools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from irc import cache
from irc.dialects import ALL_DIALECTS
from irc.ir import PassTiming, make_context, parse_module, print_module, run_passes
from irc.ir.passes import Instrument, on_fresh_stack
from irc.ir.text import BINARY_VERSION, dump_module, load_module
from irc.log import get as logger
from irc.rules import Rules

from .bufferize import BufferizePass
from .fold_batch_norm import FoldBatchNormPass, fold_batch_norm
from .fold_bias import FoldBiasPass
from .fold_constants import ConstantArgs, FoldConstantsPass, fold_constants
from .fuse_attention import FuseAttentionPass
from .fusion.fuse import FuseLoopsPass
from .input_layout import InputLayoutPass
from .layout_rules import FoldPermutesPass
from .matmul_loops import MatmulToLoopsPass
from .merge_products import MergeProductsPass, merge_products
from .split_addmm import SplitAddmmPass
from .orient_products import OrientProductsPass
from .output_layout import OutputLayoutPass
from .plan_buffers import PlanBuffersPass, plan_summary
from .quant_expand import ExpandQuantPass
from .quant_fuse import FuseQuantPass
from .select_layout import SelectLayoutPass
from .simplify_loop import SimplifyLoopPass
from .simplify_tensor import SimplifyTensorPass
from .tensor_to_loop import TensorToLoopPass

cache_log = logger("cache")

# stage name -> passes that produce it from the previous stage (`fx` and `tensor` come from the frontend)
TENSOR_OPT = (
    FuseQuantPass(),
    ExpandQuantPass(),
    FuseAttentionPass(),
    SimplifyTensorPass(),
    SelectLayoutPass(),
    FoldPermutesPass(),
    CommonSubexpressionElimination(),
    DeadCodeElimination(),
)
LOOP = (
    TensorToLoopPass(),
    SimplifyLoopPass(),
    FuseLoopsPass(),
    FoldBiasPass(),
    OrientProductsPass(),
    SimplifyLoopPass(),
    OutputLayoutPass(),
    InputLayoutPass(),
)
MEM = (BufferizePass(), PlanBuffersPass())

# inference graphs with frozen parameters first run these (freeze() below, given the parameters' values)
FREEZE = (FoldBatchNormPass(), FoldConstantsPass())

# and, after tensor-opt, these (refreeze() below): what tensor-opt's rewrites made of constants
REFREEZE = (MergeProductsPass(), FoldConstantsPass())

# passes an option adds to a stage (Plan.stage_passes); irc-opt can run them like any other
OPTIONAL = (SplitAddmmPass(), MatmulToLoopsPass())

STAGES = {"tensor-opt": TENSOR_OPT, "loop": LOOP, "mem": MEM}
STAGE_ORDER = ("fx", "tensor", "tensor-opt", "loop", "mem")
STAGE_ATTR = "irc.stage"  # on a module `run` produced: the stage it is at (tensor and tensor-opt read alike)


def mark_stage(module: ModuleOp, stage: str) -> None:
    module.attributes[STAGE_ATTR] = StringAttr(stage)


def freeze(module: ModuleOp, constants: ConstantArgs) -> None:
    """FREEZE with the frozen arguments' values: BatchNorm folded into the layers before it, then constants evaluated."""
    fold_batch_norm(module, constants)
    fold_constants(module, constants)


def refreeze(module: ModuleOp, constants: ConstantArgs) -> bool:
    """REFREEZE with the frozen arguments' values: sibling products of constant weights merged (merge_products.py),
    then the constants tensor-opt made evaluated; True when anything changed."""
    merged = merge_products(module, constants)
    return fold_constants(module, constants) or merged


@dataclass(frozen=True)
class Plan:
    """What one compile asks of the passes: torch.compile's options that change them, and the target's rules
    (rules.Rules: the convolution timer for select-layout, which library calls allocate their results for
    bufferize, which products take their bias for fold-bias and which run as their transpose for
    orient-products). `Plan()` is what irc-opt runs on a module that names no target."""

    attention: bool = True  # options={"attention": False} keeps attention unfused
    layout: str = "auto"  # options={"layout": ...}
    matmul: str = "extern"  # "loops": matrix products generated (matmul-to-loops) rather than the library's
    rules: Rules = Rules()

    def stage_passes(self, stage: str) -> tuple[ModulePass, ...]:
        """The passes that produce `stage` from the one before it (read at call time: tests may patch STAGES)."""
        passes, rules = STAGES.get(stage, ()), self.rules
        if stage == "tensor-opt":
            passes = tuple(
                SelectLayoutPass(self.layout, rules.conv_timer)
                if isinstance(p, SelectLayoutPass)
                else FuseQuantPass(rules.int8_products, rules.weight_int8_products)
                if isinstance(p, FuseQuantPass)
                else p
                for p in passes
                if self.attention or not isinstance(p, FuseAttentionPass)
            )
            widen = (rules.widened_products, rules.widened_attention_backward)
            if any(widen):  # last, so that a frozen graph's refold makes each widened weight once
                passes = (*passes, SplitAddmmPass(rules.library_addmm, *widen))
        elif stage == "loop":
            passes = tuple(
                OrientProductsPass(picks=rules.transposed_products)
                if isinstance(p, OrientProductsPass)
                else FoldBiasPass(picks=rules.biased_products)
                if isinstance(p, FoldBiasPass)
                else p
                for p in passes
            )
            if self.matmul == "loops":
                passes = (MatmulToLoopsPass(), *passes)
            keep = () if self.matmul == "loops" else rules.library_addmm
            passes = (SplitAddmmPass(keep, rules.widened_products, rules.widened_attention_backward), *passes)
        elif stage == "mem" and rules.library_allocates is not None:
            passes = tuple(
                BufferizePass(rules.library_allocates) if isinstance(p, BufferizePass) else p for p in passes
            )
        return passes

    def passes(self, start: str = "tensor", stop: str = "mem") -> tuple[ModulePass, ...]:
        """The passes from stage `start` to stage `stop`; ValueError when `stop` comes first."""
        i, j = STAGE_ORDER.index(start), STAGE_ORDER.index(stop)
        if j < i:
            raise ValueError(f"stage {stop} comes before the input's stage {start} (stages: {', '.join(STAGE_ORDER)})")
        return tuple(p for stage in STAGE_ORDER[i + 1 : j + 1] for p in self.stage_passes(stage))


@dataclass
class Lowered:
    """What lowering a tensor-opt module to the mem stage did, for the compile report."""

    kernels: int = 0  # loop.nest ops after fusion (each one kernel launch)
    externs: list[str] = field(default_factory=list)  # tn ops that run as torch kernels
    views: int = 0  # loop.view and tn.reshape ops (views handed to externs, no copy)
    refusals: list[str] = field(default_factory=list)  # fusion refusals still standing, with reasons
    arena_bytes: int = 0  # planned peak of the intermediates
    intermediate_bytes: int = 0  # the sum of every intermediate's size
    in_place: int = 0
    launches: int = 0  # mem.launch + mem.extern in @main's sequence

    def summary(self) -> str:
        return (
            f"{self.kernels} fused kernels, {len(self.externs)} externs, {self.views} views; planned peak "
            f"{self.arena_bytes} bytes for {self.intermediate_bytes} bytes of intermediates ({self.in_place} in place)"
        )


@dataclass
class Result:
    """What `run` did (the module itself is changed in place)."""

    seconds: dict[str, float] = field(default_factory=dict)  # stage -> seconds ("mem (cached)" on a cache hit)
    pass_seconds: dict[str, float] = field(default_factory=dict)  # pass -> seconds
    lowered: Lowered | None = None  # when the run reached the mem stage
    cached: bool = False  # the mem stage came from the disk cache
    key: str | None = None  # the mem stage's disk-cache key (given a cache_key): a key of its content for the target


Dump = Callable[[str, ModuleOp], None]


def run(
    module: ModuleOp,
    plan: Plan = Plan(),
    *,
    start: str = "tensor",
    stop: str = "mem",
    dump: Dump | None = None,
    verify: bool = False,
    instruments: Sequence[Instrument] = (),
    cache_key: str | None = None,
) -> Result:
    """Take `module` from stage `start` to stage `stop` in place, as `plan` says.

    dump(stage, module) sees the module after each stage. verify: verify after every pass (else once per
    stage). cache_key: a key of the module as given and of whatever else decides its mem stage (the
    target's argument layouts); given, the mem stage is read from and written to the disk cache."""
    ctx = make_context(ALL_DIALECTS)
    timing = PassTiming()
    out = Result()
    i, j = STAGE_ORDER.index(start), STAGE_ORDER.index(stop)
    key = _mem_key(cache_key, plan.matmul) if cache_key is not None and stop == "mem" else None
    out.key = key
    if key is not None and _from_cache(module, key, out):
        if dump is not None:
            dump("mem", module)
        return out
    for stage in STAGE_ORDER[max(i, 1) + 1 : j + 1]:
        t0 = time.perf_counter()
        passes = plan.stage_passes(stage)
        run = functools.partial(run_passes, ctx, module, passes, verify=verify, timing=timing, instruments=instruments)
        if stage == "tensor-opt":  # on the caller's thread: select-layout times torch's convolutions, with its threads
            run()
        else:
            on_fresh_stack(run)  # pure IR work, at the same depth whoever calls (ir/passes.py says why)
        if not verify:
            module.verify()
        mark_stage(module, stage)
        if stage in ("loop", "mem"):
            out.lowered = _summarise(module, stage, out.lowered or Lowered())
        out.seconds[stage] = time.perf_counter() - t0
        if dump is not None:
            dump(stage, module)
    if key is not None:
        _to_cache(module, key, out.lowered)
    out.pass_seconds = dict(timing.seconds)
    return out


def _summarise(module: ModuleOp, stage: str, out: Lowered) -> Lowered:
    from irc.dialects import loop, memory
    from irc.dialects import tensor as tn

    from .fusion.fuse import refusals

    if stage == "loop":
        for op in module.walk():
            if isinstance(op, loop.NestOp):
                out.kernels += 1
            elif isinstance(
                op, loop.ViewOp | tn.ReshapeOp
            ):  # a reshape left at this stage aliases its contiguous source
                out.views += 1
            elif op.name.startswith("tn.") and not isinstance(op, tn.DimOp):
                out.externs.append(op.name)
        out.refusals = refusals(module)
    else:
        out.arena_bytes, out.intermediate_bytes, out.in_place = plan_summary(module)
        out.launches = sum(isinstance(op, memory.LaunchOp | memory.ExternOp) for op in module.walk())
    return out


def sources_fingerprint() -> str:
    """A hash of the sources the mem stage depends on (ir, dialects, lowering, frontend, and targets: their rules
    for library calls shape it): a cached mem stage is reused only by the very compiler that produced it."""
    return cache.sources("ir", "dialects", "lowering", "frontend", "targets")


def _mem_key(cache_key: str, matmul: str) -> str:
    return cache.make_key("mem", cache_key, matmul, sources_fingerprint())


def cached(cache_key: str, matmul: str = "extern") -> tuple[ModuleOp, Result] | None:
    """The mem stage `run(..., cache_key=cache_key)` left in the disk cache (for `Plan(matmul=matmul)`), with its
    Result; None when the cache does not hold it. A warm start's way to the mem stage (dynamo/warm.py)."""
    key = _mem_key(cache_key, matmul)
    module, out = ModuleOp([]), Result(key=key)
    return (module, out) if _from_cache(module, key, out) else None


def _from_cache(module: ModuleOp, key: str, out: Result) -> bool:
    """Put the cached mem stage in place of the body of `module`, if there is a usable one."""
    t0 = time.perf_counter()
    found = _binary(key)
    if found is None:
        hit = cache.get_json("mem", key)
        if hit is None:
            cache_log.info("mem stage not in the disk cache (miss); lowering")
            return False
        try:
            found = parse_module(make_context(ALL_DIALECTS), hit["mem"]), Lowered(**hit["lowered"])
        except Exception as e:  # noqa: BLE001 - an unreadable entry is a miss
            cache_log.warning("cached mem stage unusable (%s); lowering again", e)
            return False
    mem, lowered = found
    for op in list(module.body.block.ops):
        op.detach()
        op.erase()
    for op in list(mem.body.block.ops):
        op.detach()
        module.body.block.add_op(op)
    module.attributes.update(mem.attributes)
    cache_log.info("mem stage from the disk cache (hit)")
    out.lowered, out.cached = lowered, True
    out.seconds["mem (cached)"] = time.perf_counter() - t0
    return True


def _binary(key: str) -> tuple[ModuleOp, Lowered] | None:
    """The cached mem stage in its binary form (its summary's JSON line, then ir/text.py dump_module), much faster
    to read than its text; None when that entry is missing, damaged or from another xDSL (then a cached text, if
    _to_cache wrote one, serves; else the stage is lowered again)."""
    data = cache.get("mem-ir", cache.make_key(key, BINARY_VERSION))
    if data is None:
        return None
    try:
        summary, _, body = data.partition(b"\n")
        return load_module(body), Lowered(**json.loads(summary))
    except Exception as e:  # noqa: BLE001 - a miss
        cache_log.warning("binary mem stage unreadable (%s)", e)
        return None


def _to_cache(module: ModuleOp, key: str, lowered: Lowered) -> None:
    """The mem stage in its binary form; as text (several times slower to print) only where
    the binary cannot be made."""
    try:
        summary = json.dumps(asdict(lowered))
    except (TypeError, ValueError) as e:
        cache_log.info("mem stage not cached (%s)", e)
        return
    try:
        binary = dump_module(module)
    except Exception as e:  # noqa: BLE001 - (a thread that cannot start, an object that does not pickle): the text serves
        cache_log.info("mem stage's binary form not cached (%s); caching its text", e)
        cache.put_json("mem", key, {"mem": print_module(module), "lowered": json.loads(summary)})
        return
    cache.put("mem-ir", cache.make_key(key, BINARY_VERSION), summary.encode() + b"\n" + binary)
