"""``matmul(a, b, out=None)`` and ``a @ b`` for Buffers: 1-D, 2-D and batched 3-D, numpy's rules.

Paths (ops/dispatch.py): numpy (OpenBLAS) on host-memory buffers, zero-copy; CLBlast on OpenCL
devices where it is installed (ops/clblast.py; on CPU-type OpenCL devices only when preferred:
numpy on a host copy is faster there), cuBLAS on real CUDA devices (ops/cublas.py); the
register-blocked tiled kernel of matmul_kernels.py elsewhere or when forced (on CPU-type OpenCL
devices its barrier-free blocked kernel instead); numpy on a host copy
for dtypes kernels lack (complex on devices). A vendor GEMM checks itself against the tiled kernel
at its first use per device and dtype (ops/selfcheck.py) and is not used where it fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Buffer
from ..runtime.buffer import OPS_HOOKS
from . import clblast, cublas, dispatch, selfcheck
from . import matmul_kernels as mk
from .arrays import flat, operand, result, shaped


def _out_shape(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    if not sa or not sb:
        raise ValueError(f"dc.matmul: operands must have at least one dimension, got shapes {sa} and {sb}")
    if len(sa) > 3 or len(sb) > 3:
        raise ValueError(f"dc.matmul: operands have 1 to 3 dimensions, got shapes {sa} and {sb}")
    ka = sa[-1]
    kb = sb[-2] if len(sb) > 1 else sb[0]
    if ka != kb:
        raise ValueError(f"dc.matmul: shapes {sa} and {sb} do not align: {ka} (last of a) != {kb} (of b)")
    try:
        return np.broadcast_shapes(sa[:-2], sb[:-2]) + sa[-2:-1] + sb[-1:] * (len(sb) > 1)
    except ValueError:
        raise ValueError(f"dc.matmul: the batch dimensions of shapes {sa} and {sb} do not broadcast") from None


def matmul(a: Any, b: Any, out: Buffer | None = None, *, accelerator: Any = "auto",
           kernel: str = "tiled") -> Any:
    """Matrix product with numpy's rules: 2-D @ 2-D, batched 3-D (a 2-D operand broadcasts), 1-D vectors.

    ``out``: a Buffer of the result's shape and dtype to write into. ``kernel``: the portable kernel
    when it runs, ``"tiled"`` (register-blocked, the default) or ``"naive"`` (for comparisons).
    """
    if not isinstance(a, Buffer) and isinstance(b, Buffer) and accelerator in (None, "auto"):
        accelerator = b.accelerator  # numpy @ Buffer: the product runs where the Buffer is
    oa = operand("dc.matmul", a, accelerator, "a")
    ob = operand("dc.matmul", b, oa.acc if oa.buf is not None else accelerator, "b")
    if oa.acc is not ob.acc:
        raise ValueError(f"dc.matmul: a is on {oa.acc.id} and b on {ob.acc.id}")
    shape = _out_shape(oa.shape, ob.shape)
    ro = ob if oa.is_numpy and not ob.is_numpy else oa  # a Buffer among the operands: a Buffer out
    dtype = np.result_type(oa.dtype, ob.dtype)
    if dtype == np.bool_ or dtype.kind not in "iufc":
        raise TypeError(f"dc.matmul: dtype {dtype} is not supported (integers, floats and complex are)")
    if out is not None:
        if not isinstance(out, Buffer):
            raise TypeError(f"dc.matmul: out must be a dc.Buffer, got {type(out).__name__}")
        if out.shape != shape:
            raise ValueError(f"dc.matmul: out has shape {out.shape}, the result {shape}")
        if out.dtype != dtype:
            raise TypeError(f"dc.matmul: out has dtype {out.dtype}, the result {dtype}")
        if out.accelerator is not oa.acc:
            raise ValueError(f"dc.matmul: out is on {out.accelerator.id}, the operands on {oa.acc.id}")
    if kernel not in ("tiled", "naive"):
        raise ValueError(f"dc.matmul: kernel must be 'tiled' or 'naive', got {kernel!r}")
    if out is not None and getattr(out, "_view", None) is not None:
        # a view (w[i:j]) has no memory of its own: a library writing "into" it would write into a
        # copy; compute the product, then write it through the view into the base buffer
        out.copy_from(matmul(a, b, accelerator=accelerator, kernel=kernel))
        return out
    lib = None
    if kernel == "tiled":
        lib = "clblast" if clblast.applies(oa.acc, dtype) else "cublas" if cublas.applies(oa.acc, dtype) else None
    path = dispatch.choose("matmul", oa.acc, dtype, vendor=dispatch.device_vendor("matmul", oa.acc, lib is not None),
                           library=lib)
    if path == "vendor" and lib is not None:
        mod = clblast if lib == "clblast" else cublas
        try:
            if _gemm_trusted(mod, lib, oa.acc, np.dtype(dtype)):
                return result(ro, _vendor_gemm(mod, oa, ob, shape, np.dtype(dtype), out))
            path = dispatch.choose("matmul", oa.acc, dtype, vendor=False)  # failed its self-check: warned
        except (clblast.CLBlastError, cublas.CuBLASError) as exc:
            path = dispatch.vendor_failed("matmul", oa.acc, lib, exc, dtype)
    if path in ("vendor", "host"):
        ha = oa.on_host(path)
        hb = ob.on_host(path)
        if path == "vendor" and not oa.is_numpy and dtype == np.result_type(ha.dtype, hb.dtype):
            # numpy writes straight into the result buffer's host memory: no copy afterwards
            target = out if out is not None else oa.acc.empty(shape, dtype)
            with target.host() as view:
                np.matmul(ha, hb, out=view)
            return target
        value = np.matmul(ha, hb)
        if out is not None:
            out.copy_from(value)
            return out
        # a vector @ vector is 0-d: np.ascontiguousarray would make it shape (1,)
        return result(ro, np.asarray(value, order="C"))
    return result(ro, _portable(oa, ob, shape, np.dtype(dtype), out, kernel))


def _gemm_trusted(mod: Any, lib: str, acc: Any, dtype: np.dtype) -> bool:
    """The vendor GEMM's self-check (ops/selfcheck.py) on ``acc`` for ``dtype``: a batched product
    with distinct m, n, k (a swapped leading dimension or transpose shows) and one whose second
    operand is shared by the batch (stride 0), against the portable tiled kernel."""
    rng = np.random.default_rng(23)
    batch, m, k, n = 2, 5, 7, 3
    a = rng.standard_normal((batch, m, k)).astype(dtype)
    b = rng.standard_normal((batch, k, n)).astype(dtype)
    b2 = rng.standard_normal((k, n)).astype(dtype)

    def vendor() -> np.ndarray:
        ba, bb, bb2 = acc.asarray(a), acc.asarray(b), acc.asarray(b2)
        c, c2 = acc.empty((batch, m, n), dtype), acc.empty((batch, m, n), dtype)
        mod.gemm(ba, bb, c, batch, m, n, k, m * k, k * n)
        mod.gemm(ba, bb2, c2, batch, m, n, k, m * k, 0)
        return np.concatenate([c.numpy(), c2.numpy()])

    def portable() -> np.ndarray:
        with dispatch.internal("portable"):
            ba = acc.asarray(a)
            return np.concatenate([matmul(ba, acc.asarray(b)).numpy(), matmul(ba, acc.asarray(b2)).numpy()])

    return selfcheck.trusted(lib, "gemm", acc, dtype, mod.identity(), vendor, portable)


def _vendor_gemm(lib: Any, oa: Any, ob: Any, shape: tuple[int, ...], dtype: np.dtype, out: Buffer | None) -> Buffer:
    """The product by the strided-batched GEMM of ``lib`` (ops/clblast.py, ops/cublas.py) on the
    operands' device memory."""
    acc = oa.acc
    ba, bb = oa.device(), ob.device()
    if ba.dtype != dtype:
        ba = acc.asarray(ba.numpy().astype(dtype))
    if bb.dtype != dtype:
        bb = acc.asarray(bb.numpy().astype(dtype))
    za, m, k = _as_3d(ba.shape, False)
    zb, _, n = _as_3d(bb.shape, True)
    batch = max(za, zb)
    c = out if out is not None else acc.empty(shape, dtype)
    if c.size == 0:
        return c
    if k == 0:
        c.copy_from(np.zeros(shape, dtype))
        return c
    # a 2-D operand of a batched product is the same matrix for every batch: stride 0
    lib.gemm(ba, bb, c, batch, m, n, k, m * k if za > 1 else 0, k * n if zb > 1 else 0)
    return c


