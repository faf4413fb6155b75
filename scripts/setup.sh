#!/usr/bin/env bash
# Installs what docproc needs on a fresh Debian machine with Node 20+, then returns.
#   scripts/setup.sh          what the service needs to run (LibreOffice, fonts, npm packages)
#   scripts/setup.sh test     plus what the tests use as independent checkers and peers
# Debian packages are installed only when running as root and something is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-run}"

run_packages=(libreoffice-writer libreoffice-calc libreoffice-impress python3-uno bubblewrap fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation fonts-liberation2 fonts-dejavu fonts-noto-core)
test_packages=(poppler-utils qpdf pandoc redis-server libnss3-tools openssl nginx chromium xmlsec1 python3-olefile python3-xlrd)

packages=("${run_packages[@]}")
[ "$mode" = "test" ] && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages (run as root to install them): ${missing[*]}" >&2
  fi
fi

# npm packages: install from the lock file when node_modules is absent or older than it.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi
