"""``%%ascendc``: a Jupyter cell of AscendC C++, compiled into a kernel in the notebook's namespace.

::

    %%ascendc add_kernel -D TILE=256
    #include "kernel_operator.h"
    ...
    extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
    { ... }

compiles the cell (named ``<ascendc cell N>``, so messages, findings and the trace name the cell and its line,
counted as the notebook counts them: the ``%%ascendc`` line is line 1; its ``#include "..."`` are found in the
notebook's working folder) and
binds the :class:`~.kernel.CxxKernel` to ``add_kernel`` (default: the entry's name), ready for
``ascend_lab.ascendc.launch``. A kernel the front end refuses prints the compiler-style message -- file:line:column,
the line, a caret, a hint -- and no traceback. ``--run`` also launches it at once on seeded random inputs and prints
the findings, cycles, UB use and an output summary (:mod:`.runner`, the same report as ``ascend-lab kernel run``)::

    %%ascendc --run --tiling totalLength=4096 tileLength=256 --n 4096 --dtype float32 --block-dim 4

The magic is registered when ``ascend_lab`` is imported inside IPython (or ``%load_ext ascend_lab``); this module,
and with it the C++ front end, is imported by the first ``%%ascendc`` cell.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from .ascendc.cxx.errors import KernelCompileError
from .ascendc.cxx.kernel import CxxKernel, load_kernel
from .ascendc.cxx.preprocess import SourceFile
from .kernel_runner import RunError, RunSpec, parse_pairs, run, tiling_struct

__all__ = ["USAGE", "ascendc_cell"]

USAGE = """\
%%ascendc [NAME] [--entry E] [-D KEY=VALUE ...] [--knob KW=CONST ...]
          [--run [--tiling FIELD=VALUE ...] [--template K=V ...] [--input NAME=SHAPE:DTYPE|NAME=FILE.npy ...]
                 [--n N] [--dtype float32] [--soc S] [--block-dim B] [--seed N] [--output NAME] [--trace PATH]]

Compile the cell's AscendC C++ and bind the kernel to NAME (default: the entry's name).
  --entry E          the __global__ function, when the cell has several
  -D KEY=VALUE       a macro, as the build defines it (-D DTYPE_X=half; -D KEY alone is 1); repeat for more
  --knob KW=CONST    launch keyword KW overrides the static constexpr CONST (--knob bufferNum=BUFFER_NUM)
  --run              launch it now with the sanitizer on, on seeded random inputs; print findings, cycles, UB use
                     and the output (GM arguments: the entry's parameters but workspace and tiling; the last is
                     the output unless --output; N elements each, default the tiling's totalLength)"""

_names: dict[str, str] = {}   # cell file name -> its text (a rerun under the same count gets a name of its own)


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="%%ascendc", add_help=False)
    p.add_argument("name", nargs="?", default=None)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("--entry", default=None)
    p.add_argument("-D", "--define", action="append", default=[])
    p.add_argument("--knob", action="append", default=[])
    p.add_argument("--run", action="store_true")
    for opt in ("--tiling", "--template", "--input"):
        p.add_argument(opt, nargs="+", action="extend", default=[])
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--soc", default=None)
    p.add_argument("--block-dim", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", default=None)
    p.add_argument("--trace", default=None)
    return p


def _cell_number(shell: Any, cell: str) -> int | None:
    """The In [N] of the cell running: the history entry holding it (IPython 9 counts the cell up before running it,
    older versions after; a cell run without history keeps the count)."""
    count = getattr(shell, "execution_count", None)
    hist = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []
    if not isinstance(count, int):
        return None
    for n in (count, count - 1):
        if 0 < n < len(hist) and cell.strip() in hist[n]:
            return n
    return count


def _cell_name(shell: Any, cell: str, text: str) -> str:
    count = _cell_number(shell, cell)
    base = f"<ascendc cell {count}>" if count is not None else "<ascendc cell>"
    name, k = base, 1
    while _names.get(name, text) != text:
        k += 1
        name = f"{base[:-1]}.{k}>"
    _names[name] = text
    return name


def _summary(kernel: CxxKernel, name: str) -> str:
    tp = kernel.template_params
    text = f"{name}: {kernel.entry_name}{'<' + ', '.join(tp) + '>' if tp else ''}({', '.join(kernel.params)})"
    try:
        template = {n: kernel.template_values[n][0] for n in tp} if tp else {}
        struct, size, fields = tiling_struct(kernel.instance(**template))
    except (TypeError, ValueError, KeyError, IndexError, KernelCompileError):
        return text   # a kernel that needs its tiling key (TILING_KEY_IS) to instantiate: shown at launch
    if fields:
        text += f"; tiling {struct} ({size} B): " + ", ".join(f for _t, f, _d in fields)
    return text


def _err(*lines: str) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def ascendc_cell(shell: Any, line: str, cell: str) -> None:
    """The body of ``%%ascendc``: compile ``cell``, bind the kernel in the user's namespace, maybe run it."""
    try:
        args = _parser().parse_args(shlex.split(line))
    except (_UsageError, ValueError) as exc:
        _err(f"%%ascendc: error: {exc}", "", USAGE)
        return
    if args.help:
        print(USAGE)
        return
    if args.name is not None and not args.name.isidentifier():
        _err(f"%%ascendc: error: {args.name!r} is not a Python name to bind the kernel to", "", USAGE)
        return
    try:
        defines = parse_pairs(args.define, "-D", default="1")
        knobs = parse_pairs(args.knob, "--knob")
    except RunError as exc:
        _err(f"%%ascendc: error: {exc}")
        return
    ns = shell.user_ns
    try:
        # a blank line for the %%ascendc line: C++ line numbers are the notebook's numbers of the cell's lines
        source = "\n" + cell
        main = SourceFile(_cell_name(shell, cell, source), source, Path.cwd())   # #include "x.h": the notebook's folder
        # load_kernel translates what a build would compile (CxxKernel.check), so an error shows now, at the cell
        kernel = load_kernel(main, defines=defines or None, entry=args.entry, knobs=knobs or None)
    except KernelCompileError as exc:
        _err(str(exc))
        old = ns.get(args.name) if args.name else None
        if isinstance(old, CxxKernel):
            _err(f"note: {args.name} is unchanged: still the kernel an earlier cell compiled")
        return
    name = args.name or kernel.entry_name
    ns[name] = kernel
    print(_summary(kernel, name))
    if not args.run:
        return
    spec = RunSpec(tiling=args.tiling, template=args.template, inputs=args.input, n=args.n, dtype=args.dtype,
                   soc=args.soc, block_dim=args.block_dim, seed=args.seed, output=args.output, trace=args.trace)
    try:
        spec.tiling = parse_pairs(args.tiling, "--tiling")
        spec.template = parse_pairs(args.template, "--template")
        spec.inputs = parse_pairs(args.input, "--input")
        run(kernel, spec, print)
    except RunError as exc:
        _err(f"%%ascendc --run: error: {exc}")
    except KernelCompileError as exc:
        _err(str(exc))
