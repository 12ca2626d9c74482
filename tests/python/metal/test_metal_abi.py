"""Every function of the Metal plugin's ABI table, called directly by tests/metal_double/abi_test.cpp
(built by build.sh beside the plugin): struct_size rule, pipeline cache hits, host-visible and
private storage, binary archives, command-buffer errors, events across streams, shutdown and
re-initialisation."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


@pytest.mark.parametrize("unified", ["1", "0"], ids=["unified-memory", "discrete-gpu"])
def test_every_abi_function_of_the_plugin(metal_plugin_dir: Path, unified: str):
    """On unified memory every buffer is shared storage; on a discrete GPU (the double's
    DC_METAL_DOUBLE_UNIFIED=0) the large ones are private and every copy of them is a blit."""
    exe = metal_plugin_dir / "metal_abi_test"
    if not exe.exists():
        pytest.skip(f"{exe} was not built (an older build.sh output folder)")
    proc = subprocess.run([str(exe), str(metal_plugin_dir / "libdotcompute_metal.so")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "DC_METAL_DOUBLE_UNIFIED": unified})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "all Metal plugin ABI checks passed" in proc.stdout
    for fn in ("initialize", "set_cache_dir", "device_info", "compiler_identity", "mem_alloc", "mem_host_pointer",
               "memcpy_h2d", "memset_d8", "memcpy_d2d", "memcpy_d2h", "compile", "module_load", "kernel_get",
               "launch", "event_record", "stream_wait_event", "event_elapsed_ms", "module_unload", "mem_free",
               "stream_destroy", "shutdown"):
        assert f"ok   {fn}" in proc.stdout, fn
    assert "cache hit" in proc.stdout
    assert "ok   host writes reach the kernel and its results reach the host, both in place" in proc.stdout
    if unified == "0":
        assert "ok   a large buffer on a discrete GPU is private: no host address" in proc.stdout
    else:
        assert "ok   a large buffer on unified memory is shared" in proc.stdout
    assert "ok   the pipeline came from the binary archive" in proc.stdout
    assert "ok   no Metal object leaked or over-released" in proc.stdout  # manual retain/release balanced
