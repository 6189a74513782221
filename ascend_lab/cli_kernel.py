"""``ascend-lab kernel``: an AscendC kernel written in C++, run or shown from the shell.

::

    ascend-lab kernel run my_kernel.cpp --tiling totalLength=4096 tileLength=512 --block-dim 8 --trace out.json
    ascend-lab kernel show my_kernel.cpp --template schMode=1

``run`` compiles the file (its ``#include "..."`` found beside it) and launches it with the sanitizer on: GM
arguments in the entry's parameter order (all but ``workspace`` and ``tiling``; the last is the output unless
``--output NAME``), seeded random inputs unless ``--input name=shape:dtype`` or ``name=file.npy``, the tiling bytes
packed from ``--tiling field=value`` (the rest keep the struct's defaults). It prints the findings (warnings, or the
error that stopped the kernel, at its C++ file:line), the estimated cycles and microseconds, the UB each core laid
out, and a summary of the output; ``--trace`` writes the Chrome trace. ``show`` prints the translated Python -- what
the simulator executes -- and the tiling struct's fields. (:mod:`ascend_lab.kernel_runner` does the work.)

Exit codes: 0 the kernel ran to the end (warnings or not); 1 a finding or an error stopped it; 2 a kernel the front
end refuses (the compiler-style message with file:line:column and a caret on stderr) or a bad argument.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base.platform import DEFAULT_SOC
from .cli_args import PROG, CliError, int_arg, positive_arg, soc_arg

__all__ = ["add_kernel_parser", "cmd_kernel_run", "cmd_kernel_show"]


def _compile(args: argparse.Namespace) -> Any:
    from .ascendc import cxx  # deferred: tree-sitter loads only for the kernel commands
    from .kernel_runner import RunError, np_dtype, parse_pairs  # deferred: with the front end
    path = _entry_file(Path(args.file))
    try:
        defines = parse_pairs(args.define, "--define", default="1")
    except RunError as exc:
        raise CliError(str(exc)) from None
    # the DTYPE_<INPUT> macros a build defines from the op definition: the run's --dtype unless -D names them
    macros = [m for m in _dtype_macros(path) if m not in defines]
    if macros:
        try:
            dtype = cxx.kernel.c_type_name(np_dtype(getattr(args, "dtype", None) or "float32"))
        except RunError as exc:
            raise CliError(str(exc)) from None
        defines.update(dict.fromkeys(macros, dtype))
    return cxx.compile(path, defines=defines or None, entry=args.entry)


def _entry_file(path: Any) -> Any:
    """The kernel's ``.cpp``: the file given, or in a kernel folder (ops-nn's ``op_kernel/``) the one ``.cpp`` that
    defines a ``__global__`` entry."""
    if path.is_file():
        return path
    if not path.is_dir():
        raise CliError(f"no kernel file or folder {str(path)!r}")
    entries = sorted(p for p in path.rglob("*.cpp") if "__global__" in p.read_text(encoding="utf-8", errors="replace"))
    if len(entries) != 1:
        found = ", ".join(str(p.relative_to(path)) for p in entries) or "none"
        raise CliError(f"{path} holds {len(entries)} kernel entries ({found}): name the .cpp to run")
    return entries[0]


def _dtype_macros(path: Any) -> list[str]:
    """The ``DTYPE_<INPUT>`` names the kernel's folder uses (the build defines one per input of the op)."""
    names: set[str] = set()
    for f in path.parent.rglob("*"):
        if f.suffix in (".cpp", ".h", ".hpp"):
            names.update(re.findall(r"\bDTYPE_[A-Z0-9_]+\b", f.read_text(encoding="utf-8", errors="replace")))
    return sorted(names)


def _guarded(body: Callable[[argparse.Namespace, Callable[[str], None]], int]) -> Callable[..., int]:
    """Run ``body``; a KernelCompileError is printed as the compiler prints it (exit 2), a RunError is a CliError."""
    def command(args: argparse.Namespace, out: Callable[[str], None]) -> int:
        from .ascendc.cxx import KernelCompileError  # deferred: with the front end
        from .kernel_runner import RunError  # deferred: with the front end
        try:
            return body(args, out)
        except KernelCompileError as exc:
            print(str(exc), file=sys.stderr)
            print(f"{PROG}: error: {args.file} did not compile", file=sys.stderr)
            return 2
        except RunError as exc:
            raise CliError(str(exc)) from None
    command.__name__ = body.__name__
    return command


