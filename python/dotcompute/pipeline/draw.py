"""``p.draw(path)``: Graphviz when its ``dot`` program is installed; else a small built-in SVG layout.

The built-in layout puts each stage in the column of its longest dependency chain (left to right,
like ``rankdir=LR``) and draws straight labelled arrows: enough for the pipelines people draw, and no
dependency for the docs to need.
"""

from __future__ import annotations

import shutil
import subprocess
from html import escape
from pathlib import Path

from .graph import Graph, stage_subtitle

_W_CHAR, _BOX_H, _COL_GAP, _ROW_GAP, _PAD = 7.2, 44, 110, 30, 20


def render(dot_text: str, graph: Graph, path: Path) -> Path:
    fmt = path.suffix.lstrip(".").lower()
    if not fmt:
        raise ValueError(f"draw(path): {str(path)!r} needs a file extension that names the format (.svg, .png, .pdf)")
    dot = shutil.which("dot")
    if dot is not None:
        done = subprocess.run([dot, f"-T{fmt}", "-o", str(path)], input=dot_text.encode(), capture_output=True,
                              timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"graphviz could not render {path}: {done.stderr.decode(errors='replace').strip()}")
        return path
    if fmt != "svg":
        raise RuntimeError(f"draw(path): rendering .{fmt} needs Graphviz's `dot` program, which is not installed; "
                           "use a .svg path (drawn without Graphviz) or p.to_dot() with another renderer")
    path.write_text(svg(graph))
    return path


def svg(graph: Graph) -> str:
    """The DAG as SVG text with the built-in layered layout."""
    n = len(graph.stages)
    deps = [graph.deps(i) for i in range(n)]
    column = [0] * n
    for i in range(n):  # add order is a topological order
        column[i] = 1 + max((column[d] for d in deps[i]), default=-1)
    labels = [(s.name, stage_subtitle(s)) for s in graph.stages]
    widths = [max(len(a), len(b)) * _W_CHAR + 24 for a, b in labels]
    cols = max(column, default=-1) + 1
    col_w = [max((widths[i] for i in range(n) if column[i] == c), default=0) for c in range(cols)]
    xs = [_PAD + sum(col_w[:c]) + c * _COL_GAP for c in range(cols)]
    rows: dict[int, int] = {}
    pos: list[tuple[float, float]] = []
    for i in range(n):
        r = rows.get(column[i], 0)
        rows[column[i]] = r + 1
        pos.append((xs[column[i]], _PAD + r * (_BOX_H + _ROW_GAP)))
    width = (xs[-1] + col_w[-1] + _PAD) if cols else 2 * _PAD
    height = _PAD * 2 + max(rows.values(), default=0) * (_BOX_H + _ROW_GAP)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>']
    for e in graph.edges():
        (x1, y1), (x2, y2) = pos[e.src], pos[e.dst]
        x1 += widths[e.src]
        y1 += _BOX_H / 2
        y2 += _BOX_H / 2
        dash = ' stroke-dasharray="5,4"' if all(k == "after" for k, _ in e.reasons) else ""
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#555"{dash} '
                   'marker-end="url(#arrow)"/>')
        out.append(f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 4:.1f}" text-anchor="middle" '
                   f'font-size="10" fill="#333">{escape(e.label)}</text>')
    for i, (x, y) in enumerate(pos):
        host = graph.stages[i].accelerator is None
        fill = "#fbf3e6" if host else "#eef3fb"
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{widths[i]:.1f}" height="{_BOX_H}" rx="8" '
                   f'fill="{fill}" stroke="#345"/>')
        name, sub = labels[i]
        cx = x + widths[i] / 2
        out.append(f'<text x="{cx:.1f}" y="{y + 18:.1f}" text-anchor="middle" font-weight="bold">{escape(name)}</text>')
        out.append(f'<text x="{cx:.1f}" y="{y + 34:.1f}" text-anchor="middle" fill="#555">{escape(sub)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
