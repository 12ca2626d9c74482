"""What ``check=`` / ``DOTCOMPUTE_CHECK`` ask for: which checks, and whether to raise or log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...runtime import uninit as _uninit
from .layout import ALL_CHECKS, CHECK_BITS

OFF_WORDS = frozenset(("", "0", "off", "none", "false", "no"))


@dataclass(frozen=True)
class CheckSpec:
    checks: tuple[str, ...]  # in ALL_CHECKS order
    warn: bool = False  # log the findings instead of raising
    library: bool = False  # DOTCOMPUTE_CHECK only: dotcompute's own kernels (dc.sum, expressions) too

    @property
    def mask(self) -> int:
        m = 0
        for c in self.checks:
            m |= CHECK_BITS[c]
        return m

    def text(self) -> str:
        return ",".join(self.checks + (("library",) if self.library else ())) + (":warn" if self.warn else "")


def parse_check(value: Any, where: str = "check") -> CheckSpec | None:
    """``"memcheck,racecheck"``, ``"all"``, ``"all:warn"``, ``True`` (all), a list of names, or None/False
    (no checks). Unknown names are a ValueError naming ``where`` (the parameter or variable)."""
    if value is None or value is False:
        return None
    if isinstance(value, CheckSpec):
        return value
    if value is True:
        _uninit.active = True
        return CheckSpec(ALL_CHECKS)
    warn = False
    if isinstance(value, str):
        text = value.strip().lower()
        if text in OFF_WORDS:
            return None
        if text.endswith(":warn"):
            warn, text = True, text[: -len(":warn")]
        elif ":" in text:
            mode = text.rsplit(":", 1)[1]
            raise ValueError(f"{where}={value!r}: unknown mode {mode!r} after ':' (only ':warn' exists)")
        names = [n.strip() for n in text.split(",") if n.strip()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        names = []
        for n in value:
            if not isinstance(n, str):
                raise TypeError(f"{where} names checks as strings, not {type(n).__name__} ({n!r})")
            names.append(n.strip().lower())
    else:
        raise TypeError(f"{where} must be a string such as 'memcheck,racecheck', 'all' or 'all:warn', True or "
                        f"None, not {type(value).__name__}")
    if not names:
        raise ValueError(f"{where}={value!r} names no check; choose from all, {', '.join(ALL_CHECKS)}")
    chosen: set[str] = set()
    library = False
    for n in names:
        if n == "library" and where == "DOTCOMPUTE_CHECK":  # the library's own kernels as well
            library = True
        elif n == "all":
            chosen.update(ALL_CHECKS)
        elif n in CHECK_BITS:
            chosen.add(n)
        else:
            raise ValueError(f"{where}={value!r}: unknown check {n!r}; choose from all, {', '.join(ALL_CHECKS)}")
    # checks are in use from now on: acc.empty memory is tracked for initcheck (runtime/uninit.py)
    _uninit.active = True
    if not chosen:
        raise ValueError(f"{where}={value!r} names no check; choose from all, {', '.join(ALL_CHECKS)}")
    return CheckSpec(tuple(c for c in ALL_CHECKS if c in chosen), warn, library)


_env_cache: tuple[str | None, CheckSpec | None] = (None, None)


def env_check(raw: str | None) -> CheckSpec | None:
    """``DOTCOMPUTE_CHECK``'s value, parsed once per distinct text."""
    global _env_cache
    if raw == _env_cache[0]:
        return _env_cache[1]
    spec = parse_check(raw, "DOTCOMPUTE_CHECK")
    _env_cache = (raw, spec)
    return spec
