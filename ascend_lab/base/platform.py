"""The SoC catalogue and "the SoC in force" (``PlatformAscendC`` / ``GetCurrentPlatformInfo``).

A real process learns its SoC from the device it runs on; the simulator lets the reader choose one
(``acl.set_soc("Ascend910B4")`` or ``with acl.soc("Ascend950PR"): ...``). The catalogue lives in
``ascend_lab/data/platforms.ini`` so every figure is data with a source note, not a constant hidden in code.
"""

from __future__ import annotations

import configparser
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from importlib import resources

from . import context as _context

#: The catalogue file inside the package (``ascend_lab/data/platforms.ini``), read with importlib.resources
#: so an installed wheel finds it as an editable checkout does.
CATALOGUE = resources.files("ascend_lab.data").joinpath("platforms.ini")
DEFAULT_SOC = "Ascend910B4"


#: Bytes ``PlatformAscendC::GetCoreMemSize(UB)`` holds back on ASCEND910B-class SoCs (platform_ascendc.cpp).
LOCAL_RESERV_SIZE = 256


class NpuArch(IntEnum):
    """``GetCurNpuArch()`` values: the vector architecture generation."""
    DAV_1001 = 1001   # Ascend910 (training, coupled)
    DAV_2002 = 2002   # Ascend310P (inference, coupled)
    DAV_2201 = 2201   # Ascend910B / Ascend910_93 (A2 / A3, split AIC:AIV = 1:2)
    DAV_3002 = 3002   # Ascend310B
    DAV_3510 = 3510   # Ascend950 (arch35, "regbase")


class SocVersion(IntEnum):
    """opbase's enum; its *order* matters: HardsigmoidBackward tests ``ASCEND910B <= v <= ASCEND910E``."""
    ASCEND910 = 0
    ASCEND910B = 1
    ASCEND910_93 = 2
    ASCEND950 = 3      # also spelled ASCEND910_95
    ASCEND910E = 4
    ASCEND310 = 5
    ASCEND310P = 6
    ASCEND310B = 7
    ASCEND310C = 8
    ASCEND610LITE = 9
    KIRINX90 = 10
    KIRIN9030 = 11
    ASCEND350 = 12


@dataclass(frozen=True)
class SocInfo:
    """One catalogue entry: what tiling and the cost model read about a SoC, with a source note."""
    name: str
    product: str
    npu_arch: NpuArch
    soc_version: SocVersion
    family: str
    vector_core_num: int
    cube_core_num: int
    ub_size: int
    clock_mhz: int
    gm_bandwidth_gbps: int
    coupled: bool
    note: str
    #: The platform file this entry's facts come from (CANN 8.1.RC1 ``data/platform_config/<ini>``); "" when none.
    ini: str = ""
    #: ``[version] Short_SoC_version``: what ``get_soc_spec("SHORT_SOC_VERSION")`` returns, the key of the TBE DSL's
    #: per-SoC dtype tables and of ``util_soc_common``'s SoC lists.
    short_soc_version: str = ""
    #: The ini's ``[AICoreintrinsicDtypeMap]`` entries the TBE model consults (``intrinsic_check_support``), as
    #: ``(("Intrinsic_vcopy", (dtypes...)), ...)``; an intrinsic the ini does not list has an empty tuple.
    intrinsics: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Whether the vector unit runs in INF/NaN (IEEE 754) mode; False = saturation mode only
    #: (``util_soc_common.support_inf_nan()``).
    inf_nan_mode: bool = True

    def intrinsic_check_support(self, intrinsic: str, dtype: str = "") -> bool:
        """``tbe_platform.intrinsic_check_support``: whether the ini lists ``intrinsic`` (with ``dtype`` among its
        entries when given). ValueError for an intrinsic the catalogue does not record."""
        for name, dtypes in self.intrinsics:
            if name == intrinsic:
                return bool(dtypes) and (dtype == "" or dtype in dtypes)
        recorded = ", ".join(n for n, _ in self.intrinsics) or "none"
        raise ValueError(f"{self.name}: the catalogue does not record {intrinsic} (it records {recorded})")

    @property
    def core_mem_size_ub(self) -> int:
        """``GetCoreMemSize(UB)``: the UB bytes a tiling sees. CANN's platform layer keeps LOCAL_RESERV_SIZE = 256 B
        back "for kfc" when the SocVersion is ASCEND910B, which the string Ascend910_93 also maps to, so A2 and A3
        tilings see 196352 B of a 196608 B UB (kernel_flavours §6); other SoCs see the whole UB."""
        if self.soc_version in (SocVersion.ASCEND910B, SocVersion.ASCEND910_93):
            return self.ub_size - LOCAL_RESERV_SIZE
        return self.ub_size

    def is_regbase(self) -> bool:
        """``IsRegbase()``: the arch35 register-based vector architecture (Ascend950)."""
        return self.npu_arch == NpuArch.DAV_3510


