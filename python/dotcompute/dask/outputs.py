"""Which kernel parameters are outputs, and what each block's outputs look like.

A kernel-language kernel's outputs are its written-only buffer parameters (``Param.written`` and not
``Param.read`` in the IR's access analysis). They are left out of the ``map_blocks`` call; the other
parameters take the given arguments in order. A ``RawKernel`` says nothing about its accesses, so
its outputs are declared: ``outputs={position: dtype}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..lang import Kernel
from ..lang.kernel import fixed_type, type_of_argument
from ..lang.types import BufferAnnotation, BufferType, scalar_type
from ..runtime import RawKernel


@dataclass(frozen=True)
class OutputPlan:
    """How one block's launch arguments are assembled: ``outputs[j]`` is the parameter position of
    output ``j``, allocated with ``dtypes[j]`` and the shape of the block of the first array input."""

    n_params: int
    outputs: tuple[int, ...]
    dtypes: tuple[np.dtype, ...]
    names: tuple[str, ...]
    raw: bool = False  # raw kernels also get the block shape as trailing int64 arguments

    def assemble(self, inputs: Sequence[Any], outs: Sequence[np.ndarray]) -> list[Any]:
        args: list[Any] = []
        it = iter(inputs)
        out_at = dict(zip(self.outputs, outs, strict=True))
        for i in range(self.n_params):
            args.append(out_at[i] if i in out_at else next(it))
        if self.raw:
            args.extend(np.int64(n) for n in outs[0].shape)
        return args


def is_array(a: Any) -> bool:
    """An array argument with blocks (a 0-d array is a scalar: see ``is_scalar_array``)."""
    return hasattr(a, "dtype") and hasattr(a, "shape") and hasattr(a, "ndim") and not np.isscalar(a) and a.ndim > 0


def is_scalar_array(a: Any) -> bool:
    """A 0-d array -- typically a lazy Dask result such as ``dcd.mean(x)`` or ``x.max()`` -- passed where
    the kernel takes a scalar: each block's launch gets its value (``x / x.mean()`` in Dask works so)."""
    return hasattr(a, "dtype") and hasattr(a, "shape") and hasattr(a, "ndim") and not np.isscalar(a) and a.ndim == 0


def _scalar_example(a: Any) -> Any:
    return np.dtype(a.dtype).type(0) if is_scalar_array(a) else a


def plan_outputs(kernel: Any, args: Sequence[Any], outputs: Any) -> OutputPlan:
    """The output plan for launching ``kernel`` with the non-output ``args`` (Dask arrays and scalars)."""
    arrays = [a for a in args if is_array(a)]
    if not arrays:
        raise ValueError("map_blocks needs at least one Dask array argument (its blocks set the output shape)")
    first = arrays[0]
    if isinstance(kernel, RawKernel):
        return _raw_plan(kernel, args, outputs, first)
    if not isinstance(kernel, Kernel):
        raise TypeError(f"map_blocks: kernel must be a @dc.kernel or a dc.RawKernel, not {type(kernel).__name__}")
    decls = kernel.decls()
    names = [d.name for d in decls]
    if outputs is not None:
        positions, overrides = _declared(kernel.name, outputs, names)
    else:
        positions = _inferred(kernel, args, first, names)
        overrides = {}
    if len(args) + len(positions) != len(decls):
        raise KernelTypeError(
            f"{kernel.name}() takes {len(decls)} parameter(s) ({', '.join(names)}); with output(s) "
            f"{', '.join(names[p] for p in positions)} left out, map_blocks expects {len(decls) - len(positions)} "
            f"argument(s), got {len(args)}")
    dtypes = []
    for p in positions:
        dtype = overrides.get(p) or _declared_dtype(decls[p]) or first.dtype
        spec = decls[p].spec
        ndim = spec.ndim if isinstance(spec, BufferAnnotation) else None
        if ndim is not None and ndim != first.ndim:
            raise ValueError(f"{kernel.name}: output {names[p]!r} has {ndim} dimension(s) but is allocated like "
                             f"the blocks of the first array argument, which have {first.ndim}")
        dtypes.append(np.dtype(dtype))
    plan = OutputPlan(len(decls), tuple(positions), tuple(dtypes), tuple(names[p] for p in positions))
    # type-check the whole call here, on the client, before any task runs: the argument types against
    # the signature (as a launch checks them), then the kernel body for those types
    examples = [_example(a.dtype, a.ndim) if is_array(a) else _scalar_example(a) for a in args]
    full = plan.assemble(examples, [_example(d, first.ndim) for d in dtypes])
    kernel.ir(signature=kernel.types_from_args(tuple(full)))
    return plan


def _signature_entry(a: Any) -> Any:
    if is_array(a):
        return BufferType(scalar_type(a.dtype), a.ndim)
    return _scalar_example(a)


