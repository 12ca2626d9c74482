"""Code generators: typed IR (:mod:`dotcompute.lang.ir`) → source for one backend.

Contract
--------

``emit(module, backend, *, debug=False) -> EmittedSource``

* ``module``: an :class:`ir.Module` (the kernel plus the device functions it
  calls, callees first). ``backend``: ``"cpu"``, ``"cuda"``, ``"opencl"`` or
  ``"metal"``. ``debug`` (or ``module.kernel.debug``) turns on bounds checks.
* Pure: no device, driver or compiler is needed, and the same input always
  gives the same text (the text is part of the kernel-cache key).
* Errors: :class:`~dotcompute.errors.KernelTypeError` for what a target cannot
  express (float64 or 64-bit atomics on Metal), and
  :class:`~dotcompute.errors.KernelSyntaxError` for constructs the CPU loop
  fission cannot handle (``break``/``continue`` aimed at a loop that contains
  ``barrier()``); both name the Python file and line.

The result (:class:`EmittedSource`):

* ``text`` — the complete source; ``entry`` — the entry point, always
  ``module.kernel.name``; ``backend``.
* ``params`` — the entry's parameters in order (the expanded ABI of
  docs/design.md, "Kernel parameter ABI"), as :class:`ExpandedParam`:
  for each Python parameter, a buffer gives ``buffer`` (data pointer) then one
  ``extent`` (int64) per dimension, a scalar gives ``scalar``; then ``debug``
  (a 4-element int64 buffer) when ``debug``; then, on ``cuda`` and ``opencl``
  only, three ``global_size`` int64 scalars named ``dc_global_size0..2``.
* ``global_size_params`` — True on ``cuda``/``opencl``: the launch path appends
  the real global size (unused dimensions: 1) as three int64 scalar
  arguments after everything else. Those backends may round the grid up to
  whole groups; generated barrier-free kernels skip items beyond the real
  size, and ``dc.global_size(d)`` reads these values. The CPU reads
  ``dc_cpu_launch.global_size``; Metal reads ``[[threads_per_grid]]``
  (non-uniform dispatch).
* ``uses_barrier`` — the kernel calls ``barrier()`` (needs a local size that
  divides the global size); ``static_shared_bytes`` — bytes of ``dc.shared``
  arrays (declared statically in the source; no dynamic shared memory is
  needed); ``features`` — what the device must support, a subset of
  ``{"fp64", "int64_atomics", "int64_extended_atomics", "float_atomics"}``
  (OpenCL checks them before launch).
* Debug report buffer: ``[flag, debug_id, flat_index, python_line]``, zeroed
  by the launch path before the launch; the first violation sets ``flag`` to
  1 and fills the rest (``debug_id`` is the kernel parameter's index, or a key
  of ``module.debug_names``); the failing access is skipped (a load yields 0).

Target specifics: the CPU entry is ``extern "C" void ENTRY(const
dc_cpu_launch*, uint64_t, uint64_t, void*)`` (cpu_kernel_abi.h; compile with
``-I`` to the dotcompute include folder, ``-O3``, and preferably
``-fno-math-errno`` so math calls vectorise). CUDA is NVRTC-ready C++ without
any ``#include`` (fixed-width types declared in the source; float64 atomic add
needs sm_60+). OpenCL C 1.2 enables ``cl_khr_fp64`` / ``cl_khr_int64_*``
pragmas only when used; bool buffers and bool scalars travel as ``uchar``.
MSL follows docs/design.md exactly (``[[buffer(i)]]`` = expanded parameter i,
the five ``uint3`` builtins ``dc_gid``/``dc_lid``/``dc_grp``/``dc_gsz``/``dc_lsz``).
Every target maps generated lines back to the Python file with ``#line``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ir
from .c_like import ExpandedParam
from .cpu import CpuPrinter
from .cuda import CudaPrinter
from .metal import MetalPrinter
from .opencl import OpenCLPrinter

BACKENDS = ("cpu", "cuda", "opencl", "metal")

_PRINTERS = {"cpu": CpuPrinter, "cuda": CudaPrinter, "opencl": OpenCLPrinter, "metal": MetalPrinter}


@dataclass(frozen=True)
class EmittedSource:
    text: str
    entry: str
    backend: str
    params: tuple[ExpandedParam, ...]
    uses_barrier: bool
    static_shared_bytes: int
    debug: bool
    global_size_params: bool
    features: frozenset[str] = field(default_factory=frozenset)
    #: CPU only: the global-id dimension the flat loop nest runs innermost (the one that walks
    #: memory contiguously); the launch path shapes automatic CPU work-groups along it.
    contiguous_dim: int = 0

    def hardware_sizes(self, global_size: tuple[int, ...], local_size: tuple[int, ...] | None
                       ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """The launch sizes in the order the CUDA/OpenCL entry reads them: the contiguous dimension
        is swapped onto hardware dimension 0 (the global-size arguments stay in the kernel's order)."""
        f = self.contiguous_dim if self.backend in ("cuda", "opencl") else 0
        if not f:
            return global_size, local_size
        n = max(len(global_size), f + 1)

        def swapped(t: tuple[int, ...]) -> tuple[int, ...]:
            out = list(t) + [1] * (n - len(t))
            out[0], out[f] = out[f], out[0]
            return tuple(out)

        return swapped(global_size), None if local_size is None else swapped(local_size)

    def global_size_args(self, global_size: tuple[int, ...]) -> tuple[int, ...]:
        """The trailing arguments to append for ``global_size`` (empty where none are taken)."""
        if not self.global_size_params:
            return ()
        g = tuple(int(x) for x in global_size) + (1,) * (3 - len(global_size))
        return g[:3]


def emit(kernel_ir: ir.Module, backend: str, *, debug: bool = False) -> EmittedSource:
    """Print ``kernel_ir`` for ``backend``; see the module docstring for the contract."""
    try:
        printer_cls = _PRINTERS[backend]
    except KeyError:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}") from None
    printer = printer_cls(kernel_ir, debug)
    text = printer.source()
    params = printer.expanded_params()
    return EmittedSource(
        text=text, entry=kernel_ir.kernel.name, backend=backend, params=tuple(params),
        uses_barrier=kernel_ir.kernel.uses_barrier, static_shared_bytes=printer.static_shared_bytes(),
        contiguous_dim=getattr(printer, "contiguous_dim", 0),
        debug=printer.debug, global_size_params=any(p.kind == "global_size" for p in params),
        features=frozenset(printer.features))


__all__ = ["emit", "EmittedSource", "ExpandedParam", "BACKENDS"]
