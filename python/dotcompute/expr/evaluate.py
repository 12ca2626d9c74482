"""Evaluating expressions: one generated kernel per evaluation, launched on the accelerator's stream.

``run(roots)`` computes pending LazyBuffers of one shape in ONE kernel. Pending values inside
the expression that the program still holds elsewhere (a variable, another pending
expression) are written out by the same kernel, so a value used twice is computed once and
nothing runs twice. ``store(target, value)`` writes an expression into a buffer or a view
(in-place operators, ``b[i:j] = v``).
"""

from __future__ import annotations

import math
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import Buffer
from .codegen import STATS, Program, compile_kernel, launch, strided_subscript
from .lazy import _NATIVE, EVALUATE, PENDING, LazyBuffer, Scalar, alias_root
from .operands import accelerator_of, operand
from .types import EXPR_DTYPES
from .views import launch_argument


def _index_vars(ndim: int) -> list[str]:
    return [f"i{d}" for d in range(ndim)]


#: kernels index 1 to 3 dimensions (work-items and buffer parameters); a result of more runs as a
#: 1-d launch over its flat index, with every operand read by strides (codegen.Program's strided mode)
KERNEL_DIMS = 3


def _header(prog: Program, outputs: list[tuple[str, np.dtype, int]]) -> list[str]:
    lines = ["def {name}(" + prog.params(outputs) + "):"]
    for d, v in enumerate(prog.index):
        lines.append(f"    {v} = gid({d})")
    return lines


def _flat_kernel(prog: Program, outputs: list[tuple[str, np.dtype, int]], total: str, extents: list[str]
                 ) -> list[str]:
    """The header and guard of a 1-d launch over an N-d result: ``g`` is the flat index (C order),
    ``i0..`` the index per dimension, taken apart from it last dimension first."""
    lines = ["def {name}(" + prog.params(outputs) + "):", "    g = gid(0)", f"    if g < {total}:",
             "        r = g"]
    for d in range(len(prog.index) - 1, 0, -1):
        lines += [f"        {prog.index[d]} = r % {extents[d]}", f"        r = r // {extents[d]}"]
    if prog.index:
        lines.append(f"        {prog.index[0]} = r")
    return lines


def flat_view(buf: Buffer) -> Buffer:
    """``buf``'s memory as a 1-d buffer (a native view: launches write through it)."""
    return Buffer._wrap(buf._native.view(0, (buf.size,)), buf.accelerator)


def _pending_inside(root: LazyBuffer) -> tuple[dict[int, LazyBuffer], dict[int, int]]:
    """The pending values below ``root`` and how many operand slots of the graph refer to each."""
    seen: dict[int, LazyBuffer] = {}
    parents: dict[int, int] = {}
    stack = [root]
    while stack:
        for a in stack.pop()._args:
            if type(a) is LazyBuffer and a._op is not None:
                parents[id(a)] = parents.get(id(a), 0) + 1
                if id(a) not in seen:
                    seen[id(a)] = a
                    stack.append(a)
    return seen, parents


def held_intermediates(root: LazyBuffer) -> list[LazyBuffer]:
    """Pending values inside ``root``'s graph, of ``root``'s shape, referenced from outside it
    (a variable, another pending expression): evaluating ``root`` writes them out too."""
    seen, parents = _pending_inside(root)
    out = []
    for key in list(seen):
        # references: getrefcount's argument, `seen`, and one per operand slot of the graph
        if seen[key]._shape == root._shape and sys.getrefcount(seen[key]) - 2 - parents[key] > 0:
            out.append(seen[key])
    return out


