"""How users drive kernels: streams and events, numpy vs dc.Buffer arguments, argument checks,
debug-mode bounds errors and the messages for common mistakes."""

import numpy as np
import pytest
from realworld_helpers import line_of

import dotcompute as dc


@dc.kernel
def axpby(a: dc.float32, x: dc.Buffer[dc.float32], b: dc.float32, y: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < y.shape[0]:
        y[i] = a * x[i] + b * y[i]


@dc.kernel
def row_sums(m: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32]):
    r = dc.global_id(0)
    if r < m.shape[0]:
        s: dc.float32 = 0.0
        for c in range(m.shape[1]):
            s += m[r, c]
        out[r] = s


def test_two_streams_events_and_timing(accelerator):
    n = 4096
    rng = np.random.default_rng(60)
    x1, x2 = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    s1, s2 = accelerator.stream(), accelerator.stream()
    bx1, bx2 = accelerator.asarray(x1), accelerator.asarray(x2)
    y1, y2 = accelerator.zeros((n,), np.float32), accelerator.zeros((n,), np.float32)
    start = s1.record()
    for _ in range(10):
        dc.launch(axpby, n, 1.0, bx1, 0.5, y1, stream=s1)
    mid = s1.record()
    for _ in range(5):
        dc.launch(axpby, n, 2.0, bx2, 1.0, y2, stream=s2)
    end = s1.record()
    s1.synchronize()
    s2.synchronize()
    t_all, t_first = start.elapsed(end), start.elapsed(mid)
    assert t_all >= t_first >= 0.0
    ref1 = np.zeros(n, np.float64)
    for _ in range(10):
        ref1 = x1 + 0.5 * ref1
    np.testing.assert_allclose(y1.numpy(), ref1, rtol=1e-5)
    np.testing.assert_allclose(y2.numpy(), 10.0 * x2, rtol=1e-5)


def test_async_buffer_launch_then_synchronize(accelerator):
    x = accelerator.asarray(np.ones(1000, np.float32))
    y = accelerator.asarray(np.full(1000, 2.0, np.float32))
    for _ in range(20):
        accelerator.launch(axpby, 1000, 1.0, x, 1.0, y)
    accelerator.synchronize()
    assert (y.numpy() == 22.0).all()


def test_numpy_args_written_copied_back_readonly_untouched(accelerator):
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    m.flags.writeable = False  # a read-only parameter may be given a read-only array
    out = np.zeros(3, np.float32)
    dc.launch(row_sums, 3, m, out, accelerator=accelerator)
    np.testing.assert_array_equal(out, m.sum(1))
    np.testing.assert_array_equal(m, np.arange(12, dtype=np.float32).reshape(3, 4))


def test_readonly_array_for_written_parameter_is_refused(accelerator):
    x = np.ones(8, np.float32)
    y = np.ones(8, np.float32)
    y.flags.writeable = False
    with pytest.raises((TypeError, ValueError, dc.DotComputeError)):
        dc.launch(axpby, 8, 1.0, x, 1.0, y, accelerator=accelerator)
    assert (y == 1).all()


def test_mixed_buffer_and_numpy_arguments(accelerator):
    x = accelerator.asarray(np.arange(16, dtype=np.float32))
    y = np.ones(16, np.float32)
    dc.launch(axpby, 16, 3.0, x, 1.0, y, accelerator=accelerator)
    np.testing.assert_array_equal(y, 3 * np.arange(16) + 1)
    scalar = np.float32(2.0)  # numpy scalars are fine for scalar parameters
    dc.launch(axpby, 16, scalar, x, 0, y, accelerator=accelerator)
    np.testing.assert_array_equal(y, 2 * np.arange(16))


def _clear_error(exc: BaseException, param: str) -> bool:
    msg = str(exc).lower()
    return param in msg or "contiguous" in msg


