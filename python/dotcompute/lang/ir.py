"""The typed IR of the kernel language: the single source of truth that every emitter prints.

The frontend (``dotcompute.lang.frontend``) builds one :class:`Module` per kernel
specialisation: the kernel, plus every device function it calls (transitively),
each specialised for the argument types it is called with. Emitters
(``dotcompute.lang.emit``) only print it; they never re-derive types.

Invariants emitters can rely on
-------------------------------

Types and conversions

* Every expression has a resolved ``type``: a :class:`~dotcompute.lang.types.ScalarType`
  (bool, int8 … uint64, float16, float32, float64, complex64, complex128), except
  :class:`BufferArg` whose type is the buffer's. Types are singletons: compare with ``==``.
* float16 is a storage type: emitters compute it in float32 and round every float16-typed
  result (BinOp, Cast, MathCall) back to half, as numpy does; float16 Consts are already
  half values. 8/16-bit integer results wrap to their type.
* Complex values only meet ``+ - * /`` (BinOp), ``-`` (UnaryOp), ``== !=`` (Compare), Casts
  from any number or complex, and MathCalls ``abs`` (real result), ``conj``, ``exp``,
  ``sqrt``, ``real``, ``imag`` (real results); ``**`` was expanded into products.
* Every implicit conversion is an explicit :class:`Cast`. In particular:
  - :class:`BinOp` ``left.type == right.type == type`` for ``+ - * / // % & | ^ << >>``,
    except: ``/`` (``TrueDiv``) always has float operands and result (ints were cast);
    ``**`` (``Pow``) may have a float ``left`` and an *integer* ``right`` (exponent kept
    integral so ``x ** 2`` can be ``x * x``); otherwise ``**`` operands equal the result.
    Bitwise ops and shifts only see int or bool operands; ``&``/``|``/``^`` on bools yield bool.
  - :class:`Compare` operands have equal types; its type is bool.
  - Conditions of :class:`If`, :class:`While`, :class:`IfExp`, operands of :class:`BoolOp`
    and of ``not`` are bool (truth tests of numbers were lowered to ``x != 0``).
  - :class:`IfExp` ``then.type == orelse.type == type``.
  - Values of :class:`Assign`, :class:`BufferStore`, :class:`AtomicOp`, :class:`Return`,
    and :class:`Call` arguments already have the target's exact type.
  - Every buffer/shared index is int64 (``types.INDEX``); there is one index per dimension.
* Python semantics are flagged by the operator, never approximated by the frontend:
  ``FloorDiv`` and ``Mod`` floor toward negative infinity (ints and floats; ``Mod``'s result
  has the divisor's sign), ``TrueDiv`` is true division, ``Pow`` is Python's ``**`` (an int
  base with an int exponent gives an int; a negative run-time int exponent gives
  ``1``/``±1``/``0`` for bases ``1``/``-1``/other, as in docs/kernel-language.md). Integer
  arithmetic wraps (two's complement): emitters must avoid C's signed-overflow UB.
  Integer ``//`` and ``%`` by zero give 0. Shifts: a count ``>= bits`` gives 0 for ``<<``
  and for ``>>`` of non-negative values, -1 for ``>>`` of negative signed values; a negative
  count gives 0.
* ``MathCall`` names are the ones in :data:`MATH_FUNCTIONS`; its arguments have the
  types stated there (all casts inserted). ``min``/``max``/``abs`` take ints or floats;
  ``abs`` of the most negative int wraps to itself. ``bitcast``'s argument and result are two
  32-bit or two 64-bit int/uint/float types (the bits are reinterpreted, never converted).

Structure

* Chained comparisons are lowered to ``BoolOp('and', ...)`` of pairwise :class:`Compare`;
  a middle operand that is not a plain :class:`Var`/:class:`Const` is evaluated once via
  :class:`Bind` (``(tmp = value)`` in C) on its first use, and read back as ``Var(tmp)``.
  ``and``/``or`` on non-bool values (Python returns an operand) are lowered to
  :class:`IfExp` + :class:`Bind`. So an expression never needs statements hoisted out.
* Every local variable, including loop variables and compiler temporaries, is listed in
  ``Function.locals`` with one fixed type. Emitters declare them all at function entry,
  zero-initialised (this is also where the CPU emitter's loop fission finds them).
* Names (params, locals, shared arrays, functions) are valid, unique identifiers in every
  target language (C++/CUDA/OpenCL C/MSL keywords and the ``dc_`` prefix avoided).
  ``py_name`` keeps the Python spelling for messages.
* :class:`For` is Python's ``for var in range(start, stop, step)``: ``start``, ``stop`` and
  ``step`` are each a :class:`Const` or a :class:`Var` (evaluated once, before the loop,
  by preceding :class:`Assign` s into temporaries), all of the loop's ``counter``/``var``
  type. ``step_sign`` is +1 / -1 when the step is a constant, 0 when only known at run time
  (then the direction is chosen by the sign; a zero step runs no iteration). The hidden
  ``counter`` local drives the loop; ``var`` is assigned ``counter`` at the start of each
  iteration (so writes to ``var`` in the body do not change the iteration, and after the
  loop ``var`` keeps the last value, as in Python).
* ``SharedDecl`` s appear only in ``Kernel.shared`` (hoisted to kernel scope, shape
  constant), never in statement lists. Device functions never touch shared arrays.
* :class:`Barrier` appears only in kernels (not device functions), at any nesting, and
  ``Kernel.uses_barrier`` says whether there is one.
* A kernel's :class:`Return` has no value. A device function with a return type ends in a
  statement that returns on every path (the frontend appends ``return 0`` when needed).
* ``Module.functions`` is ordered callees-first; there is no recursion. A :class:`Call`
  names a function of the same module by its ``name``.
* Buffer parameters know whether the function reads/writes them (``Param.read``/``written``,
  through called device functions too). Atomics count as both.
* Every node has ``loc``: the absolute line (1-based) and column (1-based) in the user's
  Python file; ``Kernel.filename`` names the file. In debug mode (``Kernel.debug``) each
  :class:`BufferLoad` / :class:`BufferStore` / :class:`AtomicOp` on a *global* buffer is
  bounds-checked by the emitter, which writes ``[1, ref.debug_id, flat_index, loc.line]``
  into the trailing int64 debug buffer (first violation wins); ``Module.debug_names`` maps a
  ``debug_id`` to a description for the error message. Device functions taking buffers get
  the debug buffer as a hidden trailing parameter when ``debug`` is on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from .types import BOOL, INDEX, BufferType, ScalarType, SharedType, Type, VoidType


@dataclass(frozen=True)
class Loc:
    """A position in the user's Python file: absolute 1-based line and 1-based column."""

    line: int
    col: int = 1