def plan_elementwise(roots: list[LazyBuffer], extras: bool = True
                     ) -> tuple[tuple, Callable[[], list[str]], list[LazyBuffer], Program]:
    """(structural key, a function giving the kernel's source lines, the values it writes, the
    program) for evaluating ``roots`` (pending, one shape) and, with ``extras``, the held
    intermediates of that shape. The lines are written only when compile_kernel does not know the
    key yet: the program's walk gives the key and the arguments, which every evaluation needs."""
    shape = roots[0].shape
    results: list[LazyBuffer] = list(roots)
    if extras:
        for r in roots:
            results += [h for h in held_intermediates(r) if all(h is not q for q in results)]
    flat = len(shape) > KERNEL_DIMS
    prog = Program(shape, _index_vars(len(shape)), strided=flat, flat_var="g" if flat else None)
    for r in roots:
        prog.value(r)
    var_of = [prog.memo[id(r)] for r in results]
    ids = list(prog.memo)
    outputs = [(f"o{k}", r.dtype, 1 if flat else max(1, len(shape))) for k, r in enumerate(results)]
    first_extent = len(prog.ints)
    prog.ints.extend(shape)
    if flat:
        prog.ints.append(math.prod(shape))

    def lines() -> list[str]:
        if flat:
            text = _flat_kernel(prog, outputs, f"p{first_extent + len(shape)}",
                                [f"p{first_extent + d}" for d in range(len(shape))])
            sub = "g"
        else:
            text = _header(prog, outputs)
            guard = [f"{v} < p{first_extent + d}" for d, v in enumerate(prog.index)]
            text.append("    if " + (" and ".join(guard) if guard else "True") + ":")
            sub = ", ".join(prog.index) if prog.index else "0"
        text += [f"        {ln}" for ln in prog.lines]
        for (name, dtype, _), var in zip(outputs, var_of, strict=True):
            text.append(f"        {name}[{sub}] = {prog.convert(var, dtype)}")
        return text

    key = ("ew", len(shape), flat, tuple(r.dtype.str for r in results), tuple(prog.key),
           tuple(ids.index(id(r)) for r in results))
    return key, lines, results, prog


#: quick key -> a planned program's key, for expressions whose walk :func:`quick_walk` can repeat
#: without writing code: evaluating ``a + b`` planned the whole program (its lines formatted, its
#: structure keyed) every time, 40-50 us of the ~140 a 16-element ``(a + b).numpy()`` took.
_QUICK: dict[tuple, tuple] = {}
_QUICK_MAX = 1024


def quick_walk(root: LazyBuffer) -> tuple[tuple, list[Any], list[Any]] | None:
    """(a key, the buffer arguments, the scalar values) of ``root``'s program when every operand
    is an operation, a plain or evaluated buffer, a Scalar or a 0-d value, and the result has at most
    KERNEL_DIMS dimensions; None otherwise (views, strided programs: plan_elementwise alone).

    The walk is Program.value's: depth first, operands in order, each node once (by identity; a node
    seen again is a reference to its first visit), so the buffers and scalars come in the order the
    program takes them. The key holds all that Program reads to write its code -- each node's
    kind, operation, operand and result dtypes and extra, each buffer's dtype and shape, the sharing
    -- so two expressions with one key have one program. Values (buffers, numbers) are arguments."""
    shape = root._shape
    if len(shape) > KERNEL_DIMS:
        return None
    tokens: list[Any] = [shape, root._dtype]
    buffers: list[Any] = []
    scalars: list[Any] = []
    seen: dict[int, int] = {}
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        at = seen.get(id(node))
        if at is not None:
            tokens.append(at)
            continue
        seen[id(node)] = len(seen)
        if type(node) is Scalar:
            scalars.append(node.value)
            tokens.append(("s", node.dtype))
        elif type(node) is LazyBuffer and node._op is not None:
            tokens.append((node._op, node._extra, node._loop, node._dtype, len(node._args)))
            stack.extend(reversed(node._args))  # popped first to last: the operands in order
        elif type(node) is LazyBuffer and (node._view is not None or node._backing is not None):
            if node._view is not None:
                return None
            buffers.append(node._backing)
            tokens.append(("z", node._dtype))
        elif isinstance(node, Buffer):
            buffers.append(node)
            tokens.append(("b", node.dtype, node.shape))
        else:
            return None
    key = tuple(tokens)
    try:
        hash(key)
    except TypeError:  # an operation's extra that cannot be a key
        return None
    return key, buffers, scalars


def file_quick(quick_key: tuple, key: tuple, planned: list[Any], quick: list[Any]) -> None:
    """Files ``key`` (a planned program's) under ``quick_key`` when the program's arguments are the
    quick walk's, object for object (extents by value): then the walk's arguments can stand in for
    the program's. Otherwise the expression is simply planned each time."""
    if len(planned) == len(quick) and all(a is b or (type(a) is int and a == b)
                                          for a, b in zip(planned, quick, strict=True)):
        if len(_QUICK) >= _QUICK_MAX:
            _QUICK.clear()
        _QUICK[quick_key] = key


