"""Lets the type suites import their generator, the emit harness (NVRTC) and the Metal shim."""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _p in (_HERE, _HERE.parent / "lang_emit", _HERE.parents[1] / "support" / "metal_shim"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))
