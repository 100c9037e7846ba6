"""A graph's call written out as one Python function, the way inductor writes its wrapper.

The executor (executor.py) runs a call as a loop over bound steps, each size an `affine.Lin` or an affine
expression evaluated by walking objects. On a small graph that walk is most of the call. Here the same call is Python source, generated once per graph and compiled:
the argument checks are one condition, every symbolic size a local variable, every derived size and every
launch's item count an expression over those, a launch a direct call of its kernel (or of its parallel form
when it has the work), a static view of an argument its `as_strided`, the other allocations and library calls
the step functions the executor binds (steps.py). The executor runs this function for every call whose arguments pass its
condition; any other call (an argument that differs, the stride of a size-1 dim bound as a symbol) runs
the executor's generic path, which accepts it or raises its error. The source is `Executor.call_source`.

    code, names = write(compiled, bound)   # once per build: the source and what it refers to
    call = bind(code, names, cx, slow)     # per context: a function of the call's arguments
"""

from __future__ import annotations

import math
import struct

import torch
from xdsl.ir.affine import AffineExpr

from irc.ir.index_math import Arith, evaluate

from ..codegen.affine import Lin
from . import alloc, parallel, steps
from .graph import Buf
from .tuning import HUGE_MIN, SCRATCH_MAX


class _Source(Arith[str]):
    """Python source for sizes: Lins over cells (locals v<cell> once bound, else the frame's vals), affine
    expressions of a launch's symbols."""

    def __init__(self):
        self.bound: set[int] = set()
        self.syms: list[str] = []

    def lin(self, x: Lin) -> str:
        parts = [(f"v{c}" if c in self.bound else f"vals[{c}]") + ("" if k == 1 else f" * {k}") for c, k in x.terms]
        if x.const or not parts:
            parts.append(str(x.const))
        return " + ".join(parts) if len(parts) == 1 else "(" + " + ".join(parts) + ")"

    def affine(self, e: AffineExpr, syms: list[str]) -> str:
        self.syms = syms
        return evaluate(e, self)

    def constant(self, value):
        return str(value)

    def symbol(self, position):
        return self.syms[position]

    def add(self, a, b):
        return f"({a} + {b})"

    def mul(self, a, b):
        return f"({a} * {b})"

    def floordiv(self, a, b):
        return f"({a} // {b})"

    def ceildiv(self, a, b):
        return f"(-(-{a} // {b}))"

    def mod(self, a, b):
        return f"({a} % {b})"


