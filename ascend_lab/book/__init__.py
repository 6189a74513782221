"""Book helpers: what the chapters share, so a chapter keeps only prose, calls and asserts.

Every number the book states is computed by the package; ``glue`` hands it to myst-nb so the text can say
``{glue:text}`name``` instead of a typed number. ``table`` renders a plain HTML table (the site has no
pandas), escaping every cell. The submodules hold the rest:

* :mod:`.source` -- ``show_source``: the simulator's current code as a highlighted block; ``show_cxx``: a C++
  kernel file (or one definition of it) with the file's line numbers and, collapsed, the Python the simulator
  executes for it (``show_translation``); ``cxx_line``: a line's number for the prose;
* :mod:`.calls` -- the C-named layers by hand: ``phase1_raw`` (nullptr out-pointers), ``to_device``,
  ``dense_tensor``, ``logged`` (a run's check message);
* :mod:`.kernels` -- ``gm`` / ``gm_read``: kernel arguments for a direct launch;
* :mod:`.trace` -- per-tile vector steps, pipe load and bytes moved, read from a trace;
* :mod:`.values` -- how a value is printed (``format_value``, ``pct``, ``dtype_abbr``), ``ulp_distance``,
  ``count_bit_differences``, ``seeded_inputs``;
* :mod:`.widgets` -- ``widgets_of``: walk an explorer's widget tree;
* :mod:`.names` -- ``resolve_name``: a dotted ``ascend_lab`` name to its object;
* :mod:`.api_reference` -- the generated API reference page;
* :mod:`.pytorch_reference` -- PyTorch's answers from the stored table.

This is the top layer of the package: it may import anything below it, and nothing imports it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .calls import dense_tensor, logged, phase1_raw, to_device
from .kernels import gm, gm_read
from .names import resolve_name
from .source import cxx_line, cxx_listing, show_cxx, show_source, show_translation, source_markdown
from .trace import bytes_moved, pipe_load, step_label, tile_vector_events, vector_step
from .values import (
    bit_pattern,
    count_bit_differences,
    dtype_abbr,
    format_value,
    pct,
    seeded_inputs,
    ulp_distance,
)
from .widgets import widgets_of

__all__ = [
    "bit_pattern", "bytes_moved", "column_table", "count_bit_differences", "cxx_line", "cxx_listing",
    "dense_tensor", "dtype_abbr", "format_value", "glue", "gm", "gm_read", "logged", "pct", "phase1_raw",
    "pipe_load", "repo_root", "resolve_name", "seeded_inputs", "show_cxx", "show_source", "show_translation",
    "source_markdown", "step_label", "table", "table_html", "tile_vector_events", "to_device", "ulp_distance",
    "vector_step", "widgets_of",
]


def glue(name: str, value: Any) -> Any:
    """Glue ``value`` (numpy scalars become plain int/float/bool) for ``{glue:text}`name``` and return it."""
    # deferred: myst-nb is the book builder, not a runtime dependency of the package: imported only when a page glues
    from myst_nb import glue as _glue
    if isinstance(value, np.generic):
        value = value.item()
    _glue(name, value, display=False)
    return value


def table_html(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """The HTML of a small table; every cell is escaped text."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<div style="overflow-x:auto"><table class="table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> Any:
    """A small HTML table (IPython ``HTML`` object); every cell is escaped text."""
    # deferred: IPython is the notebook's display layer; imported here so `import ascend_lab.book` works without it
    from IPython.display import HTML
    return HTML(table_html(header, rows))


def column_table(columns: Mapping[str, Sequence[Any]]) -> Any:
    """A table with one column per array (header = key), each element printed by ``format_value``."""
    cols = list(columns.values())
    lengths = {len(c) for c in cols}
    if len(lengths) > 1:
        raise ValueError(f"columns of different lengths: { {k: len(c) for k, c in columns.items()} }")
    n = lengths.pop() if lengths else 0
    return table(list(columns), [tuple(format_value(c[i]) for c in cols) for i in range(n)])


def repo_root() -> Path:
    """The book's repository (the folder holding ``_toc.yml``), found from the working directory upwards.

    Chapters run with their own folder as the working directory (Jupyter Book and nbval both do this);
    the package itself may be installed anywhere, so the root is never derived from ``__file__``."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    raise FileNotFoundError(f"no _toc.yml in {here} or above: run this from inside the book's repository")
