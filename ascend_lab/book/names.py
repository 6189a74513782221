"""Resolve the dotted ``ascend_lab`` names a page mentions, so a renamed function breaks the build."""

from __future__ import annotations

import importlib
from typing import Any


def resolve_name(dotted: str) -> Any:
    """The object a dotted name denotes: the longest importable module prefix, then attributes.

    ``resolve_name("ascend_lab.opdev.executor.aclOpExecutor")`` imports ``ascend_lab.opdev.executor`` and
    returns its ``aclOpExecutor``. Raises ``ImportError`` when no prefix imports and ``AttributeError`` when an
    attribute is missing."""
    parts = dotted.split(".")
    if not all(parts):
        raise ValueError(f"{dotted!r} is not a dotted name")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no module in {dotted!r} can be imported")
