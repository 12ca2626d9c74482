"""The DAG: edges inferred from buffer hazards in the order stages were added, plus ``after=``.

Hazards, per buffer (by object identity):

* read-after-write (RAW): a stage reading a buffer runs after the last stage that wrote it;
* write-after-read (WAR): a stage writing it runs after every stage that read it since that write;
* write-after-write (WAW): a stage writing it runs after the last stage that wrote it.

Inferred edges always point from an earlier stage to a later one, and ``after=`` may only name stages
that already exist, so the graph stays acyclic by construction; the cycle check still runs (on the
whole graph) so that the error names the stages should that ever change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .stage import Stage


@dataclass
class Edge:
    """``src`` must finish before ``dst`` starts; ``reasons`` say why: ("RAW", "out→img"), ("after", "")."""

    src: int
    dst: int
    reasons: list[tuple[str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return ", ".join(kind if not buf else f"{kind} {buf}" for kind, buf in self.reasons)


class _BufferState:
    __slots__ = ("last_writer", "readers")

    def __init__(self) -> None:
        self.last_writer: tuple[int, str] | None = None  # (stage, the buffer's parameter name there)
        self.readers: list[tuple[int, str]] = []  # stages that read it since the last write


class Graph:
    """Stages in add order, their incoming edges, and the hazard state of every buffer seen so far."""

    def __init__(self) -> None:
        self.stages: list[Stage] = []
        self.index: dict[str, int] = {}
        self.incoming: list[dict[int, Edge]] = []
        self._buffers: dict[int, _BufferState] = {}
        self._keep: list[Any] = []  # the buffers themselves: ids stay unique while the pipeline lives
        self.labels: dict[int, str] = {}  # buffer id -> the name the user gave it (p.label)

    def add(self, stage: Stage) -> None:
        """Append ``stage`` with its edges; raises ValueError (and changes nothing) for a bad ``after``."""
        if stage.name in self.index:
            raise ValueError(f"a stage named {stage.name!r} already exists; give each stage its own name=")
        me = len(self.stages)
        edges: dict[int, Edge] = {}

        def edge(src: tuple[int, str], kind: str, param: str, obj: Any = None) -> None:
            # the buffer's label, else as each side calls it: "out→x" when the names differ, else just "x"
            buf = self.labels.get(id(obj)) or (param if src[1] == param else f"{src[1]}→{param}")
            e = edges.get(src[0])
            if e is None:
                e = edges[src[0]] = Edge(src[0], me)
            if (kind, buf) not in e.reasons:
                e.reasons.append((kind, buf))

        for name in stage.after:
            if name == stage.name:
                raise ValueError(f"stage {stage.name!r} names itself in after=: that is a cycle "
                                 f"{stage.name!r} -> {stage.name!r}")
            src = self.index.get(name)
            if src is None:
                known = ", ".join(map(repr, self.index)) or "none yet"
                raise ValueError(f"stage {stage.name!r}: after= names {name!r}, which is not a stage of this pipeline "
                                 f"(stages: {known}); add a stage before naming it in after=")
            edge((src, ""), "after", "")
        # hazards are computed against the state before this stage, then the state is updated
        for acc in stage.accesses:
            state = self._buffers.get(id(acc.obj))
            if state is None:
                continue
            if acc.read and state.last_writer is not None:
                edge(state.last_writer, "RAW", acc.param, acc.obj)
            if acc.write:
                if state.last_writer is not None:
                    edge(state.last_writer, "WAW", acc.param, acc.obj)
                for r in state.readers:
                    edge(r, "WAR", acc.param, acc.obj)
        self._check_acyclic(stage.name, edges)
        # commit
        self.stages.append(stage)
        self.index[stage.name] = me
        self.incoming.append(edges)
        for acc in stage.accesses:
            state = self._buffers.get(id(acc.obj))
            if state is None:
                state = self._buffers[id(acc.obj)] = _BufferState()
                self._keep.append(acc.obj)
            if acc.write:
                state.last_writer = (me, acc.param)
                state.readers = []
            elif acc.read:
                state.readers.append((me, acc.param))

    def _check_acyclic(self, new_name: str, new_edges: dict[int, Edge]) -> None:
        names = [s.name for s in self.stages] + [new_name]
        incoming = [list(e) for e in self.incoming] + [list(new_edges)]
        state = [0] * len(names)  # 0 unseen, 1 on the path, 2 done
        path: list[int] = []

        def visit(n: int) -> None:
            state[n] = 1
            path.append(n)
            for m in incoming[n]:
                if state[m] == 1:
                    cycle = path[path.index(m):] + [m]
                    raise ValueError("the dependencies form a cycle: " + " -> ".join(repr(names[i]) for i in cycle))
                if state[m] == 0:
                    visit(m)
            path.pop()
            state[n] = 2

        for n in range(len(names)):
            if state[n] == 0:
                visit(n)

    def deps(self, i: int) -> list[int]:
        return sorted(self.incoming[i])

    def edges(self) -> list[Edge]:
        return [e for edges in self.incoming for e in edges.values()]

    def dependents(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.stages]
        for e in self.edges():
            out[e.src].append(e.dst)
        return out


def stage_subtitle(stage: Stage) -> str:
    """The second line of a stage's box: what it is and where it runs."""
    return "host step" if stage.accelerator is None else f"{stage.kind} on {stage.accelerator.id}"


def _quote(text: str) -> str:
    # DOT quoted strings: backslash and quote escaped; line breaks written as \n (in a label that is a
    # line break, in a node id just a unique spelling) so that every statement stays on one line
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n") + '"'


def to_dot(graph: Graph, title: str = "pipeline") -> str:
    """Graphviz text: one box per stage (name, kind, accelerator), one arrow per edge labelled with
    the hazards and buffers that cause it; ``after=`` edges are dashed."""
    lines = [f"digraph {_quote(title)} {{", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    for s in graph.stages:
        extra = ', fillcolor="#fbf3e6"' if s.accelerator is None else ""
        label = _quote(s.name + "\n" + stage_subtitle(s))
        lines.append(f"  {_quote(s.name)} [label={label}{extra}];")
    for e in graph.edges():
        style = ", style=dashed" if all(k == "after" for k, _ in e.reasons) else ""
        lines.append(f"  {_quote(graph.stages[e.src].name)} -> {_quote(graph.stages[e.dst].name)} "
                     f"[label={_quote(e.label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
