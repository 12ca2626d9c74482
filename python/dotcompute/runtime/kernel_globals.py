"""``RawKernel.globals``: a CUDA kernel's ``__constant__`` and ``__device__`` variables as Buffers.

CUDA host code writes constant memory with ``cudaMemcpyToSymbol`` and reads a ``__device__``
counter back with ``cudaMemcpyFromSymbol``; both go through ``cuModuleGetGlobal``, which gives the
variable's device address and size in the loaded module. Here that address becomes a Buffer that
borrows the module's memory (it frees nothing, and keeps the compiled kernel, hence its module,
loaded while it lives), reached through the CUDA plugin's extension table (``cuda/cuda_ext.h``
``module_global``), on a GPU and on the CUDA simulator alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import BackendUnavailableError
from .buffer import Buffer
from .cuda_interop import cuda_extension
from .native import native
from .registry import accelerator as _accelerator

if TYPE_CHECKING:
    from .accelerator import Accelerator
    from .raw_kernel import RawKernel

# The element type a declaration spells, for the default dtype (anything else: raw bytes).
_C_TYPES = {
    "float": np.float32, "double": np.float64, "__half": np.float16, "half": np.float16,
    "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8, "bool": np.bool_,
    "short": np.int16, "unsigned short": np.uint16, "int": np.int32, "unsigned": np.uint32,
    "unsigned int": np.uint32, "long long": np.int64, "long long int": np.int64, "unsigned long long": np.uint64,
    "unsigned long long int": np.uint64, "long": np.int64, "unsigned long": np.uint64, "size_t": np.uint64,
    "int8_t": np.int8, "uint8_t": np.uint8, "int16_t": np.int16, "uint16_t": np.uint16, "int32_t": np.int32,
    "uint32_t": np.uint32, "int64_t": np.int64, "uint64_t": np.uint64,
}
_QUALIFIERS = re.compile(r"\b(?:__constant__|__device__|__managed__|static|extern|const|volatile|__align__\(\d+\))\s*")


def declared_dtype(source: str, name: str) -> np.dtype | None:
    """The dtype of ``__constant__``/``__device__`` variable ``name`` as ``source`` declares it, or None
    when the declaration is not found or its type is not a plain scalar type."""
    decl = re.search(r"((?:\b(?:__constant__|__device__|__managed__|const|static|volatile)\b\s*)+)"
                     r"([A-Za-z_][\w\s]*?)\s*\b" + re.escape(name) + r"\s*[\[;=]", source)
    if decl is None or not re.search(r"\b(?:__constant__|__device__|__managed__)\b", decl.group(1)):
        return None
    spelled = " ".join(_QUALIFIERS.sub(" ", decl.group(2)).split())
    found = _C_TYPES.get(spelled)
    return np.dtype(found) if found is not None else None


class KernelGlobals:
    """The ``__constant__``/``__device__`` variables of a CUDA :class:`RawKernel`'s module.

    ``k.globals["c_Kernel"]`` is a Buffer over the variable (dtype from its declaration when that is
    a scalar type such as ``float``, else ``uint8`` bytes; shape: the whole variable, 1-D);
    ``k.globals.get(name, dtype=, shape=, accelerator=)`` chooses them. Writes (``copy_from``,
    ``buf[...] = values``) land before the next launch; reads (``numpy()``) wait for the device's
    queued work first, so they see what kernels wrote.
    """

    def __init__(self, kernel: RawKernel) -> None:
        self._kernel = kernel

    def get(self, name: str, dtype: Any = None, shape: int | Sequence[int] | None = None,
            accelerator: Accelerator | str | None = None) -> Buffer:
        """A Buffer over variable ``name`` of the module compiled for ``accelerator`` (default: the
        kernel's first CUDA device). ``KeyError`` when the module has no such variable, ``ValueError``
        when ``shape`` x ``dtype`` needs more bytes than the variable has."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"globals: the variable name must be a non-empty str, got {name!r}")
        kernel = self._kernel
        if kernel.backend != "cuda":
            raise BackendUnavailableError(f"RawKernel {kernel.name!r}: globals are CUDA's __constant__/__device__ "
                                          f"variables; this kernel is written for {kernel.backend}",
                                          "module globals are CUDA-only")
        acc = _accelerator(accelerator if accelerator is not None else kernel.backend)
        compiled = kernel.compile(acc)
        found = cuda_extension().module_global(compiled.module_handle, name)
        if found is None:
            raise KeyError(f"RawKernel {kernel.name!r} on {acc.id} has no __constant__ or __device__ variable "
                           f"named {name!r} (a variable inside a namespace is known by its mangled name)")
        ptr, size = found
        if dtype is None:
            dt = declared_dtype(kernel.source(), name) or np.dtype(np.uint8)
        else:
            dt = np.dtype(dtype)
        if shape is None:
            if size % dt.itemsize:
                raise ValueError(f"globals[{name!r}]: the variable holds {size} bytes, not a whole number of "
                                 f"{dt} elements; pass shape=")
            dims: tuple[int, ...] = (size // dt.itemsize,)
        else:
            dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
            if any(d < 0 for d in dims):
                raise ValueError(f"globals[{name!r}]: shape must not be negative, got {dims}")
        nbytes = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
        if nbytes > size:
            raise ValueError(f"globals[{name!r}]: shape {dims} of {dt} is {nbytes} bytes, but the variable "
                             f"{name!r} holds only {size} bytes")
        return Buffer._wrap(native().borrow_buffer(compiled, ptr, dims, dt), acc)

    def __getitem__(self, name: str) -> Buffer:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.get(name)
        except KeyError:
            return False
        return True

    def __repr__(self) -> str:
        return f"<globals of RawKernel {self._kernel.name!r}>"


__all__ = ["KernelGlobals", "declared_dtype"]
