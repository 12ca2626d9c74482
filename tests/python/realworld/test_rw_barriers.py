"""Work-group control flow around barriers that is legal in CUDA and OpenCL because it is
uniform: loops whose condition reads shared memory, barriers under a uniform `if`, and uniform
`continue`/`break` in loops that contain barriers. Plus a 1024-item group."""

import numpy as np

import dotcompute as dc


@dc.kernel
def group_converge(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32], iters: dc.Buffer[dc.int32]):
    # halve every value until the whole group is zero; the loop condition is read from shared memory
    t = dc.shared((32,), dc.int32)
    flag = dc.shared((1,), dc.int32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    t[l] = x[g]
    if l == 0:
        flag[0] = 1
    dc.barrier()
    n = 0
    while flag[0] != 0:
        dc.barrier()
        if l == 0:
            flag[0] = 0
        dc.barrier()
        t[l] = t[l] // 2
        if t[l] != 0:
            flag[0] = 1
        n += 1
        dc.barrier()
    out[g] = t[l]
    if l == 0:
        iters[dc.group_id(0)] = n


def test_loop_condition_in_shared_memory(accelerator):
    x = np.array([0, 1, 5, 100, 3, 7] + [2] * 26 + [1000] + [0] * 31, np.int32)
    out = np.full_like(x, -1)
    it = np.zeros(2, np.int32)
    dc.launch(group_converge, 64, x, out, it, local_size=32, accelerator=accelerator)
    assert (out == 0).all()
    assert it.tolist() == [int(x[:32].max()).bit_length(), int(x[32:].max()).bit_length()]


@dc.kernel
def mirror_if(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], mode: dc.int32):
    t = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    t[l] = x[g]
    if mode == 1:            # a kernel argument: the same for every item
        dc.barrier()
        v = t[63 - l]
        dc.barrier()
        t[l] = v
    dc.barrier()
    out[g] = t[l]


def test_barriers_under_a_uniform_if(accelerator):
    x = np.arange(128, dtype=np.float32)
    for mode in (0, 1):
        out = np.zeros_like(x)
        dc.launch(mirror_if, 128, x, out, mode, local_size=64, accelerator=accelerator)
        ref = x.reshape(2, 64)[:, ::-1].ravel() if mode else x
        np.testing.assert_array_equal(out, ref)


