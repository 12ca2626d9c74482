"""Array API 2024.12: the inspection API, ``dc.__array_namespace_info__()`` (see docs/array-api.md).

Devices are the accelerators ``dc.devices()`` lists. Each reports the dtypes its kernels can
compute with: Metal has no float64 (the standard allows a device without it), so Metal's
``dtypes()`` and ``default_dtypes()`` leave it out and its default floating dtype is float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Accelerator
from ..runtime import devices as _all_devices
from ..runtime.default_device import has_float64  # noqa: F401 -- creation.py imports it from here
from .devices import current_default, resolve

__all__ = ["__array_namespace_info__"]

_KINDS: dict[str, tuple[str, ...]] = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]
_ALL = _KINDS["bool"] + _KINDS["numeric"]


def device_dtypes(acc: Accelerator) -> tuple[str, ...]:
    """The standard's dtype names that ``acc`` offers."""
    return tuple(n for n in _ALL if has_float64(acc) or n not in ("float64", "complex128"))


class Info:
    """What ``dc.__array_namespace_info__()`` returns."""

    __module__ = "dotcompute"

    def capabilities(self) -> dict[str, Any]:
        # boolean indexing and nonzero give data-dependent shapes, which Buffers support (they are
        # computed eagerly); max dimensions: any number for Buffers (kernels keep their own limit)
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> Accelerator:
        return current_default()

    def devices(self) -> list[Accelerator]:
        return list(_all_devices())

    def default_dtypes(self, *, device: Accelerator | str | None = None) -> dict[str, Any]:
        acc = resolve(device, "default_dtypes")
        wide = has_float64(acc)
        return {"real floating": np.dtype(np.float64 if wide else np.float32),
                "complex floating": np.dtype(np.complex128 if wide else np.complex64),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device: Accelerator | str | None = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, Any]:
        acc = resolve(device, "dtypes")
        offered = device_dtypes(acc)
        if kind is None:
            names = offered
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = ()
            for k in kinds:
                if k not in _KINDS:
                    raise ValueError(f"dtypes: unknown kind {k!r} (one of {', '.join(_KINDS)})")
                names += tuple(n for n in _KINDS[k] if n in offered and n not in names)
        return {n: np.dtype(n) for n in names}


def __array_namespace_info__() -> Info:  # noqa: N807 -- the standard's name
    """The inspection API of the namespace."""
    return Info()
