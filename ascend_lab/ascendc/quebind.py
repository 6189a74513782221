"""``TQueBind<src, dst, depth>``: one queue whose blocks make two hand-overs, as the ops-nn in-place activation
kernels use it (ReluV2, SigmoidV2, SwishV2, HardSigmoidV2 ...: ``TQueBind<VECIN, VECOUT, 1>``).

A block of a VECIN -> VECOUT bind is filled by MTE2, computed on in place by V and drained by MTE3, with the positions
named at each call (asc-devkit ``include/basic_api/kernel_tpipe.h``: ``EnQue<srcUserPos, dstUserPos, T>``,
``DeQue<srcUserPos, dstUserPos, T>``):

================================  ===============================================================
call                              hand-over (the flags of :mod:`.pipe`'s table)
================================  ===============================================================
AllocTensor                       MTE2 waits until MTE3 freed the block
EnQue<GM, VECIN>  / DeQue<GM, VECIN>      MTE2 -> V: V waits for the copy-in
EnQue<VECOUT, GM> / DeQue<VECOUT, GM>     V -> MTE3: MTE3 waits for the result
FreeTensor                        the block is free once MTE3 is done with it
================================  ===============================================================

Everything else -- round-robin blocks, depth, the sanitizer's ownership and misuse checks -- is :class:`.TQue`'s.
"""

from __future__ import annotations

from typing import Any

from .pipe import TPosition, TQue
from .tensor import LocalTensor

__all__ = ["TQueBind"]

#: (src, dst) of a call -> (the pipe that hands the block over, the pipe that takes it)
_STAGES = {("GM", "VECIN"): ("MTE2", "V"), ("VECOUT", "GM"): ("V", "MTE3")}


def _name(pos: Any) -> str:
    return pos.value if isinstance(pos, TPosition) else str(pos)


class TQueBind(TQue):
    """``TQueBind<VECIN, VECOUT, depth>``: ``TQueBind(VECIN, VECOUT, depth)``; the other binds are not modelled."""

    def __init__(self, src: Any, dst: Any, depth: int = 1, name: str | None = None):
        if (_name(src), _name(dst)) != ("VECIN", "VECOUT"):
            raise ValueError(f"TQueBind<{_name(src)}, {_name(dst)}> is not modelled: the simulator models the "
                             "vector core's VECIN -> VECOUT bind")
        super().__init__(TPosition.VECIN, depth, name)
        self.producer, self.consumer = "MTE2", "MTE3"     # AllocTensor waits for MTE3's FreeTensor

    def _stage(self, src: Any, dst: Any) -> tuple[str, str]:
        stage = _STAGES.get((_name(src), _name(dst)))
        if stage is None:
            raise ValueError(f"TQueBind<VECIN, VECOUT> hands a block over GM -> VECIN or VECOUT -> GM, not "
                             f"{_name(src)} -> {_name(dst)}")
        return stage

    def EnQue(self, t: LocalTensor, src: Any = "GM", dst: Any = "VECIN") -> bool:
        """``EnQue<src, dst, T>(t)``: the flag of the hand-over ``src -> dst``."""
        self.producer, self.consumer = self._stage(src, dst)
        try:
            return super().EnQue(t)
        finally:
            self.producer, self.consumer = "MTE2", "MTE3"

    def DeQue(self, dtype: Any = None, src: Any = "GM", dst: Any = "VECIN") -> LocalTensor:
        """``DeQue<src, dst, T>()``: the taking pipe waits for the hand-over ``src -> dst``."""
        self.producer, self.consumer = self._stage(src, dst)
        self.is_vecin = self.producer == "MTE2"           # the vector unit starts on this tile
        try:
            return super().DeQue(dtype)
        finally:
            self.producer, self.consumer = "MTE2", "MTE3"
