"""The launch fast path: a cached ``@dc.kernel`` launched with plain arguments in one native call.

``acc.launch(k, n, *args)`` and ``dc.launch(k, n, *args, accelerator=acc)`` went through four
Python layers (the option checks, ``launch_on``, the kernel's launch entry, the native plan's
pybind11 call), 2.1 µs per launch against numpy's 1.2 µs ufunc call (issue 24). A launch entry
that needs nothing of those layers (lang/launching.py: no argument expansion, no work-group size to
choose, not debug) gets a native ``FastLaunch`` (python/src/fast_launch.cpp) that packs exact
``dc.Buffer``/scalar arguments, checks the kernel's unguarded indexings against the buffers' extents
and launches; for a kernel that reads global or closure names (the operations' kernels read their
modules' constants) it is wrapped in the re-check of those names that the normal path makes, and
declines once one of them was rebound. lang/launching.py files it in the kernel's ``_fast`` table
under the accelerator after a launch through the entry succeeded.

:func:`attempt` is what the two entry points call for a launch without options; its tests are
those the layers below would make, each a load and a compare: a trace recording (``dc.profile``), a
graph capture, ``DOTCOMPUTE_CHECK`` set, ``DOTCOMPUTE_DEBUG`` asking for debug launches,
pending array expressions (run first, as ``launch_on`` does). Anything else it cannot take (numpy
arrays, views, lazy buffers, other types, a new signature, an index past an extent, a wrong
argument) the native side answers ``False`` for, before anything runs, and the normal path handles
it: same results, same errors.
"""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import Any

from .. import config
from ..errors import DotComputeError
from . import array_hooks as _array_hooks
from . import trace as _trace
from .array_hooks import HOOKS as _ARRAY_HOOKS
from .buffer import Buffer

# os.environ's backing dict (CPython): a lookup there skips os.environ's key encoding. Without it
# (another Python) there is no fast path: the normal one reads the variables its own way.
_ENV: dict | None = getattr(os.environ, "_data", None)
try:
    _DEBUG_KEY: Any = os.environ.encodekey("DOTCOMPUTE_DEBUG")  # type: ignore[attr-defined]
    _CHECK_KEY: Any = os.environ.encodekey("DOTCOMPUTE_CHECK")  # type: ignore[attr-defined]
except AttributeError:
    _ENV = None

# The kernels that have no fast path (``RawKernel``) carry this as their ``_fast`` table.
NO_FAST: Any = MappingProxyType({})


class _State:
    """``debug_raw``: the last DOTCOMPUTE_DEBUG raw value (as os.environ holds it; None when unset)
    seen to mean "not debug". Every filed launcher is a non-debug one, so a launch takes one while
    the variable holds that very object; another value is parsed once (config.debug)."""

    __slots__ = ("debug_raw",)

    def __init__(self) -> None:
        self.debug_raw: Any = None


STATE = _State()


def env_debug_raw() -> Any:
    """DOTCOMPUTE_DEBUG's raw value now (the object :attr:`_State.debug_raw` is compared with)."""
    return _ENV.get(_DEBUG_KEY) if _ENV is not None else None


def file(kernel: Any, acc: Any, fast: Any, debug_raw: Any) -> None:
    """Files ``fast`` for ``kernel`` on ``acc``: called by lang/launching.py after a launch through
    the entry succeeded with debug off, ``debug_raw`` being the DOTCOMPUTE_DEBUG value it read."""
    if _ENV is None:
        return
    STATE.debug_raw = debug_raw  # every filed launcher is a non-debug one: valid under any such value
    kernel._fast[acc] = fast


def attempt(acc: Any, kernel: Any, global_size: Any, args: tuple[Any, ...], hooks: bool = True) -> bool:
    """Launches on the fast path when it can: True; False: nothing ran, take the normal path.

    The caller has checked that the launch has no options (``local_size``, ``stream``, ``fallback``,
    ``retries``, ``check``) and that the process was not forked from one that used the devices.
    ``hooks=False``: the expression layer's own kernels, whose arguments are concrete buffers it
    only reads or just made -- no pending expression needs to run before them."""
    try:
        fast = kernel._fast.get(acc)
    except AttributeError:  # not a kernel at all: the normal path says so
        return False
    if (fast is None or _trace.active is not None or acc._capture_stream is not None or _ENV is None
            or _CHECK_KEY in _ENV):
        return False
    raw = _ENV.get(_DEBUG_KEY)
    if raw is not STATE.debug_raw:  # DOTCOMPUTE_DEBUG was set, changed or removed: parsed once per change
        if config.debug():
            return False  # debug launches check every access: the normal path makes them
        STATE.debug_raw = raw
    if hooks and _array_hooks.lazy_made:
        for a in args:  # lazy buffers and views: the normal path computes or passes them (once)
            if isinstance(a, Buffer) and type(a) is not Buffer:
                return False
        before = _ARRAY_HOOKS.get("before_launch")
        if before is not None:  # pending expressions that read an argument run first (as launch_on)
            before(kernel, args)
    try:
        return fast(global_size, args)
    except DotComputeError as e:
        if e.accelerator is None:  # say where it came from, as launch_on does
            e.accelerator = acc.id
        raise


__all__ = ["NO_FAST", "STATE", "attempt", "env_debug_raw", "file"]
