"""The signal that a launch got host arrays a device cannot read directly.

Kept free of native imports: the bindings import it lazily to raise it.
"""

from __future__ import annotations


class NeedsStaging(Exception):  # noqa: N818 -- a signal to the caller, not an error the user sees
    """``plan.launch`` was given numpy arrays for a device without unified memory.

    The caller copies them into device buffers, launches again and copies the
    written ones back. ``param`` and ``index`` name the first such argument.
    """

    def __init__(self, message: str = "", param: str = "", index: int = -1) -> None:
        super().__init__(message)
        self.param = param
        self.index = index


__all__ = ["NeedsStaging"]
