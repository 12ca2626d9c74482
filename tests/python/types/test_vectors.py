"""Small vectors and matrices (dc.vec3, dc.mat33, dc.vector, dc.matrix) against numpy.

One test body per construct runs on every available accelerator (CPU, OpenCL, the CUDA
simulator under DOTCOMPUTE_CUDA_SIM=1); the same kernels are compiled by NVRTC and run as MSL
through the Metal shim at the end of the file. Buffers of vectors are numpy arrays with
trailing dimensions, packed: a (n, 3) float32 array round-trips exactly everywhere.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dotcompute as dc

N = 37
RNG = np.random.default_rng(7)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# kernels (module level: every test and every backend check uses the same ones)


@dc.kernel
def vec_arith(a: dc.Buffer[dc.vec3], b: dc.Buffer[dc.vec3], s: dc.Buffer[dc.float32], out: dc.Buffer[dc.vec3, 2],
              sc: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        x = a[i]
        y = b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y
        out[i, 2] = x * y
        out[i, 3] = x / (y + 2.0)
        out[i, 4] = -x
        out[i, 5] = s[i] * x
        out[i, 6] = x * s[i] - 1.0
        w = x
        w += y
        w *= 2.0
        w -= dc.vec3(1.0)
        out[i, 7] = w
        out[i, 8] = dc.cross(x, y)
        out[i, 9] = dc.normalize(x)
        out[i, 10] = abs(x)
        out[i, 11] = dc.vec3(min(x.x, y.x), dc.max(x.y, y.y), x.z)
        sc[i, 0] = dc.dot(x, y)
        sc[i, 1] = dc.length(x)
        sc[i, 2] = dc.length_sq(y)
        sc[i, 3] = x @ y


def vec_arith_ref(a, b, s):
    out = np.stack([a + b, a - b, a * b, a / (b + 2), -a, s[:, None] * a, a * s[:, None] - 1,
                    (a + b) * 2 - 1, np.cross(a, b), a / np.linalg.norm(a, axis=1)[:, None], np.abs(a),
                    np.stack([np.minimum(a[:, 0], b[:, 0]), np.maximum(a[:, 1], b[:, 1]), a[:, 2]], 1)], 1)
    sc = np.stack([(a * b).sum(1), np.linalg.norm(a, axis=1), (b * b).sum(1), (a * b).sum(1)], 1)
    return out, sc


@dc.kernel
def vec_components(a: dc.Buffer[dc.vec4], k: dc.Buffer[dc.int32], out: dc.Buffer[dc.vec4],
                   comp: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        v = a[i]
        comp[i, 0] = v.x + 10.0 * v.w
        comp[i, 1] = v[k[i]]            # run-time index of a local
        comp[i, 2] = a[i][k[i]]         # run-time index straight into the buffer
        comp[i, 3] = a[i].y
        comp[i, 4] = a[i, 2]            # numpy's a[i, 2]
        comp[i, 5] = v[-1]
        v.y = 5.0
        v[k[i]] = -1.0
        out[i] = v
        out[i].z = out[i].z + 100.0     # a component of a buffer element
        out[i][0] += 0.5


@dc.kernel
def vec_ctors(x: dc.Buffer[dc.float32], out4: dc.Buffer[dc.vec4], outd: dc.Buffer[dc.vector(2, dc.float64)],
              outi: dc.Buffer[dc.vector(3, dc.int32)]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        t = x[i]
        v3 = dc.vec3(t, 2.0 * t, 3)
        out4[i] = dc.vec4(v3, -t)
        d = dc.vector(2, dc.float64)(t, 1)
        d = d * 0.5
        outd[i] = d
        iv = dc.vector(3, dc.int32)(i, 2 * i, 7)
        iv += dc.vector(3, dc.int32)(1)
        outi[i] = iv
        b = dc.vec2()
        b.x += t
        outd[i, 0] = outd[i, 0] + b.x + b.y


@dc.kernel
def roundtrip(src: dc.Buffer[dc.vec3], dst: dc.Buffer[dc.vec3], src2: dc.Buffer[dc.vec3, 2],
              dst2: dc.Buffer[dc.vec3, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < src2.shape[0] and j < src2.shape[1]:
        dst2[i, j] = src2[i, j]
        if j == 0 and i < src.shape[0]:
            dst[i] = src[i]


@dc.kernel
def mat_ops(m: dc.Buffer[dc.mat33], v: dc.Buffer[dc.vec3], q: dc.mat33, c: dc.vec3, mv: dc.Buffer[dc.vec3, 2],
            mm: dc.Buffer[dc.mat33], det: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    if i < m.shape[0]:
        a = m[i]
        x = v[i]
        mv[i, 0] = a @ x
        mv[i, 1] = x @ a
        mv[i, 2] = q @ x + c
        mv[i, 3] = a[1]                 # a row
        mm[5 * i + 0] = a @ q
        mm[5 * i + 1] = dc.transpose(a)
        mm[5 * i + 2] = a.T * 2.0 + 1.0
        mm[5 * i + 3] = dc.outer(x, c)
        b = a
        b[0, 1] = 9.0
        b[2][2] = -9.0
        b[1] = x
        mm[5 * i + 4] = b
        det[i, 0] = dc.determinant(a)
        det[i, 1] = m[i][2, 1] + m[i, 0][2]
        det[i, 2] = dc.determinant(dc.matrix(2, 2, dc.float32)(a[0, 0], a[0, 1], a[1, 0], a[1, 1]))
        d4 = dc.mat44()                 # zeros (dc.mat44(s) fills every element with s)
        for r in range(3):
            for s in range(3):
                d4[r, s] = a[r, s]
        d4[3, 3] = 2.0
        det[i, 3] = dc.determinant(d4)


@dc.func
def reflect(v: dc.vec3, n: dc.vec3) -> dc.vec3:
    return v - 2.0 * dc.dot(v, n) * n


@dc.func
def first_negative(v):          # generic: typed by the vec4 argument; returns inside a loop
    for k in range(4):
        if v[k] < 0:
            return k
    return -1


@dc.func
def swap_xy(v):
    w = v
    w.x, w.y = v.y, v.x
    return w


@dc.func
def scaled(m: dc.mat33, s: dc.float32) -> dc.mat33:
    return m * s


@dc.kernel
def vec_funcs(a: dc.Buffer[dc.vec4], n: dc.vec3, out: dc.Buffer[dc.vec3], idx: dc.Buffer[dc.int64],
              mo: dc.Buffer[dc.mat33]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        v = a[i]
        r = reflect(dc.vec3(v.x, v.y, v.z), dc.normalize(n))
        out[i] = swap_xy(r)
        idx[i] = first_negative(v)
        mo[i] = scaled(dc.mat33(v.x), v.w)


@dc.kernel
def vec_forms(a: dc.Buffer[dc.vec3], b: dc.Buffer[dc.vec3], out: dc.Buffer[dc.vec3],
              fl: dc.Buffer[dc.vector(3, dc.int64)], s: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        x = a[i]
        y = b[i]
        out[4 * i] = x if x.x > y.x else y
        out[4 * i + 1] = x ** 2 + x // 0.25 + x % 0.5
        m = dc.mat33(x, y, dc.vec3(1.0, 2.0, 3.0))     # rows
        out[4 * i + 2] = m @ dc.vec3(1.0)
        out[4 * i + 3] = dc.sqrt(abs(x)) + dc.vec3()
        fl[i] = math.floor(x * 4.0)                    # Python's floor: int64 elements
        s[i] = x @ y


@dc.kernel
def vec_swaps(a: dc.Buffer[dc.vec3, 2], out: dc.Buffer[dc.vec3, 2], ln: dc.Buffer[dc.int64]):
    n, m = a.shape                      # the buffer's dimensions, not the floats'
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < n and j < m:
        x = a[i, j]
        y = -x
        x, y = y, x                     # values first, then the targets
        x.x, x.y = x.y, x.x
        out[i, j] = x + 10.0 * y
        if i == 0 and j == 0:
            ln[0] = len(x) + 10 * len(a) + 100 * a.ndim


@dc.kernel
def scatter_add(idx: dc.Buffer[dc.int32], f: dc.Buffer[dc.vec3], total: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    if i < idx.shape[0]:
        v = f[i]
        for k in range(3):
            dc.atomic_add(total, (idx[i], k), v[k])   # one component, by its full index


@dc.kernel
def nbody_tiles(pos: dc.Buffer[dc.vec3], acc_out: dc.Buffer[dc.vec3], sw: dc.Buffer[dc.vec4]):
    tile = dc.shared((64,), dc.vec3)                # work-group memory of vectors
    i = dc.global_id(0)
    l = dc.local_id(0)
    p = pos[i]
    a = dc.vec3()
    for t in range(0, pos.shape[0], 64):
        tile[l] = pos[t + l]
        dc.barrier()
        for k in range(len(tile)):
            d = tile[k] - p
            a += d / (dc.length_sq(d) + 0.01) ** 1.5
        dc.barrier()
    acc_out[i] = a
    sw[i] = dc.vec4(p.zy, p.xx) * (dc.float32(tile.size) / 64.0)   # swizzles (read); tile.size == 64


def nbody_ref(pos):
    d = pos[None, :, :] - pos[:, None, :]
    return (d / ((d ** 2).sum(-1) + np.float32(0.01))[..., None] ** 1.5).sum(1)


H4 = dc.vector(4, dc.float16)
H22 = dc.matrix(2, 2, dc.float16)


@dc.kernel
def half_vectors(a: dc.Buffer[H4], b: dc.Buffer[H4], out: dc.Buffer[H4], m: dc.Buffer[H22], mo: dc.Buffer[H22]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        out[i] = a[i] * b[i] + a[i] / 3.0
        mo[i] = m[i] @ m[i]


def half_vectors_ref(a, b, m):
    """numpy's float16 arithmetic: every operation rounded to half, as the kernel's."""
    mm = np.empty_like(m)
    for r in range(2):
        for c in range(2):
            mm[:, r, c] = m[:, r, 0] * m[:, 0, c] + m[:, r, 1] * m[:, 1, c]
    return a * b + a / np.float16(3), mm


def _launch(acc, kern, size, *args):
    acc.launch(kern, size, *args)
    acc.synchronize()


# ---------------------------------------------------------------------------------------------
# every accelerator


def test_vector_arithmetic(accelerator):
    a, b, s = rand(N, 3), rand(N, 3), rand(N)
    out, sc = np.zeros((N, 12, 3), np.float32), np.zeros((N, 4), np.float32)
    _launch(accelerator, vec_arith, N, a, b, s, out, sc)
    want, want_sc = vec_arith_ref(a, b, s)
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(sc, want_sc, rtol=2e-6, atol=2e-6)


def test_conditional_power_floor_division_rows_and_math_on_vectors(accelerator):
    a, b = rand(N, 3), rand(N, 3)
    out, fl, s = np.zeros((4 * N, 3), np.float32), np.zeros((N, 3), np.int64), np.zeros(N, np.float32)
    _launch(accelerator, vec_forms, N, a, b, out, fl, s)
    o = out.reshape(N, 4, 3)
    np.testing.assert_array_equal(o[:, 0], np.where((a[:, 0] > b[:, 0])[:, None], a, b))
    np.testing.assert_allclose(o[:, 1], a ** 2 + a // np.float32(0.25) + a % np.float32(0.5), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(o[:, 2], np.stack([a.sum(1), b.sum(1), np.full(N, 6)], 1), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(o[:, 3], np.sqrt(np.abs(a)), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(fl, np.floor(a * 4))
    np.testing.assert_allclose(s, (a * b).sum(1), rtol=1e-5, atol=1e-6)


def test_atomics_on_components_of_a_vector_buffer(accelerator):
    idx = RNG.integers(0, 10, 500).astype(np.int32)
    f = RNG.integers(-8, 8, (500, 3)).astype(np.float32)     # small integers: exact in any order
    total = np.zeros((10, 3), np.float32)
    _launch(accelerator, scatter_add, 500, idx, f, total)
    want = np.zeros((10, 3), np.float32)
    np.add.at(want, idx, f)
    np.testing.assert_array_equal(total, want)


def test_shared_arrays_of_vectors_and_swizzles(accelerator):
    pos = rand(256, 3)
    out, sw = np.zeros_like(pos), np.zeros((256, 4), np.float32)
    accelerator.launch(nbody_tiles, 256, pos, out, sw, local_size=64)
    accelerator.synchronize()
    ref = nbody_ref(pos)
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())
    np.testing.assert_array_equal(sw, pos[:, [2, 1, 0, 0]])


def _half_inputs():
    rng = np.random.default_rng(3)
    return (rng.uniform(-2, 2, (N, 4)).astype(np.float16), rng.uniform(-2, 2, (N, 4)).astype(np.float16),
            rng.uniform(-2, 2, (N, 2, 2)).astype(np.float16))


def test_float16_vectors_and_matrices_are_numpys_bits(accelerator):
    a, b, m = _half_inputs()
    out, mo = np.zeros_like(a), np.zeros_like(m)
    _launch(accelerator, half_vectors, N, a, b, out, m, mo)
    want, want_m = half_vectors_ref(a, b, m)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(mo, want_m)


def test_tuple_assignment_shape_unpacking_and_len(accelerator):
    a = rand(4, 5, 3)
    out, ln = np.zeros_like(a), np.zeros(1, np.int64)
    _launch(accelerator, vec_swaps, (4, 5), a, out, ln)
    want = -a
    want[..., [0, 1]] = want[..., [1, 0]]
    np.testing.assert_allclose(out, want + 10 * a, rtol=1e-6, atol=1e-6)
    assert ln[0] == 3 + 10 * 4 + 100 * 2


def test_vector_components_and_indexing(accelerator):
    a = rand(N, 4)
    k = RNG.integers(0, 4, N).astype(np.int32)
    out, comp = np.zeros((N, 4), np.float32), np.zeros((N, 6), np.float32)
    _launch(accelerator, vec_components, N, a, k, out, comp)
    rows = np.arange(N)
    np.testing.assert_allclose(comp[:, 0], a[:, 0] + 10 * a[:, 3], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(comp[:, 1], a[rows, k])
    np.testing.assert_array_equal(comp[:, 2], a[rows, k])
    np.testing.assert_array_equal(comp[:, 3], a[:, 1])
    np.testing.assert_array_equal(comp[:, 4], a[:, 2])
    np.testing.assert_array_equal(comp[:, 5], a[:, 3])
    want = a.copy()
    want[:, 1] = 5
    want[rows, k] = -1
    want[:, 2] += 100
    want[:, 0] += 0.5
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_vector_constructors(accelerator):
    x = rand(N)
    out4, outd, outi = np.zeros((N, 4), np.float32), np.zeros((N, 2)), np.zeros((N, 3), np.int32)
    _launch(accelerator, vec_ctors, N, x, out4, outd, outi)
    np.testing.assert_array_equal(out4, np.stack([x, 2 * x, np.full(N, 3, np.float32), -x], 1))
    want_d = np.stack([x.astype(np.float64), np.ones(N)], 1) * 0.5
    want_d[:, 0] += x
    np.testing.assert_allclose(outd, want_d, rtol=1e-7)
    i = np.arange(N, dtype=np.int32)
    np.testing.assert_array_equal(outi, np.stack([i + 1, 2 * i + 1, np.full(N, 8)], 1))


def test_buffers_of_vectors_round_trip_exactly(accelerator):
    """Layout: a (n, 3) float32 array is packed (12 bytes per vec3) on every backend."""
    src = RNG.standard_normal((N, 3)).astype(np.float32)
    src[0] = [np.inf, -0.0, np.nan]
    src2 = RNG.standard_normal((5, 7, 3)).astype(np.float32)
    dst, dst2 = np.zeros_like(src), np.zeros_like(src2)
    _launch(accelerator, roundtrip, (5, 7), src, dst, src2, dst2)
    assert dst2.tobytes() == src2.tobytes()
    assert dst[:5].tobytes() == src[:5].tobytes()
    assert not dst[5:].any()


def test_matrices(accelerator):
    m, v = rand(N, 3, 3), rand(N, 3)
    q, c = rand(3, 3), (0.5, -1.0, 2.0)
    mv, mm, det = np.zeros((N, 4, 3), np.float32), np.zeros((N * 5, 3, 3), np.float32), np.zeros((N, 4), np.float32)
    _launch(accelerator, mat_ops, N, m, v, q, c, mv, mm, det)
    mm = mm.reshape(N, 5, 3, 3)
    cc = np.array(c, np.float32)
    np.testing.assert_allclose(mv[:, 0], np.einsum("nij,nj->ni", m, v), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv[:, 1], np.einsum("ni,nij->nj", v, m), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv[:, 2], v @ q.T + cc, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(mv[:, 3], m[:, 1])
    np.testing.assert_allclose(mm[:, 0], m @ q, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(mm[:, 1], m.transpose(0, 2, 1))
    np.testing.assert_allclose(mm[:, 2], m.transpose(0, 2, 1) * 2 + 1, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(mm[:, 3], v[:, :, None] * cc[None, None, :], rtol=1e-6, atol=1e-6)
    b = m.copy()
    b[:, 0, 1] = 9
    b[:, 2, 2] = -9
    b[:, 1] = v
    np.testing.assert_array_equal(mm[:, 4], b)
    np.testing.assert_allclose(det[:, 0], np.linalg.det(m), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(det[:, 1], m[:, 2, 1] + m[:, 0, 2])
    np.testing.assert_allclose(det[:, 2], np.linalg.det(m[:, :2, :2]), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(det[:, 3], 2 * np.linalg.det(m), rtol=1e-4, atol=1e-5)


def test_device_functions_take_and_return_vectors(accelerator):
    a = rand(N, 4)
    a[3] = [1, 2, 3, 4]                 # no negative component
    n = np.array([0.0, 3.0, 4.0], np.float32)
    out, idx, mo = np.zeros((N, 3), np.float32), np.zeros(N, np.int64), np.zeros((N, 3, 3), np.float32)
    _launch(accelerator, vec_funcs, N, a, n, out, idx, mo)
    nn = n / np.linalg.norm(n)
    r = a[:, :3] - 2 * (a[:, :3] @ nn)[:, None] * nn
    np.testing.assert_allclose(out, r[:, [1, 0, 2]], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(idx, [next((k for k in range(4) if row[k] < 0), -1) for row in a])
    np.testing.assert_allclose(mo, (a[:, 0] * a[:, 3])[:, None, None] * np.ones((1, 3, 3)), rtol=1e-6, atol=1e-6)


def test_vector_arguments_accept_tuples_and_arrays(accelerator):
    m, v = rand(4, 3, 3), rand(4, 3)
    outs = []
    for q, c in [(np.eye(3, dtype=np.float32), (1, 2, 3)), (np.eye(3).tolist(), np.array([1.0, 2.0, 3.0]))]:
        mv, mm, det = np.zeros((4, 4, 3), np.float32), np.zeros((4 * 5, 3, 3), np.float32), np.zeros((4, 4), np.float32)
        _launch(accelerator, mat_ops, 4, m, v, q, c, mv, mm, det)
        outs.append(mv[:, 2])
    np.testing.assert_allclose(outs[0], v + [1, 2, 3], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(outs[0], outs[1])


# ---------------------------------------------------------------------------------------------
# argument checks (before anything runs)


def test_wrong_trailing_shape_names_the_parameter():
    a = np.zeros((N, 4), np.float32)
    out = np.zeros((N, 3), np.float32)
    with pytest.raises(dc.KernelTypeError, match=r"parameter 'src' expects a buffer of vec3: a float32 array of "
                                                 r"shape \(n, 3\).*\(37, 4\)"):
        dc.launch(roundtrip, N, a, out, np.zeros((2, 2, 3), np.float32), np.zeros((2, 2, 3), np.float32),
                  accelerator="cpu")
    ok = np.zeros((N, 3), np.float32)
    dc.launch(roundtrip, (2, 2), ok, out, np.zeros((2, 2, 3), np.float32), np.zeros((2, 2, 3), np.float32),
              accelerator="cpu")
    # the cached launch checks again
    with pytest.raises(dc.KernelTypeError, match="parameter 'dst2'"):
        dc.launch(roundtrip, (2, 2), ok, out, np.zeros((2, 2, 3), np.float32), np.zeros((2, 2, 4), np.float32),
                  accelerator="cpu")
    with pytest.raises(dc.KernelTypeError, match="parameter 'src' .*float64"):
        dc.launch(roundtrip, N, ok.astype(np.float64), out, np.zeros((2, 2, 3), np.float32),
                  np.zeros((2, 2, 3), np.float32), accelerator="cpu")


def test_wrong_vector_argument_names_the_parameter():
    m, v = rand(2, 3, 3), rand(2, 3)
    bufs = (np.zeros((2, 4, 3), np.float32), np.zeros((2 * 5, 3, 3), np.float32), np.zeros((2, 4), np.float32))
    with pytest.raises(dc.KernelTypeError, match=r"parameter 'c' expects a vec3 \(shape \(3,\)\), got shape \(2,\)"):
        dc.launch(mat_ops, 2, m, v, np.eye(3), (1.0, 2.0), *bufs, accelerator="cpu")
    with pytest.raises(dc.KernelTypeError, match=r"parameter 'q' expects a mat33"):
        dc.launch(mat_ops, 2, m, v, np.eye(2), (1.0, 2.0, 3.0), *bufs, accelerator="cpu")


def test_host_side_constructors_and_functions():
    assert dc.vec3(1, 2, 3).tolist() == [1, 2, 3] and dc.vec3(1, 2, 3).dtype == np.float32
    assert dc.vec3(2).tolist() == [2, 2, 2]
    assert dc.mat22(1, 2, 3, 4).tolist() == [[1, 2], [3, 4]]
    assert dc.vector(2, dc.int32)(1, 2).dtype == np.int32
    assert dc.dot(dc.vec3(1, 2, 3), dc.vec3(1, 1, 1)) == 6
    assert dc.cross(dc.vec3(1, 0, 0), dc.vec3(0, 1, 0)).tolist() == [0, 0, 1]
    assert repr(dc.Buffer[dc.vec3]) == "dc.Buffer[dc.vec3, 1]"
    assert reflect(dc.vec3(1, -1, 0), dc.vec3(0, 1, 0)).tolist() == [1, 1, 0]  # @dc.func runs on the host too


# ---------------------------------------------------------------------------------------------
# NVRTC and the Metal shim

KERNELS = [vec_arith, vec_components, vec_ctors, roundtrip, mat_ops, vec_funcs, vec_forms, vec_swaps,
           scatter_add, nbody_tiles, half_vectors]


@pytest.mark.parametrize("kern", KERNELS, ids=lambda k: k.name)
def test_nvrtc_compiles_every_vector_kernel(kern):
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is None:
        pytest.skip("NVRTC (nvidia-cuda-nvrtc-cu12) is not installed")
    src = kern.source("cuda")
    ok, log = harness.nvrtc_compile(src, kern.name)
    assert ok, log
    ok, log = harness.nvrtc_compile(kern.source("cuda", debug=True), kern.name)
    assert ok, log


def _run_msl():
    return pytest.importorskip("runner").run_msl


def test_metal_shim_runs_vector_kernels():
    run_msl = _run_msl()
    a, b, s = rand(N, 3), rand(N, 3), rand(N)
    out, sc = np.zeros((N, 12, 3), np.float32), np.zeros((N, 4), np.float32)
    run_msl(vec_arith.source("metal"), [a, b, s, out, sc], global_size=N, local_size=8)
    want, want_sc = vec_arith_ref(a, b, s)
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(sc, want_sc, rtol=2e-6, atol=2e-6)
    src = RNG.standard_normal((N, 3)).astype(np.float32)
    src2 = RNG.standard_normal((5, 7, 3)).astype(np.float32)
    dst, dst2 = np.zeros_like(src), np.zeros_like(src2)
    run_msl(roundtrip.source("metal"), [src, dst, src2, dst2], global_size=(5, 7), local_size=(1, 7))
    assert dst2.tobytes() == src2.tobytes() and dst[:5].tobytes() == src[:5].tobytes()


def test_metal_shim_runs_matrix_and_function_kernels():
    run_msl = _run_msl()
    m, v, q, c = rand(N, 3, 3), rand(N, 3), rand(3, 3), np.array([0.5, -1.0, 2.0], np.float32)
    mv, mm, det = np.zeros((N, 4, 3), np.float32), np.zeros((N * 5, 3, 3), np.float32), np.zeros((N, 4), np.float32)
    # scalar vector/matrix arguments are one number per component in the expanded ABI
    run_msl(mat_ops.source("metal"), [m, v, *q.reshape(-1), *c, mv, mm, det], global_size=N, local_size=8)
    mm = mm.reshape(N, 5, 3, 3)
    np.testing.assert_allclose(mv[:, 2], v @ q.T + c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mm[:, 0], m @ q, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(det[:, 0], np.linalg.det(m), rtol=1e-4, atol=1e-5)
    a = rand(N, 4)
    n = np.array([0.0, 3.0, 4.0], np.float32)
    out, idx, mo = np.zeros((N, 3), np.float32), np.zeros(N, np.int64), np.zeros((N, 3, 3), np.float32)
    run_msl(vec_funcs.source("metal"), [a, *n, out, idx, mo], global_size=N, local_size=8)
    np.testing.assert_array_equal(idx, [next((k for k in range(4) if row[k] < 0), -1) for row in a])
    a, b, m = _half_inputs()
    out, mo = np.zeros_like(a), np.zeros_like(m)
    run_msl(half_vectors.source("metal"), [a, b, out, m, mo], global_size=N, local_size=8)
    want, want_m = half_vectors_ref(a, b, m)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(mo, want_m)
    pos = rand(128, 3)
    out, sw = np.zeros_like(pos), np.zeros((128, 4), np.float32)
    run_msl(nbody_tiles.source("metal"), [pos, out, sw], global_size=128, local_size=64)
    ref = nbody_ref(pos)
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())


@dc.func
def broken(v: dc.vec3) -> dc.vec3:
    return v.q


def test_check_device_functions_with_vectors():
    for f in (reflect, first_negative, swap_xy, scaled):
        f.check()                       # generic ones are tried with vec3 arguments
    with pytest.raises(dc.KernelTypeError, match="a vec3 has no component 'q'"):
        broken.check()
    for k in KERNELS:
        k.check()


@dc.kernel
def quat_ops(axes: dc.Buffer[dc.vec3], angles: dc.Buffer[dc.float32], v: dc.Buffer[dc.vec3],
             out: dc.Buffer[dc.vec3], qs: dc.Buffer[dc.quat]):
    i = dc.global_id(0)
    if i < v.shape[0]:
        q = dc.quat_from_axis_angle(axes[i], angles[i])
        r = dc.quat_mul(q, dc.quat_from_axis_angle(dc.vec3(0.0, 0.0, 1.0), 0.5))
        qs[i] = r
        out[3 * i] = dc.quat_rotate(q, v[i])
        out[3 * i + 1] = dc.quat_to_matrix(q) @ v[i]
        out[3 * i + 2] = dc.quat_rotate(dc.quat_conjugate(r), dc.quat_rotate(r, v[i]))


def _rotation(axis, angle):
    """Rodrigues' formula in float64."""
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


