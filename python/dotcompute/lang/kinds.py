"""What the frontend needs to know of kernels and device functions: that an object is one.

``lang.kernel`` defines ``Kernel`` and ``DeviceFunction`` and imports the frontend to lower them; the
frontend in turn must recognise them (a call of a device function, a kernel called from a kernel, a
device function captured as a name). These bases give it that without importing ``lang.kernel``,
so the imports stay one-way.
"""

from __future__ import annotations


class KernelBase:
    """Base of ``dc.Kernel`` (``@dc.kernel``)."""

    __slots__ = ()


class DeviceFunctionBase:
    """Base of ``dc.DeviceFunction`` (``@dc.func``)."""

    __slots__ = ()


__all__ = ["DeviceFunctionBase", "KernelBase"]
