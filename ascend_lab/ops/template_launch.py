"""Moved (issue 21): launching an operator built on the atvoss template is :mod:`ascend_lab.ops.common.template_launch`.

``ops/`` holds the operators, their ``common/``, the registry and the spec. This name stays because the public
API gave it; importing it gives that very module (one module object, so a patch on either name is seen by both).
"""

import sys

from .common import template_launch as _moved

sys.modules[__name__] = _moved
