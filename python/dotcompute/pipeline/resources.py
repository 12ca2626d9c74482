"""What a pipeline keeps between runs: its streams, thread pools and cross-device mirror buffers.

Streams and mirrors are made on first use and reused by every later run, so a rerun allocates
nothing and a tiny stage costs only its launch and two event records.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from ..runtime import Accelerator, Buffer, Stream
from ..runtime import accelerator as _accelerator

# Device stages are spread over at most this many streams per accelerator; more independent
# branches share streams round-robin (still correct: events order them, they just overlap less).
MAX_STREAMS = 8


class Resources:
    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self._lock = threading.Lock()
        self._streams: dict[str, list[Stream]] = {}
        self._job_streams: dict[str, list[Stream]] = {}
        self._mirrors: dict[tuple[int, str], tuple[Buffer, Buffer]] = {}
        self._host: ThreadPoolExecutor | None = None
        self._waiters: ThreadPoolExecutor | None = None
        self._cpu: Accelerator | None = None

    @property
    def cpu(self) -> Accelerator:
        if self._cpu is None:
            self._cpu = _accelerator("cpu")
        return self._cpu

    def stream(self, acc: Accelerator, slot: int) -> Stream:
        """The ``slot``-th stream of the pipeline on ``acc`` (the coordinator's, for inline stages)."""
        streams = self._streams.setdefault(acc.id, [])
        while len(streams) <= slot:
            streams.append(acc.stream())
        return streams[slot]

    def take_job_stream(self, acc: Accelerator) -> Stream:
        """A stream for one job on a pool thread (cross-device or fallback stages); give it back after."""
        with self._lock:
            free = self._job_streams.setdefault(acc.id, [])
            if free:
                return free.pop()
        return acc.stream()

    def give_job_stream(self, acc: Accelerator, stream: Stream) -> None:
        with self._lock:
            self._job_streams.setdefault(acc.id, []).append(stream)

    def mirror(self, buf: Buffer, acc: Accelerator) -> Buffer:
        """A buffer on ``acc`` shaped like ``buf``, standing in for it in stages that run on ``acc``."""
        key = (id(buf), acc.id)
        with self._lock:
            hit = self._mirrors.get(key)
            if hit is not None and hit[0] is buf:
                return hit[1]
        m = acc.empty(buf.shape, buf.dtype)
        with self._lock:
            # keeping ``buf`` alive keeps its id from being reused by another buffer
            return self._mirrors.setdefault(key, (buf, m))[1]

    @property
    def host_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._host is None:
                self._host = ThreadPoolExecutor(self.max_workers, thread_name_prefix="dc-pipeline-host")
            return self._host

    @property
    def waiter_pool(self) -> ThreadPoolExecutor:
        # event waits release the GIL and block; they get their own threads so that they never take
        # a worker a host step needs
        with self._lock:
            if self._waiters is None:
                self._waiters = ThreadPoolExecutor(self.max_workers, thread_name_prefix="dc-pipeline-wait")
            return self._waiters

    def close(self) -> None:
        with self._lock:
            pools = [p for p in (self._host, self._waiters) if p is not None]
            self._host = self._waiters = None
            self._mirrors.clear()
        for p in pools:
            p.shutdown(wait=True)
