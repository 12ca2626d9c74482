"""The numpy namespace: ``dotcompute`` as an Array API 2024.12 library (see docs/array-api.md).

One module per family of the standard, as CuPy lays out numpy's names: creation, data types,
inspection, elementwise (the named forms of the operators), manipulation, indexing, searching,
sets, sorting, statistics and utility functions. Each module's ``__all__`` lists the names it
adds to ``dotcompute``'s top level; ``import dotcompute`` re-exports them (this room sits above
``expr`` and ``ops`` and imports only downward).
"""

from __future__ import annotations

import inspect
from typing import Any

from ..runtime.buffer import OPS_HOOKS
from . import (
    advanced,  # noqa: F401 -- installs the device paths of mask and integer-array indexing (expr.indexing)
    creation,
    datatypes,
    devices,
    dlpack,
    elementwise,
    indexing,
    info,
    linear,
    manipulation,
    protocols,  # noqa: F401 -- installs Buffer's __array_ufunc__/__array_function__ hooks
    searching,
    sets,
    sorting,
    statistics,
    utility,
)

_MODULES = (creation, datatypes, devices, dlpack, elementwise, indexing, info, linear, manipulation, searching, sets,
            sorting, statistics, utility)

__all__: list[str] = [name for module in _MODULES for name in module.__all__]

globals().update({name: getattr(module, name) for module in _MODULES for name in module.__all__})


def _matrix_transpose(x: Any) -> Any:
    """``x.mT``: the last two axes swapped."""
    if x.ndim < 2:
        raise ValueError(f"mT: the buffer must have at least 2 dimensions, got shape {x.shape}")
    axes = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    return manipulation.permute_dims(x, axes)


def _reduction_signature() -> inspect.Signature:
    kw = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature([inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY),
                              inspect.Parameter("axis", kw, default=None),
                              inspect.Parameter("keepdims", kw, default=False)])


# dc.min / dc.max are one object each for kernels (elementwise min/max of values) and Buffers (the
# reductions): their Array API signature, for inspect.signature and the suite's signature checks
for _fn in (statistics.__dict__.get("min"), statistics.__dict__.get("max")):
    if _fn is not None and not isinstance(_fn, type(_matrix_transpose)):
        _fn.__signature__ = _reduction_signature()

# Buffer.to_device, Buffer.mT and a @ b (the runtime sits below this room and looks them up here;
# a @ b is the namespace's matmul: numpy's batches of any rank, device data kept on the device)
OPS_HOOKS.update(to_device=devices.to_device, matrix_transpose=_matrix_transpose, matmul=linear.matmul)