NOWHERE = Loc(0, 0)


@dataclass(kw_only=True, eq=False)
class Node:
    loc: Loc = NOWHERE


# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass(kw_only=True, eq=False)
class Param(Node):
    """A parameter. ``type`` is a ScalarType or a BufferType. ``index`` is its position in the
    Python signature (the expanded ABI of docs/design.md follows from the order)."""

    name: str
    py_name: str
    type: ScalarType | BufferType
    index: int
    read: bool = False
    written: bool = False
    #: a device-function parameter given a run-time Python number: its reads are weak (NEP 50)
    weak: bool = False

    @property
    def is_buffer(self) -> bool:
        return isinstance(self.type, BufferType)


@dataclass(kw_only=True, eq=False)
class LocalVar(Node):
    name: str
    py_name: str
    type: ScalarType
    #: first assigned a Python number (a work-item id, a range() variable, a literal, ...): its reads
    #: are weak in promotion (NEP 50), see :class:`Expr`
    weak: bool = False


@dataclass(kw_only=True, eq=False)
class SharedDecl(Node):
    """``name = dc.shared(shape, dtype)``: a work-group array, hoisted to kernel scope."""

    name: str
    py_name: str
    dtype: ScalarType
    shape: tuple[int, ...]

    @property
    def type(self) -> SharedType:
        return SharedType(self.dtype, self.shape)


@dataclass(frozen=True)
class BufferRef:
    """Which array an access touches. ``space`` is ``"global"`` (a buffer parameter, whose
    extents are the ABI's int64 extent arguments) or ``"shared"`` (a :class:`SharedDecl`,
    whose ``shape`` is constant). ``param_index`` is the parameter's index in its function
    (global only). ``debug_id`` is what debug mode reports (a kernel parameter's own index;
    other ids are listed in ``Module.debug_names``)."""

    name: str
    py_name: str
    space: str
    dtype: ScalarType
    ndim: int
    shape: tuple[int, ...] | None = None
    param_index: int | None = None
    debug_id: int = -1
    #: a buffer of structs (``dc.Buffer[Particle]``, lang/vectypes.py StructType): its elements are
    #: C structs; ``ndim`` counts the struct elements' dimensions and every access names a scalar
    #: leaf by ``member``. ``dtype`` is then uint8 (the memory is passed as bytes).
    struct: Any = None
    #: trailing extents known at compile time (a ``Buffer[dc.vec3]``'s last extent is 3): emitters
    #: may use these constants instead of the extent arguments (the launch has checked they agree)
    fixed_extents: tuple[int, ...] = ()


