# deps.sh — sourced by the build and test scripts: installs what tether needs from
# Debian's packages when it is missing (as root; otherwise says what to install).

# tether_require_packages PKG...: installs the Debian packages not yet installed.
tether_require_packages() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "tether: installing missing packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "tether: not root; install them with: sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# tether_require_commands CMD:PKG...: installs PKG for each CMD that is not on PATH (a
# toolchain installed another way, rustup's cargo say, is used as it is).
tether_require_commands() {
  local pair pkgs=()
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || pkgs+=("${pair#*:}")
  done
  [ ${#pkgs[@]} -eq 0 ] || tether_require_packages "${pkgs[@]}"
}

# The toolchain every build needs.
TETHER_BUILD_PACKAGES=(g++ cmake ninja-build pkg-config libgtest-dev)
