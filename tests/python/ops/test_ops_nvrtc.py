"""Every portable kernel of dc.ops compiles with the real NVRTC to CUBIN (no GPU needed): the
operations' CUDA path is valid C++ for the targets the product ships for."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from dotcompute.ops import (
    arrays,
    fft_kernels,
    matmul_kernels,
    reduce_kernels,
    scan_kernels,
    sort_gpu_kernels,
    sort_kernels,
)

reduce_mod = importlib.import_module("dotcompute.ops.reduce")

F = np.zeros(64, np.float32)
D = np.zeros(64, np.float64)
I64 = np.zeros(64, np.int64)
I32 = np.zeros(64, np.int32)
i, i32 = np.int64(1), np.int32(1)
rk, sk = reduce_kernels, sort_kernels

CASES = {
    "flatten2": (arrays._flatten2, (np.zeros((4, 16), np.float32), F, i)),
    "unflatten3": (arrays._unflatten3, (F, np.zeros((2, 4, 8), np.float32), i, i)),
    "tree_ordered": (rk.tree_kernel(rk.op_add, np.float64, rk.ORDERED), (F, D, i, i, i, i)),
    "tree_unrolled": (rk.tree_kernel(rk.op_min, np.float32, rk.UNROLLED), (F, F, i, i, i, i)),
    "tree_strided": (rk.tree_kernel(rk.op_max_int, np.int32, rk.STRIDED), (I32, I32, i, i, i, i)),
    "rows": (rk.rows_kernel(rk.op_mul, np.int64), (I32, I64, i, i)),
    "extreme_lanes_f": (rk.lanes_extreme_kernel(np.float32, True), (F, F)),
    "extreme_lanes_i": (rk.lanes_extreme_kernel(np.int64, False), (I64, I64)),
    "first_in_run": (rk.first_in_run_kernel(np.float32), (F, F, I64, I64)),
    "arg_first": (rk.arg_tree_kernel(rk.less_nan_first, np.float32, True), (F, F, I64, F, I64, i, i, i, i)),
    "arg_later": (rk.arg_tree_kernel(rk.greater_nan_first, np.float32, False), (F, F, I64, F, I64, i, i, i, i)),
    "scale": (reduce_mod._scale_kernel(np.float32), (F, 0.5)),
    "initial": (reduce_mod._initial_kernel(rk.op_add, np.float64), (D, D)),
    "scan_partials": (scan_kernels.scan_partials_kernel(rk.op_add, np.int64), (I64, I64, I64, i, i32)),
    "scan_tree": (scan_kernels.scan_tree_kernel(rk.op_add, np.int64), (I32, I64, I64, i, i, i, i, i32, i32)),
    "scan_rows": (scan_kernels.scan_rows_kernel(rk.op_add, np.float32), (F, F, F, i, i, i, i32, i32)),
    "sort_runs": (sk.sort_runs_kernel(np.float32, np.int64), (F, I64, i, i, i32)),
    "merge_path": (sk.merge_path_kernel(np.float32, np.int64), (F, I64, F, I64, i, i, i, i, i32, i)),
    "radix_count": (sk.radix_count_kernel(), (I32, I64, i, i, i, i32, i, i, i, i)),
    "radix_scatter": (sk.radix_scatter_kernel(), (I32, I64, I32, I64, I64, i, i, i, i32, i32, i, i, i, i)),
    "radix_offsets": (sk.radix_offsets_kernel(), (I64, I64, i, i)),
    "radix_local": (sk.radix_local_kernel(), (np.zeros(64, np.uint32), I64, np.zeros(64, np.uint32), I64, I64, I64, i,
                                              i32, i, i)),
    "radix_count_gpu": (sort_gpu_kernels.radix_count_gpu_kernel(4), (I32, I64, i, i, i, i32)),
    "radix_scatter_gpu": (sort_gpu_kernels.radix_scatter_gpu_kernel(np.uint32, np.int64),
                          (np.zeros(64, np.uint32), I64, np.zeros(64, np.uint32), I64, I64, I64, i, i, i, i32)),
    "radix_scatter_gpu64": (sort_gpu_kernels.radix_scatter_gpu_kernel(np.int64, None),
                            (I64, I64, I64, I64, I64, I64, i, i, i, i32)),
    "iota": (sk.iota_kernel(), (I64, i)),
    "float_key32": (sk.float_key_kernel(np.float32), (F, np.zeros(64, np.uint32))),
    "float_key64": (sk.float_key_kernel(np.float64, True), (D, np.zeros(64, np.uint64))),
    "key_float32": (sk.key_float_kernel(np.float32), (np.zeros(64, np.uint32), F)),
    "gather": (sk.gather_kernel(), (F, I64, F)),
    "first_index": (rk.first_index_kernel(np.float32), (F, F, I64, i, i, i, i)),
    "move_axis": (sk.move_axis_kernel(), (F, F, i, i, i32)),
    "matmul_tiled_cols0": (matmul_kernels.tiled_kernel(np.float32, 0), (F, F, F, i, i, i, i, i)),
    "matmul_tiled_cols2": (matmul_kernels.tiled_kernel(np.float64, 2), (D, D, D, i, i, i, i, i)),
    "matmul_tiled_2d": (matmul_kernels.tiled_kernel(np.float32, 0, (2, 2, 2)),
                        (F.reshape(8, 8), F.reshape(8, 8), F.reshape(8, 8), i, i, i, i, i)),
    "matmul_tiled_3d": (matmul_kernels.tiled_kernel(np.float32, 0, (3, 2, 3)),
                        (F.reshape(2, 4, 8), F.reshape(8, 8), F.reshape(2, 4, 8), i, i, i, i, i)),
    "matmul_naive": (matmul_kernels.naive_kernel(np.float32), (F, F, F, i, i, i, i, i)),
    "fft_stage": (fft_kernels.stage_kernel(np.float32), (F, F, F, F, F, F, i, i, i, i)),
    "fft_radix4": (fft_kernels.radix4_kernel(np.float64), (D, D, D, D, D, D, i, i, i)),
    "cmul": (fft_kernels.cmul_kernel(np.float32), (F, F, F, F, i, 1.0)),
    "resize": (fft_kernels.resize_kernel(np.float32), (F, F, i, i, i)),
    "hermitian": (fft_kernels.hermitian_kernel(np.float32), (F, F, F, F, i, i)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_portable_kernel_compiles_with_nvrtc(nvrtc, name):
    kernel, args = CASES[name]
    source = kernel.source("cuda", *args)
    cubin = nvrtc.compile(source, arch="sm_80", name=f"{name}.cu")
    assert cubin[:4] == nvrtc.ELF_MAGIC
