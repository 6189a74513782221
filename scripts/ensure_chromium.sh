#!/usr/bin/env bash
# Make sure Debian's Chromium is installed at /usr/bin/chromium for the browser test (tests/test_site.py).
# Playwright drives this system browser; it must never download its own (`playwright install` is not used).
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
# A CJK font, so the screenshots show the Chinese CANN terms instead of empty boxes.
CJK_FONT=/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc
if [ -x "$CHROMIUM" ] && { [ -e "$CJK_FONT" ] || [ "$(id -u)" != 0 ]; }; then
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
