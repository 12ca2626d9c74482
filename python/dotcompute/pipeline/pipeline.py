"""``dc.Pipeline``: a DAG of kernels, device callables and host steps, run again and again."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..runtime import Accelerator
from ..runtime import accelerator as _accelerator
from .cudagraph import GraphReplay
from .draw import render
from .graph import Graph, to_dot
from .plan import Plan, make_plan
from .resources import Resources
from .results import PipelineRun
from .scheduler import Run, inside
from .stage import (
    HOST,
    check_after,
    check_strategy,
    default_name,
    is_tracked,
    make_device_stage,
    make_host_stage,
    resolve_accelerator,
)


class Pipeline:
    """A DAG of stages whose dependencies come from the buffers they read and write.

    ``accelerator``: where device stages run unless a stage says otherwise (None: the stage's first
    buffer argument's accelerator, else ``"auto"``). ``max_workers``: threads for host steps.
    ``cuda_graph``: replay reruns of an all-kernel pipeline on one CUDA device as one CUDA graph
    (see cudagraph.py; False keeps per-stage times on every run).

    >>> p = dc.Pipeline(accelerator=acc)
    >>> p.add(blur, (h, w), img, tmp)            # a @dc.kernel: global size, then its arguments
    >>> p.add_host(save, tmp)                    # a Python step; it receives the Buffers
    >>> run = p.run(); run.ok, run.stages["blur"].elapsed_ms
    """

    def __init__(self, accelerator: Accelerator | str | None = None, *, max_workers: int = 4,
                 name: str = "pipeline", cuda_graph: bool = True) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be an int >= 1, got {max_workers!r}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {name!r}")
        if not isinstance(cuda_graph, bool):
            raise TypeError(f"cuda_graph must be True or False, got {cuda_graph!r}")
        self._cuda_graph = cuda_graph
        self._replay: GraphReplay | None = None
        self._acc = None if accelerator is None else (
            accelerator if isinstance(accelerator, Accelerator) else _accelerator(accelerator))
        self.name = name
        self._graph = Graph()
        self._plan: Plan | None = None
        self._res = Resources(max_workers)
        self._lock = threading.RLock()  # one run at a time; no add during a run
        self._async: ThreadPoolExecutor | None = None
        self.last_run: PipelineRun | None = None
        # host steps of an interrupted run (Ctrl-C) that were still running when run() raised: the
        # next run and close() wait for them first, so a rerun never overlaps the step it interrupted
        self._leftover: Run | None = None

    @property
    def accelerator(self) -> Accelerator | None:
        return self._acc

    def _refuse_from_own_stage(self, what: str) -> None:
        # a host step runs on a pool thread while run() holds the lock: add() or run() from there
        # waited forever for it (a hang); an inline callable holds it already and would change the
        # graph under the running coordinator
        if getattr(inside, "res", None) is self._res:
            raise RuntimeError(f"pipeline {self.name!r}: a stage cannot {what} its own pipeline while it runs "
                               f"(that would wait for the run it is part of); use another dc.Pipeline, or "
                               f"add the stages before run()")

    # ----------------------------------------------------------------------------------- building

    def add(self, fn: Any, *args: Any, name: str | None = None, after: Any = None, on_error: str = "abort",
            retries: int | None = None, accelerator: Accelerator | str | None = None, local_size: Any = None,
            reads: Any = None, writes: Any = None) -> str:
        """Add a device stage and return its name.

        ``p.add(kernel, global_size, *args)`` for a ``@dc.kernel`` or ``dc.RawKernel``;
        ``p.add(fn, *args)`` for any other callable that enqueues device work (array operations,
        expressions, several launches): it is called with ``args``, plus ``stream=`` when it accepts
        that keyword (then it runs concurrently like a kernel; otherwise the pipeline waits for the
        accelerator after it).

        Dependencies come from what the stage reads and writes: a ``@dc.kernel``'s access analysis;
        for raw kernels and callables every Buffer argument is read and written unless ``reads=`` /
        ``writes=`` (Buffers or numpy arrays) declare it. ``after``: names of stages this one follows
        regardless. ``on_error``: ``"abort"`` (default), ``"skip"``, ``"continue"``, ``"retry"``
        (with ``retries``) or ``"fallback"`` (run it on the CPU). Arguments that do not fit the
        kernel raise ``dc.KernelTypeError`` here, not at ``run``.
        """
        if fn is None or not (callable(fn) or hasattr(fn, "_dc_launch")):
            raise TypeError(f"add() takes a @dc.kernel, a dc.RawKernel or a callable, not {type(fn).__name__}")
        is_kernel = hasattr(fn, "_dc_launch")
        global_size = None
        if is_kernel:
            if not args:
                raise TypeError(f"add({default_name(fn)}, global_size, *args): global_size is missing")
            global_size, args = args[0], args[1:]
        self._refuse_from_own_stage("add stages to")
        with self._lock:
            stage_name = self._name(name, fn)
            on_error, n_retries = check_strategy(on_error, retries, "device")
            acc = resolve_accelerator(accelerator, self._acc, args)
            stage = make_device_stage(fn, tuple(args), name=stage_name, global_size=global_size,
                                      local_size=local_size, accelerator=acc, on_error=on_error,
                                      retries=n_retries, after=check_after(after), reads=reads, writes=writes)
            self._graph.add(stage)
            self._plan = None
            return stage_name

    def add_host(self, fn: Callable[..., Any], *args: Any, name: str | None = None, after: Any = None,
                 on_error: str = "abort", retries: int | None = None, reads: Any = None, writes: Any = None) -> str:
        """Add a Python step, run on the pipeline's host threads once its dependencies are done; it is
        called as ``fn(*args)`` and receives the Buffers themselves (``buf.numpy()``, ``buf.host()``).
        Every Buffer argument counts as read and written unless ``reads=``/``writes=`` say otherwise."""
        if not callable(fn):
            raise TypeError(f"add_host() takes a callable, not {type(fn).__name__}")
        if hasattr(fn, "_dc_launch"):
            raise TypeError("add_host() is for Python steps; add a kernel with p.add(kernel, global_size, *args)")
        self._refuse_from_own_stage("add stages to")
        with self._lock:
            stage_name = self._name(name, fn)
            on_error, n_retries = check_strategy(on_error, retries, HOST)
            stage = make_host_stage(fn, tuple(args), name=stage_name, on_error=on_error, retries=n_retries,
                                    after=check_after(after), reads=reads, writes=writes)
            self._graph.add(stage)
            self._plan = None
            return stage_name

    def _name(self, name: str | None, fn: Any) -> str:
        if name is not None:
            if not isinstance(name, str) or not name:
                raise ValueError(f"name must be a non-empty str, got {name!r}")
            if name in self._graph.index:
                raise ValueError(f"a stage named {name!r} already exists; give each stage its own name=")
            return name
        base = default_name(fn)
        candidate, n = base, 2
        while candidate in self._graph.index:
            candidate = f"{base}_{n}"
            n += 1
        return candidate

    def label(self, **buffers: Any) -> None:
        """Name buffers for edges, ``to_dot`` and ``draw``: ``p.label(image=img, blurred=tmp)``. Call it
        before adding the stages that use them (labels are applied as edges are made)."""
        for name, obj in buffers.items():
            if not is_tracked(obj):
                raise TypeError(f"label({name}=...) takes a dc.Buffer or a numpy array, not {type(obj).__name__}")
            with self._lock:
                self._graph.labels[id(obj)] = name
                self._graph._keep.append(obj)

    # ----------------------------------------------------------------------------------- looking

    @property
    def stages(self) -> list[str]:
        """Stage names in the order they were added."""
        return [s.name for s in self._graph.stages]

    def edges(self) -> list[tuple[str, str, str]]:
        """``(before, after, why)`` per edge; ``why`` lists hazards and buffers, e.g. ``"RAW tmp, WAR x"``."""
        names = self.stages
        return [(names[e.src], names[e.dst], e.label) for e in self._graph.edges()]

    def dependencies(self, name: str) -> list[str]:
        """The stages ``name`` waits for."""
        i = self._graph.index.get(name)
        if i is None:
            raise KeyError(f"no stage named {name!r}")
        return [self._graph.stages[d].name for d in self._graph.deps(i)]

    def to_dot(self) -> str:
        """Graphviz text of the DAG: stages (name, kind, accelerator) and edges labelled with the
        hazard and buffer that cause them (``after=`` edges dashed)."""
        return to_dot(self._graph, self.name)

    def draw(self, path: str | Path) -> Path:
        """Render the DAG to ``path``: any format Graphviz's ``dot`` knows when it is installed; without it
        ``.svg`` is drawn by a small built-in layered layout and other formats raise RuntimeError."""
        return render(self.to_dot(), self._graph, Path(path))

    def __len__(self) -> int:
        return len(self._graph.stages)

    def __repr__(self) -> str:
        where = self._acc.id if self._acc is not None else "per stage"
        return f"<dc.Pipeline {self.name!r}: {len(self)} stages, {len(self._graph.edges())} edges, on {where}>"

    # ----------------------------------------------------------------------------------- running

    def run(self) -> PipelineRun:
        """Run every stage once, dependencies first and independent stages concurrently; returns the
        :class:`PipelineRun`. Under ``abort`` (and once retries or a fallback are exhausted) raises
        ``dc.PipelineError`` naming the stage, with the cause chained and ``.run`` attached. On CUDA,
        after one clean run, a pipeline of kernels only is captured once and replayed as a graph
        (``run.replayed``)."""
        self._refuse_from_own_stage("run")
        with self._lock:
            if self._plan is None or self._replay is None:
                self._plan = make_plan(self._graph)
                if self._replay is not None:
                    self._replay.drop()
                self._replay = GraphReplay(self._graph, self._plan, self._cuda_graph)
            if self._replay.active:
                replayed = self._replay.run()
                if replayed is not None:
                    self.last_run = replayed
                    return replayed
            self._wait_leftover()
            coordinator = Run(self._graph, self._plan, self._res, self.name)
            try:
                run = coordinator.execute()
            except BaseException as exc:
                # KeyboardInterrupt (or another signal's exception) leaves the coordinator at once, but
                # a host step cannot be stopped from outside: remember it for the next run to wait on
                coordinator.cancel()
                self._leftover = coordinator
                self._replay.clean_runs = 0
                self.last_run = getattr(exc, "run", None)
                raise
            self._replay.record(run)
            self.last_run = run
            return run

    def _wait_leftover(self) -> None:
        # called with the lock held; an interrupt during this wait leaves the steps remembered
        if self._leftover is not None:
            self._leftover.wait_jobs()
            self._leftover = None

    def run_async(self) -> Future:
        """Start a run on a background thread; the Future's result is the PipelineRun (or its exception
        the PipelineError). Runs of one pipeline happen one after another."""
        with self._lock:
            if self._async is None:
                self._async = ThreadPoolExecutor(1, thread_name_prefix="dc-pipeline-run")
            return self._async.submit(self.run)

    def close(self) -> None:
        """Stop the pipeline's threads and drop its cross-device mirror buffers (it can still run later)."""
        self._refuse_from_own_stage("close")
        with self._lock:
            pool, self._async = self._async, None
        if pool is not None:
            pool.shutdown(wait=True)  # queued runs finish first (they need the lock taken below)
        with self._lock:  # never while a run is using the threads
            self._wait_leftover()
            self._res.close()
            if self._replay is not None:
                self._replay.drop()

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
