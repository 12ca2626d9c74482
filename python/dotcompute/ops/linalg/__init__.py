"""``dc.linalg``: the Array API 2024.12 linear-algebra extension with numpy 2's semantics.

LAPACK through numpy on host-memory buffers; kernel-language implementations on devices
(diagonal, trace, outer, cross, vecdot, vector_norm, matrix_norm('fro'), matrix_transpose,
tensordot and matmul, matrix_power, Cholesky, LU-based solve/inv/det/slogdet, and in
portable_decomp.py Jacobi eigh/eigvalsh, one-sided Jacobi svd/svdvals/pinv/matrix_rank/matrix_norm(2, -2,
'nuc') and Householder qr, these complex too); ``NoDevicePath`` for the rest.
See functions.py and docs/operations.md.
"""

from .functions import *  # noqa: F403
from .functions import __all__  # noqa: F401
