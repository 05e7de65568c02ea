#!/usr/bin/env bash
# Installs the Debian packages memplan needs (only those missing), then configures and
# builds it in build/ (or $MEMPLAN_BUILD_DIR). A second run rebuilds only what changed.
# Progress goes to stderr, so a caller's stdout stays clean.
# MEMPLAN_EXTRA_PACKAGES adds packages; MEMPLAN_BUILD_TARGET builds one target, not all;
# MEMPLAN_PRESET configures from a CMakePresets.json
# preset (scripts/test-sanitized: clang, its sanitizer runtimes, preset "sanitize").
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build make g++ pkg-config libyaml-cpp-dev libfmt-dev libspdlog-dev libcli11-dev
          libeigen3-dev nlohmann-json3-dev libcurl4-openssl-dev libgtest-dev libgmock-dev libbenchmark-dev python3-jsonschema
          python3-dev pybind11-dev python3-pytest  # the Python module (python/) and its tests
          emscripten chromium chromium-driver python3-selenium  # the web calculator (web/) and its browser test
          clang-format clang-tidy)  # clang-format and clang-tidy (14 on Debian 12): scripts/lint
read -r -a extra <<< "${MEMPLAN_EXTRA_PACKAGES:-}"
packages+=("${extra[@]}")
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "memplan setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

build="${MEMPLAN_BUILD_DIR:-build}"
# Ninja: it schedules every file of every target as soon as its inputs are ready (make waits
# for a target's dependencies to finish), which keeps both cores of a small machine busy.
if [ ! -f "$build/CMakeCache.txt" ]; then
  if [ -n "${MEMPLAN_PRESET:-}" ]; then
    cmake --preset "$MEMPLAN_PRESET" -G Ninja -B "$build" ${MEMPLAN_CMAKE_ARGS:-} >&2
  else
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${MEMPLAN_CMAKE_ARGS:-} >&2
  fi
fi
cmake --build "$build" --parallel "$(nproc)" ${MEMPLAN_BUILD_TARGET:+--target "$MEMPLAN_BUILD_TARGET"} >&2
