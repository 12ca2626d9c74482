"""Kernels outside the language. Each offending line carries `# expect: <ErrorClass>`; the
test finds the kernel by name and checks the class and the reported line."""

import math  # noqa: F401

import numpy as np

import dotcompute as dc

COUNTER = 0


def plain_helper(x):
    return x + 1


@dc.func
def recurse(n: dc.int64) -> dc.int64:
    if n <= 1:
        return 1
    return n * recurse(n - 1)  # expect: KernelSyntaxError


@dc.func
def ping(n: dc.int64) -> dc.int64:
    return pong(n)


@dc.func
def pong(n: dc.int64) -> dc.int64:
    return ping(n)  # expect: KernelSyntaxError


@dc.func
def no_value(x: dc.float32):
    x2 = x * 2  # noqa: F841


@dc.kernel
def k_list(a: dc.Buffer[dc.float32]):
    xs = [1.0, 2.0]  # expect: KernelSyntaxError
    a[0] = xs[0]


@dc.kernel
def k_dict(a: dc.Buffer[dc.float32]):
    a[0] = {1: 2}[1]  # expect: KernelSyntaxError


@dc.kernel
def k_listcomp(a: dc.Buffer[dc.float32]):
    a[0] = sum([i for i in range(3)])  # expect: KernelSyntaxError


@dc.kernel
def k_string(a: dc.Buffer[dc.float32]):
    s = "hello"  # expect: KernelSyntaxError
    a[0] = len(s)


@dc.kernel
def k_try(a: dc.Buffer[dc.float32]):
    try:  # expect: KernelSyntaxError
        a[0] = 1
    except Exception:
        pass


@dc.kernel
def k_with(a: dc.Buffer[dc.float32]):
    with open("x"):  # expect: KernelSyntaxError
        pass


@dc.kernel
def k_yield(a: dc.Buffer[dc.float32]):
    yield a[0]  # expect: KernelSyntaxError


@dc.kernel
def k_lambda(a: dc.Buffer[dc.float32]):
    f = lambda v: v  # noqa: E731  # expect: KernelSyntaxError
    a[0] = f(1)


@dc.kernel
def k_global(a: dc.Buffer[dc.float32]):
    global COUNTER  # expect: KernelSyntaxError
    a[0] = 1


@dc.kernel
def k_recursion(a: dc.Buffer[dc.int64]):
    a[0] = recurse(5)


@dc.kernel
def k_mutual(a: dc.Buffer[dc.int64]):
    a[0] = ping(5)


@dc.kernel
def k_python_call(a: dc.Buffer[dc.float32]):
    a[0] = plain_helper(1.0)  # expect: KernelSyntaxError


@dc.kernel
def k_numpy_call(a: dc.Buffer[dc.float32]):
    a[0] = np.sum(a)  # expect: KernelSyntaxError


@dc.kernel
def k_keyword_builtin(a: dc.Buffer[dc.float32]):
    i = dc.global_id(dim=0)  # expect: KernelSyntaxError
    a[i] = 0


@dc.kernel
def k_assign_param(a: dc.Buffer[dc.float32], s: dc.float32):
    s = s + 1  # expect: KernelSyntaxError
    a[0] = s


@dc.kernel
def k_return_value(a: dc.Buffer[dc.float32]):
    return a[0]  # expect: KernelSyntaxError


@dc.kernel
def k_type_change(a: dc.Buffer[dc.float32]):
    k = 0
    k = a[0] * 1.5  # expect: KernelTypeError
    a[0] = k


@dc.kernel
def k_float_index(a: dc.Buffer[dc.float32]):
    a[1.5] = 0  # expect: KernelTypeError


@dc.kernel
def k_wrong_ndim(a: dc.Buffer[dc.float32, 2]):
    a[0] = 1  # expect: KernelTypeError


@dc.kernel
def k_slice(a: dc.Buffer[dc.float32]):
    a[0:2] = 1  # expect: KernelSyntaxError


@dc.kernel
def k_undefined(a: dc.Buffer[dc.float32]):
    a[0] = nothing_here  # noqa: F821  # expect: KernelSyntaxError


@dc.kernel
def k_for_over_buffer(a: dc.Buffer[dc.float32]):
    for v in a:  # expect: KernelSyntaxError
        a[0] = v


@dc.kernel
def k_float_range(a: dc.Buffer[dc.float32]):
    for i in range(2.5):  # expect: KernelTypeError
        a[0] = i


@dc.kernel
def k_shared_in_loop(a: dc.Buffer[dc.float32]):
    for i in range(2):
        t = dc.shared((4,), dc.float32)  # expect: KernelSyntaxError
        a[i] = t[0]


@dc.kernel
def k_void_value(a: dc.Buffer[dc.float32]):
    a[0] = no_value(1.0)  # expect: KernelTypeError


@dc.kernel
def k_bitwise_float(a: dc.Buffer[dc.float32]):
    a[0] = a[1] << 2  # expect: KernelTypeError


@dc.kernel
def k_is(a: dc.Buffer[dc.float32]):
    if a[0] is None:  # expect: KernelSyntaxError
        a[0] = 1


@dc.kernel
def k_print(a: dc.Buffer[dc.float32]):
    print(a[0])  # expect: KernelSyntaxError


@dc.kernel
def k_bad_dim(a: dc.Buffer[dc.float32]):
    a[dc.global_id(3)] = 0  # expect: KernelTypeError


@dc.kernel
def k_bad_annotation(a: list):  # expect: KernelTypeError
    pass


@dc.kernel
def k_nested_def(a: dc.Buffer[dc.float32]):
    def inner():  # expect: KernelSyntaxError
        return 1
    a[0] = inner()


@dc.kernel
def k_while_else(a: dc.Buffer[dc.float32]):
    while a[0] > 0:
        a[0] -= 1
    else:
        a[0] = 5  # expect: KernelSyntaxError


@dc.kernel
def k_chained_index(a: dc.Buffer[dc.float32, 2]):
    a[0][1] = 2  # expect: KernelSyntaxError


@dc.kernel
def k_barrier_value(a: dc.Buffer[dc.float32]):
    a[0] = dc.barrier()  # expect: KernelSyntaxError


@dc.kernel
def k_constant_overflow(a: dc.Buffer[dc.int64]):
    a[0] = 2 ** 70  # expect: KernelTypeError


@dc.kernel
def k_division_by_zero_constant(a: dc.Buffer[dc.int64]):
    a[0] = 1 // 0  # expect: KernelTypeError
