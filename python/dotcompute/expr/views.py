"""Views handed to kernels: the parent's memory, never a copy that takes the kernel's writes.

A view (``b[k:]``, ``b[2:5]``, ``b[1:3]`` of a 2-d buffer: one C-contiguous run of its base's
elements) reaches a launch as a *native view*: the base's allocation at a byte offset, with the
view's shape (``_native.view(byte_offset, shape)``). The core passes it as a region of the base
(``DC_ARG_BUFFER_REGION``): a pointer offset on the CPU and CUDA (the simulator too), a sub-buffer
on OpenCL, ``setBuffer:offset:`` on Metal, so what the kernel writes lands in the base.

A strided view (``b[::2]``, ``b.T``, ``b[1:3, 2:]``) is not one run: kernels take contiguous
buffers (a pointer and extents, no strides), so it cannot be passed as memory. A kernel that only
reads it gets its current elements (nothing can be lost); one that may write it (a ``@dc.kernel``
parameter it writes, any raw-kernel pointer not declared ``read_only``) is refused with a
ValueError naming the parameter -- unless a raw kernel declares the argument ``strided=``: it then
gets the base's memory from the view's first element to its last and steps by strides of its own.
An OpenCL device refuses sub-buffers whose start is not a
multiple of ``CL_DEVICE_MEM_BASE_ADDR_ALIGN``: such a view is passed as a copy where the kernel
only reads it, else refused with a LaunchError naming the parameter (see docs/views.md).
"""

from __future__ import annotations

from typing import Any

from ..errors import LaunchError
from ..runtime import Buffer
from .lazy import EVALUATE, LazyBuffer, alias_root


def element_layout(view: LazyBuffer) -> tuple[int, tuple[int, ...]]:
    """(the offset of ``view``'s first element in its base, its strides), both in elements."""
    base, index, shape = view._view.base, view._view.index, view.shape  # type: ignore[union-attr]
    strides = [1] * base.ndim  # the base's C strides, in elements
    for d in range(base.ndim - 2, -1, -1):
        strides[d] = strides[d + 1] * base.shape[d + 1]
    offset = 0
    vstrides = [0] * len(shape)
    for d, entry in enumerate(index):
        if entry[0] == "fix":
            offset += entry[1] * strides[d]
        else:
            _, vdim, start, step = entry
            offset += start * strides[d]
            vstrides[vdim] = step * strides[d]
    return offset, tuple(vstrides)


def contiguous_region(view: LazyBuffer) -> tuple[int, tuple[int, ...]] | None:
    """``(byte offset, shape)`` when ``view``'s elements are one C-contiguous run of its base's
    memory (in the view's own order), else None. An empty view is the run at offset 0."""
    base, shape = view._view.base, view.shape  # type: ignore[union-attr]
    offset, vstrides = element_layout(view)
    if 0 in shape:
        return 0, shape
    expected = 1
    for v in range(len(shape) - 1, -1, -1):
        if shape[v] == 1:
            continue  # a dimension of extent 1 (also a new axis) is never stepped over
        if vstrides[v] != expected:
            return None
        expected *= shape[v]
    return offset * base.dtype.itemsize, shape


def _param_name(kernel: Any, args: tuple[Any, ...], index: int) -> str:
    for p in _lang_params(kernel, args) or ():
        if p.index == index:
            return f"parameter {p.py_name!r}"
    return f"argument {index}"  # a raw kernel: arguments are known by position


def _lang_params(kernel: Any, args: tuple[Any, ...]) -> list[Any] | None:
    """A @dc.kernel's parameters for these arguments (with ``written``), or None (a raw kernel)."""
    specialize = getattr(kernel, "specialize", None)
    if specialize is None:
        return None
    try:
        return list(specialize(kernel.types_from_args(args)).module.kernel.params)
    except Exception:  # noqa: BLE001 -- the launch itself reports bad arguments with its own message
        return None


def _may_write(kernel: Any, args: tuple[Any, ...], index: int) -> bool:
    params = _lang_params(kernel, args)
    if params is not None:
        return any(p.index == index and p.written for p in params)
    # a raw kernel may write every pointer it gets, except those declared read_only
    return index not in getattr(kernel, "read_only", frozenset())


def _misaligned(view: LazyBuffer, offset: int) -> int:
    """The sub-buffer alignment in bytes that ``offset`` misses on an OpenCL device, else 0."""
    acc = view.accelerator
    if acc.backend != "opencl" or offset == 0:
        return 0
    align = int(acc.info.get("mem_base_addr_align_bytes", 0) or 0)
    return align if align > 1 and offset % align else 0


