"""``ascend-lab``: the simulator from a shell (console script, or ``python -m ascend_lab``).

Three commands::

    ascend-lab tiling hard_sigmoid_grad --n 100000 --dtype float32 --cores 64 --ub-size 253952
    ascend-lab run hardsigmoid_backward --shape 4,2 --dtype float32 --soc Ascend910B4 --trace out.json
    ascend-lab socs
    ascend-lab kernel run my_kernel.cpp --tiling totalLength=4096 tileLength=512   (ascend_lab.cli_kernel)

``tiling`` prints a TilingData (CANN field names, plus blockDim and tilingKey), the packed bytes the kernel
reads and what every core does with them. ``run`` runs the aclnn op on seeded random data and prints the
status, the L0 graph, the tiling, the kernel's estimated cycles, the sanitizer warnings and whether the output
is bit-exact against the golden oracle. ``socs`` lists the SoC catalogue.

Exit codes: 0 success; 1 a non-zero aclnn status (printed with its log), an output that is not bit-exact
vs golden, or a tiling the kernel could not run; 2 a bad argument (one ``ascend-lab: error:`` line on
stderr, no traceback).

This module holds ``tiling``, ``socs``, the parser and :func:`main`; ``run`` is :mod:`.cli_run`, ``kernel``
:mod:`.cli_kernel`, and what they share (argument types, CliError, formatting) :mod:`.cli_args`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__, tiling
from .base.platform import DEFAULT_SOC, get_soc, socs
from .cli_args import (
    MAX_RUN_ELEMENTS,
    MAX_SHAPE_DIMS,
    PROG,
    CliError,
    Parser,
    WriteError,
    attrs_given,
    count_arg,
    dtype_arg,
    fmt_value,
    int_arg,
    plural,
    positive_arg,
    run_op,
    shape_arg,
    soc_arg,
    tiling_op,
)
from .cli_kernel import add_kernel_parser
from .cli_run import cmd_run, compare, golden_for, random_inputs, supported_run_dtypes
from .opdev.tiling_data import TilingError
from .ops import registry
from .ops.spec import FLAVOURS

__all__ = [
    "MAX_RUN_ELEMENTS", "MAX_SHAPE_DIMS", "PROG", "CliError", "build_parser", "cmd_run", "cmd_socs", "cmd_tiling",
    "compare", "core_rows", "golden_for", "main", "random_inputs", "supported_run_dtypes",
]

#: Per-core tables longer than this show the first ``_HEAD`` and last ``_TAIL`` rows around an ellipsis.
_MAX_ROWS, _HEAD, _TAIL = 12, 6, 3

#: Above this many tiles in total, the per-core rows are computed without listing every tile.
_MAX_LISTED_TILES = 1_000_000


def _field_layout(td: Any) -> list[tuple[int, str, str, bytes]]:
    """(offset, C type, field name, bytes) for every field and padding run of the packed struct."""
    raw = td.to_bytes()
    rows, offset = [], 0
    for name, ctype in td.FIELDS:
        pad = -offset % ctype.size
        if pad:
            rows.append((offset, "", "(padding)", raw[offset:offset + pad]))
            offset += pad
        rows.append((offset, ctype.c_name, name, raw[offset:offset + ctype.size]))
        offset += ctype.size
    if offset < len(raw):
        rows.append((offset, "", "(padding)", raw[offset:]))
    return rows


def _print_tiling_fields(td: Any, out: Callable[[str], None]) -> None:
    out(f"TilingData {type(td).__name__} ({td.SIZE} bytes):")
    values = {k: fmt_value(v) for k, v in td.as_dict().items()}
    width = max(len(k) for k in values)
    vwidth = max(len(v) for v in values.values())
    notes = {"blockDim": "(beside the struct: SetBlockDim, cores launched)",
             "tilingKey": "(beside the struct: SetTilingKey, kernel template)"}
    for key, text in values.items():
        out(f"  {key:<{width}}  {text:<{vwidth}}  {notes.get(key, '')}".rstrip())
    out("packed bytes (little-endian, natural C alignment; what GET_TILING_DATA reads):")
    for offset, ctype, name, chunk in _field_layout(td):
        out(f"  +{offset:<3d} {ctype:<9} {name:<{width}}  {chunk.hex(' ')}")
    out(f"  hex: {td.to_bytes().hex()}")


# --------------------------------------------------------------------------------------------------
# ascend-lab tiling
# --------------------------------------------------------------------------------------------------

def core_rows(op: str, td: Any, dtype: Any, n: int) -> list[dict[str, Any]]:
    """What each core does (the op kernel's ``core_ranges``), with ``padding`` on every row; without the
    per-tile lists when the input has more than ``_MAX_LISTED_TILES`` tiles."""
    spec, kernel = registry.op_for_tiling(td)
    tile_elems = max(kernel.tile_elements(td, dtype, n), 1)
    rows = kernel.core_ranges(td, dtype, n, tiles=n // tile_elems <= _MAX_LISTED_TILES)
    for r in rows:
        r.setdefault("padding", max(0, r["padded_end"] - max(r["offset"], n)))
    return rows


def _print_core_table(rows: list[dict[str, Any]], n: int, out: Callable[[str], None], show_all: bool) -> None:
    if not rows:
        out("per-core work: no core has any work (empty input: the kernel returns at once)")
        return
    out(f"per-core work ({plural(len(rows), 'core')} with work):")
    head = ("core", "kind", "offset", "elements", "tiles", "tail", "padding")
    cells = [(str(r["core"]), r["kind"], str(r["offset"]), str(r["data_num"]), str(r["tile_num"]), str(r["tail"]),
              str(r["padding"])) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]

    def line(values: Sequence[str]) -> str:
        return "  " + "  ".join(v.rjust(w) if i != 1 else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths,
                                                                                                     strict=True)))
    out(line(head))
    if show_all or len(cells) <= _MAX_ROWS:
        shown: list[Sequence[str] | None] = list(cells)
    else:
        shown = [*cells[:_HEAD], None, *cells[-_TAIL:]]
    for c in shown:
        if c is None:
            out(f"  {'...':>{widths[0]}}  ({len(cells) - _HEAD - _TAIL} more cores)")
        else:
            out(line(c))
    kinds = Counter(r["kind"] for r in rows)
    by_kind = ", ".join(
        f"{kinds[k]} {k} x {'/'.join(sorted({str(r['data_num']) for r in rows if r['kind'] == k}, key=int))}"
        for k in ("big", "small") if kinds[k])
    covered = sum(r["data_num"] for r in rows)
    padding = sum(r["padding"] for r in rows)
    tiles = [r["tile_num"] for r in rows]
    out(f"summary: {plural(len(rows), 'core')} ({by_kind} elements), {plural(sum(tiles), 'tile')} "
        f"({min(tiles)}..{max(tiles)} per core), {covered} elements touched = {n} + {padding} padding")



def cmd_tiling(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    spec = registry.get(args.op)
    kwargs: dict[str, Any] = {"core_num": args.cores, "ub_size": args.ub_size, "soc": args.soc,
                              "kernel": args.kernel}
    kwargs.update(attrs_given(args, spec.attrs, spec.key))
    try:
        td = tiling.compute(spec.key, args.n, args.dtype, **kwargs)
    except (TypeError, ValueError) as exc:   # TilingError is a ValueError
        raise CliError(str(exc)) from None
    info = get_soc(args.soc)
    cores = info.vector_core_num if args.cores is None else args.cores
    ub = info.core_mem_size_ub if args.ub_size is None else args.ub_size
    source = [f"cores from {'--cores' if args.cores is not None else args.soc}",
              f"UB from {'--ub-size' if args.ub_size is not None else args.soc}"]
    out(f"{spec.op_type} tiling: {args.n} x {args.dtype.short} on {cores} vector cores, UB {ub} B "
        f"({'; '.join(source)})")
    kernel = spec.kernel(args.kernel)
    where = "registered for" if kernel.registered_for(info) else "registered only for"
    out(f"kernel: {kernel.flavour} ({kernel.source}), {where} {', '.join(kernel.socs)}"
        + ("" if kernel.registered_for(info) else f"; on {info.name} this tiling is a what-if study"))
    _print_tiling_fields(td, out)
    try:
        rows = core_rows(spec.key, td, args.dtype, args.n)
    except TilingError as exc:
        out(f"per-core work: the kernel cannot run this tiling: {exc}")
        return 1
    _print_core_table(rows, args.n, out, args.all)
    return 0


# --------------------------------------------------------------------------------------------------
# ascend-lab socs
# --------------------------------------------------------------------------------------------------

def cmd_socs(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    head = ("name", "NpuArch", "SocVersion", "family", "vector cores", "UB bytes", "clock MHz", "GM GB/s")
    rows = []
    for name in socs():
        s = get_soc(name)
        rows.append((s.name + (" *" if s.name == DEFAULT_SOC else ""), f"{s.npu_arch.name} ({int(s.npu_arch)})",
                     s.soc_version.name, s.family, str(s.vector_core_num), f"{s.ub_size} ({s.ub_size // 1024} KB)",
                     str(s.clock_mhz), str(s.gm_bandwidth_gbps)))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    numeric = {4, 6, 7}

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if i in numeric else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths, strict=True))).rstrip()
    out(line(head))
    for r in rows:
        out(line(r))
    out(f"* default SoC. {len(rows)} SoCs; figures from ascend_lab/data/platforms.ini" +
        ("" if args.notes else " (--notes for each figure's source)"))
    if args.notes:
        for name in socs():
            out(f"{name}: {get_soc(name).note}")
    return 0


# --------------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------------

def _add_value_options(p: argparse.ArgumentParser, options: dict[str, tuple[str, float]], what: str) -> None:
    """One ``--<name> FLOAT`` option per attribute/scalar of the registered ops (last owner named in the help)."""
    for name, (owner, default) in sorted(options.items()):
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, type=float, default=None,
                       help=f"{owner}'s {what} (default {default:g})")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="ascend_lab: CANN's aclnnHardsigmoidBackward / aclnnThresholdBackward "
                                            "simulated down to the AscendC kernel.")
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("tiling", help="print a TilingData, its packed bytes and the per-core split",
                       description="Run an op's host tiling on its own (ascend_lab.tiling).")
    p.add_argument("op", type=tiling_op, help=" | ".join(s.key for s in registry.ops())
                   + " (or " + ", ".join(s.op_type for s in registry.ops()) + ")")
    p.add_argument("--n", type=count_arg, required=True, help="element count (totalLength / inputNum)")
    p.add_argument("--dtype", type=dtype_arg, default="float32", help="float32, float16, bfloat16, int8, ...")
    p.add_argument("--soc", type=soc_arg, default=DEFAULT_SOC,
                   help=f"SoC for core count and UB (default {DEFAULT_SOC})")
    p.add_argument("--cores", type=positive_arg("the core count"), default=None, help="override the vector core count")
    p.add_argument("--ub-size", type=positive_arg("the UB size"), default=None, help="override the UB size in bytes")
    _add_value_options(p, {name: (spec.key, value) for spec in registry.ops() for name, value in spec.attrs.items()},
                       "attribute")
    p.add_argument("--kernel", choices=FLAVOURS, default=None,
                   help="the kernel flavour whose tiling to run (default: the op's first); any SoC: a what-if study")
    p.add_argument("--all", action="store_true", help="list every core, not the first and last few")
    p.set_defaults(func=cmd_tiling)

    p = sub.add_parser("run", help="run an aclnn op on seeded random data and check it against golden",
                       description="Run an aclnn op through the whole simulated stack.")
    p.add_argument("op", type=run_op, help=" | ".join(a.convenience for _, a in registry.aclnn_apis())
                   + " (or " + ", ".join(a.api for _, a in registry.aclnn_apis()) + ")")
    p.add_argument("--shape", type=shape_arg, required=True, help="e.g. 4,2 (0,3 is an empty tensor)")
    p.add_argument("--dtype", type=dtype_arg, default="float32", help="dtype of both inputs (default float32)")
    _add_value_options(p, {sc.name: (api.convenience, sc.default) for _, api in registry.aclnn_apis()
                           for sc in api.scalars}, "scalar")
    p.add_argument("--soc", type=soc_arg, default=DEFAULT_SOC, help=f"SoC in force (default {DEFAULT_SOC})")
    p.add_argument("--seed", type=lambda s: int_arg(s, "the seed", 0), default=0, help="random seed (default 0)")
    p.add_argument("--trace", default=None, metavar="PATH", help="record every instruction; write a Chrome trace")
    p.add_argument("--buffer-num", type=positive_arg("BUFFER_NUM"), default=None,
                   help="queue buffers per kernel queue (simulator knob; CANN hard-codes 2)")
    p.add_argument("--kernel", choices=FLAVOURS, default=None,
                   help="kernel flavour to run (default: what a stock CANN install runs on the SoC; a flavour not "
                        "registered for the SoC returns 561103)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("socs", help="list the SoC catalogue",
                       description="The SoC catalogue (ascend_lab/data/platforms.ini).")
    p.add_argument("--notes", action="store_true", help="print where each figure comes from")
    p.set_defaults(func=cmd_socs)

    add_kernel_parser(sub)
    return parser


def _version() -> str:
    return __version__


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ascend-lab`` and ``python -m ascend_lab``; returns the exit code."""
    out = print
    try:
        args = build_parser().parse_args(argv)
        return args.func(args, out)
    except CliError as exc:
        message = " ".join(str(exc).split())   # one line, whatever the message held
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except WriteError as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except MemoryError as exc:  # a shape the parser admits but this host cannot hold: say so, no traceback
        detail = " ".join(str(exc).split())
        print(f"{PROG}: error: out of memory{': ' + detail if detail else ''}; try a smaller --shape / --n",
              file=sys.stderr)
        return 1
    except SystemExit as exc:   # --help / --version
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:    # `ascend-lab socs | head -1`
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # silence the flush at interpreter exit
        return 0

