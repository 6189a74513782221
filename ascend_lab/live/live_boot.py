"""Make ``ascend_lab``'s sub-packages importable without running their ``__init__`` files.

``ascend_lab/__init__.py`` (and ``acl/``, ``tbe/``, ``atvoss/``, the op packages) import the simulator, which
needs numpy; the host tiling modules do not (``live.live_tiling``). Where there is no numpy -- the live tiling
page's pyodide, ``tests/test_tiling_no_numpy.py`` -- this file is run by path (``runpy.run_path``, so importing
it runs no package code either) and :func:`install` registers every folder under ``ROOT/ascend_lab`` as a
package whose ``__init__`` is not executed; ``import ascend_lab.live.live_tiling`` then loads just the modules
it imports. It imports nothing from ascend_lab itself.
"""

from __future__ import annotations

import importlib.util
import os
import sys


def install(root: str, package: str = "ascend_lab") -> list[str]:
    """Register ``package`` and every sub-folder of ``root/package`` as packages with unexecuted ``__init__``
    files; returns their names. A package already imported is left as it is. Another ``package`` than
    ``ascend_lab`` is for operators registered from outside it (``tests/fixture_ops``: ``install(root, "tests")``),
    whose numpy-free host tiling the page then imports the same way."""
    names = []
    base = os.path.join(root, package)
    for dirpath, dirnames, _ in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        name = os.path.relpath(dirpath, root).replace(os.sep, ".")
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, os.path.join(dirpath, "__init__.py"),
                                                      submodule_search_locations=[dirpath])
        module = importlib.util.module_from_spec(spec)          # the spec's loader never runs __init__.py
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
        names.append(name)
    return names
