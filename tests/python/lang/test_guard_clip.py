"""The CPU emitter folds a kernel's bounds guard (``if i < n:``, ``if i >= n: return``) into its
innermost loop's bound (lang/emit/guard_clip.py): the generated loop has no test left to turn into
masked vector loads and stores. Each form is checked twice: in the emitted C++ (the test is gone,
or stays where the rewrite would not be the same program) and by running it on cpu:0, with a launch
larger than the bound so that the items past it must leave the output untouched."""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc

N = 1000
ITEMS = 1100  # the launch: 100 items past the bound
SENTINEL = -7.0


@dc.kernel
def guarded(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], n: dc.int64):
    i = dc.global_id(0)
    if i < n:
        out[i] = a[i] * 2.0


@dc.kernel
def early_return(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], n: dc.int64):
    i = dc.global_id(0)
    if i >= n:
        return
    out[i] = a[i] + 1.0


@dc.kernel
def reversed_compare(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], n: dc.int64):
    if n - 3 > dc.global_id(0):
        out[dc.global_id(0)] = a[dc.global_id(0)] - 1.0


@dc.kernel
def data_or_bound(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], n: dc.int64):
    i = dc.global_id(0)
    if i >= n or a[i] < 0.0:  # the bound goes, the data test stays
        return
    out[i] = a[i] * 3.0


@dc.kernel
def grid(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2], rows: dc.int64, cols: dc.int64):
    r = dc.global_id(1)
    c = dc.global_id(0)
    if r < rows and c < cols:  # c bounds the inner loop; r stays a test
        out[r, c] = a[r, c] + 0.5


@dc.kernel
def else_branch(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], n: dc.int64):
    i = dc.global_id(0)
    if i < n:
        out[i] = a[i]
    else:
        out[i] = SENTINEL * 2.0


@dc.kernel
def data_bound(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], lim: dc.Buffer[dc.int64]):
    i = dc.global_id(0)
    if i < lim[0]:  # a load: the rewrite is not attempted
        out[i] = a[i]


@dc.kernel
def reassigned_bound(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], n: dc.int64):
    m = n - dc.global_id(0) % 2  # a local: differs between items
    i = dc.global_id(0)
    if i < m:
        out[i] = a[i]


def _cpu_source(kernel) -> str:
    return kernel.source("cpu")


def _inner_loop_bound(src: str) -> str:
    loop = next(ln for ln in src.splitlines() if "for (int64_t dc_gid0" in ln)
    return loop.split(";")[1].strip()


@pytest.mark.parametrize("kernel", [guarded, early_return, reversed_compare, data_or_bound, grid])
def test_the_guard_becomes_the_loop_bound(kernel):
    src = _cpu_source(kernel)
    assert _inner_loop_bound(src) == "dc_gid0 < dc_ce0", src
    assert "dc_clip0" in src


def test_only_the_bound_leaves_a_condition():
    assert "if ((i < n))" not in _cpu_source(guarded)
    kept = [ln.strip() for ln in _cpu_source(data_or_bound).splitlines() if ln.strip().startswith("if")]
    assert kept and all("a[" in ln and ">= n" not in ln for ln in kept), kept
    rows = [ln.strip() for ln in _cpu_source(grid).splitlines() if ln.strip().startswith("if")]
    assert rows and all("rows" in ln and "cols" not in ln for ln in rows), rows


@pytest.mark.parametrize("kernel", [else_branch, data_bound, reassigned_bound])
def test_other_shapes_are_left_as_written(kernel):
    assert _inner_loop_bound(_cpu_source(kernel)) == "dc_gid0 < dc_e0"


def test_the_checked_build_keeps_every_test():
    assert _inner_loop_bound(guarded.source("cpu", debug=True)) == "dc_gid0 < dc_e0"


