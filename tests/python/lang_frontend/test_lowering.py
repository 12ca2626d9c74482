# ruff: noqa: F841 -- kernels whose locals are only inspected in the IR
"""Python → IR lowering: types, explicit casts, Python semantics flags, structure."""

import math

import numpy as np

import dotcompute as dc
from dotcompute.lang import ir
from dotcompute.lang import types as T

SCALE = 3
OFFSET = 0.5


def nodes(module, cls):
    out = []
    for f in [*module.functions, module.kernel]:
        out += [n for n in ir.walk(f) if isinstance(n, cls)]
    return out


def assigned(module, py_name):
    k = module.kernel
    var = next(v for v in k.locals if v.py_name == py_name)
    return var, [s.value for s in ir.walk(k) if isinstance(s, ir.Assign) and s.name == var.name]


@dc.kernel
def literals(x: dc.Buffer[dc.float32], n: dc.int32):
    i = dc.global_id(0)
    a = x[i] * 2.0
    b = n + 1
    c = n / 2
    d = x[i] / n
    e = n // -3
    f = n % 4
    g = 7 // 2
    h = x[i] ** 2
    k = n ** 2
    m = n ** -1


def test_float_literal_next_to_float32_stays_float32():
    m = literals.ir()
    var, (value,) = assigned(m, "a")
    assert var.type is T.FLOAT32
    assert isinstance(value, ir.BinOp) and value.right.type is T.FLOAT32 and isinstance(value.right, ir.Const)


def test_int_literal_adapts_to_int32():
    var, (value,) = assigned(literals.ir(), "b")
    assert var.type is T.INT32 and value.right.type is T.INT32


def test_int_true_division_is_float64_with_casts():
    var, (value,) = assigned(literals.ir(), "c")
    assert var.type is T.FLOAT64
    assert value.op == "TrueDiv" and isinstance(value.left, ir.Cast) and value.left.type is T.FLOAT64


def test_float32_divided_by_int32_is_float64_as_numpy():
    var, (value,) = assigned(literals.ir(), "d")
    assert var.type is T.FLOAT64 and isinstance(value.right, ir.Cast)


def test_floor_division_and_mod_are_flagged():
    m = literals.ir()
    assert assigned(m, "e")[1][0].op == "FloorDiv"
    assert assigned(m, "f")[1][0].op == "Mod"


def test_constant_expressions_fold_with_python_semantics():
    var, (value,) = assigned(literals.ir(), "g")
    assert isinstance(value, ir.Const) and value.value == 3 and var.type is T.INT64


def test_pow_keeps_integral_exponents():
    m = literals.ir()
    h = assigned(m, "h")[1][0]
    assert h.type is T.FLOAT32 and h.right.type is T.INT32
    k = assigned(m, "k")[1][0]
    assert k.type is T.INT32 and k.right.type is T.INT32
    mm = assigned(m, "m")[1][0]
    assert mm.type is T.FLOAT64  # Python: an int to a negative power is a float


