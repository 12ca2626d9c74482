"""Scalar types of the kernel language and of buffers.

They are numpy's scalar types, so ``acc.empty(n, dc.float32)``,
``np.dtype(dc.int64)`` and ``x: dc.float32`` in a kernel signature all mean the
same thing, and ``dc.float32(x)`` inside a kernel is a cast.
"""

from __future__ import annotations

import numpy as np

bool_ = np.bool_
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64
float16 = np.float16
float32 = np.float32
float64 = np.float64
complex64 = np.complex64
complex128 = np.complex128

#: dtypes a kernel-language kernel may compute with (DESIGN.md, "The kernel language").
KERNEL_DTYPES = tuple(np.dtype(t) for t in (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                             float16, float32, float64, complex64, complex128))

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64",
           "complex128", "KERNEL_DTYPES"]
