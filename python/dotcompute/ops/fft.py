"""``dc.fft``: numpy.fft's names — the Array API's fft extension plus numpy's ``fft2``/``ifft2``.

The 1-D and 2-D transforms and their paths (vendor libraries, the portable kernels) are in
fft_core.py; the n-d, Hermitian, frequency and shift functions built on them in fft_api.py. This
module only gathers the public names, so neither of those imports the other's importer.
"""

from __future__ import annotations

from .fft_api import fftfreq, fftn, fftshift, hfft, ifftn, ifftshift, ihfft, irfftn, rfftfreq, rfftn
from .fft_core import factor, fft, fft2, fft_rows, ifft, ifft2, irfft, rfft

__all__ = ["factor", "fft", "fft2", "fft_rows", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfftn", "rfft", "rfftfreq", "rfftn"]
