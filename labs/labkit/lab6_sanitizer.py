"""Lab 6 -- one kernel, a new bug each round: find it from the sanitizer's report, then from outputs and the trace.

The kernel is HardtanhGrad in AscendC C++ (``gradInput = min_val < self < max_val ? gradOutput : 0``, float32 and
float16, double-buffered, lab 5's layout; the tiling struct is ``labs/hardtanh_grad_tiling.h``). A session of the
lab (:func:`session`) draws its rounds from a seed taken from ``os.urandom``: each round is that kernel with ONE bug
put in, drawn from a family of bugs new AscendC engineers make, at a place drawn too. Two learners -- or two
sessions -- get different kernels, and no kernel holds the answer to another: there is nothing to diff against.

* Rounds 1 to 3 run with the sanitizer on, each with a bug of a different kind: the report names the finding, the
  instruction, the core and tile, and the learner's line -- which is not always the line of the bug.
* Round 4 runs with the sanitizer off: the report shows only what a device would, the first wrong element with its
  core, tile and inputs, the instructions of that tile from the trace, and the copies that wrote the element.

Each round writes its kernel to ``lab6_rounds/session<seed>/round<k>.cpp`` beside the notebook; the learner edits
that file. The learner's function ``fix_round(rnd) -> kernel`` hands over the compiled fix of round ``rnd``
(``rnd.load()``), and ``check(fix_round, seed=S)`` runs every round of the session with seed ``S`` over a battery
(sizes with tails, one core with many tiles, several cores, both dtypes, full tiles, other bounds, a second SoC),
compares every bit with :func:`oracle`, checks that the fix kept the tiling's UB plan, and that it is an edit of
that round's kernel (at most :data:`MAX_EDIT` lines changed: one bug, one fix). What the bugs are, and their fixes,
is written only in ``labkit.solutions`` (spoilers).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ascend_lab import standalone
from ascend_lab.ascendc import KernelRun, launch
from ascend_lab.base import platform
from ascend_lab.base.platform import SocInfo
from ascend_lab.dtypes import as_acl_dtype, to_numpy
from ascend_lab.opdev.tiling_data import TilingData, TilingError, ceil_div, float32, floor_align, int64
from ascend_lab.ops.common.kernel_args import gm_from_array

from . import checker
from .checker import Case, Report, answer_key, draw_seed, run_battery
from .lab5_copy_compute import (
    LAB_DIR,
    REFERENCE_DIR,
    compare_kernel_output,
    compile_kernel,
    is_cxx,
    launch_kernel,
    queue_plan,
    sample,
    usable_ub,
)

__all__ = ["DTYPES", "FUNCTION", "MAX_EDIT", "ROUNDS", "HardtanhGradTilingData", "Round", "Session", "cases", "check",
           "draw_rounds", "oracle", "round_cases", "session", "tiling"]

FUNCTION = "fix_round"
TITLE = "Lab 6 \u00b7 One kernel, a new bug each round"
DTYPES = ("float32", "float16")
SCH_MODE = {"float32": 0, "float16": 1}
UB_SLOTS = 7                   # 3 queues x 2 blocks + the mask budgeted as a slot
REPEAT_BYTES = 256
ROUNDS = 4                     # rounds 1-3 with the sanitizer on, round 4 with it off
MAX_EDIT = 6                   # lines a fix may change in its round's kernel
SOC = "Ascend910B4"
#: The kernel without a bug (a spoiler): every round's kernel is this text with one bug put in.
CLEAN_KERNEL = REFERENCE_DIR / "lab6_hardtanh_grad.cpp"
#: Where a session writes its rounds: ``labs/lab6_rounds/session<seed>/round<k>.cpp`` (one folder per session).
FOLDER = LAB_DIR / "lab6_rounds"


# --------------------------------------------------------------------------------------------------
# host side (given)
# --------------------------------------------------------------------------------------------------
class HardtanhGradTilingData(TilingData):
    """``HardtanhGradTilingData`` of ``hardtanh_grad_tiling.h`` (3 x int64 + 2 x float = 32 bytes)."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    minVal: float32
    maxVal: float32


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int, min_val: float = -1.0,
           max_val: float = 1.0) -> HardtanhGradTilingData:
    """HardSigmoidGrad's scheme with 7 slots of T per element and ``ubFactor`` in whole 256-byte repeats;
    ``ub_size`` is the usable UB."""
    dt = as_acl_dtype(dtype).short
    if dt not in DTYPES or core_num <= 0 or total_length <= 0:
        raise TilingError(f"cannot tile {total_length} {dt} elements on {core_num} cores")
    size = to_numpy(as_acl_dtype(dt)).itemsize
    block_factor = ceil_div(total_length, core_num)
    ub_factor = floor_align((ub_size // size) // UB_SLOTS, REPEAT_BYTES // size)
    if ub_factor <= 0:
        raise TilingError(f"ub_size {ub_size} B is too small")
    return HardtanhGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                  minVal=min_val, maxVal=max_val, blockDim=ceil_div(total_length, block_factor),
                                  tilingKey=SCH_MODE[dt])


@answer_key
def oracle(grad: np.ndarray, x: np.ndarray, min_val: float = -1.0, max_val: float = 1.0) -> np.ndarray:
    """``min_val < x < max_val ? grad : 0`` with both bounds converted to T (NaN and the bounds give 0)."""
    t = grad.dtype.type
    lo, hi = t(np.float32(min_val)), t(np.float32(max_val))
    return np.where((x > lo) & (x < hi), grad, t(0))


# --------------------------------------------------------------------------------------------------
# the family of bugs
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Bug:
    """One bug: the line of the clean kernel it changes (``old``) and what it puts there (``new``; "" removes the
    line). ``kind`` names the family member, never shown to the learner."""

    kind: str
    old: str
    new: str


def _variants(kind: str, pairs: list[tuple[str, str]]) -> list[_Bug]:
    return [_Bug(kind, old, new) for old, new in pairs]


_QUEUES = ("inQueueGrad", "inQueueSelf", "outQueue")
_COPY_IN = (("grad", "gradGm"), ("x", "selfGm"))
#: Bugs the sanitizer stops (rounds 1-3): one kind per round, the variant drawn.
_SANITIZER_BUGS: dict[str, list[_Bug]] = {
    "bytes twice": _variants("bytes twice", [
        (f"pipe.InitBuffer({q}, BUFFER_NUM, tileBytes);", f"pipe.InitBuffer({q}, BUFFER_NUM, tileBytes * sizeof(T));")
        for q in _QUEUES]),
    "DataCopy of a tail": _variants("DataCopy of a tail", [
        *((f"DataCopyPad({t}, {gm}[i * ubFactor], params, pad);", f"DataCopy({t}, {gm}[i * ubFactor], n);")
          for t, gm in _COPY_IN),
        ("DataCopyPad(gradInputGm[i * ubFactor], out, params);", "DataCopy(gradInputGm[i * ubFactor], out, n);")]),
    "missing FreeTensor": _variants("missing FreeTensor", [
        ("inQueueGrad.FreeTensor(grad);", ""), ("inQueueSelf.FreeTensor(x);", ""), ("outQueue.FreeTensor(out);", "")]),
    "GM offset in bytes": _variants("GM offset in bytes", [
        ("int64_t offset = td.blockFactor * blockIdx;", "int64_t offset = td.blockFactor * blockIdx * sizeof(T);")]),
    "mask of a fixed size": _variants("mask of a fixed size", [
        ("int64_t maskBytes = ((ubFactor + 7) / 8 + 31) / 32 * 32;", f"int64_t maskBytes = {size};")
        for size in (128, 256)]),
    "compare not whole repeats": _variants("compare not whole repeats", [
        (f"CompareScalar(mask, x, {v}, CMPMODE::{m}, nAligned);", f"CompareScalar(mask, x, {v}, CMPMODE::{m}, n);")
        for v, m in (("minVal", "GT"), ("maxVal", "LT"))]),
}
#: Bugs a device runs through without a word (round 4, the sanitizer off): only outputs and the trace show them.
_SILENT_BUGS: dict[str, list[_Bug]] = {
    "bound included": _variants("bound included", [
        (f"CompareScalar(mask, x, {v}, CMPMODE::{m}T, nAligned);",
         f"CompareScalar(mask, x, {v}, CMPMODE::{m}E, nAligned);") for v, m in (("minVal", "G"), ("maxVal", "L"))]),
    "wrong attribute": _variants("wrong attribute", [
        ("maxVal = static_cast<T>(td.maxVal);", "maxVal = static_cast<T>(td.minVal);"),
        ("minVal = static_cast<T>(td.minVal);", "minVal = static_cast<T>(td.maxVal);")]),
    "tile offset": _variants("tile offset", [
        ("DataCopyPad(gradInputGm[i * ubFactor], out, params);", "DataCopyPad(gradInputGm[i * n], out, params);")]),
    # (the second compare only: with the first one short, Select reads mask bits no instruction wrote, ub-uninit)
    "compare not whole repeats": _SANITIZER_BUGS["compare not whole repeats"][1:],
}


# --------------------------------------------------------------------------------------------------
# rounds and the session
# --------------------------------------------------------------------------------------------------
def _header(number: int, seed: int, sanitizer: bool) -> str:
    mode = "the sanitizer on" if sanitizer else "the sanitizer OFF: find the bug from the outputs and the trace"
    return (f"// Lab 6, round {number} of session {seed} ({mode}).\n"
            "// This kernel has ONE bug. Fix it here, changing only the lines the fix needs, then run its cell.")


@dataclass
class Round:
    """One round: the broken kernel as handed out (``source``), whether the sanitizer is on, and the file the learner
    edits (``path``). The bug itself is not an attribute: :func:`check` draws it again from the seed."""

    number: int
    seed: int
    sanitizer: bool
    source: str
    folder: Path = field(default_factory=lambda: FOLDER)

    @property
    def path(self) -> Path:
        return self.folder / f"round{self.number}.cpp"

    def write(self, *, again: bool = False) -> Path:
        """Write the round's kernel to :attr:`path` unless the file already holds this round of this session (your
        edits stay); ``again=True`` starts over from the broken kernel."""
        self.folder.mkdir(parents=True, exist_ok=True)
        first = self.source.partition("\n")[0]
        if again or not self.path.exists() or self.path.read_text(encoding="utf-8").partition("\n")[0] != first:
            self.path.write_text(self.source, encoding="utf-8")
        return self.path

    def load(self) -> Any:
        """Your kernel of this round: :attr:`path`, compiled (written first when it is not there yet)."""
        self.write()
        return compile_kernel(self.path.resolve())

    def report(self, kernel: Any = None) -> Report:
        """This round's battery on ``kernel`` (default: :meth:`load`), as a Report: the first case that fails."""
        def yours(rnd: Round) -> Any:
            return kernel if kernel is not None else rnd.load()

        return run_battery(yours, round_cases(self, _Kernels(yours)),
                           title=f"Lab 6 \u00b7 round {self.number}" + ("" if self.sanitizer else " (sanitizer off)"),
                           refuse_reference=True)

    def __repr__(self) -> str:
        mode = "sanitizer on" if self.sanitizer else "sanitizer OFF"
        return f"Round {self.number} of session {self.seed} ({mode}): edit {self.path}"


def _clean() -> str:
    return CLEAN_KERNEL.read_text(encoding="utf-8").split("\n", 2)[2]      # without the spoiler's two comment lines


def _bugs(seed: int) -> list[_Bug]:
    rng = np.random.default_rng(seed)
    kinds = list(_SANITIZER_BUGS)
    drawn = [_SANITIZER_BUGS[kinds[int(k)]] for k in rng.choice(len(kinds), ROUNDS - 1, replace=False)]
    drawn.append(list(_SILENT_BUGS.values())[int(rng.integers(len(_SILENT_BUGS)))])
    return [variants[int(rng.integers(len(variants)))] for variants in drawn]


def _inject(text: str, bug: _Bug) -> str:
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.strip() == bug.old)
    if bug.new:
        lines[index] = lines[index].replace(bug.old, bug.new)
    else:
        del lines[index]
    return "\n".join(lines)


