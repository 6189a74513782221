"""Build what the live tiling page loads into pyodide: the package's numpy-free tiling modules and the compile facts.

    python scripts/live_tiling_bundle.py [DEST]     (default DEST: _vendor_pyodide/live-tiling)

Writes ``DEST/ascend_lab_live.zip`` -- exactly the modules ``ascend_lab.live.live_tiling`` imports when numpy is
blocked (found by importing it so in a subprocess and computing every op's tiling on every kernel), plus the SoC
catalogue and ``live/live_boot.py`` -- and ``DEST/facts.json`` (``live_tiling.build_facts()``: what each kernel's
compilation fixes). Both come from the package source at build time and are not committed. Run by ``make book``
after scripts/vendor_pyodide.sh; the files are written next to DEST and moved into place, so a page never sees
half a bundle.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import importlib.abc, json, runpy, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "ml_dtypes"):
            raise ImportError(f"{name} is blocked: the live tiling must import without it")
        return None

sys.meta_path.insert(0, Block())
root, facts_path = sys.argv[1:]
runpy.run_path(f"{root}/ascend_lab/live/live_boot.py")["install"](root)
from ascend_lab.live import live_tiling

facts = json.load(open(facts_path))
for op in facts["ops"]:
    for k in op["kernels"]:
        for soc in facts["socs"]:
            try:
                live_tiling.compute(facts, op["key"], 4096, op["dtypes"][0], soc["name"], kernel=k["flavour"])
            except ValueError:
                pass                      # a refused tiling still imports what it needs
files = sorted({m.__file__ for name, m in list(sys.modules.items())
                if name.startswith("ascend_lab.") and getattr(m, "__spec__", None) is not None
                and m.__spec__.submodule_search_locations is None and getattr(m, "__file__", None)})
print(json.dumps(files))
"""


def build(dest: Path) -> None:
    dest = dest.resolve()
    sys.path.insert(0, str(ROOT))
    import ascend_lab  # noqa: F401  (the registry's operators)
    from ascend_lab.live import live_tiling

    facts = live_tiling.build_facts()
    dest.parent.mkdir(parents=True, exist_ok=True)
    new = Path(tempfile.mkdtemp(prefix=dest.name + ".new.", dir=dest.parent))
    new.chmod(0o755)                                  # mkdtemp makes it private; the site is served
    try:
        (new / "facts.json").write_text(json.dumps(facts, separators=(",", ":")))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(new / "facts.json")],
                              capture_output=True, text=True, env=env, cwd=new, check=False)
        if proc.returncode != 0:
            sys.exit(f"live_tiling_bundle: the live tiling does not import without numpy:\n{proc.stderr}")
        files = [Path(f) for f in json.loads(proc.stdout)]
        files += [ROOT / "ascend_lab" / "data" / "platforms.ini", ROOT / "ascend_lab" / "live" / "live_boot.py"]
        with zipfile.ZipFile(new / "ascend_lab_live.zip", "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(set(files)):
                zf.write(f, f.relative_to(ROOT).as_posix())
        old = dest.with_name(dest.name + ".old")
        if dest.exists():
            dest.rename(old)
        new.rename(dest)
        if old.exists():
            for f in old.iterdir():
                f.unlink()
            old.rmdir()
    finally:
        if new.exists():
            for f in new.iterdir():
                f.unlink()
            new.rmdir()
    print(f"live_tiling_bundle: {dest} ready ({len(set(files))} files, "
          f"{(dest / 'ascend_lab_live.zip').stat().st_size // 1024} KiB zip)")


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_vendor_pyodide" / "live-tiling")
