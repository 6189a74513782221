"""Moved (issue 21): the tile map (which core and tile covers which elements) is :mod:`ascend_lab.live.tile_map`.

``ops/`` holds the operators, their ``common/``, the registry and the spec. This name stays because the public
API gave it; importing it gives that very module (one module object, so a patch on either name is seen by both).
"""

import sys

from ..live import tile_map as _moved

sys.modules[__name__] = _moved