def draw_rounds(seed: int, folder: str | Path | None = None) -> list[Round]:
    """The rounds of the session with ``seed``: the kernel with one bug each (rounds 1-3 of different kinds,
    the sanitizer on; round 4 with it off). Their files go to ``folder`` (default ``FOLDER / session<seed>``)."""
    clean = _clean()
    where = Path(folder) if folder is not None else FOLDER / f"session{seed}"
    return [Round(k, seed, k < ROUNDS, _header(k, seed, k < ROUNDS) + "\n" + _inject(clean, bug), where)
            for k, bug in enumerate(_bugs(seed), 1)]


@dataclass
class Session:
    """The rounds of one session, drawn at its start (``seed`` from ``os.urandom`` unless given)."""

    seed: int
    rounds: list[Round]

    def __getitem__(self, number: int) -> Round:
        return self.rounds[number - 1]

    def __repr__(self) -> str:
        return (f"Lab 6 session {self.seed}: {len(self.rounds)} rounds, in {self.rounds[0].folder}/ "
                f"(lab6.session(seed={self.seed}) draws the same rounds again)")


def session(seed: int | None = None, folder: str | Path | None = None) -> Session:
    """Start a session: draw its rounds (a fresh seed unless ``seed`` resumes one) and write each round's kernel
    beside the notebook (a file you already edited for this session is kept)."""
    seed = draw_seed(seed)
    rounds = draw_rounds(seed, folder)
    for rnd in rounds:
        rnd.write()
    return Session(seed, rounds)


