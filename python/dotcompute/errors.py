"""The exception hierarchy of dotcompute.

Every error the library raises derives from :class:`DotComputeError`. The
native core's C++ exceptions map one-to-one onto these classes (the bindings
translate them), so Python code never sees a bare ``RuntimeError`` from C++.
"""

from __future__ import annotations


class DotComputeError(Exception):
    """Base class of every dotcompute error.

    ``transient``: whether retrying the same work can help (a busy device, a timed-out compile, an
    out-of-memory that freeing or trimming memory may cure). Each class sets a default; a raiser that
    knows better sets it on the instance. ``accelerator``: the id (``"opencl:0"``) of the device the
    error came from when known (the orchestrated launch paths fill it in), else None.
    """

    transient: bool = False
    accelerator: str | None = None

    def __reduce__(self) -> tuple:
        # Errors cross process boundaries (Dask workers pickle them to the client). The default
        # pickling calls cls(*args) and drops every attribute set after __init__ (file, line, log,
        # transient...), so rebuild from the args and restore the whole state instead.
        state = dict(self.__dict__)
        if isinstance(self, SyntaxError):  # SyntaxError keeps these outside __dict__
            for name in ("filename", "lineno", "offset", "text", "msg"):
                state[name] = getattr(self, name, None)
        if "run" in state:  # a PipelineError's run holds threads and futures: it stays in its process
            state["run"] = None
        return (_rebuild_error, (type(self), self.args, state))


def _rebuild_error(cls: type, args: tuple, state: dict) -> DotComputeError:
    try:
        err = cls.__new__(cls, *args)  # no __init__: subclasses' signatures differ from their args
        BaseException.__init__(err, *args)
    except TypeError:  # MemoryError's __new__ refuses subclasses called directly: construct normally
        err = cls(*args)
    for name, value in state.items():
        setattr(err, name, value)
    return err


class KernelSyntaxError(DotComputeError, SyntaxError):
    """A kernel uses Python outside the kernel language.

    Carries ``filename``, ``lineno``, ``offset`` and ``text`` like a
    :class:`SyntaxError`, so tracebacks and editors point at the user's line.
    """

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None,
                 offset: int | None = None, text: str | None = None, hint: str | None = None) -> None:
        self.hint = hint
        self.msg_only = message
        SyntaxError.__init__(self, message, (filename, lineno, offset, text))

    def __str__(self) -> str:
        return format_source_error(self.msg_only, self.filename, self.lineno, self.offset, self.text, self.hint)


class KernelTypeError(DotComputeError, TypeError):
    """A type error in a kernel, or arguments that do not match its signature."""

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None,
                 offset: int | None = None, text: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.msg_only = message
        self.filename = filename
        self.lineno = lineno
        self.offset = offset
        self.text = text
        self.hint = hint

    def __str__(self) -> str:
        return format_source_error(self.msg_only, self.filename, self.lineno, self.offset, self.text, self.hint)


class CompilationError(DotComputeError):
    """The backend compiler rejected generated or raw source; ``log`` and ``source`` say why."""

    def __init__(self, message: str, log: str = "", source: str = "") -> None:
        super().__init__(message)
        self.log = log
        self.source = source


class BackendUnavailableError(DotComputeError):
    """A backend or device cannot be used here; ``reason`` says why."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class OutOfMemoryError(DotComputeError, MemoryError):
    """A device allocation failed even after the pool released its cached blocks."""

    # memory held by other work (buffers, other streams, other processes) may be freed in the meantime
    transient = True


class LaunchError(DotComputeError):
    """A kernel could not be launched (bad sizes, device limits) or failed while running."""


class KernelIndexError(DotComputeError, IndexError):
    """A debug-mode bounds check failed inside a kernel."""


class KernelCheckError(DotComputeError):
    """A kernel run under ``check=`` (memcheck, racecheck, synccheck, initcheck) did something wrong.

    ``findings``: the structured records (``.kind``, ``.line``, ``.buffer``, ``.index``, ``.threads``,
    ``.message``; see dotcompute.lang.check), the first of each distinct problem.
    """

    def __init__(self, message: str, findings: list | None = None) -> None:
        super().__init__(message)
        self.findings = list(findings or [])


class PluginError(DotComputeError):
    """A backend plugin could not be loaded or broke its ABI contract."""


class PipelineError(DotComputeError):
    """A ``dc.Pipeline`` stage failed under the ``abort`` strategy (or after its retries or fallback).

    ``stage``: the failing stage's name; ``run``: the :class:`PipelineRun` with every stage's status;
    the stage's own exception is ``__cause__``. Transient exactly when that cause is.
    """

    def __init__(self, message: str, stage: str | None = None, run: object = None) -> None:
        super().__init__(message)
        self.stage = stage
        self.run = run


class DotComputeWarning(UserWarning):
    """Something worked, but not as asked (e.g. a launch fell back to another device); says why."""


def format_source_error(message: str, filename: str | None, lineno: int | None, offset: int | None,
                        text: str | None, hint: str | None) -> str:
    """Render ``message`` with ``file:line:col``, the source line and a caret under the column."""
    parts = []
    if filename is not None and lineno is not None:
        col = f":{offset}" if offset else ""
        parts.append(f"{filename}:{lineno}{col}: {message}")
    else:
        parts.append(message)
    if text:
        line = text.rstrip("\n")
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        parts.append(f"    {stripped}")
        if offset:
            parts.append("    " + " " * max(0, offset - 1 - indent) + "^")
    if hint:
        parts.append(f"hint: {hint}")
    return "\n".join(parts)


__all__ = [
    "DotComputeError", "DotComputeWarning", "KernelSyntaxError", "KernelTypeError", "CompilationError",
    "BackendUnavailableError", "OutOfMemoryError", "LaunchError", "KernelIndexError", "KernelCheckError",
    "PluginError",
    "PipelineError",
]
