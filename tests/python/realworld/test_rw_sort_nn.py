"""Bitonic sorting network, and neural-network kernels: softmax, layernorm, GELU, leaky ReLU."""

import math

import numpy as np

import dotcompute as dc


@dc.kernel
def bitonic_step(a: dc.Buffer[dc.float32], j: dc.int64, k: dc.int64):
    i = dc.global_id(0)
    partner = i ^ j
    if partner > i and partner < a.shape[0]:
        ascending = (i & k) == 0
        x = a[i]
        y = a[partner]
        if (x > y) == ascending:
            a[i], a[partner] = y, x


def test_bitonic_sort_many_launches(accelerator):
    rng = np.random.default_rng(40)
    n = 256
    x = rng.standard_normal(n).astype(np.float32)
    buf = accelerator.asarray(x)
    s = accelerator.stream()
    k = 2
    launches = 0
    while k <= n:
        j = k // 2
        while j > 0:
            dc.launch(bitonic_step, n, buf, j, k, stream=s)
            launches += 1
            j //= 2
        k *= 2
    s.synchronize()
    assert launches == 36
    np.testing.assert_array_equal(buf.numpy(), np.sort(x))


RW = 64


@dc.kernel
def softmax_rows(x: dc.Buffer[dc.float32, 2], y: dc.Buffer[dc.float32, 2]):
    red = dc.shared((RW,), dc.float32)
    row = dc.group_id(0)
    l = dc.local_id(0)
    ncol = x.shape[1]
    m: dc.float32 = -math.inf  # a bare -math.inf would be float64 (no fp64 on Metal)
    c = l
    while c < ncol:
        m = max(m, x[row, c])
        c += RW
    red[l] = m
    dc.barrier()
    s = RW // 2
    while s > 0:
        if l < s:
            red[l] = max(red[l], red[l + s])
        dc.barrier()
        s //= 2
    rmax = red[0]
    dc.barrier()
    tot: dc.float32 = 0.0
    c = l
    while c < ncol:
        e = math.exp(x[row, c] - rmax)
        y[row, c] = e
        tot += e
        c += RW
    red[l] = tot
    dc.barrier()
    s = RW // 2
    while s > 0:
        if l < s:
            red[l] += red[l + s]
        dc.barrier()
        s //= 2
    inv = 1.0 / red[0]
    c = l
    while c < ncol:
        y[row, c] *= inv
        c += RW


def test_softmax_per_row_large_logits(accelerator):
    rng = np.random.default_rng(41)
    x = (rng.standard_normal((6, 300)) * 10 + 500).astype(np.float32)  # naive exp would overflow
    y = np.zeros_like(x)
    dc.launch(softmax_rows, (6 * RW,), x, y, local_size=RW, accelerator=accelerator)
    f = x.astype(np.float64)
    e = np.exp(f - f.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-7)


@dc.kernel
def layernorm(x: dc.Buffer[dc.float32, 2], gamma: dc.Buffer[dc.float32], beta: dc.Buffer[dc.float32],
              y: dc.Buffer[dc.float32, 2], eps: dc.float32):
    r = dc.global_id(0)
    if r >= x.shape[0]:
        return
    n = x.shape[1]
    mean: dc.float32 = 0.0
    for c in range(n):
        mean += x[r, c]
    mean /= n
    var: dc.float32 = 0.0
    for c in range(n):
        d = x[r, c] - mean
        var += d * d
    var /= n
    inv = 1.0 / math.sqrt(var + eps)
    for c in range(n):
        y[r, c] = (x[r, c] - mean) * inv * gamma[c] + beta[c]


def test_layernorm_rows(accelerator):
    rng = np.random.default_rng(42)
    x = (rng.standard_normal((10, 96)) * 3 + 1).astype(np.float32)
    gamma = rng.random(96, dtype=np.float32) + 0.5
    beta = rng.standard_normal(96).astype(np.float32)
    y = np.zeros_like(x)
    dc.launch(layernorm, 10, x, gamma, beta, y, 1e-5, accelerator=accelerator)
    f = x.astype(np.float64)
    ref = (f - f.mean(1, keepdims=True)) / np.sqrt(f.var(1, keepdims=True) + 1e-5) * gamma + beta
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


@dc.kernel
def gelu_both(x: dc.Buffer[dc.float32], y_tanh: dc.Buffer[dc.float32], y_erf: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        k = math.sqrt(2.0 / math.pi)
        y_tanh[i] = 0.5 * v * (1.0 + math.tanh(k * (v + 0.044715 * v * v * v)))
        y_erf[i] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


def test_gelu_tanh_and_erf(accelerator):
    x = np.linspace(-6, 6, 1001).astype(np.float32)
    yt, ye = np.zeros_like(x), np.zeros_like(x)
    dc.launch(gelu_both, x.size, x, yt, ye, accelerator=accelerator)
    f = x.astype(np.float64)
    ref_t = 0.5 * f * (1 + np.tanh(np.sqrt(2 / np.pi) * (f + 0.044715 * f ** 3)))
    ref_e = 0.5 * f * (1 + np.vectorize(math.erf)(f / math.sqrt(2)))
    np.testing.assert_allclose(yt, ref_t, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ye, ref_e, rtol=1e-5, atol=1e-6)


@dc.kernel
def leaky_relu(x: dc.Buffer, y: dc.Buffer, slope):
    i = dc.global_id(0)
    if i < x.size:
        y[i] = x[i] if x[i] > 0 else slope * x[i]


def test_leaky_relu_generic_dtypes(accelerator):
    x32 = np.linspace(-3, 3, 97).astype(np.float32)
    y32 = np.zeros_like(x32)
    dc.launch(leaky_relu, x32.size, x32, y32, 0.1, accelerator=accelerator)
    np.testing.assert_allclose(y32, np.where(x32 > 0, x32, np.float32(0.1) * x32), rtol=1e-6)
    x64 = np.linspace(-3, 3, 97)
    y64 = np.zeros_like(x64)
    dc.launch(leaky_relu, x64.size, x64, y64, 0.1, accelerator=accelerator)
    np.testing.assert_array_equal(y64, np.where(x64 > 0, x64, 0.1 * x64))
    xi = np.arange(-5, 6, dtype=np.int32)
    yi = np.zeros_like(xi)
    dc.launch(leaky_relu, xi.size, xi, yi, 0, accelerator=accelerator)
    np.testing.assert_array_equal(yi, np.where(xi > 0, xi, 0))