# --------------------------------------------------------------------------------------------------
# the battery of one round
# --------------------------------------------------------------------------------------------------
@dataclass
class _Kernels:
    """The learner's kernel of each round, asked for once per check (``fn(rnd)`` runs inside the round's first case,
    where the checker's guards apply)."""

    fn: Any
    got: dict[int, Any] = field(default_factory=dict)

    def of(self, rnd: Round) -> Any:
        if rnd.number not in self.got:
            kernel = self.fn(rnd) if callable(self.fn) else self.fn
            if not is_cxx(kernel):
                raise TypeError(f"fix_round(rnd) must return round {rnd.number}'s C++ kernel (rnd.load() compiles "
                                f"{rnd.path}); got {type(kernel).__name__}")
            behind = checker.reference_behind(kernel)
            if behind and not checker._REFERENCE_ALLOWED[0]:
                raise checker.ReferenceUsed(f"you called the reference: round {rnd.number}'s kernel {behind}; edit "
                                            f"{rnd.path} instead")
            self.got[rnd.number] = kernel
        return self.got[rnd.number]


@dataclass
class _Silent:
    """What a run with the sanitizer off gives a learner: the output and the trace (no findings)."""

    out: np.ndarray
    run: KernelRun

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.out


def _launch(kernel: Any, td: HardtanhGradTilingData, arrays: dict[str, np.ndarray], soc: SocInfo,
            sanitizer: bool) -> Any:
    run, out = launch_kernel(kernel, td, list(arrays.values()), arrays["grad"].dtype, soc, strict=sanitizer,
                             record=not sanitizer, D_T=arrays["grad"].dtype, kernel_name="HardtanhGrad")
    return out if sanitizer else _Silent(out, run)


