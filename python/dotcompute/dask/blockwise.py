"""``map_blocks`` and ``map_overlap``: a kernel launch per block of Dask arrays."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import dask.array as da
import numpy as np

from .blocks import pick, run_block
from .outputs import OutputPlan, check_scalars, is_array, plan_outputs
from .placement import check_spec

_BOUNDARIES = ("reflect", "periodic", "nearest", "none")


def _as_dask(args: Sequence[Any]) -> list[Any]:
    return [da.asarray(a) if isinstance(a, np.ndarray) else a for a in args]


def _local_size(local_size: Any) -> tuple[int, ...] | None:
    if local_size is None:
        return None
    ls = (local_size,) if isinstance(local_size, (int, np.integer)) else tuple(local_size)
    if not ls or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0 for v in ls):
        raise ValueError(f"local_size must be a positive int or a tuple of positive ints, got {local_size!r}")
    return tuple(int(v) for v in ls)


def _check_tiling(name: str, chunks: tuple[tuple[int, ...], ...], local_size: tuple[int, ...] | None) -> None:
    """Every block (for map_overlap: the grown blocks the kernel sees) must be a whole number of
    work-groups when a local size is given."""
    if local_size is None:
        return
    if len(local_size) != len(chunks):
        raise ValueError(f"{name}: local_size {local_size} has {len(local_size)} dimension(s), the blocks "
                         f"have {len(chunks)}")
    bad = set()
    if any(_unknown(*c) for c in chunks):
        return  # sizes known only when computed: each launch checks its own block
    for shape in itertools.product(*chunks):
        if any(n % g for n, g in zip(shape, local_size, strict=True)):
            bad.add(shape)
    if bad:
        raise ValueError(f"{name}: local_size {local_size} does not tile the block shape(s) "
                         f"{sorted(bad)}; rechunk to multiples of it or leave local_size=None")


def _accelerator(accelerator: Any) -> Any:
    """The ``accelerator=`` spec as strings: it travels to the workers, which may have devices this
    client lacks, so it is checked for its form here and resolved there."""
    if accelerator is None:
        return accelerator
    if isinstance(accelerator, str):
        return check_spec(accelerator)
    if hasattr(accelerator, "id") and hasattr(accelerator, "backend"):  # a dc.Accelerator
        return accelerator.id
    if isinstance(accelerator, (list, tuple)) and accelerator:
        return tuple(_accelerator(a) for a in accelerator)
    raise TypeError(f"accelerator must be None, a spec such as 'cpu' or 'cuda:1', a dc.Accelerator, or a "
                    f"non-empty list of them, not {accelerator!r}")


def _check_first_is_widest(name: str, args: Sequence[Any]) -> None:
    """Outputs are shaped like the first array's blocks, so it must have the most dimensions (the others
    broadcast against it, aligned on the trailing axes as in ``da.map_blocks``)."""
    arrays = [a for a in args if is_array(a)]
    if any(a.ndim > arrays[0].ndim for a in arrays[1:]):
        raise ValueError(f"{name}: the first array argument ({arrays[0].ndim}-d) sets the outputs' block shape, "
                         f"so it needs the most dimensions; got arrays of {[a.ndim for a in arrays]} dimensions")


def _aligned(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` with every array rechunked to blocks that line up element for element with the first
    array's, as Dask's elementwise operations do (``x + y`` and ``x * w`` work whatever the chunks).

    Arrays are matched on the trailing axes (a 1-D weight vector beside a 2-D image); an axis of
    length 1 broadcasts and keeps its single block. ``da.map_blocks`` itself refuses different block
    counts, and silently pairs blocks of different sizes when the counts happen to agree (one block
    of a whole vector beside the half-blocks of an image), so a kernel would index the wrong elements.
    Lengths that neither match nor broadcast raise here, as ``x + y`` would.
    """
    arrays = [i for i, a in enumerate(args) if is_array(a)]
    if len(arrays) < 2:
        return args
    first = args[arrays[0]]
    n = first.ndim
    for i in arrays[1:]:
        a = args[i]
        for d in range(a.ndim):
            fd = n - a.ndim + d
            if a.shape[d] != first.shape[fd] and a.shape[d] != 1 and not _unknown(a.shape[d], first.shape[fd]):
                raise ValueError(f"{name}: argument {i} has shape {a.shape}, which does not match the first "
                                 f"array argument's {first.shape} (axes aligned on the right; a length must be "
                                 f"equal or 1)")
    # per axis of the first array: the union of every matching array's block boundaries
    target = []
    for fd in range(n):
        along = {args[i].chunks[fd - (n - args[i].ndim)] for i in arrays
                 if fd - (n - args[i].ndim) >= 0
                 and not (args[i].shape[fd - (n - args[i].ndim)] == 1 and first.shape[fd] != 1)}
        if len(along) == 1:  # already common (empty blocks included): leave them
            target.append(along.pop())
            continue
        if any(_unknown(*chunks) for chunks in along):
            # unknown chunk sizes (after boolean indexing) cannot be recut; as in da.map_blocks the blocks
            # are paired by position, which needs as many blocks in each
            if len({len(c) for c in along}) > 1:
                raise ValueError(f"{name}: the array arguments have unknown chunk sizes along axis {fd} "
                                 f"({' vs '.join(map(str, sorted(along, key=len)))}) and different numbers of "
                                 f"blocks there; call .compute_chunk_sizes() on them first")
            target.append(None)
            continue
        cuts = {c for chunks in along for c in itertools.accumulate(chunks)}
        bounds = sorted(cuts | {0})
        target.append(tuple(b - a for a, b in itertools.pairwise(bounds)) or (first.shape[fd],))
    out = list(args)
    for i in arrays:
        a = args[i]
        want = tuple(a.chunks[d] if (a.shape[d] == 1 and first.shape[n - a.ndim + d] != 1)
                     or target[n - a.ndim + d] is None else target[n - a.ndim + d] for d in range(a.ndim))
        if want != a.chunks:
            out[i] = a.rechunk(want)
    return tuple(out)


