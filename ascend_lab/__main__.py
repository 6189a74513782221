"""``python -m ascend_lab``: the same command as the ``ascend-lab`` console script (see :mod:`ascend_lab.cli`)."""

import sys

from .cli import main

sys.exit(main())
