#!/usr/bin/env bash
# Builds eddy's Python module (python/, PyO3 + maturin) into a virtual environment and
# installs what its tests and the example notebook use (numpy, pytest, matplotlib).
#
#   scripts/python.sh            # venv in target/python-venv, the module built in release
#   scripts/python.sh --dev      # the same, built in the faster-to-compile dev profile
#
# Then: `target/python-venv/bin/python -c "import eddy"`, or activate the venv
# (`. target/python-venv/bin/activate`) and use `python`, `pytest` or `jupyter` there.
# EDDY_VENV picks another folder for the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=(--release)
if [ "${1:-}" = "--dev" ]; then
  profile=()
  shift
fi

venv="${EDDY_VENV:-target/python-venv}"
if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "scripts/python.sh: installing python3-venv"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
    rm -rf "$venv"
    python3 -m venv "$venv"
  fi
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  "maturin>=1.9,<2" numpy pytest matplotlib
VIRTUAL_ENV="$(cd "$venv" && pwd)" PATH="$(cd "$venv" && pwd)/bin:$PATH" \
  "$venv/bin/maturin" develop -q "${profile[@]}" -m python/Cargo.toml
echo "scripts/python.sh: eddy's module is installed in $venv"
