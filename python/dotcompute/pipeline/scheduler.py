"""One run of a pipeline: a coordinator on the calling thread issues stages as their dependencies are met.

* Inline device stages (kernels, raw kernels, callables taking ``stream=``) are enqueued straight onto
  their stream, after ``stream.wait(event)`` on every dependency still in flight on another stream of
  the same accelerator. Nothing blocks on the host: branches overlap on the device.
* Jobs (host steps, cross-device stages, callables without ``stream=``, fallbacks) go to a small thread
  pool once every dependency has finished; a dependency still in flight on a device is waited for by a
  waiter thread (``event.synchronize()``), so the coordinator never blocks on one stage.
* Completions and failures come back to the coordinator through one queue; it alone changes stage
  state, so the strategies (retry, fallback, skip, continue, abort) need no locks.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from ..errors import PipelineError
from ..launch import launch_on
from ..orchestrate import is_device_failure
from ..orchestrate.resilience import tag
from ..runtime import Accelerator, Buffer, Event, Stream, trace
from .graph import Graph
from .plan import INLINE, Plan
from .resources import Resources
from .results import FAILED, OK, SKIPPED, PipelineRun, StageResult
from .stage import CALL, HOST, KERNEL, RAW, Stage

#: ``inside.res``: the Resources of the pipeline whose stage this thread is running now (None
#: elsewhere). A stage that adds to or runs its own pipeline would wait forever for the lock the run
#: holds (host steps run on other threads) or change the graph under the running coordinator
#: (inline callables); ``Pipeline`` checks this and refuses instead.
inside = threading.local()


# coordinator-side states (StageResult.status is what the user sees)
WAITING, SUBMITTED, RUNNING, DONE, FAILED_, SKIPPED_ = range(6)
_ABORTING = ("abort", "retry", "fallback")  # strategies that end the run once they give up


def launch_stage(stage: Stage, acc: Accelerator, args: tuple[Any, ...], stream: Stream) -> None:
    """Enqueue the stage's device work on ``stream``."""
    if stage.kind in (KERNEL, RAW):
        launch_on(acc, stage.fn, stage.global_size, args, stage.local_size, stream)
    elif stage.takes_stream:
        stage.fn(*args, stream=stream)
    else:
        stage.fn(*args)


class _Exec:
    __slots__ = ("start", "end", "stream", "waiting", "t_start", "t_end")

    def __init__(self) -> None:
        self.start: Event | None = None
        self.end: Event | None = None
        self.stream: Stream | None = None
        self.waiting = False  # a waiter thread has been asked to synchronise ``end``
        self.t_start = 0.0
        self.t_end = 0.0


