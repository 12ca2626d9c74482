"""Small builders for hand-written IR modules, so the emitters are tested without the frontend."""

from __future__ import annotations

from dotcompute.lang import ir
from dotcompute.lang.types import BOOL, FLOAT32, INT64, VOID, BufferType, ScalarType

FILE = "/tmp/kernels.py"


def L(line: int) -> ir.Loc:
    return ir.Loc(line, 5)


def buf(name: str, dtype: ScalarType, ndim: int, index: int, read: bool = True,
        written: bool = False) -> ir.Param:
    return ir.Param(name=name, py_name=name, type=BufferType(dtype, ndim), index=index, read=read,
                    written=written)


def scalar(name: str, t: ScalarType, index: int) -> ir.Param:
    return ir.Param(name=name, py_name=name, type=t, index=index)


def ref(p: ir.Param) -> ir.BufferRef:
    assert isinstance(p.type, BufferType)
    return ir.BufferRef(name=p.name, py_name=p.py_name, space="global", dtype=p.type.dtype, ndim=p.type.ndim,
                        param_index=p.index, debug_id=p.index)


def shared_ref(s: ir.SharedDecl) -> ir.BufferRef:
    return ir.BufferRef(name=s.name, py_name=s.py_name, space="shared", dtype=s.dtype, ndim=len(s.shape),
                        shape=s.shape)


def c(value, t: ScalarType = INT64) -> ir.Const:
    return ir.Const(value=value, type=t)


def v(name: str, t: ScalarType = INT64) -> ir.Var:
    return ir.Var(name=name, type=t)


def gid(d: int = 0) -> ir.BuiltinId:
    return ir.BuiltinId(kind="global_id", dim=d, type=INT64)


def bid(kind: str, d: int = 0) -> ir.BuiltinId:
    return ir.BuiltinId(kind=kind, dim=d, type=INT64)


def binop(op: str, a: ir.Expr, b: ir.Expr, t: ScalarType | None = None) -> ir.BinOp:
    return ir.BinOp(op=op, left=a, right=b, type=t or a.type)


def cmp(op: str, a: ir.Expr, b: ir.Expr) -> ir.Compare:
    return ir.Compare(op=op, left=a, right=b, type=BOOL)


def load(p: ir.Param | ir.BufferRef, *idx: ir.Expr, line: int = 0) -> ir.BufferLoad:
    r = p if isinstance(p, ir.BufferRef) else ref(p)
    return ir.BufferLoad(buffer=r, indices=list(idx), type=r.dtype, loc=L(line))


def store(p: ir.Param | ir.BufferRef, idx: list[ir.Expr], value: ir.Expr, line: int = 0) -> ir.BufferStore:
    r = p if isinstance(p, ir.BufferRef) else ref(p)
    return ir.BufferStore(buffer=r, indices=idx, value=value, loc=L(line))


def shape(p: ir.Param, d: int = 0) -> ir.Shape:
    return ir.Shape(buffer=ref(p), dim=d, type=INT64)


def assign(name: str, value: ir.Expr, line: int = 0) -> ir.Assign:
    return ir.Assign(name=name, value=value, loc=L(line))


def local(name: str, t: ScalarType = INT64) -> ir.LocalVar:
    return ir.LocalVar(name=name, py_name=name, type=t)


def kernel(name: str, params: list[ir.Param], body: list[ir.Stmt], locals_: list[ir.LocalVar],
           shared: list[ir.SharedDecl] | None = None, functions: list[ir.Function] | None = None,
           debug: bool = False) -> ir.Module:
    uses_barrier = any(isinstance(n, ir.Barrier) for s in body for n in ir.walk(s))
    uses_atomics = any(isinstance(n, ir.AtomicOp) for s in body for n in ir.walk(s))
    k = ir.Kernel(name=name, py_name=name, params=params, return_type=VOID, body=body, locals=locals_,
                  filename=FILE, shared=shared or [], debug=debug, uses_barrier=uses_barrier,
                  uses_atomics=uses_atomics, loc=L(1))
    return ir.Module(kernel=k, functions=functions or [])