def test_noncontiguous_input_works_or_raises_clearly(accelerator):
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    view = base.T  # (10, 6), Fortran order
    out = np.zeros(10, np.float32)
    try:
        dc.launch(row_sums, 10, view, out, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert _clear_error(e, "m"), str(e)
    else:
        np.testing.assert_array_equal(out, view.sum(1))


def test_strided_output_view_works_or_raises_clearly(accelerator):
    x = np.arange(8, dtype=np.float32)
    big = np.zeros(16, np.float32)
    y = big[::2]
    try:
        dc.launch(axpby, 8, 1.0, x, 0.0, y, accelerator=accelerator)
    except (TypeError, ValueError, dc.DotComputeError) as e:
        assert _clear_error(e, "y"), str(e)
        assert (big == 0).all()
    else:
        np.testing.assert_array_equal(big[::2], x)  # written through the view
        assert (big[1::2] == 0).all()


def test_wrong_dtype_names_parameter(accelerator):
    with pytest.raises(dc.KernelTypeError) as ei:
        dc.launch(axpby, 4, 1.0, np.ones(4, np.float64), 1.0, np.ones(4, np.float32), accelerator=accelerator)
    assert "'x'" in str(ei.value) or " x" in str(ei.value)
    assert isinstance(ei.value, TypeError)


def test_wrong_ndim_names_parameter(accelerator):
    with pytest.raises(dc.KernelTypeError) as ei:
        dc.launch(row_sums, 3, np.ones(12, np.float32), np.zeros(3, np.float32), accelerator=accelerator)
    assert "m" in str(ei.value).replace("dimension", "")


def test_too_few_arguments(accelerator):
    with pytest.raises(TypeError) as ei:
        dc.launch(axpby, 4, 1.0, np.ones(4, np.float32), 1.0, accelerator=accelerator)
    assert "y" in str(ei.value)


def test_float_for_int_scalar_is_refused():
    @dc.kernel
    def fill(a: dc.Buffer[dc.int32], v: dc.int32):
        i = dc.global_id(0)
        if i < a.shape[0]:
            a[i] = v

    a = np.zeros(4, np.int32)
    with pytest.raises(dc.KernelTypeError) as ei:
        dc.launch(fill, 4, a, 2.5, accelerator=dc.accelerator("cpu"))
    assert "v" in str(ei.value)
    dc.launch(fill, 4, a, 7, accelerator=dc.accelerator("cpu"))
    assert (a == 7).all()


def test_calling_kernel_like_function_is_type_error():
    with pytest.raises(TypeError):
        axpby(1.0, np.ones(2, np.float32), 1.0, np.ones(2, np.float32))


@dc.kernel(debug=True)
def forward_diff(x: dc.Buffer[dc.float32], d: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < d.shape[0]:
        d[i] = x[i + 1] - x[i]  # OOB-READ: the classic off-by-one at the last item


def test_debug_bounds_check_names_buffer_and_line(accelerator):
    x = np.arange(10, dtype=np.float32)
    d = np.zeros(10, np.float32)  # should have been 9 long
    with pytest.raises(dc.KernelIndexError) as ei:
        dc.launch(forward_diff, 10, x, d, accelerator=accelerator)
    e = ei.value
    assert e.lineno == line_of(__file__, "# OOB-READ")
    assert e.filename.endswith("test_rw_runtime.py")
    assert "x" in e.buffer
    assert e.index == 10
    assert "test_rw_runtime.py" in str(e) and str(e.lineno) in str(e)


@dc.kernel(debug=True)
def bad_transpose(a: dc.Buffer[dc.float32, 2], t: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < a.shape[0] and j < a.shape[1]:
        t[i, j] = a[i, j]  # OOB-WRITE: t has the transposed shape


def test_debug_bounds_check_2d_write(accelerator):
    a = np.ones((3, 5), np.float32)
    t = np.zeros((5, 3), np.float32)
    with pytest.raises(dc.KernelIndexError) as ei:
        dc.launch(bad_transpose, a.shape, a, t, accelerator=accelerator)
    assert ei.value.lineno == line_of(__file__, "# OOB-WRITE")
    assert "t" in ei.value.buffer
    # t is (5, 3): t[i, j] with j >= 3 is out of range along axis 1 even though i * 3 + j < 15
    assert ei.value.index in {i * 3 + j for i in range(3) for j in range(3, 5)}


def test_debug_env_variable_turns_checks_on(accelerator, run_python, tmp_cache):
    script = tmp_cache.parent / "user_script.py"
    script.write_text(f"""import numpy as np, dotcompute as dc
@dc.kernel
def k(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i + 2] = 1.0
try:
    dc.launch(k, 4, np.zeros(4, np.float32), accelerator=dc.accelerator("{accelerator.id}"))
except dc.KernelIndexError as e:
    print("RAISED", e.lineno, e.index)
else:
    print("NO ERROR")
""")
    r = run_python(f"import runpy; runpy.run_path({str(script)!r})", env={"DOTCOMPUTE_DEBUG": "1"})
    assert "RAISED 6 4" in r.stdout, r.stdout + r.stderr


def _expect(exc_type, kernel, tag, *args):
    marker = "# ERR-" + tag
    with pytest.raises(exc_type) as ei:
        dc.launch(kernel, 4, *args, accelerator=dc.accelerator("cpu"))
    e = ei.value
    assert e.lineno == line_of(__file__, marker), str(e)
    assert e.filename.endswith("test_rw_runtime.py")
    assert marker in str(e), str(e)  # the offending source line is shown
    return e


def test_list_inside_kernel_is_located():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        w = [0.25, 0.5, 0.25]  # ERR-LIST
        a[i] = w[1]

    _expect(dc.KernelSyntaxError, k, "LIST", np.zeros(4, np.float32))


def test_numpy_call_inside_kernel_is_located():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = np.sum(a)  # ERR-NUMPY

    _expect(dc.KernelSyntaxError, k, "NUMPY", np.zeros(4, np.float32))


def test_print_inside_kernel_is_located():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        if i == 0:
            print("debug", a[i])  # ERR-PRINT

    _expect(dc.KernelSyntaxError, k, "PRINT", np.zeros(4, np.float32))


def _python_helper(v):
    return v * 2


def test_plain_python_helper_call_is_located():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = _python_helper(a[i])  # ERR-HELPER

    _expect(dc.KernelSyntaxError, k, "HELPER", np.zeros(4, np.float32))


def test_type_changing_accumulator_is_located_with_hint():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
        total = 0
        for j in range(a.shape[0]):
            total += a[j] * 0.5  # ERR-ACC
        out[dc.global_id(0)] = total

    e = _expect(dc.KernelTypeError, k, "ACC", np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert "total" in str(e)


@dc.func
def _bad_func(v: dc.float32) -> dc.float32:
    return sum((v, v))  # ERR-FUNC


def test_error_inside_device_function_points_into_it():
    @dc.kernel
    def k(a: dc.Buffer[dc.float32]):
        i = dc.global_id(0)
        a[i] = _bad_func(a[i])

    with pytest.raises(dc.KernelSyntaxError) as ei:
        dc.launch(k, 4, np.zeros(4, np.float32), accelerator=dc.accelerator("cpu"))
    assert ei.value.lineno == line_of(__file__, "# ERR-FUNC")


@dc.kernel
def tiled_like(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], ls: dc.Buffer[dc.int64]):
    t = dc.shared((32,), dc.float32)
    l = dc.local_id(0)
    w = dc.local_size(0)
    t[l] = x[dc.global_id(0)]
    dc.barrier()
    out[dc.global_id(0)] = t[w - 1 - l]   # reverse inside the group
    if dc.global_id(0) == 0:
        ls[0] = w


def test_shared_kernel_with_default_local_size(accelerator):
    # local_size=None: the group must fit the (32,) shared array and divide the global size
    x = np.arange(96, dtype=np.float32)
    out = np.zeros_like(x)
    ls = np.zeros(1, np.int64)
    dc.launch(tiled_like, 96, x, out, ls, accelerator=accelerator)
    w = int(ls[0])
    assert 1 <= w <= 32 and 96 % w == 0
    np.testing.assert_array_equal(out, x.reshape(-1, w)[:, ::-1].ravel())
    dc.launch(tiled_like, 96, x, out, ls, local_size=32, accelerator=accelerator)
    assert ls[0] == 32
    np.testing.assert_array_equal(out, x.reshape(3, 32)[:, ::-1].ravel())


def test_numpy_integer_sizes(accelerator):
    n = np.int64(100)
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    gsize = (n + np.int64(31)) // np.int64(32) * np.int64(32)   # sizes computed with numpy
    dc.launch(axpby, gsize, 1.0, x, 0.0, y, local_size=np.int32(32), accelerator=accelerator)
    np.testing.assert_array_equal(y, x)
    m = np.zeros((4, 5), np.float32)
    out = np.zeros(4, np.float32)
    dc.launch(row_sums, (np.int64(m.shape[0]),), m + 1, out, accelerator=accelerator)
    assert (out == 5).all()


def test_generated_source_for_every_backend():
    from test_rw_linalg import matmul_tiled
    from test_rw_physics import mc_pi
    from test_rw_reduce import histogram_private
    from test_rw_semantics import shading
    from test_rw_sort_nn import softmax_rows
    portable = ((matmul_tiled, "matmul_tiled"), (softmax_rows, "softmax_rows"), (tiled_like, "tiled_like"),
                (histogram_private, "histogram_private"))
    for k, name in portable:
        for backend in ("cpu", "cuda", "opencl", "metal"):
            src = k.source(backend)
            assert isinstance(src, str) and name in src, (name, backend)
    # int64 atomics, and float64 (literal arguments of the generic clamp are float64): not on Metal
    for k, name in ((mc_pi, "mc_pi"), (shading, "shading")):
        for backend in ("cpu", "cuda", "opencl"):
            assert name in k.source(backend), (name, backend)


def test_scalar_out_of_range_names_parameter(accelerator):
    @dc.kernel
    def fill2(a: dc.Buffer[dc.int32], v: dc.int32, u: dc.uint32):
        i = dc.global_id(0)
        if i < a.shape[0]:
            a[i] = v + dc.int32(u)

    a = np.zeros(2, np.int32)
    for v, u, bad in ((2**40, 1, "v"), (1, -1, "u"), (1, 2**33, "u")):
        with pytest.raises(dc.KernelTypeError) as ei:
            dc.launch(fill2, 2, a, v, u, accelerator=accelerator)
        assert f"'{bad}'" in str(ei.value), str(ei.value)
    dc.launch(fill2, 2, a, np.int64(5), np.uint64(7), accelerator=accelerator)   # numpy ints that fit
    assert (a == 12).all()


def test_bad_launch_shapes_are_launch_errors(accelerator):
    a = np.zeros(64, np.float32)
    for g, l in (((4, 1, 1, 1), None), ((64,), (8, 8)), (64, 0), (64.0, None), ((8, 8), 4), (0, None)):
        with pytest.raises(dc.LaunchError):
            dc.launch(axpby, g, 1.0, a, 1.0, a.copy(), local_size=l, accelerator=accelerator)
