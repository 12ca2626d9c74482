"""ops/vendor.py: the loader and plan cache every vendor binding uses, with a real library
(the C library) standing in where a vendor's is not installed."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

import pytest

from dotcompute.ops import native, vendor

LIBC = ctypes.util.find_library("c")


def _declare_strlen(lib: ctypes.CDLL) -> dict:
    return {"strlen": native.fn(lib, "strlen", ctypes.c_size_t, ctypes.c_char_p)}


@pytest.mark.skipif(LIBC is None, reason="no C library found by ctypes.util")
def test_opens_once_and_declares_the_functions():
    asked: list[int] = []

    def candidates() -> list[str]:
        asked.append(1)
        return ["libdoes-not-exist.so.9", LIBC]

    lib = vendor.VendorLibrary("testlib", candidates, _declare_strlen)
    assert lib.load() is not None
    assert lib.load() is lib.load()
    assert asked == [1]  # the candidates are looked for once
    assert lib["strlen"](b"dotcompute") == 10


def test_missing_or_unusable_libraries_count_as_absent():
    assert vendor.VendorLibrary("testlib", lambda: ["libdoes-not-exist.so.9"], _declare_strlen).load() is None
    if LIBC is not None:  # found, but its setup failed: as if not installed
        assert vendor.VendorLibrary("testlib", lambda: [LIBC], lambda lib: None).load() is None


@pytest.mark.skipif(LIBC is None, reason="no C library found by ctypes.util")
def test_the_switch_works_after_loading(monkeypatch):
    lib = vendor.VendorLibrary("testlib", lambda: [LIBC], _declare_strlen)
    assert lib.load() is not None
    monkeypatch.setenv(native.DISABLE_ENV, "clfft, TESTLIB")
    assert lib.load() is None
    monkeypatch.setenv(native.DISABLE_ENV, "all")
    assert lib.load() is None
    monkeypatch.delenv(native.DISABLE_ENV)
    assert lib.load() is not None
    lib.close()
    assert lib.load() is None  # torn down: not opened again


def test_plan_cache_keeps_the_most_recent_and_destroys_the_rest():
    destroyed: list[str] = []
    cache = vendor.PlanCache(2, destroyed.append)
    made: list[str] = []

    def make(name: str):
        return lambda: (made.append(name), f"plan-{name}")[1]

    assert cache.get("a", make("a")) == "plan-a"
    assert cache.get("b", make("b")) == "plan-b"
    assert cache.get("a", make("a")) == "plan-a"  # hit: made once, now the most recent
    assert cache.get("c", make("c")) == "plan-c"  # evicts b, the least recently used
    assert made == ["a", "b", "c"] and destroyed == ["plan-b"] and len(cache) == 2
    cache.release()
    assert sorted(destroyed) == ["plan-a", "plan-b", "plan-c"] and len(cache) == 0


def test_plan_cache_makes_one_plan_per_key_across_threads():
    destroyed: list[int] = []
    cache = vendor.PlanCache(8, destroyed.append)
    barrier = threading.Barrier(4)
    made: list[int] = []
    lock = threading.Lock()
    got: list[int] = []

    def make() -> int:
        with lock:
            made.append(len(made))
            return made[-1]

    def work() -> None:
        barrier.wait()
        got.append(cache.get("same", make))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1  # every caller got the one plan kept
    assert len(cache) == 1
    # a plan made by a thread that lost the race is destroyed, never leaked; the kept one is not
    assert got[0] not in destroyed and sorted(destroyed + [got[0]]) == made
