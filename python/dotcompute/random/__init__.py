"""``dc.random``: numbers generated on the device by the counter-based Philox4x32-10.

``default_rng(seed)`` gives a numpy-style :class:`Generator` (random, uniform, normal, integers,
choice, permutation, shuffle); ``philox(c0, c1, c2, c3, k0, k1)`` is the generator itself as a
``@dc.func`` for kernels. Element k of a stream is a pure function of (key, k): the same numbers on
every backend, however the output is chunked. See docs/operations.md.
"""

from .generator import Generator, default_rng
from .philox import philox

__all__ = ["Generator", "default_rng", "philox"]
