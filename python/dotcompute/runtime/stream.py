"""``Stream`` (an in-order queue of work) and ``Event`` (a marker in one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .accelerator import Accelerator


#: ``dc.accelerator(spec)``, set by :mod:`.registry` (accelerator.py imports this module, so this one
#: cannot import the accelerator side back).
_SPEC_RESOLVER: Any = None


class Event:
    """A point in a stream: wait for it, poll it, or time the work between two of them.

    Made by ``stream.record()`` (an event is always a recorded point; there are no empty ones).
    """

    __slots__ = ("_native", "_accelerator")

    _native: Any
    _accelerator: Accelerator

    def __new__(cls, *args: Any, **kwargs: Any) -> Event:
        # CuPy's cupy.cuda.Event() makes an unrecorded event; here events exist only once recorded
        raise TypeError("make events by recording a stream: e = stream.record() (or acc.default_stream.record())")

    @classmethod
    def _wrap(cls, native_event: Any, accelerator: Accelerator) -> Event:
        obj = object.__new__(cls)
        obj._native = native_event
        obj._accelerator = accelerator
        return obj

    @property
    def accelerator(self) -> Accelerator:
        return self._accelerator

    def synchronize(self) -> None:
        """Blocks until the work recorded before this event has finished."""
        self._native.synchronize()

    def query(self) -> bool:
        """True when the work recorded before this event has finished."""
        return self._native.query()

    def elapsed(self, end: Event) -> float:
        """Milliseconds from this event to ``end`` (waits for both)."""
        if not isinstance(end, Event):
            raise TypeError(f"elapsed() takes another Event, got {type(end).__name__}")
        if end._accelerator is not self._accelerator:
            # each device has its own clock: there is no common time line to measure on
            raise ValueError(f"elapsed(): the events belong to different accelerators "
                             f"({self._accelerator.id} and {end._accelerator.id}); time events of one accelerator")
        return self._native.elapsed_ms(end._native)

    def __repr__(self) -> str:
        return f"<dc.Event on {self._accelerator.id}>"


class Stream:
    """An in-order queue of work on one accelerator; launches on it are asynchronous.

    ``acc.stream()`` makes a new one; ``dc.Stream(acc)`` (or ``dc.Stream("cpu:0")``) is the same call.
    """

    __slots__ = ("_native", "_accelerator")

    _native: Any
    _accelerator: Accelerator

    def __new__(cls, accelerator: Any = None) -> Stream:
        if accelerator is None:
            raise TypeError("dc.Stream(accelerator) needs the accelerator the stream queues work on: "
                            "dc.Stream(acc), dc.Stream('cpu:0'), or acc.stream()")
        return _SPEC_RESOLVER(accelerator).stream()

    @classmethod
    def _wrap(cls, native_stream: Any, accelerator: Accelerator) -> Stream:
        obj = object.__new__(cls)
        obj._native = native_stream
        obj._accelerator = accelerator
        return obj

    @property
    def accelerator(self) -> Accelerator:
        return self._accelerator

    def synchronize(self) -> None:
        """Blocks until everything queued so far has finished."""
        self._native.synchronize()

    def record(self) -> Event:
        """An event marking the current end of the queue."""
        return Event._wrap(self._native.record(), self._accelerator)

    def wait(self, event: Event) -> None:
        """Work queued after this call starts only once ``event`` has completed."""
        if not isinstance(event, Event):
            raise TypeError(f"wait() takes an Event, got {type(event).__name__}")
        if event._accelerator is not self._accelerator:
            raise ValueError(f"wait(): a stream of {self._accelerator.id} cannot wait for an event of "
                             f"{event._accelerator.id}; synchronize that event on the host first (event.synchronize())")
        self._native.wait(event._native)

    def __repr__(self) -> str:
        kind = "default stream" if self._native.is_default else "stream"
        return f"<dc.Stream {kind} of {self._accelerator.id}>"


__all__ = ["Event", "Stream"]