def launch_argument(kernel: Any, args: tuple[Any, ...], index: int, view: LazyBuffer) -> Buffer | None:
    """What the launch passes for the view ``args[index]``: a Buffer aliasing the base's memory, or
    None when the kernel only reads a view that cannot be passed as memory (the caller passes a copy
    of its elements: nothing written can be lost). Raises where neither is right (see the module's
    docstring)."""
    name = getattr(kernel, "name", "kernel")
    region = contiguous_region(view)
    if region is None and index in getattr(kernel, "strided", ()):
        region = _strided_span(name, index, view)  # a raw kernel that steps through the view itself
    if region is None:
        if not _may_write(kernel, args, index):
            return None
        raw = _lang_params(kernel, args) is None
        raise ValueError(
            f"{name}(): {_param_name(kernel, args, index)} may be written, but its argument is a strided view "
            f"(shape {view.shape}, e.g. b[::2], b.T or b[1:3, 2:]) and kernels take contiguous memory (a pointer "
            f"and extents, no strides); a copy would lose the writes. Write into a temporary and assign it: "
            f"tmp = dc.asarray(v, copy=True); ...; v[...] = tmp" + (" (or declare the argument read_only, or "
                                                                   "strided= if the kernel steps through it)"
                                                                   if raw else ""))
    offset, shape = region
    align = _misaligned(view, offset)
    if align:
        if not _may_write(kernel, args, index):
            return None
        acc = view.accelerator
        raise LaunchError(
            f"{name}(): {_param_name(kernel, args, index)} is a view starting {offset} bytes into its buffer; "
            f"OpenCL sub-buffers on {acc.id} must start at a multiple of {align} bytes "
            f"(CL_DEVICE_MEM_BASE_ADDR_ALIGN), and a copy would lose the kernel's writes. Start the view at a "
            f"multiple of {align // view.dtype.itemsize} elements, or pass a copy and assign it back "
            f"(tmp = dc.asarray(v, copy=True); ...; v[...] = tmp)")
    base = view._view.base  # type: ignore[union-attr]
    return Buffer._wrap(base._native.view(offset, shape), view.accelerator)


def _strided_span(name: str, index: int, view: LazyBuffer) -> tuple[int, tuple[int, ...]]:
    """For a ``dc.RawKernel(..., strided=)`` argument: the base's memory from the view's first element
    to its last, as a 1-d region (byte offset, (elements,)). The kernel gets a pointer to the first
    element and steps by the strides it is given (docs/views.md); a negative step would put elements
    before that pointer, which a region cannot hold."""
    offset, strides = element_layout(view)
    if any(s < 0 for s in strides):
        raise ValueError(f"{name}(): argument {index} is declared strided, but its view steps backwards "
                         f"(element strides {strides}); pass a view with non-negative steps")
    if 0 in view.shape:
        return 0, (0,)
    span = 1 + sum((n - 1) * s for n, s in zip(view.shape, strides, strict=True))
    return offset * view.dtype.itemsize, (span,)


#: backends whose buffer handles are addresses or offset-bound buffers, so that a native view can
#: stand for the view everywhere (vendor libraries get the address plus the offset); an OpenCL
#: view would need a sub-buffer (aligned) for CLBlast/clFFT's cl_mem arguments: it stays a copy
#: outside launches
_ALIAS_EVERYWHERE = frozenset(("cpu", "cuda", "metal"))


def memory_of(view: LazyBuffer) -> Buffer | None:
    """The view as a Buffer on its base's memory, for uses outside launches (an operation's host
    path, ``np.asarray``, ``.numpy()``, DLPack), or None where it must be copied (a strided view,
    an OpenCL device)."""
    if view.accelerator.backend not in _ALIAS_EVERYWHERE:
        return None
    region = contiguous_region(view)
    if region is None:
        return None
    base = view._view.base  # type: ignore[union-attr]
    return Buffer._wrap(base._native.view(region[0], region[1]), view.accelerator)


def reshaped(buf: Buffer, shape: tuple[int, ...]) -> Buffer | None:
    """``buf.reshape(shape)`` on ``buf``'s memory (numpy's view), or None where it must be a copy:
    a strided view, a 0-d buffer or result, an empty one, or an OpenCL buffer at an offset (its
    cl_mem handle for vendor libraries would be the whole allocation)."""
    if not shape or buf.ndim == 0 or buf.size == 0:
        return None
    if type(buf) is LazyBuffer and buf._view is not None:
        region = contiguous_region(buf)
        if region is None:
            return None
        base = buf._view.base
        native = base._native.view(region[0], shape)
        root = alias_root(base)
    else:
        if type(buf) is LazyBuffer:
            if buf._op is not None:
                EVALUATE["run"]([buf])  # a pending value gets its memory first
            if buf._backing is not None:
                return None
        native = buf._native.view(0, shape)
        root = alias_root(buf)
    if native.byte_offset and buf.accelerator.backend not in _ALIAS_EVERYWHERE:
        return None
    return LazyBuffer.alias(native, root, buf.accelerator)


EVALUATE["alias"] = memory_of

__all__ = ["contiguous_region", "element_layout", "launch_argument", "memory_of", "reshaped"]
