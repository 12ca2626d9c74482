"""Seeded-bug kernels for the kernel checks: each has one bug, marked ``# BUG`` on the line a finding
must name (for a race: either of the two accesses; for a divergent barrier: the if/for/while)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import dotcompute as dc

F32 = np.float32


@dataclass
class Bug:
    id: str
    kernel: Any
    kind: str                      # the check that must find it
    make_args: Callable[[], tuple]
    global_size: int | tuple[int, ...]
    local_size: int | tuple[int, ...] | None = None
    where: Any = None              # the device function holding the # BUG line, if not the kernel
    on_device: bool = False        # make_args takes the accelerator (acc.empty buffers)


BUGS: list[Bug] = []


def bug(kind: str, global_size: Any, make_args: Callable[..., tuple], local_size: Any = None,
        where: Any = None, on_device: bool = False) -> Callable:
    def add(fn: Any) -> Any:
        # acc.empty memory is tracked once checks are in use: a kernel declared with check= says so
        k = dc.kernel(check=kind)(fn) if on_device else dc.kernel(fn)
        BUGS.append(Bug(k.name, k, kind, make_args, global_size, local_size, where, on_device))
        return k
    return add


def bug_line(b: Bug) -> int:
    """The line of ``b``'s kernel (or its device function) marked ``# BUG``."""
    import inspect

    lines, first = inspect.getsourcelines((b.where or b.kernel).pyfunc)
    for n, text in enumerate(lines):
        if "# BUG" in text:
            return first + n
    raise AssertionError(f"{b.id} has no # BUG line")


def v(n: int = 128) -> np.ndarray:
    return np.arange(n, dtype=F32)


def z(*shape: int) -> np.ndarray:
    return np.zeros(shape, F32)


# ------------------------------------------------------------------------------------- memcheck