# ---------------------------------------------------------------------------------------------
# Expressions


@dataclass(kw_only=True, eq=False)
class Expr(Node):
    """``weak``: the value is a Python number when the kernel body runs as Python (a work-item id,
    a ``range()`` variable, ``len()``/``shape``, ``math.floor()``/``int()``/``float()`` results,
    arithmetic on those), so it takes the other operand's float type in promotion, as NEP 50 has
    it. A frontend flag: emitters ignore it (``type`` is what the value is stored as)."""

    type: ScalarType
    weak: bool = False


@dataclass(kw_only=True, eq=False)
class Const(Expr):
    """A constant of exactly ``type``: a Python bool, int (already wrapped to the type's range)
    or float (possibly inf/nan). ``weak`` marks a Python literal (its value adapts to the other
    operand's type, fold.py folds two of them)."""

    value: bool | int | float


@dataclass(kw_only=True, eq=False)
class Var(Expr):
    """A read of a local or scalar parameter, by its IR ``name``."""

    name: str


@dataclass(kw_only=True, eq=False)
class Bind(Expr):
    """Evaluate ``value``, store it into the local ``name`` and yield it (``(name = value)``)."""

    name: str
    value: Expr


BINOPS = ("Add", "Sub", "Mult", "TrueDiv", "FloorDiv", "Mod", "Pow",
          "LShift", "RShift", "BitAnd", "BitOr", "BitXor")


@dataclass(kw_only=True, eq=False)
class BinOp(Expr):
    """``op`` is one of :data:`BINOPS` (Python ``ast`` operator names); see the invariants."""

    op: str
    left: Expr
    right: Expr


UNARYOPS = ("USub", "Not", "Invert")


@dataclass(kw_only=True, eq=False)
class UnaryOp(Expr):
    """``USub`` (wraps for ints), ``Not`` (bool → bool), ``Invert`` (``~`` on ints)."""

    op: str
    operand: Expr


CMPOPS = ("Eq", "NotEq", "Lt", "LtE", "Gt", "GtE")


@dataclass(kw_only=True, eq=False)
class Compare(Expr):
    """One comparison (chains are already lowered); ``type`` is bool. Float comparisons follow
    IEEE (NaN compares unequal). Mixed-sign comparisons cannot occur (operands are equal types)."""

    op: str
    left: Expr
    right: Expr


@dataclass(kw_only=True, eq=False)
class BoolOp(Expr):
    """Short-circuit ``and``/``or`` over two or more bool operands, left to right."""

    op: str  # "and" | "or"
    values: list[Expr]


@dataclass(kw_only=True, eq=False)
class IfExp(Expr):
    """``then if cond else orelse``: only the chosen branch is evaluated."""

    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(kw_only=True, eq=False)
class Cast(Expr):
    """Convert ``value`` to ``type``. Int → narrower int wraps; float → int truncates toward
    zero (out of range: unspecified); number → bool is ``!= 0``; bool → number is 0/1."""

    value: Expr


@dataclass(kw_only=True, eq=False)
class Call(Expr):
    """A call of the device function ``func`` (a ``Function.name`` of this module). ``type`` is
    the function's return type; for a void function the call only appears in an ExprStmt and
    its ``type`` is bool (ignored)."""

    func: str
    args: list[ExprLike]
    void: bool = False