def filed_plan(quick_key: tuple) -> tuple | None:
    """The planned program's key filed under ``quick_key`` (:func:`file_quick`), or None."""
    return _QUICK.get(quick_key)


def outs_spec(values: list[LazyBuffer]) -> tuple[tuple[tuple[int, ...], np.dtype], ...]:
    return tuple((v.shape, v.dtype) for v in values)


# one evaluation at a time: two threads asking for the same pending value must not both run it
_LOCK = EVALUATION_LOCK = threading.RLock()


#: pending expressions whose evaluation raised (e.g. a kernel the device cannot build): the error
#: reached whoever asked, so synchronize() skips them instead of raising it again at every later
#: call and leaving the device unusable; reading one, or writing one of its inputs, still runs it
#: (and raises again), so its value is never computed from changed inputs
#: (by identity: a Buffer's == is elementwise, so no WeakSet)
_REPORTED: dict[int, weakref.ref] = {}


def _reported(roots: list[LazyBuffer]) -> None:
    for r in roots:
        key = id(r)
        _REPORTED[key] = weakref.ref(r, lambda _r, key=key: _REPORTED.pop(key, None))


def run(roots: list[LazyBuffer], extras: bool = True, record: list | None = None) -> None:
    """Evaluates ``roots`` (pending values of one shape on one accelerator, and the held
    intermediates of that shape) with ONE kernel. ``record``: receives ``(kernel, global size,
    outputs, arguments)`` of the launch (``@dc.fuse`` replays it)."""
    with _LOCK:
        try:
            _run(roots, extras, record)
        except Exception:
            _reported(roots)  # raised here: a later synchronize does not raise it again
            raise


def _run(roots: list[LazyBuffer], extras: bool, record: list | None = None) -> None:
    roots = [r for r in roots if r._op is not None]
    if not roots:
        return
    acc = roots[0].accelerator
    shape = roots[0].shape
    if 0 in shape:
        for r in roots:
            r._set_result(acc.empty(shape, r.dtype))
        if record is not None:
            record.append((None, shape, outs_spec(roots), ()))
        return
    quick = None
    if record is None and len(roots) == 1 and not (extras and held_intermediates(roots[0])):
        quick = quick_walk(roots[0])
        known = filed_plan(("ew", quick[0])) if quick is not None else None
        if known is not None:
            # a program planned before: its kernel and these arguments (the program's walk order)
            kernel, _ = compile_kernel(known, "dc_expr", lambda: plan_elementwise(roots, False)[1]())
            out = acc.empty(shape if shape else (1,), roots[0].dtype)
            launch(acc, kernel, shape if shape else (1,), out, *quick[1], *quick[2], *shape)
            STATS["values_written"] += 1
            roots[0]._set_result(out)
            return
    key, lines, results, prog = plan_elementwise(roots, extras)
    kernel, _ = compile_kernel(key, "dc_expr", lines)
    if quick is not None and not prog.strided and len(results) == 1:
        file_quick(("ew", quick[0]), key, prog.arguments(), [*quick[1], *quick[2], *shape])
    outs = [acc.empty(shape if shape else (1,), r.dtype) for r in results]
    if prog.strided:
        # a 1-d launch writing the results' flat memory; not recorded for @dc.fuse's replay, whose
        # argument slots are the caller's buffers, not the flat views of them passed here
        launch(acc, kernel, (outs[0].size,), *(flat_view(o) for o in outs), *prog.arguments())
    else:
        launch(acc, kernel, shape if shape else (1,), *outs, *prog.arguments())
    if record is not None and not prog.strided:
        record.append((kernel, shape, outs_spec(results), tuple(prog.arguments())))
    STATS["values_written"] += len(outs)
    for r, o in zip(results, outs, strict=True):
        r._set_result(o)


def _writes_through(target: Buffer | LazyBuffer) -> tuple[Buffer, tuple[tuple, ...], tuple[int, ...]]:
    """(the buffer that owns the memory, the view index over it, the target's shape)."""
    if type(target) is LazyBuffer and target._view is not None:
        return target._view.base, target._view.index, target.shape
    base = concrete(target)
    index = tuple(("map", d, 0, 1) for d in range(base.ndim))
    return base, index, base.shape


