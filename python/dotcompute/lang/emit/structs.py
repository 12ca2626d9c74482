"""Struct buffers (``dc.Buffer[Particle]``) in every C-like target.

A struct buffer reaches the entry point as bytes (its parameter is a uint8 buffer whose last
extent is the struct size), so the argument ABI and every target's parameter declarations stay
as they are. Each access casts the pointer to the struct type and reads or writes one scalar
leaf: ``((const dc_s_Particle_1a2b*)ps)[i].pos[1]``. The struct is declared once per source as
a C struct of its fields, vectors and matrices as arrays of their element type (``float
pos[3]``, so packed: 12 bytes, 4-aligned, on every backend, unlike OpenCL's and Metal's
16-byte ``float3``); with natural alignment this is numpy's ``align=True`` layout, which
``@dc.struct`` gives ``Particle.dtype`` (lang/vectypes.py). C++-based targets check the size
with ``static_assert``.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from ..types import INT64, ScalarType
from ..vectypes import MatrixType, StructType, VectorType


def member(name: str) -> str:
    """A struct field's C name: the numpy field name, unless a target would read it as a keyword or
    a macro (a field ``long`` beside ``lat``, ``half``, ``M_PI``); those get a prefix no other
    field can have (names beginning ``dc_`` are themselves prefixed)."""
    from ..frontend.names import is_safe_identifier

    return name if is_safe_identifier(name) else f"dc_f_{name}"


def struct_name(p: Any, st: StructType) -> str:
    """Declare ``st`` (and the structs it nests) in the prelude; its C name."""
    from ..frontend.names import short_hash

    layout = ";".join(f"{f.name}:{f.type}@{f.offset}" for f in st.fields)
    name = f"dc_s_{st.name}_{short_hash(layout + str(st.size), 6)}"
    if name in p.prelude:
        return name
    members = []
    for f in st.fields:
        t = f.type
        if isinstance(t, StructType):
            members.append(f"{struct_name(p, t)} {member(f.name)};")
        elif isinstance(t, ScalarType):
            p.note_type(t)
            members.append(f"{p.storage(t)} {member(f.name)};")
        elif isinstance(t, VectorType):
            p.note_type(t.dtype)
            members.append(f"{p.storage(t.dtype)} {member(f.name)}[{t.n}];")
        else:
            assert isinstance(t, MatrixType)
            p.note_type(t.dtype)
            members.append(f"{p.storage(t.dtype)} {member(f.name)}[{t.rows}][{t.cols}];")
    text = f"typedef struct {{ {' '.join(members)} }} {name};"
    if p.backend in ("cpu", "cuda", "metal"):
        text += f'\nstatic_assert(sizeof({name}) == {st.size}, "{st.name}: the C layout differs from numpy\'s");'
    p.need(name, text)
    return name


def member_suffix(st: StructType, path: tuple) -> str:
    """``.pos[1]`` for the leaf path ``("pos", 1)``; matrices take ``[i][j]``."""
    out = ""
    t: Any = st
    rest = list(path)
    while rest:
        key = rest.pop(0)
        if isinstance(t, StructType):
            f = t.field(key)
            assert f is not None
            out += f".{member(key)}"
            t = f.type
        elif isinstance(t, MatrixType):
            j = rest.pop(0)
            out += f"[{key}][{j}]"
            t = t.dtype
        else:
            out += f"[{key}]"
            t = t.dtype
    return out


def _ptr(p: Any, ref: ir.BufferRef, const: bool) -> str:
    name = struct_name(p, ref.struct)
    space = f"{p.global_space} " if p.global_space else ""
    return f"(({space}{'const ' if const else ''}{name}*){p.buffer_ptr(ref)})"


def load(p: Any, e: ir.BufferLoad) -> str:
    ref = e.buffer
    p.note_type(e.type)
    idx = [p.expr(i) for i in e.indices]
    flat = p.checked_index(ref, idx, e)
    suffix = member_suffix(ref.struct, e.member)
    if p.debug and ref.space == "global":
        st = p.storage(e.type)
        key = f"dc_ld_{struct_name(p, ref.struct)}{suffix.replace('.', '_').replace('[', '_').replace(']', '')}"
        space = f"{p.global_space} " if p.global_space else ""
        p.need(key, f"{p.func_qualifier()} {st} {key}({space}const unsigned char* p, {p.tname(INT64)} k) "
                    f"{{ return k < 0 ? ({st})0 : (({space}const {struct_name(p, ref.struct)}*)p)[k]{suffix}; }}")
        raw = f"{key}({p.buffer_ptr(ref)}, {flat})"
    else:
        raw = f"{_ptr(p, ref, True)}[{flat}]{suffix}"
    return p.from_storage(raw, e.type)


def store(p: Any, s: ir.BufferStore) -> None:
    ref = s.buffer
    idx = [p.expr(i) for i in s.indices]
    value = p.to_storage(p.expr(s.value), s.value.type)
    suffix = member_suffix(ref.struct, s.member)
    if p.debug and ref.space == "global":
        flat = p.checked_index(ref, idx, s)
        p.emit(f"{{ const {p.tname(INT64)} dc_k = {flat}; if (dc_k >= 0) {_ptr(p, ref, False)}[dc_k]{suffix} = "
               f"{value}; }}")
    else:
        p.emit(f"{_ptr(p, ref, False)}[{p.flat_index(ref, idx)}]{suffix} = {value};")


__all__ = ["struct_name", "member", "member_suffix", "load", "store"]
