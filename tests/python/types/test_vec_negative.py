"""Refusals of vectors, matrices and structs, each naming the file and the offending line (marked
``# ERR``) with the source line and a caret."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dotcompute as dc


@dc.struct
class Body:
    pos: dc.vec3
    mass: dc.float32


def _err_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if text.rstrip().endswith("# ERR"))


def no_w_component(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = a[i].w  # ERR


def shape_mismatch(a: dc.Buffer[dc.vec3], m: dc.mat33, out: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    out[i] = a[i] + m  # ERR


def vector_as_condition(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    if a[i]:  # ERR
        out[i] = 1.0


def vectors_compared(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.bool_]):
    i = dc.global_id(0)
    out[i] = a[i] < a[i]  # ERR


def number_into_vector(a: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    v = a[i]
    v = 1.0  # ERR
    a[i] = v


def vector_into_number(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    x = out[i]
    x = a[i]  # ERR
    out[i] = x


def cross_of_vec2(a: dc.Buffer[dc.vec2], out: dc.Buffer[dc.vec2]):
    i = dc.global_id(0)
    out[i] = dc.cross(a[i], a[i])  # ERR


def determinant_not_square(m: dc.matrix(2, 3, dc.float32), out: dc.Buffer[dc.float32]):
    out[0] = dc.determinant(m)  # ERR


def matmul_mismatch(m: dc.mat33, v: dc.vec2, out: dc.Buffer[dc.vec3]):
    out[0] = m @ v  # ERR


def index_out_of_range(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = a[i][3]  # ERR


def assign_vector_parameter(v: dc.vec3, out: dc.Buffer[dc.vec3]):
    v.x = 1.0  # ERR
    out[0] = v


def unknown_field(ps: dc.Buffer[Body], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = ps[i].charge  # ERR


def vec3_into_float_field(ps: dc.Buffer[Body]):
    i = dc.global_id(0)
    ps[i].mass = ps[i].pos  # ERR


def number_into_struct(ps: dc.Buffer[Body]):
    i = dc.global_id(0)
    ps[i] = 0.0  # ERR


def unknown_local_field(ps: dc.Buffer[Body]):
    i = dc.global_id(0)
    p = ps[i]
    p.velocity = p.pos  # ERR
    ps[i] = p


def vector_into_float_buffer(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.float32]):
    i = dc.global_id(0)
    out[i] = a[i]  # ERR


def atomic_on_struct_field(ps: dc.Buffer[Body]):
    dc.atomic_add(ps, 0, 1.0)  # ERR


def atomic_on_whole_vector(a: dc.Buffer[dc.vec3]):
    dc.atomic_add(a, 0, 1.0)  # ERR


def mixed_conditional(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    out[i] = a[i] if i > 0 else 1.0  # ERR


@dc.func
def spin(v: dc.vec3) -> dc.vec3:
    return dc.vec3(v.y, v.x, v.z)


def vector_call_in_while(a: dc.Buffer[dc.vec3]):
    i = dc.global_id(0)
    v = a[i]
    while spin(v).x > 0.0:  # ERR
        v.y -= 1.0
    a[i] = v


def vector_call_in_and(a: dc.Buffer[dc.vec3], out: dc.Buffer[dc.bool_]):
    i = dc.global_id(0)
    out[i] = i > 0 and spin(a[i]).x > 0.0  # ERR


@pytest.mark.parametrize("fn, words", [
    (no_w_component, "a vec3 has no component 'w'"),
    (shape_mismatch, "operands of different shapes: vec3 and mat33"),
    (vector_as_condition, "a vec3 value cannot be used as a number here"),
    (vectors_compared, "vec3 values cannot be compared"),
    (number_into_vector, "cannot assign a float64 number to v of type vec3"),
    (vector_into_number, "cannot assign a vec3 value to 'x'"),
    (cross_of_vec2, "dc.cross() takes 3-vectors, not vec2"),
    (determinant_not_square, "dc.determinant() takes a square matrix"),
    (matmul_mismatch, "@: shapes do not match: mat33 @ vec2"),
    (index_out_of_range, "index 3 is out of range for a vec3 of 3"),
    (unknown_field, "struct Body has no field 'charge'"),
    (vec3_into_float_field, "cannot assign a vec3 value to ps[i].mass of type float32"),
    (number_into_struct, "cannot assign a float64 number to ps[i] of type Body"),
    (unknown_local_field, "struct Body has no field 'velocity'"),
    (vector_into_float_buffer, "'out' is a buffer of float32 numbers; a vector, matrix or struct cannot be stored"),
    (mixed_conditional, "the branches of this conditional expression have different types: vec3 and float64"),
    (atomic_on_struct_field, "atomics on fields of a Body buffer are not supported"),
    (atomic_on_whole_vector, "updates one component: give 2 indices"),
    (vector_call_in_and, "spin() takes or returns vectors, matrices or structs, so it is inlined"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_refused_with_file_and_line(fn, words):
    with pytest.raises(dc.KernelTypeError) as info:
        dc.kernel(fn).source("cpu")
    err = info.value
    assert words in str(err), str(err)
    assert err.filename == __file__ and err.lineno == _err_line(fn), (err.filename, err.lineno, str(err))
    assert "# ERR" in str(err) and "^" in str(err)  # the offending source line with a caret


@pytest.mark.parametrize("fn, words", [
    (assign_vector_parameter, "cannot assign into the parameter 'v'"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_syntax_refusals(fn, words):
    with pytest.raises(dc.KernelSyntaxError) as info:
        dc.kernel(fn).source("cpu")
    assert words in str(info.value)
    assert info.value.lineno == _err_line(fn)


def test_while_condition_that_needs_statements_is_refused():
    with pytest.raises(dc.KernelTypeError) as info:
        dc.kernel(vector_call_in_while).source("cpu")
    assert "while condition" in str(info.value) and info.value.lineno == _err_line(vector_call_in_while)


def shrink(a: dc.Buffer[dc.vec3], b: dc.Buffer[dc.vec3], steps: dc.Buffer[dc.int32]):
    i = dc.global_id(0)
    n = 0
    while dc.length(a[i] - b[i]) > 0.5 and n < 100:   # pure: re-evaluated on every test
        a[i] = a[i] * 0.5
        n += 1
    steps[i] = n


def test_pure_vector_expressions_in_while_conditions_are_reevaluated():
    a = np.array([[4.0, 0, 0], [0.1, 0, 0]], np.float32)
    b = np.zeros((2, 3), np.float32)
    steps = np.zeros(2, np.int32)
    dc.launch(dc.kernel(shrink), 2, a, b, steps, accelerator="cpu")
    assert steps.tolist() == [3, 0] and a[0, 0] == 0.5


def test_type_constructors_refuse_bad_shapes():
    with pytest.raises(ValueError, match="at most 3 dimensions"):
        dc.Buffer[dc.mat33, 2]
    with pytest.raises(ValueError, match="n must be 1 to 16"):
        dc.vector(0)
    with pytest.raises(ValueError, match="vectors and matrices of complex64 are not supported"):
        dc.vector(2, dc.complex64)
    with pytest.raises(TypeError, match="field 'z'.*complex64 fields are not supported"):
        @dc.struct
        class Bad:
            z: dc.complex64
    with pytest.raises(TypeError, match="field 'h'.*float16 fields are not supported"):
        @dc.struct
        class Bad3:
            h: dc.vector(2, dc.float16)
    with pytest.raises(TypeError, match="field 'x' has type"):
        @dc.struct
        class Bad2:
            x: str


def test_launch_refuses_a_wrong_struct_array_before_running():
    @dc.kernel
    def touch(ps: dc.Buffer[Body]):
        i = dc.global_id(0)
        ps[i].mass = 1.0

    packed = np.zeros(4, [("pos", "f4", 3), ("mass", "f4"), ("extra", "u1")])
    with pytest.raises(dc.KernelTypeError, match="parameter 'ps' expects Body.dtype elements"):
        dc.launch(touch, 4, packed, accelerator="cpu")
    ok = np.zeros(4, Body.dtype)
    dc.launch(touch, 4, ok, accelerator="cpu")
    assert (ok["mass"] == 1).all()