def concrete(buf: Buffer) -> Buffer:
    """A buffer with memory of its own (pending expressions and views are evaluated)."""
    if type(buf) is LazyBuffer:
        if buf._op is not None:
            run([buf])
        if buf._view is not None:
            return copy_view(buf)
        if buf._backing is not None:
            buf._native  # noqa: B018 -- materialises the 0-d buffer
    return buf


def _reads(node: Any, base: Buffer, same: tuple | None) -> bool:
    """Whether ``node`` reads ``base`` other than elementwise through the view index ``same``
    (a reshaped alias of the same memory always counts: its elements lie elsewhere)."""
    root = alias_root(base)
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen or isinstance(n, Scalar):
            continue
        seen.add(id(n))
        if type(n) is LazyBuffer:
            if n._op is not None:
                stack.extend(n._args)
                continue
            if n._view is not None:
                if n._view.base is base and n._view.index != same:
                    return True
                if n._view.base is not base and alias_root(n._view.base) is root:
                    return True
                continue
        if n is base and same != tuple(("map", d, 0, 1) for d in range(base.ndim)):
            return True
        if n is not base and isinstance(n, Buffer) and alias_root(n) is root:
            return True
    return False


def store(target: Buffer, value: Any, casting: str = "unsafe") -> None:
    """Writes ``value`` (an expression, Buffer or Scalar) into ``target`` (a buffer or a view)."""
    with _LOCK:
        _store(target, value, casting)


def _kernel_writes(buf: Buffer) -> bool:
    """Whether stores and view copies of ``buf`` are generated kernels: every dtype the generator
    spells, except complex in host memory (cpu:0, Metal), which numpy writes in place as before."""
    if buf.dtype.kind == "c":
        return buf.dtype in EXPR_DTYPES and not buf.accelerator.host_visible_memory
    return buf.dtype in EXPR_DTYPES


