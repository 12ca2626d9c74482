"""``@dc.kernel`` and ``@dc.func``: Python functions that become device code.

A :class:`Kernel` is lazy: decorating only remembers the function. The first
``source()``, ``check()`` or launch parses it, checks it and lowers it to IR for
one specialisation (the argument dtypes and dimensionalities); specialisations,
generated sources, compiled kernels and launch plans are cached on the object.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import config
from ..errors import KernelTypeError
from . import ir
from .check import checked_launch, parse_check
from .compile_options import contracts
from .frontend import ParsedFunction, build_module, param_decls, parse_function, return_spec, signature_text
from .frontend.device_check import check_device_function
from .frontend.module import ModuleBuilder
from .frontend.names import short_hash
from .frontend.resolve import Capture, capture_still_valid, is_buffer_class
from .frontend.signature import ParamDecl
from .frontend.source import remember_annotation_scope
from .kinds import DeviceFunctionBase, KernelBase
from .launching import launch_kernel
from .pickling import reduce_by_value
from .types import (
    BOOL,
    COMPLEX128,
    FLOAT32,
    FLOAT64,
    INT32,
    INT64,
    UINT32,
    UINT64,
    BufferAnnotation,
    BufferType,
    ScalarType,
    scalar_type,
)
from .vectypes import aggregate_type

ParamType = ScalarType | BufferType


class DeviceFunction(DeviceFunctionBase):
    """A ``@dc.func`` device function: callable from kernels and other device functions.

    Called from ordinary Python it runs the Python function itself (handy for testing the
    arithmetic on the host).
    """

    def __init__(self, pyfunc: Callable[..., Any]) -> None:
        if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
            raise TypeError(f"@dc.func decorates a Python function, not {pyfunc!r}")
        remember_annotation_scope(pyfunc)
        self.pyfunc = pyfunc
        functools.update_wrapper(self, pyfunc)  # type: ignore[arg-type]
        self._parsed: ParsedFunction | None = None

    def parsed(self) -> ParsedFunction:
        if self._parsed is None:
            self._parsed = parse_function(self.pyfunc)
        return self._parsed

    @classmethod
    def from_parsed(cls, parsed: ParsedFunction) -> DeviceFunction:
        """A device function known only from its AST (``dotcompute check`` on a file that cannot be
        imported)."""
        obj = object.__new__(cls)
        obj.pyfunc = None
        obj.__name__ = parsed.name
        obj._parsed = parsed
        return obj

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.pyfunc is None:
            raise TypeError(f"{self.__name__} is only known from its source here")
        return self.pyfunc(*args, **kwargs)

    def check(self) -> None:
        """Check the function on its own, with default types for unannotated parameters."""
        parsed = self.parsed()
        decls = param_decls(parsed, device=True)
        types = tuple(default_param_type(d, parsed.tree) for d in decls)
        if check_device_function(self, decls, types):
            return  # takes or returns vectors, matrices or structs: checked as it is inlined
        return_spec(parsed)
        ModuleBuilder(debug=False).function_for(self, types, parsed.tree, parsed.reporter)

    def __repr__(self) -> str:
        return f"<dc.func {self.__name__}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # by value (source and captured constants), so process workers need not import the module
        return reduce_by_value(self, {})


class Specialization:
    """One lowered kernel: IR, the free names it read, and its emitted sources per backend."""

    def __init__(self, module: ir.Module, captures: list[Capture], debug_files: dict[int, str] | None = None) -> None:
        self.module = module
        # One record per name: a constant used in many places is read once per use while lowering,
        # and every launch re-checks the records (valid()), so duplicates cost launch time.
        unique: dict[tuple[str, str, int], Capture] = {}
        for c in captures:
            unique.setdefault((c.where, c.name, id(c.namespace)), c)
        self.captures = list(unique.values())
        self.debug_files = debug_files or {}
        self.emitted: dict[str, Any] = {}

    def valid(self) -> bool:
        return all(capture_still_valid(c) for c in self.captures)

    def emit(self, backend: str) -> Any:
        out = self.emitted.get(backend)
        if out is None:
            from .emit import emit

            out = emit(self.module, backend, debug=self.module.kernel.debug)
            self.emitted[backend] = out
        return out


class Kernel(KernelBase):
    """A ``@dc.kernel``: launch with ``dc.launch(kernel, global_size, *args)``."""

    def __init__(self, pyfunc: Callable[..., Any], debug: bool | None = None, name: str | None = None,
                 fastmath: bool = False, contract: bool = False, check: Any = None) -> None:
        if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
            raise TypeError(f"@dc.kernel decorates a Python function, not {pyfunc!r}")
        if name is not None and (not isinstance(name, str) or not name.isidentifier()):
            raise ValueError(f"@dc.kernel(name=...) must be an identifier, not {name!r}")
        if not isinstance(fastmath, bool):
            raise TypeError(f"@dc.kernel(fastmath=...) must be True or False, not {fastmath!r}")
        if not isinstance(contract, bool):
            raise TypeError(f"@dc.kernel(contract=...) must be True or False, not {contract!r}")
        # The backend compiler may reorder float arithmetic, use approximate division, square roots
        # and transcendentals, and assume no NaN or infinity (lang/compile_options.py); off by default,
        # where every backend gives IEEE results.
        self.fastmath = fastmath
        # Narrower: only a*b+c may become one fused multiply-add (one rounding instead of two).
        self.contract = contract
        remember_annotation_scope(pyfunc)
        self.pyfunc = pyfunc
        functools.update_wrapper(self, pyfunc)  # type: ignore[arg-type]
        self.name = name or pyfunc.__name__
        self.debug = debug
        # kernel checks on every launch (lang/check): the launch runner itself changes, so an unchecked
        # kernel's launch makes no test for it
        self.check_spec = parse_check(check, "@dc.kernel(check=...)")
        if self.check_spec is not None:
            self._dc_launch = functools.partial(checked_launch, self, self.check_spec)
        self._lock = threading.RLock()
        self._parsed: ParsedFunction | None = None
        self._decls: list[ParamDecl] | None = None
        self._generic: tuple[int, ...] = ()
        self._fixed: list[ParamType | None] = []
        self._specs: dict[tuple, Specialization] = {}
        self._launches: dict[tuple, Any] = {}
        # accelerator -> the native fast path of the entry last launched there (runtime/fast_launch.py)
        self._fast: dict[Any, Any] = {}
        # launched from a launch-index record (lang/launch_index.py) without being parsed: _generic
        # is known, _decls is made when something needs it
        self._indexed = False

    @classmethod
    def from_parsed(cls, parsed: ParsedFunction, debug: bool | None = None, name: str | None = None,
                    fastmath: bool = False, contract: bool = False) -> Kernel:
        """A kernel known only from its AST (``dotcompute check`` without importing the file)."""
        def placeholder() -> None:
            pass

        placeholder.__name__ = parsed.name
        obj = cls(placeholder, debug=debug, name=name, fastmath=fastmath, contract=contract)
        obj._parsed = parsed
        return obj

    # ----------------------------------------------------------------------------- front end

    def parsed(self) -> ParsedFunction:
        if self._parsed is None:
            self._parsed = parse_function(self.pyfunc)
        return self._parsed

    def decls(self) -> list[ParamDecl]:
        if self._decls is None:
            parsed = self.parsed()
            decls = param_decls(parsed)
            if parsed.tree.returns is not None and not (
                    isinstance(parsed.tree.returns, ast.Constant) and parsed.tree.returns.value is None):
                raise parsed.reporter.syntax(parsed.tree.returns, "kernels cannot return a value",
                                             hint="drop the return annotation; write results into a buffer")
            self._fixed = [fixed_type(d) for d in decls]
            self._generic = tuple(i for i, t in enumerate(self._fixed) if t is None)
            self._decls = decls
        return self._decls

    @property
    def is_generic(self) -> bool:
        self.decls()
        return bool(self._generic)

    def _debug_flag(self, debug: bool | None) -> bool:
        if debug is not None:
            return debug
        if self.debug is not None:
            return self.debug
        return config.debug()

    def specialize(self, types: Sequence[ParamType], debug: bool | None = None) -> Specialization:
        """The lowered kernel for parameter types ``types`` (cached; rebuilt if a captured
        module-level or closure constant changed)."""
        dbg = self._debug_flag(debug)
        key = (tuple(types), dbg)
        spec = self._specs.get(key)
        if spec is not None and (not spec.captures or spec.valid()):
            return spec
        with self._lock:
            sig = signature_text(types)
            entry = f"{self.name}_{short_hash(sig + ('|debug' if dbg else ''))}"
            module, captures, debug_files = build_module(self.parsed(), list(types), entry, dbg)
            module.kernel.contract = contracts(self)
            module.kernel.fastmath = bool(self.fastmath)
            spec = Specialization(module, captures, debug_files)
            self._specs[key] = spec
            return spec

    def types_for(self, signature: Sequence[Any] | None = None, args: Sequence[Any] | None = None) -> list[ParamType]:
        """Parameter types from an explicit ``signature``, from example ``args``, or the defaults."""
        decls = self.decls()
        if signature is not None:
            if len(signature) != len(decls):
                raise KernelTypeError(f"{self.name}: the signature has {len(signature)} entries for "
                                      f"{len(decls)} parameters")
            out: list[ParamType] = []
            for i, (d, s) in enumerate(zip(decls, signature, strict=True)):
                fixed = self._fixed[i]
                if fixed is None:
                    out.append(type_from_signature(d, s))
                    continue
                if s is not None and aggregate_type(fixed) is None and getattr(fixed, "elem", None) is None:
                    # an annotated parameter: its entry must name the same type, not be ignored ("float99")
                    given = type_from_signature(d, s)  # raises for an entry that is neither type nor value
                    is_value = isinstance(s, (int, float, complex, np.ndarray, np.generic)) and not isinstance(s, type)
                    if given != fixed and not (is_value and not isinstance(fixed, BufferType)):
                        # (an example number for an annotated scalar converts to it, as at a launch)
                        raise KernelTypeError(f"{self.name}: the signature gives parameter {d.name!r} the type "
                                              f"{given}, but it is annotated {fixed}")
                out.append(fixed)
            return out
        if args is not None:
            return self.types_from_args(tuple(args))
        return [self._fixed[i] or default_param_type(d, self.parsed().tree) for i, d in enumerate(decls)]

    def types_from_args(self, args: tuple[Any, ...]) -> list[ParamType]:
        decls = self.decls()
        if len(args) != len(decls):
            raise KernelTypeError(f"{self.name}() takes {len(decls)} argument(s) "
                                  f"({', '.join(d.name for d in decls)}), got {len(args)}")
        out: list[ParamType] = []
        for i, (d, a) in enumerate(zip(decls, args, strict=False)):
            fixed_agg = self._fixed[i]
            if aggregate_type(fixed_agg) is not None or getattr(fixed_agg, "elem", None) is not None:
                # vectors, matrices, structs and buffers of them: checked by shape (lang/aggargs.py)
                from .aggargs import check_buffer, check_scalar

                if isinstance(fixed_agg, BufferType):
                    check_buffer(self.name, d.name, fixed_agg, a)
                else:
                    check_scalar(self.name, d.name, fixed_agg, a)
                out.append(fixed_agg)
                continue
            t = type_of_argument(a)
            if t is None:
                if hasattr(a, "dtype") and hasattr(a, "shape") and scalar_type(a.dtype) is not None:
                    # a dtype kernels know: the number of dimensions is what is wrong (0-d, or 4-d and more)
                    if len(a.shape) == 0:
                        raise KernelTypeError(f"{self.name}(): argument {d.name!r} is a 0-d array; pass a number "
                                              "(a[()] or a.item()) or an array of 1 to 3 dimensions")
                    raise KernelTypeError(f"{self.name}(): argument {d.name!r} is a {len(a.shape)}-d array; kernel "
                                          "buffers have 1 to 3 dimensions")
                if hasattr(a, "dtype") and hasattr(a, "shape"):  # an array of a dtype kernels lack (object)
                    raise KernelTypeError(f"{self.name}(): argument {d.name!r} has dtype {a.dtype}, which kernels "
                                          "cannot compute with yet")
                raise KernelTypeError(f"{self.name}(): argument {d.name!r} must be a dc.Buffer, a numpy array or "
                                      f"a number, not {type(a).__name__}")
            fixed = self._fixed[i]
            if fixed is None:
                if isinstance(d.spec, BufferAnnotation) and not isinstance(t, BufferType):
                    raise KernelTypeError(f"{self.name}(): parameter {d.name!r} expects a buffer, got a number")
                if isinstance(d.spec, BufferAnnotation) and isinstance(t, BufferType):
                    if d.spec.dtype is not None and d.spec.dtype != t.dtype:
                        raise KernelTypeError(f"{self.name}(): parameter {d.name!r} expects {d.spec.dtype} "
                                              f"elements, got {t.dtype}")
                    if d.spec.ndim is not None and d.spec.ndim != t.ndim:
                        raise KernelTypeError(f"{self.name}(): parameter {d.name!r} expects {d.spec.ndim} "
                                              f"dimension(s), got {t.ndim}")
                out.append(t)
            else:
                check_argument(self.name, d, fixed, t)
                out.append(fixed)
        return out

    def ir(self, *args: Any, signature: Sequence[Any] | None = None, debug: bool | None = None) -> ir.Module:
        """The typed IR of one specialisation (see :meth:`source` for the arguments)."""
        types = self.types_for(signature, args if args else None)
        return self.specialize(types, debug).module

    def source(self, backend: str = "cpu", *args: Any, signature: Sequence[Any] | None = None,
               debug: bool | None = None) -> str:
        """The generated source for ``backend`` ("cpu", "cuda", "opencl", "metal"); needs no device.

        Generic kernels are specialised from example ``args`` (arrays and numbers), or an
        explicit ``signature`` (one entry per parameter: a dtype, ``dc.Buffer[dtype, ndim]``,
        or an example value), or else default types (buffers float32, numbers int64).
        """
        types = self.types_for(signature, args if args else None)
        return self.specialize(types, debug).emit(backend).text

    def check(self) -> None:
        """Parse, type-check and lower the kernel; raise the first problem.

        A generic kernel is checked with its default specialisation; when that fails with a type
        error, integer and float64 buffers are tried too (a kernel written for int buffers is not
        wrong because float32 ones would not fit it), and the first error is raised if none works.
        """
        types = self.types_for()
        try:
            self.specialize(types, debug=False)
        except KernelTypeError as first:
            generic_buffers = [i for i in self._generic if isinstance(types[i], BufferType)]
            if not generic_buffers:
                raise
            for dtype in (INT32, FLOAT64, INT64, UINT32, BOOL):
                alt = list(types)
                for i in generic_buffers:
                    spec = self.decls()[i].spec
                    if isinstance(spec, BufferAnnotation) and spec.dtype is not None:
                        continue
                    alt[i] = BufferType(dtype, types[i].ndim)  # type: ignore[union-attr]
                try:
                    self.specialize(alt, debug=False)
                    return
                except KernelTypeError:
                    continue
            raise first from None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"a kernel is not called directly; launch it with dc.launch({self.name}, global_size, *args)")

    def __repr__(self) -> str:
        return f"<dc.kernel {self.name}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # by value (source, captured constants, options); see pickling.py
        return reduce_by_value(self, {"debug": self.debug, "name": self.name, "fastmath": self.fastmath,
                                      "contract": self.contract,
                                      "check": self.check_spec.text() if self.check_spec is not None else None})

    # ----------------------------------------------------------------------------- launch

    # (acc, global_size, local_size, args, stream): launch_kernel itself, so a launch makes one call here
    _dc_launch = launch_kernel

    def _dc_checked(self, check: Any) -> Any:
        """The launch runner for ``dc.launch(..., check=check)`` (False/"off": no checks, even the kernel's)."""
        spec = parse_check(check, "check")
        if spec is None:
            return functools.partial(launch_kernel, self)
        return functools.partial(checked_launch, self, spec)


# ---------------------------------------------------------------------------------------------
# parameter types


def fixed_type(d: ParamDecl) -> ParamType | None:
    if isinstance(d.spec, ScalarType):
        return d.spec
    if aggregate_type(d.spec) is not None:
        return d.spec  # type: ignore[return-value]
    if isinstance(d.spec, BufferAnnotation) and not d.spec.generic:
        return d.spec.resolve()
    return None


def type_of_argument(a: Any) -> ParamType | None:
    """The kernel type an argument gives a generic parameter."""
    if isinstance(a, (bool, np.bool_)):
        return BOOL
    if isinstance(a, int):
        # as np.asarray(a) types it: int64, or uint64 for 2**63 .. 2**64-1 (larger ones fail the range check)
        return UINT64 if 2**63 <= a < 2**64 else INT64
    if isinstance(a, float):
        return FLOAT64
    if isinstance(a, complex):
        return COMPLEX128
    if isinstance(a, np.generic):
        return scalar_type(a.dtype)
    dtype = getattr(a, "dtype", None)
    shape = getattr(a, "shape", None)
    if dtype is not None and shape is not None:
        st = scalar_type(dtype)
        if st is None or not 1 <= len(shape) <= 3:
            return None
        return BufferType(st, len(shape))
    return None


def check_argument(kernel: str, d: ParamDecl, fixed: ParamType, got: ParamType) -> None:
    if isinstance(fixed, BufferType):
        if not isinstance(got, BufferType):
            raise KernelTypeError(f"{kernel}(): parameter {d.name!r} expects a {fixed}, got a number")
        if got.dtype != fixed.dtype:
            raise KernelTypeError(f"{kernel}(): parameter {d.name!r} expects {fixed.dtype} elements, got {got.dtype}")
        if got.ndim != fixed.ndim:
            raise KernelTypeError(f"{kernel}(): parameter {d.name!r} expects {fixed.ndim} dimension(s), "
                                  f"got {got.ndim}")
        return
    if isinstance(got, BufferType):
        raise KernelTypeError(f"{kernel}(): parameter {d.name!r} expects a {fixed} number, got an array")
    if fixed.is_int and got.is_float:
        raise KernelTypeError(f"{kernel}(): parameter {d.name!r} expects {fixed}, got a float")
    if got.is_complex and not fixed.is_complex:
        raise KernelTypeError(f"{kernel}(): parameter {d.name!r} expects {fixed}, got a complex number "
                              "(pass z.real, z.imag or abs(z))")
    if fixed.is_bool and not got.is_bool:
        raise KernelTypeError(f"{kernel}(): parameter {d.name!r} expects a bool, got {got}")


def type_from_signature(d: ParamDecl, s: Any) -> ParamType:
    if aggregate_type(s) is not None:
        return s
    if isinstance(s, BufferAnnotation):
        return s.resolve(FLOAT32, 1)
    if isinstance(s, BufferType):
        return s
    if is_buffer_class(s):
        return BufferType(FLOAT32, 1)
    if isinstance(s, tuple) and len(s) == 2:
        st = scalar_type(s[0])
        if st is not None and isinstance(s[1], int):
            return BufferType(st, s[1])
    st = scalar_type(s) if isinstance(s, (type, np.dtype, str, ScalarType)) else None
    if st is not None:
        if isinstance(d.spec, BufferAnnotation):
            return BufferType(st, d.spec.ndim or 1)
        return st
    t = type_of_argument(s)
    if t is None:
        raise KernelTypeError(f"signature entry for {d.name!r} is not a type or an example value: {s!r}")
    return t


def default_param_type(d: ParamDecl, tree: ast.FunctionDef) -> ParamType:
    """The default specialisation of a generic parameter (``check`` and ``source()`` without args)."""
    if isinstance(d.spec, ScalarType) or aggregate_type(d.spec) is not None:
        return d.spec  # type: ignore[return-value]
    if isinstance(d.spec, BufferAnnotation) and not d.spec.generic:
        return d.spec.resolve()
    used_as_array, ndim = array_usage(tree, d.name)
    if isinstance(d.spec, BufferAnnotation) or used_as_array:
        spec = d.spec if isinstance(d.spec, BufferAnnotation) else BufferAnnotation(None, None)
        return BufferType(spec.dtype or FLOAT32, spec.ndim or ndim)
    return INT64


def array_usage(tree: ast.FunctionDef, name: str) -> tuple[bool, int]:
    """Whether ``name`` is indexed or has ``.shape`` in ``tree``, and the most dimensions used."""
    used = False
    ndim = 1
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
            used = True
            if isinstance(node.slice, ast.Tuple):
                ndim = max(ndim, len(node.slice.elts))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
                and node.attr in ("shape", "size", "ndim"):
            used = True
        elif isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in node.args[:1]):
            fn = node.func
            fname = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if fname.startswith("atomic_") or fname == "len":
                used = True
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == name:
            ndim = max(ndim, min(3, len(node.targets[0].elts)))  # n, m = a.shape
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == name \
                and node.value.attr == "shape" and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, int) and node.slice.value >= 0:
            ndim = max(ndim, min(3, node.slice.value + 1))
    return used, ndim


