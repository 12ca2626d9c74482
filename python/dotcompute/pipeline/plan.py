"""How a graph runs, decided once per graph shape: which stages are issued straight onto a stream by
the coordinator ("inline") and which run as jobs on a thread, and which stream each inline stage uses.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..runtime import Buffer
from .graph import Graph
from .resources import MAX_STREAMS
from .stage import CALL, HOST, KERNEL, RAW, Stage

INLINE, JOB = "inline", "job"


@dataclass
class Plan:
    deps: list[list[int]]
    mode: list[str]
    slot: list[int]  # stream slot on the stage's accelerator (inline stages; -1 otherwise)
    acc_ids: list[str]  # the stage's accelerator id ("host" for host steps): read once, not per run
    tracks: list[str]  # trace track names of inline stages

    @property
    def has_jobs(self) -> bool:
        return JOB in self.mode


def _crosses_devices(stage: Stage) -> bool:
    return any(isinstance(a, Buffer) and a.accelerator is not stage.accelerator for a in stage.args)


def stage_mode(stage: Stage) -> str:
    """Inline: the stage only enqueues device work on a stream we give it, so the coordinator can issue it
    without waiting for anything on the host. Job: it needs the host (a host step, a callable that
    cannot take a stream, or buffers that must first be copied from another device)."""
    if stage.kind == HOST or _crosses_devices(stage):
        return JOB
    if stage.kind in (KERNEL, RAW) or (stage.kind == CALL and stage.takes_stream):
        return INLINE
    return JOB


def make_plan(graph: Graph) -> Plan:
    n = len(graph.stages)
    deps = [graph.deps(i) for i in range(n)]
    mode = [stage_mode(s) for s in graph.stages]
    slot = [-1] * n
    used: dict[str, int] = {}
    continued: set[int] = set()  # inline stages whose stream a later stage already continues
    for i, s in enumerate(graph.stages):
        if mode[i] != INLINE:
            continue
        assert s.accelerator is not None
        # A chain keeps its stream (in-order: no event wait needed); a branch takes a new one so that
        # independent work can overlap.
        for d in deps[i]:
            if mode[d] == INLINE and graph.stages[d].accelerator is s.accelerator and d not in continued:
                continued.add(d)
                slot[i] = slot[d]
                break
        else:
            k = used.get(s.accelerator.id, 0)
            used[s.accelerator.id] = k + 1
            slot[i] = k % MAX_STREAMS
    acc_ids = ["host" if s.accelerator is None else s.accelerator.id for s in graph.stages]
    tracks = [f"{acc_ids[i]} stream {slot[i]}" if mode[i] == INLINE else "" for i in range(n)]
    return Plan(deps, mode, slot, acc_ids, tracks)