def vadd(dtype: ScalarType = FLOAT32, name: str = "vadd_f32") -> ir.Module:
    """out[i] = a[i] + b[i] guarded by i < out.shape[0]."""
    a, b = buf("a", dtype, 1, 0), buf("b", dtype, 1, 1)
    out = buf("out", dtype, 1, 2, read=False, written=True)
    body = [
        assign("i", gid(0), line=3),
        ir.If(cond=cmp("Lt", v("i"), shape(out)), loc=L(4), then=[
            store(out, [v("i")], binop("Add", load(a, v("i")), load(b, v("i"))), line=5)]),
    ]
    return kernel(name, [a, b, out], body, [local("i")])


def elementwise(op: str, t: ScalarType, rt: ScalarType | None = None, name: str | None = None) -> ir.Module:
    """out[i] = a[i] OP b[i] for i < n (a BinOp, a MathCall name, or "cvt" for out = rt(a))."""
    rt = rt or t
    a, b = buf("a", t, 1, 0), buf("b", t, 1, 1)
    out = buf("out", rt, 1, 2, read=False, written=True)
    la, lb = load(a, v("i")), load(b, v("i"))
    if op == "cvt":
        value: ir.Expr = ir.Cast(value=la, type=rt)
    elif op in ir.MATH_FUNCTIONS:
        nargs = ir.MATH_FUNCTIONS[op][0]
        value = ir.MathCall(name=op, args=[la, lb][:nargs], type=rt)
    elif op in ir.CMPOPS:
        value = cmp(op, la, lb)
    else:
        value = binop(op, la, lb, rt)
    body = [assign("i", gid(0), 3),
            ir.If(cond=cmp("Lt", v("i"), shape(out)), then=[store(out, [v("i")], value, 4)], loc=L(4))]
    return kernel(name or f"ew_{op}_{t}", [a, b, out], body, [local("i")])


def matmul_tiled(T: int = 4) -> ir.Module:
    """C = A @ B with T x T tiles in shared memory: two barriers inside a loop over tiles."""
    A, B = buf("A", FLOAT32, 2, 0), buf("B", FLOAT32, 2, 1)
    C = buf("C", FLOAT32, 2, 2, read=False, written=True)
    As = ir.SharedDecl(name="As", py_name="As", dtype=FLOAT32, shape=(T, T))
    Bs = ir.SharedDecl(name="Bs", py_name="Bs", dtype=FLOAT32, shape=(T, T))
    ra, rb = shared_ref(As), shared_ref(Bs)
    tile_k = binop("Add", binop("Mult", v("t"), c(T)), v("lj"))
    tile_r = binop("Add", binop("Mult", v("t"), c(T)), v("li"))
    inner = ir.For(var="k", counter="k_c", start=c(0), stop=c(T), step=c(1), step_sign=1, loc=L(12), body=[
        assign("acc", binop("Add", v("acc", FLOAT32),
                            binop("Mult", load(ra, v("li"), v("k")), load(rb, v("k"), v("lj")))), 13)])
    body = [
        assign("i", gid(1), 3), assign("j", gid(0), 4),
        assign("li", bid("local_id", 1), 5), assign("lj", bid("local_id", 0), 6),
        assign("acc", c(0.0, FLOAT32), 7),
        assign("ntiles", binop("FloorDiv", shape(A, 1), c(T)), 8),
        ir.For(var="t", counter="t_c", start=c(0), stop=v("ntiles"), step=c(1), step_sign=1, loc=L(8), body=[
            store(ra, [v("li"), v("lj")], load(A, v("i"), tile_k), 9),
            store(rb, [v("li"), v("lj")], load(B, tile_r, v("j")), 10),
            ir.Barrier(loc=L(11)),
            inner,
            ir.Barrier(loc=L(14)),
        ]),
        store(C, [v("i"), v("j")], v("acc", FLOAT32), 15),
    ]
    locs = [local(n) for n in ("i", "j", "li", "lj", "ntiles", "t", "t_c", "k", "k_c")] + [local("acc", FLOAT32)]
    return kernel("matmul_tiled", [A, B, C], body, locs, shared=[As, Bs])