def _run(kernel, a: np.ndarray, *extra, items: int = ITEMS) -> np.ndarray:
    acc = dc.accelerator("cpu:0")
    out = acc.asarray(np.full(a.shape, SENTINEL, np.float32))
    dc.launch(kernel, items, acc.asarray(a), out, *extra, accelerator=acc)
    return out.numpy()


@pytest.fixture
def data() -> np.ndarray:
    a = np.random.default_rng(5).standard_normal(ITEMS).astype(np.float32)
    return a


def _want(a: np.ndarray, upto: int, fn, mask=None) -> np.ndarray:
    want = np.full_like(a, SENTINEL)
    sel = np.arange(a.size) < upto
    if mask is not None:
        sel &= mask
    want[sel] = fn(a[sel])
    return want


@pytest.mark.parametrize("n", [0, 1, 17, N, ITEMS, ITEMS + 5])
def test_guarded_kernels_compute_what_they_say(data, n):
    np.testing.assert_array_equal(_run(guarded, data, n), _want(data, n, lambda x: x * np.float32(2)))
    np.testing.assert_array_equal(_run(early_return, data, n), _want(data, n, lambda x: x + np.float32(1)))
    np.testing.assert_array_equal(_run(reversed_compare, data, n), _want(data, n - 3, lambda x: x - np.float32(1)))
    np.testing.assert_array_equal(_run(data_or_bound, data, n),
                                  _want(data, n, lambda x: x * np.float32(3), mask=data >= 0))


def test_a_bound_below_the_group_start_runs_no_item(data):
    # groups entirely past the bound: the clipped loop is empty, not negative-length
    np.testing.assert_array_equal(_run(guarded, data, -5), np.full_like(data, SENTINEL))


def test_the_two_dimensional_guard():
    acc = dc.accelerator("cpu:0")
    a = np.random.default_rng(6).standard_normal((37, 130)).astype(np.float32)
    out = acc.asarray(np.full(a.shape, SENTINEL, np.float32))
    dc.launch(grid, (130, 37), acc.asarray(a), out, 30, 100, accelerator=acc)
    want = np.full_like(a, SENTINEL)
    want[:30, :100] = a[:30, :100] + np.float32(0.5)
    np.testing.assert_array_equal(out.numpy(), want)


def test_kernels_left_as_written_still_compute(data):
    np.testing.assert_array_equal(_run(else_branch, data, N),
                                  np.where(np.arange(ITEMS) < N, data, np.float32(SENTINEL * 2)))
    lim = dc.accelerator("cpu:0").asarray(np.array([N], np.int64))
    np.testing.assert_array_equal(_run(data_bound, data, lim), _want(data, N, lambda x: x))
    want = np.full_like(data, SENTINEL)
    idx = np.arange(ITEMS)
    sel = idx < N - idx % 2
    want[sel] = data[sel]
    np.testing.assert_array_equal(_run(reassigned_bound, data, N), want)


@dc.kernel
def rows_inner(a: dc.Buffer[dc.float32, 2], out: dc.Buffer[dc.float32, 2], rows: dc.int64, cols: dc.int64):
    r = dc.global_id(0)
    c = dc.global_id(1)  # the last index: dimension 1 is the inner, contiguous loop
    if c < cols and r < rows:
        out[r, c] = a[r, c] * 4.0


def test_the_inner_dimension_need_not_be_zero():
    src = _cpu_source(rows_inner)
    loop = next(ln for ln in src.splitlines() if "for (int64_t dc_gid1" in ln)
    assert "dc_gid1 < dc_ce0" in loop, src
    acc = dc.accelerator("cpu:0")
    a = np.random.default_rng(7).standard_normal((37, 130)).astype(np.float32)
    out = acc.asarray(np.full(a.shape, SENTINEL, np.float32))
    dc.launch(rows_inner, (37, 130), acc.asarray(a), out, 30, 100, accelerator=acc)
    want = np.full_like(a, SENTINEL)
    want[:30, :100] = a[:30, :100] * np.float32(4)
    np.testing.assert_array_equal(out.numpy(), want)