def _kernel_run(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    from .kernel_runner import RunSpec, parse_pairs, run  # deferred: the front end loads tree-sitter
    spec = RunSpec(tiling=parse_pairs(args.tiling, "--tiling"), template=parse_pairs(args.template, "--template"),
                   inputs=parse_pairs(args.input, "--input"), n=args.n, dtype=args.dtype, soc=args.soc,
                   block_dim=args.block_dim, seed=args.seed, output=args.output, trace=args.trace)
    kernel = _compile(args)
    return run(kernel, spec, out)


def _kernel_show(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    from .kernel_runner import parse_pairs, show  # deferred: the front end loads tree-sitter
    return show(_compile(args), parse_pairs(args.template, "--template"), out)


cmd_kernel_run = _guarded(_kernel_run)
cmd_kernel_show = _guarded(_kernel_show)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.cpp|DIR", help="the kernel's .cpp (its #include \"...\" are found beside it), "
                   "or its folder (ops-nn's op_kernel/: the .cpp with the __global__ entry)")
    p.add_argument("--template", nargs="+", action="extend", default=[], metavar="K=V",
                   help="template arguments of the entry (schMode=1), tilingKey=N for TILING_KEY_IS")
    p.add_argument("--define", "-D", action="append", default=[], metavar="K=V",
                   help="a macro, as the build defines it (-D DTYPE_X=half; -D K alone is 1); repeat for more")
    p.add_argument("--entry", default=None, help="the __global__ function to run when the file has several")


def add_kernel_parser(sub: Any) -> None:
    """``ascend-lab kernel run|show`` on the CLI's subparsers."""
    p = sub.add_parser("kernel", help="run or show an AscendC kernel written in C++",
                       description="An AscendC kernel written in C++: run it on the simulator with the sanitizer on, "
                                   "or show what the simulator executes.")
    ks = p.add_subparsers(dest="kernel_command", metavar="{run,show}", required=True)

    r = ks.add_parser("run", help="launch a kernel file on seeded random inputs; print findings, cycles, UB use",
                      description="Launch a C++ kernel file with the sanitizer on: findings (at their C++ line), "
                                  "cycles, UB use per core, an output summary.")
    _common(r)
    r.add_argument("--tiling", nargs="+", action="extend", default=[], metavar="FIELD=VALUE",
                   help="tiling struct fields (the rest keep the struct's defaults)")
    r.add_argument("--input", nargs="+", action="extend", default=[], metavar="NAME=SHAPE:DTYPE",
                   help="a GM argument's shape and dtype (x=4096:float16) or its data (x=x.npy); default random")
    r.add_argument("--n", type=lambda s: int_arg(s, "the element count", 0), default=None,
                   help="elements per GM argument (default: the tiling's totalLength)")
    r.add_argument("--dtype", default="float32", help="element type of the GM arguments (default float32)")
    r.add_argument("--output", default=None, metavar="NAME", help="the GM argument the kernel writes (default: "
                                                                  "the last before workspace)")
    r.add_argument("--soc", type=soc_arg, default=None, help=f"SoC (default {DEFAULT_SOC})")
    r.add_argument("--block-dim", type=positive_arg("the block dim"), default=1, help="cores launched (default 1)")
    r.add_argument("--seed", type=lambda s: int_arg(s, "the seed", 0), default=0, help="random seed (default 0)")
    r.add_argument("--trace", default=None, metavar="PATH", help="record every instruction; write a Chrome trace")
    r.set_defaults(func=cmd_kernel_run)

    s = ks.add_parser("show", help="print the translated Python (what the simulator executes) and the tiling fields",
                      description="Print what the simulator executes for a C++ kernel file, and its tiling struct.")
    _common(s)
    s.set_defaults(func=cmd_kernel_show)