def write(compiled, bound: dict) -> tuple[str, dict]:
    """The source of `call(args)` for `compiled` (built) and the names it uses that are the same for every
    context; `bound`: step index -> the executor's callable for it in some context (None: nothing to run)."""
    g = compiled.g
    src = _Source()
    names = {
        "Tensor": torch.Tensor,
        "empty": alloc.empty,
        "empty_small": alloc.empty_small,
        "threads": parallel.num_threads,
        "tensor_of": steps.tensor_of,
        "extern_results": steps.extern_results,
    }
    tensors = [(r, root.arg, root.cell) for r, root in enumerate(g.roots) if root.kind == "input"]

    def name(prefix: str, obj) -> str:
        k = f"{prefix}{len(names)}"
        names[k] = obj
        return k

    # -- the arguments: types first, then sizes, then the symbols they bind ---------------------------
    lines = [f"if len(args) != {len(g.args)}:", "    return slow(args)"]
    kinds, reads, sizes, nonunit = [], [], [], set()
    for i, s in enumerate(g.args):
        if s.kind != "tensor":
            continue
        lines.append(f"a{i} = args[{i}]")
        kinds += [f"isinstance(a{i}, Tensor)", f"a{i}.dtype is {name('D', s.dtype)}", f"a{i}.is_cpu"]
        if all(isinstance(q, int) for q in (*s.sizes, *s.strides)):
            kinds += [f"a{i}.shape == {tuple(s.sizes)}", f"a{i}.stride() == {tuple(s.strides)}"]
            continue
        kinds.append(f"a{i}.dim() == {len(s.sizes)}")
        reads += [f"sh{i} = a{i}.shape", f"st{i} = a{i}.stride()"]
        sizes += [f"sh{i}[{d}] == {n}" for d, n in enumerate(s.sizes) if isinstance(n, int)]
        sizes += [f"st{i}[{d}] == {n}" for d, n in enumerate(s.strides) if isinstance(n, int)]
    if kinds:
        lines += [f"if not ({' and '.join(kinds)}):", "    return slow(args)"]
    lines += reads

    def read(w) -> str:
        return f"int(args[{w[1]}])" if w[0] == "index" else f"{'sh' if w[0] == 'size' else 'st'}{w[1]}[{w[2]}]"

    for c, w in g.sources.items():
        lines.append(f"v{c} = {read(w)}")
        src.bound.add(c)
        if w[0] == "stride":  # a stride that addresses nothing (size-1 dim, empty tensor) binds no symbol: generic path
            nonunit.add((w[1], w[2]))
    for c, w in g.checks:  # such a stride is never checked (executor._unit_stride)
        unit = f" or sh{w[1]}[{w[2]}] == 1 or a{w[1]}.numel() == 0" if w[0] == "stride" else ""
        sizes.append(f"(v{c} == {read(w)}{unit})" if unit else f"v{c} == {read(w)}")
    sizes += [f"sh{i}[{d}] != 1" for i, d in sorted(nonunit)] + [
        f"a{i}.numel() != 0" for i in sorted({i for i, _ in nonunit})
    ]
    if sizes:
        lines += [f"if not ({' and '.join(sizes)}):", "    return slow(args)"]
    prologue = len(lines)
    if tensors:
        lines.append(f"pack(frame, 0, {', '.join(f'a{i}.data_ptr()' for _, i, _ in tensors)})")
        names["pack"] = struct.Struct(f"<{len(tensors)}q").pack_into
    lines += [f"roots[{r}] = a{i}" for r, i, _ in tensors]
    lines += [f"vals[{c}] = frame[{c}] = v{c}" for c in g.sources]

    views: dict[str, Buf] = {}  # per context: views of the arena, which never moves

    def operand(x) -> str:
        """An extern's operand: a size, or a buffer as a tensor (the argument itself, a whole allocation, a view
        of the arena made once per context, or a view made in the call)."""
        if isinstance(x, Lin):
            return src.lin(x)
        root = g.roots[x.root]
        if root.kind == "alloc" and root.buf is x:
            return f"roots[{x.root}]"
        spec = g.args[root.arg] if root.kind == "input" else None
        consts = [q.const if q.static else None for q in (*x.sizes, *x.strides, x.offset)]
        if spec is not None and consts == [*spec.sizes, *spec.strides, 0] and x.dtype == spec.dtype:
            return f"a{root.arg}"  # passed the condition: exactly these sizes and strides
        if root.kind == "arena" and None not in consts:
            views[v := f"V{len(views)}"] = x
            return v
        if spec is not None and None not in consts and x.dtype == spec.dtype:  # a static view of an argument
            n, a = len(x.sizes), f"a{root.arg}"
            offset = f"{a}.storage_offset()" + (f" + {consts[-1]}" if consts[-1] else "")
            return f"{a}.as_strided({tuple(consts[:n])}, {tuple(consts[n : 2 * n])}, {offset})"
        return fresh_view(x) or f"tensor_of(cx, {name('B', x)})"

    def fresh_view(x) -> str | None:
        """A static view of a fresh allocation (a reshape, a transpose), made in the call; None for anything else."""
        root = g.roots[x.root]
        if (
            root.kind != "alloc"
            or x.dtype != root.buf.dtype
            or not all(q.static for q in (*x.sizes, *x.strides, x.offset))
        ):
            return None
        shape, strides = (tuple(q.const for q in qs) for qs in (x.sizes, x.strides))
        return f"roots[{x.root}].as_strided({shape}, {strides}, {x.offset.const})"

    # -- the steps ---------------------------------------------------------------------------------
    scratch = scratch_roots(compiled)
    launches = iter(compiled.launches)
    dead = g.dead_after()
    for k, st in enumerate(g.steps):
        if k - 1 in dead:  # what the last step was the last to name goes back to the allocator
            lines.append(f"{' = '.join(f'roots[{r}]' for r in dead[k - 1])} = None")
        ln = next(launches) if st.kind == "launch" else None
        if st.kind == "derive":
            a, b = (src.lin(x) for x in st.ins)
            lines += [f"v{st.cell} = {name('F', st.fn)}({a}, {b})", f"vals[{st.cell}] = frame[{st.cell}] = v{st.cell}"]
            src.bound.add(st.cell)
        elif st.kind == "alloc":
            root = g.roots[st.root]
            buf = root.buf
            shape = "(" + "".join(f"{src.lin(q)}, " for q in buf.sizes) + ")"
            strides = "(" + "".join(f"{src.lin(q)}, " for q in buf.strides) + ")"
            static = all(q.static for q in (*buf.sizes, *buf.strides))
            nbytes = " * ".join([*(src.lin(q) for q in buf.sizes), str(buf.dtype.itemsize)])
            small = static and buf.dtype.itemsize * math.prod(q.const for q in buf.sizes) < HUGE_MIN
            dt = name("D", buf.dtype)
            make = f"empty_small({shape}, {strides}, {dt})" if small else f"empty({shape}, {strides}, {dt})"
            if not static:  # alloc.empty's own test, written out: a small buffer is torch's at once
                make = f"empty_small({shape}, {strides}, {dt}) if {nbytes} < {HUGE_MIN} else {make}"
            fresh = [
                f"roots[{st.root}] = t = {make}",
                f"{'' if static else f'vals[{root.cell}] = '}frame[{root.cell}] = t.data_ptr()",
            ]
            if st.root in scratch:  # the context's scratch, grown where this call needs more; a larger buffer is fresh
                lines += [
                    f"if {nbytes} <= {SCRATCH_MAX}:",
                    f"    if {nbytes} > room[{st.root}]:",
                    f"        grow_scratch(cx, {st.root}, {nbytes})",
                    f"    vals[{root.cell}] = frame[{root.cell}] = scratch_ptr[{st.root}]",
                    "else:",
                ]
                fresh = [f"    {x}" for x in fresh]
            lines += fresh
        elif st.kind == "extern":
            ins = ", ".join(operand(x) for x in st.ins)
            outs = ", ".join(operand(b) for b in st.outs)
            run = name("R", compiled.externs[id(st)].run)
            lines.append(f"{'fresh = ' if st.results else ''}{run}([{ins}], [{outs}])")
            if st.results:
                lines.append(f"extern_results(cx, G, {name('S', st)}, fresh)")
            for _, cells in st.results:  # the sizes of its fresh results, which extern_results wrote into vals
                for c in cells:
                    if c is not None:
                        lines.append(f"v{c} = vals[{c}]")
                        src.bound.add(c)
        elif ln.fn is None or isinstance(steps.counter(ln.plan, st.syms), tuple):  # the reference, or static
            if bound.get(k) is not None:
                lines.append(f"step{k}()")
        else:
            lines += _count(src, ln.plan, [src.lin(q) for q in st.syms])
            fn = name("K", ln.fn)
            lines += ["if items > 0:"]
            if ln.par is None:
                lines += [f"    {fn}(0, items, argv{k})"]
            else:  # parallel.launch written out: a small launch is one call of the kernel itself
                lines += [
                    f"    if items * work < {compiled.min_work}:",
                    f"        {fn}(0, items, argv{k})",
                    "    else:",
                    f"        {name('P', ln.par)}(0, items, argv{k}, threads())",
                ]

    # -- the results ---------------------------------------------------------------------------------
    outs = []
    for r in g.returns:
        if isinstance(r, Lin):
            outs.append(src.lin(r))
        elif g.roots[r.root].buf is r:
            outs.append(f"roots[{r.root}]")
        else:
            outs.append(fresh_view(r) or f"tensor_of(cx, {name('B', r)})")
    clear = [r for r, root in enumerate(g.roots) if root.kind != "arena"]
    names["G"], names["_views"] = g, views
    code = [
        "def call(args):",
        *(f"    {x}" for x in lines[:prologue]),
        "    try:",
        *(f"        {x}" for x in lines[prologue:]),
    ]
    code += [
        f"        return [{', '.join(outs)}]",
        "    finally:",
        f"        {' = '.join(f'roots[{r}]' for r in clear)} = None" if clear else "        pass",
    ]
    return "\n".join(code) + "\n", names


