#!/usr/bin/env bash
# Make sure Debian's Chromium is installed at /usr/bin/chromium for the browser tests (tests/test_site*.py), and,
# as root, Debian's chromium-headless-shell beside it: the same Chromium build without the desktop browser around
# its engine, which the site tests use when it is there (about a fifth less CPU per page; tests/test_site.py).
# Playwright drives these system browsers; it must never download its own (`playwright install` is not used).
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
SHELL_BROWSER=/usr/bin/chromium-headless-shell
# A CJK font, so the screenshots show the Chinese CANN terms instead of empty boxes.
CJK_FONT=/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc

# The headless shell only saves time: if it cannot be installed, the site tests use chromium itself.
shell_browser() {
    [ -x "$SHELL_BROWSER" ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 && return 0
    echo "chromium: installing Debian's chromium-headless-shell with apt-get"
    { apt-get install -y -q chromium-headless-shell || { apt-get update -q && apt-get install -y -q chromium-headless-shell; }
    } </dev/null || echo "chromium: chromium-headless-shell could not be installed; the site tests use $CHROMIUM"
}

if [ -x "$CHROMIUM" ] && { [ -e "$CJK_FONT" ] || [ "$(id -u)" != 0 ]; }; then
    shell_browser
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "chromium: ERROR: $CHROMIUM is missing and this user is not root, so it cannot be installed here." >&2
    echo "chromium: Install Debian's Chromium once, then run make again:" >&2
    echo "chromium:     sudo apt-get update && sudo apt-get install -y chromium" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium: ERROR: $CHROMIUM is missing and apt-get is not available; install Chromium so that $CHROMIUM exists." >&2
    exit 1
fi

echo "chromium: installing Debian's chromium and a CJK font (fonts-wqy-zenhei) with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q </dev/null
apt-get install -y -q chromium fonts-wqy-zenhei </dev/null
test -x "$CHROMIUM" || { echo "chromium: ERROR: apt-get finished but $CHROMIUM is still missing" >&2; exit 1; }
shell_browser
