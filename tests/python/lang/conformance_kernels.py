"""The kernel-language conformance registry: one :class:`Case` per kernel, with its reference.

Importable on its own (no pytest at module level) so every backend's suite can reuse it:

    from conformance_kernels import CASES, build_args, verify, emit_source
    for case in CASES:
        args = build_args(case, seed=0)
        ...launch case.kernel with args...
        verify(case, inputs, results)          # AssertionError with details on a mismatch
        src = emit_source(case, "cuda")         # the kernel specialised for the case's args

Each case's ``reference(*args)`` receives copies of the arguments and writes the expected
values into its output arrays in place, so references read like the kernels they check.
Cases whose result depends on the order atomics ran in give a ``check(results, inputs)``
instead. The kernels here only use the public language of docs/design.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import dotcompute as dc

Args = list[Any]


@dataclass
class Case:
    """One conformance kernel with everything needed to run and check it."""

    id: str
    kernel: Any
    make_args: Callable[[np.random.Generator], Args]
    global_size: int | tuple[int, ...]
    local_size: int | tuple[int, ...] | None
    outputs: tuple[int, ...]
    reference: Callable[..., None] | None = None
    check: Callable[[Args, Args], None] | None = None
    rtol: float = 0.0
    atol: float = 0.0
    tags: frozenset[str] = field(default_factory=frozenset)

    def __repr__(self) -> str:
        return f"Case({self.id})"


CASES: list[Case] = []


def _add(id: str, kernel: Any, make_args: Callable[[np.random.Generator], Args],
         global_size: int | tuple[int, ...], outputs: Sequence[int], reference: Callable[..., None] | None = None,
         *, local_size: int | tuple[int, ...] | None = None, check: Callable[[Args, Args], None] | None = None,
         rtol: float = 0.0, atol: float = 0.0, tags: Sequence[str] = ()) -> None:
    if any(c.id == id for c in CASES):
        raise ValueError(f"duplicate conformance case id {id!r}")
    CASES.append(Case(id, kernel, make_args, global_size, local_size, tuple(outputs), reference, check,
                      rtol, atol, frozenset(tags)))


# ---------------------------------------------------------------------------------------------
# Helpers for users of the registry


def case_by_id(case_id: str) -> Case:
    for c in CASES:
        if c.id == case_id:
            return c
    raise KeyError(case_id)


def build_args(case: Case, seed: int = 0) -> Args:
    """The case's arguments (fresh numpy arrays and Python scalars) for ``seed``."""
    return case.make_args(np.random.default_rng(seed))


def copy_args(args: Args) -> Args:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def uses_float64(case: Case, args: Args | None = None) -> bool:
    """Whether the case needs fp64 (a float64 argument or the ``fp64`` tag): Metal has none."""
    if "fp64" in case.tags:
        return True
    args = build_args(case) if args is None else args
    return any(isinstance(a, np.ndarray) and a.dtype == np.float64 for a in args)


def runs_on_metal(case: Case) -> bool:
    """False for cases Metal cannot express by design (fp64, 64-bit atomics, erf...)."""
    return not uses_float64(case) and "no-metal" not in case.tags


def uses_barrier(case: Case) -> bool:
    return "barrier" in case.tags


def verify(case: Case, inputs: Args, results: Args) -> None:
    """Assert that ``results`` (the arguments after the launch) match the case's expectations.

    ``inputs`` are the arguments as they were before the launch (unmodified copies)."""
    if case.check is not None:
        case.check(results, inputs)
        return
    assert case.reference is not None, f"{case.id}: neither reference nor check"
    expected = copy_args(inputs)
    with np.errstate(all="ignore"):
        case.reference(*expected)
    for i in case.outputs:
        got = np.asarray(results[i])
        want = expected[i]
        assert got.shape == want.shape and got.dtype == want.dtype, (
            f"{case.id}: output {i} is {got.dtype}{got.shape}, expected {want.dtype}{want.shape}")
        if case.rtol or case.atol:
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol,
                                       err_msg=f"{case.id}: output arg {i}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{case.id}: output arg {i}")


def emit_source(case: Case, backend: str, args: Args | None = None) -> str:
    """The source the case's kernel generates for ``backend`` (specialised for its arguments,
    which matters for generic kernels), without running anything: what the CUDA, OpenCL and
    Metal suites compile."""
    args = build_args(case) if args is None else args
    return case.kernel.source(backend, *args)


def expand_args(args: Args) -> Args:
    """The expanded parameter list of docs/design.md ("Kernel parameter ABI"): each array is
    followed by its extents as int64; scalars stay as they are."""
    out: Args = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a)
            out.extend(np.int64(s) for s in a.shape)
        else:
            out.append(a)
    return out


# ---------------------------------------------------------------------------------------------
# Arithmetic with Python semantics

N = 200


def _ints(rng: np.random.Generator, lo: int, hi: int, n: int, dtype: Any) -> np.ndarray:
    return rng.integers(lo, hi, n).astype(dtype)


def _nonzero_ints(rng: np.random.Generator, lo: int, hi: int, n: int, dtype: Any) -> np.ndarray:
    v = rng.integers(lo, hi, n)
    v[v == 0] = 1
    return v.astype(dtype)


@dc.kernel
def saxpy(a: dc.float32, x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


def _saxpy_ref(a, x, y, out):
    out[:] = np.float32(a) * x + y


_add("saxpy", saxpy,
     lambda r: [2.5, r.standard_normal(N).astype(np.float32), r.standard_normal(N).astype(np.float32),
                np.zeros(N, np.float32)],
     N, [3], _saxpy_ref, rtol=1e-6, atol=1e-6)


@dc.kernel
def floordiv_mod(a: dc.Buffer, b: dc.Buffer, q: dc.Buffer, r: dc.Buffer):
    i = dc.global_id(0)
    if i < a.shape[0]:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def _floordiv_mod_ref(a, b, q, r):
    q[:] = np.floor_divide(a, b)
    r[:] = np.mod(a, b)


def _floordiv_args(dtype: Any) -> Callable[[np.random.Generator], Args]:
    def make(r: np.random.Generator) -> Args:
        if np.dtype(dtype).kind == "f":
            a = (r.integers(-40, 40, N) * 0.25).astype(dtype)
            b = (r.integers(1, 7, N) * 0.5 * r.choice([-1, 1], N)).astype(dtype)
        else:
            a = _ints(r, -60, 60, N, dtype)
            b = _nonzero_ints(r, -9, 9, N, dtype)
        return [a, b, np.zeros(N, dtype), np.zeros(N, dtype)]
    return make


for _dt in ("int32", "int64", "float32", "float64"):
    _add(f"floordiv_mod_{_dt}", floordiv_mod, _floordiv_args(_dt), N, [2, 3], _floordiv_mod_ref)


@dc.kernel
def int_div_by_zero(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]


def _int_div_by_zero_ref(a, b, out):
    # documented rule (docs/kernel-language.md): integer // and % by zero give 0
    for i in range(a.shape[0]):
        x, y = int(a[i]), int(b[i])
        out[i, 0] = x // y if y else 0
        out[i, 1] = x % y if y else 0


_add("int_div_by_zero", int_div_by_zero,
     lambda r: [_ints(r, -20, 20, 64, np.int32), _ints(r, -2, 3, 64, np.int32), np.full((64, 2), 7, np.int32)],
     64, [2], _int_div_by_zero_ref)


@dc.kernel
def true_div(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32], x: dc.Buffer[dc.float32],
             out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] / b[i]
        out[i, 1] = x[i] / 4
        out[i, 2] = 7 / b[i]


def _true_div_ref(a, b, x, out):
    out[:, 0] = a.astype(np.float64) / b
    out[:, 1] = x / np.float32(4)
    out[:, 2] = 7.0 / b.astype(np.float64)


_add("true_div", true_div,
     lambda r: [_ints(r, -100, 100, N, np.int32), _nonzero_ints(r, -9, 9, N, np.int32),
                r.standard_normal(N).astype(np.float32), np.zeros((N, 3), np.float32)],
     N, [3], _true_div_ref, rtol=1e-6, tags=["fp64"])  # int / int is float64 by the rules


@dc.kernel
def power(a: dc.Buffer[dc.int64], e: dc.Buffer[dc.int64], x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32],
          outi: dc.Buffer[dc.int64], outf: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        outi[i] = a[i] ** e[i]
        outf[i, 0] = x[i] ** y[i]
        outf[i, 1] = x[i] ** 2
        outf[i, 2] = x[i] ** 0.5
        outf[i, 3] = x[i] ** -1
        outf[i, 4] = x[i] ** dc.float32(e[i])  # float32 ** int64 would be float64 (NEP 50), not on Metal


def _power_ref(a, e, x, y, outi, outf):
    outi[:] = [int(p) ** int(q) for p, q in zip(a, e, strict=True)]
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    outf[:, 0] = xd ** yd
    outf[:, 1] = xd ** 2
    outf[:, 2] = xd ** 0.5
    outf[:, 3] = 1.0 / xd
    outf[:, 4] = xd ** e.astype(np.float64)


_add("power", power,
     lambda r: [_ints(r, -9, 10, N, np.int64), _ints(r, 0, 7, N, np.int64),
                r.uniform(0.5, 3.0, N).astype(np.float32), r.uniform(-2, 2, N).astype(np.float32),
                np.zeros(N, np.int64), np.zeros((N, 5), np.float32)],
     N, [4, 5], _power_ref, rtol=2e-5)


@dc.kernel
def int_pow_negative_exponent(a: dc.Buffer[dc.int32], e: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i] = a[i] ** e[i]


def _int_pow_neg_ref(a, e, out):
    # documented rule: an int base with a negative int exponent gives 1, +-1 or 0 (bases 1, -1, other)
    for i in range(a.shape[0]):
        b, n = int(a[i]), int(e[i])
        if n >= 0:
            out[i] = b ** n
        elif b == 1:
            out[i] = 1
        elif b == -1:
            out[i] = 1 if n % 2 == 0 else -1
        else:
            out[i] = 0


