"""@dc.struct types against numpy structured arrays, on every available accelerator.

Layout rule (docs/kernel-language.md): a struct is a C struct of its fields in order, each at
the next multiple of its alignment (a scalar's size; a vector's or matrix's element size; a
nested struct's largest alignment), the size rounded up to the largest alignment — numpy's
``align=True`` layout, vectors packed (a vec3 field is 12 bytes). The C++-based targets
``static_assert`` the size; the round-trip kernel below checks every field's bytes everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

N = 29
RNG = np.random.default_rng(11)


@dc.struct
class Particle:
    pos: dc.vec3
    vel: dc.vec3
    mass: dc.float32


@dc.struct
class Inner:
    flag: dc.bool_
    k: dc.int64


@dc.struct
class Mixed:
    a: dc.uint8
    b: dc.float64
    c: dc.vec3
    d: dc.int16
    inner: Inner
    m: dc.mat22
    e: dc.uint32


@dc.struct
class Small:
    """Mixed without 64-bit fields (Metal has no double): a layout with padding every target can run."""

    a: dc.uint8
    c: dc.vec3
    d: dc.int16
    flag: dc.bool_
    m: dc.mat22
    e: dc.uint32


def particles(n: int = N) -> np.ndarray:
    ps = np.zeros(n, Particle.dtype)
    ps["pos"] = RNG.uniform(-1, 1, (n, 3))
    ps["vel"] = RNG.uniform(-1, 1, (n, 3))
    ps["mass"] = RNG.uniform(1, 2, n)
    return ps


def mixed(n: int = N) -> np.ndarray:
    xs = np.zeros(n, Mixed.dtype)
    xs["a"] = RNG.integers(0, 256, n)
    xs["b"] = RNG.standard_normal(n)
    xs["c"] = RNG.standard_normal((n, 3))
    xs["d"] = RNG.integers(-30000, 30000, n)
    xs["inner"]["flag"] = RNG.integers(0, 2, n).astype(bool)
    xs["inner"]["k"] = RNG.integers(-(1 << 62), 1 << 62, n)
    xs["m"] = RNG.standard_normal((n, 2, 2))
    xs["e"] = RNG.integers(0, 1 << 32, n, dtype=np.uint64)
    return xs


def assert_same_fields(got: np.ndarray, want: np.ndarray) -> None:
    """Every field's bytes equal (padding bytes are unspecified, as in C: a compiler may merge a
    field's store with the padding beside it)."""
    for name in want.dtype.names:
        g, w = got[name], want[name]
        if w.dtype.names:
            assert_same_fields(g, w)
        else:
            assert g.tobytes() == w.tobytes(), name


# ---------------------------------------------------------------------------------------------
# kernels


@dc.kernel
def copy_mixed(src: dc.Buffer[Mixed], dst: dc.Buffer[Mixed]):
    i = dc.global_id(0)
    if i < src.shape[0]:
        dst[i] = src[i]


@dc.kernel
def copy_small(src: dc.Buffer[Small], dst: dc.Buffer[Small]):
    i = dc.global_id(0)
    if i < src.shape[0]:
        dst[i] = src[i]


@dc.kernel
def mixed_fields(xs: dc.Buffer[Mixed], out: dc.Buffer[dc.float64, 2]):
    i = dc.global_id(0)
    if i < xs.shape[0]:
        x = xs[i]
        out[i, 0] = x.a
        out[i, 1] = x.b
        out[i, 2] = x.c.y
        out[i, 3] = x.d
        out[i, 4] = 1.0 if x.inner.flag else 0.0
        out[i, 5] = dc.float64(x.inner.k % 1000)
        out[i, 6] = xs[i].m[1, 0]
        out[i, 7] = x.e
        xs[i].inner.k = -5
        xs[i].m[0][1] = 7.5
        xs[i].c.z += 1.0
        xs[i].a = 200


