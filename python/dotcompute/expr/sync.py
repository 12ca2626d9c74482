"""``dc.synchronize()``: run every pending expression, then wait for every started accelerator."""

from __future__ import annotations

from typing import Any

from ..runtime import accelerator as _accelerator
from ..runtime import devices
from .evaluate import evaluate_all


def synchronize(accelerator: Any = None) -> None:
    """Evaluates pending expressions (on ``accelerator``, or everywhere) and waits for the queued work."""
    if accelerator is not None:
        acc = _accelerator(accelerator) if isinstance(accelerator, str) else accelerator
        evaluate_all(acc)
        acc.synchronize()
        return
    evaluate_all()
    for acc in devices():
        acc.synchronize()


__all__ = ["synchronize"]
