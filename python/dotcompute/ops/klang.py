"""The kernel language under the ``dc.`` prefix, for the portable kernels of this package.

The operations sit below the top-level package (which imports them), so their kernels cannot
``import dotcompute as dc``; ``from . import klang as dc`` gives them the same spelling a user
writes, from the layers below: the language, the Buffer annotation and the dtypes.
"""

from ..dtypes import *  # noqa: F403
from ..lang import *  # noqa: F403
from ..runtime import Buffer  # noqa: F401