class Run:
    def __init__(self, graph: Graph, plan: Plan, res: Resources, name: str = "pipeline") -> None:
        self.name = name
        self.stages = graph.stages
        self.plan = plan
        self.res = res
        n = len(self.stages)
        self.state = [WAITING] * n
        self.ex = [_Exec() for _ in range(n)]
        self.results = [StageResult(s.name, s.kind, accelerator=a) for s, a in zip(self.stages, plan.acc_ids,
                                                                                    strict=True)]
        self.q: queue.SimpleQueue = queue.SimpleQueue()
        self.outstanding = 0  # jobs and waiters whose message has not come back yet
        self.abort: tuple[int, BaseException] | None = None
        self.first = 0  # every stage before this one has left WAITING
        self.t0 = 0.0
        self.refs: dict[str, tuple[Event, float]] = {}
        # Jobs running user code on the pool threads. Counted by the jobs themselves: a Ctrl-C can land
        # inside host_pool.submit() after the job was queued, so the submitter cannot know it exists.
        self._jobs = threading.Condition()
        self._active = 0
        self._cancelled = False

    def cancel(self) -> None:
        """After an interrupt: jobs not started yet never start; running ones run to their end."""
        with self._jobs:
            self._cancelled = True

    def wait_jobs(self) -> None:
        """Waits until no job of this run is running (after ``cancel``, none will start)."""
        with self._jobs:
            self._jobs.wait_for(lambda: self._active == 0)

    # ------------------------------------------------------------------------------- the loop

    def execute(self) -> PipelineRun:
        self.t0 = time.perf_counter()
        self._reference_events()
        has_jobs = self.plan.has_jobs
        while True:
            if self.abort is None:
                if has_jobs:
                    # Jobs first: on the CPU backend a small launch runs on the calling thread, and a
                    # slow one would otherwise hold back host steps that are already free to start.
                    self._scan(jobs_only=True)
                self._scan()
            if self.outstanding == 0:
                break
            self._handle(self._next_message())
        self._finish_inline()
        elapsed = (time.perf_counter() - self.t0) * 1000.0
        self._timings()
        run = PipelineRun({r.name: r for r in self.results}, elapsed)
        if trace.active is not None:
            for i, r in enumerate(self.results):
                self._note("pipeline_stage", i, status=r.status, attempts=r.attempts, elapsed_ms=r.elapsed_ms,
                           start_ms=r.start_ms, end_ms=r.end_ms, track=r.track, bytes=r.bytes_moved)
        if self.abort is not None:
            i, exc = self.abort
            err = PipelineError(f"pipeline stage {self.stages[i].name!r} failed ({type(exc).__name__}: {exc}); "
                                f"the run was aborted and the stages that had not started were skipped",
                                stage=self.stages[i].name, run=run)
            err.transient = bool(getattr(exc, "transient", False))
            run.error = err
            raise err from exc
        return run

    def _next_message(self) -> tuple:
        # A process-directed SIGINT may be taken by a pool thread; the main thread then learns of it only
        # when its wait wakes up. Waking a few times a second keeps Ctrl-C prompt during a long step.
        while True:
            try:
                return self.q.get(timeout=0.2)
            except queue.Empty:
                continue

    def _reference_events(self) -> None:
        # One event per accelerator at the start of the run: device times on the run's time line are
        # measured from it (events of one accelerator share a clock; different devices do not).
        for i, s in enumerate(self.stages):
            acc_id = self.plan.acc_ids[i]
            if self.plan.mode[i] == INLINE and s.accelerator is not None and acc_id not in self.refs:
                stream = self.res.stream(s.accelerator, 0)
                self.refs[acc_id] = (stream.record(), (time.perf_counter() - self.t0) * 1000.0)

    def _scan(self, jobs_only: bool = False) -> None:
        state, deps, mode = self.state, self.plan.deps, self.plan.mode
        n = len(state)
        while self.first < n and state[self.first] != WAITING:
            self.first += 1
        for i in range(self.first, n):
            if state[i] != WAITING or self.abort is not None:
                continue
            inline = mode[i] == INLINE
            if jobs_only and inline:
                continue
            ready = True
            skip = False
            for d in deps[i]:
                sd = state[d]
                if sd == DONE:
                    continue
                if sd == FAILED_:
                    if self.stages[d].on_error == "continue":
                        continue
                    skip = True
                    break
                if sd == SKIPPED_:
                    skip = True
                    break
                if sd == SUBMITTED:
                    if inline and self.stages[d].accelerator is self.stages[i].accelerator:
                        continue  # ordered on the device by an event wait
                    self._request_wait(d)
                ready = False
            if skip:
                state[i] = SKIPPED_
                self.results[i].status = SKIPPED
            elif ready:
                self._submit(i)

    def _handle(self, msg: tuple) -> None:
        self.outstanding -= 1
        what, i, exc, info = msg
        if what == "synced":
            if self.state[i] != SUBMITTED:
                return
            if exc is None:
                self._done(i)
            else:
                self._failed(i, exc, may_retry=False)
            return
        # a job finished
        ex = self.ex[i]
        ex.t_start, ex.t_end = info["t_start"], info["t_end"]
        r = self.results[i]
        r.wall_ms += (ex.t_end - ex.t_start) * 1000.0
        r.bytes_moved += info.get("bytes", 0)
        r.track = info.get("track", r.track)
        if info.get("accelerator"):
            r.accelerator = info["accelerator"]
        if info.get("device_ms") is not None:
            r.device_ms = info["device_ms"]
        if exc is None:
            self._done(i)
        else:
            self._failed(i, exc, may_retry=self.abort is None)

    # ------------------------------------------------------------------------------- issuing

    def _submit(self, i: int, fallback: bool = False) -> None:
        stage = self.stages[i]
        self.results[i].attempts += 1
        if self.plan.mode[i] == INLINE and not fallback:
            try:
                self._launch_inline(i)
            except Exception as exc:  # noqa: BLE001 -- any stage failure is handled by its strategy
                self._failed(i, exc, may_retry=True)
                return
            self.state[i] = SUBMITTED
            return
        self.state[i] = RUNNING
        self.outstanding += 1
        self.res.host_pool.submit(self._job, i, stage, fallback)

    def _launch_inline(self, i: int) -> None:
        stage, ex = self.stages[i], self.ex[i]
        acc = stage.accelerator
        assert acc is not None
        t = time.perf_counter()
        stream = self.res.stream(acc, self.plan.slot[i])
        for d in self.plan.deps[i]:
            dx = self.ex[d]
            if self.state[d] == SUBMITTED and dx.stream is not stream and dx.end is not None:
                stream.wait(dx.end)
        ex.stream = stream
        ex.start = stream.record()
        inside.res = self.res
        try:
            launch_stage(stage, acc, stage.args, stream)
        finally:
            inside.res = None
        ex.end = stream.record()
        r = self.results[i]
        r.wall_ms += (time.perf_counter() - t) * 1000.0
        r.track = self.plan.tracks[i]

    def _request_wait(self, d: int) -> None:
        ex = self.ex[d]
        if ex.waiting:
            return
        ex.waiting = True
        self.outstanding += 1
        self.res.waiter_pool.submit(self._wait, d, ex.end)

    def _wait(self, d: int, event: Event) -> None:
        try:
            event.synchronize()
        except BaseException as exc:  # noqa: BLE001 -- reported to the coordinator, never lost
            self.q.put(("synced", d, exc, None))
            return
        self.q.put(("synced", d, None, None))

    def _job(self, i: int, stage: Stage, fallback: bool) -> None:
        with self._jobs:
            if self._cancelled:
                return  # the run was interrupted before this job began: it must not run now
            self._active += 1
        try:
            self._run_job(i, stage, fallback)
        finally:
            with self._jobs:
                self._active -= 1
                self._jobs.notify_all()

    def _run_job(self, i: int, stage: Stage, fallback: bool) -> None:
        info: dict[str, Any] = {"t_start": time.perf_counter(), "track": f"host {threading.current_thread().name}"}
        inside.res = self.res
        try:
            if stage.kind == HOST:
                stage.fn(*stage.args)
            else:
                acc = self.res.cpu if fallback else stage.accelerator
                assert acc is not None
                self._device_job(stage, acc, info)
        except BaseException as exc:  # noqa: BLE001 -- the coordinator applies the stage's strategy
            inside.res = None
            info["t_end"] = time.perf_counter()
            self.q.put(("job", i, exc, info))
            return
        inside.res = None
        info["t_end"] = time.perf_counter()
        self.q.put(("job", i, None, info))

    def _device_job(self, stage: Stage, acc: Accelerator, info: dict[str, Any]) -> None:
        """Run a device stage from a thread on ``acc``: buffers of other devices are copied in through
        host memory first, and those the stage writes are copied back after it."""
        info["accelerator"] = acc.id
        info["track"] = f"{acc.id} job ({threading.current_thread().name})"
        moved = 0
        args = list(stage.args)
        copies: list[tuple[int, Buffer, Buffer]] = []
        for pos, a in enumerate(args):
            if isinstance(a, Buffer) and a.accelerator is not acc:
                m = self.res.mirror(a, acc)
                # copied whole even when only written: elements the stage leaves alone must keep their values
                m.copy_from(a.numpy())
                moved += a.nbytes
                args[pos] = m
                copies.append((pos, a, m))
        stream = self.res.take_job_stream(acc)
        try:
            start = stream.record()
            launch_stage(stage, acc, tuple(args), stream)
            end = stream.record()
            stream.synchronize()
            if stage.kind == CALL and not stage.takes_stream:
                acc.synchronize()  # its work went wherever it chose to enqueue it
            info["device_ms"] = start.elapsed(end)
        finally:
            self.res.give_job_stream(acc, stream)
        for pos, a, m in copies:
            if pos in stage.written_args:
                a.copy_from(m.numpy())
                moved += a.nbytes
        info["bytes"] = moved

    # ------------------------------------------------------------------------------- outcomes

    def _done(self, i: int) -> None:
        self.state[i] = DONE
        self.results[i].status = OK

    def _failed(self, i: int, exc: BaseException, may_retry: bool) -> None:
        stage, r = self.stages[i], self.results[i]
        if stage.accelerator is not None:
            tag(exc, r.accelerator)  # exc.accelerator: where it failed, as dc.launch's errors say
        if may_retry and self.abort is None:
            if r.attempts <= stage.retries:
                # every failure is retried: the stage asked for it (dc.launch(retries=) retries only
                # transient errors because it cannot know whether the call is idempotent)
                self._note("retry", i, attempt=r.attempts, error=f"{type(exc).__name__}: {exc}")
                self._submit(i, fallback=r.fell_back)
                return
            # like dc.launch(fallback=): only a failure of the device or its toolchain moves work to the
            # CPU; a mistake in the call (TypeError, ValueError) would fail there as well
            if stage.on_error == "fallback" and not r.fell_back and stage.accelerator is not None \
                    and stage.accelerator.backend != "cpu" and is_device_failure(exc):
                r.fell_back = True
                r.error = exc  # kept after the fallback succeeds: why it was needed
                self._note("fallback", i, error=f"{type(exc).__name__}: {exc}", to="cpu:0")
                self._submit(i, fallback=True)
                return
        self.state[i] = FAILED_
        r.status = FAILED
        r.error = exc
        if stage.on_error in _ABORTING and self.abort is None:
            self._start_abort(i, exc)

    def _note(self, kind: str, i: int, **attrs: Any) -> None:
        if trace.active is not None:  # a dc.profile() is open: record the decision there
            trace.note(kind, pipeline=self.name, stage=self.stages[i].name, accelerator=self.results[i].accelerator,
                       **attrs)

    def _start_abort(self, i: int, exc: BaseException) -> None:
        self.abort = (i, exc)
        for j, s in enumerate(self.state):
            if s == WAITING:
                self.state[j] = SKIPPED_
                self.results[j].status = SKIPPED

    def _finish_inline(self) -> None:
        for i, s in enumerate(self.state):
            if s != SUBMITTED:
                continue
            end = self.ex[i].end
            try:
                if end is not None:
                    end.synchronize()
            except Exception as exc:  # noqa: BLE001 -- a fault found while the device ran the stage
                self._failed(i, exc, may_retry=False)
                continue
            self._done(i)

    def _timings(self) -> None:
        for i, r in enumerate(self.results):
            ex = self.ex[i]
            if ex.start is not None and ex.end is not None and self.state[i] == DONE and r.device_ms is None:
                try:
                    # both ends from the run's reference event: two event queries per stage, not three
                    ref, offset = self.refs[r.accelerator]
                    begin, end = ref.elapsed(ex.start), ref.elapsed(ex.end)
                    r.device_ms = end - begin
                    r.start_ms, r.end_ms = offset + begin, offset + end
                except Exception:  # noqa: BLE001 -- a backend without event timing: wall time only
                    pass
            elif ex.t_end:
                r.start_ms = (ex.t_start - self.t0) * 1000.0
                r.end_ms = (ex.t_end - self.t0) * 1000.0
            if r.status != SKIPPED:
                r.elapsed_ms = r.device_ms if r.device_ms is not None and self.plan.mode[i] == INLINE else r.wall_ms
            if r.status == OK and not r.fell_back:
                r.error = None
