"""Behaviour the docs promise, checked where reading them with a bad argument gave a confusing error.

docs/pipelines.md: ``reads=`` / ``writes=`` take "a Buffer, a numpy array, or a list of them", every
check happens at ``add`` and a failed ``add`` leaves the pipeline unchanged.
docs/orchestration.md: ``kernel.precompile(signatures=...)`` takes signatures "as
``kernel.source(signature=...)`` takes them: one entry per parameter".
"""

from __future__ import annotations

import numpy as np
import pytest

import dotcompute as dc


@dc.kernel
def bump(x: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x[i] = x[i] + 1


@dc.kernel
def axpy_generic(a, x: dc.Buffer, y: dc.Buffer):
    i = dc.global_id(0)
    y[i] = a * x[i] + y[i]


@pytest.mark.parametrize("bad", [5, 2.5, "x", None.__class__])
@pytest.mark.parametrize("keyword", ["reads", "writes"])
def test_pipeline_reads_writes_of_the_wrong_kind_name_the_keyword(accelerator: dc.Accelerator, keyword: str,
                                                                    bad: object) -> None:
    x = accelerator.zeros((8,), np.float32)
    p = dc.Pipeline(accelerator=accelerator)
    p.add(bump, 8, x)
    with pytest.raises(TypeError, match=rf"{keyword}= must be a dc.Buffer, a numpy array or a list of them, "
                                        rf"got {type(bad).__name__}"):
        p.add(bump, 8, x, name="again", **{keyword: bad})
    assert len(p) == 1  # the failed add left the pipeline as it was
    # the documented forms still work: one buffer, a list, a numpy array
    p.add(bump, 8, x, name="one", **{keyword: x})
    p.add(bump, 8, x, name="listed", reads=[x], writes=[x])
    p.add_host(lambda: None, name="host", reads=np.zeros(2), writes=[])
    run = p.run()
    assert run.ok
    np.testing.assert_array_equal(x.numpy(), np.full(8, 3, np.float32))


def test_precompile_one_signature_not_in_a_list_is_a_clear_type_error(accelerator: dc.Accelerator) -> None:
    # signatures=("float64", ...) or ["float32"]: each string used to be taken as a signature of
    # len(string) entries ("the signature has 7 entries for 3 parameters").
    for bad in (("float64", dc.Buffer[dc.float32], dc.Buffer[dc.float32]), ["float32"], "float32"):
        with pytest.raises(TypeError, match=r"signature"):
            axpy_generic.precompile(accelerators=[accelerator], signatures=bad)
    with pytest.raises(TypeError, match=r"one signature on its own goes in a list"):
        axpy_generic.precompile(accelerators=[accelerator], signatures=["float32"])
    done = axpy_generic.precompile(accelerators=[accelerator],
                                   signatures=[("float64", dc.Buffer[dc.float32], dc.Buffer[dc.float32])])
    assert [acc_id for acc_id, _ in done] == [accelerator.id]
