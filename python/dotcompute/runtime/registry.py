"""Finding backends and devices: ``dc.backends()``, ``dc.devices()``, ``dc.accelerator(spec)``.

One Python :class:`Accelerator` exists per native device, so ``dc.accelerator("cpu")``
returns the same object every time and buffers can compare accelerators with ``is``.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from ..errors import BackendUnavailableError
from . import accelerator as _accelerator_module
from . import stream as _stream_module
from .accelerator import Accelerator
from .native import entry_point_failures, native

KNOWN_BACKENDS = ("cpu", "opencl", "cuda", "metal")

_lock = threading.Lock()


class AcceleratorSpecError(BackendUnavailableError, ValueError):
    """A spec that names no backend or has a malformed index: a bad value as much as a missing device,
    so it is caught by ``except ValueError`` as well as ``except dc.BackendUnavailableError``."""
_wrappers: dict[str, Accelerator] = {}


@dataclass(frozen=True)
class BackendInfo:
    """One backend plugin found by the runtime, usable or not."""

    name: str
    version: str
    available: bool
    reason: str
    library: str
    manifest: str = ""
    abi_version: int = 0
    device_count: int = 0
    #: True when the devices are simulated (the CUDA simulator, ``DOTCOMPUTE_CUDA_SIM=1``).
    simulated: bool = False

    def __repr__(self) -> str:
        state = ("available, simulated" if self.simulated else "available") if self.available \
            else f"unavailable: {self.reason}"
        return f"<dc.BackendInfo {self.name} {self.version or '?'} ({state})>"


def wrap(native_acc: Any) -> Accelerator:
    """The one Python Accelerator of a native one."""
    key = native_acc.id
    acc = _wrappers.get(key)
    if acc is None:
        with _lock:
            acc = _wrappers.get(key)
            if acc is None:
                acc = Accelerator(_native=native_acc)
                _wrappers[key] = acc
    return acc


def backends() -> list[BackendInfo]:
    """Every backend plugin found, in discovery order; unavailable ones say why."""
    out = [_backend_info(s) for s in native().backends()]
    for failure in entry_point_failures():
        out.append(BackendInfo(name=failure.name, version="", available=False, reason=failure.reason,
                               library=failure.value))
    return out


def devices() -> list[Accelerator]:
    """Every device of every available backend (``cpu:0`` is always among them)."""
    return [wrap(a) for a in native().devices()]


def _describe_available() -> str:
    ids = [a.id for a in native().devices()]
    return ", ".join(ids) if ids else "none"


def accelerator(spec: str | Accelerator = "auto") -> Accelerator:
    """The device named by ``spec``: ``"auto"``, ``"cpu"``, ``"cpu:0"``, ``"cuda:1"``, ``"opencl"``, ``"metal"``.

    ``"auto"`` prefers a GPU (CUDA, Metal, then an OpenCL GPU) and falls back to
    the CPU. ``"gpu"`` is the best non-CPU device (see :func:`gpu`; a CPU-type OpenCL device is not
    one); ``"best"`` without a kernel is ``"auto"`` (``dc.launch(..., accelerator="best")`` chooses
    per kernel from measurements).
    An unknown or unavailable backend, or a device index that does not exist, raises
    :class:`BackendUnavailableError` saying why and listing what is available; a
    malformed spec (unknown name, bad index) raises :class:`AcceleratorSpecError`,
    which is also a ``ValueError``. A spec that is not a string is a ``TypeError``.
    """
    if isinstance(spec, Accelerator):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"accelerator spec must be a string like 'cpu' or 'cuda:0', got {type(spec).__name__}")
    text = spec.strip().lower()
    if not text:
        raise AcceleratorSpecError(f"accelerator spec {spec!r} is empty: use 'auto', 'best', 'gpu', a backend "
                                   f"({', '.join(KNOWN_BACKENDS)}) or a device id; available devices: "
                                   f"{_describe_available()}", reason="empty accelerator spec")
    if text == "gpu":
        return gpu()
    if text == "best":
        # without a kernel there is nothing measured to choose by; dc.launch(accelerator="best")
        # chooses per kernel from measured history (dotcompute.orchestrate)
        text = "auto"
    backend, colon, index = text.partition(":")
    if colon and not (index.isascii() and index.isdigit()):
        raise AcceleratorSpecError(f"accelerator spec {spec!r}: the device index after ':' must be a number; "
                                   f"available devices: {_describe_available()}")
    if colon and backend == "auto":
        raise AcceleratorSpecError(f"accelerator spec {spec!r}: 'auto' takes no device index; "
                                   f"available devices: {_describe_available()}")
    if backend != "auto" and backend not in KNOWN_BACKENDS and not _is_plugin(backend):
        known = ", ".join(KNOWN_BACKENDS)
        raise AcceleratorSpecError(
            f"accelerator spec {spec!r}: no backend named {backend!r} (known: {known}); "
            f"available devices: {_describe_available()}",
            reason=f"unknown backend {backend!r}")
    try:
        return wrap(native().accelerator(text))
    except BackendUnavailableError as e:
        message = str(e)
        if "available devices" not in message:
            message = f"{message}; available devices: {_describe_available()}"
        raise BackendUnavailableError(message, reason=getattr(e, "reason", "") or str(e)) from None


_GPU_BACKEND_ORDER = {"cuda": 0, "metal": 1, "opencl": 2}


def gpu_candidates() -> list[Accelerator]:
    """The devices ``"gpu"`` may mean, best first: GPUs (CUDA, Metal, OpenCL, then other backends),
    then other non-CPU device types (OpenCL accelerators). A device whose type is ``"cpu"`` is never
    one, whatever its backend: PoCL's OpenCL device runs on the same cores as ``cpu:0``, so choosing
    it for "gpu" would only cost speed."""
    found = [d for d in devices() if d.type != "cpu"]
    return sorted(found, key=lambda d: (d.type != "gpu", _GPU_BACKEND_ORDER.get(d.backend, 3), d.index))


def gpu() -> Accelerator:
    """``dc.accelerator("gpu")``: the first of :func:`gpu_candidates`, or BackendUnavailableError."""
    found = gpu_candidates()
    if not found:
        cpu_like = [d.id for d in devices() if d.backend != "cpu"]
        also = (f" ({', '.join(cpu_like)} {'is a CPU-type device' if len(cpu_like) == 1 else 'are CPU-type devices'}"
                ", not a GPU)") if cpu_like else ""
        raise BackendUnavailableError(f"accelerator 'gpu': no GPU was found on this machine{also}; available "
                                      f"devices: {_describe_available()}; use 'auto', 'best' or 'cpu'",
                                      reason="no GPU found")
    return found[0]


def _simulated(backend: str) -> bool:
    """Whether the backend's devices say they are simulated (their info's ``"simulated": true``)."""
    for d in native().devices():
        if d.backend != backend:
            continue
        try:
            extra = json.loads(dict(d.info).get("extra_json") or "{}")
        except ValueError:
            continue
        if isinstance(extra, dict) and extra.get("simulated") is True:
            return True
    return False


def _backend_info(s: Any) -> BackendInfo:
    return BackendInfo(name=s.name, version=s.version, available=s.available, reason=s.reason, library=s.library,
                       manifest=s.manifest, abi_version=s.abi_version, device_count=s.device_count,
                       simulated=bool(s.available) and _simulated(s.name))


def load_plugin(path: str | os.PathLike[str]) -> BackendInfo:
    """Loads a backend from a ``*.plugin.json`` manifest, a folder of them, or a plugin library.

    A plugin that cannot be used comes back unavailable with the reason; only a
    path that does not exist raises :class:`dotcompute.PluginError`.
    """
    return _backend_info(native().load_plugin(os.fspath(path)))


def unload_plugin(name: str) -> None:
    """Unloads a backend (it stays listed as unavailable, "unloaded", until loaded again).

    Raises :class:`dotcompute.PluginError` while buffers, streams, events or
    compiled kernels of its devices are alive.
    """
    with _lock:
        # Weak references only: the Python objects must be able to die for the native ones to go.
        dropped = {k: weakref.ref(_wrappers.pop(k)) for k in [k for k, a in _wrappers.items() if a.backend == name]}
        try:
            native().unload_plugin(name)
        except BaseException:
            for key, ref in dropped.items():  # still in use: keep one Python object per device
                acc = ref()
                if acc is not None:
                    _wrappers[key] = acc
            raise


# dc.Accelerator(spec) resolves specs through this module (see accelerator._ConstructedFromSpec)
_accelerator_module._SPEC_RESOLVER = accelerator
_stream_module._SPEC_RESOLVER = accelerator


def _is_plugin(name: str) -> bool:
    return any(b.name == name for b in native().backends())


__all__ = ["AcceleratorSpecError", "BackendInfo", "KNOWN_BACKENDS", "accelerator", "backends", "devices", "gpu",
           "gpu_candidates", "load_plugin", "unload_plugin", "wrap"]
