"""The description of one kernel parameter handed to ``Kernel.plan``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, init=False)
class ParamSpec:
    """One parameter of a kernel's signature.

    ``kind`` is ``"buffer"`` (then ``ndim`` is 1 to 3 and, unless the plan is
    raw, the extents follow the pointer) or ``"scalar"`` (``ndim`` 0).
    ``written`` marks buffers the kernel may write, so their host copies are
    known to be stale after a launch.
    """

    kind: str
    name: str
    dtype: np.dtype
    ndim: int
    written: bool

    def __init__(self, kind: str, name: str, dtype: Any = "float32", ndim: int = 0, written: bool = False) -> None:
        if kind not in ("buffer", "scalar"):
            raise ValueError(f"ParamSpec kind must be 'buffer' or 'scalar', got {kind!r}")
        if kind == "scalar" and ndim != 0:
            raise ValueError(f"ParamSpec {name!r}: a scalar has ndim 0, got {ndim}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dtype", np.dtype(dtype))
        object.__setattr__(self, "ndim", int(ndim))
        object.__setattr__(self, "written", bool(written))


__all__ = ["ParamSpec"]