def _unknown(*sizes: float) -> bool:
    """Whether any of these lengths is Dask's NaN for "not known until computed"."""
    return any(isinstance(v, float) and math.isnan(v) for v in sizes)


def _outputs(blocks: Any, plan: OutputPlan) -> Any:
    if len(plan.dtypes) == 1:
        return blocks
    return tuple(blocks.map_blocks(pick, i, dtype=d, meta=np.empty((0,) * blocks.ndim, d))
                 for i, d in enumerate(plan.dtypes))


def map_blocks(kernel: Any, *args: Any, outputs: Any = None, accelerator: Any = None, local_size: Any = None,
               name: str | None = None) -> Any:
    """Run ``kernel`` once per block of the Dask array arguments; returns the output Dask array(s).

    ``args`` are the kernel's non-output parameters in order: Dask (or numpy) arrays and scalars.
    Outputs are the written-only buffer parameters (or ``outputs=``: names/positions, or a mapping to
    dtypes; required for a ``dc.RawKernel`` as ``{position: dtype}``), each allocated like the block of
    the first array argument; the global size is that block's shape. ``accelerator``: None uses the
    worker's pinned device or spreads blocks over its devices by throughput; a spec or a list of specs
    restricts that. Arrays of one shape with different chunks are rechunked to common blocks (as
    Dask's elementwise operations do); arrays of fewer dimensions broadcast as in ``da.map_blocks``.
    """
    check_scalars(args)
    args = tuple(_as_dask(args))
    accelerator = _accelerator(accelerator)
    if any(is_array(a) for a in args):
        _check_first_is_widest("map_blocks", args)
        args = _aligned("map_blocks", args)
    plan = plan_outputs(kernel, args, outputs)
    ls = _local_size(local_size)
    first = next(a for a in args if is_array(a))
    _check_tiling("map_blocks", first.chunks, ls)
    if len(plan.dtypes) == 1:
        dtype, meta = plan.dtypes[0], np.empty((0,) * first.ndim, plan.dtypes[0])
    else:
        dtype, meta = np.dtype(object), np.empty((0,) * first.ndim, object)
    blocks = da.map_blocks(run_block, kernel, plan, accelerator, ls, 1, *args, dtype=dtype, meta=meta,
                           token=name or f"dc-{getattr(kernel, 'name', 'kernel')}")
    return _outputs(blocks, plan)


