"""Turning a position in a kernel's AST into a :class:`KernelSyntaxError` / :class:`KernelTypeError`
that points at the user's file, absolute line and column, with the source line and a hint."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import KernelSyntaxError, KernelTypeError


@dataclass(frozen=True)
class SourceInfo:
    """Where a function's parsed source sits in its file.

    The AST is parsed from the function's dedented source, so ``line_offset`` is added to
    every ``lineno`` and ``col_offset`` (the removed indentation) to every column.
    """

    filename: str
    line_offset: int
    col_offset: int
    file_lines: tuple[str, ...]

    def line_text(self, lineno: int) -> str | None:
        if 1 <= lineno <= len(self.file_lines):
            return self.file_lines[lineno - 1]
        return None

    def position(self, node: ast.AST | None) -> tuple[int, int]:
        """Absolute (line, 1-based column) of ``node`` in the file."""
        if node is None or not hasattr(node, "lineno"):
            return self.line_offset + 1, 1
        return node.lineno + self.line_offset, node.col_offset + self.col_offset + 1


class Reporter:
    """Builds located errors for one function's source."""

    def __init__(self, info: SourceInfo) -> None:
        self.info = info

    def _located(self, node: ast.AST | None) -> dict:
        line, col = self.info.position(node)
        return {"filename": self.info.filename, "lineno": line, "offset": col,
                "text": self.info.line_text(line)}

    def syntax(self, node: ast.AST | None, message: str, hint: str | None = None) -> KernelSyntaxError:
        return KernelSyntaxError(message, hint=hint, **self._located(node))

    def type(self, node: ast.AST | None, message: str, hint: str | None = None) -> KernelTypeError:
        return KernelTypeError(message, hint=hint, **self._located(node))


def plain_type_error(message: str, hint: str | None = None) -> KernelTypeError:
    """A type error without a source position (argument checks at launch)."""
    return KernelTypeError(message, hint=hint)


__all__ = ["SourceInfo", "Reporter", "plain_type_error"]