def _tile_trace(run: KernelRun, core: int, tile: int) -> list[str]:
    """The instructions of one tile of one core, as the trace recorded them (pipe, instruction, count, operands)."""
    lines = []
    for e in run.trace.events:
        if e.core == core and e.tile == tile and e.pipe in ("MTE2", "V", "MTE3"):
            lines.append(f"  {e.pipe:<4} {e.instr:<14} {e.count:>6} elements  {e.detail}".rstrip())
    return lines[:12]


def _writers(run: KernelRun, element: int, itemsize: int) -> list[str]:
    """Every copy-out of the trace that wrote the GM bytes of output ``element`` (its detail names the GM byte)."""
    at, out = element * itemsize, []
    for e in run.trace.events:
        m = re.search(r"GM \w+\+(\d+)", e.detail) if e.pipe == "MTE3" else None
        if m and int(m.group(1)) <= at < int(m.group(1)) + e.nbytes:
            out.append(f"  core {e.core}, tile {e.tile}: {e.instr} of {e.count} elements, {e.detail}")
    return out


def _silent_compare(arrays: dict[str, np.ndarray], td: HardtanhGradTilingData) -> Callable[[Any, Any], str | None]:
    from ascend_lab.ops.hard_sigmoid_grad import op_host as hsg_host

    ranges = hsg_host.core_ranges(td)
    plain = compare_kernel_output(arrays, checker.locator(ranges))

    def compare(expected: Any, got: Any) -> str | None:
        if not isinstance(got, _Silent):
            return plain(expected, got)
        why = plain(expected, got.out)
        if why is None:
            return None
        first = int(np.flatnonzero(expected.view(f"u{expected.itemsize}") != got.out.view(f"u{got.out.itemsize}"))[0])
        where = next(((r["core"], t) for r in ranges for (t, start, length) in r["tiles"]
                      if start <= first < start + length), None)
        if where is not None:
            why += f"\nthe trace of core {where[0]}, tile {where[1]} (the sanitizer is off in this round):\n" + \
                "\n".join(_tile_trace(got.run, *where))
        writers = _writers(got.run, first, got.out.itemsize)
        why += (f"\nthe copies that wrote element {first} to GM, in order:\n" + "\n".join(writers)) if writers else \
            f"\nno copy-out of the trace wrote element {first}"
        return why
    return compare


