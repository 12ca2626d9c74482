"""Audit 2: the runtime facade of DESIGN.md "Python API", on every accelerator.

Constructors users guess (``dc.Accelerator("cpu:0")`` as in ``cupy.cuda.Device(0)``), accelerator
specs, host views, streams and events, the memory pool's statistics, numpy arguments copied back
only when written, buffers that keep their plugin loaded, and threads launching at once.
"""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def bump(a: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] + 1.0


@dc.kernel
def copy(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i]


@dc.kernel
def scale2d(k: dc.float32, a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = k * a[i, j]


N = 301


# -- constructors ---------------------------------------------------------------------------------

def test_accelerator_constructor_is_the_spec_lookup(accelerator):
    acc = dc.Accelerator(accelerator.id)
    assert acc is accelerator is dc.accelerator(accelerator.id)
    b = acc.zeros(N, np.float32)  # the object works (it used to fail here with AttributeError)
    acc.launch(bump, N, b)
    assert (b.numpy() == 1).all()
    assert dc.Accelerator(acc) is acc
    assert pickle.loads(pickle.dumps(acc)) is acc


def test_accelerator_constructor_defaults_and_errors():
    assert dc.Accelerator() is dc.accelerator("auto")
    assert dc.Accelerator("CPU") is dc.accelerator("cpu:0")
    with pytest.raises(TypeError, match="spec"):
        dc.Accelerator(None)
    with pytest.raises(TypeError, match="spec"):
        dc.Accelerator(0)
    with pytest.raises(dc.BackendUnavailableError, match="cpu:7"):
        dc.Accelerator("cpu:7")


def test_stream_event_and_buffer_constructors(accelerator):
    s = dc.Stream(accelerator)
    assert isinstance(s, dc.Stream) and s.accelerator is accelerator
    assert dc.Stream(accelerator.id).accelerator is accelerator
    b = accelerator.zeros(N, np.float32)
    dc.launch(bump, N, b, accelerator=accelerator, stream=s)
    e = s.record()
    assert isinstance(e, dc.Event)
    e.synchronize()
    assert (b.numpy() == 1).all()
    with pytest.raises(TypeError, match="acc.stream()"):
        dc.Stream()
    with pytest.raises(TypeError, match="record"):
        dc.Event()
    with pytest.raises(TypeError, match="acc.empty"):
        dc.Buffer((3,), np.float32)


# -- accelerator specs ----------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["opencl:x", "", "   ", "cpu:-1", "cpu:0:1", "vulkan", "auto:0"])
def test_malformed_specs_are_value_errors_with_the_reason(spec):
    with pytest.raises(ValueError) as info:
        dc.accelerator(spec)
    assert isinstance(info.value, dc.BackendUnavailableError)
    assert "cpu:0" in str(info.value)  # lists what is available


@pytest.mark.parametrize("spec", ["cuda:7", "opencl:7", "cpu:3", "metal:2"])
def test_missing_devices_are_unavailable_with_the_reason(spec):
    with pytest.raises(dc.BackendUnavailableError) as info:
        dc.accelerator(spec)
    assert info.value.reason
    assert "available devices" in str(info.value)


def test_spec_spellings():
    cpu = dc.accelerator("cpu:0")
    assert dc.accelerator("CPU") is cpu and dc.accelerator(" cpu ") is cpu
    assert dc.accelerator("best") in dc.devices()
    non_cpu = [d for d in dc.devices() if d.type != "cpu"]
    if non_cpu:
        assert dc.accelerator("gpu").type != "cpu"
    else:
        with pytest.raises(dc.BackendUnavailableError):
            dc.accelerator("gpu")
    with pytest.raises(TypeError):
        dc.accelerator(None)


# -- launch arguments -----------------------------------------------------------------------------

def test_numpy_inputs_are_not_copied_back(accelerator):
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    accelerator.launch(copy, N, x, out)  # compile outside the profile
    with dc.profile() as prof:
        accelerator.launch(copy, N, x, out)
    np.testing.assert_array_equal(out, x)
    down = [t for t in prof.transfers if t.direction == "d2h"]
    # only ``out`` comes back (on the CPU nothing moves at all)
    assert sum(t.bytes for t in down) == (0 if accelerator.unified_memory else out.nbytes)


def test_non_contiguous_2d_numpy_arguments(accelerator):
    a = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    src = a[:, ::2]  # strided columns
    dst_base = np.zeros((6, 8), np.float32)
    dst = dst_base[:, 1::2]
    accelerator.launch(scale2d, (6, 4), 2.0, src, dst)
    np.testing.assert_array_equal(dst, 2 * src)
    assert (dst_base[:, ::2] == 0).all()
    f = np.asfortranarray(a[:, :4])
    out = np.zeros((6, 4), np.float32)
    accelerator.launch(scale2d, (6, 4), 3.0, f, out)
    np.testing.assert_array_equal(out, 3 * a[:, :4])


def test_read_only_array_for_a_written_parameter_is_refused(accelerator):
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    out.flags.writeable = False
    with pytest.raises(dc.KernelTypeError, match="'out'") as info:
        accelerator.launch(copy, N, x, out)
    assert "read-only" in str(info.value) or "writ" in str(info.value)
    assert (out == 0).all()
    # a read-only view of a writable array is still read-only
    base = np.zeros(N, np.float32)
    view = base[:]
    view.flags.writeable = False
    with pytest.raises(dc.KernelTypeError, match="'a'"):
        accelerator.launch(bump, N, view)


@pytest.mark.parametrize(("args", "param"), [((np.zeros(N, np.float64), np.zeros(N, np.float32)), "x"),
                                             ((np.zeros(N, np.float32), np.zeros((N, 1), np.float32)), "out"),
                                             ((np.zeros(N, np.float32),), "2"),
                                             ((np.zeros(N, np.float32), 3.0), "out")])
def test_launch_argument_errors_name_the_parameter(accelerator, args, param):
    with pytest.raises(dc.KernelTypeError, match=param):
        accelerator.launch(copy, N, *args)


# -- host views -----------------------------------------------------------------------------------

def test_host_view_written_then_raising_still_counts(accelerator):
    b = accelerator.zeros(N, np.float32)
    with pytest.raises(KeyError):
        with b.host() as h:
            h[:] = 5
            raise KeyError("boom")
    accelerator.launch(bump, N, b)  # the device sees what the block wrote before it raised
    assert (b.numpy() == 6).all()


def test_host_view_round_trip_with_kernels_between(accelerator):
    b = accelerator.asarray(np.arange(N, dtype=np.float32))
    accelerator.launch(bump, N, b)
    with b.host() as h:  # the device's newer data is what the view shows
        np.testing.assert_array_equal(h, np.arange(N, dtype=np.float32) + 1)
        h[::2] = -1
    accelerator.launch(bump, N, b)
    expect = np.arange(N, dtype=np.float32) + 2
    expect[::2] = 0
    np.testing.assert_array_equal(b.numpy(), expect)


# -- streams and events ---------------------------------------------------------------------------

def test_events_of_two_streams_share_the_device_clock(accelerator):
    s1, s2 = accelerator.stream(), accelerator.stream()
    b = accelerator.zeros(N, np.float32)
    e1 = s1.record()
    e1.synchronize()
    accelerator.launch(bump, N, b, stream=s2)
    e2 = s2.record()
    e2.synchronize()
    assert e1.elapsed(e2) >= 0.0
    assert e1.elapsed(e1) == 0.0
    assert e1.query() and e2.query()
    with pytest.raises(TypeError):
        e1.elapsed(None)


def test_events_of_different_accelerators_are_refused(accelerator):
    others = [d for d in dc.devices() if d is not accelerator]
    if not others:
        pytest.skip("one accelerator only")
    mine, theirs = accelerator.stream().record(), others[0].stream().record()
    with pytest.raises(ValueError, match="different accelerators"):
        mine.elapsed(theirs)
    with pytest.raises(ValueError, match="cannot wait"):
        accelerator.stream().wait(theirs)


# -- the memory pool ------------------------------------------------------------------------------

def test_memory_stats_follow_buffers_and_trim(accelerator):
    accelerator.synchronize()
    accelerator.memory.trim()
    before = accelerator.memory.stats()
    assert before["reserved"] >= before["in_use"] >= 0
    bufs = [accelerator.empty(1 << 16, np.float32) for _ in range(3)]
    during = accelerator.memory.stats()
    assert during["in_use"] >= before["in_use"] + 3 * (1 << 18)
    assert during["peak"] >= during["in_use"]
    del bufs
    accelerator.synchronize()
    after = accelerator.memory.stats()
    assert after["in_use"] == before["in_use"]
    accelerator.memory.trim()
    trimmed = accelerator.memory.stats()
    assert trimmed["reserved"] == trimmed["in_use"] == before["in_use"]
    again = accelerator.empty(1 << 16, np.float32)
    assert accelerator.memory.stats()["in_use"] >= before["in_use"] + again.nbytes


# -- a plugin stays loaded while its objects live --------------------------------------------------

def test_buffers_keep_their_backend_loaded(run_python):
    done = run_python(r"""
import gc
import numpy as np
import dotcompute as dc
acc = dc.accelerator("opencl") if any(d.backend == "opencl" for d in dc.devices()) else None
if acc is None:
    print("SKIP"); raise SystemExit(0)
b = acc.asarray(np.arange(10, dtype=np.float32))
try:
    dc.runtime.unload_plugin("opencl")
    print("UNLOADED")
except dc.PluginError as e:
    assert "in use" in str(e), e
np.testing.assert_array_equal(b.numpy(), np.arange(10, dtype=np.float32))
assert dc.accelerator("opencl") is acc
print("OK")
""")
    assert done.returncode == 0, done.stderr
    if "SKIP" in done.stdout:
        pytest.skip("no OpenCL device")
    assert "OK" in done.stdout and "UNLOADED" not in done.stdout


# -- threads --------------------------------------------------------------------------------------

def _in_threads(work, n: int = 8) -> None:
    errors: list[BaseException] = []

    def wrapped(i: int) -> None:
        try:
            work(i)
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors


@pytest.mark.parametrize("where", ["default stream", "one stream", "own streams"])
def test_eight_threads_launch_at_once(accelerator, where):
    shared = accelerator.stream()
    counter = accelerator.zeros(N, np.float32)  # every thread bumps it on the shared queue
    own = [accelerator.zeros(N, np.float32) for _ in range(8)]
    rounds = 10

    def work(i: int) -> None:
        stream = {"default stream": None, "one stream": shared, "own streams": accelerator.stream()}[where]
        for _ in range(rounds):
            accelerator.launch(bump, N, own[i], stream=stream)
        if stream is not None:
            stream.synchronize()
        if where != "own streams":
            for _ in range(rounds):
                accelerator.launch(bump, N, counter, stream=stream)

    _in_threads(work)
    accelerator.synchronize()
    for b in own:
        assert (b.numpy() == rounds).all()
    if where != "own streams":  # one in-order queue: no bump is lost
        assert (counter.numpy() == 8 * rounds).all()


# -- copies and pickling --------------------------------------------------------------------------

def test_copies_of_a_buffer_do_not_share_memory(accelerator):
    import copy

    b = accelerator.asarray(np.arange(N, dtype=np.float32))
    for dup in (copy.copy(b), copy.deepcopy(b)):
        assert dup is not b and dup.accelerator is accelerator
        dup.copy_from(np.zeros(N, np.float32))
        accelerator.launch(bump, N, dup)
        np.testing.assert_array_equal(b.numpy(), np.arange(N, dtype=np.float32))  # numpy's meaning
        assert (dup.numpy() == 1).all()


def test_buffers_pickle_by_value(accelerator):
    b = accelerator.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    back = pickle.loads(pickle.dumps(b))
    assert back is not b and back.accelerator is accelerator
    assert back.shape == (3, 4) and back.dtype == np.int32
    np.testing.assert_array_equal(back.numpy(), b.numpy())
    lazy = b * 2  # an unevaluated expression pickles as its value
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(lazy)).numpy(), b.numpy() * 2)


@pytest.mark.parametrize("spec", ["", "  "])
def test_an_empty_spec_says_it_is_empty(spec):
    with pytest.raises(ValueError, match="empty") as info:
        dc.accelerator(spec)
    assert "auto" in str(info.value) and info.value.reason == "empty accelerator spec"