def reduce_sum(T: int = 64) -> ir.Module:
    """Per-group tree sum in shared memory; the barrier sits in a while loop."""
    x = buf("x", FLOAT32, 1, 0)
    out = buf("out", FLOAT32, 1, 1, read=False, written=True)
    sh = ir.SharedDecl(name="sh", py_name="sh", dtype=FLOAT32, shape=(T,))
    r = shared_ref(sh)
    body = [
        assign("lid", bid("local_id"), 3),
        store(r, [v("lid")], load(x, gid(0)), 4),
        ir.Barrier(loc=L(5)),
        assign("s", binop("FloorDiv", bid("local_size"), c(2)), 6),
        ir.While(cond=cmp("Gt", v("s"), c(0)), loc=L(7), body=[
            ir.If(cond=cmp("Lt", v("lid"), v("s")), loc=L(8), then=[
                store(r, [v("lid")], binop("Add", load(r, v("lid")), load(r, binop("Add", v("lid"), v("s")))), 9)]),
            ir.Barrier(loc=L(10)),
            assign("s", binop("FloorDiv", v("s"), c(2)), 11),
        ]),
        ir.If(cond=cmp("Eq", v("lid"), c(0)), loc=L(12), then=[
            store(out, [bid("group_id")], load(r, c(0)), 13)]),
    ]
    return kernel("reduce_sum", [x, out], body, [local("lid"), local("s")], shared=[sh])


def atomics(t: ScalarType, op: str) -> ir.Module:
    """old[i] = atomic_OP(acc[idx[i]], val[i]) (cas: compare with cmp[i])."""
    from dotcompute.lang.types import INT32
    idx = buf("idx", INT32, 1, 0)
    val = buf("val", t, 1, 1)
    acc = buf("acc", t, 1, 2, read=True, written=True)
    old = buf("old", t, 1, 3, read=False, written=True)
    params = [idx, val, acc, old]
    compare = None
    if op == "cas":
        cmpb = buf("cmpb", t, 1, 4)
        params.append(cmpb)
        compare = load(cmpb, v("i"))
    at = ir.AtomicOp(op=op, buffer=ref(acc), indices=[ir.Cast(value=load(idx, v("i")), type=INT64)],
                     value=load(val, v("i")), compare=compare, type=t, loc=L(5))
    body = [assign("i", gid(0), 3),
            ir.If(cond=cmp("Lt", v("i"), shape(val)), loc=L(4), then=[store(old, [v("i")], at, 5)])]
    return kernel(f"atomic_{op}_{t}", params, body, [local("i")])


def with_device_function(debug: bool = False) -> ir.Module:
    """out[i] = scale_at(a, i, 2.0) with @dc.func scale_at(x, i, s) -> x[i] * s."""
    x = buf("x", FLOAT32, 1, 0)
    fi, fs = scalar("fi", INT64, 1), scalar("fs", FLOAT32, 2)
    fn = ir.Function(name="scale_at_f32", py_name="scale_at", params=[x, fi, fs], return_type=FLOAT32,
                     filename=FILE, loc=L(20), body=[
                         ir.Return(value=binop("Mult", load(x, v("fi"), line=21), v("fs", FLOAT32)), loc=L(21))])
    a = buf("a", FLOAT32, 1, 0)
    out = buf("out", FLOAT32, 1, 1, read=False, written=True)
    call = ir.Call(func=fn.name, args=[ir.BufferArg(buffer=ref(a)), v("i"), c(2.0, FLOAT32)], type=FLOAT32)
    body = [assign("i", gid(0), 3),
            ir.If(cond=cmp("Lt", v("i"), shape(out)), then=[store(out, [v("i")], call, 4)], loc=L(4))]
    return kernel("use_func", [a, out], body, [local("i")], functions=[fn], debug=debug)
