"""Array API 2024.12: sorting functions on Buffers (see docs/array-api.md)."""

from __future__ import annotations

__all__: list[str] = []
