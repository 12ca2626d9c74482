"""``dc.from_dlpack``: Buffers from any DLPack producer (numpy, PyTorch, JAX, CuPy, array_api_strict, ...),
with the ``device=`` and ``copy=`` keywords of the Array API 2024.12 (docs/array-api.md).

The export side (``Buffer.__dlpack__`` / ``__dlpack_device__``) is the runtime's
(runtime/buffer.py and runtime/cuda_interop.py): CPU and CUDA buffers share their memory; a buffer
on a device with no DLPack device type (OpenCL, Metal) exports a host copy only when the consumer
asks for the CPU (``dl_device=(kDLCPU, 0)``) and allows a copy.

The import always copies: a Buffer owns its memory (the runtime's pool) and cannot wrap another
library's allocation, so ``copy=False`` is a ``BufferError``, as the standard asks when a copy
would be needed. The producer is asked for a CPU export (``dl_device=(kDLCPU, 0)``, through
numpy's DLPack reader); a producer on a GPU may then copy to the host itself, which ``copy=None``
allows. The host data is uploaded once to ``device`` (default: the current default device).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Accelerator, Buffer
from .datatypes import astype
from .devices import resolve, to_device

__all__ = ["from_dlpack"]

KDL_CPU = 1


def from_dlpack(x: Any, /, *, device: Accelerator | str | None = None, copy: bool | None = None) -> Buffer:
    """A Buffer with the data of ``x``, an object with ``__dlpack__``, on ``device``.

    ``copy=True`` always copies; ``copy=None`` copies when it must (always, for foreign producers:
    see the module's docstring); ``copy=False`` never copies and raises ``BufferError`` when it
    would have to. A Buffer is returned as it is when it is on ``device`` already and no copy is asked.
    """
    if copy not in (None, True, False):
        raise TypeError(f"dc.from_dlpack: copy must be None, True or False, got {copy!r}")
    if isinstance(x, Buffer):
        target = x.accelerator if device is None else resolve(device, "dc.from_dlpack")
        if target is x.accelerator:
            return astype(x, x.dtype, copy=True) if copy else x
        if copy is False:
            raise BufferError(f"dc.from_dlpack: the buffer is on {x.accelerator.id}, device= asks for {target.id}, "
                              "and copy=False forbids the copy that moving it needs")
        return to_device(x, target)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"dc.from_dlpack: {type(x).__name__} does not export DLPack (it has no __dlpack__)")
    target = resolve(device, "dc.from_dlpack")
    if copy is False:
        raise BufferError(f"dc.from_dlpack: copy=False, but a Buffer cannot wrap the memory of a "
                          f"{type(x).__name__} (Buffers own their memory), so the import has to copy; "
                          "pass copy=None or copy=True")
    try:
        host = np.from_dlpack(x, device="cpu", copy=copy)
    except BufferError as exc:
        where = _producer_device(x)
        raise BufferError(f"dc.from_dlpack: the {type(x).__name__} (DLPack device {where}) cannot be read on the "
                          f"host: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(f"dc.from_dlpack: cannot import the {type(x).__name__}: {exc}") from None
    if host.dtype.kind not in "biufc":
        raise TypeError(f"dc.from_dlpack: dtype {host.dtype} is not an Array API dtype")
    return target.asarray(np.ascontiguousarray(host))


def _producer_device(x: Any) -> Any:
    try:
        return tuple(x.__dlpack_device__())
    except Exception:  # noqa: BLE001 -- only for the message
        return "unknown"
