"""Rodinia's CUDA kernels, read from the benchmark suite's own files, run unmodified on the simulated
cuda:0 and checked against numpy (issue 23).

Rodinia is not copied into this repository: set DOTCOMPUTE_RODINIA_DIR to an unpacked archive of
https://github.com/yuhc/gpu-rodinia at the commit below (the nightly workflow fetches it); without it
every test skips and says so. Rodinia keeps host and device code in one file, so each test takes the
device part of a file: its preprocessor lines, its struct/typedef definitions and every declaration
carrying __global__/__device__/__shared__/__constant__, with the suite's own "..." headers expanded in
place; host functions, host variables and system includes are left out (NVRTC compiles device code
only). The kernels' text is not changed. Each test drives the kernels as the benchmark's host code
does (same geometry, same launch sequence) on small synthetic inputs, and numpy computes the answer.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from sim_helpers import nvrtc_missing

import dotcompute as dc
from dotcompute.cuda import cuda_include_dirs

#: the gpu-rodinia commit these tests were written against (the files are read, never copied)
RODINIA_COMMIT = "9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4"

_DIR = os.environ.get("DOTCOMPUTE_RODINIA_DIR", "")
pytestmark = [
    pytest.mark.slow,  # each kernel file is built by NVRTC and the host compiler
    pytest.mark.skipif(not _DIR, reason="DOTCOMPUTE_RODINIA_DIR is not set: point it at an unpacked archive "
                                        f"of yuhc/gpu-rodinia at {RODINIA_COMMIT}"),
    pytest.mark.skipif(not cuda_include_dirs() or nvrtc_missing(),
                       reason="CUDA's headers or NVRTC are not installed (pip install dotcompute[cuda])"),
]

_DEVICE_WORDS = re.compile(r"\b__(?:global|device|shared|constant|managed)__\b")
_TYPE_DEFINITION = re.compile(r"\s*(?:typedef\s+)?(?:struct|union|enum)\b[^;{]*\{")
_INCLUDE = re.compile(r'\s*#\s*include\s*([<"])([^>"]+)[>"]')
_FUNCTION_HEAD = re.compile(r"\)\s*(?:const\s*)?$")


def _after_literal(text: str, i: int) -> int:
    """The index after the comment or string/char literal that starts at text[i]; i when none does
    (so that braces and semicolons inside them are not counted)."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    if text[i] in "\"'":
        j = i + 1
        while j < len(text) and text[j] not in (text[i], "\n"):
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return i


def _directive_end(text: str, i: int) -> int:
    """The end of the preprocessor line at text[i], with its backslash continuations."""
    end = i
    while True:
        end = text.find("\n", end)
        if end < 0:
            return len(text)
        if text[end - 1] != "\\":
            return end
        end += 1


def _statement_end(text: str, start: int) -> int:
    """The end of the top-level declaration at text[start]: its `;`, or the `}` closing a function body
    (a struct or an initialiser runs on to its `;`)."""
    i, depth = start, 0
    while i < len(text):
        j = _after_literal(text, i)
        if j != i:
            i = j
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                head = text[start:text.index("{", start)]
                if _FUNCTION_HEAD.search(head.strip()):
                    return i + 1
                return text.find(";", i) + 1
        elif text[i] == ";" and depth == 0:
            return i + 1
        i += 1
    return len(text)


def device_part(relative: str) -> str:
    """The device part of a Rodinia file (see the module's text)."""
    path = Path(_DIR) / relative
    if not path.is_file():
        pytest.skip(f"{relative} is not in DOTCOMPUTE_RODINIA_DIR ({_DIR}); expected gpu-rodinia at {RODINIA_COMMIT}")
    text = path.read_text(errors="replace")
    out: list[str] = []
    i = 0
    while i < len(text):
        j = _after_literal(text, i)
        if j != i or text[i].isspace():
            i = max(j, i + 1)
            continue
        if text[i] == "#":
            end = _directive_end(text, i)
            line = text[i:end]
            include = _INCLUDE.match(line)
            if include is None:
                out.append(line)
            elif include.group(1) == '"' and (path.parent / include.group(2)).is_file():
                out.append(device_part(str(Path(relative).parent / include.group(2))))
            else:  # system and host-only headers: NVRTC has no <stdio.h>, and the kernels do not need them
                out.append("// (host include) " + line.strip())
            i = end
            continue
        end = _statement_end(text, i)
        statement = text[i:end]
        if _DEVICE_WORDS.search(statement.split("{", 1)[0]) or _TYPE_DEFINITION.match(statement):
            out.append(statement)
        i = end
    return "\n".join(out) + "\n"