def _depth(depth: Any, ndim: int) -> dict[int, int]:
    if isinstance(depth, (int, np.integer)) and not isinstance(depth, bool):
        per = {d: int(depth) for d in range(ndim)}
    elif isinstance(depth, (tuple, list)) and len(depth) == ndim:
        per = dict(enumerate(depth))
    elif isinstance(depth, dict) and all(isinstance(k, (int, np.integer)) and not isinstance(k, bool)
                                         and -ndim <= k < ndim for k in depth):
        keys = {int(k) % ndim: v for k, v in depth.items()}  # negative axes count from the end, as in Dask
        per = {d: keys.get(d, 0) for d in range(ndim)}
    else:
        raise ValueError(f"map_overlap: depth must be a non-negative int, a tuple of {ndim} of them, or a "
                         f"{{axis: int}} dict, got {depth!r}")
    for d, v in per.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"map_overlap: depth for axis {d} must be a non-negative int, got {v!r}")
    return {d: int(v) for d, v in per.items()}


def _boundaries(boundary: Any, ndim: int) -> dict[int, Any]:
    """``boundary`` per axis: one mode for all, or ``{axis: mode}`` (other axes ``"none"``, as in Dask)."""
    if isinstance(boundary, dict):
        if not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) and -ndim <= k < ndim
                   for k in boundary):
            raise ValueError(f"map_overlap: boundary dict keys must be axes of the {ndim}-d array, got {boundary!r}")
        modes = {int(k) % ndim: v for k, v in boundary.items()}
        out = {d: modes.get(d, "none") for d in range(ndim)}
    else:
        out = {d: boundary for d in range(ndim)}
    for mode in out.values():
        if isinstance(mode, str) and mode in _BOUNDARIES:
            continue
        if isinstance(mode, bool) or not isinstance(mode, (int, float, np.number)) or isinstance(mode, str):
            raise ValueError(f"map_overlap: boundary must be one of {', '.join(_BOUNDARIES)} or a number "
                             f"(or a {{axis: boundary}} dict of them), got {boundary!r}")
    return out


def _cut(args: tuple[Any, ...], target: Sequence[tuple[int, ...]]) -> tuple[Any, ...]:
    """Every array rechunked to ``target`` (the first array's chunks) on its trailing-aligned axes,
    except broadcast axes of length 1."""
    arrays = [i for i, a in enumerate(args) if is_array(a)]
    n = len(target)
    out = list(args)
    for i in arrays:
        a = args[i]
        want = tuple(a.chunks[d] if a.shape[d] == 1 and sum(target[n - a.ndim + d]) != 1 else target[n - a.ndim + d]
                     for d in range(a.ndim))
        if want != a.chunks:
            out[i] = a.rechunk(want)
    return tuple(out)


