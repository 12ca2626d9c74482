"""The launch glue shared by the raw-kernel checkers (raw_cuda.py on the CUDA simulator, raw_metal.py on the
Metal test double).

Both checkers run a kernel instrumented first, report its findings and then launch it for real; only how the
findings are gathered and whether this process can check at all differ per backend. Those two answers are
given to :class:`RawLaunch`, which then provides the runner of ``dc.launch(raw_kernel, ..., check=...)`` and
the ``DOTCOMPUTE_CHECK`` launch that runtime/raw_kernel.py registers per backend.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable
from typing import Any

from ...errors import LaunchError
from .runner import Finding, report
from .spec import CheckSpec, env_check, parse_check

#: ``run_raw_checks(kernel, spec, acc, global_size, local_size, args)``: the checked run's findings
RunChecks = Callable[[Any, CheckSpec, Any, tuple[int, ...], "tuple[int, ...] | None", tuple[Any, ...]],
                     list[Finding]]
#: ``can_check(kernel, acc, raw_env_value)``: whether this launch can be checked here; when it cannot, the
#: gate itself says why (once), and the launch goes on unchecked as the user asked for a launch first
CanCheck = Callable[[Any, Any, str], bool]

_COUNT = re.compile(r" \(\d+ (?:accesses|times)\)")


def with_count(f: Finding, count: int, unit: str = "accesses") -> Finding:
    """``f`` merged with further hits of the same source line: its count and the ``(N unit)`` of its headline."""
    msg = _COUNT.sub("", f.message, count=1)
    head, sep, rest = msg.partition("\n")
    return dataclasses.replace(f, count=count, message=f"{head} ({count} {unit}){sep}{rest}")


def plain_launch(kernel: Any, acc: Any, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
                 args: tuple[Any, ...], stream: Any) -> None:
    """The raw kernel's unchecked launch (RawKernel's own, bypassing the check hooks that led here)."""
    from ...runtime.raw_kernel import RawKernel

    RawKernel._dc_launch(kernel, acc, global_size, local_size, args, stream)


class RawLaunch:
    """The checked and ``DOTCOMPUTE_CHECK`` launches of raw kernels written for ``backend``."""

    def __init__(self, backend: str, run_checks: RunChecks, can_check: CanCheck) -> None:
        self.backend = backend
        self._run_checks = run_checks
        self._can_check = can_check

    def _resolve(self, acc: Any) -> Any:
        # launches may name the device by id or leave it to the backend's first device
        from ...runtime import accelerator as _accelerator

        if not hasattr(acc, "info"):
            acc = _accelerator(acc if acc is not None else self.backend)
        return acc

    def checked_raw_launch(self, kernel: Any, check: CheckSpec, acc: Any, global_size: tuple[int, ...],
                           local_size: tuple[int, ...] | None, args: tuple[Any, ...], stream: Any) -> None:
        """The launch runner of a raw kernel under ``check``: the checked run, the report, the real launch."""
        acc = self._resolve(acc)
        if acc.backend != self.backend:
            raise LaunchError(f"RawKernel {kernel.name!r} is written for the {self.backend} backend and cannot run "
                              f"on {acc.id}")
        findings = self._run_checks(kernel, check, acc, global_size, local_size, args)
        report(kernel, check, findings)
        plain_launch(kernel, acc, global_size, local_size, args, stream)

    def checked_runner(self, kernel: Any, check: Any) -> Any:
        """``dc.launch(raw_kernel, ..., check=check)``'s runner (False/"off": the plain launch)."""
        spec = parse_check(check, "check")
        if spec is None:
            return functools.partial(plain_launch, kernel)
        return functools.partial(self.checked_raw_launch, kernel, spec)

    def env_launch(self, kernel: Any, acc: Any, global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
                   args: tuple[Any, ...], stream: Any) -> None:
        """A raw kernel's launch: under ``DOTCOMPUTE_CHECK`` checked, else the plain one (one test)."""
        raw = os.environ.get("DOTCOMPUTE_CHECK")
        spec = env_check(raw) if raw else None
        if spec is not None and not self._can_check(kernel, acc, raw or ""):
            spec = None
        if spec is None:
            plain_launch(kernel, acc, global_size, local_size, args, stream)
            return
        self.checked_raw_launch(kernel, spec, acc, global_size, local_size, args, stream)


__all__ = ["RawLaunch", "plain_launch", "with_count"]
