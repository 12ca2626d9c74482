"""dc.profile(otel=True): spans and metrics reach OpenTelemetry's in-memory exporters."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
from profile_kernels import fill

import dotcompute as dc


def test_spans_and_metrics_arrive():
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    x = np.zeros(256, np.float32)
    with dc.profile(otel=True, tracer_provider=tracer_provider, meter_provider=meter_provider):
        for v in range(3):
            dc.launch(fill, 256, x, np.float32(v), accelerator="cpu")
    spans = [s for s in exporter.get_finished_spans() if s.name.startswith("dotcompute.launch")]
    assert [s.name for s in spans] == ["dotcompute.launch fill"] * 3
    assert spans[0].attributes["dotcompute.accelerator"] == "cpu:0" == spans[0].attributes["accelerator"]
    assert tuple(spans[0].attributes["dotcompute.global_size"]) == (256,)
    assert all(s.end_time >= s.start_time for s in spans)
    data = reader.get_metrics_data()
    points = {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert sum(p.value for p in points["dotcompute.launches"].data.data_points) == 3


def test_a_clear_error_without_opentelemetry(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import opentelemetry now fails
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(ImportError, match="pip install opentelemetry-api"):
        dc.profile(otel=True)
    with dc.profile():  # without otel nothing needs it
        pass


def test_the_global_providers_are_used(run_python, tmp_path):
    pytest.importorskip("opentelemetry.sdk")
    script = tmp_path / "otel_global.py"
    script.write_text(textwrap.dedent('''
        import numpy as np
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import dotcompute as dc

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)

        @dc.kernel
        def one(x: dc.Buffer[dc.float32]) -> None:
            x[dc.global_id(0)] = 1.0

        with dc.profile(otel=True):
            dc.launch(one, 4, np.zeros(4, np.float32), accelerator="cpu")
        print(sorted(s.name for s in exporter.get_finished_spans() if "launch" in s.name))
    '''))
    done = run_python(f"import runpy; runpy.run_path({str(script)!r})")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['dotcompute.launch one']"
