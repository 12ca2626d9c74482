"""Elementwise chains that end in a reduction: ``dc.sum(a * x + y * y - 3.0)`` is ONE kernel.

``dc.sum``/``prod``/``min``/``max``/``mean``/``argmin``/``argmax`` (the ops layer's functions,
wrapped here): given a pending expression (or a view) and no ``axis``, one generated kernel
computes the expression element by element and accumulates it, so the elementwise values
never reach memory; a tiny second kernel combines the per-work-item partial results into a
0-d Buffer. Anything else goes to ``dotcompute.ops`` unchanged.

Work split: on CPU-type devices each work-item reduces a contiguous run of the first
dimension (vectorisable loops over contiguous memory); on GPUs a 1-D input is read with a
grid stride (coalesced). float32 sums accumulate in float64 on CPU-type devices.
"""

from __future__ import annotations

import builtins
from functools import cache
from typing import Any

import numpy as np

from .. import ops
from ..lang.builtins import MATH
from ..ops.reduce import ArrayMathFunction, amax, amin
from .codegen import CAST_NAMES, Program, compile_kernel, launch
from .evaluate import EVALUATION_LOCK, file_quick, filed_plan, held_intermediates, quick_walk, run
from .lazy import LazyBuffer

LANES = 8  # independent accumulators per work-item on CPU-type devices
_NUMPY = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean,
          "argmin": np.argmin, "argmax": np.argmax}


def _fusable(x: Any) -> bool:
    return type(x) is LazyBuffer and (x._op is not None or x._view is not None) and x.ndim >= 1


@cache
def _result_dtype(kind: str, dtype: np.dtype) -> np.dtype:
    """numpy's result dtype of reduction ``kind`` over ``dtype`` (asked of numpy; a few per call)."""
    return np.dtype(_NUMPY[kind](np.zeros(1, dtype)).dtype)


def _init(kind: str, t: np.dtype) -> str:
    if kind in ("sum", "mean"):
        return f"{CAST_NAMES[t]}(0)"
    if kind == "prod":
        return f"{CAST_NAMES[t]}(1)"
    if t.kind == "f":
        return f"{CAST_NAMES[t]}({'-' if kind == 'max' else ''}1e308)" if t.itemsize == 8 else \
            f"{CAST_NAMES[t]}({'-' if kind == 'max' else ''}3.0e38)"
    if t.kind == "b":
        return f"{CAST_NAMES[t]}({kind == 'min'})"
    info = np.iinfo(t)
    return f"{CAST_NAMES[t]}({info.max if kind == 'min' else info.min})"


def _update(kind: str, acc: str, v: str, t: np.dtype) -> list[str]:
    if kind in ("sum", "mean"):
        return [f"{acc} = {acc} + {CAST_NAMES[t]}({v})"]
    if kind == "prod":
        return [f"{acc} = {acc} * {CAST_NAMES[t]}({v})"]
    if t.kind == "b":
        op = "and" if kind == "min" else "or"
        return [f"{acc} = {acc} {op} {v}"]
    cmp = "<" if kind == "min" else ">"
    # NaN propagates (numpy's min/max): once acc is NaN no comparison replaces it
    return [f"if {v} {cmp} {acc} or {v} != {v}:", f"    {acc} = {v}"]


def _arg_update(kind: str, v: str, flat: str) -> list[str]:
    cmp = "<" if kind == "argmin" else ">"
    # the first extreme wins; the first NaN wins over everything (numpy's argmin/argmax)
    return [f"if bi < 0 or ({v} {cmp} best and best == best) or ({v} != {v} and best == best):",
            f"    best = {v}", f"    bi = {flat}"]


def fused(kind: str, x: LazyBuffer, gpu: bool | None = None) -> LazyBuffer:
    """One kernel for ``kind`` over the whole expression ``x``, plus a one-item combine kernel.
    ``gpu``: force the GPU (True) or CPU (False) work layout; by default the device's type decides."""
    with EVALUATION_LOCK:
        return _fused(kind, x, gpu)


