"""Dask is an optional dependency: importing ``dotcompute.dask`` without it says how to install it."""

from __future__ import annotations

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised by a subprocess test with dask hidden
    raise ImportError(
        'dotcompute.dask needs Dask: pip install "dotcompute[dask]" (that is dask[array] and distributed)'
    ) from e