def _kernel(relative: str, name: str) -> dc.RawKernel:
    return dc.RawKernel(device_part(relative), name, backend="cuda")


def test_pathfinder(sim):
    block, pyramid, rows, cols = 256, 4, 21, 1000  # BLOCK_SIZE; the host code's HALO = 1
    wall = np.random.default_rng(20).integers(0, 10, (rows, cols)).astype(np.int32)
    k = _kernel("cuda/pathfinder/pathfinder.cu", "dynproc_kernel")
    border = pyramid
    small = block - 2 * pyramid
    blocks = -(-cols // small)
    results = [sim.asarray(wall[0]), sim.zeros((cols,), np.int32)]
    gpu_wall = sim.asarray(wall[1:].reshape(-1))
    src, dst = 1, 0
    for t in range(0, rows - 1, pyramid):  # calc_path
        src, dst = dst, src
        sim.launch(k, blocks * block, np.int32(min(pyramid, rows - t - 1)), gpu_wall, results[src], results[dst],
                   np.int32(cols), np.int32(rows), np.int32(t), np.int32(border), local_size=block)
    want = wall[0].astype(np.int64)
    for r in range(1, rows):
        padded = np.concatenate(([want[0]], want, [want[-1]]))
        want = wall[r] + np.minimum(np.minimum(padded[:-2], padded[1:-1]), padded[2:])
    np.testing.assert_array_equal(results[dst].numpy(), want)


def test_hotspot(sim):
    block, pyramid, n, steps = 16, 2, 64, 6  # BLOCK_SIZE; EXPAND_RATE 2
    rng = np.random.default_rng(21)
    temp = (323.0 + rng.random((n, n))).astype(np.float32)
    power = (rng.random((n, n)) * 1e-3).astype(np.float32)
    k = _kernel("cuda/hotspot/hotspot.cu", "calculate_temp")
    # compute_tran_temp's constants (the file's chip parameters and #defines)
    t_chip, chip = 0.0005, 0.016
    gh = gw = np.float32(chip / n)
    cap = np.float32(0.5 * 1.75e6 * t_chip * gw * gh)
    rx = np.float32(gw / (2.0 * 100 * t_chip * gh))
    ry = np.float32(gh / (2.0 * 100 * t_chip * gw))
    rz = np.float32(t_chip / (100 * gh * gw))
    step = np.float32(0.001 / (3.0e6 / (0.5 * t_chip * 1.75e6)))
    small = block - 2 * pyramid
    blocks = -(-n // small)
    bufs = [sim.asarray(temp), sim.zeros((n, n), np.float32)]
    src, dst = 1, 0
    for t in range(0, steps, pyramid):
        src, dst = dst, src
        sim.launch(k, (blocks * block, blocks * block), np.int32(min(pyramid, steps - t)), sim.asarray(power),
                   bufs[src], bufs[dst], np.int32(n), np.int32(n), np.int32(pyramid), np.int32(pyramid), cap, rx, ry,
                   rz, step, np.float32(0.001), local_size=(block, block))
    want = temp.astype(np.float64)
    for _ in range(steps):  # the kernel's update with the border cells' neighbours clamped to the grid
        p = np.pad(want, 1, mode="edge")
        want = want + step / cap * (power + (p[2:, 1:-1] + p[:-2, 1:-1] - 2 * want) / ry
                                    + (p[1:-1, 2:] + p[1:-1, :-2] - 2 * want) / rx + (80.0 - want) / rz)
    np.testing.assert_allclose(bufs[dst].numpy(), want, rtol=1e-5)


def test_bfs(sim):
    nodes, threads = 1500, 512  # MAX_THREADS_PER_BLOCK
    rng = np.random.default_rng(22)
    degree = rng.integers(1, 5, nodes)
    starts = np.concatenate(([0], np.cumsum(degree)[:-1])).astype(np.int32)
    edges = rng.integers(0, nodes, int(degree.sum())).astype(np.int32)
    graph = np.stack([starts, degree.astype(np.int32)], axis=1)  # struct Node {int starting; int no_of_edges;}
    mask, visited = np.zeros(nodes, np.uint8), np.zeros(nodes, np.uint8)
    mask[0] = visited[0] = 1
    cost = np.full(nodes, -1, np.int32)
    cost[0] = 0
    d_graph, d_edges = sim.asarray(graph), sim.asarray(edges)
    d_mask, d_updating, d_visited = sim.asarray(mask), sim.zeros((nodes,), np.uint8), sim.asarray(visited)
    d_cost, d_over = sim.asarray(cost), sim.zeros((1,), np.uint8)
    k1 = _kernel("cuda/bfs/bfs.cu", "Kernel")
    k2 = _kernel("cuda/bfs/bfs.cu", "Kernel2")
    size = -(-nodes // threads) * threads
    for _ in range(nodes):  # BFSGraph's do { ... } while (stop)
        d_over.copy_from(np.zeros(1, np.uint8))
        sim.launch(k1, size, d_graph, d_edges, d_mask, d_updating, d_visited, d_cost, np.int32(nodes),
                   local_size=threads)
        sim.launch(k2, size, d_mask, d_updating, d_visited, d_over, np.int32(nodes), local_size=threads)
        if not d_over.numpy()[0]:
            break
    want = np.full(nodes, -1, np.int64)
    want[0], frontier = 0, [0]
    while frontier:  # breadth-first levels
        nxt = []
        for u in frontier:
            for v in edges[starts[u]:starts[u] + degree[u]]:
                if want[v] < 0:
                    want[v] = want[u] + 1
                    nxt.append(int(v))
        frontier = nxt
    np.testing.assert_array_equal(d_cost.numpy(), want)


def test_backprop_layerforward(sim):
    inputs, hidden = 64, 16  # the layer the kernel is written for: 16 hidden units, 16 x 16 blocks
    rng = np.random.default_rng(23)
    units = rng.random(inputs + 1, dtype=np.float32)
    weights = rng.random((inputs + 1, hidden + 1), dtype=np.float32)
    blocks = inputs // 16
    partial = sim.zeros((blocks * hidden,), np.float32)
    k = _kernel("cuda/backprop/backprop_cuda_kernel.cu", "bpnn_layerforward_CUDA")
    sim.launch(k, (16, 16 * blocks), sim.asarray(units), sim.zeros((hidden + 1,), np.float32), sim.asarray(weights),
               partial, np.int32(inputs), np.int32(hidden), local_size=(16, 16))
    # each block's partial sums of input[j] * w[j][k] over its 16 inputs (bpnn_layerforward sums the blocks)
    products = (units[1:, None] * weights[1:, 1:]).reshape(blocks, 16, hidden)
    np.testing.assert_allclose(partial.numpy().reshape(blocks, hidden), products.sum(axis=1), rtol=1e-5)


def test_backprop_adjust_weights(sim):
    inputs, hidden = 64, 16
    rng = np.random.default_rng(24)
    delta = rng.random(hidden + 1, dtype=np.float32)
    ly = rng.random(inputs + 1, dtype=np.float32)
    w = rng.random((inputs + 1, hidden + 1), dtype=np.float32)
    oldw = rng.random((inputs + 1, hidden + 1), dtype=np.float32)
    d_w, d_oldw = sim.asarray(w), sim.asarray(oldw)
    k = _kernel("cuda/backprop/backprop_cuda_kernel.cu", "bpnn_adjust_weights_cuda")
    sim.launch(k, (16, inputs), sim.asarray(delta), np.int32(hidden), sim.asarray(ly), np.int32(inputs), d_w, d_oldw,
               local_size=(16, 16))
    eta = momentum = 0.3  # ETA, MOMENTUM
    change = eta * delta[None, 1:] * ly[1:, None] + momentum * oldw[1:, 1:].astype(np.float64)
    want_w, want_old = w.astype(np.float64), oldw.astype(np.float64)
    want_w[1:, 1:] += change
    want_old[1:, 1:] = change
    bias = eta * delta[1:] + momentum * oldw[0, 1:]  # row 0: the bias weights, updated by the first row of blocks
    want_w[0, 1:] += bias
    want_old[0, 1:] = bias
    np.testing.assert_allclose(d_w.numpy(), want_w, rtol=1e-5)
    np.testing.assert_allclose(d_oldw.numpy(), want_old, rtol=1e-5)


def test_gaussian(sim):
    size, block, block_xy = 48, 512, 4  # MAXBLOCKSIZE, BLOCK_SIZE_XY
    rng = np.random.default_rng(25)
    a = (rng.random((size, size)) + size * np.eye(size)).astype(np.float32)
    b = rng.random(size, dtype=np.float32)
    d_m, d_a, d_b = sim.zeros((size, size), np.float32), sim.asarray(a), sim.asarray(b)
    fan1 = _kernel("cuda/gaussian/gaussian.cu", "Fan1")
    fan2 = _kernel("cuda/gaussian/gaussian.cu", "Fan2")
    grid_xy = -(-size // block_xy) * block_xy
    for t in range(size - 1):  # ForwardSub
        sim.launch(fan1, -(-size // block) * block, d_m, d_a, np.int32(size), np.int32(t), local_size=block)
        sim.launch(fan2, (grid_xy, grid_xy), d_m, d_a, d_b, np.int32(size), np.int32(size - t), np.int32(t),
                   local_size=(block_xy, block_xy))
    upper, rhs = d_a.numpy().astype(np.float64), d_b.numpy().astype(np.float64)
    np.testing.assert_allclose(np.triu(upper), upper, atol=1e-5)  # eliminated below the diagonal
    np.testing.assert_allclose(np.linalg.solve(np.triu(upper), rhs), np.linalg.solve(a, b), rtol=1e-4)


def test_nn(sim):
    records, threads = 3000, 256  # DEFAULT_THREADS_PER_BLOCK
    rng = np.random.default_rng(26)
    locations = rng.random((records, 2), dtype=np.float32) * 90  # LatLong {float lat; float lng;}
    distances = sim.zeros((records,), np.float32)
    blocks = -(-records // threads)
    k = _kernel("cuda/nn/nn_cuda.cu", "euclid")
    sim.launch(k, blocks * threads, sim.asarray(locations), distances, np.int32(records), np.float32(30),
               np.float32(90), local_size=threads)
    want = np.sqrt((30 - locations[:, 0]) ** 2 + (90 - locations[:, 1]) ** 2)
    np.testing.assert_allclose(distances.numpy(), want, rtol=1e-6)


def test_nw(sim):
    n, block, penalty = 64, 16, 10  # max_rows = max_cols = n + 1; BLOCK_SIZE
    cols = n + 1
    rng = np.random.default_rng(27)
    reference = np.zeros((cols, cols), np.int32)
    reference[1:, 1:] = rng.integers(-4, 12, (n, n))
    matrix = np.zeros((cols, cols), np.int32)
    matrix[:, 0] = -np.arange(cols) * penalty
    matrix[0, :] = -np.arange(cols) * penalty
    d_ref, d_matrix = sim.asarray(reference), sim.asarray(matrix)
    k1 = _kernel("cuda/nw/needle_kernel.cu", "needle_cuda_shared_1")
    k2 = _kernel("cuda/nw/needle_kernel.cu", "needle_cuda_shared_2")
    width = n // block
    for i in range(1, width + 1):  # the top-left blocks, one anti-diagonal per launch
        sim.launch(k1, i * block, d_ref, d_matrix, np.int32(cols), np.int32(penalty), np.int32(i), np.int32(width),
                   local_size=block)
    for i in range(width - 1, 0, -1):  # the bottom-right blocks
        sim.launch(k2, i * block, d_ref, d_matrix, np.int32(cols), np.int32(penalty), np.int32(i), np.int32(width),
                   local_size=block)
    want = matrix.astype(np.int64)
    for i in range(1, cols):  # Needleman-Wunsch
        for j in range(1, cols):
            want[i, j] = max(want[i - 1, j - 1] + reference[i, j], want[i, j - 1] - penalty, want[i - 1, j] - penalty)
    np.testing.assert_array_equal(d_matrix.numpy(), want)


def test_lud(sim):
    dim, block = 64, 16  # BLOCK_SIZE
    rng = np.random.default_rng(28)
    a = (rng.random((dim, dim)) + dim * np.eye(dim)).astype(np.float32)
    d_m = sim.asarray(a)
    diagonal = _kernel("cuda/lud/cuda/lud_kernel.cu", "lud_diagonal")
    perimeter = _kernel("cuda/lud/cuda/lud_kernel.cu", "lud_perimeter")
    internal = _kernel("cuda/lud/cuda/lud_kernel.cu", "lud_internal")
    i = 0
    for i in range(0, dim - block, block):  # lud_cuda
        rest = (dim - i) // block - 1
        sim.launch(diagonal, block, d_m, np.int32(dim), np.int32(i), local_size=block)
        sim.launch(perimeter, rest * 2 * block, d_m, np.int32(dim), np.int32(i), local_size=2 * block)
        sim.launch(internal, (rest * block, rest * block), d_m, np.int32(dim), np.int32(i), local_size=(block, block))
    sim.launch(diagonal, block, d_m, np.int32(dim), np.int32(dim - block), local_size=block)
    lu = d_m.numpy().astype(np.float64)
    lower = np.tril(lu, -1) + np.eye(dim)  # Doolittle: unit lower triangle and the upper one in place
    np.testing.assert_allclose(lower @ np.triu(lu), a, rtol=1e-4, atol=1e-3)


def test_srad_v2(sim):
    # srad_cuda_1 reads a row above the image (index_n in block row 0) and srad_cuda_2 a row below,
    # before replacing them with the edge rows: out-of-bounds reads a GPU does not notice. The
    # image is placed inside a larger allocation so that those reads stay in device memory.
    rows = cols = 64
    block, lam, iters = 16, np.float32(0.5), 2  # BLOCK_SIZE
    rng = np.random.default_rng(29)
    j = np.exp(rng.random((rows, cols))).astype(np.float32)  # J = exp(I), I random in [0, 1)
    pad = cols * 2
    whole = sim.zeros((pad + rows * cols + pad,), np.float32)
    k1 = _kernel("cuda/srad/srad_v2/srad_kernel.cu", "srad_cuda_1")
    k2 = _kernel("cuda/srad/srad_v2/srad_kernel.cu", "srad_cuda_2")
    bufs = [sim.zeros((rows * cols,), np.float32) for _ in range(5)]  # E_C, W_C, N_C, S_C, C_cuda
    want = j.astype(np.float64)
    host = j.copy()
    for _ in range(iters):
        q0sqr = np.float32(host.var(dtype=np.float64) / host.mean(dtype=np.float64) ** 2)  # the ROI: the image
        whole.copy_from(np.concatenate([np.zeros(pad, np.float32), host.reshape(-1), np.zeros(pad, np.float32)]))
        j_view = whole[pad:pad + rows * cols]
        sim.launch(k1, (cols, rows), *bufs[:4], j_view, bufs[4], np.int32(cols), np.int32(rows), q0sqr,
                   local_size=(block, block))
        sim.launch(k2, (cols, rows), *bufs[:4], j_view, bufs[4], np.int32(cols), np.int32(rows), lam, q0sqr,
                   local_size=(block, block))
        host = whole.numpy()[pad:pad + rows * cols].reshape(rows, cols)
        # the benchmark's CPU version (its #ifdef CPU branch): neighbours clamped at the edges
        p = np.pad(want, 1, mode="edge")
        dn, ds = p[:-2, 1:-1] - want, p[2:, 1:-1] - want
        dw, de = p[1:-1, :-2] - want, p[1:-1, 2:] - want
        g2 = (dn ** 2 + ds ** 2 + dw ** 2 + de ** 2) / want ** 2
        lap = (dn + ds + dw + de) / want
        qsqr = (0.5 * g2 - (lap ** 2) / 16.0) / (1 + 0.25 * lap) ** 2
        c = np.clip(1.0 / (1.0 + (qsqr - float(q0sqr)) / (float(q0sqr) * (1 + float(q0sqr)))), 0, 1)
        cs = np.vstack([c[1:], c[-1:]])
        ce = np.hstack([c[:, 1:], c[:, -1:]])
        want = want + 0.25 * float(lam) * (c * dn + cs * ds + c * dw + ce * de)
        np.testing.assert_allclose(host, want, rtol=2e-4)
