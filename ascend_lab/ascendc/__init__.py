"""``ascend_lab.ascendc`` — the simulated AI Core and its AscendC-like programming model."""

from .options import options

__all__ = ["options"]
