#!/usr/bin/env bash
# Vendor pyodide's core (CPython compiled to WebAssembly) from the npm registry, for the live tiling page.
#
#   scripts/vendor_pyodide.sh [DEST]     (default DEST: _vendor_pyodide, git-ignored, served as html_static_path)
#
# Only the core files: the loader (pyodide.mjs/.js), the interpreter (pyodide.asm.mjs + pyodide.asm.wasm), the
# standard library (python_stdlib.zip) and pyodide-lock.json -- no packages: the page runs ascend_lab's own
# numpy-free tiling code, loaded from a zip built next to these files (scripts/live_tiling_bundle.py).
# It also makes pyodide/snapshot.bin.gz with node: the interpreter's memory right after start-up and the imports
# the tiling needs (pyodide's loadPyodide({_loadSnapshot}) option). Starting from it skips CPython's
# initialisation, most of pyodide's start-up time (measured: ~2.3 s of CPU down to ~0.4 s).
# The pinned version and the npm integrity of its tarball live here and only here.
# Idempotent and cached: when DEST/.vendor-stamp already names this exact version, nothing is fetched.
# The new tree is assembled next to DEST and moved into place at the end, so an interrupted run never leaves a
# half-filled DEST with a valid stamp.
set -euo pipefail

PYODIDE_VERSION=314.0.7
PYODIDE_INTEGRITY="sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A=="
CORE_FILES="pyodide.mjs pyodide.js pyodide.asm.mjs pyodide.asm.wasm python_stdlib.zip pyodide-lock.json package.json"

DEST=${1:-_vendor_pyodide}
STAMP="$DEST/.vendor-stamp"
# What the snapshot has imported already (stdlib only: ascend_lab itself is loaded from the zip afterwards).
SNAPSHOT_IMPORTS="json runpy importlib.util importlib.resources dataclasses typing configparser struct numbers enum math zipfile inspect"
WANT="pyodide@$PYODIDE_VERSION snapshot[$SNAPSHOT_IMPORTS]"

complete() {
    for f in $CORE_FILES snapshot.bin.gz; do [ -f "$DEST/pyodide/$f" ] || return 1; done
}
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && complete; then
    echo "vendor_pyodide: $DEST is up to date ($WANT)"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    echo "vendor_pyodide: ERROR: 'npm' was not found on PATH (node makes the start-up snapshot too)." >&2
    echo "vendor_pyodide: The live tiling page runs pyodide from the site itself; it is fetched at build time" >&2
    echo "vendor_pyodide: from the npm registry ($WANT). Install Node.js + npm (Debian: apt-get install -y npm)" >&2
    echo "vendor_pyodide: and run 'make book' again." >&2
    exit 1
fi

echo "vendor_pyodide: fetching $WANT from the npm registry"
work=$(mktemp -d)
new="$DEST.new.$$"
trap 'rm -rf "$work" "$new"' EXIT

# npm pack checks the tarball against the registry's integrity; we also check it against our own pin.
(cd "$work" && npm pack --json --silent "pyodide@$PYODIDE_VERSION" >pack.json)
tgz=$(python3 - "$work/pack.json" "$PYODIDE_VERSION" "$PYODIDE_INTEGRITY" <<'PY'
import json, sys
entries = {e["name"]: e for e in json.load(open(sys.argv[1]))}
version, integrity = sys.argv[2:]
e = entries.get("pyodide")
if e is None or e["version"] != version or e["integrity"] != integrity:
    got = None if e is None else (e["version"], e["integrity"])
    sys.exit(f"vendor_pyodide: ERROR: pyodide: expected {version} {integrity}, npm gave {got}")
print(e["filename"])
PY
)

mkdir -p "$work/x" "$new/pyodide"
tar xzf "$work/$tgz" -C "$work/x"
for f in $CORE_FILES; do
    cp "$work/x/package/$f" "$new/pyodide/"
done
cp "$work/x/package/README.md" "$new/pyodide/README.md"   # names the licence (MPL-2.0) and the project

# The memory snapshot (see the top), gzipped: the page inflates it with DecompressionStream.
cat >"$work/snapshot.mjs" <<'JS'
import { gzipSync } from "node:zlib";
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [dir, imports] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${dir}/pyodide.mjs`).href);
const py = await loadPyodide({ indexURL: `${dir}/`, _makeSnapshot: true });
py.runPython(`import ${imports.split(" ").join(", ")}`);
writeFileSync(`${dir}/snapshot.bin.gz`, gzipSync(py.makeMemorySnapshot(), { level: 9 }));
JS
node "$work/snapshot.mjs" "$(cd "$new/pyodide" && pwd)" "$SNAPSHOT_IMPORTS"

echo "$WANT" >"$new/.vendor-stamp"
rm -rf "$DEST"
mv "$new" "$DEST"
echo "vendor_pyodide: $DEST ready ($(du -sh "$DEST" | cut -f1))"