def scratch_roots(compiled) -> set[int]:
    """Allocations of runtime size that only generated kernels touch: a dynamic graph's intermediates (a static
    graph's share the arena). A call takes one of at most SCRATCH_MAX bytes from its context's scratch, kept across
    calls, rather than allocating it (on a small graph an allocation costs about as much as a kernel); a larger one, the generic path and the launchers allocate as before."""
    g = compiled.g
    other = {r.root for r in g.returns if isinstance(r, Buf)}  # a returned buffer is the caller's to keep
    launches = iter(compiled.launches)
    for st in g.steps:
        ln = next(launches) if st.kind == "launch" else None
        if st.kind == "extern" or ln is not None and ln.fn is None:  # torch sees the buffer as a tensor
            other |= {b.root for b in (*st.ins, *st.outs) if isinstance(b, Buf)}
    allocs = (r for r, root in enumerate(g.roots) if root.kind == "alloc" and r not in other)
    return {r for r in allocs if not all(q.static for q in g.roots[r].buf.sizes)}


def _count(src: _Source, plan: dict, syms: list[str]) -> list[str]:
    """Lines setting `items` and `work` as steps.counter computes them, for a launch with runtime sizes."""
    outer = [src.affine(e, syms) for e in plan["outer"]]
    lines = [f"o{j} = {x}" for j, x in enumerate(outer)]
    lines.append(f"work = {' * '.join(src.affine(e, syms) for e in plan['inner']) or '1'}")
    if plan["blocked"] is not None:
        k, rows = plan["blocked"], plan["rows"]
        lines += [f"work *= min(o{k}, {rows})", f"o{k} = -(-o{k} // {rows})"]
    lines.append(f"items = {' * '.join(f'o{j}' for j in range(len(outer))) or '1'}")
    if plan["chunk"] is not None:
        cols = plan["cols"]
        lines += [f"n = {src.affine(plan['chunk'], syms)}", f"items *= -(-n // {cols})", f"work *= min(n, {cols})"]
    lines.append("work = max(work, 1)")
    return lines


def bind(code, names: dict, cx, bound: dict, slow):
    """The call of `code` (compiled `write` source) on context `cx`; `slow(args)` runs a call the generic way."""
    scope = dict(names, cx=cx, frame=cx.frame, vals=cx.vals, roots=cx.roots, slow=slow, room=cx.room)
    scope.update(scratch_ptr=cx.scratch_ptr, grow_scratch=steps.grow_scratch)
    scope.update({v: steps.tensor_of(cx, buf) for v, buf in names["_views"].items()})
    scope.update({f"step{k}": f for k, f in bound.items() if f is not None})
    scope.update({f"argv{k}": a for k, a in cx.argv.items()})
    exec(code, scope)  # noqa: S102 - our own generated source
    return scope["call"]


__all__ = ["bind", "write"]