# ---------------------------------------------------------------------------------------------
# decorators


def kernel(fn: Callable[..., Any] | None = None, *, debug: bool | None = None,
           name: str | None = None, source: str | None = None, namespace: dict[str, Any] | None = None,
           fastmath: bool = False, contract: bool = False, check: Any = None) -> Any:
    """``@dc.kernel`` or ``@dc.kernel(debug=True, name="entry", fastmath=True)``; ``dc.kernel(source=text)``
    builds the kernel from the text of its ``def`` where Python keeps no source (``python -c``, stdin, a
    REPL before 3.13), its names resolving in ``namespace`` (default: the calling module's globals).
    ``fastmath=True`` lets the backend compiler trade IEEE results for speed; ``contract=True`` only lets it
    fuse ``a*b+c`` into one FMA (lang/compile_options.py). By default results are numpy's, bit for bit.
    ``check="memcheck,racecheck,synccheck,initcheck"`` (or ``"all"``, ``":warn"`` to log) checks every launch
    (lang/check, docs/kernel-safety.md)."""
    opts = {"debug": debug, "name": name, "fastmath": fastmath, "contract": contract, "check": check}
    if source is not None:
        return Kernel(_from_source("dc.kernel", fn, source, namespace), **opts)
    if fn is None:
        return lambda f: Kernel(f, **opts)
    return Kernel(fn, **opts)



def func(fn: Callable[..., Any] | None = None, *, source: str | None = None,
         namespace: dict[str, Any] | None = None) -> Any:
    """``@dc.func``: a device function callable from kernels and other device functions;
    ``dc.func(source=text)`` as for :func:`kernel`."""
    if source is not None:
        return DeviceFunction(_from_source("dc.func", fn, source, namespace))
    if fn is None:
        return lambda f: DeviceFunction(f)
    return DeviceFunction(fn)


def _from_source(what: str, fn: Any, source: str, namespace: dict[str, Any] | None) -> Callable[..., Any]:
    from .frontend.source_text import function_from_source

    if fn is not None:
        raise TypeError(f"{what}: pass a function or source=..., not both")
    if namespace is None:
        # the module that called dc.kernel / dc.func (two frames up: this helper, then kernel()/func())
        namespace = sys._getframe(2).f_globals
    return function_from_source(source, namespace, what)


__all__ = ["Kernel", "DeviceFunction", "Specialization", "kernel", "func", "type_of_argument",
           "default_param_type"]
