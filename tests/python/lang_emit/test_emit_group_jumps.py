"""Uniform break/continue aimed at a loop that contains barrier(): on the CPU the fission turns
them into a group flag tested after the region; results must match OpenCL and a Python model."""

from __future__ import annotations

import harness
import irkit
import numpy as np
import pytest

from dotcompute.lang import ir
from dotcompute.lang.emit import emit

RUNNERS = ["cpu", "opencl"]
LS = 8
c, v, binop, cmp, assign = irkit.c, irkit.v, irkit.binop, irkit.cmp, irkit.assign


def run(backend, module, n, args):
    e = emit(module, backend)
    if backend == "cpu":
        harness.run_cpu(e, (n,), (LS,), args)
    else:
        cl = harness.opencl()
        if cl is None:
            pytest.skip("no OpenCL platform (install pocl-opencl-icd)")
        cl.run(e, (n,), (LS,), args)
    return e.text


def _io():
    x = irkit.buf("x", irkit.INT64, 1, 0)
    out = irkit.buf("out", irkit.INT64, 1, 1, read=False, written=True)
    sh = ir.SharedDecl(name="sh", py_name="sh", dtype=irkit.INT64, shape=(LS,))
    return x, out, sh, irkit.shared_ref(sh)


def _rev(r):  # sh[LS - 1 - lid]
    return irkit.load(r, binop("Sub", c(LS - 1), v("lid")))


def for_module(skip_at: int, stop_at: int) -> ir.Module:
    # for t in range(10):
    #     sh[lid] = x[gid] + t; barrier()
    #     if t == skip_at: continue        (uniform)
    #     if t == stop_at: break           (uniform, nested in an if)
    #     acc += sh[LS-1-lid]; barrier()
    #     acc += 100 * t                   (a later region, skipped by both jumps); barrier()
    # out[gid] = acc
    x, out, sh, r = _io()
    t = v("t")
    body = [
        assign("lid", irkit.bid("local_id"), 3),
        assign("acc", c(0), 4),
        ir.For(var="t", counter="t_c", start=c(0), stop=c(10), step=c(1), step_sign=1, loc=irkit.L(5), body=[
            irkit.store(r, [v("lid")], binop("Add", irkit.load(x, irkit.gid()), t), 6),
            ir.Barrier(loc=irkit.L(7)),
            ir.If(cond=cmp("Eq", t, c(skip_at)), then=[ir.Continue(loc=irkit.L(8))], loc=irkit.L(8)),
            ir.If(cond=cmp("GtE", t, c(0)), loc=irkit.L(9), then=[
                ir.If(cond=cmp("Eq", t, c(stop_at)), then=[ir.Break(loc=irkit.L(9))], loc=irkit.L(9))]),
            assign("acc", binop("Add", v("acc"), _rev(r)), 10),
            ir.Barrier(loc=irkit.L(11)),
            assign("acc", binop("Add", v("acc"), binop("Mult", c(100), t)), 12),
            ir.Barrier(loc=irkit.L(13)),
        ]),
        irkit.store(out, [irkit.gid()], v("acc"), 14),
    ]
    locs = [irkit.local(n) for n in ("lid", "acc", "t", "t_c")]
    return irkit.kernel("jump_for", [x, out], body, locs, shared=[sh])


