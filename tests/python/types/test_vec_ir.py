"""The IR of every vector/matrix/struct kernel in the suites (and the particles example) keeps the
invariants emitters rely on (python/dotcompute/lang/ir.py, docs/ir.md): aggregates are lowered to
scalars, every conversion is explicit, every name is declared."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import test_structs
import test_vectors

from dotcompute.lang import ir
from dotcompute.lang import types as T
from dotcompute.lang.kernel import Kernel

_EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "particles.py"


def _kernels() -> list[Kernel]:
    spec = importlib.util.spec_from_file_location("dc_example_particles_ir", _EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    out = []
    for mod in (test_vectors, test_structs, example):
        out += [v for v in vars(mod).values() if isinstance(v, Kernel)]
    return out


def problems(m: ir.Module) -> list[tuple]:
    errs: list[tuple] = []
    for f in [*m.functions, m.kernel]:
        declared = {v.name: v.type for v in f.locals} | {p.name: p.type for p in f.params}
        for n in ir.walk(f):
            if isinstance(n, ir.Expr):
                if not isinstance(n.type, T.ScalarType):
                    errs.append(("not scalar", ir.format_expr(n)))
                if isinstance(n, ir.Const) and n.weak:
                    errs.append(("weak", ir.format_expr(n)))
            if isinstance(n, ir.BinOp) and n.op not in ("Pow", "TrueDiv") and n.left.type is not n.right.type:
                errs.append(("binop", ir.format_expr(n)))
            if isinstance(n, ir.Compare) and n.left.type is not n.right.type:
                errs.append(("compare", ir.format_expr(n)))
            if isinstance(n, ir.IfExp) and not (n.then.type is n.orelse.type is n.type):
                errs.append(("ifexp", ir.format_expr(n)))
            if isinstance(n, (ir.If, ir.While)) and n.cond.type is not T.BOOL:
                errs.append(("condition", ir.format_expr(n.cond)))
            if isinstance(n, (ir.Var, ir.Bind, ir.Assign)) and n.name not in declared:
                errs.append(("undeclared", n.name))
            if isinstance(n, ir.Assign) and n.name in declared and n.value.type is not declared[n.name]:
                errs.append(("assign", n.name, ir.format_expr(n.value)))
            if isinstance(n, ir.BufferStore):
                want = dict(n.buffer.struct.leaves)[n.member] if n.member else n.buffer.dtype
                if n.value.type is not want:
                    errs.append(("store", n.buffer.name, want, n.value.type))
            if isinstance(n, (ir.BufferLoad, ir.BufferStore, ir.AtomicOp)):
                if len(n.indices) != n.buffer.ndim or any(i.type is not T.INT64 for i in n.indices):
                    errs.append(("indices", n.buffer.name))
                if bool(getattr(n, "member", ())) != (n.buffer.struct is not None):
                    errs.append(("member", n.buffer.name))
    return errs


@pytest.mark.parametrize("kern", _kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("debug", [False, True])
def test_aggregate_kernels_keep_the_ir_invariants(kern, debug):
    assert problems(kern.ir(debug=debug)) == []