_add("int_pow_negative_exponent", int_pow_negative_exponent,
     lambda r: [r.choice(np.array([1, -1, 2, -3, 5], np.int32), 64), _ints(r, -4, 4, 64, np.int32),
                np.zeros(64, np.int32)],
     64, [2], _int_pow_neg_ref)


@dc.kernel
def min_max_abs(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32], x: dc.Buffer[dc.float32],
                y: dc.Buffer[dc.float32], oi: dc.Buffer[dc.int32, 2], of: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        oi[i, 0] = min(a[i], b[i])
        oi[i, 1] = max(a[i], b[i])
        oi[i, 2] = abs(a[i])
        oi[i, 3] = min(a[i], b[i], -3)
        oi[i, 4] = max(abs(b[i]), 5)
        of[i, 0] = min(x[i], y[i])
        of[i, 1] = max(x[i], y[i])
        of[i, 2] = abs(x[i])
        of[i, 3] = max(x[i], 0.0)
        of[i, 4] = min(x[i], y[i], 0.25)


def _min_max_abs_ref(a, b, x, y, oi, of):
    oi[:, 0] = np.minimum(a, b)
    oi[:, 1] = np.maximum(a, b)
    oi[:, 2] = np.abs(a)
    oi[:, 3] = np.minimum(np.minimum(a, b), -3)
    oi[:, 4] = np.maximum(np.abs(b), 5)
    of[:, 0] = np.minimum(x, y)
    of[:, 1] = np.maximum(x, y)
    of[:, 2] = np.abs(x)
    of[:, 3] = np.maximum(x, 0)
    of[:, 4] = np.minimum(np.minimum(x, y), np.float32(0.25))


_add("min_max_abs", min_max_abs,
     lambda r: [_ints(r, -50, 50, N, np.int32), _ints(r, -50, 50, N, np.int32),
                r.standard_normal(N).astype(np.float32), r.standard_normal(N).astype(np.float32),
                np.zeros((N, 5), np.int32), np.zeros((N, 5), np.float32)],
     N, [4, 5], _min_max_abs_ref)


@dc.kernel
def abs_wraps(a: dc.Buffer, out: dc.Buffer):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i] = abs(a[i])


def _abs_args(dtype: Any) -> Callable[[np.random.Generator], Args]:
    info = np.iinfo(dtype)

    def make(r: np.random.Generator) -> Args:
        a = np.array([info.min, info.min + 1, -1, 0, 1, info.max, -12345, 77], dtype)
        return [a, np.zeros_like(a)]
    return make


def _abs_wraps_ref(a, out):
    # documented rule: abs of the most negative int wraps to itself (two's complement), like numpy
    out[:] = np.abs(a)


_add("abs_int_min_int32", abs_wraps, _abs_args(np.int32), 8, [1], _abs_wraps_ref)
_add("abs_int_min_int64", abs_wraps, _abs_args(np.int64), 8, [1], _abs_wraps_ref)