def test_quaternions(accelerator):
    axes, angles, v = rand(N, 3), rand(N, lo=-3, hi=3), rand(N, 3)
    out, qs = np.zeros((3 * N, 3), np.float32), np.zeros((N, 4), np.float32)
    _launch(accelerator, quat_ops, N, axes, angles, v, out, qs)
    o = out.reshape(N, 3, 3)
    want = np.stack([_rotation(axes[i].astype(np.float64), angles[i]) @ v[i] for i in range(N)])
    np.testing.assert_allclose(o[:, 0], want, atol=2e-6)
    np.testing.assert_allclose(o[:, 1], want, atol=2e-6)
    np.testing.assert_allclose(o[:, 2], v, atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(qs, axis=1), 1, atol=1e-6)
    # the same helpers run on the host (numpy)
    q = dc.quat_from_axis_angle(axes[0], angles[0])
    np.testing.assert_allclose(dc.quat_rotate(q, v[0]), want[0], atol=2e-6)
    ok, log = (True, "")
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is not None:
        ok, log = harness.nvrtc_compile(quat_ops.source("cuda"), quat_ops.name)
    assert ok, log


@pytest.mark.parametrize("kern", [k for k in KERNELS if k is not vec_ctors] + [quat_ops], ids=lambda k: k.name)
def test_metal_shim_compiles_every_float32_vector_kernel(kern):
    """Every kernel Metal can run (vec_ctors uses float64) compiles as MSL (run as C++ by the shim)."""
    compile_msl = pytest.importorskip("runner").compile_msl
    compile_msl(kern.source("metal"))