#: name → (number of arguments, argument kinds, result). Kinds: "f" every argument is the
#: result's float type; "n" every argument is the result's (int or float) type; "f->b" float
#: arguments, bool result; "f,i" a float then an int32 (ldexp).
MATH_FUNCTIONS: dict[str, tuple[int, str]] = {
    "sqrt": (1, "f"), "rsqrt": (1, "f"), "cbrt": (1, "f"),
    "exp": (1, "f"), "exp2": (1, "f"), "expm1": (1, "f"),
    "log": (1, "f"), "log2": (1, "f"), "log10": (1, "f"), "log1p": (1, "f"),
    "sin": (1, "f"), "cos": (1, "f"), "tan": (1, "f"),
    "asin": (1, "f"), "acos": (1, "f"), "atan": (1, "f"),
    "sinh": (1, "f"), "cosh": (1, "f"), "tanh": (1, "f"),
    "asinh": (1, "f"), "acosh": (1, "f"), "atanh": (1, "f"),
    "erf": (1, "f"), "erfc": (1, "f"), "lgamma": (1, "f"), "tgamma": (1, "f"),
    "floor": (1, "f"), "ceil": (1, "f"), "trunc": (1, "f"), "round": (1, "f"),
    "fabs": (1, "f"),
    "atan2": (2, "f"), "pow": (2, "f"), "hypot": (2, "f"), "fmod": (2, "f"),
    "copysign": (2, "f"), "fmin": (2, "f"), "fmax": (2, "f"),
    "isnan": (1, "f->b"), "isinf": (1, "f->b"), "isfinite": (1, "f->b"),
    "min": (2, "n"), "max": (2, "n"), "abs": (1, "n"),
    "conj": (1, "c"), "real": (1, "c"), "imag": (1, "c"),
    "complex": (2, "r->c"),
    "bitcast": (1, "bits"),
}
# complex(re, im): two values of the complex type's real type give the complex value (how a complex
# scalar parameter, passed as its two parts, is put together; no rounding, no 0 * inf).
# complex: "exp", "sqrt" and "conj" take and give the complex type; "abs", "real", "imag" take a
# complex and give its real type (``ScalarType.real_type``).
# round: Python's round-half-to-even (math ``rint``), returning the float type; the frontend
# adds the int conversion for Python's ``round(x)``.
# fmod: C's fmod (sign of the dividend), unlike ``%``.
# bitcast: ``dc.bitcast(x, dtype)``, the argument's bits read as the result type (numpy's ``.view``):
# argument and result are each int32, uint32 or float32, or each int64, uint64 or float64 (one size,
# never bool, float16 or complex); no value conversion, NaN payloads and -0.0 kept.


@dataclass(kw_only=True, eq=False)
class MathCall(Expr):
    """A math function from :data:`MATH_FUNCTIONS`, e.g. ``MathCall(name="sqrt", args=[x])``."""

    name: str
    args: list[Expr]


BUILTIN_IDS = ("global_id", "local_id", "group_id", "global_size", "local_size", "num_groups")


@dataclass(kw_only=True, eq=False)
class BuiltinId(Expr):
    """``dc.global_id(dim)`` and friends; ``dim`` is 0, 1 or 2; ``type`` is int64."""

    kind: str
    dim: int


SUBGROUP_QUERIES = ("size", "local_id", "id", "count")
SUBGROUP_COLLECTIVES = ("sum", "min", "max", "shuffle", "exclusive_sum")


@dataclass(kw_only=True, eq=False)
class SubgroupOp(Expr):
    """``dc.subgroup_size()`` and friends (``op`` in SUBGROUP_QUERIES: no ``value``, int64) or a
    sub-group collective (``op`` in SUBGROUP_COLLECTIVES: ``value``'s type is the result type;
    ``shuffle`` also has an int64 ``lane``). Only in kernels, never inside a ``while`` condition,
    an ``IfExp`` or a ``BoolOp`` operand (every item of the group must evaluate it); a kernel that
    has one has ``uses_subgroups`` and ``uses_barrier`` set (it runs whole work-groups)."""

    op: str
    value: Expr | None = None
    lane: Expr | None = None


@dataclass(kw_only=True, eq=False)
class BufferLoad(Expr):
    """``buffer[i0, i1, ...]`` (row-major); ``type`` is the element dtype. For a struct buffer,
    ``member`` is the path of the scalar leaf read (field names, then vector/matrix element
    indices: ``("pos", 1)`` is ``.pos[1]``) and ``type`` is that leaf's type."""

    buffer: BufferRef
    indices: list[Expr]
    member: tuple = ()


@dataclass(kw_only=True, eq=False)
class Shape(Expr):
    """``buffer.shape[dim]`` of a global buffer (shared shapes are folded to Const); int64."""

    buffer: BufferRef
    dim: int


ATOMIC_OPS = ("add", "sub", "min", "max", "exchange", "cas")


@dataclass(kw_only=True, eq=False)
class AtomicOp(Expr):
    """Atomically update ``buffer[indices]`` and yield the old value (``type`` = dtype).

    ``cas``: if the element equals ``compare`` store ``value``. Float add/sub/min/max and cas
    on floats must be realised with a compare-and-swap loop where the target lacks them."""

    op: str
    buffer: BufferRef
    indices: list[Expr]
    value: Expr
    compare: Expr | None = None


