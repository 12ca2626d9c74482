"""Building a pipeline: inferred hazard edges, after=, and the checks made at add time."""

from __future__ import annotations

import numpy as np
import pytest
from pipeline_kernels import add, add_into, fill, scale

import dotcompute as dc


@pytest.fixture
def bufs(cpu):
    return [cpu.zeros(64, np.float32) for _ in range(4)]


def test_read_after_write_edge(cpu, bufs):
    x, y, z, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add(scale, 64, 2.0, x, y, name="produce")
    p.add(scale, 64, 3.0, y, z, name="consume")
    assert p.edges() == [("produce", "consume", "RAW out→x")]
    assert p.dependencies("consume") == ["produce"]


def test_write_after_read_edge(cpu, bufs):
    x, y, _, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add(scale, 64, 2.0, x, y, name="reader")  # reads x
    p.add(fill, 64, 7.0, x, name="overwrite")  # writes x (only)
    assert p.edges() == [("reader", "overwrite", "WAR x→out")]


def test_write_after_write_edge(cpu, bufs):
    x, _, _, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add(fill, 64, 1.0, x, name="first")
    p.add(fill, 64, 2.0, x, name="second")
    (src, dst, why), = p.edges()
    assert (src, dst) == ("first", "second") and why.startswith("WAW")


def test_access_analysis_keeps_independent_readers_apart(cpu, bufs):
    # two kernels that only read x do not depend on each other; a read-write kernel is both
    x, y, z, w = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add(scale, 64, 2.0, x, y, name="a")
    p.add(scale, 64, 3.0, x, z, name="b")
    p.add(add_into, 64, y, z, name="c")  # reads y, reads+writes z
    p.add(add, 64, z, z, w, name="d")
    edges = {(s, d): why for s, d, why in p.edges()}
    assert ("a", "b") not in edges and ("b", "a") not in edges
    assert edges[("a", "c")] == "RAW out→x"
    assert "RAW out→acc" in edges[("b", "c")] and "WAW out→acc" in edges[("b", "c")]
    assert edges[("c", "d")].startswith("RAW")


def test_host_steps_and_raw_kernels_read_and_write_every_buffer(cpu, bufs):
    x, y, _, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add_host(lambda a: None, x, name="look")
    p.add_host(lambda a: None, x, name="look_again")  # the second reads what the first wrote, and rewrites it
    assert p.edges() == [("look", "look_again", "RAW a, WAW a")]
    k = dc.RawKernel("extern \"C\" void nothing() {}", "nothing")
    p.add(k, 1, x, y, name="raw")
    assert ("look_again", "raw", "RAW a→arg0, WAW a→arg0") in p.edges()


def test_declared_reads_and_writes_replace_the_default(cpu, bufs):
    x, y, _, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add_host(lambda a: None, x, name="r1", reads=[x])
    p.add_host(lambda a: None, x, name="r2", reads=[x])
    assert p.edges() == []
    p.add_host(lambda a, b: None, x, y, name="w", reads=[y], writes=x)
    assert {(s, d) for s, d, _ in p.edges()} == {("r1", "w"), ("r2", "w")}


def test_after_adds_edges_and_bad_names_are_value_errors(cpu, bufs):
    x, y, _, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add(fill, 64, 1.0, x, name="one")
    p.add(fill, 64, 1.0, y, name="two", after="one")
    assert p.edges() == [("one", "two", "after")]
    with pytest.raises(ValueError, match=r"'three'.*'nope'"):
        p.add(fill, 64, 1.0, y, name="three", after=["nope"])
    with pytest.raises(ValueError, match="cycle.*'self'"):
        p.add(fill, 64, 1.0, y, name="self", after=["self"])
    assert p.stages == ["one", "two"]  # failed adds leave the pipeline as it was
    with pytest.raises(ValueError, match="already exists"):
        p.add(fill, 64, 1.0, y, name="one")


def test_arguments_are_checked_at_add(cpu):
    p = dc.Pipeline(accelerator=cpu)
    x = cpu.zeros(8, np.float64)
    with pytest.raises(dc.KernelTypeError, match="x"):
        p.add(scale, 8, 2.0, x, cpu.zeros(8, np.float32))
    with pytest.raises(dc.KernelTypeError, match="argument"):
        p.add(scale, 8, 2.0)
    with pytest.raises(ValueError, match="on_error"):
        p.add(fill, 8, 1.0, cpu.zeros(8), on_error="ignore")
    with pytest.raises(ValueError, match="retries"):
        p.add(fill, 8, 1.0, cpu.zeros(8), on_error="retry", retries=-1)
    with pytest.raises(ValueError, match="fallback"):
        p.add_host(print, on_error="fallback")
    with pytest.raises(ValueError, match="global_size"):
        p.add(fill, 0, 1.0, cpu.zeros(8))
    with pytest.raises(TypeError, match="global_size"):
        p.add(fill)
    with pytest.raises(TypeError, match="callable"):
        p.add(42)
    assert len(p) == 0


def test_default_names_are_unique(cpu, bufs):
    x, y, _, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    assert p.add(fill, 64, 1.0, x) == "fill"
    assert p.add(fill, 64, 1.0, y) == "fill_2"


def test_to_dot_names_stages_and_buffers(cpu, bufs):
    x, y, z, _ = bufs
    p = dc.Pipeline(accelerator=cpu, name="demo")
    p.add(scale, 64, 2.0, x, y, name="blur")
    p.add(scale, 64, 2.0, y, z, name="sharpen")
    p.add_host(lambda a: None, z, name="save")
    p.add(fill, 64, 0.0, x, name="reset", after=["save"])
    dot = p.to_dot()
    assert dot.startswith('digraph "demo" {')
    assert '"blur" -> "sharpen" [label="RAW out→x"];' in dot
    assert '"sharpen" -> "save" [label="RAW out→a, WAW out→a"];' in dot
    assert '"save" -> "reset" [label="after", style=dashed];' in dot
    assert '"blur" -> "reset" [label="WAR x→out"];' in dot
    assert '"save" [label="save\\nhost step"' in dot


def test_draw_svg_without_graphviz(cpu, bufs, tmp_path):
    x, y, _, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.add(scale, 64, 2.0, x, y, name="blur")
    p.add_host(lambda a: None, y, name="save")
    out = p.draw(tmp_path / "dag.svg")
    text = out.read_text()
    assert text.startswith("<svg") and "blur" in text and "RAW out→a" in text


def test_labels_name_buffers_in_edges(cpu, bufs):
    x, y, z, _ = bufs
    p = dc.Pipeline(accelerator=cpu)
    p.label(image=x, blurred=y)
    p.add(scale, 64, 2.0, x, y, name="blur")
    p.add(scale, 64, 2.0, y, z, name="sharpen")
    p.add(fill, 64, 0.0, x, name="reset")
    assert set(p.edges()) == {("blur", "sharpen", "RAW blurred"), ("blur", "reset", "WAR image")}
    with pytest.raises(TypeError, match="label"):
        p.label(bad=3)
