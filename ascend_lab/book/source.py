"""Show the simulator's own source in a chapter, so the code a reader sees is the code that ran.

A chapter that copied a kernel into its prose would drift from the package; ``show_source`` prints the
current definition instead, as a highlighted Python block.
"""

from __future__ import annotations

import inspect
from typing import Any


def source_markdown(*objs: Any) -> str:
    """The source of each object (function, class, method, module), joined into one fenced Python block.

    The fence has four backticks so a docstring holding a three-backtick example cannot end it early."""
    if not objs:
        raise TypeError("source_markdown() needs at least one function, class or module")
    src = "\n".join(inspect.getsource(o) for o in objs)
    return f"````python\n{src}````"


def show_source(*objs: Any) -> None:
    """Display the objects' current source as a highlighted block (a notebook's Markdown output)."""
    # IPython is the notebook's display layer; imported here so `import ascend_lab.book` works without it
    from IPython.display import Markdown, display
    display(Markdown(source_markdown(*objs)))