def map_overlap(kernel: Any, *args: Any, depth: Any, boundary: Any = "none", outputs: Any = None,
                accelerator: Any = None, local_size: Any = None, iterations: int = 1) -> Any:
    """``map_blocks`` over blocks grown by a halo of ``depth`` elements per side, trimmed afterwards.

    Dask exchanges the halos between neighbouring blocks; ``boundary`` fills them at the array's edges:
    ``"reflect"``, ``"periodic"``, ``"nearest"``, ``"none"`` (no halo there), a constant, or a
    ``{axis: boundary}`` dict. The kernel sees (and its outputs have) the grown block's shape. Chunks
    smaller than ``depth`` are merged with their neighbours first, as Dask's ``map_overlap`` does.

    ``iterations=k`` runs the kernel k times per block, each time on the previous result (a time loop
    with one halo exchange per k steps instead of one per step). The kernel must have one output with
    the first array's dtype, and ``depth`` must cover k steps of the stencil's reach (k x radius).
    Between the steps, the halo at the array's edges is filled again from the new values (nearest,
    reflect, constant), so the result equals k single steps.
    """
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"map_overlap: iterations must be a positive int, got {iterations!r}")
    iterations = int(iterations)
    check_scalars(args)
    args = tuple(_as_dask(args))
    accelerator = _accelerator(accelerator)
    arrays = [a for a in args if is_array(a)]
    if not arrays:
        raise ValueError("map_overlap needs at least one Dask array argument")
    _check_first_is_widest("map_overlap", args)
    args = _aligned("map_overlap", args)
    first = next(a for a in args if is_array(a))
    n = first.ndim
    per = _depth(depth, n)
    bounds = _boundaries(boundary, n)
    unknown = [d for d in range(n) if per[d] and _unknown(*first.chunks[d])]
    if unknown:
        # Dask's own message here is "The overlapping depth 1 is larger than your array nan"
        raise ValueError(f"map_overlap: the chunk sizes along axis {unknown[0]} are unknown (as after x[x > 0]); "
                         f"halos need them: call .compute_chunk_sizes() on the array first")
    if first.size == 0:
        per = {d: 0 for d in range(n)}  # nothing to exchange (and Dask refuses a depth beyond the array)
    # Dask's rule: a chunk smaller than the depth is merged into its neighbours (its halo must come
    # from the next block alone)
    target = [da.overlap.ensure_minimum_chunksize(per[d], first.chunks[d]) if per[d] and first.shape[d]
              else first.chunks[d] for d in range(n)]
    if any(t != c for t, c in zip(target, first.chunks, strict=True)):
        args = _cut(args, target)
        first = next(a for a in args if is_array(a))
    plan = plan_outputs(kernel, args, outputs)
    if iterations > 1 and (len(plan.dtypes) != 1 or plan.dtypes[0] != first.dtype):
        raise ValueError(f"map_overlap: iterations={iterations} needs a kernel with one output of the first "
                         f"array's dtype {first.dtype}; {getattr(kernel, 'name', kernel)!r} has outputs "
                         f"{dict(zip(plan.names, map(str, plan.dtypes), strict=True))}")
    ls = _local_size(local_size)

    def grow(a: Any) -> Any:
        # a lower-dimensional array's axes are the first array's trailing ones; a broadcast axis of
        # length 1 gets no halo (its single element goes with every block)
        off = n - a.ndim
        dep = {j: 0 if a.shape[j] == 1 and first.shape[off + j] != 1 else per[off + j] for j in range(a.ndim)}
        return da.overlap.overlap(a, depth=dep, boundary={j: bounds[off + j] for j in range(a.ndim)})

    # Dask's own map_overlap takes arrays only; this is its recipe (grow, map, trim) with scalars allowed
    grown = [grow(a) if is_array(a) else a for a in args]
    _check_tiling("map_overlap", next(a for a in grown if is_array(a)).chunks, ls)
    edges = (tuple(bounds[d] for d in range(n)), tuple(per[d] for d in range(n))) if iterations > 1 else None
    multi = len(plan.dtypes) > 1
    dtype = np.dtype(object) if multi else plan.dtypes[0]
    blocks = da.map_blocks(run_block, kernel, plan, accelerator, ls, iterations, *grown, edges=edges, dtype=dtype,
                           meta=np.empty((0,) * n, dtype), token=f"dc-{getattr(kernel, 'name', 'kernel')}")
    trimmed = [da.overlap.trim_internal(o, per, boundary=bounds) for o in
               (_outputs(blocks, plan) if multi else (blocks,))]
    return tuple(trimmed) if multi else trimmed[0]
