#!/usr/bin/env bash
# Vendor the site's browser assets from the npm registry, so the built book loads nothing from a CDN.
#
#   scripts/vendor.sh [DEST]        (default DEST: _vendor, git-ignored, served as html_static_path)
#
# The pinned versions (and the npm integrity of each tarball) live here and only here.
# Idempotent and cached: when DEST/.vendor-stamp already names these exact versions, nothing is fetched.
# The new tree is assembled next to DEST and moved into place at the end, so an interrupted run never
# leaves a half-filled DEST with a valid stamp.
set -euo pipefail

HTML_MANAGER_VERSION=1.0.15
HTML_MANAGER_INTEGRITY="sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA=="
MATHJAX_VERSION=3.2.2
MATHJAX_INTEGRITY="sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="

DEST=${1:-_vendor}
STAMP="$DEST/.vendor-stamp"
WANT="@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION mathjax@$MATHJAX_VERSION"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] \
   && [ -f "$DEST/html-manager/embed.js" ] && [ -f "$DEST/mathjax/tex-mml-chtml.js" ]; then
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
(cd "$work" && npm pack --json --silent "@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION" "mathjax@$MATHJAX_VERSION" >pack.json)
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

mkdir -p "$work/hm" "$work/mj" "$new/html-manager" "$new/mathjax/output/chtml/fonts"
tar xzf "$work/$hm_tgz" -C "$work/hm"
tar xzf "$work/$mj_tgz" -C "$work/mj"

# html-manager: the standalone embed.js (no require.js); it finds its font files next to itself.
hm="$work/hm/package/dist"
cp "$hm/embed.js" "$hm/embed.js.LICENSE.txt" "$new/html-manager/"
cp "$hm"/*.woff "$hm"/*.woff2 "$hm"/*.ttf "$hm"/*.eot "$hm"/*.svg "$new/html-manager/"

# MathJax: the combined TeX+MathML -> CHTML component and its woff-v2 fonts.
mj="$work/mj/package/es5"
cp "$mj/tex-mml-chtml.js" "$new/mathjax/"
cp -r "$mj/output/chtml/fonts/woff-v2" "$new/mathjax/output/chtml/fonts/"
cp "$work/mj/package/LICENSE" "$new/mathjax/LICENSE"

echo "$WANT" >"$new/.vendor-stamp"
rm -rf "$DEST"
mv "$new" "$DEST"
echo "vendor: $DEST ready ($(du -sh "$DEST" | cut -f1))"
