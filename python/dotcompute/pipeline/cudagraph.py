"""CUDA graph replay: from its second clean run on, a pipeline of kernels on one CUDA device is
captured once (``acc.graph()``) and replayed with one graph launch per run.

Only pipelines whose every stage is a kernel or raw kernel issued on a stream of one CUDA
accelerator qualify: host steps, callables (which may do anything on the host), numpy-array
arguments (staged and synchronised at launch) and debug kernels (which read a report after each
launch) cannot be captured. The capture follows add order on the one capture stream, which
respects every dependency (branches no longer overlap, but the per-launch cost disappears).

Replays report each stage as ``ok`` with one attempt; the graph's device time is the run's
``graph_ms`` and the stages' own times stay unknown (``device_ms`` None). Anything that goes wrong
while capturing or launching the graph drops it, and that run and later ones go the ordinary way,
with per-stage strategies and metrics.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..launch import launch_on
from ..runtime import Accelerator
from .graph import Graph
from .plan import INLINE, Plan
from .results import OK, PipelineRun, StageResult
from .stage import KERNEL, RAW


def capturable_accelerator(graph: Graph, plan: Plan) -> Accelerator | None:
    """The one CUDA accelerator every stage runs on, when the whole pipeline can be captured."""
    acc: Accelerator | None = None
    for i, s in enumerate(graph.stages):
        if plan.mode[i] != INLINE or s.kind not in (KERNEL, RAW) or s.accelerator is None:
            return None
        if s.accelerator.backend != "cuda" or (acc is not None and s.accelerator is not acc):
            return None
        if any(isinstance(a, np.ndarray) for a in s.args):
            return None
        if s.kind == KERNEL and s.fn._debug_flag(None):
            return None
        acc = s.accelerator
    return acc


class GraphReplay:
    """Per plan: whether it qualifies, how many clean runs it had, and the captured graph."""

    def __init__(self, graph: Graph, plan: Plan, enabled: bool) -> None:
        self.stages = graph.stages
        self.acc = capturable_accelerator(graph, plan) if enabled else None
        self.clean_runs = 0
        self.cuda_graph: Any = None

    @property
    def active(self) -> bool:
        """A replay is attempted: the pipeline qualifies and one ordinary run compiled and checked it."""
        return self.acc is not None and self.clean_runs >= 1

    def record(self, run: PipelineRun) -> None:
        """Counts ordinary runs that succeeded; a failure starts the count again."""
        self.clean_runs = self.clean_runs + 1 if run.ok else 0

    def run(self) -> PipelineRun | None:
        """One replay, or None (and no more attempts) when capturing or launching fails."""
        acc = self.acc
        assert acc is not None
        t0 = time.perf_counter()
        try:
            if self.cuda_graph is None:
                self.cuda_graph = self._capture(acc)
            stream = self.cuda_graph.stream
            start = stream.record()
            self.cuda_graph.launch()
            end = stream.record()
            end.synchronize()
            graph_ms = start.elapsed(end)
        except Exception:  # noqa: BLE001 -- the ordinary path runs the stages and reports any error
            self.drop()
            self.acc = None
            return None
        results = {s.name: StageResult(s.name, s.kind, status=OK, attempts=1, accelerator=acc.id, track="cuda graph")
                   for s in self.stages}
        run = PipelineRun(results, (time.perf_counter() - t0) * 1000.0)
        run.replayed = True
        run.graph_ms = graph_ms
        return run

    def _capture(self, acc: Accelerator) -> Any:
        g = None
        try:
            with acc.graph() as g:
                for s in self.stages:
                    launch_on(acc, s.fn, s.global_size, s.args, s.local_size, None)  # no stream: the capture's
        except BaseException:
            if g is not None:
                g.close()  # whatever was captured before the failure
            raise
        return g

    def drop(self) -> None:
        g, self.cuda_graph = self.cuda_graph, None
        if g is not None:
            g.close()