def _example(dtype: np.dtype, ndim: int) -> np.ndarray:
    return np.empty((1,) * ndim, dtype)


def _declared_dtype(decl: Any) -> np.dtype | None:
    t = fixed_type(decl)
    if isinstance(t, BufferType):
        return np.dtype(t.dtype.name)
    if isinstance(decl.spec, BufferAnnotation) and decl.spec.dtype is not None:
        return np.dtype(decl.spec.dtype.name)
    return None


def _declared(kernel_name: str, outputs: Any, names: list[str]) -> tuple[list[int], dict[int, Any]]:
    """``outputs=``: parameter names or positions, or a mapping of them to dtypes."""
    if isinstance(outputs, (str, int, np.integer)):  # one output, numpy integers as positions too
        outputs = [outputs]
    items = list(outputs.items()) if isinstance(outputs, Mapping) else [(o, None) for o in outputs]
    if not items:
        raise ValueError(f"{kernel_name}: outputs= is empty; name at least one output parameter")
    positions: list[int] = []
    overrides: dict[int, Any] = {}
    for key, dtype in items:
        if isinstance(key, str):
            if key not in names:
                raise ValueError(f"{kernel_name}: outputs= names {key!r}, which is not a parameter "
                                 f"({', '.join(names)})")
            pos = names.index(key)
        elif isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < len(names):
            pos = int(key)
        else:
            raise ValueError(f"{kernel_name}: outputs= entries are parameter names or positions 0..{len(names) - 1}, "
                             f"got {key!r}")
        positions.append(pos)
        if dtype is not None:
            overrides[pos] = np.dtype(dtype)
    positions_sorted = sorted(set(positions))
    if len(positions_sorted) != len(positions):
        raise ValueError(f"{kernel_name}: outputs= names a parameter twice: {outputs!r}")
    return positions_sorted, overrides


def _inferred(kernel: Kernel, args: Sequence[Any], first: Any, names: list[str]) -> list[int]:
    """The written-only buffer parameters, from the access analysis of one specialisation."""
    decls = kernel.decls()
    n_out = len(decls) - len(args)
    try:
        module = kernel.ir()  # default types: enough for the access analysis of most kernels
    except KernelTypeError:
        # the defaults do not type-check: specialise with the given arguments, assuming the outputs
        # are the last parameters and look like the first array's blocks
        if n_out <= 0:
            raise
        example = _example(first.dtype, first.ndim)
        sig = [_signature_entry(a) for a in args] + [
            _declared_dtype(d) is not None and BufferType(scalar_type(_declared_dtype(d)), first.ndim)
            or _signature_entry(example) for d in decls[len(args):]]
        module = kernel.ir(signature=sig)
    written_only = [p.index for p in module.kernel.params if p.is_buffer and p.written and not p.read]
    if not written_only:
        raise ValueError(f"{kernel.name}: cannot infer the outputs: no buffer parameter is only written "
                         f"(written: {', '.join(p.py_name for p in module.kernel.params if p.written) or 'none'}); "
                         f"declare them with outputs=['name', ...]")
    return written_only


def _raw_plan(kernel: RawKernel, args: Sequence[Any], outputs: Any, first: Any) -> OutputPlan:
    if not isinstance(outputs, Mapping) or not outputs:
        raise ValueError(f"RawKernel {kernel.name!r}: declare its outputs as outputs={{position: dtype}} "
                         f"(a raw kernel's accesses are not analysed)")
    n_params = len(args) + len(outputs)
    positions = sorted(outputs)
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= p < n_params:
            raise ValueError(f"RawKernel {kernel.name!r}: output positions must be ints 0..{n_params - 1}, got {p!r}")
    dtypes = tuple(np.dtype(outputs[p]) for p in positions)
    # the parameter list as the source declares it (CUDA/OpenCL): a count that cannot match fails here,
    # on the client, instead of as a LaunchError from every block on the workers
    declared = getattr(kernel, "_declared", ())
    passed = n_params + first.ndim
    if declared and len(declared) != passed:
        raise KernelTypeError(
            f"RawKernel {kernel.name!r} declares {len(declared)} parameter(s); map_blocks passes {passed}: "
            f"{len(args)} argument(s), {len(outputs)} output(s) and the block's shape as {first.ndim} trailing "
            f"int64 argument(s) (one per dimension, e.g. `long n`)")
    return OutputPlan(n_params, tuple(int(p) for p in positions), dtypes, tuple(f"arg{p}" for p in positions), raw=True)


def check_scalars(args: Sequence[Any]) -> None:
    for i, a in enumerate(args):
        if not is_array(a) and type_of_argument(_scalar_example(a)) is None:
            raise TypeError(f"map_blocks: argument {i} must be a Dask array, a numpy array or a number "
                            f"(or a 0-d array of one), not {type(a).__name__}"
                            + (f" of dtype {a.dtype}" if is_scalar_array(a) else ""))
