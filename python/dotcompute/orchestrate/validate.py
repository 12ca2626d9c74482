"""``dc.validate``: run a kernel on a device and on a reference, compare every written output.

Works on copies: the arguments are never changed (numpy arrays are copied, buffers are read back
with ``.numpy()``). Each run starts from fresh copies, so in-place kernels (``x[i] += 1``) are
compared fairly. The device runs twice: ``deterministic`` says whether both runs agreed bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..launch import launch_on
from ..runtime import Accelerator, Buffer, RawKernel, accelerator


@dataclass
class OutputReport:
    """The comparison of one written argument."""

    name: str
    max_abs_error: float
    max_rel_error: float
    mismatches: int
    first_mismatch: tuple[int | tuple[int, ...], Any, Any] | None  # (index, got, expected)
    deterministic: bool
    size: int

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


@dataclass
class ValidationReport:
    """``ok`` when every output matched the reference; ``bool(report)`` is ``report.ok``."""

    kernel: str
    accelerator: str
    reference: str
    rtol: float
    atol: float
    outputs: dict[str, OutputReport] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs.values())

    @property
    def deterministic(self) -> bool:
        return all(o.deterministic for o in self.outputs.values())

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        head = (f"validate {self.kernel} on {self.accelerator} against {self.reference} "
                f"(rtol={self.rtol:g}, atol={self.atol:g}): {'OK' if self.ok else 'MISMATCH'}")
        lines = [head, f"  {'output':<16} {'max abs err':>12} {'max rel err':>12} {'mismatches':>14} "
                       f"{'deterministic':>14}  first mismatch (index, got, expected)"]
        for o in self.outputs.values():
            first = "-" if o.first_mismatch is None else f"{o.first_mismatch[0]}, {o.first_mismatch[1]!r}, " \
                                                          f"{o.first_mismatch[2]!r}"
            lines.append(f"  {o.name:<16} {o.max_abs_error:>12.4g} {o.max_rel_error:>12.4g} "
                         f"{f'{o.mismatches}/{o.size}':>14} {str(o.deterministic):>14}  {first}")
        return "\n".join(lines)


def validate(kernel: Any, global_size: Any, *args: Any, accelerator: Any = None,
             reference: str | Accelerator | Callable[..., Any] = "cpu", rtol: float = 1e-5, atol: float = 1e-8,
             local_size: Any = None, outputs: Sequence[int | str] | None = None) -> ValidationReport:
    """Runs ``kernel`` on ``accelerator`` (default ``"auto"``) twice and on ``reference`` (an accelerator
    spec, or a callable that receives numpy copies of every argument and writes the expected outputs),
    and compares each written buffer argument. ``outputs`` (indices or parameter names) says which
    arguments are written; it is needed for a ``RawKernel`` and inferred for ``@dc.kernel``."""
    for value, what in ((rtol, "rtol"), (atol, "atol")):
        # NaN compares false with everything: a NaN tolerance made numpy.isclose warn and the report
        # say whatever the comparison happened to give
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not value >= 0:
            raise ValueError(f"{what} must be a number >= 0, got {value!r}")
    if not (isinstance(reference, (str, Accelerator)) or callable(reference)):
        raise TypeError(f"reference must be an accelerator spec or a callable, not {type(reference).__name__}")
    acc = _device(accelerator, args)
    names, written = _written(kernel, args, outputs)
    host = [a.numpy() if isinstance(a, Buffer) else (a.copy() if isinstance(a, np.ndarray) else a) for a in args]

    def run_on(device: Accelerator) -> list[Any]:
        fresh = _fresh(host)
        launch_on(device, kernel, global_size, tuple(fresh), local_size, None)
        device.synchronize()
        return fresh

    first = run_on(acc)
    second = run_on(acc)
    if callable(reference) and not isinstance(reference, (str, Accelerator)):
        expected = _fresh(host)
        ref_name = getattr(reference, "__name__", "callable")
        try:
            returned = reference(*expected)
        except Exception as e:
            if hasattr(e, "add_note"):  # Python 3.11+: say where it came from, keep the user's exception
                e.add_note(f"(raised by the reference callable {ref_name!r} of dc.validate)")
            raise
        if returned is not None:
            _take_returned(returned, expected, written, names, ref_name)
    else:
        ref_acc = _device(reference, args)
        expected = run_on(ref_acc)
        ref_name = ref_acc.id
    report = ValidationReport(getattr(kernel, "name", "?"), acc.id, ref_name, float(rtol), float(atol))
    for i in written:
        report.outputs[names[i]] = compare(names[i], np.asarray(first[i]), np.asarray(expected[i]), rtol, atol,
                                           deterministic=_same(first[i], second[i]))
    return report


def _take_returned(returned: Any, expected: list[Any], written: list[int], names: list[str], ref_name: str) -> None:
    """A reference that returns its outputs (``lambda a, x, y, out: a * x + y``) instead of writing them
    into its arguments: the returned values are the expected outputs, in the order of the written
    arguments. Ignoring them compared against untouched arrays and reported every element wrong."""
    values = list(returned) if isinstance(returned, (tuple, list)) and len(written) != 1 else [returned]
    if len(values) != len(written):
        raise TypeError(f"dc.validate: the reference callable {ref_name!r} returned {len(values)} value(s) but the "
                        f"kernel writes {len(written)} output(s) ({', '.join(names[i] for i in written)}); write "
                        f"the expected values into those arguments, or return one value per output")
    for i, value in zip(written, values, strict=True):
        target = expected[i]
        if not isinstance(target, np.ndarray):
            raise TypeError(f"dc.validate: output {names[i]!r} is not an array, so a returned value cannot "
                            f"stand for it")
        array = np.asarray(value)
        if array.shape != target.shape:
            raise ValueError(f"dc.validate: the reference callable {ref_name!r} returned shape {array.shape} for "
                             f"output {names[i]!r}, which has shape {target.shape}")
        target[...] = array


def compare(name: str, got: np.ndarray, expected: np.ndarray, rtol: float, atol: float,
            deterministic: bool = True) -> OutputReport:
    """Element-wise comparison (numpy's ``isclose`` rule; NaN equals NaN) of one output."""
    if got.shape != expected.shape:
        raise ValueError(f"validate: output {name!r} has shape {got.shape} but the reference wrote {expected.shape}")
    if got.dtype.kind == "b" or expected.dtype.kind == "b":
        close = got == expected
        diff = (got != expected).astype(np.float64)
        rel = diff
    else:
        close = np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
        g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        e = expected.astype(g.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.abs(g - e)
            rel = np.where(e != 0, diff / np.abs(e), np.where(diff == 0, 0.0, np.inf))
        nan_g = np.isnan(g) if g.dtype.kind in "fc" else np.zeros(g.shape, bool)
        nan_e = np.isnan(e) if e.dtype.kind in "fc" else np.zeros(e.shape, bool)
        both_nan = nan_g & nan_e
        # NaN on one side only is an error without a size: infinite, so that max_abs_error is never
        # 0 (nanmax skipped those elements) while mismatches counts them
        one_nan = nan_g ^ nan_e
        diff = np.where(both_nan, 0.0, np.where(one_nan, np.inf, diff))
        rel = np.where(both_nan, 0.0, np.where(one_nan, np.inf, rel))
    bad = np.argwhere(~close)
    first = None
    if len(bad):
        where = tuple(int(v) for v in bad[0])
        # 1-D outputs (the common case) report a plain int index, n-d ones a tuple
        index: int | tuple[int, ...] = where[0] if len(where) == 1 else where
        first = (index, got[where].item(), expected[where].item())
    return OutputReport(name=name, max_abs_error=float(np.nanmax(diff)) if diff.size else 0.0,
                        max_rel_error=float(np.nanmax(rel)) if rel.size else 0.0, mismatches=int(len(bad)),
                        first_mismatch=first, deterministic=deterministic, size=int(got.size))


def _device(spec: Any, args: tuple[Any, ...]) -> Accelerator:
    if spec is None:
        for a in args:
            if isinstance(a, Buffer):
                return a.accelerator
        return accelerator("auto")
    return accelerator(spec)


def _fresh(host: list[Any]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in host]


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _written(kernel: Any, args: tuple[Any, ...], outputs: Sequence[int | str] | None) -> tuple[list[str], list[int]]:
    """(parameter names, indices of the written buffer arguments)."""
    if isinstance(kernel, RawKernel):
        names = [f"arg{i}" for i in range(len(args))]
        if outputs is None:
            raise TypeError("validate(RawKernel, ...): say which arguments the kernel writes with outputs=[index, ...] "
                            "(a raw kernel's source does not declare it)")
    elif hasattr(kernel, "types_from_args") and hasattr(kernel, "specialize"):
        params = kernel.specialize(kernel.types_from_args(tuple(args))).module.kernel.params
        names = [p.py_name for p in params]
        if outputs is None:
            return names, [p.index for p in params if p.is_buffer and p.written]
    else:
        raise TypeError(f"validate needs a @dc.kernel or dc.RawKernel, not {type(kernel).__name__}")
    picked = []
    for o in outputs:
        i = names.index(o) if isinstance(o, str) and o in names else o
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(args):
            raise ValueError(f"outputs: {o!r} names no argument (arguments: {', '.join(names)})")
        if not isinstance(args[i], (np.ndarray, Buffer)):
            raise ValueError(f"outputs: argument {names[i]!r} is not a buffer or array")
        picked.append(i)
    return names, picked


__all__ = ["OutputReport", "ValidationReport", "compare", "validate"]
