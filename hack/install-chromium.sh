#!/usr/bin/env bash
# Install Debian's chromium for the headless-browser test of the HTML report
# (internal/report). Does nothing when /usr/bin/chromium is already there.
#
#   hack/install-chromium.sh
#
# Needs root (or passwordless sudo) and apt-get: the test drives the browser
# the distribution ships, never a browser build downloaded by a tool, so the
# same binary is used on a developer machine and in CI. fonts-liberation (a
# recommendation we skip with the rest) gives the charts readable text.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [[ -x "$CHROMIUM" ]]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: $CHROMIUM is missing and apt-get is not available;" >&2
  echo "install Debian's chromium package (or a chromium at $CHROMIUM) by hand" >&2
  exit 1
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    echo "install-chromium: $CHROMIUM is missing and installing it needs root;" >&2
    echo "run 'sudo apt-get update && sudo apt-get install -y chromium' once" >&2
    exit 1
  fi
fi

echo "install-chromium: installing Debian's chromium (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt_get="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/apt-get.sh"
"${SUDO[@]}" "$apt_get" update -qq
"${SUDO[@]}" "$apt_get" install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null

if [[ ! -x "$CHROMIUM" ]]; then
  echo "install-chromium: apt-get installed chromium but $CHROMIUM is still missing" >&2
  exit 1
fi
echo "install-chromium: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")" >&2
