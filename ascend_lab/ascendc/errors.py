"""Errors the simulated AI Core raises when a kernel does what the hardware would break on."""

from __future__ import annotations

from ..opdev.executor import KernelLaunchError


class KernelError(KernelLaunchError):
    """A sanitizer finding that stops the kernel: names the kind, instruction, core and tile.

    Built by :mod:`.sanitizer`, which also fills ``hint`` (what to do about it) from its catalogue of
    kinds; ``str()`` is ``[kind] message (instruction ..., core ..., tile ...)``."""

    def __init__(self, message: str, *, instruction: str = "", core: int | None = None,
                 tile: int | None = None, kind: str = "", hint: str = ""):
        where = []
        if instruction:
            where.append(f"instruction {instruction}")
        if core is not None:
            where.append(f"core {core}")
        if tile is not None:
            where.append(f"tile {tile}")
        prefix = f"[{kind}] " if kind else ""
        suffix = f" ({', '.join(where)})" if where else ""
        super().__init__(f"{prefix}{message}{suffix}")
        self.kind = kind
        self.instruction = instruction
        self.core = core
        self.tile = tile
        self.detail = message
        self.hint = hint
