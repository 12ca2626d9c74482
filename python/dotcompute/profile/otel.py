"""OpenTelemetry export: spans and metrics through the configured (or given) providers.

Optional: ``pip install opentelemetry-api`` (or ``dotcompute[otel]``). Spans are emitted when the
profile closes, with the start and end times the launches really had, so nothing is paid per
launch beyond the profile's own recording.
"""

from __future__ import annotations

from typing import Any

from .records import CompileRecord, LaunchRecord, TransferRecord

_MISSING = ("dc.profile(otel=True) needs the OpenTelemetry API: pip install opentelemetry-api "
            "(or pip install 'dotcompute[otel]'); configure a provider with opentelemetry-sdk")


def require() -> None:
    """Raises ImportError naming the pip package when ``opentelemetry`` is not installed."""
    try:
        import opentelemetry.metrics  # noqa: F401
        import opentelemetry.trace  # noqa: F401
    except ImportError as e:
        raise ImportError(_MISSING) from e


def export(launches: list[LaunchRecord], transfers: list[TransferRecord], compiles: list[CompileRecord],
           wall_t0_ns: int, tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """Emits ``dotcompute.launch <kernel>``, ``dotcompute.transfer <dir>`` and ``dotcompute.compile
    <entry>`` spans, and the ``dotcompute.launches`` counter, ``dotcompute.launch.duration`` histogram
    (ms) and ``dotcompute.transfer.bytes`` counter. ``wall_t0_ns`` is ``time.time_ns()`` at the
    profile's start (records hold times relative to it)."""
    from opentelemetry import metrics, trace

    tracer = trace.get_tracer("dotcompute", tracer_provider=tracer_provider)
    meter = metrics.get_meter("dotcompute", meter_provider=meter_provider)
    launch_count = meter.create_counter("dotcompute.launches", unit="1", description="kernel launches")
    launch_ms = meter.create_histogram("dotcompute.launch.duration", unit="ms",
                                       description="kernel time (device events, else host)")
    copied = meter.create_counter("dotcompute.transfer.bytes", unit="By", description="bytes copied")

    def ns(ms: float) -> int:
        return wall_t0_ns + int(ms * 1e6)

    for r in launches:
        attrs = {"dotcompute.kernel": r.kernel, "dotcompute.accelerator": r.accelerator,
                 "dotcompute.global_size": list(r.global_size), "dotcompute.bytes": r.bytes,
                 "dotcompute.stream": r.stream, "dotcompute.host_ms": r.host_ms}
        if r.local_size is not None:
            attrs["dotcompute.local_size"] = list(r.local_size)
        if r.device_ms is not None:
            attrs["dotcompute.device_ms"] = r.device_ms
        # the short names too, for queries that do not know the namespace
        attrs.update({k.split(".", 1)[1]: v for k, v in list(attrs.items())
                      if k.split(".", 1)[1] in ("kernel", "accelerator", "global_size", "local_size", "bytes")})
        span = tracer.start_span(f"dotcompute.launch {r.kernel}", start_time=ns(r.start_ms), attributes=attrs)
        span.end(end_time=ns(r.start_ms + max(r.host_ms, r.duration_ms)))
        point = {"dotcompute.kernel": r.kernel, "dotcompute.accelerator": r.accelerator}
        launch_count.add(1, point)
        launch_ms.record(r.duration_ms, point)
    for t in transfers:
        span = tracer.start_span(f"dotcompute.transfer {t.direction}", start_time=ns(t.start_ms),
                                 attributes={"dotcompute.accelerator": t.accelerator, "dotcompute.bytes": t.bytes})
        span.end(end_time=ns(t.start_ms + t.duration_ms))
        copied.add(t.bytes, {"dotcompute.accelerator": t.accelerator, "dotcompute.direction": t.direction})
    for c in compiles:
        span = tracer.start_span(f"dotcompute.compile {c.entry}", start_time=ns(c.start_ms),
                                 attributes={"dotcompute.accelerator": c.accelerator, "dotcompute.cache": c.cache})
        span.end(end_time=ns(c.start_ms + c.duration_ms))


__all__ = ["export", "require"]
