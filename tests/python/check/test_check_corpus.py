"""Every seeded bug is found by its own check, at its line, on every device (the checked run is the
host's; the target's launch never runs when a check raises)."""

from __future__ import annotations

import pytest
from check_corpus import BUGS, bug_line

import dotcompute as dc


def test_the_corpus_is_large_enough():
    kinds = {b.kind for b in BUGS}
    assert len(BUGS) >= 30 and kinds == {"memcheck", "racecheck", "synccheck", "initcheck"}


def _run(b, accelerator, check):
    args = b.make_args(accelerator) if b.on_device else b.make_args()
    dc.launch(b.kernel, b.global_size, *args, local_size=b.local_size, accelerator=accelerator, check=check)


@pytest.mark.parametrize("b", BUGS, ids=[b.id for b in BUGS])
def test_bug_found_by_its_check_at_its_line(b, cpu):
    with pytest.raises(dc.KernelCheckError) as ei:
        _run(b, cpu, b.kind)
    findings = ei.value.findings
    assert findings and all(f.kind == b.kind for f in findings), findings
    line = bug_line(b)
    assert any(line in (f.line, f.other_line) for f in findings), (line, [str(f) for f in findings])
    f = findings[0]
    assert f.message and str(line) in str(ei.value)
    assert len(f.groups) == len(f.threads)
    if b.kind == "racecheck":
        assert len(f.threads) == 2 and f.threads[0] != f.threads[1] and f.hazard in ("write-write", "read-write")
        if b.id == "r_across_groups":  # the barrier orders one work-group only
            assert f.groups[0] != f.groups[1] and "different work-groups" in f.message
    elif b.kind == "synccheck":
        assert len(f.threads) == 2 and f.buffer is None
    else:
        assert len(f.threads) == 1 and f.buffer and f.index is not None


@pytest.mark.parametrize("b", BUGS, ids=[b.id for b in BUGS])
def test_bug_found_under_all_checks_on_every_device(b, accelerator):
    with pytest.raises(dc.KernelCheckError) as ei:
        _run(b, accelerator, "all")
    assert any(f.kind == b.kind for f in ei.value.findings)
