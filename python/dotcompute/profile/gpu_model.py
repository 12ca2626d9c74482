"""GPU-model counters of the CUDA simulator: what Nsight Compute would show, modelled, not measured.

With ``DOTCOMPUTE_CUDA_SIM=1 DOTCOMPUTE_CUDA_SIM_COUNTERS=1`` every kernel on the simulated
``cuda:0`` is built with clang's load/store tracing, and the simulator rebuilds each warp's
memory requests from its threads' accesses (docs/cuda-simulator.md, "GPU-model counters"). This
module reads those counts (:func:`read_counters`) and turns them into the figures of a chosen
GPU (:data:`MODELS`, ``DOTCOMPUTE_CUDA_SIM_MODEL``, default ``h100``): sectors per request
(coalescing), bank conflicts, active lanes, occupancy from registers/shared memory/block size,
and a roofline estimate of the kernel's time on that GPU. None of it is a measurement: the
simulator runs on the CPU, and the model knows nothing of caches, latency hiding or clocks
beyond what is written here.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
from dataclasses import dataclass
from typing import Any

from .. import config


@dataclass(frozen=True)
class GpuModel:
    """A GPU's limits, as NVIDIA's data sheets and the CUDA occupancy calculator give them."""

    name: str
    compute_capability: str
    sms: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_warps_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    shared_per_sm: int            # bytes, the most a multiprocessor's shared memory carve-out holds
    max_shared_per_block: int     # bytes (the opt-in maximum)
    shared_reserved_per_block: int  # bytes the driver keeps per resident block (sm_80 on)
    dram_gbs: float               # DRAM bandwidth, GB/s (1e9 bytes)
    fp32_tflops: float            # peak, FMA counted as two operations, without tensor cores
    fp64_tflops: float
    sector_bytes: int = 32        # the L2/DRAM access granularity a request is counted in
    banks: int = 32               # shared memory: 32 banks of 4 bytes
    bank_bytes: int = 4
    register_unit: int = 256      # registers are given to a warp in units of this many


MODELS: dict[str, GpuModel] = {
    "h100": GpuModel("NVIDIA H100 SXM5 80GB", "9.0", sms=132, max_threads_per_sm=2048, max_blocks_per_sm=32,
                     max_warps_per_sm=64, registers_per_sm=65536, max_registers_per_thread=255,
                     shared_per_sm=228 * 1024, max_shared_per_block=227 * 1024, shared_reserved_per_block=1024,
                     dram_gbs=3350.0, fp32_tflops=66.9, fp64_tflops=33.5),
    "a100": GpuModel("NVIDIA A100 SXM4 80GB", "8.0", sms=108, max_threads_per_sm=2048, max_blocks_per_sm=32,
                     max_warps_per_sm=64, registers_per_sm=65536, max_registers_per_thread=255,
                     shared_per_sm=164 * 1024, max_shared_per_block=163 * 1024, shared_reserved_per_block=1024,
                     dram_gbs=2039.0, fp32_tflops=19.5, fp64_tflops=9.7),
}

# registers assumed per thread when the device code does not say (a PTX-only module)
ASSUMED_REGISTERS = 32


def model(name: str | None = None) -> GpuModel:
    """The GPU model ``name`` ("h100", "a100"), else ``DOTCOMPUTE_CUDA_SIM_MODEL``, else H100."""
    key = name if name is not None else os.environ.get("DOTCOMPUTE_CUDA_SIM_MODEL", "") or "h100"
    if not isinstance(key, str):
        raise TypeError(f"model name must be a str, not {type(key).__name__}")
    found = MODELS.get(key.strip().lower())
    if found is None:
        where = "name" if name is not None else "DOTCOMPUTE_CUDA_SIM_MODEL"
        raise ValueError(f"{where}={key!r} is not a modelled GPU; choose one of {', '.join(sorted(MODELS))}")
    return found


def enabled() -> bool:
    """True when this process runs CUDA on the simulator with counters (both variables set). A value
    that is not a boolean counts as off here (``dotcompute info`` names it; the simulator reads it so)."""
    try:
        return config.cuda_sim() and config.cuda_sim_counters()
    except ValueError:
        return False


_lib: Any = None


def read_counters() -> list[dict[str, Any]]:
    """The simulator's counts so far: one dict per kernel and launch shape (block, dynamic shared
    memory), cumulative since the process started; [] when counters are off."""
    global _lib
    if not enabled():
        return []
    if _lib is None:
        from ..runtime.cuda_interop import plugin_dir

        lib = ctypes.CDLL(str(plugin_dir() / "libdotcompute_cuda_sim.so"))  # the plugin's own handle
        lib.dcsimCounters.restype = ctypes.c_size_t
        lib.dcsimCounters.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        _lib = lib
    while True:  # another thread may add a kernel between sizing and reading: size again
        need = _lib.dcsimCounters(None, 0)
        buf = ctypes.create_string_buffer(need + 64)
        got = _lib.dcsimCounters(buf, len(buf))
        if got < len(buf):
            return json.loads(buf.value.decode("utf-8", "replace"))


_KEYS = ("kernel", "device", "block", "dynamic_shared")


def _key(e: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(tuple(e[k]) if isinstance(e[k], list) else e[k] for k in _KEYS)


def difference(after: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The counts that ``after`` adds to ``before`` (both from :func:`read_counters`), without the
    kernels that did not run in between."""
    old = {_key(e): e for e in before}
    out = []
    for e in after:
        b = old.get(_key(e))
        d = dict(e)
        if b is not None:
            for k, v in e.items():
                if k in _KEYS or k in ("static_shared", "registers"):
                    continue
                d[k] = [x - y for x, y in zip(v, b[k], strict=True)] if isinstance(v, list) else v - b[k]
        if d["launches"] > 0:
            out.append(d)
    return out


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per multiprocessor and what limits them (the occupancy calculator's rules)."""

    blocks_per_sm: int
    limiter: str               # "warps", "blocks", "registers" or "shared memory"
    theoretical: float         # resident warps / the multiprocessor's maximum
    achieved: float            # estimate: the grid's blocks spread over the multiprocessors
    registers: int             # per thread, as used (ASSUMED_REGISTERS when unknown)
    registers_known: bool


def occupancy(gpu: GpuModel, threads_per_block: int, registers: int, shared_per_block: int,
              grid_blocks: float) -> Occupancy:
    """Theoretical occupancy from the block size, registers per thread and shared memory per block;
    achieved occupancy estimated from the grid: a grid smaller than one full wave leaves warps
    unfilled, and a last partial wave runs at its fraction (no measurement of stalls enters it)."""
    if threads_per_block < 1:
        raise ValueError(f"threads_per_block must be at least 1, not {threads_per_block}")
    known = registers > 0
    regs = registers if known else ASSUMED_REGISTERS
    warps = math.ceil(threads_per_block / 32)
    limits = {"warps": gpu.max_warps_per_sm // warps, "blocks": gpu.max_blocks_per_sm}
    per_warp = math.ceil(regs * 32 / gpu.register_unit) * gpu.register_unit
    limits["registers"] = (gpu.registers_per_sm // per_warp) // warps
    need = shared_per_block + gpu.shared_reserved_per_block
    limits["shared memory"] = gpu.shared_per_sm // need if shared_per_block > 0 else gpu.max_blocks_per_sm
    limiter = min(limits, key=lambda k: limits[k])
    blocks = max(0, limits[limiter])
    theoretical = blocks * warps / gpu.max_warps_per_sm
    if blocks == 0 or grid_blocks <= 0:
        return Occupancy(blocks, limiter, theoretical, 0.0, regs, known)
    waves = grid_blocks / (gpu.sms * blocks)
    achieved = theoretical * waves / math.ceil(waves)
    return Occupancy(blocks, limiter, theoretical, achieved, regs, known)


@dataclass(frozen=True)
class KernelCounters:
    """One kernel (and launch shape) in the GPU model: counts from the simulator, figures derived."""

    kernel: str
    gpu: GpuModel
    launches: int
    block: tuple[int, int, int]
    raw: dict[str, Any]

    @classmethod
    def from_counts(cls, counts: dict[str, Any], gpu: GpuModel | None = None) -> KernelCounters:
        return cls(counts["kernel"], gpu or model(), int(counts["launches"]), tuple(counts["block"]), counts)

    def _pair(self, key: str, which: int | None) -> int:
        v = self.raw[key]
        return int(v[0] + v[1]) if which is None else int(v[which])

    # -- global memory -------------------------------------------------------------------------
    def global_requests(self, which: int | None = None) -> int:
        """Warp-level global load (0), store (1) or all (None) requests."""
        return self._pair("global_requests", which)

    def sectors_per_request(self, which: int | None = None) -> float:
        """32-byte sectors per global request: 4 for a coalesced float32 warp access, 32 at stride 32."""
        r = self.global_requests(which)
        return self._pair("global_sectors", which) / r if r else 0.0

    @property
    def coalescing(self) -> float:
        """Bytes the lanes asked for / bytes the sectors moved (1.0: every byte moved was used)."""
        moved = self._pair("global_sectors", None) * self.gpu.sector_bytes
        return min(1.0, self._pair("global_bytes", None) / moved) if moved else 1.0

    @property
    def dram_bytes(self) -> int:
        """Bytes the global requests' sectors move (no cache reuse modelled: an upper bound)."""
        return self._pair("global_sectors", None) * self.gpu.sector_bytes

    # -- shared memory -------------------------------------------------------------------------
    def shared_requests(self, which: int | None = None) -> int:
        return self._pair("shared_requests", which)

    @property
    def bank_conflicts(self) -> int:
        """Extra bank passes (Nsight's l1tex shared bank conflicts): passes beyond the conflict-free ones."""
        return self._pair("shared_wavefronts", None) - self._pair("shared_ideal", None)

    @property
    def conflict_ways(self) -> float:
        """Bank passes per shared request: 1 without conflicts, 32 for ``s[tid * 32]`` (float)."""
        r = self.shared_requests()
        return self._pair("shared_wavefronts", None) / r if r else 0.0

    # -- divergence ------------------------------------------------------------------------------
    @property
    def active_lanes(self) -> float:
        """Mean active lanes per warp-level memory instruction (32: no divergence)."""
        n = self.raw["mem_instructions"]
        return self.raw["mem_active_lanes"] / n if n else 0.0

    @property
    def collective_lanes(self) -> float:
        """Mean lanes taking part in a warp collective (__syncwarp, shuffle, vote; 0.0: none ran)."""
        n = self.raw.get("warp_collectives", 0)
        return self.raw.get("warp_collective_lanes", 0) / n if n else 0.0

    @property
    def barrier_lanes(self) -> float:
        """Mean lanes per warp waiting at a __syncthreads when it is released (threads that have
        returned do not take part; 0.0: no barrier ran)."""
        n = self.raw.get("barrier_warps", 0)
        return self.raw.get("barrier_lanes", 0) / n if n else 0.0

    # -- occupancy and time ------------------------------------------------------------------------
    @property
    def occupancy(self) -> Occupancy:
        threads = self.block[0] * self.block[1] * self.block[2]
        shared = int(self.raw["static_shared"]) + int(self.raw["dynamic_shared"])
        per_launch = self.raw["grid_blocks"] / max(1, self.launches)
        return occupancy(self.gpu, threads, int(self.raw["registers"]), shared, per_launch)

    def roofline_ms(self, flops: float = 0.0, fp64: bool = False) -> float:
        """ESTIMATE, not a measurement: max(sector bytes / DRAM bandwidth, flops / peak) over all
        launches, in ms. Assumes the DRAM bandwidth is reached (enough warps in flight) and no cache
        reuse; ``flops`` (the kernel's floating-point operations, which the simulator does not count)
        adds the compute bound."""
        if flops < 0:
            raise ValueError(f"flops must be non-negative, not {flops}")
        memory_s = self.dram_bytes / (self.gpu.dram_gbs * 1e9)
        peak = (self.gpu.fp64_tflops if fp64 else self.gpu.fp32_tflops) * 1e12
        return max(memory_s, flops / peak) * 1e3

    def as_dict(self) -> dict[str, Any]:
        occ = self.occupancy
        return {"kernel": self.kernel, "gpu_model": self.gpu.name, "launches": self.launches,
                "block": list(self.block), "global_load_requests": self.global_requests(0),
                "global_store_requests": self.global_requests(1),
                "sectors_per_load_request": self.sectors_per_request(0),
                "sectors_per_store_request": self.sectors_per_request(1), "coalescing": self.coalescing,
                "shared_requests": self.shared_requests(), "bank_conflicts": self.bank_conflicts,
                "bank_passes_per_request": self.conflict_ways, "active_lanes": self.active_lanes,
                "active_lanes_at_collectives": self.collective_lanes,
                "active_lanes_at_barriers": self.barrier_lanes,
                "registers": occ.registers, "registers_known": occ.registers_known,
                "occupancy_theoretical": occ.theoretical, "occupancy_achieved_estimate": occ.achieved,
                "occupancy_limiter": occ.limiter, "dram_bytes": self.dram_bytes,
                "roofline_estimate_ms": self.roofline_ms(),
                "note": "GPU model from the CUDA simulator, not a measurement"}


def kernels(counts: list[dict[str, Any]], gpu: GpuModel | None = None) -> list[KernelCounters]:
    """:class:`KernelCounters` of every entry of :func:`read_counters` (or a :func:`difference`)."""
    g = gpu or model()
    return [KernelCounters.from_counts(c, g) for c in counts]


def table(entries: list[KernelCounters]) -> str:
    """The counters as a text table (what ``prof.summary()`` appends)."""
    if not entries:
        return ""
    gpu = entries[0].gpu
    lines = [f"GPU model ({gpu.name}; CUDA simulator counters -- a model, not a measurement):",
             f"{'kernel':<28} {'launch':>6} {'ld sec/req':>10} {'st sec/req':>10} {'coalesced':>9} "
             f"{'bank ways':>9} {'lanes':>6} {'coll':>5} {'bar':>5} {'regs':>5} "
             f"{'occ theo':>8} {'occ est':>7} {'est us':>9}"]
    for k in entries:
        occ = k.occupancy
        regs = f"{occ.registers}" if occ.registers_known else f"~{occ.registers}"
        lines.append(f"{k.kernel[:28]:<28} {k.launches:>6} {k.sectors_per_request(0):>10.2f} "
                     f"{k.sectors_per_request(1):>10.2f} {k.coalescing:>9.0%} {k.conflict_ways:>9.2f} "
                     f"{k.active_lanes:>6.1f} {k.collective_lanes:>5.1f} {k.barrier_lanes:>5.1f} {regs:>5} "
                     f"{occ.theoretical:>8.0%} {occ.achieved:>7.1%} "
                     f"{k.roofline_ms() * 1e3:>9.2f}")
    lines.append("lanes: active per memory instruction; coll: per shuffle/vote/__syncwarp; bar: per warp at "
                 "__syncthreads (0.0: none ran)")
    lines.append("est us: roofline ESTIMATE on the modelled GPU (sector bytes / DRAM bandwidth; flops not counted)")
    return "\n".join(lines)


__all__ = ["ASSUMED_REGISTERS", "GpuModel", "KernelCounters", "MODELS", "Occupancy", "difference", "enabled",
           "kernels", "model", "occupancy", "read_counters", "table"]