@dc.kernel
def chained(x: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if 0 <= x[i] + 1 < 10:
        x[i] = 1


def test_chained_comparison_evaluates_the_middle_once():
    m = chained.ir()
    binds = nodes(m, ir.Bind)
    assert len(binds) == 1
    cond = next(s for s in ir.walk(m.kernel) if isinstance(s, ir.If)).cond
    assert isinstance(cond, ir.BoolOp) and cond.op == "and" and len(cond.values) == 2
    assert isinstance(cond.values[1].left, ir.Var) and cond.values[1].left.name == binds[0].name


def make_scaled(factor):
    @dc.kernel
    def scaled(x: dc.Buffer[dc.float64]):
        i = dc.global_id(0)
        x[i] = x[i] * factor + SCALE + OFFSET

    return scaled


def test_closure_and_module_constants_are_folded():
    m2, m5 = make_scaled(2.0).ir(), make_scaled(5.0).ir()
    consts2 = {c.value for c in nodes(m2, ir.Const)}
    consts5 = {c.value for c in nodes(m5, ir.Const)}
    assert 2.0 in consts2 and 5.0 in consts5 and 3.0 in consts2 and 0.5 in consts2
    assert make_scaled(2.0).source("cpu") != make_scaled(5.0).source("cpu")


def test_changed_module_constant_makes_a_new_specialisation():
    global SCALE
    k = make_scaled(1.0)
    first = k.ir()
    assert k.ir() is first
    SCALE = 4
    try:
        second = k.ir()
        assert second is not first
        assert 4.0 in {c.value for c in nodes(second, ir.Const)}
    finally:
        SCALE = 3


@dc.kernel
def loops(x: dc.Buffer[dc.int32], n: dc.int32):
    total = 0
    for k in range(n, -1, -2):
        total += k
    j = 0
    while True:
        j += 1
        if j > 5:
            break
        if j == 2:
            continue
    x[0] = total + j


def test_range_with_negative_step():
    m = loops.ir()
    loop = nodes(m, ir.For)[0]
    assert loop.step_sign == -1 and isinstance(loop.step, ir.Const) and loop.step.value == -2
    assert loop.start.type is T.INT32 and isinstance(loop.start, ir.Var)  # a parameter: not copied
    assert any(v.name == loop.counter for v in m.kernel.locals)
    assert nodes(m, ir.Break) and nodes(m, ir.Continue) and nodes(m, ir.While)


@dc.func
def axpy(a, x, y):
    return a * x + y


@dc.func
def clamp01(v: dc.float32) -> dc.float32:
    return min(max(v, 0.0), 1.0)


@dc.kernel
def calls(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = clamp01(axpy(2.0, x[i], 1))
    out[i] += axpy(1, 2, 3)


def test_device_functions_are_specialised_per_argument_types():
    m = calls.ir()
    names = [f.py_name for f in m.functions]
    assert names.count("axpy") == 2 and names.count("clamp01") == 1
    by_types = {tuple(p.type for p in f.params): f for f in m.functions if f.py_name == "axpy"}
    # literal arguments stay Python numbers (weak, NEP 50): each is folded into its specialisation, so
    # axpy(2.0, x[i], 1) takes only x and computes in float32, and axpy(1, 2, 3) takes nothing
    assert (T.FLOAT32,) in by_types and () in by_types
    assert by_types[(T.FLOAT32,)].return_type is T.FLOAT32
    # callees come first
    assert m.functions.index(m.function(nodes(m, ir.Call)[0].func)) < len(m.functions)


def test_access_analysis():
    m = calls.ir()
    x, out = m.kernel.params
    assert x.read and not x.written
    assert out.written and out.read  # += reads it


@dc.func
def bump(buf: dc.Buffer[dc.int32], i: dc.int64):
    dc.atomic_add(buf, i, 1)


@dc.kernel
def through_func(counts: dc.Buffer[dc.int32], src: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    bump(counts, src[i])


def test_access_through_device_functions_and_atomics():
    m = through_func.ir()
    counts, src = m.kernel.params
    assert counts.written and counts.read and src.read and not src.written
    assert m.kernel.uses_atomics
    f = m.functions[0]
    assert f.return_type == T.VOID and f.params[0].written


@dc.kernel
def shared_and_barrier(x: dc.Buffer[dc.float32]):
    tile = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    tile[l] = x[dc.global_id(0)]
    dc.barrier()
    x[dc.global_id(0)] = tile[63 - l] + tile.shape[0]


def test_shared_arrays_and_barriers():
    m = shared_and_barrier.ir()
    k = m.kernel
    assert k.uses_barrier and len(k.shared) == 1 and k.shared[0].shape == (64,)
    loads = [n for n in nodes(m, ir.BufferLoad) if n.buffer.space == "shared"]
    assert loads and loads[0].buffer.shape == (64,)
    assert not any(isinstance(n, ir.Shape) for n in nodes(m, ir.Shape) if n.buffer.space == "shared")


@dc.kernel
def maths(x: dc.Buffer[dc.float32], y: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    x[i] = math.sqrt(x[i]) + dc.exp(x[i]) + abs(x[i]) + math.atan2(x[i], 1.0)
    y[i] = math.floor(x[i]) + round(x[i]) + int(x[i]) + abs(y[i])


def test_math_keeps_float32_and_python_int_results():
    m = maths.ir()
    calls_ = {c.name: c for c in nodes(m, ir.MathCall)}
    assert calls_["sqrt"].type is T.FLOAT32 and calls_["exp"].type is T.FLOAT32
    assert calls_["atan2"].args[1].type is T.FLOAT32
    assert calls_["floor"].type is T.FLOAT32  # the float floor, then int64 like Python
    store_y = [s for s in ir.walk(m.kernel) if isinstance(s, ir.BufferStore) and s.buffer.py_name == "y"][0]
    assert store_y.value.type is T.INT64


@dc.kernel
def generic(x: dc.Buffer, s):
    i = dc.global_id(0)
    x[i] = x[i] * s


def test_generic_kernels_specialise_per_dtype():
    f32 = generic.ir(np.zeros(4, np.float32), 2)
    f64 = generic.ir(np.zeros(4, np.float64), 2.5)
    assert f32.kernel.params[0].type == T.BufferType(T.FLOAT32, 1)
    assert f64.kernel.params[0].type == T.BufferType(T.FLOAT64, 1)
    assert f32.kernel.name != f64.kernel.name
    assert generic.ir(np.zeros(4, np.float32), 2) is f32
    sig = generic.ir(signature=(dc.Buffer[dc.int32], dc.int32))
    assert sig.kernel.params[1].type is T.INT32
    # the default specialisation: float32 buffers, int64 numbers
    assert generic.ir().kernel.params[0].type == T.BufferType(T.FLOAT32, 1)


@dc.kernel
def aug_index(x: dc.Buffer[dc.float32, 2], idx: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    x[idx[i] + 1, 0] += 1.0
    a, b = i, i + 1
    a, b = b, a
    x[a, b] = 0


def test_augmented_store_evaluates_indices_once_and_tuple_swap():
    m = aug_index.ir()
    loads_idx = [n for n in nodes(m, ir.BufferLoad) if n.buffer.py_name == "idx"]
    assert len(loads_idx) == 1
    assert idx_index_is_int64(m)


def idx_index_is_int64(m):
    return all(ix.type is T.INT64 for n in nodes(m, ir.BufferStore) for ix in n.indices)


@dc.kernel
def boolops(x: dc.Buffer[dc.int64], n: dc.int64):
    i = dc.global_id(0)
    x[i] = n or 7
    if not n and i:
        x[i] = -1


def test_value_or_returns_an_operand_and_truth_tests_compare_to_zero():
    m = boolops.ir()
    ifexp = nodes(m, ir.IfExp)[0]
    assert ifexp.type is T.INT64 and ifexp.cond.type is T.BOOL
    cond = nodes(m, ir.If)[0].cond
    assert isinstance(cond, ir.BoolOp) and all(v.type is T.BOOL for v in cond.values)


def test_every_expression_is_typed_and_located():
    for k in (literals, chained, loops, calls, maths, shared_and_barrier, boolops, constant_math, aug_index,
              through_func):
        m = k.ir()
        for f in [*m.functions, m.kernel]:
            for n in ir.walk(f):
                if isinstance(n, ir.Expr):
                    assert isinstance(n.type, T.ScalarType)
                    assert not (isinstance(n, ir.Const) and n.weak), (k, ir.format_expr(n))
                    if not isinstance(n, ir.Const):
                        assert n.loc.line > 0, (k, n)


def test_binop_operands_have_the_result_type():
    for k in (literals, chained, loops, calls, maths, boolops):
        m = k.ir()
        for n in nodes(m, ir.BinOp):
            if n.op == "Pow" and n.left.type.is_float:
                assert n.left.type is n.type
                continue
            assert n.left.type is n.right.type, ir.format_expr(n)
            if n.op not in ("TrueDiv",):
                assert n.left.type is n.type or n.type.is_bool


def test_debug_ids_and_names():
    m = through_func.ir(debug=True)
    assert m.kernel.debug
    assert m.debug_names[0] == "buffer 'counts'"
    assert any("device function 'bump'" in v for v in m.debug_names.values())


def test_source_for_every_backend_without_a_device():
    for backend in ("cpu", "cuda", "opencl", "metal"):
        assert "chained" in chained.source(backend)


@dc.kernel
def constant_math(x: dc.Buffer[dc.float64]):
    x[0] = math.sqrt(2.0) * math.pi
    x[1] = math.sqrt(-1.0)
    x[2] = math.floor(2.5) + 7 // 2


def test_math_on_constants_folds_and_leaves_domain_errors_to_the_device():
    m = constant_math.ir()
    stores = [s for s in ir.walk(m.kernel) if isinstance(s, ir.BufferStore)]
    assert isinstance(stores[0].value, ir.Const) and stores[0].value.value == math.sqrt(2.0) * math.pi
    assert isinstance(stores[1].value, ir.MathCall) and stores[1].value.name == "sqrt"
    assert isinstance(stores[2].value, ir.Const) and stores[2].value.value == 5.0