def _fused(kind: str, x: LazyBuffer, gpu: bool | None) -> LazyBuffer:
    for held in held_intermediates(x):
        run([held], extras=False)  # values the program keeps are computed once, then read
    acc = x.accelerator
    out_t = _result_dtype(kind, x.dtype)
    arg = kind in ("argmin", "argmax")
    n = x.size
    if n == 0:
        if kind in ("min", "max", "argmin", "argmax"):
            raise ValueError(f"dc.{kind}: attempt to get {kind} of an empty sequence")
        return LazyBuffer.scalar(acc.asarray(np.array([_NUMPY[kind](np.zeros(0, x.dtype))], out_t)), out_t, acc)
    kernel, groups, acc_t, arguments = reduction_kernel(kind, x, acc.type == "gpu" if gpu is None else gpu)
    part = acc.empty((groups,), acc_t if not arg else x.dtype)
    extra = [acc.empty((groups,), np.int64)] if arg else []
    launch(acc, kernel, (groups,), part, *extra, *arguments)
    res = acc.empty((1,), out_t)
    _combine(kind, acc, part, extra, res, groups, n, acc_t, out_t)
    return LazyBuffer.scalar(res, out_t, acc)


def _layout(kind: str, x: LazyBuffer, gpu: bool) -> tuple[np.dtype, np.dtype, bool, int, int]:
    """(the accumulator dtype, the dtype each element is read as, whether items stride over the
    grid, the work-items, the elements per item) of ``kind`` over ``x``: GPUs take a grid stride,
    CPU-type devices contiguous runs (float32 sums in float64 there)."""
    out_t = _result_dtype(kind, x.dtype)
    arg = kind in ("argmin", "argmax")
    acc_t = np.dtype(np.float64) if (not gpu and out_t == np.float32 and kind in ("sum", "mean")) else out_t
    if kind == "mean":
        acc_t = np.dtype(np.float64) if out_t == np.float64 or not gpu else out_t
    val_t = x.dtype if arg or kind in ("min", "max") else acc_t
    shape = x.shape
    strided = gpu and len(shape) == 1
    # builtins' min and max: this module's own names are dc.min/dc.max (array functions, ~10 us a call)
    groups = int(builtins.min(builtins.max(1, shape[0]), 1024 if strided else 256))
    chunk = -(-shape[0] // groups)
    return acc_t, val_t, strided, -(-shape[0] // chunk), chunk


def reduction_kernel(kind: str, x: LazyBuffer, gpu: bool) -> tuple[Any, int, np.dtype, list[Any]]:
    """(the generated reduce kernel, its number of work-items, the accumulator dtype, the arguments
    after the partial-result buffers) for ``kind`` over the expression ``x``; ``gpu``: the layout
    for GPUs (grid stride) rather than CPU-type devices (contiguous runs, accumulator lanes)."""
    acc_t, _, _, groups, chunk = _layout(kind, x, gpu)
    # a structure planned before: its kernel, and the quick walk's arguments (expr/evaluate.py)
    quick = quick_walk(x)
    known = filed_plan(("reduce", kind, gpu, quick[0])) if quick is not None else None
    if known is not None:
        kernel, _ = compile_kernel(known, f"dc_{kind}", lambda: _planned(kind, x, gpu)[1]())
        return kernel, groups, acc_t, [*quick[1], *quick[2], *x.shape, chunk, groups]
    key, source, arguments = _planned(kind, x, gpu)
    kernel, _ = compile_kernel(key, f"dc_{kind}", source)
    if quick is not None:
        file_quick(("reduce", kind, gpu, quick[0]), key, arguments, [*quick[1], *quick[2], *x.shape, chunk, groups])
    return kernel, groups, acc_t, arguments


def _planned(kind: str, x: LazyBuffer, gpu: bool) -> tuple[tuple, Any, list[Any]]:
    """(the structural key, a function giving the kernel's lines, the arguments after the partial-result
    buffers) of reduction_kernel's program, from codegen.Program's walk of ``x``."""
    acc_t, val_t, strided, groups, chunk = _layout(kind, x, gpu)
    arg = kind in ("argmin", "argmax")
    shape = x.shape
    nd = len(shape)
    # more dimensions than kernel parameters have: operands are read by strides (codegen.Program)
    prog = Program(shape, [f"i{d}" for d in range(nd)], strided=nd > 3)
    var = prog.value(x)
    first_extent = len(prog.ints)
    prog.ints.extend(shape)
    ext = [f"p{first_extent + d}" for d in range(nd)]
    prog.ints.extend([chunk, groups])
    chunk_p, groups_p = f"p{first_extent + nd}", f"p{first_extent + nd + 1}"
    lanes = LANES if (not strided and not arg and kind in ("sum", "mean", "prod")) else 1
    v = prog.convert(var, val_t)

    def source() -> list[str]:
        # the kernel's text, made only when its structural key is not yet compiled: the lines (the
        # expression written out LANES times) cost more than the rest of a small reduction
        outs = [("part", acc_t if not arg else x.dtype, 1)] + ([("pidx", np.dtype(np.int64), 1)] if arg else [])
        lines = ["def {name}(" + prog.params(outs) + "):", "    g = gid(0)"]
        if arg:
            lines += [f"    best = {CAST_NAMES[x.dtype]}(0)", "    bi = int64(-1)"]
        else:
            lines.append(f"    acc = {_init(kind, acc_t)}")
        if lanes > 1:
            lines += [f"    acc{k} = {_init(kind, acc_t)}" for k in range(1, lanes)]
        last = nd - 1
        indent = "    "
        for d in range(nd - 1 if lanes > 1 else nd):
            if d == 0 and strided:
                lines.append(f"    for i0 in range(g, {ext[0]}, {groups_p}):")
            elif d == 0:
                lines.append(f"    for i0 in range(g * {chunk_p}, min(g * {chunk_p} + {chunk_p}, {ext[0]})):")
            else:
                lines.append(f"{indent}for i{d} in range(0, {ext[d]}):")
            indent += "    "
        if lanes > 1:
            # the innermost loop in LANES independent accumulators: no single dependency chain, and
            # straight-line code the C compiler can vectorise (floating-point sums are not reassociated)
            lo, hi = (f"g * {chunk_p}", f"min(g * {chunk_p} + {chunk_p}, {ext[0]})") if last == 0 else ("0", ext[last])
            lines += [f"{indent}lo = {lo}", f"{indent}hi = {hi}", f"{indent}mid = lo + (hi - lo) // {lanes} * {lanes}",
                      f"{indent}for jj in range(lo, mid, {lanes}):"]
            for k in range(lanes):
                lines.append(f"{indent}    i{last} = jj + {k}")
                lines += [f"{indent}    {ln}" for ln in prog.lines]
                lines += [f"{indent}    {ln}" for ln in _update(kind, f"acc{k}" if k else "acc", v, acc_t)]
            lines.append(f"{indent}for i{last} in range(mid, hi):")
            indent += "    "
        lines += [indent + ln for ln in prog.lines]
        if arg:
            flat = "i0"
            for d in range(1, nd):
                flat = f"({flat}) * {ext[d]} + i{d}"
            lines += [indent + ln for ln in _arg_update(kind, v, flat)]
            lines += ["    part[g] = best", "    pidx[g] = bi"]
        else:
            lines += [indent + ln for ln in _update(kind, "acc", v, acc_t)]
            for k in range(1, lanes):
                lines += ["    " + ln for ln in _update(kind, "acc", f"acc{k}", acc_t)]
            lines.append("    part[g] = acc")
        return lines

    key = ("reduce", kind, strided, lanes, acc_t.str, nd, tuple(prog.key))
    return key, source, prog.arguments()


def combine_kernel(kind: str, pt: np.dtype, out_t: np.dtype) -> Any:
    """The one-work-item kernel that combines ``pt`` partial results into ``res[0]`` of ``out_t``
    (its text written only the first time: every small reduction launches it)."""
    kernel, _ = compile_kernel(("combine", kind, pt.str, out_t.str), f"dc_combine_{kind}",
                               lambda: _combine_lines(kind, pt, out_t))
    return kernel


def _combine_lines(kind: str, pt: np.dtype, out_t: np.dtype) -> list[str]:
    if kind in ("argmin", "argmax"):
        params = f"part: Buffer[{CAST_NAMES[pt]}, 1], pidx: Buffer[int64, 1], res: Buffer[int64, 1], groups: int64"
        cmp = "<" if kind == "argmin" else ">"
        body = [f"    best = {CAST_NAMES[pt]}(0)", "    bi = int64(-1)", "    for g in range(groups):",
                "        v = part[g]", "        j = pidx[g]",
                f"        if j >= 0 and (bi < 0 or (v {cmp} best and best == best) or (v == best and j < bi) "
                "or (v != v and (best == best or j < bi))):",
                "            best = v", "            bi = j", "    res[0] = bi"]
    else:
        params = (f"part: Buffer[{CAST_NAMES[pt]}, 1], res: Buffer[{CAST_NAMES[out_t]}, 1], groups: int64, "
                  "count: int64")
        body = [f"    acc = {_init(kind, pt)}", "    for g in range(groups):", "        v = part[g]"]
        body += ["        " + ln for ln in _update(kind, "acc", "v", pt)]
        if kind == "mean":
            body.append(f"    res[0] = {CAST_NAMES[out_t]}(acc / {CAST_NAMES[pt]}(count))")
        else:
            body.append(f"    res[0] = {CAST_NAMES[out_t]}(acc)")
    return ["def {name}(" + params + "):", "    if gid(0) == 0:"] + ["    " + ln for ln in body]


def _combine(kind: str, acc: Any, part: Any, extra: list[Any], res: Any, groups: int, n: int,
             acc_t: np.dtype, out_t: np.dtype) -> None:
    """res[0] = the partial results combined, in order (a single work-item: ``groups`` is small)."""
    kernel = combine_kernel(kind, part.dtype, out_t)
    if kind in ("argmin", "argmax"):
        launch(acc, kernel, (1,), part, extra[0], res, groups)
    else:
        launch(acc, kernel, (1,), part, res, groups, n)


def _wrap(kind: str, target: Any) -> Any:

    def reduction(x: Any, axis: Any = None, **kwargs: Any) -> Any:
        if axis is None and not kwargs and _fusable(x):
            try:
                out_t = _result_dtype(kind, x.dtype)
            except TypeError:
                out_t = None
            if out_t is not None and out_t in (np.dtype(t) for t in CAST_NAMES):
                return fused(kind, x)
        return target(x, axis, **kwargs)

    reduction.__name__ = reduction.__qualname__ = kind
    reduction.__doc__ = (target.__doc__ or "") + (
        f"\n\nA pending array expression (``dc.{kind}(a * b + c)``) is fused into the reduction: one kernel "
        "computes and accumulates it (see docs/expressions.md).")
    return reduction


sum = _wrap("sum", ops.sum)  # noqa: A001
prod = _wrap("prod", ops.prod)
mean = _wrap("mean", ops.mean)
argmin = _wrap("argmin", ops.argmin)
argmax = _wrap("argmax", ops.argmax)
# dc.min / dc.max stay math functions (kernels resolve them by identity as MathFunction); with one
# array they reduce, with two they are elementwise (an expression on Buffers)
min = ArrayMathFunction(MATH["min"], _wrap("min", amin))  # noqa: A001
max = ArrayMathFunction(MATH["max"], _wrap("max", amax))  # noqa: A001
REDUCTIONS = {"sum": sum, "prod": prod, "min": min, "max": max, "mean": mean, "argmin": argmin, "argmax": argmax}

__all__ = ["sum", "prod", "min", "max", "mean", "argmin", "argmax", "REDUCTIONS", "fused", "reduction_kernel",
           "combine_kernel"]
