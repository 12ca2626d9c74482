"""From an expression graph to the Python source of ONE kernel, fed through the kernel language.

The generated function is ordinary kernel-language Python: the frontend checks and lowers
it and every backend's emitter prints it, so expressions run wherever kernels run, and the
normal kernel cache (keyed by the emitted source) keeps the binaries on disk. Every value
is converted explicitly to the dtype numpy's loop would compute in, so the language's own
(C-like) promotion never decides a result type.

A :class:`Program` is built per evaluation; its ``key`` describes the structure only
(operations, dtypes, dimensionalities, broadcasting and view patterns) — shapes, scalar
values and view offsets are kernel arguments — so one compiled kernel serves every
expression of the same form.
"""

from __future__ import annotations

import hashlib
import importlib
import linecache
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from ..dtypes import (
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ..lang import global_id
from ..lang.builtins import MATH, bitcast
from ..lang.kernel import Kernel
from ..runtime import Buffer
from ..runtime.fast_launch import attempt as fast_attempt
from . import complex_math, powers
from .lazy import LazyBuffer, Scalar

# binary templates over operand variables already converted to the loop dtype
BINARY_TEMPLATES = {
    "add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "truediv": "{a} / {b}",
    "floordiv": "{a} // {b}", "mod": "{a} % {b}", "pow": "{a} ** {b}",
    "and": "{a} & {b}", "or": "{a} | {b}", "xor": "{a} ^ {b}",
    "lt": "{a} < {b}", "le": "{a} <= {b}", "gt": "{a} > {b}", "ge": "{a} >= {b}", "eq": "{a} == {b}",
    "ne": "{a} != {b}",
    # numpy's minimum/maximum propagate NaN (a != a is the NaN test that also compiles for ints)
    "minimum": "{a} if ({a} < {b} or {a} != {a}) else {b}",
    "maximum": "{a} if ({a} > {b} or {a} != {a}) else {b}",
}
# on bool operands numpy's add/mul/bitwise ops are the logical ones
BOOL_TEMPLATES = {
    "add": "{a} or {b}", "mul": "{a} and {b}", "and": "{a} and {b}", "or": "{a} or {b}", "xor": "{a} != {b}",
    "minimum": "{a} and {b}", "maximum": "{a} or {b}",
}
UNARY_TEMPLATES = {"neg": "-{a}", "pos": "{a}", "abs": "abs({a})", "invert": "~{a}", "cast": "{a}"}
BOOL_UNARY = {"invert": "not {a}", "abs": "{a}", "pos": "{a}"}

# the module, not the function runtime/__init__ exports under its name: a forked child's flag is read at each launch
_accelerator_module = importlib.import_module("..runtime.accelerator", __package__)

CAST_NAMES = {np.dtype(t): t.__name__ for t in (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                                  float16, float32, float64, complex64, complex128)}


def namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {"Buffer": Buffer, "gid": global_id, "C_INF": complex_math.C_INF,
                          "C_NAN": complex_math.C_NAN}
    for dt, name in CAST_NAMES.items():
        ns[name] = dt.type
    for name, fn in MATH.items():
        ns[f"m_{name}"] = fn
    ns["bitcast"] = bitcast
    return ns


class Program:
    """The pieces of one fused kernel: operands, body lines and the structural key."""

    def __init__(self, out_shape: tuple[int, ...], index: list[str], strided: bool = False,
                 flat_var: str | None = None) -> None:
        self.out_shape = out_shape
        self.index = index  # the kernel's index variable per output dimension
        # strided: every leaf is passed as its 1-d memory and indexed by strides (kernel parameters
        # have 1 to 3 dimensions; expressions any number). flat_var: the variable holding the output's
        # C-order flat index, when the kernel has one (a leaf of the output's shape reads it directly)
        self.strided = strided
        self.flat_var = flat_var
        self.buffers: list[tuple[Buffer, np.dtype, int]] = []  # (argument, dtype, ndim)
        self.scalars: list[tuple[Any, np.dtype]] = []
        self.ints: list[int] = []
        self.lines: list[str] = []
        self.key: list[Any] = []
        self.memo: dict[int, tuple[str, np.dtype]] = {}
        self.keep: list[Any] = []  # keeps memoised objects alive, so ids stay unique
        self._tmp = 0

    # ------------------------------------------------------------------------------------------
    def tmp(self) -> str:
        self._tmp += 1
        return f"t{self._tmp}"

    def value(self, node: Any) -> tuple[str, np.dtype]:
        """The variable holding ``node``'s element at the current index, emitting what computes it."""
        hit = self.memo.get(id(node))
        if hit is not None:
            self.key.append(("ref", list(self.memo).index(id(node))))
            return hit
        if isinstance(node, Scalar):
            name = f"s{len(self.scalars)}"
            self.scalars.append((node.value, node.dtype))
            self.key.append(("s", node.dtype.str))
            out = (name, node.dtype)
        elif isinstance(node, LazyBuffer) and node._op is not None:
            out = self.operation(node)
        elif isinstance(node, LazyBuffer) and node._view is not None:
            out = self.leaf_view(node)
        elif isinstance(node, LazyBuffer) and node._backing is not None:
            out = self.leaf(node._backing, node.dtype, (), zero_d=True)
        else:
            out = self.leaf(node, node.dtype, node.shape)
        self.memo[id(node)] = out
        self.keep.append(node)
        return out

    def convert(self, var: tuple[str, np.dtype], dtype: np.dtype) -> str:
        name, have = var
        return name if have == dtype else f"{CAST_NAMES[dtype]}({name})"

    def operation(self, node: LazyBuffer) -> tuple[str, np.dtype]:
        op = node._op
        assert op is not None
        args = [self.value(a) for a in node._args]
        ins = [self.convert(a, t) for a, t in zip(args, node._loop, strict=True)]
        self.key.append((op, node._extra, tuple(t.str for t in node._loop), node.dtype.str))
        loop_bool = bool(node._loop) and node._loop[0] == np.dtype(bool)
        if op == "where":
            expr = f"{ins[1]} if {ins[0]} else {ins[2]}"
        elif (op == "math" or op == "pow") and node._loop[0].kind == "c":
            # complex functions: the language's exp/sqrt/conj or identities over the two parts
            expr = complex_math.emit(self, node._extra or "pow", ins, node._loop[0], CAST_NAMES)
        elif op == "ipow":  # x ** n for a small constant n: a product chain rounded once (powers.py)
            expr = powers.emit(self, ins[0], node._loop[0], *node._extra, CAST_NAMES)
        elif op == "math":
            expr = f"m_{node._extra}({', '.join(ins)})"
        elif op == "floordiv" and node._loop[0].kind == "f":
            # numpy: x // 0.0 is x / 0.0 (±inf or nan), not the nan of floor(fmod-based) division
            expr = f"{ins[0]} / {ins[1]} if {ins[1]} == 0 else {ins[0]} // {ins[1]}"
        elif op in ("lshift", "rshift"):
            # numpy's shifts: a count outside [0, bits) shifts everything out (0, or -1 for a
            # negative value shifted right) where C leaves it undefined
            t = node._loop[0]
            a, b, cast = ins[0], ins[1], CAST_NAMES[t]
            inside = f"{b} >= 0 and {b} < {t.itemsize * 8}"
            if op == "lshift":
                expr = f"({a} << {b}) if ({inside}) else {cast}(0)"
            elif t.kind == "i":
                expr = f"({a} >> {b}) if ({inside}) else ({cast}(-1) if {a} < 0 else {cast}(0))"
            else:
                expr = f"({a} >> {b}) if ({inside}) else {cast}(0)"
        elif len(ins) == 2:
            table = BOOL_TEMPLATES if loop_bool and op in BOOL_TEMPLATES else BINARY_TEMPLATES
            expr = table[op].format(a=ins[0], b=ins[1])
        else:
            table = BOOL_UNARY if loop_bool and op in BOOL_UNARY else UNARY_TEMPLATES
            if op == "abs" and node._loop[0].kind == "u":
                table = BOOL_UNARY  # |x| of an unsigned value is x
            expr = table[op].format(a=ins[0])
        name = self.tmp()
        self.lines.append(f"{name} = {CAST_NAMES[node.dtype]}({expr})")
        return name, node.dtype

    def _index_of(self, dim: int, ndim: int, extent: int) -> str | None:
        """The output index a leaf dimension follows under broadcasting, or None (index 0)."""
        d = dim + len(self.out_shape) - ndim
        if extent == 1 and self.out_shape[d] != 1:
            return None
        return self.index[d]

    def _param(self, value: int) -> str:
        self.ints.append(int(value))
        return f"p{len(self.ints) - 1}"

    def _flat_output(self) -> str:
        """The output's C-order flat index: ``flat_var``, or a line computing it from the index
        variables with the output's strides as parameters (emitted once, at first use)."""
        if self.flat_var is not None:
            return self.flat_var
        # every dimension has its term (an extent of 1 has index 0): the line depends on the number
        # of dimensions only, which the structural keys hold, never on the extents
        strides = _c_strides(self.out_shape)
        terms = [f"{v} * {self._param(st)}" for v, st in zip(self.index, strides, strict=True)]
        self.flat_var = "fo"
        self.lines.append(f"fo = {' + '.join(terms) if terms else 'int64(0)'}")
        return self.flat_var

    def _strided_leaf(self, buf: Buffer, dtype: np.dtype, subscript: str, pattern: Any) -> tuple[str, np.dtype]:
        """A leaf read from its 1-d memory at ``subscript`` (the N-d form of leaf and leaf_view)."""
        name = f"b{len(self.buffers)}"
        flat = Buffer._wrap(buf._native.view(0, (buf.size,)), buf.accelerator)
        self.buffers.append((flat, dtype, 1))
        self.key.append(("bs", dtype.str, pattern))
        var = self.tmp()
        self.lines.append(f"{var} = {name}[{subscript}]")
        return var, dtype

    def leaf(self, buf: Buffer, dtype: np.dtype, shape: tuple[int, ...], zero_d: bool = False) -> tuple[str, np.dtype]:
        name = f"b{len(self.buffers)}"
        if self.strided and not zero_d:
            if tuple(shape) == tuple(self.out_shape):
                return self._strided_leaf(buf, dtype, self._flat_output(), "same")
            terms, pattern = [], []
            for j, (extent, stride) in enumerate(zip(shape, _c_strides(shape), strict=True)):
                idx = self._index_of(j, len(shape), extent)
                if idx is not None and extent != 1:
                    terms.append(f"{idx} * {self._param(stride)}")
                    pattern.append(self.index.index(idx))
            return self._strided_leaf(buf, dtype, " + ".join(terms) or "int64(0)", tuple(pattern))
        if zero_d:
            self.buffers.append((buf, dtype, 1))
            self.key.append(("b0", dtype.str))
            subs = ["0"]
        else:
            self.buffers.append((buf, dtype, len(shape)))
            subs = [self._index_of(j, len(shape), e) or "0" for j, e in enumerate(shape)]
            self.key.append(("b", dtype.str, tuple(s if s == "0" else self.index.index(s) for s in subs)))
        var = self.tmp()
        self.lines.append(f"{var} = {name}[{', '.join(subs)}]")
        return var, dtype

    def leaf_view(self, node: LazyBuffer) -> tuple[str, np.dtype]:
        view = node._view
        assert view is not None
        if self.strided or view.base.ndim > 3:
            return self._strided_view(node)
        name = f"b{len(self.buffers)}"
        self.buffers.append((view.base, node.dtype, view.base.ndim))
        subs, pattern = [], []
        for entry in view.index:
            start = f"p{len(self.ints)}"
            self.ints.append(entry[1] if entry[0] == "fix" else entry[2])
            if entry[0] == "fix":
                subs.append(start)
                pattern.append("f")
                continue
            _, vdim, _, step = entry
            idx = self._index_of(vdim, node.ndim, node.shape[vdim])
            if idx is None:
                subs.append(start)
                pattern.append("z")
            elif step == 1:
                subs.append(f"{start} + {idx}")
                pattern.append(("i", self.index.index(idx)))
            else:
                stride = f"p{len(self.ints)}"
                self.ints.append(step)
                subs.append(f"{start} + {stride} * {idx}")
                pattern.append(("s", self.index.index(idx)))
        self.key.append(("v", node.dtype.str, tuple(pattern)))
        var = self.tmp()
        self.lines.append(f"{var} = {name}[{', '.join(subs)}]")
        return var, node.dtype

    def _strided_view(self, node: LazyBuffer) -> tuple[str, np.dtype]:
        """A view read from its base's 1-d memory: offset + sum of (step x base stride) x index."""
        view = node._view
        assert view is not None
        subscript, pattern = strided_subscript(self, view.base.shape, view.index, node.shape)
        return self._strided_leaf(view.base, node.dtype, subscript, ("v", pattern))

    # ------------------------------------------------------------------------------------------
    def params(self, outputs: list[tuple[str, np.dtype, int]]) -> str:
        parts = [f"{n}: Buffer[{CAST_NAMES[t]}, {nd}]" for n, t, nd in outputs]
        parts += [f"b{i}: Buffer[{CAST_NAMES[t]}, {nd}]" for i, (_, t, nd) in enumerate(self.buffers)]
        parts += [f"s{i}: {CAST_NAMES[t]}" for i, (_, t) in enumerate(self.scalars)]
        parts += [f"p{i}: int64" for i in range(len(self.ints))]
        return ", ".join(parts)

    def arguments(self) -> list[Any]:
        return ([b for b, _, _ in self.buffers] + [v for v, _ in self.scalars] + list(self.ints))


def _c_strides(shape: tuple[int, ...]) -> list[int]:
    """C-order strides of ``shape``, in elements."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def strided_subscript(prog: Program, base_shape: tuple[int, ...], index: tuple[tuple, ...],
                      shape: tuple[int, ...]) -> tuple[str, tuple]:
    """(the flat subscript into a base of ``base_shape`` for the view ``index`` of ``shape`` at the
    program's current index, the structural pattern): the start and the per-dimension steps become
    parameters, so views of one form share a kernel."""
    strides = _c_strides(base_shape)
    offset, steps = 0, {}
    for d, entry in enumerate(index):
        if entry[0] == "fix":
            offset += entry[1] * strides[d]
            continue
        _, vdim, start, step = entry
        offset += start * strides[d]
        steps[vdim] = steps.get(vdim, 0) + step * strides[d]
    terms, pattern = [prog._param(offset)], []
    for vdim in sorted(steps):
        idx = prog._index_of(vdim, len(shape), shape[vdim])
        if idx is None or shape[vdim] == 1:
            continue  # broadcast (or a single position): the start only
        terms.append(f"{idx} * {prog._param(steps[vdim])}")
        pattern.append(prog.index.index(idx))
    return " + ".join(terms), tuple(pattern)


#: generated kernels by structural key, least recently used first (bounded: a program that makes
#: endless distinct expressions must not grow without limit; evicted ones rebuild from the disk cache)
_KERNELS: OrderedDict[tuple, tuple[Kernel, str, str]] = OrderedDict()
MAX_KERNELS = 2048
STATS = {"kernels_generated": 0, "launches": 0, "values_written": 0}


_RECORDING: list[list[tuple]] = []


@contextmanager
def recording() -> Iterator[list[tuple]]:
    """Collects the structural keys of the kernels used inside the block (``kernels(keys)`` gives them)."""
    keys: list[tuple] = []
    _RECORDING.append(keys)
    try:
        yield keys
    finally:
        _RECORDING.remove(keys)


def kernels(keys: list[tuple]) -> list[Kernel]:
    return [_KERNELS[k][0] for k in dict.fromkeys(keys) if k in _KERNELS]


#: (fastmath, contract) for the kernels compiled now. numpy's arithmetic (no contraction) unless
#: ``@dc.fuse(fastmath=..., contract=...)`` is tracing its function (``math_mode``); a context
#: variable, so other threads' expressions keep the default.
_MATH_MODE: ContextVar[tuple[bool, bool]] = ContextVar("dotcompute_expr_math_mode", default=(False, False))


@contextmanager
def math_mode(fastmath: bool, contract: bool) -> Iterator[None]:
    """Kernels compiled inside the block get ``@dc.kernel``'s ``fastmath`` and ``contract`` options."""
    token = _MATH_MODE.set((fastmath, contract))
    try:
        yield
    finally:
        _MATH_MODE.reset(token)


def compile_kernel(key: tuple, prefix: str,
                   source_lines: list[str] | Callable[[], list[str]]) -> tuple[Kernel, str]:
    """The kernel for structural ``key``: from the in-memory table, or made from ``source_lines``
    (the function body after a ``def {name}(...)`` header line at index 0, with ``{name}`` unfilled;
    or a function returning them, called only when ``key`` is not in the table)."""
    fastmath, contract = _MATH_MODE.get()
    if fastmath or contract:  # another build of the same structure: its own kernel and cache entry
        key = (*key, ("math", fastmath, contract))
    for seen in _RECORDING:
        seen.append(key)
    hit = _KERNELS.get(key)
    if hit is not None:
        _KERNELS.move_to_end(key)
        return hit[0], hit[1]
    if callable(source_lines):
        source_lines = source_lines()
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
    name = f"{prefix}_{digest}"
    text = "\n".join(source_lines).replace("{name}", name) + "\n"
    filename = f"<dotcompute expression {name}>"
    # the frontend reads a kernel's source through linecache, like a function defined in a file
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = namespace()
    exec(compile(text, filename, "exec"), ns)  # noqa: S102 -- our own generated kernel source
    kernel = Kernel(ns[name], name=name, fastmath=fastmath, contract=contract)
    STATS["kernels_generated"] += 1
    _KERNELS[key] = (kernel, text, filename)
    while len(_KERNELS) > MAX_KERNELS:
        _, (_, _, old) = _KERNELS.popitem(last=False)
        linecache.cache.pop(old, None)
    return kernel, text


def launch(acc: Any, kernel: Kernel, global_size: tuple[int, ...], *args: Any) -> None:
    """Launches a generated kernel, bypassing dc.launch's hook (which would evaluate pending
    expressions that read our own operands: they are not being written): on the native fast path
    once the kernel has one here (runtime/fast_launch.py: ~10 us of Python layers fewer per
    evaluation), else through its launch entry."""
    size = tuple(int(g) for g in global_size)
    if _accelerator_module.inherited_by_fork or not fast_attempt(acc, kernel, size, args, hooks=False):
        kernel._dc_launch(acc, size, None, args, acc._capture_stream)
    STATS["launches"] += 1


__all__ = ["Program", "strided_subscript", "compile_kernel", "recording", "kernels", "STATS", "CAST_NAMES",
           "namespace", "launch"]
