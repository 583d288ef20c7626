#!/usr/bin/env bash
# Installs what the browser tests of report.html need (tests/toolkit/report_browser), only what
# is missing, on Debian 12: Debian's chromium (/usr/bin/chromium, driven headless), node and npm,
# then the locked node modules (playwright-core, which uses the system chromium and downloads
# no browser of its own) with `npm ci`. apt-get runs as root, or through sudo otherwise.
#   scripts/setup_browser.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tests_dir="${root}/tests/toolkit/report_browser"

# shellcheck source=as_root.sh
source "${root}/scripts/as_root.sh"

apt_updated=0
apt_install() {
  if [ "${apt_updated}" -eq 0 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup_browser: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "${node_major}" -lt 20 ]; then
  echo "setup_browser: warning: node $(node --version) is older than 20, which playwright-core wants" >&2
fi

# npm ci only when the installed playwright-core is not the locked one.
locked="$(node -p "require('${tests_dir}/package-lock.json').packages['node_modules/playwright-core'].version")"
installed="$(node -p "try { require('${tests_dir}/node_modules/playwright-core/package.json').version } catch { '' }")"
if [ "${installed}" != "${locked}" ]; then
  echo "setup_browser: npm ci in ${tests_dir} (playwright-core ${locked})"
  (cd "${tests_dir}" && npm ci --no-audit --no-fund)
fi
echo "setup_browser: chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'), node $(node --version), playwright-core ${locked}"