def _kernel_case(rnd: Round, kernels: _Kernels, name: str, n: int, dtype: str, soc_name: str = SOC, *,
                 core_num: int | None = None, tiling_ub: int | None = None, seed: int = 0, min_val: float = -1.0,
                 max_val: float = 1.0) -> Case:
    soc = standalone.make_soc(soc_name, core_num)
    td = tiling(n, dtype, soc.vector_core_num, tiling_ub or usable_ub(soc), min_val, max_val)
    g = sample(n, dtype, seed, -2.0, 2.0)
    x = sample(n, dtype, seed + 1, -2.0, 2.0, edges=(min_val, max_val, 0.0))
    arrays = {"grad": g, "self": x}
    shown = {"round": rnd.number, "N": n, "dtype": dtype, "soc": soc.name, "cores": soc.vector_core_num,
             "tiling": f"blockFactor {td.blockFactor}, ubFactor {td.ubFactor}, blockDim {td.blockDim}",
             "min_val": min_val, "max_val": max_val}

    def call(_fn: Any, _inputs: dict[str, Any]) -> Any:
        return _launch(kernels.of(rnd), td, arrays, soc, rnd.sanitizer)

    def show(v: Any) -> str:
        out = v.out if isinstance(v, _Silent) else v
        return f"{out.dtype}[{out.size}]" if isinstance(out, np.ndarray) else repr(out)

    hint = ("read the report: the finding's kind and numbers, the instruction, the core and tile, and your line -- "
            "then ask which line MADE that happen (it is not always the line that was stopped)") if rnd.sanitizer \
        else ("the sanitizer is off: which elements are wrong (core, tile, the inputs there), and which instruction "
              "of the tile's trace computed or moved them?")
    return Case(f"round {rnd.number}: {name}", shown, oracle(g, x, min_val, max_val),
                covers=(f"round:{rnd.number}", f"soc:{soc.name}", f"dtype:{dtype}"),
                call=call, compare=_silent_compare(arrays, td), show=show, hint=hint)


