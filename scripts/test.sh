#!/usr/bin/env bash
# Runs eddy's whole test suite, on a machine with or without a GPU.
#
# Makes sure a Vulkan adapter exists (Mesa's software lavapipe when there is no GPU), an
# X server for the viewer tests (Xvfb when there is no display) and xdotool (the endurance
# test types into the viewer), then runs `cargo test`.
# Extra arguments go to cargo test, e.g. `scripts/test.sh --test integration pressure::`
# (the integration tests are one binary, a module per area). The suite includes
# tests/integration/msrv.rs, which fails when a locked dependency needs a newer Rust than
# Cargo.toml's rust-version (CI has only the newest toolchain, so this is how it checks).
#
# `scripts/test.sh --fast` is the quick tier for work in progress (about 2 minutes of tests, warm, on
# a 2-core machine): the unit tests, the GPU stages against their f64 references at small
# sizes, the pressure solver and the transfers, the command line's error paths and the
# files it is handed, the first run of each mode, the shaders and the shipped scenes. The
# full suite (no arguments) is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

fast=0
if [ "${1:-}" = "--fast" ]; then
  fast=1
  shift
  if [ $# -gt 0 ]; then
    echo "scripts/test.sh: --fast takes no more arguments (pick tests without it)" >&2
    exit 2
  fi
fi

missing=()
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || missing+=(mesa-vulkan-drivers)
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || missing+=(libvulkan1)
command -v xvfb-run >/dev/null 2>&1 || missing+=(xvfb xauth)
# The viewer's endurance test sends keys to its window.
command -v xdotool >/dev/null 2>&1 || missing+=(xdotool)
# The OpenVDB volume tests read eddy's .vdb files with OpenVDB's own library.
/usr/bin/python3 -c 'import pyopenvdb' >/dev/null 2>&1 || missing+=(python3-openvdb)
if [ ${#missing[@]} -gt 0 ]; then
  echo "scripts/test.sh: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Vulkan's window-system layer complains without a runtime dir; give it a private one.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/eddy-xdg-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi

# Runs a command under the display there is, or a virtual one.
with_display() {
  if [ -n "${DISPLAY:-}" ]; then
    "$@"
  else
    xvfb-run -a -s "-screen 0 1280x800x24" "$@"
  fi
}

if [ "$fast" -eq 1 ]; then
  # Integration tests by name (module paths; a filter matches any test whose path holds it).
  fast_tests=(
    stages:: pressure:: apic:: shaders:: scenes:: first_run:: msrv::
    cli:: robustness::every_bad untrusted_files:: lab::a_bad_system docs::
    viscous_bodies_match_the_coupled_reference imports:: probes:: tension:: vdb::
  )
  cargo test --lib --bins
  with_display cargo test --test integration -- "${fast_tests[@]}"
  exit 0
fi

with_display cargo test "$@"

# The Python module's tests (python/tests, pytest): built into target/python-venv by
# scripts/python.sh; they compare it with the eddy binary cargo test just built. Skipped
# when arguments pick the tests to run.
if [ $# -eq 0 ]; then
  scripts/python.sh
  EDDY_BIN="$PWD/target/debug/eddy" target/python-venv/bin/python -m pytest -q python/tests
fi

# The validation suite (`eddy validate --quick`: every case against its reference, about 5
# minutes on a 2-core software adapter in a release build); a case outside its tolerance
# fails the script. Skipped when arguments pick the tests to run.
if [ $# -eq 0 ]; then
  report="$(mktemp -d "${TMPDIR:-/tmp}/eddy-validate.XXXXXX")"
  cargo run --release --quiet -- validate --quick --out "$report"
  echo "scripts/test.sh: validation report in $report/index.html"
fi