def _as_3d(shape: tuple[int, ...], is_b: bool) -> tuple[int, int, int]:
    if len(shape) == 1:  # numpy: a vector is a row (as a) or a column (as b)
        return (1, shape[0], 1) if is_b else (1, 1, shape[0])
    if len(shape) == 2:
        return (1, *shape)
    return shape  # type: ignore[return-value]


def _portable(oa: Any, ob: Any, shape: tuple[int, ...], dtype: np.dtype, out: Buffer | None, kernel: str) -> Buffer:
    acc = oa.acc
    ba, bb = oa.device(), ob.device()
    if ba.dtype != dtype:
        ba = acc.asarray(ba.numpy().astype(dtype))
    if bb.dtype != dtype:
        bb = acc.asarray(bb.numpy().astype(dtype))
    za, m, k = _as_3d(ba.shape, False)
    zb, _, n = _as_3d(bb.shape, True)
    batch = max(za, zb)
    if kernel == "naive":
        c = acc.empty((batch * m * n,), dtype)
        if c.size and k:
            acc.launch(mk.naive_kernel(dtype.type), (batch, m, n), flat(ba), flat(bb), c, m, n, k,
                       m * k if za > 1 else 0, k * n if zb > 1 else 0)
    else:
        # the tiled kernel reads A and B and writes C in their own shapes (no flattening copies);
        # a product whose result is not a matrix or a batch of them (a vector operand) writes flat
        matrix_out = len(shape) >= 2 and len(shape) == max(ba.ndim, bb.ndim)
        # out (same device, shape and dtype; not a view: checked by matmul) takes the result directly
        c = out if out is not None and matrix_out else acc.empty(shape if matrix_out else (batch * m * n,), dtype)
        if c.size and k and acc.backend == "opencl" and acc.type == "cpu":
            _blocked(acc, ba, bb, c, m, n, k, batch, zb, dtype, za > 1, zb > 1)
        elif c.size and k:
            cols = -(-n // mk.TILE) * mk.LOCAL
            rows = -(-m // mk.TILE) * mk.LOCAL
            # columns on dimension 0: the CPU backend's vectorised loop and a GPU's warp lanes
            # (coalesced loads, no bank conflicts)
            nd = (ba.ndim, bb.ndim, c.ndim)
            acc.launch(mk.tiled_kernel(dtype.type, 0, nd), (cols, rows, batch), ba, bb, c, m, n, k,
                       int(za > 1), int(zb > 1), local_size=(mk.LOCAL, mk.LOCAL, 1))
    if c.size and not k:
        c.copy_from(np.zeros(c.shape, dtype))
    if c is out:
        return out
    res = c if c.shape == shape else shaped(c, shape)
    if out is not None:
        out.copy_from(res) if out.accelerator.unified_memory else _device_copy(res, out)
        return out
    return res


def _blocked(acc: Any, ba: Buffer, bb: Buffer, c: Buffer, m: int, n: int, k: int, batch: int, zb: int,
             dtype: np.dtype, a_batched: bool, b_batched: bool) -> None:
    """The barrier-free blocked kernel (CPU-type OpenCL devices, PoCL): B packed once to a padded
    row stride (an O(k·n) copy beside the O(m·n·k) product), then 8×16 blocks of C per item."""
    width = mk.packed_width(n)
    bp = acc.empty((zb * k, width), dtype)
    acc.launch(mk.pack_kernel(dtype.type, bb.ndim), (width, k, zb), bb, bp, n, k)
    cols = (width - mk.BLOCK_PAD) // mk.BLOCK_COLS  # items along the columns: whole work-groups
    row_items = -(-m // mk.BLOCK)
    # a work-group of 8×8 items where there are 8 rows of blocks (a multiple of the 8- and
    # 16-lane vectors); one row of items for a few rows of C (a vector @ matrix: m = 1)
    ly = mk.BLOCK_LOCAL if row_items >= mk.BLOCK_LOCAL else 1
    rows = -(-row_items // ly) * ly
    acc.launch(mk.blocked_kernel(dtype.type, (ba.ndim, bb.ndim, c.ndim)), (cols, rows, batch), ba, bp, c,
               m, n, k, int(a_batched), int(b_batched), local_size=(mk.BLOCK_LOCAL, ly, 1))


def _device_copy(src: Buffer, dst: Buffer) -> None:
    # no device-to-device copy in the runtime yet: through the host
    dst.copy_from(src.numpy())


def _buffer_matmul(a: Any, b: Any) -> Any:
    return matmul(a, b)


OPS_HOOKS["matmul"] = _buffer_matmul

__all__ = ["matmul"]