@dc.kernel
def particle_step(ps: dc.Buffer[Particle], dt: dc.float32, gravity: dc.vec3, e: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < ps.shape[0]:
        p = ps[i]                       # a copy, by value
        p.vel += gravity * dt
        p.pos = p.pos + p.vel * dt
        p.mass = 2.0                    # only the copy
        q = p                           # another copy
        q.mass = 3.0
        e[i] = p.mass + 10.0 * q.mass
        ps[i].vel = p.vel
        ps[i].pos.x = p.pos.x           # a component of a field of a buffer element
        ps[i].pos.y = p.pos.y
        ps[i].mass *= 2.0


@dc.func
def kinetic(p: Particle) -> dc.float32:
    return 0.5 * p.mass * dc.dot(p.vel, p.vel)


@dc.func
def bounced(p: Particle, floor: dc.float32) -> Particle:
    q = p
    if q.pos.y < floor:
        q.pos.y = floor
        q.vel.y = -q.vel.y
    return q


@dc.func
def make(x):
    return Particle(pos=dc.vec3(x), mass=x)     # vel left out: zero


@dc.kernel
def particle_funcs(ps: dc.Buffer[Particle], proto: Particle, e: dc.Buffer[dc.float32],
                   out: dc.Buffer[Particle]):
    i = dc.global_id(0)
    if i < ps.shape[0]:
        e[i] = kinetic(ps[i]) + kinetic(proto)
        ps[i] = bounced(ps[i], 0.0)
        out[i] = make(dc.float32(i))
        if i == 0:
            out[i] = proto


@dc.struct
class Body:
    x: dc.vec3
    rot: dc.mat33
    tag: dc.int32


@dc.func
def axis(k):
    v = dc.vec3()
    v[k] = 1.0                          # a run-time component of a local
    return v


@dc.func
def spin(b: Body, k: dc.int32) -> Body:
    c = b
    for r in range(3):
        for s in range(3):
            c.rot[r, s] = c.rot[r, s] + dc.dot(axis(r), axis(s)) * dc.float32(k)   # inlined in a loop
    c.x = c.rot @ c.x
    if k > 2:
        return c                        # an early return
    c.tag = k
    return c


@dc.kernel
def spin_bodies(bs: dc.Buffer[Body], out: dc.Buffer[Body], total_out: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    if i < bs.shape[0]:
        b = bs[i]
        total = dc.vec3()
        k = 0
        while True:
            b = spin(b, k)
            total += b.x
            k += 1
            if k == 4:
                break
            if k == 1:
                continue
            total.y -= 1.0
        out[i] = b
        out[i].rot[i % 3, (i + 1) % 3] = -1.0   # a run-time element of a matrix field in a buffer
        total_out[i] = total


def spin_bodies_ref(bs):
    out, totals = bs.copy(), np.zeros((len(bs), 3), np.float32)
    for i in range(len(bs)):
        b, total = bs[i].copy(), np.zeros(3, np.float32)
        for k in range(4):
            b["rot"] = b["rot"] + np.eye(3, dtype=np.float32) * np.float32(k)
            b["x"] = b["rot"] @ b["x"]
            if k <= 2:
                b["tag"] = k
            total += b["x"]
            if k in (1, 2):
                total[1] -= 1
        out[i] = b
        out[i]["rot"][i % 3, (i + 1) % 3] = -1
        totals[i] = total
    return out, totals


def test_nested_inlining_loops_and_run_time_matrix_elements(accelerator):
    bs = np.zeros(N, Body.dtype)
    bs["x"], bs["rot"], bs["tag"] = RNG.uniform(0, 1, (N, 3)), RNG.uniform(0, 1, (N, 3, 3)), -5
    out, totals = np.zeros_like(bs), np.zeros((N, 3), np.float32)
    accelerator.launch(spin_bodies, N, bs, out, totals)
    accelerator.synchronize()
    want, want_totals = spin_bodies_ref(bs)
    np.testing.assert_allclose(out["x"], want["x"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["rot"], want["rot"])
    np.testing.assert_array_equal(out["tag"], want["tag"])
    np.testing.assert_allclose(totals, want_totals, rtol=1e-5, atol=1e-5)


def test_struct_dtype_layout():
    assert Particle.dtype.itemsize == 28 and Particle.dtype.fields["vel"][1] == 12
    assert Particle.dtype.fields["mass"][1] == 24
    # C layout with natural alignment: padding where the next field needs it
    assert Inner.dtype.itemsize == 16 and Inner.dtype.fields["k"][1] == 8
    off = {name: Mixed.dtype.fields[name][1] for name in Mixed.dtype.names}
    assert off == {"a": 0, "b": 8, "c": 16, "d": 28, "inner": 32, "m": 48, "e": 64}
    assert Mixed.dtype.itemsize == 72 and Mixed.dtype.isalignedstruct
    p = Particle(pos=(1, 2, 3), mass=2.5)
    assert p.dtype == Particle.dtype and p["pos"].tolist() == [1, 2, 3] and p["vel"].tolist() == [0, 0, 0]


def test_struct_buffers_round_trip_exactly(accelerator):
    if accelerator.backend == "metal":
        pytest.skip("Mixed has float64 fields")
    src = mixed()
    dst = np.zeros_like(src)
    accelerator.launch(copy_mixed, N, src, dst)
    accelerator.synchronize()
    assert_same_fields(dst, src)


def test_small_struct_round_trips_on_every_target(accelerator):
    assert {n: Small.dtype.fields[n][1] for n in Small.dtype.names} == {"a": 0, "c": 4, "d": 16, "flag": 18,
                                                                         "m": 20, "e": 36}
    assert Small.dtype.itemsize == 40
    src = np.zeros(N, Small.dtype)
    src["a"] = RNG.integers(0, 256, N)
    src["c"] = RNG.standard_normal((N, 3))
    src["d"] = RNG.integers(-30000, 30000, N)
    src["flag"] = RNG.integers(0, 2, N).astype(bool)
    src["m"] = RNG.standard_normal((N, 2, 2))
    src["e"] = RNG.integers(0, 1 << 32, N, dtype=np.uint64)
    dst = np.zeros_like(src)
    accelerator.launch(copy_small, N, src, dst)
    accelerator.synchronize()
    assert_same_fields(dst, src)


def test_struct_fields_read_and_write(accelerator):
    if accelerator.backend == "metal":
        pytest.skip("Mixed has float64 fields")
    xs = mixed()
    before = xs.copy()
    out = np.zeros((N, 8))
    accelerator.launch(mixed_fields, N, xs, out)
    accelerator.synchronize()
    want = np.stack([before["a"], before["b"], before["c"][:, 1], before["d"], before["inner"]["flag"],
                     np.mod(before["inner"]["k"], 1000), before["m"][:, 1, 0], before["e"]], 1)
    np.testing.assert_array_equal(out, want.astype(np.float64))
    after = before.copy()
    after["inner"]["k"] = -5
    after["m"][:, 0, 1] = 7.5
    after["c"][:, 2] += np.float32(1)
    after["a"] = 200
    assert_same_fields(xs, after)


def test_struct_locals_are_copies(accelerator):
    ps = particles()
    before = ps.copy()
    e = np.zeros(N, np.float32)
    g = np.array([0, -9.8, 0], np.float32)
    accelerator.launch(particle_step, N, ps, np.float32(0.01), g, e)
    accelerator.synchronize()
    vel = before["vel"] + g * np.float32(0.01)
    pos = before["pos"] + vel * np.float32(0.01)
    np.testing.assert_array_equal(e, np.full(N, 32.0, np.float32))
    # a device may contract x + v * dt into one FMA (a last-bit difference): atol for values near 0
    np.testing.assert_allclose(ps["vel"], vel, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ps["pos"][:, :2], pos[:, :2], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(ps["pos"][:, 2], before["pos"][:, 2])
    np.testing.assert_array_equal(ps["mass"], before["mass"] * 2)


def test_struct_arguments_and_device_functions(accelerator):
    ps = particles()
    ps["pos"][::2, 1] = -0.5            # below the floor: bounced
    before = ps.copy()
    e = np.zeros(N, np.float32)
    out = np.zeros(N, Particle.dtype)
    proto = Particle(pos=(1, 2, 3), vel=(0, 2, 0), mass=3.0)
    for arg in (proto, (np.array([1, 2, 3]), (0, 2, 0), 3.0)):     # a numpy struct scalar or a tuple
        ps[:] = before
        accelerator.launch(particle_funcs, N, ps, arg, e, out)
        accelerator.synchronize()
        ke = 0.5 * before["mass"] * (before["vel"] ** 2).sum(1) + 0.5 * 3 * 4
        np.testing.assert_allclose(e, ke, rtol=1e-6, atol=1e-6)
        low = before["pos"][:, 1] < 0
        np.testing.assert_array_equal(ps["pos"][:, 1], np.where(low, 0, before["pos"][:, 1]))
        np.testing.assert_array_equal(ps["vel"][:, 1], np.where(low, -before["vel"][:, 1], before["vel"][:, 1]))
        i = np.arange(N, dtype=np.float32)
        np.testing.assert_array_equal(out["pos"][1:], np.repeat(i[1:, None], 3, 1))
        np.testing.assert_array_equal(out["mass"][1:], i[1:])
        assert not out["vel"][1:].any()
        assert_same_fields(out[:1], np.asarray(proto)[None])


def test_struct_argument_checks():
    e, out = np.zeros(N, np.float32), np.zeros(N, Particle.dtype)
    ps = particles()
    proto = Particle(mass=1.0)
    with pytest.raises(dc.KernelTypeError, match=r"parameter 'ps' expects Particle.dtype elements, got another "
                                                 r"structured dtype"):
        dc.launch(particle_funcs, N, np.zeros(N, [("pos", "f4", 3), ("vel", "f4", 3), ("mass", "f8")]), proto, e,
                  out, accelerator="cpu")
    with pytest.raises(dc.KernelTypeError, match=r"parameter 'ps' expects an array of Particle.dtype, got float32"):
        dc.launch(particle_funcs, N, np.zeros((N, 7), np.float32), proto, e, out, accelerator="cpu")
    with pytest.raises(dc.KernelTypeError,
                       match=r"parameter 'proto' expects a Particle \(3 fields\), got a tuple of 2"):
        dc.launch(particle_funcs, N, ps, ((0, 0, 0), (0, 0, 0)), e, out, accelerator="cpu")
    with pytest.raises(dc.KernelTypeError, match=r"parameter 'proto' expects a vec3"):
        dc.launch(particle_funcs, N, ps, ((0, 0), (0, 0, 0), 1.0), e, out, accelerator="cpu")


def test_argument_count_names_the_python_parameters():
    ps, e = particles(), np.zeros(N, np.float32)
    dc.launch(particle_step, N, ps, np.float32(0.1), (0, 0, 0), e, accelerator="cpu")   # the cached plan
    with pytest.raises(dc.KernelTypeError, match=r"takes 4 argument\(s\) \(ps, dt, gravity, e\), got 3"):
        dc.launch(particle_step, N, ps, np.float32(0.1), (0, 0, 0), accelerator="cpu")


KERNELS = [(copy_mixed, False), (copy_small, True), (mixed_fields, False), (particle_step, True),
           (particle_funcs, True), (spin_bodies, True)]


@pytest.mark.parametrize("kern, metal", KERNELS, ids=lambda k: getattr(k, "name", ""))
def test_nvrtc_compiles_every_struct_kernel(kern, metal):
    harness = pytest.importorskip("harness")
    if harness.nvrtc_lib() is None:
        pytest.skip("NVRTC (nvidia-cuda-nvrtc-cu12) is not installed")
    for debug in (False, True):
        ok, log = harness.nvrtc_compile(kern.source("cuda", debug=debug), kern.name)
        assert ok, log


def test_metal_shim_runs_struct_kernels():
    run_msl = pytest.importorskip("runner").run_msl
    ps = particles()
    before = ps.copy()
    e = np.zeros(N, np.float32)
    g = np.array([0, -9.8, 0], np.float32)
    # struct buffers travel as their bytes; scalar vectors as one number per component
    raw = ps.view(np.uint8).reshape(N, Particle.dtype.itemsize)
    run_msl(particle_step.source("metal"), [raw, np.float32(0.01), *g, e], global_size=N, local_size=8)
    vel = before["vel"] + g * np.float32(0.01)
    np.testing.assert_allclose(ps["vel"], vel, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ps["mass"], before["mass"] * 2)
    np.testing.assert_array_equal(e, np.full(N, 32.0, np.float32))


@pytest.mark.parametrize("kern, metal", [k for k in KERNELS if k[1]], ids=lambda k: getattr(k, "name", ""))
def test_metal_shim_compiles_every_struct_kernel_without_float64(kern, metal):
    compile_msl = pytest.importorskip("runner").compile_msl
    compile_msl(kern.source("metal"))
