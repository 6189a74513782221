"""Moved (issue 21): the direct kernel launch (an op's kernel on numpy arrays) is :mod:`ascend_lab.standalone`.

``ops/`` holds the operators, their ``common/``, the registry and the spec. This name stays because the public
API gave it; importing it gives that very module (one module object, so a patch on either name is seen by both).
"""

import sys

from .. import standalone as _moved

sys.modules[__name__] = _moved
