"""Functions that the layers above lend to the runtime, so the runtime never imports upward.

``dc.Buffer[dtype, ndim]`` needs the kernel language's annotation type and
``acc.launch(...)`` needs ``dotcompute.launch``; both live above (or beside) the
runtime, which must not import them, not even inside a function (that would be an
import cycle in disguise). Instead those modules register their functions here when
they are imported, and ``import dotcompute`` imports them all.

Names: ``buffer_annotation(dtype, ndim)`` (from ``dotcompute.lang``), ``launch(...)`` and
``launch_on(acc, kernel, global_size, args, local_size, stream)`` (from ``dotcompute.launch``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_PROVIDED: dict[str, Callable[..., Any]] = {}


def provide(**functions: Callable[..., Any]) -> None:
    """Registers the implementations (called by the upper modules at import)."""
    _PROVIDED.update(functions)


def provided(name: str) -> Callable[..., Any]:
    """The registered function ``name``; a clear TypeError if its module was never imported."""
    fn = _PROVIDED.get(name)
    if fn is None:
        raise TypeError(f"{name} is provided by a layer above dotcompute.runtime that is not imported; "
                        f"import dotcompute (not only dotcompute.runtime)")
    return fn


__all__ = ["provide", "provided"]
