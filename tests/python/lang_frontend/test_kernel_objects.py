"""Kernel and device-function objects, argument checks and launch-size handling (no device needed)."""

import numpy as np
import pytest

import dotcompute as dc
from dotcompute.lang import ir
from dotcompute.lang import types as T
from dotcompute.lang.launching import barrier_local_size
from dotcompute.launch import _sizes


@dc.kernel
def annotated(x: dc.Buffer[dc.float32, 2], s: dc.int32, flag: dc.bool_):
    i = dc.global_id(0)
    if flag and i < x.shape[0]:
        x[i, 0] = s


@dc.kernel(debug=True, name="renamed")
def named(x: dc.Buffer[dc.float32]):
    x[0] = 1


@dc.func
def host_too(a, b):
    return a * b + 1


@dc.kernel
def walrus(x: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if (n := x[i] * 2) > 3:
        x[i] = n


def test_decorator_forms_and_names():
    assert isinstance(annotated, dc.Kernel) and annotated.__name__ == "annotated"
    assert named.ir().kernel.name.startswith("renamed_")
    assert named.ir().kernel.debug
    assert "renamed_" in named.source("cpu")


def test_kernels_are_not_called_directly():
    with pytest.raises(TypeError, match="dc.launch"):
        annotated(np.zeros((2, 2), np.float32), 1, True)


def test_device_functions_run_as_python_on_the_host():
    assert host_too(3, 4) == 13


def test_walrus():
    m = walrus.ir()
    assert any(isinstance(n, ir.Bind) for n in ir.walk(m.kernel))
    assert next(v for v in m.kernel.locals if v.py_name == "n").type is T.INT64


def test_argument_checks_name_the_parameter():
    ok = annotated.types_from_args((np.zeros((2, 2), np.float32), 3, True))
    assert ok[0] == T.BufferType(T.FLOAT32, 2)
    with pytest.raises(dc.KernelTypeError, match="'x'.*float32.*float64"):
        annotated.types_from_args((np.zeros((2, 2), np.float64), 3, True))
    with pytest.raises(dc.KernelTypeError, match="'x'.*2 dimension"):
        annotated.types_from_args((np.zeros(4, np.float32), 3, True))
    with pytest.raises(dc.KernelTypeError, match="'s'.*float"):
        annotated.types_from_args((np.zeros((2, 2), np.float32), 3.5, True))
    with pytest.raises(dc.KernelTypeError, match="takes 3 argument"):
        annotated.types_from_args((np.zeros((2, 2), np.float32),))
    with pytest.raises(dc.KernelTypeError, match="'s'.*array"):
        annotated.types_from_args((np.zeros((2, 2), np.float32), np.zeros(2), True))
    with pytest.raises(dc.KernelTypeError, match="'flag'"):
        annotated.types_from_args((np.zeros((2, 2), np.float32), 1, "yes"))


def test_debug_from_the_environment(monkeypatch):
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "1")
    assert annotated.ir().kernel.debug
    monkeypatch.setenv("DOTCOMPUTE_DEBUG", "0")
    assert not annotated.ir().kernel.debug


def test_check_reports_nothing_for_a_good_kernel():
    annotated.check()
    walrus.check()


@pytest.mark.parametrize("value,expected", [(5, (5,)), ((2, 3), (2, 3)), ([1, 2, 3], (1, 2, 3)),
                                            (np.int64(7), (7,))])
def test_sizes(value, expected):
    assert _sizes(value, "global_size") == expected


@pytest.mark.parametrize("value,message", [(0, "positive"), ((1, 2, 3, 4), "1 to 3"), (2.5, "int"),
                                           ((2, -1), r"global_size\[1\]"), (True, "int"), ((), "1 to 3")])
def test_bad_sizes_name_the_parameter(value, message):
    with pytest.raises(dc.LaunchError, match=message):
        _sizes(value, "global_size")


def test_barrier_kernels_get_a_dividing_local_size():
    assert barrier_local_size("k", (1000,), None, 256) == (250,)
    assert barrier_local_size("k", (64, 64), None, 256) == (64, 4)
    assert barrier_local_size("k", (12,), (4,), 256) == (4,)
    assert barrier_local_size("k", (64,), None, 256, (16, 1 << 30, 1 << 30)) == (16,)  # dc.shared((16,), ...)
    with pytest.raises(dc.LaunchError, match="multiple"):
        barrier_local_size("k", (10,), (4,), 256)


def test_a_chosen_group_size_that_is_not_a_power_of_two_is_said():
    """A barrier kernel launched without local_size gets a dividing group size; when that is not a power of
    two (1000 -> 250) a tree that halves the group would lose elements, so a warning names it."""
    import warnings as _w

    from dotcompute.lang import launching

    launching._odd_groups_warned.clear()
    with _w.catch_warnings(record=True) as seen:
        _w.simplefilter("always")
        assert barrier_local_size("tree", (1000,), None, 256) == (250,)
        assert barrier_local_size("tree", (1000,), None, 256) == (250,)  # once per (kernel, size)
        assert barrier_local_size("tree", (4096,), None, 256) == (256,)
        assert barrier_local_size("tree", (1000,), (8,), 256) == (8,)  # given: nothing to say
    msgs = [str(w.message) for w in seen if issubclass(w.category, dc.DotComputeWarning)]
    assert len(msgs) == 1 and "(250,)" in msgs[0] and "local_size=" in msgs[0]


@dc.kernel
def _annotated_inc(x: dc.Buffer[dc.float32], a: dc.float32):
    i = dc.global_id(0)
    if i < x.shape[0]:
        x[i] += a


def test_a_signature_entry_for_an_annotated_parameter_is_checked():
    import numpy as np

    with pytest.raises(dc.KernelTypeError, match="float99"):
        _annotated_inc.source("cpu", signature=("float99", None))
    with pytest.raises(dc.KernelTypeError, match="annotated Buffer\\[float32"):
        _annotated_inc.source("cpu", signature=("float64", None))
    with pytest.raises(dc.KernelTypeError, match="annotated float32"):
        _annotated_inc.source("cpu", signature=(None, "float64"))
    # the annotation's own type, None ("as annotated") and example values that convert are fine
    for sig in (("float32", "float32"), (None, None), (np.zeros(3, np.float32), 1.0)):
        assert "_annotated_inc" in _annotated_inc.source("cpu", signature=sig)
