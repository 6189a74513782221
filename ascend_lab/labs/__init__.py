"""Hands-on labs: write a piece of an aclnn operator, and let a checker tell you what is wrong with it.

Each lab is a notebook in the book's "Labs" part (``labs/NN_*.md``) backed by a module here that holds
the lab's oracle and its ``check`` function::

    from ascend_lab.labs import lab1_checks as lab1
    report = lab1.check(my_softplus_backward_checks)   # a Report: prints/renders the first failing case
    report.passed

``checker`` is the machinery every lab shares (cases, the battery runner, the report, the hook for
kernel labs); ``notebook`` reads and runs the notebooks' tagged cells; ``solutions`` holds the
reference solutions (spoilers). :data:`LABS` lists the labs in book order; ``tests/test_labs.py`` runs
every entry: the solution must pass its checker and the untouched skeleton must fail it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

__all__ = ["LABS", "Lab", "get"]


@dataclass(frozen=True)
class Lab:
    """One lab: its number, title, checker module, notebook (relative to the repository root) and the
    name of the function the learner writes (the same name in :mod:`ascend_lab.labs.solutions`)."""

    number: int
    title: str
    module: str
    notebook: str
    function: str

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


LABS: tuple[Lab, ...] = (
    Lab(1, "The checks of a new operator: aclnnSoftplusBackward", "ascend_lab.labs.lab1_checks",
        "labs/01_checks.md", "softplus_backward_checks"),
    Lab(2, "Dtype reasoning: promote, compute and Cast in HardsigmoidBackward", "ascend_lab.labs.lab2_dtypes",
        "labs/02_dtypes.md", "hardsigmoid_dtype_plan"),
    Lab(3, "A HardSigmoidGrad-style tiling for SoftplusGrad", "ascend_lab.labs.lab3_tiling",
        "labs/03_tiling.md", "softplus_grad_tiling"),
    Lab(4, "Big and small cores with 512-byte blocks", "ascend_lab.labs.lab4_big_small_cores",
        "labs/04_big_small_cores.md", "threshold_grad_512_tiling"),
)


def get(number: int) -> Lab:
    """The lab with this number."""
    for lab in LABS:
        if lab.number == number:
            return lab
    raise KeyError(f"no lab {number}; labs: {[lab.number for lab in LABS]}")
