"""Walk a widget tree: the hidden checks of a page count the images or cards an explorer holds."""

from __future__ import annotations

from typing import Any


def widgets_of(root: Any, kind: type | tuple[type, ...]) -> list[Any]:
    """Every widget of ``kind`` in the tree under ``root`` (``root`` included), depth first, in order.

    Containers (``Box``, ``VBox``, ``Tab`` ...) hold their parts in ``children``; anything else is a leaf."""
    found: list[Any] = []
    stack = [root]
    while stack:
        w = stack.pop()
        if isinstance(w, kind):
            found.append(w)
        stack.extend(reversed(tuple(getattr(w, "children", ()))))
    return found
