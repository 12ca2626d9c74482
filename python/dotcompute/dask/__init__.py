"""``dotcompute.dask``: dotcompute kernels over Dask arrays, chunk by chunk, on every worker's accelerator.

```python
import dotcompute.dask as dcd
y = dcd.map_blocks(kernel, x, 2.0)                       # outputs: the kernel's written-only buffers
y = dcd.map_overlap(stencil, x, depth=1, boundary="nearest")
s = dcd.sum(y)
```

Blocks reach the kernel as numpy arrays and leave as numpy arrays; device buffers never cross
process boundaries. Kernels pickle by value (``dotcompute.lang.pickling``), so kernels defined in
``__main__`` run on process workers. See docs/dask.md.
"""

from . import _require  # noqa: F401 -- first: a clear ImportError when Dask is missing
from .blockwise import map_blocks, map_overlap
from .cluster import pin_devices, pinned_device
from .placement import spread_stats
from .reductions import max, mean, min, sum  # noqa: A004

__all__ = ["map_blocks", "map_overlap", "max", "mean", "min", "pin_devices", "pinned_device", "spread_stats", "sum"]