def _plan_case(rnd: Round, kernels: _Kernels, dtype: str) -> Case:
    info = platform.get_soc(SOC)
    n = 100_000
    td = tiling(n, dtype, info.vector_core_num, usable_ub(info))
    size = to_numpy(as_acl_dtype(dtype)).itemsize
    block = -(-td.ubFactor * size // 32) * 32

    def call(_fn: Any, _inputs: dict[str, Any]) -> dict[str, Any]:
        args = [gm_from_array(np.zeros(n, to_numpy(as_acl_dtype(dtype))), name) for name in ("gradOutput", "self")]
        args.append(gm_from_array(None, "gradInput", nbytes=n * size))
        planned = launch(kernels.of(rnd), td.blockDim, args, td.to_bytes(), info, outputs=(2,), cores=[0],
                         plan_only=True, D_T=np.dtype(to_numpy(as_acl_dtype(dtype))))
        return {q: (blocks, b) for q, (_, blocks, b) in queue_plan(planned.trace.ub_layout.get(0, [])).items()}

    expected = {q: (2, block) for q in _QUEUES}

    def compare(exp: Any, got: Any) -> str | None:
        if got == exp:
            return None
        return (f"your plan: {got}; the tiling plans 2 blocks of ubFactor x sizeof(T) = {block} B per queue. Fix the "
                "bug and keep the plan: a fix that shrinks the queues trades the bug for a slower kernel")

    return Case(f"round {rnd.number}: the fix keeps the tiling's UB plan ({dtype}, 100000 elements)",
                {"round": rnd.number, "dtype": dtype}, expected, covers=(f"round:{rnd.number}",), call=call,
                compare=compare)


def _code_lines(text: str) -> list[str]:
    """The lines of a kernel that are code: stripped, without comments and blank lines."""
    out = []
    for line in re.sub(r"/\*.*?\*/", "", text, flags=re.S).split("\n"):
        code = line.split("//", 1)[0].strip()
        if code:
            out.append(code)
    return out


def _edit_case(rnd: Round, kernels: _Kernels) -> Case:
    def call(_fn: Any, _inputs: dict[str, Any]) -> list[str]:
        kernel = kernels.of(rnd)
        mine, given = _code_lines(kernel.sources[-1].text), _code_lines(rnd.source)
        return [line for line in difflib.unified_diff(given, mine, lineterm="", n=0)
                if line[:1] in "+-" and not line.startswith(("+++", "---"))]

    def compare(_exp: Any, got: Any) -> str | None:
        changed = sum(1 for line in got if line.startswith("-")) or sum(1 for line in got if line.startswith("+"))
        if changed <= MAX_EDIT:
            return None
        return (f"your kernel of round {rnd.number} changes {changed} lines of the kernel the round handed out (at "
                f"most {MAX_EDIT}): each round has one bug and its fix is a line or two. Edit {rnd.path} itself -- "
                "rnd.write(again=True) starts it over -- and change only what the bug needs")

    return Case(f"round {rnd.number}: your fix is an edit of round {rnd.number}'s kernel", {"round": rnd.number},
                f"at most {MAX_EDIT} lines changed", covers=(f"round:{rnd.number}",), call=call, compare=compare,
                show=lambda got: f"{len(got)} changed lines" if isinstance(got, list) else repr(got))


def round_cases(rnd: Round, kernels: _Kernels | None = None) -> list[Case]:
    """The battery of one round: the worked example first (its report is the round's message), then the sizes
    that show every bug of the family, the UB plan, and the edit."""
    k = kernels or _Kernels(lambda r: r.load())
    out = [
        _kernel_case(rnd, k, f"N = 1000 float32 on {SOC} (one short tile per core)", 1000, "float32"),
        _kernel_case(rnd, k, "N = 4097 float32 on one core, 4 KB tiling UB (33 tiles)", 4097, "float32", core_num=1,
                     tiling_ub=4096, seed=2),
        _kernel_case(rnd, k, "N = 100000 float32 (full tiles)", 100_000, "float32", seed=7),
        _kernel_case(rnd, k, "N = 3001 float16 on one core, 4 KB tiling UB", 3001, "float16", core_num=1,
                     tiling_ub=4096, seed=3),
        _kernel_case(rnd, k, "N = 3000 float32 on 3 cores, 4 KB tiling UB", 3000, "float32", core_num=3,
                     tiling_ub=4096, seed=4),
        _kernel_case(rnd, k, "min_val = -0.25, max_val = 3.5, N = 999 float16 on 4 cores", 999, "float16",
                     core_num=4, tiling_ub=4096, seed=6, min_val=-0.25, max_val=3.5),
        _kernel_case(rnd, k, "N = 5003 float16 on Ascend950PR", 5003, "float16", "Ascend950PR", seed=8),
    ]
    out += [_plan_case(rnd, k, dtype) for dtype in DTYPES]
    out.append(_edit_case(rnd, k))
    return out


def cases(seed: int = 0, fn: Any = None, folder: str | Path | None = None) -> list[Case]:
    """Every round's battery for the session with ``seed``, round 1 first (``fn(rnd)`` gives the kernels)."""
    kernels = _Kernels(fn if fn is not None else (lambda r: r.load()))
    return [c for rnd in draw_rounds(seed, folder) for c in round_cases(rnd, kernels)]


def check(fix_round: Any, *, seed: int | None = None, folder: str | Path | None = None) -> Report:
    """Run your fixed kernel of every round (``fix_round(rnd) -> kernel``, e.g. ``rnd.load()``) of the session with
    ``seed`` (yours: ``lab6.check(fix_round, seed=sess.seed)``) over the rounds' batteries; returns the Report.
    Without a seed the check draws a new session: only a function that fixes any round passes that."""
    seed = draw_seed(seed)
    report = run_battery(fix_round, cases(seed, fix_round, folder), title=TITLE, refuse_reference=True)
    report.seed = seed
    return report
