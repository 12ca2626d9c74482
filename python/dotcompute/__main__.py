"""``python -m dotcompute ...``: the same as the ``dotcompute`` command."""

import sys

from .cli.main import main

sys.exit(main())