@dc.kernel
def rotate_skip(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    t = dc.shared((64,), dc.float32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    t[l] = x[g]
    dc.barrier()
    for k in range(4):
        if k == 1:           # uniform: every item skips the same iteration
            continue
        v = t[(l + 1) % 64]
        dc.barrier()
        t[l] = v + dc.float32(k)  # float32 + int64 would be float64, which Metal lacks
        dc.barrier()
    out[g] = t[l]


def test_uniform_continue_in_loop_with_barrier(accelerator):
    x = np.arange(128, dtype=np.float32)
    out = np.zeros_like(x)
    dc.launch(rotate_skip, 128, x, out, local_size=64, accelerator=accelerator)
    t = x.reshape(2, 64)
    for k in (0, 2, 3):
        t = np.roll(t, -1, axis=1) + k
    np.testing.assert_array_equal(out, t.ravel())


@dc.kernel
def relax_until_stable(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32], steps: dc.Buffer[dc.int32]):
    # smooth inside the group until nothing changes by more than a tolerance (at most 200 sweeps)
    t = dc.shared((32,), dc.float32)
    changed = dc.shared((1,), dc.int32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    t[l] = x[g]
    dc.barrier()
    done = 0
    for s in range(200):
        if l == 0:
            changed[0] = 0
        dc.barrier()
        left = t[l - 1] if l > 0 else t[l]
        right = t[l + 1] if l < 31 else t[l]
        nv = 0.5 * t[l] + 0.25 * (left + right)
        dc.barrier()
        if abs(nv - t[l]) > 1e-3:
            changed[0] = 1
        t[l] = nv
        dc.barrier()
        done = s + 1
        stop = changed[0] == 0    # every item reads the same flag...
        dc.barrier()              # ...before item 0 may reset it in the next sweep
        if stop:                  # uniform
            break
    out[g] = t[l]
    if l == 0:
        steps[dc.group_id(0)] = done


def test_uniform_break_in_loop_with_barrier(accelerator):
    rng = np.random.default_rng(120)
    x = rng.random(64, dtype=np.float32)
    out = np.zeros_like(x)
    steps = np.zeros(2, np.int32)
    dc.launch(relax_until_stable, 64, x, out, steps, local_size=32, accelerator=accelerator)
    ref_out, ref_steps = [], []
    for grp in x.reshape(2, 32):
        t = grp.astype(np.float32).copy()
        done = 0
        for s in range(200):
            left = np.r_[t[0], t[:-1]]
            right = np.r_[t[1:], t[-1]]
            nv = np.float32(0.5) * t + np.float32(0.25) * (left + right)
            changed = (np.abs(nv - t) > 1e-3).any()
            t = nv
            done = s + 1
            if not changed:
                break
        ref_out.append(t)
        ref_steps.append(done)
    assert steps.tolist() == ref_steps
    np.testing.assert_allclose(out, np.concatenate(ref_out), rtol=1e-5, atol=1e-6)


@dc.kernel
def sum_1024(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    t = dc.shared((1024,), dc.float32)
    l = dc.local_id(0)
    t[l] = x[dc.global_id(0)]
    dc.barrier()
    s = 512
    while s > 0:
        if l < s:
            t[l] += t[l + s]
        dc.barrier()
        s //= 2
    if l == 0:
        out[dc.group_id(0)] = t[0]


def test_work_group_of_1024(accelerator):
    if accelerator.info.get("max_work_group_size", 1024) < 1024:
        import pytest
        pytest.skip("device groups are smaller than 1024")
    x = np.arange(2048, dtype=np.float32) % 7
    out = np.zeros(2, np.float32)
    dc.launch(sum_1024, 2048, x, out, local_size=1024, accelerator=accelerator)
    np.testing.assert_array_equal(out, x.reshape(2, 1024).sum(1))


@dc.kernel
def nested_loops_with_barriers(x: dc.Buffer[dc.int32], out: dc.Buffer[dc.int32]):
    t = dc.shared((16,), dc.int32)
    l = dc.local_id(0)
    g = dc.global_id(0)
    acc = 0
    t[l] = x[g]
    dc.barrier()
    for a in range(3):
        mine = t[l] * (a + 1)          # read before the inner barriers, used after them
        for b in range(2):
            nb = t[(l + b + 1) % 16]
            dc.barrier()
            t[l] = nb + a
            dc.barrier()
        acc += mine + a * 100
        dc.barrier()
    out[g] = acc + t[l]


def test_barriers_in_nested_loops(accelerator):
    x = np.arange(32, dtype=np.int32) * 3
    out = np.zeros_like(x)
    dc.launch(nested_loops_with_barriers, 32, x, out, local_size=16, accelerator=accelerator)
    t = x.reshape(-1, 16).astype(np.int64)
    acc = np.zeros_like(t)
    for a in range(3):
        mine = t * (a + 1)
        for b in range(2):
            t = np.roll(t, -(b + 1), axis=1) + a
        acc += mine + a * 100
    np.testing.assert_array_equal(out, (acc + t).ravel())


@dc.kernel
def swap_across_barrier(x: dc.Buffer[dc.float32], out: dc.Buffer[dc.float32]):
    t = dc.shared((8,), dc.float32)
    l = dc.local_id(0)
    p = x[dc.global_id(0)]
    q = p * 2.0
    t[l] = p
    dc.barrier()
    p, q = q, p + t[7 - l]
    dc.barrier()
    t[l] = q
    dc.barrier()
    out[dc.global_id(0)] = p + t[(l + 1) % 8]


def test_tuple_swap_between_barriers(accelerator):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    dc.launch(swap_across_barrier, 16, x, out, local_size=8, accelerator=accelerator)
    xx = x.reshape(2, 8)
    np.testing.assert_array_equal(out, (xx * 2 + np.roll(xx + xx[:, ::-1], -1, axis=1)).ravel())
