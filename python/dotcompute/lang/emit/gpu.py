"""What the GPU-style targets (CUDA, OpenCL, MSL) share: one thread per work-item.

The kernel body is printed as is; ``barrier()`` is the target's barrier. On
CUDA and OpenCL the grid may be rounded up to whole work-groups, so a
barrier-free kernel starts with ``if (global id >= real global size) return;``
on the three trailing ``dc_global_size`` parameters. A kernel with a barrier
gets no such guard (an item that left early could not meet the barrier); the
launch path guarantees that its global size is a multiple of its local size.
"""

from __future__ import annotations

from .. import ir
from ..types import INT64, ScalarType
from .c_like import CLikePrinter, ExpandedParam
from .loop_order import contiguous_dimension


class GpuPrinter(CLikePrinter):
    #: whether the entry takes the three trailing int64 global sizes
    takes_global_size = True

    def __init__(self, module: ir.Module, debug: bool) -> None:
        super().__init__(module, debug)
        self.used_ids: set[str] = set()
        # Hardware dimension 0 (threadIdx.x, get_global_id(0)) is the one whose neighbouring items
        # should touch neighbouring memory; numpy-style kernels index a[i, j] with j = global_id(1),
        # so a barrier-free kernel swaps its contiguous dimension onto hardware dimension 0 (the
        # launch path swaps the sizes to match). hw[d] is the hardware dimension of user dimension d.
        kernel = module.kernel
        self.contiguous_dim = 0
        if self.takes_global_size and not kernel.uses_barrier:
            self.contiguous_dim = contiguous_dimension(kernel)
        self.hw = [0, 1, 2]
        f = self.contiguous_dim
        self.hw[0], self.hw[f] = self.hw[f], self.hw[0]

    def expanded_params(self) -> list[ExpandedParam]:
        out = super().expanded_params()
        if self.takes_global_size:
            out += [ExpandedParam("global_size", f"dc_global_size{d}", INT64, "", d) for d in range(3)]
        return out

    # hooks
    def header(self) -> list[str]:
        raise NotImplementedError

    def kernel_signature(self) -> str:
        raise NotImplementedError

    def shared_decl(self, s: ir.SharedDecl) -> str:
        raise NotImplementedError

    def id_decls(self) -> list[str]:
        """Declarations of the ids the body used (``self.used_ids``)."""
        return []

    def kernel_prologue(self) -> list[str]:
        return []

    def global_id_name(self, dim: int) -> str:
        self.used_ids.add(f"gid{dim}")
        return f"dc_gid{dim}"

    def kernel_text(self) -> list[str]:
        k = self.kernel
        self.fn = k
        body: list[str] = []
        self.out = body
        self.indent = 1
        used = self.used_names(k)
        self.declare_locals(k, used)
        self.stmts(k.body)
        self.indent = 0
        self.reset_lines()
        head = [self.kernel_signature() + " {"]
        head += ["  " + line for line in self.kernel_prologue()]
        if self.takes_global_size and not k.uses_barrier:
            for d in range(3):
                self.global_id_name(d)
            guard = " || ".join(f"dc_gid{d} >= dc_global_size{d}" for d in range(3))
            head += ["  " + line for line in self.id_decls()]
            head.append(f"  if ({guard}) return;")
        else:
            head += ["  " + line for line in self.id_decls()]
        for s in k.shared:
            self.note_type(s.dtype)
            head.append("  " + self.shared_decl(s))
        if k.uses_subgroups and self.backend == "opencl":
            from .subgroups import opencl_kernel_decls

            head += ["  " + line for line in opencl_kernel_decls()]
        self.fn = None
        return [*head, *body, "}"]

    def source(self) -> str:
        for f in self.module.functions:
            self.function(f)
        funcs = self.out
        kernel = self.kernel_text()
        return self.finish(self.header(), [*funcs, *kernel])

    def tname(self, t: ScalarType) -> str:
        raise NotImplementedError
