"""The Python face of the native runtime: devices, buffers, streams, compilation.

This package is the only one that imports ``dotcompute._native`` (through
:mod:`.native`, lazily, on first use); the kernel language and the CLI use
the names exported here.
"""

from __future__ import annotations

from .accelerator import Accelerator, Memory
from .buffer import Buffer
from .cache import cache_clear, cache_folder, cache_info
from .compile import compile_source
from .cuda_texture import TextureObject
from .native import cmake_dir, package_dir, plugin_dir
from .params import ParamSpec
from .raw_kernel import RawKernel
from .registry import KNOWN_BACKENDS, BackendInfo, accelerator, backends, devices, load_plugin, unload_plugin
from .staging import NeedsStaging
from .stream import Event, Stream

__all__ = [
    "Accelerator", "BackendInfo", "Buffer", "Event", "KNOWN_BACKENDS", "Memory", "NeedsStaging", "ParamSpec",
    "RawKernel", "Stream", "TextureObject", "accelerator", "backends", "cache_clear", "cache_folder", "cache_info",
    "cmake_dir", "compile_source", "devices", "load_plugin", "package_dir", "plugin_dir", "unload_plugin",
]
