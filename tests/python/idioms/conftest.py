"""Lets the idiom suites use the Metal shim (tests/support/metal_shim) by module name."""

import sys
from pathlib import Path

_SHIM = Path(__file__).resolve().parents[2] / "support" / "metal_shim"
if str(_SHIM) not in sys.path:
    sys.path.insert(0, str(_SHIM))
_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))
