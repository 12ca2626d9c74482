"""The checker: unsupported constructs raise the right error at the right file and line."""

import inspect
import re
from pathlib import Path

import pytest

import dotcompute as dc
from dotcompute.lang.kernel import Kernel

from . import broken_kernels

SOURCE = Path(broken_kernels.__file__).read_text().splitlines()
EXPECT = re.compile(r"# expect: (\w+)")


def expected(kernel):
    """(error class name, line) of the first `# expect:` line in the kernel or the functions it calls."""
    lines, start = inspect.getsourcelines(kernel.pyfunc)
    for offset, text in enumerate(lines):
        m = EXPECT.search(text)
        if m:
            return m.group(1), start + offset
    # the problem is in a device function it calls (or one that calls): follow the calls
    text = "".join(lines)
    for _ in range(3):
        called = re.search(r"(?:=|return) (\w+)\(", text).group(1)
        lines, start = inspect.getsourcelines(getattr(broken_kernels, called).pyfunc)
        for offset, line in enumerate(lines):
            m = EXPECT.search(line)
            if m:
                return m.group(1), start + offset
        text = "".join(lines)
    raise AssertionError(f"no # expect: marker for {kernel.__name__}")


KERNELS = [k for name, k in vars(broken_kernels).items() if isinstance(k, Kernel)]


def test_there_are_many_negative_cases():
    assert len(KERNELS) >= 30


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_error_class_and_line(kernel):
    cls_name, line = expected(kernel)
    with pytest.raises((dc.KernelSyntaxError, dc.KernelTypeError)) as info:
        kernel.check()
    err = info.value
    assert type(err).__name__ == cls_name, str(err)
    assert err.lineno == line, str(err)
    assert err.filename == broken_kernels.__file__
    text = str(err)
    assert f"{broken_kernels.__file__}:{line}:" in text
    assert SOURCE[line - 1].strip()[:20] in text  # the source line is shown
    assert "^" in text


def test_hints_for_common_mistakes():
    with pytest.raises(dc.KernelSyntaxError) as info:
        broken_kernels.k_list.check()
    assert "dc.shared" in str(info.value) and "lists are not supported" in str(info.value)
    with pytest.raises(dc.KernelSyntaxError) as info:
        broken_kernels.k_python_call.check()
    assert "@dc.func" in str(info.value)
    with pytest.raises(dc.KernelTypeError) as info:
        broken_kernels.k_type_change.check()
    assert "0.0" in str(info.value)


def test_caret_points_at_the_column():
    with pytest.raises(dc.KernelSyntaxError) as info:
        broken_kernels.k_dict.check()
    err = info.value
    line = SOURCE[err.lineno - 1]
    assert line[err.offset - 1] == "{"
    shown, caret = str(err).splitlines()[1:3]
    assert caret.index("^") - 4 == err.offset - 1 - (len(line) - len(line.lstrip()))
    assert shown.strip() == line.strip()


def test_errors_are_also_raised_by_source():
    with pytest.raises(dc.KernelSyntaxError):
        broken_kernels.k_try.source("cpu")


def test_kernels_inside_functions_report_absolute_lines():
    def factory():
        @dc.kernel
        def inner(a: dc.Buffer[dc.float32]):
            a[0] = [1][0]

        return inner

    k = factory()
    with pytest.raises(dc.KernelSyntaxError) as info:
        k.check()
    lines, start = inspect.getsourcelines(k.pyfunc)
    assert info.value.lineno == start + 2  # lines[0] is the decorator
    assert info.value.offset == lines[2].index("= [") + 3
