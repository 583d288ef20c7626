# shellcheck shell=bash
# as_root COMMAND...: runs COMMAND as root (directly when already root, else through sudo),
# or stops the calling script with a message naming it. Sourced by the scripts that install
# Debian packages (scripts/setup_browser.sh, bench/traces/record.sh).
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "${0##*/}: need root (or sudo) to run: $*" >&2
    exit 1
  fi
}