@dataclass(kw_only=True, eq=False)
class BufferArg(Node):
    """A global buffer passed whole to a device function's buffer parameter."""

    buffer: BufferRef

    @property
    def type(self) -> BufferType:
        return BufferType(self.buffer.dtype, self.buffer.ndim)


ExprLike = Expr | BufferArg


# ---------------------------------------------------------------------------------------------
# Statements


@dataclass(kw_only=True, eq=False)
class Stmt(Node):
    pass


@dataclass(kw_only=True, eq=False)
class Assign(Stmt):
    """``name = value`` (augmented assignments are lowered to this, with the target read once)."""

    name: str
    value: Expr


@dataclass(kw_only=True, eq=False)
class BufferStore(Stmt):
    """``buffer[indices] = value``; ``member`` as in :class:`BufferLoad` (struct buffers)."""

    buffer: BufferRef
    indices: list[Expr]
    value: Expr
    member: tuple = ()


@dataclass(kw_only=True, eq=False)
class If(Stmt):
    cond: Expr
    then: list[Stmt]
    orelse: list[Stmt] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class For(Stmt):
    """``for var in range(start, stop, step)``; see the invariants in the module docstring."""

    var: str
    counter: str
    start: Expr
    stop: Expr
    step: Expr
    step_sign: int
    body: list[Stmt]


@dataclass(kw_only=True, eq=False)
class While(Stmt):
    cond: Expr
    body: list[Stmt]


@dataclass(kw_only=True, eq=False)
class Break(Stmt):
    pass


@dataclass(kw_only=True, eq=False)
class Continue(Stmt):
    pass


@dataclass(kw_only=True, eq=False)
class Return(Stmt):
    value: Expr | None = None


@dataclass(kw_only=True, eq=False)
class ExprStmt(Stmt):
    """An expression evaluated for its effect: a Call or an AtomicOp whose result is unused."""

    value: Expr


@dataclass(kw_only=True, eq=False)
class Barrier(Stmt):
    """``dc.barrier()``: work-group execution and memory barrier (global and shared memory);
    ``grid=True``: ``dc.grid_barrier()``, the same for every work-item of the launch (CUDA only)."""

    grid: bool = False


# ---------------------------------------------------------------------------------------------
# Functions and modules


@dataclass(kw_only=True, eq=False)
class Function(Node):
    """A device function (``@dc.func``) specialised for one set of parameter types."""

    name: str
    py_name: str
    params: list[Param]
    return_type: ScalarType | VoidType
    body: list[Stmt]
    locals: list[LocalVar] = field(default_factory=list)
    filename: str = "<unknown>"

    @property
    def buffers(self) -> list[Param]:
        return [p for p in self.params if p.is_buffer]


@dataclass(kw_only=True, eq=False)
class Kernel(Function):
    """A kernel specialisation. ``name`` is the entry point (Python name + specialisation suffix)."""

    shared: list[SharedDecl] = field(default_factory=list)
    debug: bool = False
    #: ``fastmath`` or ``contract``: the target may fuse ``a*b+c`` (OpenCL prints FP_CONTRACT ON, else OFF)
    contract: bool = False
    #: ``@dc.kernel(fastmath=True)``: the CPU emitter lets GCC approximate division and square roots too
    fastmath: bool = False
    uses_barrier: bool = False
    #: ``dc.grid_barrier()``: launched cooperatively (CUDA); ``uses_barrier`` is set too (whole groups)
    uses_grid_barrier: bool = False
    uses_atomics: bool = False
    uses_subgroups: bool = False
    signature: str = ""


@dataclass(kw_only=True, eq=False)
class Module(Node):
    """What an emitter prints: one kernel and the device functions it needs (callees first)."""

    kernel: Kernel
    functions: list[Function] = field(default_factory=list)
    debug_names: dict[int, str] = field(default_factory=dict)

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------
# Helpers


def children(node: Node) -> Iterator[Node]:
    """The direct child nodes of ``node`` in source order (declarations included)."""
    for f in fields(node):
        if f.name == "loc":
            continue
        value = getattr(node, f.name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Node):
                    yield item


