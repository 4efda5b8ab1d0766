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
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || missing+=(mesa-vulkan-drivers)
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || missing+=(libvulkan1)
command -v xvfb-run >/dev/null 2>&1 || missing+=(xvfb xauth)
# The viewer's endurance test sends keys to its window.
command -v xdotool >/dev/null 2>&1 || missing+=(xdotool)
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

if [ -n "${DISPLAY:-}" ]; then
  cargo test "$@"
else
  xvfb-run -a -s "-screen 0 1280x800x24" cargo test "$@"
fi

# The validation suite (`eddy validate --quick`: every case against its reference, about 4
# minutes on a 2-core software adapter in a release build); a case outside its tolerance
# fails the script. Skipped when arguments pick the tests to run.
if [ $# -eq 0 ]; then
  report="$(mktemp -d "${TMPDIR:-/tmp}/eddy-validate.XXXXXX")"
  cargo run --release --quiet -- validate --quick --out "$report"
  echo "scripts/test.sh: validation report in $report/index.html"
fi