@dc.kernel
def int32_wraparound(a: dc.Buffer[dc.int32], u: dc.Buffer[dc.uint32], oi: dc.Buffer[dc.int32, 2],
                     ou: dc.Buffer[dc.uint32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        oi[i, 0] = a[i] * 65536
        oi[i, 1] = a[i] + 2147483647
        oi[i, 2] = -a[i] - 2147483647
        ou[i, 0] = u[i] - 1000
        ou[i, 1] = u[i] * 3


def _wrap_ref(a, u, oi, ou):
    a64, u64 = a.astype(np.int64), u.astype(np.int64)
    oi[:, 0] = ((a64 * 65536 + 2**31) % 2**32 - 2**31).astype(np.int32)
    oi[:, 1] = ((a64 + 2147483647 + 2**31) % 2**32 - 2**31).astype(np.int32)
    oi[:, 2] = ((-a64 - 2147483647 + 2**31) % 2**32 - 2**31).astype(np.int32)
    ou[:, 0] = ((u64 - 1000) % 2**32).astype(np.uint32)
    ou[:, 1] = ((u64 * 3) % 2**32).astype(np.uint32)


_add("int_wraparound", int32_wraparound,
     lambda r: [_ints(r, -2**31, 2**31 - 1, 64, np.int32), r.integers(0, 2**32 - 1, 64, dtype=np.uint64)
                .astype(np.uint32), np.zeros((64, 3), np.int32), np.zeros((64, 2), np.uint32)],
     64, [2, 3], _wrap_ref)


@dc.kernel
def bitwise_ops(a: dc.Buffer[dc.int32], b: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] & b[i]
        out[i, 1] = a[i] | b[i]
        out[i, 2] = a[i] ^ b[i]
        out[i, 3] = ~a[i]
        out[i, 4] = a[i] << 3
        out[i, 5] = a[i] >> 2
        w = a[i]
        w <<= 2
        w |= 1
        w ^= 5
        w &= 0xFF
        w >>= 1
        out[i, 6] = w


def _bitwise_ref(a, b, out):
    for i in range(a.shape[0]):
        x, y = int(a[i]), int(b[i])
        w = ((((x << 2) | 1) ^ 5) & 0xFF) >> 1
        out[i] = [x & y, x | y, x ^ y, ~x, x << 3, x >> 2, w]


_add("bitwise_ops", bitwise_ops,
     lambda r: [_ints(r, -5000, 5000, 64, np.int32), _ints(r, -5000, 5000, 64, np.int32),
                np.zeros((64, 7), np.int32)],
     64, [2], _bitwise_ref)


@dc.kernel
def int64_large(a: dc.Buffer[dc.int64], out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] * 3 + 5000000000
        out[i, 1] = a[i] // 7
        out[i, 2] = a[i] % 1000003
        out[i, 3] = -a[i] // 4096


def _int64_large_ref(a, out):
    for i in range(a.shape[0]):
        x = int(a[i])
        out[i] = [x * 3 + 5000000000, x // 7, x % 1000003, -x // 4096]


_add("int64_large", int64_large,
     lambda r: [r.integers(-2**40, 2**40, 64).astype(np.int64), np.zeros((64, 4), np.int64)],
     64, [1], _int64_large_ref)


@dc.kernel
def uint32_arith(a: dc.Buffer[dc.uint32], b: dc.Buffer[dc.uint32], s: dc.uint32, out: dc.Buffer[dc.uint32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] + b[i] * s
        out[i, 1] = a[i] // (b[i] + 1)
        out[i, 2] = a[i] % (b[i] + 1)
        out[i, 3] = max(a[i], b[i]) - min(a[i], b[i])


def _uint32_ref(a, b, s, out):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    out[:, 0] = a64 + b64 * s
    out[:, 1] = a64 // (b64 + 1)
    out[:, 2] = a64 % (b64 + 1)
    out[:, 3] = np.abs(a64 - b64)


_add("uint32_arith", uint32_arith,
     lambda r: [r.integers(0, 2**20, N).astype(np.uint32), r.integers(0, 2**10, N).astype(np.uint32), 7,
                np.zeros((N, 4), np.uint32)],
     N, [3], _uint32_ref)


@dc.kernel
def promotion(a: dc.Buffer[dc.int32], x: dc.Buffer[dc.float32], n: dc.Buffer[dc.int64],
              out: dc.Buffer[dc.float32, 2], outi: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] + x[i]
        out[i, 1] = n[i] * 0.5
        out[i, 2] = x[i] * 0.1
        out[i, 3] = True + x[i]
        outi[i] = a[i] + n[i]


def _promotion_ref(a, x, n, out, outi):
    out[:, 0] = a.astype(np.float32) + x
    out[:, 1] = n * 0.5
    # a float literal beside a float32 stays float32 (the product is rounded once, in float32)
    out[:, 2] = x * np.float32(0.1)
    out[:, 3] = x + np.float32(1)
    outi[:] = a.astype(np.int64) + n


_add("promotion_and_float_literals", promotion,
     lambda r: [_ints(r, -100, 100, 256, np.int32), r.standard_normal(256).astype(np.float32),
                r.integers(-2**40, 2**40, 256).astype(np.int64), np.zeros((256, 4), np.float32),
                np.zeros(256, np.int64)],
     256, [3, 4], _promotion_ref, tags=["fp64"])  # int64 * float literal is float64 by the rules


# ---------------------------------------------------------------------------------------------
# Comparisons, logic, conditionals, control flow


@dc.kernel
def chained_compare(x: dc.Buffer[dc.float32], lo: dc.float32, hi: dc.float32, a: dc.Buffer[dc.int32],
                    b: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        out[i, 0] = 1 if lo < x[i] <= hi else 0
        out[i, 1] = 1 if a[i] < b[i] < a[i] * 2 else 0
        out[i, 2] = 1 if a[i] == b[i] != 3 else 0
        out[i, 3] = 1 if -5 <= a[i] < b[i] <= 5 < 10 else 0
        out[i, 4] = 1 if not (a[i] > b[i] >= 0) else 0


def _chained_ref(x, lo, hi, a, b, out):
    for i in range(x.shape[0]):
        xi, ai, bi = x[i], int(a[i]), int(b[i])
        out[i] = [lo < xi <= hi, ai < bi < ai * 2, ai == bi != 3, -5 <= ai < bi <= 5 < 10, not (ai > bi >= 0)]


_add("chained_compare", chained_compare,
     lambda r: [r.uniform(-2, 2, N).astype(np.float32), -0.5, 1.0, _ints(r, -8, 8, N, np.int32),
                _ints(r, -8, 8, N, np.int32), np.zeros((N, 5), np.int32)],
     N, [5], _chained_ref)


@dc.kernel(debug=True)
def short_circuit(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    # Work-items beyond x's end exist (out is longer): evaluating x[i] there would be an
    # out-of-bounds read, which debug mode reports, so only short-circuiting passes.
    i = dc.global_id(0)
    n = x.shape[0]
    r = 0
    if i < n and x[i] > 0:
        r += 1
    if i >= n or x[i] < 0:
        r += 2
    if not i < n or x[i] == 0:
        r += 4
    t = i < n and x[i] % 2 == 0
    if t:
        r += 8
    if (i < n and x[i] > 5) or (i < n and x[i] < -5):
        r += 16
    out[i] = r


def _short_circuit_ref(x, out):
    n = x.shape[0]
    for i in range(out.shape[0]):
        xi = int(x[i]) if i < n else None
        r = 0
        if i < n and xi > 0:
            r += 1
        if i >= n or xi < 0:
            r += 2
        if not i < n or xi == 0:
            r += 4
        if i < n and xi % 2 == 0:
            r += 8
        if (i < n and xi > 5) or (i < n and xi < -5):
            r += 16
        out[i] = r


_add("short_circuit_and_or", short_circuit,
     lambda r: [_ints(r, -9, 10, 48, np.int32), np.zeros(64, np.int32)],
     64, [1], _short_circuit_ref, tags=["debug"])


@dc.kernel
def conditional_expr(x: dc.Buffer[dc.float32], a: dc.Buffer[dc.int32], out: dc.Buffer[dc.float32],
                     outi: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        out[i] = v if v > 0.0 else (-2.0 * v if v > -1.0 else 0.5)
        # the untaken branch would divide by zero: a conditional expression is lazy
        outi[i] = 100 // a[i] if a[i] != 0 else -1


def _ifexp_ref(x, a, out, outi):
    out[:] = np.where(x > 0, x, np.where(x > -1, np.float32(-2) * x, np.float32(0.5)))
    outi[:] = [100 // int(v) if v else -1 for v in a]


_add("conditional_expr", conditional_expr,
     lambda r: [r.uniform(-2, 2, N).astype(np.float32), _ints(r, -3, 4, N, np.int32), np.zeros(N, np.float32),
                np.zeros(N, np.int32)],
     N, [2, 3], _ifexp_ref)


@dc.kernel
def if_elif_else(a: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32], outf: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i >= a.shape[0]:
        return
    v = a[i]
    if v < -10:
        out[i] = -1
    elif v < 0:
        out[i] = 0
    elif v == 0:
        out[i] = 100
    elif v % 2 == 1:
        out[i] = v * 3 + 1
    else:
        out[i] = v // 2
    if v > 3:
        y = dc.float32(1.5)
    else:
        y = dc.float32(-2.0)
    outf[i] = y


def _if_elif_ref(a, out, outf):
    for i, v in enumerate(int(t) for t in a):
        if v < -10:
            out[i] = -1
        elif v < 0:
            out[i] = 0
        elif v == 0:
            out[i] = 100
        elif v % 2 == 1:
            out[i] = v * 3 + 1
        else:
            out[i] = v // 2
        outf[i] = 1.5 if v > 3 else -2.0


_add("if_elif_else", if_elif_else,
     lambda r: [_ints(r, -20, 20, N, np.int32), np.zeros(N, np.int32), np.zeros(N, np.float32)],
     N, [1, 2], _if_elif_ref)


@dc.kernel
def range_forms(m: dc.Buffer[dc.int32], out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i < m.shape[0]:
        n = m[i]
        s0 = 0
        for k0 in range(n):
            s0 += k0
        s1 = 0
        for k1 in range(-n, n):
            s1 += k1 * k1
        s2 = 0
        for k2 in range(n, -n, -3):
            s2 += k2
        s3 = 0
        for k3 in range(10, 0, -1):
            s3 = s3 * 2 + k3
        for k4 in range(3, n + 4):  # noqa: B007 -- read after the loop
            s3 += 0
        out[i, 0] = s0
        out[i, 1] = s1
        out[i, 2] = s2
        out[i, 3] = s3
        out[i, 4] = k4  # a loop variable keeps its last value after the loop, as in Python


def _range_forms_ref(m, out):
    for i, n in enumerate(int(t) for t in m):
        s3 = 0
        for k in range(10, 0, -1):
            s3 = s3 * 2 + k
        for k in range(3, n + 4):  # noqa: B007
            pass
        out[i] = [sum(range(n)), sum(k * k for k in range(-n, n)), sum(range(n, -n, -3)), s3, k]


_add("range_forms", range_forms,
     lambda r: [_ints(r, 0, 20, 64, np.int32), np.zeros((64, 5), np.int64)], 64, [1], _range_forms_ref)


@dc.kernel
def range_runtime_step(n: dc.Buffer[dc.int32], start: dc.int32, step: dc.int32, out: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < n.shape[0]:
        s = 0
        for k in range(start, n[i], step):
            s += k + 1
        out[i] = s


def _range_step_ref(n, start, step, out):
    for i, stop in enumerate(int(t) for t in n):
        out[i] = sum(k + 1 for k in range(start, stop, step))


_add("range_runtime_step_positive", range_runtime_step,
     lambda r: [_ints(r, -30, 30, 64, np.int32), -7, 3, np.zeros(64, np.int64)], 64, [3], _range_step_ref)
_add("range_runtime_step_negative", range_runtime_step,
     lambda r: [_ints(r, -30, 30, 64, np.int32), 11, -2, np.zeros(64, np.int64)], 64, [3], _range_step_ref)


@dc.kernel
def while_break_continue(a: dc.Buffer[dc.int64], out: dc.Buffer[dc.int32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        v = a[i]
        steps = 0
        while v != 1:
            if steps >= 40:
                break
            if v % 2 == 0:
                v = v // 2
                steps += 1
                continue
            v = 3 * v + 1
            steps += 1
        out[i, 0] = steps
        s = 0
        for k in range(100):
            if k % 3 == 0:
                continue
            if s > a[i]:
                break
            s += k
        out[i, 1] = s


def _while_ref(a, out):
    for i, v0 in enumerate(int(t) for t in a):
        v, steps = v0, 0
        while v != 1:
            if steps >= 40:
                break
            if v % 2 == 0:
                v //= 2
                steps += 1
                continue
            v = 3 * v + 1
            steps += 1
        s = 0
        for k in range(100):
            if k % 3 == 0:
                continue
            if s > v0:
                break
            s += k
        out[i] = [steps, s]


_add("while_break_continue", while_break_continue,
     lambda r: [_ints(r, 1, 80, 64, np.int64), np.zeros((64, 2), np.int32)], 64, [1], _while_ref)


@dc.kernel
def primes(out: dc.Buffer[dc.int32]):
    n = dc.global_id(0)
    if n >= out.shape[0]:
        return
    is_prime = n >= 2
    d = 2
    while d * d <= n and is_prime:
        if n % d == 0:
            is_prime = False
        d += 1
    out[n] = 1 if is_prime else 0


def _primes_ref(out):
    for n in range(out.shape[0]):
        out[n] = int(n >= 2 and all(n % d for d in range(2, int(math.isqrt(n)) + 1)))


_add("primes_bool_locals", primes, lambda r: [np.full(150, 9, np.int32)], 150, [0], _primes_ref)


@dc.kernel
def early_return(a: dc.Buffer[dc.int32, 2], target: dc.int32, out: dc.Buffer[dc.int32]):
    r = dc.global_id(0)
    if r >= a.shape[0]:
        return
    out[r] = -1
    for c in range(a.shape[1]):
        if a[r, c] == target:
            out[r] = c
            return
    out[r] = -2


def _early_return_ref(a, target, out):
    for r in range(a.shape[0]):
        hits = np.nonzero(a[r] == target)[0]
        out[r] = hits[0] if len(hits) else -2


_add("early_return", early_return,
     lambda r: [_ints(r, 0, 12, (40 * 9), np.int32).reshape(40, 9), 5, np.zeros(40, np.int32)],
     40, [2], _early_return_ref)


@dc.kernel
def augmented_assign(a: dc.Buffer[dc.int32], x: dc.Buffer[dc.float32], oi: dc.Buffer[dc.int32, 2],
                     of: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        v = a[i]
        v += 7
        v -= 3
        v *= -2
        v //= 3
        v %= 11
        v **= 2
        oi[i, 0] = v
        oi[i, 1] = a[i]
        oi[i, 1] += 5
        oi[i, 1] *= 3
        oi[i, 1] //= -4
        oi[i, 1] -= 1
        f = x[i]
        f += 1.5
        f *= 2.0
        f /= 4.0
        f -= 0.25
        of[i] = f
        of[i] += x[i]


def _augassign_ref(a, x, oi, of):
    for i, v0 in enumerate(int(t) for t in a):
        v = ((((v0 + 7 - 3) * -2) // 3) % 11) ** 2
        w = ((v0 + 5) * 3) // -4 - 1
        oi[i] = [v, w]
    f = ((x + np.float32(1.5)) * np.float32(2)) / np.float32(4) - np.float32(0.25)
    of[:] = f + x


_add("augmented_assign", augmented_assign,
     lambda r: [_ints(r, -100, 100, N, np.int32), r.standard_normal(N).astype(np.float32),
                np.zeros((N, 2), np.int32), np.zeros(N, np.float32)],
     N, [2, 3], _augassign_ref, rtol=1e-6, atol=1e-6)


@dc.kernel
def bool_values(a: dc.Buffer[dc.bool_], b: dc.Buffer[dc.bool_], x: dc.Buffer[dc.int32], flag: bool,
                out: dc.Buffer[dc.bool_, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] and not b[i]
        out[i, 1] = a[i] or b[i]
        out[i, 2] = x[i] > 0
        out[i, 3] = a[i] != b[i]
        out[i, 4] = flag and (a[i] == b[i])
        out[i, 5] = not x[i]


def _bool_ref(a, b, x, flag, out):
    out[:, 0] = a & ~b
    out[:, 1] = a | b
    out[:, 2] = x > 0
    out[:, 3] = a != b
    out[:, 4] = flag & (a == b)
    out[:, 5] = x == 0


_add("bool_values", bool_values,
     lambda r: [r.integers(0, 2, 64).astype(bool), r.integers(0, 2, 64).astype(bool),
                _ints(r, -2, 3, 64, np.int32), True, np.zeros((64, 6), bool)],
     64, [4], _bool_ref)


@dc.kernel
def casts(x: dc.Buffer[dc.float64], n: dc.Buffer[dc.int64], oi: dc.Buffer[dc.int64, 2],
          of: dc.Buffer[dc.float64, 2], ou: dc.Buffer[dc.uint32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        oi[i, 0] = int(x[i])
        oi[i, 1] = dc.int32(x[i])
        oi[i, 2] = dc.int64(x[i] * 3.0)
        oi[i, 3] = int(dc.float32(n[i]) / 2.0)
        of[i, 0] = float(n[i]) / 4.0
        of[i, 1] = dc.float32(x[i])
        of[i, 2] = dc.float64(n[i])
        ou[i] = dc.uint32(n[i])


def _casts_ref(x, n, oi, of, ou):
    oi[:, 0] = np.trunc(x)
    oi[:, 1] = np.trunc(x)
    oi[:, 2] = np.trunc(x * 3.0)
    oi[:, 3] = np.trunc(n.astype(np.float32) / np.float32(2))
    of[:, 0] = n / 4.0
    of[:, 1] = x.astype(np.float32)
    of[:, 2] = n
    ou[:] = n.astype(np.uint32)


_add("casts_float64", casts,
     lambda r: [r.uniform(-1000, 1000, N), r.integers(0, 2**20, N).astype(np.int64),
                np.zeros((N, 4), np.int64), np.zeros((N, 3), np.float64), np.zeros(N, np.uint32)],
     N, [2, 3, 4], _casts_ref)


@dc.kernel
def casts32(x: dc.Buffer[dc.float32], n: dc.Buffer[dc.int32], oi: dc.Buffer[dc.int32, 2],
            of: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        oi[i, 0] = dc.int32(x[i])
        oi[i, 1] = dc.int32(-x[i] * 2.0)
        oi[i, 2] = dc.int32(dc.uint32(n[i]) // 3)
        oi[i, 3] = dc.int32(n[i] > 100)
        of[i, 0] = dc.float32(n[i]) * 0.5
        of[i, 1] = dc.float32(dc.int32(x[i]))


def _casts32_ref(x, n, oi, of):
    oi[:, 0] = np.trunc(x)
    oi[:, 1] = np.trunc(-x * np.float32(2))
    oi[:, 2] = n // 3
    oi[:, 3] = n > 100
    of[:, 0] = n.astype(np.float32) * np.float32(0.5)
    of[:, 1] = np.trunc(x)


_add("casts_32bit", casts32,
     lambda r: [r.uniform(-1000, 1000, N).astype(np.float32), _ints(r, 0, 1000, N, np.int32),
                np.zeros((N, 4), np.int32), np.zeros((N, 2), np.float32)],
     N, [2, 3], _casts32_ref)


@dc.kernel
def scalar_param_types(bi: bool, i32: dc.int32, i64: dc.int64, u32: dc.uint32, f32: dc.float32,
                       f64: dc.float64, out: dc.Buffer[dc.float64]):
    if dc.global_id(0) == 0:
        out[0] = 1.0 if bi else -1.0
        out[1] = i32
        out[2] = i64
        out[3] = u32
        out[4] = f32
        out[5] = f64


def _scalar_types_ref(bi, i32, i64, u32, f32, f64, out):
    out[:] = [1.0 if bi else -1.0, i32, i64, u32, np.float32(f32), f64]


_add("scalar_param_types", scalar_param_types,
     lambda r: [True, -123456, -(2**40) - 3, 4000000000, 0.375, 1e300, np.zeros(6, np.float64)],
     1, [6], _scalar_types_ref)


@dc.kernel
def language_extras(a: dc.Buffer[dc.int32], x: dc.Buffer[dc.float32], out: dc.Buffer[dc.int64, 2],
                    outf: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        v = a[i]
        out[i, 0] = v or 7  # and/or on numbers return an operand, as in Python
        out[i, 1] = v and 5
        p, q = v, v * 2  # tuple assignment: values first, then targets
        p, q = q, p
        out[i, 2] = p - q
        m = n = 3  # chained assignment
        out[i, 3] = m + n
        k: dc.int32 = 7  # annotated assignment
        out[i, 4] = k
        if (w := v * 3) > 10:  # assignment expression
            out[i, 5] = w
        else:
            out[i, 5] = -w
        out[i, 6] = a.size + a.ndim * 1000 + len(a) * 100000
        out[i, 7] = a[-1]  # a constant negative index counts from the end
        out[i, 8] = pow(v, 2)
        out[i, 9] = round(x[i])  # int64, ties to even
        out[i, 10] = bool(v) + dc.bool_(x[i])
        out[i, 11] = ~True + (+v)
        out[i, 12] = 1 if v else 0
        out[i, 13] = math.floor(x[i]) // 2  # math.floor gives an int64
        outf[i, 0] = math.log(x[i] * x[i] + 1.0, 2.0)
        outf[i, 1] = math.e * 0 + np.sqrt(x[i] * x[i])
        outf[i, 2] = dc.round(x[i])
        outf[i, 3] = min(x[i], math.inf)


def _extras_ref(a, x, out, outf):
    n = a.shape[0]
    for i in range(n):
        v, xf = int(a[i]), float(x[i])
        w = v * 3
        out[i] = [v or 7, v and 5, v, 6, 7, w if w > 10 else -w, n + 1000 + n * 100000, int(a[-1]), v * v,
                  round(xf), int(bool(v)) + int(bool(xf)), v - 2, 1 if v else 0, math.floor(xf) // 2]
    xd = x.astype(np.float64)
    outf[:, 0] = np.log2(xd * xd + 1)
    outf[:, 1] = np.abs(x)
    outf[:, 2] = np.rint(x)
    outf[:, 3] = x


_add("language_extras", language_extras,
     lambda r: [_ints(r, -6, 7, 64, np.int32), (r.integers(-8, 9, 64) * 0.5).astype(np.float32),
                np.zeros((64, 14), np.int64), np.zeros((64, 4), np.float32)],
     64, [2, 3], _extras_ref, rtol=1e-6, atol=1e-6)


@dc.kernel
def evaluation_order(x: dc.Buffer[dc.int32], cnt: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    # Side effects (atomics) make evaluation order observable.
    i = dc.global_id(0)
    if i < x.shape[0]:
        if x[i] > 0 and dc.atomic_add(cnt, 0, 1) >= 0:  # runs only where x > 0
            out[i] += 1
        if x[i] > 0 or dc.atomic_add(cnt, 1, 1) < -1:  # runs only where x <= 0
            out[i] += 10
        if -1 < dc.atomic_add(cnt, 2, 1) < 1000000:  # the middle operand runs once
            out[i] += 100
        t = dc.atomic_add(cnt, 3, 1) if x[i] % 2 == 0 else dc.atomic_add(cnt, 4, 1)  # one branch only
        out[dc.atomic_add(cnt, 5, 1) * 0 + i] += 1000 + t * 0  # the index is evaluated once


def _eval_order_ref(x, cnt, out):
    n = x.shape[0]
    cnt[:] = [(x > 0).sum(), (x <= 0).sum(), n, (x % 2 == 0).sum(), (x % 2 != 0).sum(), n]
    out[:] = np.where(x > 0, 11, 0) + 1100


_add("evaluation_order_side_effects", evaluation_order,
     lambda r: [_ints(r, -5, 6, 100, np.int32), np.zeros(6, np.int32), np.zeros(100, np.int32)], 100, [1, 2],
     _eval_order_ref, tags=["atomic"])


@dc.kernel
def loop_semantics(a: dc.Buffer[dc.int32], out: dc.Buffer[dc.int64, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        s = 0
        for k in range(5):
            k += 10  # does not change the iteration
            s += k
        out[i, 0] = s
        c = 0
        for _ in range(a[i]):  # the range is evaluated once, before the loop
            a[i] -= 1
            c += 1
        out[i, 1] = c
        step = a[i] * 0
        j = 0
        for _ in range(0, 10, step):  # a zero step at run time runs no iteration
            j += 1
        out[i, 2] = j


def _loop_semantics_ref(a, out):
    out[:, 0] = 60
    out[:, 1] = a
    out[:, 2] = 0
    a[:] = 0


_add("loop_semantics", loop_semantics,
     lambda r: [_ints(r, 0, 10, 64, np.int32), np.zeros((64, 3), np.int64)], 64, [0, 1], _loop_semantics_ref)


@dc.kernel
def shifts_wide(a: dc.Buffer[dc.int32], n: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i, 0] = a[i] << n[i]
        out[i, 1] = a[i] >> n[i]


def _shifts_ref(a, n, out):
    # documented: << by a count outside [0, bits) gives 0; >> by >= bits gives 0 or -1 (the
    # sign); a negative run-time count gives 0
    for i in range(a.shape[0]):
        x, k = int(a[i]), int(n[i])
        left = 0 if not 0 <= k < 32 else ((x << k) + 2**31) % 2**32 - 2**31
        right = 0 if k < 0 else (x >> k if k < 32 else (0 if x >= 0 else -1))
        out[i] = [left, right]


_add("shifts_wider_than_type", shifts_wide,
     lambda r: [_ints(r, -1000, 1000, 80, np.int32), _ints(r, -3, 40, 80, np.int32), np.zeros((80, 2), np.int32)],
     80, [2], _shifts_ref)


@dc.kernel
def float_to_int_and_nan(x: dc.Buffer[dc.float32], oi: dc.Buffer[dc.int32, 2], o64: dc.Buffer[dc.int64],
                         of: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        oi[i, 0] = dc.int32(x[i])
        oi[i, 1] = dc.uint32(x[i]) % 1000
        o64[i] = int(x[i])
        of[i, 0] = min(x[i], 1.0)
        of[i, 1] = max(1.0, x[i])
        of[i, 2] = dc.float32(1.0) if x[i] != x[i] else dc.float32(0.0)


def _sat(v: float, lo: int, hi: int) -> int:
    if math.isnan(v):
        return 0
    return int(min(max(math.trunc(v) if math.isfinite(v) else (hi if v > 0 else lo), lo), hi))


def _f2i_ref(x, oi, o64, of):
    # documented: float -> int truncates; out-of-range values saturate and NaN gives 0;
    # min(a, b) is `b if b < a else a` (NaN order as Python's)
    for i, v in enumerate(float(t) for t in x):
        oi[i, 0] = _sat(v, -2**31, 2**31 - 1)
        oi[i, 1] = _sat(v, 0, 2**32 - 1) % 1000
        o64[i] = _sat(v, -2**63, 2**63 - 1)
        of[i, 0] = 1.0 if 1.0 < v else v
        of[i, 1] = v if v > 1.0 else 1.0
        of[i, 2] = 1.0 if math.isnan(v) else 0.0


_add("float_to_int_saturation_and_nan", float_to_int_and_nan,
     lambda r: [np.array([3.7, -3.7, 1e10, -1e10, np.nan, np.inf, -np.inf, 0.5, -0.5, 2.5e9, 4.5e9, -1.0],
                         np.float32), np.zeros((12, 2), np.int32), np.zeros(12, np.int64),
                np.zeros((12, 3), np.float32)],
     12, [1, 2, 3], _f2i_ref)


@dc.kernel
def atomics_tuple_index(x: dc.Buffer[dc.int32], grid: dc.Buffer[dc.uint32, 2], fl: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        r = x[i] % grid.shape[0]
        c = (x[i] // grid.shape[0]) % grid.shape[1]
        dc.atomic_add(grid, (r, c), 2)
        dc.atomic_max(fl, (r, c), x[i])  # the int value converts to the element type


def _atomics_tuple_ref(x, grid, fl):
    for v in x.astype(np.int64):
        r, c = v % grid.shape[0], (v // grid.shape[0]) % grid.shape[1]
        grid[r, c] += 2
        fl[r, c] = max(fl[r, c], v)


_add("atomics_tuple_index_uint32", atomics_tuple_index,
     lambda r: [_ints(r, 0, 500, 300, np.int32), np.zeros((4, 5), np.uint32), np.full((4, 5), -1, np.float32)],
     300, [1, 2], _atomics_tuple_ref, tags=["atomic"])


# ---------------------------------------------------------------------------------------------
# Math


@dc.kernel
def math_functions(x: dc.Buffer, y: dc.Buffer, out: dc.Buffer):
    i = dc.global_id(0)
    if i < x.shape[0]:
        out[i, 0] = math.sqrt(x[i])
        out[i, 1] = math.exp(-x[i])
        out[i, 2] = math.log(x[i])
        out[i, 3] = math.sin(y[i])
        out[i, 4] = math.cos(y[i])
        out[i, 5] = math.tan(y[i] * 0.4)
        out[i, 6] = math.tanh(y[i])
        out[i, 7] = math.atan2(y[i], x[i])
        out[i, 8] = math.pow(x[i], y[i])
        out[i, 9] = math.fabs(y[i])
        out[i, 10] = math.floor(y[i])
        out[i, 11] = math.ceil(y[i])
        out[i, 12] = math.hypot(x[i], y[i])
        out[i, 13] = math.log2(x[i])
        out[i, 14] = math.log10(x[i])
        out[i, 15] = math.asin(y[i] / 4.0)
        out[i, 16] = math.acos(y[i] / 4.0)
        out[i, 17] = math.atan(y[i])
        out[i, 18] = math.copysign(x[i], y[i])
        out[i, 19] = math.fmod(y[i], x[i])
        out[i, 20] = math.trunc(y[i])
        out[i, 21] = math.expm1(y[i] * 0.01)
        out[i, 22] = math.log1p(x[i] * 0.01)
        out[i, 23] = math.sinh(y[i])
        out[i, 24] = math.cosh(y[i])
        out[i, 25] = math.pi * x[i]


def _math_ref(x, y, out):
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    cols = [np.sqrt(xd), np.exp(-xd), np.log(xd), np.sin(yd), np.cos(yd), np.tan(yd * 0.4), np.tanh(yd),
            np.arctan2(yd, xd), xd ** yd, np.abs(yd), np.floor(yd), np.ceil(yd), np.hypot(xd, yd), np.log2(xd),
            np.log10(xd), np.arcsin(yd / 4), np.arccos(yd / 4), np.arctan(yd), np.copysign(xd, yd),
            np.fmod(yd, xd), np.trunc(yd), np.expm1(yd * 0.01), np.log1p(xd * 0.01), np.sinh(yd),
            np.cosh(yd), math.pi * xd]
    for c, col in enumerate(cols):
        out[:, c] = col


def _math_args(dtype: Any) -> Callable[[np.random.Generator], Args]:
    return lambda r: [r.uniform(0.5, 3.5, 64).astype(dtype), r.uniform(-3, 3, 64).astype(dtype),
                      np.zeros((64, 26), dtype)]


_add("math_functions_float32", math_functions, _math_args(np.float32), 64, [2], _math_ref, rtol=1e-5, atol=2e-6)
_add("math_functions_float64", math_functions, _math_args(np.float64), 64, [2], _math_ref, rtol=1e-12,
     atol=1e-14)


@dc.kernel
def math_special(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        out[i, 0] = math.erf(x[i])
        out[i, 1] = math.erfc(x[i])
        out[i, 2] = math.lgamma(x[i] + 4.0)
        out[i, 3] = math.gamma(x[i] + 4.0)


def _math_special_ref(x, out):
    xd = x.astype(np.float64)
    out[:, 0] = [math.erf(v) for v in xd]
    out[:, 1] = [math.erfc(v) for v in xd]
    out[:, 2] = [math.lgamma(v + 4) for v in xd]
    out[:, 3] = [math.gamma(v + 4) for v in xd]


# erf/erfc/lgamma/gamma have no Metal equivalent: the metal emitter refuses them by design
_add("math_special_functions", math_special,
     lambda r: [r.uniform(-2, 2, 64).astype(np.float32), np.zeros((64, 4), np.float32)], 64, [1],
     _math_special_ref, rtol=1e-5, atol=2e-6, tags=["no-metal"])


@dc.kernel
def dc_math(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        out[i, 0] = dc.sqrt(x[i])
        out[i, 1] = dc.rsqrt(x[i])
        out[i, 2] = dc.exp(y[i])
        out[i, 3] = dc.exp2(y[i])
        out[i, 4] = dc.log(x[i])
        out[i, 5] = dc.sin(y[i]) + dc.cos(y[i])
        out[i, 6] = dc.floor(y[i]) + dc.ceil(y[i]) + dc.trunc(y[i])
        out[i, 7] = dc.fmin(x[i], y[i]) + dc.fmax(x[i], y[i])
        out[i, 8] = dc.cbrt(y[i])
        out[i, 9] = x[i] if dc.isfinite(x[i] / y[i]) else y[i]


def _dc_math_ref(x, y, out):
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(divide="ignore"):
        fin = np.isfinite(x / y)
    cols = [np.sqrt(xd), 1 / np.sqrt(xd), np.exp(yd), np.exp2(yd), np.log(xd), np.sin(yd) + np.cos(yd),
            np.floor(yd) + np.ceil(yd) + np.trunc(yd), np.fmin(xd, yd) + np.fmax(xd, yd), np.cbrt(yd),
            np.where(fin, xd, yd)]
    for c, col in enumerate(cols):
        out[:, c] = col


def _dc_math_args(r: np.random.Generator) -> Args:
    y = r.uniform(-3, 3, 64).astype(np.float32)
    y[:4] = 0.0
    return [r.uniform(0.5, 3.5, 64).astype(np.float32), y, np.zeros((64, 10), np.float32)]


_add("dc_math_functions", dc_math, _dc_math_args, 64, [2], _dc_math_ref, rtol=2e-5, atol=2e-6)


# ---------------------------------------------------------------------------------------------
# Constants: module-level and closures

SCALE = 3
OFFSET = 0.25
LIMIT = 100


@dc.kernel
def module_constants(x: dc.Buffer[dc.float32], a: dc.Buffer[dc.int32], of: dc.Buffer[dc.float32],
                     oi: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        of[i] = x[i] * SCALE + OFFSET
        oi[i] = min(a[i] * SCALE, LIMIT)


def _module_consts_ref(x, a, of, oi):
    of[:] = x * np.float32(3) + np.float32(0.25)
    oi[:] = np.minimum(a * 3, 100)


_add("module_constants", module_constants,
     lambda r: [_ints(r, -50, 50, N, np.float32), _ints(r, 0, 60, N, np.int32), np.zeros(N, np.float32),
                np.zeros(N, np.int32)],
     N, [2, 3], _module_consts_ref)


def make_scaled_add(k: int, bias: float, reps: int) -> Any:
    """Two calls give two kernels of one name whose only difference is their closure constants."""

    @dc.kernel
    def scaled_add(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i < x.shape[0]:
            acc = x[i] * k + bias
            for _ in range(reps):
                acc += 1.0
            out[i] = acc

    return scaled_add


def _closure_ref(k: int, bias: float, reps: int) -> Callable[..., None]:
    def ref(x, out):
        out[:] = x * np.float32(k) + np.float32(bias) + np.float32(reps)
    return ref


for _k, _b, _reps in ((2, 1.0, 3), (5, -3.0, 0)):
    _add(f"closure_constants_k{_k}", make_scaled_add(_k, _b, _reps),
         lambda r: [_ints(r, -50, 50, N, np.float32), np.zeros(N, np.float32)], N, [1], _closure_ref(_k, _b, _reps))


# ---------------------------------------------------------------------------------------------
# Device functions


@dc.func
def sq(x: dc.float32) -> dc.float32:
    return x * x


@dc.func
def clamp(v: dc.float32, lo: dc.float32, hi: dc.float32) -> dc.float32:
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@dc.func
def sum_sq3(a: dc.float32, b: dc.float32, c: dc.float32) -> dc.float32:
    return sq(a) + sq(b) + sq(c)


@dc.func
def norm_clamped(a: dc.float32, b: dc.float32, c: dc.float32, lim: dc.float32) -> dc.float32:
    return clamp(math.sqrt(sum_sq3(a, b, c)), 0.0, lim)


@dc.func
def sign(v: dc.int32) -> dc.int32:
    if v > 0:
        return 1
    elif v < 0:
        return -1
    return 0


@dc.kernel
def device_functions(p: dc.Buffer[dc.float32, 2], a: dc.Buffer[dc.int32], lim: dc.float32,
                     out: dc.Buffer[dc.float32], outi: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < p.shape[0]:
        out[i] = norm_clamped(p[i, 0], p[i, 1], p[i, 2], lim)
        outi[i] = sign(a[i]) * 10 + sign(-a[i])


def _devfunc_ref(p, a, lim, out, outi):
    n = np.sqrt((p.astype(np.float64) ** 2).sum(axis=1))
    out[:] = np.clip(n, 0.0, lim)
    outi[:] = np.sign(a) * 10 + np.sign(-a)


_add("device_functions_nested", device_functions,
     lambda r: [r.uniform(-2, 2, (N, 3)).astype(np.float32), _ints(r, -3, 4, N, np.int32), 2.0,
                np.zeros(N, np.float32), np.zeros(N, np.int32)],
     N, [3, 4], _devfunc_ref, rtol=1e-5, atol=1e-6)


@dc.func
def row_sum(a: dc.Buffer[dc.float32, 2], r: dc.int64) -> dc.float32:
    s = dc.float32(0.0)
    for c in range(a.shape[1]):
        s += a[r, c]
    return s


@dc.func
def store_scaled(out: dc.Buffer[dc.float32], i: dc.int64, v: dc.float32, k: dc.float32):
    out[i] = v * k


@dc.kernel
def device_function_buffers(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32]):
    r = dc.global_id(0)
    if r < a.shape[0]:
        store_scaled(out, r, row_sum(a, r), 0.5)


def _devfunc_buf_ref(a, out):
    out[:] = a.sum(axis=1, dtype=np.float32) * np.float32(0.5)


_add("device_function_buffer_params", device_function_buffers,
     lambda r: [_ints(r, -9, 9, 30 * 7, np.float32).reshape(30, 7), np.zeros(30, np.float32)],
     30, [1], _devfunc_buf_ref)


@dc.func
def twice_generic(v):
    return v + v


@dc.kernel
def generic_device_function(a: dc.Buffer[dc.int32], x: dc.Buffer[dc.float32], oi: dc.Buffer[dc.int32],
                            of: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        oi[i] = twice_generic(a[i])
        of[i] = twice_generic(x[i])


def _generic_devfunc_ref(a, x, oi, of):
    oi[:] = a * 2
    of[:] = x * 2


_add("generic_device_function", generic_device_function,
     lambda r: [_ints(r, -1000, 1000, 64, np.int32), r.standard_normal(64).astype(np.float32),
                np.zeros(64, np.int32), np.zeros(64, np.float32)],
     64, [2, 3], _generic_devfunc_ref)


# ---------------------------------------------------------------------------------------------
# Buffers in 1-3 dimensions, shapes, work-item builtins


@dc.kernel
def shape_generic(a: dc.Buffer, out: dc.Buffer[dc.int64]):
    if dc.global_id(0) == 0:
        out[0] = a.shape[0]


def _shape_generic_ref(a, out):
    out[0] = a.shape[0]


_add("generic_ndim_1d_float32", shape_generic, lambda r: [np.zeros(7, np.float32), np.zeros(1, np.int64)],
     1, [1], _shape_generic_ref)
_add("generic_ndim_2d_int32", shape_generic, lambda r: [np.zeros((5, 3), np.int32), np.zeros(1, np.int64)],
     1, [1], _shape_generic_ref)
_add("generic_ndim_3d_uint32", shape_generic,
     lambda r: [np.zeros((4, 2, 3), np.uint32), np.zeros(1, np.int64)], 1, [1], _shape_generic_ref)


@dc.kernel
def shape3(a: dc.Buffer[dc.float32, 3], out: dc.Buffer[dc.int64]):
    if dc.global_id(0) == 0:
        out[0] = a.shape[0]
        out[1] = a.shape[1]
        out[2] = a.shape[2]
        out[3] = a.shape[0] * a.shape[1] * a.shape[2]


def _shape3_ref(a, out):
    out[:] = [*a.shape, a.size]


_add("shape_3d", shape3, lambda r: [np.zeros((3, 5, 7), np.float32), np.zeros(4, np.int64)], 1, [1], _shape3_ref)


@dc.kernel
def add_2d(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] - 2.0 * b[i, j]


def _add2d_ref(a, b, out):
    out[:] = a - np.float32(2) * b


_add("add_2d_global_2d", add_2d,
     lambda r: [r.standard_normal((13, 11)).astype(np.float32), r.standard_normal((13, 11)).astype(np.float32),
                np.zeros((13, 11), np.float32)],
     (13, 11), [2], _add2d_ref, rtol=1e-6, atol=1e-6)


@dc.kernel
def rows_1d_global(a: dc.Buffer[dc.int64, 2], out: dc.Buffer[dc.int64, 2]):
    r = dc.global_id(0)
    if r < a.shape[0]:
        acc = 0
        for c in range(a.shape[1]):
            acc += a[r, c]
            out[r, c] = acc


def _rows_ref(a, out):
    out[:] = np.cumsum(a, axis=1)


_add("rows_2d_buffer_1d_global", rows_1d_global,
     lambda r: [r.integers(-100, 100, (17, 9)).astype(np.int64), np.zeros((17, 9), np.int64)], 17, [1], _rows_ref)


@dc.kernel
def add_3d(a: dc.Buffer[dc.float32, 3], out: dc.Buffer[dc.float32, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    k = dc.global_id(2)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = a[i, j, k] + dc.float32(i * 100 + j * 10 + k)  # int64 + float32 is float64


def _add3d_ref(a, out):
    i, j, k = np.indices(a.shape)
    out[:] = a + (i * 100 + j * 10 + k).astype(np.float32)


_add("add_3d_global_3d", add_3d,
     lambda r: [_ints(r, -5, 5, 3 * 4 * 5, np.float32).reshape(3, 4, 5), np.zeros((3, 4, 5), np.float32)],
     (3, 4, 5), [1], _add3d_ref, local_size=(1, 2, 5))


@dc.kernel
def reduce_3d_last_axes(a: dc.Buffer[dc.int32, 3], out: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        s = dc.int64(0)
        for j in range(a.shape[1]):
            for k in range(a.shape[2] - 1, -1, -1):
                s += a[i, j, k] * (k + 1)
        out[i] = s


def _reduce3d_ref(a, out):
    w = np.arange(1, a.shape[2] + 1)
    out[:] = (a.astype(np.int64) * w).sum(axis=(1, 2))


_add("buffer_3d_global_1d", reduce_3d_last_axes,
     lambda r: [r.integers(-50, 50, (6, 4, 5)).astype(np.int32), np.zeros(6, np.int64)], 6, [1], _reduce3d_ref)


@dc.kernel
def ids_2d(out: dc.Buffer[dc.int64, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    out[i, j, 0] = dc.local_id(0)
    out[i, j, 1] = dc.local_id(1)
    out[i, j, 2] = dc.group_id(0)
    out[i, j, 3] = dc.group_id(1)
    out[i, j, 4] = dc.local_size(0)
    out[i, j, 5] = dc.local_size(1)
    out[i, j, 6] = dc.global_size(0)
    out[i, j, 7] = dc.global_size(1)
    out[i, j, 8] = dc.group_id(0) * dc.local_size(0) + dc.local_id(0) - i


def _ids2d_ref(out):
    gx, gy, lx, ly = 8, 6, 4, 3
    for i in range(gx):
        for j in range(gy):
            out[i, j] = [i % lx, j % ly, i // lx, j // ly, lx, ly, gx, gy, 0]


_add("work_item_ids_2d", ids_2d, lambda r: [np.full((8, 6, 9), -1, np.int64)], (8, 6), [0], _ids2d_ref,
     local_size=(4, 3))


@dc.kernel
def ids_3d(out: dc.Buffer[dc.int64, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    k = dc.global_id(2)
    out[i, j, k] = dc.local_id(2) + 10 * dc.group_id(2) + 100 * dc.local_size(2) + 1000 * dc.global_size(2) \
        + 100000 * dc.local_id(0) + 1000000 * dc.group_id(1)


def _ids3d_ref(out):
    for i in range(4):
        for j in range(4):
            for k in range(6):
                out[i, j, k] = k % 3 + 10 * (k // 3) + 300 + 6000 + 100000 * (i % 2) + 1000000 * (j // 2)


_add("work_item_ids_3d", ids_3d, lambda r: [np.full((4, 4, 6), -1, np.int64)], (4, 4, 6), [0], _ids3d_ref,
     local_size=(2, 2, 3))


@dc.kernel
def partial_group_1d(out: dc.Buffer[dc.int32]):
    # No bounds check on purpose: items beyond the global size must not run at all.
    i = dc.global_id(0)
    out[i] = i * 2 + 1


def _partial1d_ref(out):
    out[:] = np.arange(out.shape[0]) * 2 + 1


_add("partial_last_group_1d", partial_group_1d, lambda r: [np.zeros(100, np.int32)], 100, [0], _partial1d_ref,
     local_size=32)


@dc.kernel
def partial_group_2d(out: dc.Buffer[dc.int32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    out[i, j] = i * 100 + j


def _partial2d_ref(out):
    i, j = np.indices(out.shape)
    out[:] = i * 100 + j


_add("partial_last_group_2d", partial_group_2d, lambda r: [np.zeros((10, 7), np.int32)], (10, 7), [0],
     _partial2d_ref, local_size=(4, 4))


# ---------------------------------------------------------------------------------------------
# Work-group memory and barriers

GROUP = 32
TILE = 8


@dc.kernel
def group_reduce_while(x: dc.Buffer[dc.float32], partial: dc.Buffer[dc.float32]):
    sh = dc.shared((GROUP,), dc.float32)
    lid = dc.local_id(0)
    sh[lid] = x[dc.global_id(0)]
    dc.barrier()
    s = GROUP // 2
    while s > 0:
        if lid < s:
            sh[lid] += sh[lid + s]
        dc.barrier()
        s //= 2
    if lid == 0:
        partial[dc.group_id(0)] = sh[0]


def _group_sum_ref(x, partial):
    partial[:] = x.reshape(-1, GROUP).sum(axis=1)


_add("shared_reduce_while_barrier", group_reduce_while,
     lambda r: [_ints(r, -8, 8, 4 * GROUP, np.float32), np.zeros(4, np.float32)], 4 * GROUP, [1], _group_sum_ref,
     local_size=GROUP, tags=["barrier"])


@dc.kernel
def group_max_for(x: dc.Buffer[dc.int32], partial: dc.Buffer[dc.int32]):
    sh = dc.shared((GROUP,), dc.int32)
    lid = dc.local_id(0)
    sh[lid] = x[dc.global_id(0)]
    dc.barrier()
    for step in range(5):
        s = GROUP // 2 ** (step + 1)
        if lid < s:
            sh[lid] = max(sh[lid], sh[lid + s])
        dc.barrier()
    if lid == 0:
        partial[dc.group_id(0)] = sh[0]


def _group_max_ref(x, partial):
    partial[:] = x.reshape(-1, GROUP).max(axis=1)


_add("shared_reduce_for_barrier", group_max_for,
     lambda r: [_ints(r, -10000, 10000, 3 * GROUP, np.int32), np.zeros(3, np.int32)], 3 * GROUP, [1],
     _group_max_ref, local_size=GROUP, tags=["barrier"])


@dc.kernel
def scan_group(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    sh = dc.shared((GROUP,), dc.int32)
    lid = dc.local_id(0)
    i = dc.global_id(0)
    sh[lid] = x[i]
    dc.barrier()
    offset = 1
    while offset < GROUP:
        v = sh[lid]
        if lid >= offset:
            v += sh[lid - offset]
        dc.barrier()
        sh[lid] = v
        dc.barrier()
        offset *= 2
    out[i] = sh[lid]


def _scan_ref(x, out):
    out[:] = np.cumsum(x.reshape(-1, GROUP), axis=1).reshape(-1)


_add("prefix_sum_per_group", scan_group,
     lambda r: [_ints(r, -20, 20, 3 * GROUP, np.int32), np.zeros(3 * GROUP, np.int32)], 3 * GROUP, [1], _scan_ref,
     local_size=GROUP, tags=["barrier"])


@dc.kernel
def smooth_shared(x: dc.Buffer[dc.float32], iters: dc.int32, out: dc.Buffer[dc.float32]):
    sh = dc.shared((GROUP,), dc.float32)
    lid = dc.local_id(0)
    i = dc.global_id(0)
    sh[lid] = x[i]
    dc.barrier()
    for _ in range(iters):
        left = sh[lid - 1] if lid > 0 else sh[lid]
        right = sh[lid + 1] if lid < GROUP - 1 else sh[lid]
        v = (left + sh[lid] + right) / 3.0
        dc.barrier()
        sh[lid] = v
        dc.barrier()
    out[i] = sh[lid]


def _smooth_ref(x, iters, out):
    g = x.reshape(-1, GROUP).copy()
    for _ in range(iters):
        left = np.concatenate([g[:, :1], g[:, :-1]], axis=1)
        right = np.concatenate([g[:, 1:], g[:, -1:]], axis=1)
        g = (left + g + right) / np.float32(3)
    out[:] = g.reshape(-1)


_add("barrier_in_uniform_loop", smooth_shared,
     lambda r: [r.standard_normal(2 * GROUP).astype(np.float32), 6, np.zeros(2 * GROUP, np.float32)], 2 * GROUP,
     [2], _smooth_ref, local_size=GROUP, rtol=1e-5, atol=1e-6, tags=["barrier"])


@dc.kernel
def matmul_tiled(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2], c: dc.Buffer[dc.float32, 2]):
    ta = dc.shared((TILE, TILE), dc.float32)
    tb = dc.shared((TILE, TILE), dc.float32)
    row = dc.global_id(0)
    col = dc.global_id(1)
    lr = dc.local_id(0)
    lc = dc.local_id(1)
    n = a.shape[1]
    acc = dc.float32(0.0)
    for t in range((n + TILE - 1) // TILE):
        ac = t * TILE + lc
        br = t * TILE + lr
        ta[lr, lc] = a[row, ac] if row < a.shape[0] and ac < n else 0.0
        tb[lr, lc] = b[br, col] if br < n and col < b.shape[1] else 0.0
        dc.barrier()
        for k in range(TILE):
            acc += ta[lr, k] * tb[k, lc]
        dc.barrier()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


def _matmul_ref(a, b, c):
    c[:] = a @ b


_add("tiled_matmul", matmul_tiled,
     lambda r: [_ints(r, -4, 5, 16 * 20, np.float32).reshape(16, 20),
                _ints(r, -4, 5, 20 * 16, np.float32).reshape(20, 16), np.zeros((16, 16), np.float32)],
     (16, 16), [2], _matmul_ref, local_size=(TILE, TILE), tags=["barrier"])


@dc.kernel
def transpose_tiled(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    tile = dc.shared((TILE, TILE + 1), dc.float32)
    gx = dc.group_id(0) * TILE
    gy = dc.group_id(1) * TILE
    lx = dc.local_id(0)
    ly = dc.local_id(1)
    if gx + lx < a.shape[0] and gy + ly < a.shape[1]:
        tile[lx, ly] = a[gx + lx, gy + ly]
    dc.barrier()
    orow = gy + lx
    ocol = gx + ly
    if orow < out.shape[0] and ocol < out.shape[1]:
        out[orow, ocol] = tile[ly, lx]


def _transpose_ref(a, out):
    out[:] = a.T


_add("transpose_shared_tile", transpose_tiled,
     lambda r: [r.standard_normal((16, 24)).astype(np.float32), np.zeros((24, 16), np.float32)], (16, 24), [1],
     _transpose_ref, local_size=(TILE, TILE), tags=["barrier"])


@dc.kernel
def propagate_max_until_stable(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32], rounds: dc.Buffer[dc.int32]):
    # A barrier inside a while loop whose trip count is data-dependent but uniform: every item
    # reads the shared flag after the same barrier.
    sh = dc.shared((GROUP,), dc.int32)
    changed = dc.shared((1,), dc.int32)
    lid = dc.local_id(0)
    sh[lid] = x[dc.global_id(0)]
    if lid == 0:
        changed[0] = 1
    dc.barrier()
    n = 0
    while changed[0] != 0:
        dc.barrier()
        if lid == 0:
            changed[0] = 0
        left = sh[lid - 1] if lid > 0 else sh[lid]
        v = max(sh[lid], left)
        dc.barrier()
        if v != sh[lid]:
            sh[lid] = v
            changed[0] = 1
        n += 1
        dc.barrier()
    out[dc.global_id(0)] = sh[lid]
    if lid == 0:
        rounds[dc.group_id(0)] = n


def _propagate_ref(x, out, rounds):
    for g, row in enumerate(x.reshape(-1, GROUP)):
        out[g * GROUP:(g + 1) * GROUP] = np.maximum.accumulate(row)
        cur, n = row.copy(), 0
        while True:
            n += 1
            nxt = np.maximum(cur, np.concatenate([cur[:1], cur[:-1]]))
            if (nxt == cur).all():
                break
            cur = nxt
        rounds[g] = n


_add("barrier_in_data_dependent_while", propagate_max_until_stable,
     lambda r: [_ints(r, -1000, 1000, 3 * GROUP, np.int32), np.zeros(3 * GROUP, np.int32), np.zeros(3, np.int32)],
     3 * GROUP, [1, 2], _propagate_ref, local_size=GROUP, tags=["barrier"])


NBINS = 8


@dc.kernel
def histogram_shared(x: dc.Buffer[dc.int32], hist: dc.Buffer[dc.int32]):
    # per-group histogram in work-group memory (shared atomics), then one global atomic per bin
    local = dc.shared((NBINS,), dc.int32)
    lid = dc.local_id(0)
    if lid < NBINS:
        local[lid] = 0
    dc.barrier()
    i = dc.global_id(0)
    if i < x.shape[0]:
        dc.atomic_add(local, x[i] % NBINS, 1)
    dc.barrier()
    if lid < NBINS:
        dc.atomic_add(hist, lid, local[lid])


def _hist_shared_ref(x, hist):
    hist[:] = np.bincount(x % NBINS, minlength=NBINS)


_add("histogram_shared_atomics", histogram_shared,
     lambda r: [_ints(r, -100, 100, 4 * GROUP, np.int32), np.zeros(NBINS, np.int32)], 4 * GROUP, [1],
     _hist_shared_ref, local_size=GROUP, tags=["barrier", "atomic"])


@dc.kernel
def many_params(a: dc.Buffer[dc.float32], b: dc.Buffer[dc.float64], c: dc.Buffer[dc.int32, 2],
                d: dc.Buffer[dc.int64, 3], e: dc.int32, f: dc.float32, g: dc.Buffer[dc.uint32], h: dc.int64,
                k: dc.float64, m: dc.Buffer[dc.bool_], out: dc.Buffer[dc.float64, 2]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i, 0] = a[i] + b[i]
        out[i, 1] = c[i, 1] + d[i, 1, 2] + e
        out[i, 2] = f * g[i] + h
        out[i, 3] = k if m[i] else -k
        out[i, 4] = c.shape[1] + d.shape[2] * 10 + d.shape[1] * 100


def _many_params_ref(a, b, c, d, e, f, g, h, k, m, out):
    out[:, 0] = a.astype(np.float64) + b
    out[:, 1] = c[:, 1] + d[:, 1, 2] + e
    # numpy 2's promotion (NEP 50): float32 with uint32 or int64 is float64
    out[:, 2] = np.float32(f) * g + np.int64(h)
    out[:, 3] = np.where(m, k, -k)
    out[:, 4] = c.shape[1] + d.shape[2] * 10 + d.shape[1] * 100


_add("many_parameters_mixed_kinds", many_params,
     lambda r: [r.standard_normal(20).astype(np.float32), r.standard_normal(20), _ints(r, -9, 9, 60, np.int32)
                .reshape(20, 3), r.integers(-9, 9, (20, 2, 4)).astype(np.int64), -5, 0.5,
                r.integers(0, 100, 20).astype(np.uint32), 2**40, 0.25, r.integers(0, 2, 20).astype(bool),
                np.zeros((20, 5), np.float64)],
     20, [10], _many_params_ref, rtol=1e-12)


BIG = 100_003


def _saxpy_big_args(r: np.random.Generator) -> Args:
    return [-1.5, r.standard_normal(BIG).astype(np.float32), r.standard_normal(BIG).astype(np.float32),
            np.zeros(BIG, np.float32)]


# a prime length: no vector width or group size divides it (loop tails everywhere)
_add("saxpy_large_prime_length", saxpy, _saxpy_big_args, BIG, [3], _saxpy_ref, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Atomics


@dc.kernel
def atomic_ops(x: dc.Buffer, cfg: dc.Buffer, acc: dc.Buffer, olds: dc.Buffer, won: dc.Buffer[dc.int32]):
    # cfg[0] is the sentinel that acc[4] and acc[5] start with
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        dc.atomic_add(acc, 0, v)
        dc.atomic_sub(acc, 1, v)
        dc.atomic_min(acc, 2, v)
        dc.atomic_max(acc, 3, v)
        olds[i] = dc.atomic_exchange(acc, 4, v)
        old = dc.atomic_cas(acc, 5, cfg[0], v)
        won[i] = 1 if old == cfg[0] else 0


def _atomic_args(dtype: Any) -> Callable[[np.random.Generator], Args]:
    def make(r: np.random.Generator) -> Args:
        n = 256
        x = r.permutation(np.arange(-n // 2, n // 2)).astype(dtype)  # distinct values
        sentinel = 10 ** 6
        acc = np.array([0, 0, sentinel, -sentinel, sentinel, sentinel], dtype)
        return [x, np.array([sentinel], dtype), acc, np.zeros(n, dtype), np.zeros(n, np.int32)]
    return make


def _atomic_check(results: Args, inputs: Args) -> None:
    x, cfg = inputs[0], inputs[1]
    acc, olds, won = (np.asarray(a) for a in results[2:5])
    assert acc[0] == x.sum(), f"atomic_add: {acc[0]} != {x.sum()}"
    assert acc[1] == -x.sum(), f"atomic_sub: {acc[1]} != {-x.sum()}"
    assert acc[2] == x.min(), f"atomic_min: {acc[2]} != {x.min()}"
    assert acc[3] == x.max(), f"atomic_max: {acc[3]} != {x.max()}"
    # every exchange returns what the previous one stored: the olds plus the final value are
    # the inputs plus the sentinel, each exactly once
    seen = np.sort(np.concatenate([olds, acc[4:5]]))
    assert np.array_equal(seen, np.sort(np.concatenate([x, cfg]))), "atomic_exchange lost or duplicated values"
    assert won.sum() == 1, f"atomic_cas: {won.sum()} work-items saw the sentinel (expected exactly 1)"
    assert acc[5] == x[np.argmax(won)], "atomic_cas: the stored value is not the winner's"


for _dt in ("int32", "int64", "float32", "float64"):
    _add(f"atomics_{_dt}", atomic_ops, _atomic_args(_dt), 256, [2, 3, 4], check=_atomic_check,
         tags=["atomic"] + (["no-metal"] if _dt == "int64" else []))  # Metal has 32-bit atomics only


@dc.kernel
def histogram(x: dc.Buffer[dc.float32], lo: dc.float32, hi: dc.float32, hist: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        nb = hist.shape[0]
        b = int((x[i] - lo) / (hi - lo) * dc.float32(nb))  # stays float32 (Metal has no float64)
        b = min(max(b, 0), nb - 1)
        dc.atomic_add(hist, b, 1)


def _histogram_ref(x, lo, hi, hist):
    hist[:] = np.bincount(np.clip(np.floor(x).astype(np.int64), 0, 15), minlength=16)


_add("histogram_atomic_add", histogram,
     lambda r: [(r.integers(-2, 18, 500) + 0.5).astype(np.float32), 0.0, 16.0, np.zeros(16, np.int32)], 500, [3],
     _histogram_ref, tags=["atomic"])


@dc.kernel
def compact_positive(x: dc.Buffer[dc.int32], counter: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i < x.shape[0] and x[i] > 0:
        slot = dc.atomic_add(counter, 0, 1)
        out[slot] = x[i]


def _compact_check(results: Args, inputs: Args) -> None:
    x = inputs[0]
    counter, out = np.asarray(results[1]), np.asarray(results[2])
    pos = x[x > 0]
    assert counter[0] == len(pos), f"counter {counter[0]} != {len(pos)}"
    assert np.array_equal(np.sort(out[: len(pos)]), np.sort(pos)), "compacted values differ"
    assert (out[len(pos):] == -1).all(), "slots beyond the count were written"


_add("stream_compaction_atomic_old_value", compact_positive,
     lambda r: [_ints(r, -50, 50, 300, np.int32), np.zeros(1, np.int32), np.full(300, -1, np.int32)], 300, [1, 2],
     check=_compact_check, tags=["atomic"])


# ---------------------------------------------------------------------------------------------
# Real-world kernels


@dc.kernel
def laplacian(u: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if 0 < i < u.shape[0] - 1 and 0 < j < u.shape[1] - 1:
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
    elif i < u.shape[0] and j < u.shape[1]:
        out[i, j] = 0.0


def _laplacian_ref(u, out):
    out[:] = 0
    out[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]


_add("stencil_laplacian", laplacian,
     lambda r: [_ints(r, -9, 9, 20 * 17, np.float32).reshape(20, 17), np.full((20, 17), 99, np.float32)], (20, 17),
     [1], _laplacian_ref)


@dc.kernel
def softmax_rows(x: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    r = dc.global_id(0)
    if r >= x.shape[0]:
        return
    m = x[r, 0]
    for c in range(1, x.shape[1]):
        m = max(m, x[r, c])
    s = dc.float32(0.0)
    for c in range(x.shape[1]):
        e = math.exp(x[r, c] - m)
        out[r, c] = e
        s += e
    for c in range(x.shape[1]):
        out[r, c] /= s


def _softmax_ref(x, out):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    out[:] = e / e.sum(axis=1, keepdims=True)


_add("softmax_rows", softmax_rows,
     lambda r: [(r.standard_normal((24, 33)) * 3).astype(np.float32), np.zeros((24, 33), np.float32)], 24, [1],
     _softmax_ref, rtol=1e-5, atol=1e-7)


SOFTENING = 1e-3


@dc.kernel
def nbody_step(pos: dc.Buffer[dc.float32, 2], vel: dc.Buffer[dc.float32, 2], dt: dc.float32,
               new_pos: dc.Buffer[dc.float32, 2], new_vel: dc.Buffer[dc.float32, 2]):
    # pos[i] = (x, y, z, mass)
    i = dc.global_id(0)
    n = pos.shape[0]
    if i >= n:
        return
    ax = dc.float32(0.0)
    ay = dc.float32(0.0)
    az = dc.float32(0.0)
    for j in range(n):
        dx = pos[j, 0] - pos[i, 0]
        dy = pos[j, 1] - pos[i, 1]
        dz = pos[j, 2] - pos[i, 2]
        d2 = dx * dx + dy * dy + dz * dz + SOFTENING
        inv = pos[j, 3] / (d2 * math.sqrt(d2))
        ax += dx * inv
        ay += dy * inv
        az += dz * inv
    new_vel[i, 0] = vel[i, 0] + dt * ax
    new_vel[i, 1] = vel[i, 1] + dt * ay
    new_vel[i, 2] = vel[i, 2] + dt * az
    for k in range(3):
        new_pos[i, k] = pos[i, k] + dt * new_vel[i, k]
    new_pos[i, 3] = pos[i, 3]


def _nbody_ref(pos, vel, dt, new_pos, new_vel):
    p = pos.astype(np.float64)
    d = p[None, :, :3] - p[:, None, :3]
    d2 = (d ** 2).sum(axis=2) + SOFTENING
    inv = p[None, :, 3] / (d2 * np.sqrt(d2))
    a = (d * inv[:, :, None]).sum(axis=1)
    new_vel[:] = vel + dt * a
    new_pos[:, :3] = pos[:, :3] + dt * new_vel
    new_pos[:, 3] = pos[:, 3]


_add("nbody_step", nbody_step,
     lambda r: [np.concatenate([r.uniform(-1, 1, (48, 3)), r.uniform(0.1, 1, (48, 1))], axis=1).astype(np.float32),
                r.uniform(-0.1, 0.1, (48, 3)).astype(np.float32), 0.01, np.zeros((48, 4), np.float32),
                np.zeros((48, 3), np.float32)],
     48, [3, 4], _nbody_ref, rtol=1e-3, atol=1e-4)


MAX_ITER = 60


@dc.kernel
def mandelbrot(out: dc.Buffer[dc.int32, 2], x0: dc.float32, y0: dc.float32, step: dc.float32):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        cr = x0 + dc.float32(j) * step
        ci = y0 + dc.float32(i) * step
        zr = dc.float32(0.0)
        zi = dc.float32(0.0)
        n = 0
        while n < MAX_ITER:
            if zr * zr + zi * zi > 4.0:
                break
            t = zr * zr - zi * zi + cr
            zi = 2.0 * zr * zi + ci
            zr = t
            n += 1
        out[i, j] = n


def _mandelbrot_check(results: Args, inputs: Args) -> None:
    out = np.asarray(results[0])
    x0, y0, step = (np.float32(v) for v in inputs[1:4])
    want = np.zeros_like(out)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            cr, ci = x0 + np.float32(j) * step, y0 + np.float32(i) * step
            zr = zi = np.float32(0)
            n = 0
            while n < MAX_ITER and zr * zr + zi * zi <= 4:
                zr, zi = zr * zr - zi * zi + cr, np.float32(2) * zr * zi + ci
                n += 1
            want[i, j] = n
    # float contraction (FMA) may flip a few points on the set's boundary; nothing else may differ
    bad = np.count_nonzero(out != want)
    assert bad <= out.size // 50, f"mandelbrot: {bad} of {out.size} points differ"
    assert (out >= 0).all() and (out <= MAX_ITER).all()


_add("mandelbrot", mandelbrot, lambda r: [np.full((24, 32), -1, np.int32), -2.0, -1.125, 0.09375], (24, 32), [0],
     check=_mandelbrot_check)


__all__ = ["Case", "CASES", "case_by_id", "build_args", "copy_args", "uses_float64", "runs_on_metal",
           "uses_barrier", "verify", "emit_source", "expand_args"]