def host_index(index: tuple[tuple, ...], shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A view index as a numpy index into the base array (integer arrays, one per mapped base
    dimension, shaped to broadcast into the view's shape)."""
    out: list[Any] = []
    for entry in index:
        if entry[0] == "fix":
            out.append(entry[1])
            continue
        _, vdim, start, step = entry
        extent = start + step * np.arange(shape[vdim], dtype=np.int64)
        out.append(extent.reshape([-1 if d == vdim else 1 for d in range(len(shape))]))
    return tuple(out)


def _store_on_host(base: Buffer, index: tuple[tuple, ...], shape: tuple[int, ...], value: Any,
                   casting: str) -> None:
    """A write into a buffer of a dtype the generator cannot spell (complex): numpy does it on a
    host copy, which is then uploaded (views and assignments of complex buffers must still work)."""
    if isinstance(value, Buffer):
        value = value.numpy()
    arr = np.asarray(value)
    if casting == "same_kind" and not np.can_cast(arr.dtype, base.dtype, "same_kind"):
        raise TypeError(f"cannot cast the result from {arr.dtype} to {base.dtype} in place (numpy's same_kind rule)")
    try:
        ok = np.broadcast_shapes(arr.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"could not broadcast input of shape {arr.shape} into shape {shape}")
    if 0 in shape:
        return
    before_write(base)
    host = base.numpy()
    host[host_index(index, shape)] = arr
    base.copy_from(host)


def _store_zero_d(base: Buffer, value: Any) -> None:
    """``s[...] = v`` / ``s += v`` on a 0-d buffer (a reduction's result): kernels have no 0-d
    buffers (the generated store would index nothing), so the one element goes through the host."""
    host = np.asarray(value.value if isinstance(value, Scalar) else value.numpy()).astype(base.dtype).reshape(())
    if type(base) is LazyBuffer and base._backing is not None:
        # a 0-d result lives in a one-element buffer that expressions read: write that, and drop
        # the 0-d copy made from it (it is made again from the new value when asked for)
        base._backing.copy_from(host.reshape(1))
        try:
            _NATIVE.__delete__(base)
        except AttributeError:
            pass
        return
    base.copy_from(host)


def _store(target: Buffer, value: Any, casting: str) -> None:
    base, index, shape = _writes_through(target)
    if isinstance(value, Buffer):
        accelerator_of(base, value)  # a ValueError naming both devices, not a kernel's argument error
    if not _kernel_writes(base):
        _store_on_host(base, index, shape, value, casting)
        return
    value = operand(value, base.accelerator, base.dtype if casting == "unsafe" else None)
    if value is NotImplemented:
        raise TypeError(f"cannot assign {type(value).__name__} to a buffer")
    vshape = value.shape
    try:
        ok = np.broadcast_shapes(vshape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"could not broadcast input of shape {vshape} into shape {shape}")
    if casting == "same_kind" and not np.can_cast(value.dtype, base.dtype, "same_kind"):
        raise TypeError(f"cannot cast the result from {value.dtype} to {base.dtype} in place "
                        f"(numpy's same_kind rule); write b = (b op x).astype(...) instead")
    if 0 in shape:
        return
    before_write(base, exclude=value)
    if base.ndim == 0:
        _store_zero_d(base, value)
        return
    if _reads(value, base, index):
        # the expression reads the memory it writes elsewhere than element by element: compute first
        copy = LazyBuffer.pending("cast", (value,), (value.dtype,), value.dtype, value.shape, base.accelerator)
        run([copy], extras=False)
        value = copy
    nd = len(shape)
    if nd > KERNEL_DIMS or base.ndim > KERNEL_DIMS:
        _store_strided(base, index, shape, value)
        return
    prog = Program(shape, _index_vars(nd))
    var = prog.value(value)
    for n in shape:
        prog.ints.append(n)
    first_extent = len(prog.ints) - nd
    subs, pattern = [], []
    for entry in index:
        start = f"p{len(prog.ints)}"
        prog.ints.append(entry[1] if entry[0] == "fix" else entry[2])
        if entry[0] == "fix":
            subs.append(start)
            pattern.append("f")
        elif entry[3] == 1:
            subs.append(f"{start} + {prog.index[entry[1]]}")
            pattern.append(("i", entry[1]))
        else:
            stride = f"p{len(prog.ints)}"
            prog.ints.append(entry[3])
            subs.append(f"{start} + {stride} * {prog.index[entry[1]]}")
            pattern.append(("s", entry[1]))
    lines = _header(prog, [("o0", base.dtype, base.ndim)])
    guard = [f"{v} < p{first_extent + d}" for d, v in enumerate(prog.index)]
    lines.append("    if " + (" and ".join(guard) if guard else "True") + ":")
    lines += [f"        {ln}" for ln in prog.lines]
    lines.append(f"        o0[{', '.join(subs)}] = {prog.convert(var, base.dtype)}")
    key = ("store", nd, base.dtype.str, base.ndim, tuple(pattern), tuple(prog.key))
    kernel, _ = compile_kernel(key, "dc_store", lines)
    launch(base.accelerator, kernel, shape if shape else (1,), base, *prog.arguments())


def _store_strided(base: Buffer, index: tuple[tuple, ...], shape: tuple[int, ...], value: Any) -> None:
    """The store kernel for a target of more dimensions than kernels index (or a view of such a base):
    the base's 1-d memory written at the view's strided subscript; a 1-d launch over the target's
    flat index when it has more than 3 dimensions itself."""
    nd = len(shape)
    flat = nd > KERNEL_DIMS
    prog = Program(shape, _index_vars(nd), strided=True, flat_var="g" if flat else None)
    var = prog.value(value)
    subscript, pattern = strided_subscript(prog, base.shape, index, shape)
    first_extent = len(prog.ints)
    prog.ints.extend(shape)
    outputs = [("o0", base.dtype, 1)]
    if flat:
        prog.ints.append(int(np.prod(shape, dtype=np.int64)))
        lines = _flat_kernel(prog, outputs, f"p{first_extent + nd}", [f"p{first_extent + d}" for d in range(nd)])
        # the value's lines may compute the flat index; the subscript's terms read only i0..
    else:
        lines = _header(prog, outputs)
        guard = [f"{v} < p{first_extent + d}" for d, v in enumerate(prog.index)]
        lines.append("    if " + (" and ".join(guard) if guard else "True") + ":")
    lines += [f"        {ln}" for ln in prog.lines]
    lines.append(f"        o0[{subscript}] = {prog.convert(var, base.dtype)}")
    key = ("store_nd", nd, flat, base.dtype.str, base.ndim, pattern, tuple(prog.key))
    kernel, _ = compile_kernel(key, "dc_store", lines)
    gsize = (int(np.prod(shape, dtype=np.int64)),) if flat else (shape if shape else (1,))
    launch(base.accelerator, kernel, gsize, flat_view(base), *prog.arguments())


def copy_view(view: LazyBuffer) -> Buffer:
    """A new buffer holding a view's elements as they are now."""
    acc = view.accelerator
    if not _kernel_writes(view):
        # complex in host memory: numpy picks the elements from a host copy
        host = view._view.base.numpy()
        return acc.asarray(np.asarray(host[host_index(view._view.index, view.shape)], order="C"))
    out = acc.empty(view.shape, view.dtype)
    if view.size:
        store(out, view)
    return out


def before_write(buf: Buffer, exclude: Any = None) -> None:
    """Evaluates every pending expression that reads ``buf`` (it is about to change)."""
    if not PENDING:
        return
    for p in list(PENDING):
        if p is not exclude and p._op is not None and _reads_at_all(p, buf):
            run([p])


def _reads_at_all(node: LazyBuffer, buf: Buffer) -> bool:
    """Whether ``node`` reads ``buf``'s memory: ``buf``, a view of it, or a reshaped alias of the
    same root (docs/views.md)."""
    root = alias_root(buf)
    stack, seen = list(node._args), set()
    while stack:
        n = stack.pop()
        if id(n) in seen or isinstance(n, Scalar):
            continue
        seen.add(id(n))
        if n is buf:
            return True
        if type(n) is LazyBuffer:
            if n._op is not None:
                stack.extend(n._args)
            elif n._view is not None:
                if alias_root(n._view.base) is root:
                    return True
            elif alias_root(n) is root:
                return True
        elif n is root:
            return True
    return False


_PENDING_REFS = PENDING._refs  # the registry's dict: an empty check without a method call


def before_launch(kernel: Any, args: tuple[Any, ...]) -> None:
    """A kernel may write any buffer it is given: pending readers run first; lazy arguments run.

    A view is passed as its base's memory (expr/views.py: a region of the same allocation, so
    writes land in the base); a strided view the kernel only reads is passed as a copy of its
    elements, one the kernel may write is refused (its writes would be lost)."""
    if not _PENDING_REFS:  # the common case, kept cheap: launches are benchmarked in microseconds
        for a in args:
            if type(a) is LazyBuffer:
                break
        else:
            return
    pinned: dict[int, tuple[LazyBuffer, Buffer]] = {}
    for i, a in enumerate(args):
        if isinstance(a, Buffer):
            if type(a) is LazyBuffer and a._op is not None:
                run([a])
            elif type(a) is LazyBuffer and a._view is not None:
                passed = launch_argument(kernel, args, i, a)  # raises for a view it cannot pass
                before_write(a._view.base)
                if id(a) not in pinned:
                    pinned[id(a)] = (a, passed if passed is not None else copy_view(a))
            elif PENDING:
                before_write(a)
    # The native launch takes only a pointer to each argument's native buffer: what a view passes
    # (its native view, or its copy) must outlive the packing of the launch. One per view (a view
    # passed twice is passed once), held by this thread until its next launch (other threads'
    # launches hold their own).
    _PINNED.views = pinned


_PINNED = threading.local()


def pinned_copy(view: LazyBuffer) -> Buffer | None:
    """What the launch this thread is packing passes for ``view`` (its memory or a copy), if any."""
    entry = getattr(_PINNED, "views", {}).get(id(view))
    return entry[1] if entry is not None and entry[0] is view else None


def evaluate_all(accelerator: Any = None) -> None:
    """Runs every pending expression (on ``accelerator`` only, when given)."""
    for p in list(PENDING):
        if p._op is not None and (accelerator is None or p.accelerator is accelerator) and id(p) not in _REPORTED:
            run([p])


EVALUATE["run"] = run
EVALUATE["copy"] = copy_view
EVALUATE["store"] = store
EVALUATE["pinned"] = pinned_copy

__all__ = ["EVALUATION_LOCK", "run", "store", "concrete", "flat_view", "copy_view", "before_write", "before_launch",
           "evaluate_all", "plan_elementwise", "held_intermediates", "host_index"]