@cache
def _catalogue() -> dict[str, SocInfo]:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read_string(CATALOGUE.read_text(encoding="utf-8"), source="ascend_lab/data/platforms.ini")
    out = {}
    for name in cp.sections():
        s = cp[name]
        out[name] = SocInfo(
            name=name, product=s["product"], npu_arch=NpuArch(s.getint("npu_arch")),
            soc_version=SocVersion[s["soc_version"]], family=s["family"],
            vector_core_num=s.getint("vector_core_cnt"), cube_core_num=s.getint("cube_core_cnt"),
            ub_size=s.getint("ub_size"), clock_mhz=s.getint("clock_mhz"),
            gm_bandwidth_gbps=s.getint("gm_bandwidth_gbps"), coupled=s.getboolean("coupled"),
            note=s["note"], ini=s.get("ini", ""), short_soc_version=s.get("short_soc_version", ""),
            intrinsics=tuple(("Intrinsic_" + k.removeprefix("intrinsic_"),
                              tuple(d.strip() for d in v.split(",") if d.strip()))
                             for k, v in s.items() if k.startswith("intrinsic_")),
            inf_nan_mode=s.getboolean("inf_nan_mode", True))
    return out


def socs() -> list[str]:
    """Names of every SoC in the catalogue."""
    return list(_catalogue())


def get_soc(name: str | SocInfo | None = None) -> SocInfo:
    """The catalogue entry for ``name`` (default: the SoC in force). Unknown names raise ValueError."""
    if isinstance(name, SocInfo):
        return name
    if name is None:
        name = _context.current().soc
    if not isinstance(name, str):
        raise TypeError(f"soc must be a SoC name such as {DEFAULT_SOC!r}, not {type(name).__name__}")
    cat = _catalogue()
    if name in cat:
        return cat[name]
    folded = {k.lower(): k for k in cat}
    if name.lower() in folded:
        return cat[folded[name.lower()]]
    raise ValueError(f"unknown SoC {name!r}; choose one of: {', '.join(cat)}")


def set_soc(name: str) -> SocInfo:
    """Make ``name`` the SoC in force for checks and tiling; returns its entry. Outside any ``with soc(...)`` (or
    other ``base.context.scoped``) block this is the process-wide SoC every thread starts from; inside one, it holds
    in this thread (``base.context``)."""
    info = get_soc(name)
    _context.update(soc=info.name)
    return info


def current_soc() -> SocInfo:
    """The SoC in force (set with set_soc / soc())."""
    return get_soc(_context.current().soc)


@contextlib.contextmanager
def soc(name: str) -> Iterator[SocInfo]:
    """``with soc("Ascend950PR"): ...`` runs the block on another SoC and restores the previous one. Thread-safe:
    the SoC changes in this thread only (``base.context.scoped``)."""
    info = get_soc(name)
    with _context.scoped(soc=info.name):
        yield info


def GetCurNpuArch() -> NpuArch:  # CANN name
    """NpuArch of the SoC in force."""
    return current_soc().npu_arch


def GetCurrentSocVersion() -> SocVersion:  # CANN name
    """SocVersion of the SoC in force."""
    return current_soc().soc_version


def lib_api_workspace_size(soc: SocInfo) -> int:
    """``PlatformAscendC::GetLibApiWorkSpaceSize()``: the system workspace a kernel built on the AscendC library
    asks for -- 16 MiB on DAV_2201 and DAV_3510, 2 MiB elsewhere (kernel_flavours §6)."""
    return (16 if soc.npu_arch in (NpuArch.DAV_2201, NpuArch.DAV_3510) else 2) * 1024 * 1024


# --- installed custom operator packages ------------------------------------------------------------------------
#: Custom ("vendor") operator packages a process can have installed. ops-nn builds its experimental kernels only
#: as one (``build.sh --pkg --experimental``, installed under ``opp/vendors/<vendor>_nn`` and found through
#: ``ASCEND_CUSTOM_OPP_PATH``); with it installed, an op whose experimental kernel is registered for the SoC
#: runs that kernel instead of the built-in one (kernel_flavours §1; that the package wins is UNCONFIRMED).
CUSTOM_PACKAGES = ("experimental",)


def _check_package(name: str) -> str:
    if name not in CUSTOM_PACKAGES:
        raise ValueError(f"unknown custom operator package {name!r}; the simulator models {', '.join(CUSTOM_PACKAGES)}")
    return name


def install_custom_package(name: str = "experimental") -> None:
    """Model installing a custom operator package (and pointing ``ASCEND_CUSTOM_OPP_PATH`` at it): process-wide
    outside a ``with custom_package()`` / ``base.context.scoped`` block, in this thread inside one."""
    name = _check_package(name)
    installed = _context.current().custom_packages
    if name not in installed:
        _context.update(custom_packages=(*installed, name))


def remove_custom_package(name: str = "experimental") -> None:
    """Model removing a custom operator package: the built-in kernels run again."""
    name = _check_package(name)
    _context.update(custom_packages=tuple(p for p in _context.current().custom_packages if p != name))


def custom_packages() -> tuple[str, ...]:
    """The custom operator packages installed now (empty for a stock CANN install)."""
    return _context.current().custom_packages


@contextlib.contextmanager
def custom_package(name: str = "experimental") -> Iterator[None]:
    """``with custom_package("experimental"): ...`` runs the block with the package installed, then restores.
    Thread-safe: in this thread only (``base.context.scoped``)."""
    name = _check_package(name)
    installed = _context.current().custom_packages
    with _context.scoped(custom_packages=installed if name in installed else (*installed, name)):
        yield