@bug("memcheck", 128, lambda: (v(), z(128)))
def m_read_past_end(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = x[i + 1]  # BUG


@bug("memcheck", 129, lambda: (z(128),))
def m_write_le(out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i <= out.shape[0]:
        out[i] = 1.0  # BUG


@bug("memcheck", (9, 8), lambda: (z(8, 8),))
def m_2d_dim0(m: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i <= m.shape[0] and j < m.shape[1]:
        m[i, j] = 2.0  # BUG


@bug("memcheck", (8, 9), lambda: (z(8, 8),))
def m_2d_dim1(m: dc.Buffer[dc.float32, 2]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    if i < m.shape[0] and j <= m.shape[1]:
        m[i, j] = 2.0  # BUG


@bug("memcheck", (4, 4, 5), lambda: (z(4, 4, 4),))
def m_3d_dim2(m: dc.Buffer[dc.float32, 3]):
    i = dc.global_id(0)
    j = dc.global_id(1)
    k = dc.global_id(2)
    if k <= m.shape[2]:
        m[i, j, k] = 3.0  # BUG


@bug("memcheck", 128, lambda: (v(), z(128)), 64)
def m_shared_past_end(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    s[l] = x[i]
    dc.barrier()
    out[i] = s[l + 1]  # BUG


@bug("memcheck", 128, lambda: (v(), z(128)))
def m_negative(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        out[i] = x[i - 1]  # BUG


@bug("memcheck", 128, lambda: (v(), np.zeros(16, np.int32)))
def m_histogram_bin(x: dc.Buffer[dc.float32], hist: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    b = int(x[i] / 7.0)
    dc.atomic_add(hist, b, 1)  # BUG


@dc.func
def neighbour_sum(a: dc.Buffer[dc.float32], k: int) -> float:
    return a[k] + a[k + 1]  # BUG


@bug("memcheck", 128, lambda: (v(), z(128)), where=neighbour_sum)
def m_in_device_function(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < out.shape[0]:
        out[i] = neighbour_sum(x, i)


@bug("memcheck", 4, lambda: (v(16), z(4)))
def m_loop_inclusive(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    acc = dc.float32(0.0)
    for k in range(x.shape[0] + 1):
        acc += x[k]  # BUG
    out[i] = acc


@bug("memcheck", 128, lambda: (v(), z(128)))
def m_stencil_right(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    n = x.shape[0]
    if 0 < i < n:
        out[i] = x[i - 1] - x[i + 1]  # BUG


@bug("memcheck", (16, 16), lambda: (z(16, 8), z(16, 8)))
def m_transposed_launch(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2]):
    r = dc.global_id(0)
    c = dc.global_id(1)
    if r < a.shape[0]:
        b[r, c] = a[r, c] * 2.0  # BUG


# ------------------------------------------------------------------------------------- racecheck, global

@bug("racecheck", 64, lambda: (v(64), z(4)))
def r_all_write_one(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[0] = x[i]  # BUG


@bug("racecheck", 127, lambda: (v(128),))
def r_shift_in_place(x: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x[i] = x[i + 1]  # BUG


@bug("racecheck", 64, lambda: (v(64), z(1)))
def r_plain_accumulate(x: dc.Buffer[dc.float32], total: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    total[0] += x[i]  # BUG


@bug("racecheck", 128, lambda: (z(128), z(128)), 64)
def r_across_groups(a: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    a[i] = 1.0  # BUG
    dc.barrier()  # orders one work-group only
    out[i] = a[(i + 64) % 128]


@bug("racecheck", 128, lambda: (v() % 8, np.zeros(8, np.int32)))
def r_histogram_plain(x: dc.Buffer[dc.float32], hist: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    b = int(x[i])
    hist[b] += 1  # BUG


# ------------------------------------------------------------------------------------- racecheck, shared

@bug("racecheck", 128, lambda: (v(), z(128)), 64)
def r_missing_barrier(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    s[l] = x[i]
    out[i] = s[(l + 1) % 64]  # BUG


@bug("racecheck", 128, lambda: (v(), z(128)), 64)
def r_shared_one_slot(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((1,), dc.float32)
    i = dc.global_id(0)
    s[0] = x[i]  # BUG
    dc.barrier()
    out[i] = s[0]


@bug("racecheck", 128, lambda: (v(), z(2)), 64)
def r_tree_without_inner_barrier(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    s[l] = x[dc.global_id(0)]
    dc.barrier()
    step = 32
    while step > 0:
        if l < step:
            s[l] += s[l + step]  # BUG
        step //= 2
    dc.barrier()
    if l == 0:
        out[dc.group_id(0)] = s[0]


@bug("racecheck", 128, lambda: (v(), z(128)), 64)
def r_read_neighbour_then_overwrite(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((65,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    s[l] = x[i]
    dc.barrier()
    t = s[l + 1]
    s[l] = t  # BUG
    dc.barrier()
    out[i] = s[l]


@bug("racecheck", (16, 16), lambda: (z(16, 16), z(16, 16)), (8, 8))
def r_transpose_missing_barrier(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2]):
    tile = dc.shared((8, 8), dc.float32)
    lx = dc.local_id(0)
    ly = dc.local_id(1)
    tile[ly, lx] = a[dc.global_id(0), dc.global_id(1)]
    b[dc.global_id(0), dc.global_id(1)] = tile[lx, ly]  # BUG


@bug("racecheck", 64, lambda: (v(64), z(1)), 64)
def r_warp_synchronous(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    s[l] = x[l]
    dc.barrier()
    if l < 32:  # "one warp needs no barrier": it does (no __syncwarp here either)
        s[l] += s[l + 32]
        s[l] += s[l + 16]  # BUG
        s[l] += s[l + 8]
    dc.barrier()
    if l == 0:
        out[0] = s[0]


# ------------------------------------------------------------------------------------- synccheck

@bug("synccheck", 128, lambda: (v(), z(128)), 64)
def s_barrier_in_if(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    s[l] = x[i]
    if l < 32:  # BUG
        dc.barrier()
    out[i] = s[63 - l]


@bug("synccheck", 128, lambda: (v(), z(128)), 64)
def s_barrier_in_both_branches(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    s[l] = x[i]
    if l % 2 == 0:  # BUG
        dc.barrier()
        out[i] = s[63 - l]
    else:
        dc.barrier()
        out[i] = -s[63 - l]


@bug("synccheck", 64, lambda: (v(64), z(64)), 64)
def s_loop_bound_per_item(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    s[l] = x[l]
    acc = dc.float32(0.0)
    for k in range(l % 4):  # BUG
        dc.barrier()
        acc += s[(l + k) % 64]
    out[l] = acc


@bug("synccheck", 64, lambda: (v(64), z(64)), 64)
def s_while_per_item(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    s[l] = x[l]
    v = x[l]
    while v < 40.0:  # BUG
        dc.barrier()
        v += 16.0
    out[l] = v


@bug("synccheck", 128, lambda: (v(), z(128)), 64)
def s_guard_not_multiple(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    if i < 100:  # BUG
        s[l] = x[i]
        dc.barrier()
        out[i] = s[63 - l]


@bug("synccheck", 128, lambda: (v() - 50.0, z(128)), 64)
def s_data_dependent(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    s[l] = x[i]
    if x[i] > 0.0:  # BUG
        dc.barrier()
    out[i] = s[l]


# ------------------------------------------------------------------------------------- initcheck

@bug("initcheck", 128, lambda: (v(), z(128)), 64)
def i_half_filled(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    if l < 32:
        s[l] = x[i]
    dc.barrier()
    out[i] = s[l]  # BUG


@bug("initcheck", 128, lambda: (v(), z(128)), 64)
def i_read_before_fill(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    t = s[l]  # BUG
    dc.barrier()
    s[l] = x[i] + t
    dc.barrier()
    out[i] = s[l]


@bug("initcheck", 128, lambda: (v(), z(128)), 64)
def i_strided_gap(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((128,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    s[2 * l] = x[i]
    dc.barrier()
    out[i] = s[2 * l + 1]  # BUG


@bug("initcheck", (16, 16), lambda: (z(16, 16), z(16, 16)), (8, 8))
def i_tile_column_missing(a: dc.Buffer[dc.float32, 2], b: dc.Buffer[dc.float32, 2]):
    tile = dc.shared((8, 8), dc.float32)
    lx = dc.local_id(0)
    ly = dc.local_id(1)
    if ly < 7:
        tile[lx, ly] = a[dc.global_id(0), dc.global_id(1)]
    dc.barrier()
    b[dc.global_id(0), dc.global_id(1)] = tile[lx, ly]  # BUG


@bug("synccheck", 64, lambda: (v(64), z(64)), 64)
def s_break_per_item(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    s[l] = x[l]
    acc = dc.float32(0.0)
    for k in range(8):
        dc.barrier()
        acc += s[(l + k) % 64]
        if acc > 100.0:
            break  # BUG
    out[l] = acc


@bug("synccheck", 128, lambda: (v(), z(128), np.int32(100)), 64)
def s_return_before_barrier(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], n: dc.int32):
    s = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    i = dc.global_id(0)
    if i >= n - 10:
        return  # BUG
    s[l] = x[i]
    dc.barrier()
    out[i] = s[(l + 1) % 64]


# ------------------------------------------------------------------------------------- racecheck, atomics

@bug("racecheck", 128, lambda: (v() % 8, np.zeros(8, np.int32), np.zeros(128, np.int32)))
def r_plain_read_of_atomic(x: dc.Buffer[dc.float32], hist: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    b = int(x[i])
    dc.atomic_add(hist, b, 1)
    out[i] = hist[b]  # BUG


@bug("racecheck", 64, lambda: (np.zeros(1, np.int32),))
def r_plain_reset_of_counter(count: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    if i == 0:
        count[0] = 0  # BUG
    dc.atomic_add(count, 0, 1)


# ------------------------------------------------------------------------------------- initcheck, acc.empty

@bug("initcheck", 64, lambda acc: (acc.empty(64, np.float32), z(64)), on_device=True)
def i_empty_buffer_half_written(tmp: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < 32:
        tmp[i] = 1.0
    out[i] = tmp[i]  # BUG
