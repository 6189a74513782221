"""The lab kit: the checkers behind the book's hands-on labs, kept apart from the ``ascend_lab`` package.

Each lab is a notebook in the book's "Labs" part (``labs/NN_*.md``) backed by a module here that holds
the lab's oracle and its ``check`` function::

    from labkit import lab1_checks as lab1
    report = lab1.check(my_softplus_backward_checks)   # a Report: prints/renders the first failing case
    report.passed

This is course material, not part of the system it teaches: it lives in the repository's ``labs/``
folder, next to the notebooks, and is not in the installed ``ascend_lab`` wheel; ``ascend_lab`` never
imports it. A notebook imports it because Jupyter runs it with ``labs/`` as the working directory; the
tests put ``labs/`` on ``sys.path`` (the repository's ``conftest.py``). The kit uses only public names
of ``ascend_lab``.

``checker`` is the machinery every lab shares (cases, the battery runner, the report, the hook for
kernel labs); ``notebook`` reads and runs the notebooks' tagged cells; ``solutions`` holds the
reference solutions (spoilers). Labs 5-8 are kernel labs: the learner's code runs on the simulated AI
Core (``lab5_copy_compute`` holds their shared plumbing), and lab 8 builds a whole operator.
:data:`LABS` lists the labs in book order; ``tests/test_labs.py`` runs
every entry: the solution must pass its checker and the untouched skeleton must fail it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ascend_lab.ascendc.errors import add_library_dir

__all__ = ["LABS", "Lab", "get"]

# The kit's own code (checkers, reference kernels, launch helpers) is library code to the package's walk for the
# learner's line: a finding raised while the kit runs a learner's kernel names the learner's line, never a kit file.
add_library_dir(Path(__file__).resolve().parent)


@dataclass(frozen=True)
class Lab:
    """One lab: its number, title, checker module, notebook (relative to the repository root) and the
    name of the function the learner writes (the same name in :mod:`labkit.solutions`)."""

    number: int
    title: str
    module: str
    notebook: str
    function: str

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


LABS: tuple[Lab, ...] = (
    Lab(1, "The checks of a new operator: aclnnSoftplusBackward", "labkit.lab1_checks",
        "labs/01_checks.md", "softplus_backward_checks"),
    Lab(2, "Dtype reasoning: promote, compute and Cast in HardsigmoidBackward", "labkit.lab2_dtypes",
        "labs/02_dtypes.md", "hardsigmoid_dtype_plan"),
    Lab(3, "A HardSigmoidGrad-style tiling for SoftplusGrad", "labkit.lab3_tiling",
        "labs/03_tiling.md", "softplus_grad_tiling"),
    Lab(4, "Big and small cores with 512-byte blocks", "labkit.lab4_big_small_cores",
        "labs/04_big_small_cores.md", "threshold_grad_512_tiling"),
    Lab(5, "CopyIn, Compute and CopyOut of a LeakyReluGrad kernel", "labkit.lab5_copy_compute",
        "labs/05_copy_compute.md", "KernelLeakyReluGrad"),
    Lab(6, "One kernel, a new bug each round: the sanitizer, then outputs and the trace", "labkit.lab6_sanitizer",
        "labs/06_sanitizer.md", "fix_round"),
    Lab(7, "From single to double buffering, measured from the trace", "labkit.lab7_double_buffer",
        "labs/07_double_buffer.md", "double_buffering"),
    Lab(8, "Capstone: aclnnSoftshrinkBackward end to end", "labkit.lab8_capstone", "labs/08_capstone.md",
        "softshrink_backward"),
    Lab(9, "PReLU's backward as a DAG on the atvoss template", "labkit.lab9_prelu_dag", "labs/09_prelu_dag.md",
        "prelu_grad_update_dag"),
    Lab(10, "The int8 ThresholdGradV2D kernel from the tiling and the dtype rules", "labkit.lab10_int8_threshold",
        "labs/10_int8_threshold_kernel.md", "KernelThresholdGradV2DInt8"),
    Lab(11, "Tuning BUFFER_NUM and the tile size for the cost model", "labkit.lab11_tuning", "labs/11_tuning.md",
        "choose_plan"),
    Lab(12, "A threshold broadcast along the rows", "labkit.lab12_broadcast", "labs/12_broadcast.md",
        "row_threshold"),
)


def get(number: int) -> Lab:
    """The lab with this number."""
    for lab in LABS:
        if lab.number == number:
            return lab
    raise KeyError(f"no lab {number}; labs: {[lab.number for lab in LABS]}")
