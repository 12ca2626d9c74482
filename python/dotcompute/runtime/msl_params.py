"""The ``threadgroup`` parameters of a raw MSL kernel, for ``dc.RawKernel(..., backend="metal", shared_mem=)``.

A Metal kernel may take threadgroup memory as a parameter, ``threadgroup float* tmp [[threadgroup(0)]]``
(ggml's reductions do); its length is not in the source but set per dispatch with
``setThreadgroupMemoryLength:atIndex:``. dotcompute's launch ABI carries one such length per launch
(``dc_launch_config.dynamic_shared_bytes``, what CUDA's ``<<<grid, block, shared_mem>>>`` says), which
the Metal plugin binds to index 0: so ``shared_mem=`` sizes ``[[threadgroup(0)]]``, and a kernel with
threadgroup parameters at other indices is refused up front with a message that says so, rather than
failing at dispatch (or, on a Mac, being stopped by Metal's validation).
"""

from __future__ import annotations

import re

_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)
_INDEX = re.compile(r"\[\[\s*threadgroup\s*\(\s*(\d+)\s*\)\s*\]\]")


def _split_top_level(params: str) -> list[str]:
    """``params`` split at the commas outside <>, (), [] (``vec<float, 4>`` stays one parameter)."""
    out, depth, cur = [], 0, []
    for ch in params:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return out


def threadgroup_parameters(source: str, name: str) -> list[tuple[int, str]] | None:
    """(index, declaration) of each ``threadgroup`` parameter of kernel ``name`` in MSL ``source``;
    None when the kernel's parameter list is not written out in the source (a macro or a template
    instance makes it), so nothing can be said before Metal compiles it."""
    plain = _NOISE.sub(lambda m: " " * len(m.group(0)), source)
    m = re.search(r"(?:\bkernel|\[\[\s*kernel\s*\]\])\s+void\s+" + re.escape(name) + r"\s*\(", plain)
    if m is None:
        return None
    depth, end = 1, m.end()
    while end < len(plain) and depth:
        depth += {"(": 1, ")": -1}.get(plain[end], 0)
        end += 1
    found: list[tuple[int | None, str]] = []
    for param in _split_top_level(plain[m.end():end - 1]):
        if not re.match(r"\s*threadgroup\b", param):
            continue
        index = _INDEX.search(param)
        found.append((int(index.group(1)) if index else None, " ".join(param.split())))
    # parameters without [[threadgroup(n)]] take the lowest free index, in declaration order, as Metal
    taken = {i for i, _ in found if i is not None}
    out = []
    for index, decl in found:
        if index is None:
            index = next(i for i in range(len(found) + len(taken) + 1) if i not in taken)
            taken.add(index)
        out.append((index, decl))
    return out


def check_threadgroup_memory(source: str, name: str, shared_mem: int) -> None:
    """ValueError unless ``shared_mem`` gives the kernel's threadgroup parameters their memory."""
    params = threadgroup_parameters(source, name)
    if params is None:
        return
    others = [d for i, d in params if i != 0]
    if others:
        raise ValueError(f"RawKernel {name!r}: the threadgroup parameters {', '.join(others)} are not at index 0; "
                         f"only [[threadgroup(0)]] can be given memory from Python (shared_mem=, "
                         f"setThreadgroupMemoryLength:atIndex:0): merge them into one threadgroup buffer")
    if params and not shared_mem:
        raise ValueError(f"RawKernel {name!r}: the kernel takes `{params[0][1]}`, whose length Metal does not "
                         f"know: give it with shared_mem=<bytes per threadgroup> (setThreadgroupMemoryLength)")
    if shared_mem and not params:
        raise ValueError(f"RawKernel {name!r}: shared_mem={shared_mem} sizes a `threadgroup T* "
                         f"[[threadgroup(0)]]` parameter, and this kernel has none")
