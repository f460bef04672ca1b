#!/usr/bin/env bash
# Installs the Debian packages flopline needs, only those missing.
# Usage: source scripts/deps.sh; flopline_install_packages PKG...
flopline_install_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "flopline: installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo="sudo"
  $sudo apt-get update -q || return 1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# What building the trace core, the command line and the tests takes.
FLOPLINE_BUILD_PACKAGES=(cmake ninja-build g++ make pkg-config zlib1g-dev nlohmann-json3-dev python3)
FLOPLINE_TEST_PACKAGES=(clang lld libclang-rt-14-dev libgtest-dev clang-format)
# flopline-view: Dear ImGui 1.86 (with its GLFW and OpenGL3 backends), GLFW, libpng for
# screenshots, and Mesa's drivers (llvmpipe renders where there is no GPU).
FLOPLINE_VIEWER_PACKAGES=(libimgui-dev libglfw3-dev libx11-dev libpng-dev libgl1-mesa-dri libglx-mesa0)
# The viewer's tests: a virtual X display, xdotool to drive the real window and
# python-xlib to drop files on it (X11 drag and drop).
FLOPLINE_VIEWER_TEST_PACKAGES=(xvfb xauth xdotool python3-xlib)
