"""Moved (issue 21): turning a tensor into the GM_ADDR a kernel receives is :mod:`ascend_lab.ops.common.kernel_args`.

``ops/`` holds the operators, their ``common/``, the registry and the spec. This name stays because the public
API gave it; importing it gives that very module (one module object, so a patch on either name is seen by both).
"""

import sys

from .common import kernel_args as _moved

sys.modules[__name__] = _moved