def for_reference(x: np.ndarray, skip_at: int, stop_at: int) -> np.ndarray:
    out = np.zeros_like(x)
    for g in range(len(x) // LS):
        grp = x[g * LS:(g + 1) * LS]
        for lid in range(LS):
            acc = 0
            for t in range(10):
                if t == skip_at:
                    continue
                if t == stop_at:
                    break
                acc += grp[LS - 1 - lid] + t + 100 * t
            out[g * LS + lid] = acc
    return out


@pytest.mark.parametrize("backend", RUNNERS)
@pytest.mark.parametrize("skip_at,stop_at", [(2, 7), (0, 3), (5, 0), (-1, 99)])
def test_uniform_continue_and_break_in_barrier_for(backend, skip_at, stop_at):
    x = np.arange(32, dtype=np.int64) * 3
    out = np.full(32, -1, np.int64)
    text = run(backend, for_module(skip_at, stop_at), 32, [x, out])
    np.testing.assert_array_equal(out, for_reference(x, skip_at, stop_at))
    if backend == "cpu":
        assert "goto dc_exit" in text and "break; }" in text and "continue; }" in text


def nested_module() -> ir.Module:
    # for t in range(4):                        outer group loop
    #     k = 0
    #     while k < 100:                        inner group loop
    #         sh[lid] = x[gid] + k + t; barrier()
    #         k += 1
    #         if k > t + 1: break               -> the while
    #         if k == 2: continue               -> the while
    #         acc += sh[LS-1-lid]; barrier()
    #     if t == 1: continue                   -> the for
    #     acc += 1000; barrier()
    # out[gid] = acc
    x, out, sh, r = _io()
    t, k = v("t"), v("k")
    inner = ir.While(cond=cmp("Lt", k, c(100)), loc=irkit.L(6), body=[
        irkit.store(r, [v("lid")], binop("Add", binop("Add", irkit.load(x, irkit.gid()), k), t), 7),
        ir.Barrier(loc=irkit.L(8)),
        assign("k", binop("Add", k, c(1)), 9),
        ir.If(cond=cmp("Gt", k, binop("Add", t, c(1))), then=[ir.Break(loc=irkit.L(10))], loc=irkit.L(10)),
        ir.If(cond=cmp("Eq", k, c(2)), then=[ir.Continue(loc=irkit.L(11))], loc=irkit.L(11)),
        assign("acc", binop("Add", v("acc"), _rev(r)), 12),
        ir.Barrier(loc=irkit.L(13)),
    ])
    body = [
        assign("lid", irkit.bid("local_id"), 2),
        assign("acc", c(0), 3),
        ir.For(var="t", counter="t_c", start=c(0), stop=c(4), step=c(1), step_sign=1, loc=irkit.L(4), body=[
            assign("k", c(0), 5),
            inner,
            ir.If(cond=cmp("Eq", t, c(1)), then=[ir.Continue(loc=irkit.L(14))], loc=irkit.L(14)),
            assign("acc", binop("Add", v("acc"), c(1000)), 15),
            ir.Barrier(loc=irkit.L(16)),
        ]),
        irkit.store(out, [irkit.gid()], v("acc"), 17),
    ]
    locs = [irkit.local(n) for n in ("lid", "acc", "t", "t_c", "k")]
    return irkit.kernel("jump_nested", [x, out], body, locs, shared=[sh])


def nested_reference(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for g in range(len(x) // LS):
        grp = x[g * LS:(g + 1) * LS]
        for lid in range(LS):
            acc = 0
            for t in range(4):
                k = 0
                while k < 100:
                    val = grp[LS - 1 - lid] + k + t
                    k += 1
                    if k > t + 1:
                        break
                    if k == 2:
                        continue
                    acc += val
                if t == 1:
                    continue
                acc += 1000
            out[g * LS + lid] = acc
    return out


@pytest.mark.parametrize("backend", RUNNERS)
def test_nested_barrier_loops_each_get_their_own_flag(backend):
    x = np.arange(24, dtype=np.int64) * 7 + 1
    out = np.full(24, -1, np.int64)
    text = run(backend, nested_module(), 24, [x, out])
    np.testing.assert_array_equal(out, nested_reference(x))
    if backend == "cpu":
        flags = {line.split()[1] for line in text.splitlines() if line.strip().startswith("int dc_jmp")}
        assert len(flags) == 2


def test_break_appended_to_barrier_while_now_emits_on_cpu():
    # was refused before group flags existed; the reduction still sums (the break ends pass one)
    m = irkit.reduce_sum(8)
    loop = next(s for s in m.kernel.body if isinstance(s, ir.While))
    loop.body.append(ir.Break(loc=irkit.L(42)))
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    harness.run_cpu(emit(m, "cpu"), (16,), (8,), [x, out])
    # one pass of the tree: sh[0] = x[0] + x[4]
    assert out.tolist() == [x[0] + x[4], x[8] + x[12]]


def return_module() -> ir.Module:
    # k = 0
    # while k < 5:                 the condition reads item 0's k, which stops changing once it returns
    #     sh[lid] = x[gid] + k; barrier()
    #     if k == 2: out[gid] = sh[LS-1-lid]; return      (uniform)
    #     k += 1; barrier()
    # out[gid] = -5
    x, out, sh, r = _io()
    k = v("k")
    body = [
        assign("lid", irkit.bid("local_id"), 2),
        assign("k", c(0), 3),
        ir.While(cond=cmp("Lt", k, c(5)), loc=irkit.L(4), body=[
            irkit.store(r, [v("lid")], binop("Add", irkit.load(x, irkit.gid()), k), 5),
            ir.Barrier(loc=irkit.L(6)),
            ir.If(cond=cmp("Eq", k, c(2)), loc=irkit.L(7), then=[
                irkit.store(out, [irkit.gid()], _rev(r), 8), ir.Return(loc=irkit.L(9))]),
            assign("k", binop("Add", k, c(1)), 10),
            ir.Barrier(loc=irkit.L(11)),
        ]),
        irkit.store(out, [irkit.gid()], c(-5), 12),
    ]
    return irkit.kernel("uniform_return", [x, out], body, [irkit.local("lid"), irkit.local("k")], shared=[sh])


@pytest.mark.parametrize("backend", RUNNERS)
def test_uniform_return_ends_a_barrier_while(backend):
    # without the live-item count the CPU loop would spin forever on the dead items' k
    x = np.arange(20, dtype=np.int64) * 5
    out = np.full(20, -1, np.int64)
    run(backend, return_module(), 20, [x, out])  # 20 items: the last group is partial
    # the partial last group ends too; its mirrored reads fall outside the launch, so only full
    # groups are compared
    ref = x[:16].reshape(2, LS)[:, ::-1].ravel() + 2
    np.testing.assert_array_equal(out[:16], ref)
    assert (out[16:] != -5).all()
