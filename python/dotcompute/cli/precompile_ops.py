"""``dotcompute precompile --ops sum,argmax --dtype float32``: compile the kernels of array operations
ahead of time.

An operation compiles its kernels on first use, per accelerator and dtype: on PoCL each new program
costs 0.3-1.3 s of LLVM (bench/results/cold_compile.md). The kernels take every size as an argument,
so one call per size *class* compiles all an operation can use: each operation here is run on
synthetic inputs of a few sizes that between them take every branch of its dispatch (a row short
enough for one work-item, one work-group, several work-groups and a second pass, the lanes kernel of
CPU-type devices from ``LANES_MIN`` elements), and its results are read back, so every launch
(and PoCL's per-work-group-size build at a launch) has happened. The kernels land in the kernel cache
(and PoCL's cache inside it), so a later process starts warm.

On accelerators whose operations run through a vendor library or numpy (cpu:0's reductions, a host
copy on CPU-type OpenCL devices for sorts and matmul) nothing is compiled for them: the dispatch is
the same as in the program, so only what the program would compile is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

REDUCTIONS = ("sum", "prod", "min", "max", "mean", "argmin", "argmax")
#: elementwise operators, warmed as the expressions ``x op x`` and ``x op 2``; ``power`` also
#: ``x ** 0.5``: small constant exponents are their own kernels where they are specialised
ELEMENTWISE = ("add", "subtract", "multiply", "divide", "power")
OPERATIONS = REDUCTIONS + ("cumsum", "sort", "argsort", "matmul") + ELEMENTWISE
DEFAULT_DTYPES = ("float32",)


def parse_ops(spec: Iterable[str]) -> list[tuple[str, tuple[str, ...] | None]]:
    """``["sum,argmax:int64", "min"]`` → ``[("sum", None), ("argmax", ("int64",)), ("min", None)]``:
    names separated by commas, each with optional ``:dtype`` (``+`` separates several); ``all`` is
    every operation; ``#`` starts a comment. A ValueError names an unknown operation or dtype."""
    out: list[tuple[str, tuple[str, ...] | None]] = []
    for item in spec:
        for part in item.split("#", 1)[0].split(","):  # "#" starts a comment
            part = part.strip()
            if not part:
                continue
            name, _, dt = part.partition(":")
            name = name.strip()
            dtypes = tuple(d.strip() for d in dt.split("+") if d.strip()) or None
            for d in dtypes or ():
                try:
                    np.dtype(d)
                except TypeError as exc:
                    raise ValueError(f"--ops: {part!r}: unknown dtype {d!r}") from exc
            if name == "all":
                out.extend((n, dtypes) for n in OPERATIONS)
            elif name in OPERATIONS:
                out.append((name, dtypes))
            else:
                raise ValueError(f"--ops: unknown operation {name!r} (known: {', '.join(OPERATIONS)}, all)")
    return out


def read_ops_file(path: str) -> list[str]:
    """The lines of an operations file (``op[:dtype]`` per line or comma-separated; ``#`` comments)."""
    return Path(path).read_text().splitlines()


def _sizes(acc: Any) -> list[int]:
    from ..ops.reduce import LANES_MIN

    # 8: one work-item per row; 1000: one work-group; 100,000: several and a second pass
    sizes = [8, 1000, 100_000]
    if acc.type == "cpu":  # the lanes kernels of CPU-type devices and cpu:0's fast paths
        sizes.append(LANES_MIN + 3)
    return sizes


def _data(n: int, dtype: np.dtype) -> np.ndarray:
    rng = np.random.default_rng(n)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 100, n).astype(dtype)
    return rng.random(n).astype(dtype)


def _calls(dc: Any, name: str, acc: Any, dtype: np.dtype) -> list[Callable[[], Any]]:
    """The calls that warm ``name`` for ``dtype`` on ``acc``, each returning something to read back."""
    calls: list[Callable[[], Any]] = []
    if name in REDUCTIONS:
        fn = getattr(dc, name)
        for n in _sizes(acc):
            x = acc.asarray(_data(n, dtype))
            calls.append(lambda fn=fn, x=x: fn(x))
        m = acc.asarray(_data(64 * 9, dtype).reshape(64, 9))
        calls.append(lambda fn=fn, m=m: fn(m, axis=1))
        calls.append(lambda fn=fn, m=m: fn(m, axis=0))
    elif name == "cumsum":
        for n in _sizes(acc)[:3]:
            x = acc.asarray(_data(n, dtype))
            calls.append(lambda x=x: dc.cumsum(x))
    elif name in ("sort", "argsort"):
        fn = getattr(dc, name)
        for n in (8, 1000, 100_000):
            x = acc.asarray(_data(n, dtype))
            calls.append(lambda fn=fn, x=x: fn(x))
    elif name == "matmul":
        for n in (7, 64, 256):
            a = acc.asarray(_data(n * n, dtype).reshape(n, n))
            calls.append(lambda a=a: dc.matmul(a, a))
    else:
        op = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
              "divide": lambda a, b: a / b, "power": lambda a, b: a ** b}[name]
        # a small and a large grid: PoCL builds another work-group function for a launch beyond its
        # "small grid" width (a 16M-element x ** 2 after warming at 1,000 only: 0.35 s of LLVM)
        for n in (1000, 1 << 20):
            x = acc.asarray(_data(n, dtype) + (1 if dtype.kind in "iuf" else 0))
            calls.append(lambda op=op, x=x: op(x, x))
            calls.append(lambda op=op, x=x: op(x, 2))
            if name == "power" and dtype.kind == "f":
                calls.append(lambda x=x: x ** 0.5)
    return calls


def warm(ops: list[tuple[str, tuple[str, ...] | None]], accelerators: list[str] | None,
         dtypes: tuple[str, ...] | None = None) -> list[tuple[str, str, str, float, str]]:
    """Runs each operation for each dtype on each accelerator (default: every device); rows of
    (operation, dtype, accelerator id, seconds, error or "")."""
    import dotcompute as dc

    accs = [dc.accelerator(a) for a in accelerators] if accelerators else list(dc.devices())
    rows: list[tuple[str, str, str, float, str]] = []
    for acc in accs:
        for name, own in ops:
            for dt in own or dtypes or DEFAULT_DTYPES:
                dtype = np.dtype(dt)
                t0 = time.perf_counter()
                error = ""
                try:
                    for call in _calls(dc, name, acc, dtype):
                        np.asarray(call())  # reads the result back: every launch has run
                except Exception as exc:  # noqa: BLE001 -- reported per row, the others still warm
                    error = f"{type(exc).__name__}: {exc}"
                rows.append((name, dtype.name, acc.id, time.perf_counter() - t0, error))
    return rows


__all__ = ["DEFAULT_DTYPES", "ELEMENTWISE", "OPERATIONS", "REDUCTIONS", "parse_ops", "read_ops_file", "warm"]