def walk(node: Node) -> Iterator[Node]:
    """``node`` and every node below it, depth first, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(children(n))))


def const(value: bool | int | float, type: ScalarType, loc: Loc = NOWHERE) -> Const:
    return Const(value=value, type=type, loc=loc)


def index_const(value: int, loc: Loc = NOWHERE) -> Const:
    return Const(value=value, type=INDEX, loc=loc)


def is_bool(e: Expr) -> bool:
    return e.type == BOOL


def format_expr(e: Node) -> str:
    """A compact Python-like rendering of an expression, for dumps and tests."""
    if isinstance(e, Const):
        return f"{e.value!r}:{e.type}"
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Bind):
        return f"({e.name} := {format_expr(e.value)})"
    if isinstance(e, BinOp):
        return f"({format_expr(e.left)} {e.op} {format_expr(e.right)}):{e.type}"
    if isinstance(e, UnaryOp):
        return f"({e.op} {format_expr(e.operand)})"
    if isinstance(e, Compare):
        return f"({format_expr(e.left)} {e.op} {format_expr(e.right)})"
    if isinstance(e, BoolOp):
        return "(" + f" {e.op} ".join(format_expr(v) for v in e.values) + ")"
    if isinstance(e, IfExp):
        return f"({format_expr(e.then)} if {format_expr(e.cond)} else {format_expr(e.orelse)})"
    if isinstance(e, Cast):
        return f"{e.type}({format_expr(e.value)})"
    if isinstance(e, Call):
        return f"{e.func}(" + ", ".join(format_expr(a) for a in e.args) + ")"
    if isinstance(e, MathCall):
        return f"{e.name}(" + ", ".join(format_expr(a) for a in e.args) + f"):{e.type}"
    if isinstance(e, BuiltinId):
        return f"{e.kind}({e.dim})"
    if isinstance(e, BufferLoad):
        member = "".join(f".{m}" for m in e.member)
        return f"{e.buffer.name}[" + ", ".join(format_expr(i) for i in e.indices) + "]" + member
    if isinstance(e, Shape):
        return f"{e.buffer.name}.shape[{e.dim}]"
    if isinstance(e, AtomicOp):
        extra = f", {format_expr(e.compare)}" if e.compare is not None else ""
        idx = ", ".join(format_expr(i) for i in e.indices)
        return f"atomic_{e.op}({e.buffer.name}[{idx}]{extra}, {format_expr(e.value)})"
    if isinstance(e, BufferArg):
        return e.buffer.name
    return type(e).__name__


def format_stmts(stmts: list[Stmt], indent: str = "") -> list[str]:
    out: list[str] = []
    for s in stmts:
        if isinstance(s, Assign):
            out.append(f"{indent}{s.name} = {format_expr(s.value)}")
        elif isinstance(s, BufferStore):
            idx = ", ".join(format_expr(i) for i in s.indices)
            member = "".join(f".{m}" for m in s.member)
            out.append(f"{indent}{s.buffer.name}[{idx}]{member} = {format_expr(s.value)}")
        elif isinstance(s, If):
            out.append(f"{indent}if {format_expr(s.cond)}:")
            out += format_stmts(s.then, indent + "  ")
            if s.orelse:
                out.append(f"{indent}else:")
                out += format_stmts(s.orelse, indent + "  ")
        elif isinstance(s, For):
            out.append(f"{indent}for {s.var} in range({format_expr(s.start)}, {format_expr(s.stop)}, "
                       f"{format_expr(s.step)}):")
            out += format_stmts(s.body, indent + "  ")
        elif isinstance(s, While):
            out.append(f"{indent}while {format_expr(s.cond)}:")
            out += format_stmts(s.body, indent + "  ")
        elif isinstance(s, Return):
            out.append(f"{indent}return" + (f" {format_expr(s.value)}" if s.value is not None else ""))
        elif isinstance(s, ExprStmt):
            out.append(f"{indent}{format_expr(s.value)}")
        else:
            out.append(f"{indent}{type(s).__name__.lower()}")
    return out


def format_module(m: Module) -> str:
    """A readable dump of a module (tests and ``DOTCOMPUTE_LOG=debug`` use it)."""
    lines: list[str] = []
    for f in [*m.functions, m.kernel]:
        kind = "kernel" if isinstance(f, Kernel) else "func"
        params = ", ".join(f"{p.name}: {p.type}{' w' if p.written else ''}{' r' if p.read else ''}"
                           for p in f.params)
        lines.append(f"{kind} {f.name}({params}) -> {f.return_type}:")
        for v in f.locals:
            lines.append(f"  local {v.name}: {v.type}")
        if isinstance(f, Kernel):
            for s in f.shared:
                lines.append(f"  shared {s.name}: {s.dtype}{list(s.shape)}")
        lines += format_stmts(f.body, "  ")
    return "\n".join(lines)


IRType = Type
