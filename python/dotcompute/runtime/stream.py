"""``Stream`` (an in-order queue of work) and ``Event`` (a marker in one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .accelerator import Accelerator


class Event:
    """A point in a stream: wait for it, poll it, or time the work between two of them."""

    __slots__ = ("_native", "_accelerator")

    def __init__(self, native_event: Any, accelerator: Accelerator) -> None:
        self._native = native_event
        self._accelerator = accelerator

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
    """An in-order queue of work on one accelerator; launches on it are asynchronous."""

    __slots__ = ("_native", "_accelerator")

    def __init__(self, native_stream: Any, accelerator: Accelerator) -> None:
        self._native = native_stream
        self._accelerator = accelerator

    @property
    def accelerator(self) -> Accelerator:
        return self._accelerator

    def synchronize(self) -> None:
        """Blocks until everything queued so far has finished."""
        self._native.synchronize()

    def record(self) -> Event:
        """An event marking the current end of the queue."""
        return Event(self._native.record(), self._accelerator)

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
