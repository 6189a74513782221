"""Small helpers the chapters share: glue computed numbers into the prose, render small tables.

Every number the book states is computed by the package; ``glue`` hands it to myst-nb so the text
can say ``{glue:text}`name``` instead of a typed number. ``table`` renders a plain HTML table (the
site has no pandas), escaping every cell.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def glue(name: str, value: Any) -> Any:
    """Glue ``value`` (numpy scalars become plain int/float/bool) for ``{glue:text}`name``` and return it."""
    from myst_nb import glue as _glue
    if isinstance(value, np.generic):
        value = value.item()
    _glue(name, value, display=False)
    return value


def table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> Any:
    """A small HTML table (IPython ``HTML`` object); every cell is escaped text."""
    from IPython.display import HTML
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return HTML(f'<div style="overflow-x:auto"><table class="table"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table></div>")


def repo_root() -> Path:
    """The book's repository (the folder holding ``_toc.yml``), found from the working directory upwards.

    Chapters run with their own folder as the working directory (Jupyter Book and nbval both do this);
    the package itself may be installed anywhere, so the root is never derived from ``__file__``."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    raise FileNotFoundError(f"no _toc.yml in {here} or above: run this from inside the book's repository")
