#!/usr/bin/env bash
# Fuzzes one of the parsers of files eddy is handed: checkpoint, system or scene.
#
#   scripts/fuzz.sh checkpoint [SECONDS]     (default 60)
#
# Needs a nightly toolchain and cargo-fuzz (`rustup toolchain install nightly` and
# `cargo install cargo-fuzz`); the test suite does not: its seeded loop
# (tests/integration/untrusted_files.rs) mutates the same files on the stable toolchain.
# The corpus is seeded from real files: a checkpoint and an exported system of a short
# floating_bodies run (written once to fuzz/seeds/), and the shipped scenes. Crashes land in
# fuzz/artifacts/TARGET/; `cargo +nightly fuzz run TARGET FILE` replays one.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: scripts/fuzz.sh checkpoint|system|scene [SECONDS]}"
seconds="${2:-60}"
seeds=fuzz/seeds
if [ ! -f "$seeds/system/system.json" ]; then
  rm -rf "$seeds"
  cargo run --release --quiet -- run floating_bodies --resolution 8 --frames 2 \
    --checkpoint-every 2 --out "$seeds/run" --export-system "$seeds/system"
fi
corpus="fuzz/corpus/$target"
mkdir -p "$corpus"
case "$target" in
  checkpoint) cp "$seeds/run/checkpoint_00002.eddy" "$corpus/" ;;
  system) cp "$seeds/system/system.json" "$corpus/" ;;
  scene) cp scenes/*.ron "$corpus/" ;;
  *) echo "scripts/fuzz.sh: no target $target (checkpoint, system, scene)" >&2; exit 2 ;;
esac
EDDY_FUZZ_SYSTEM="$PWD/$seeds/system" \
  cargo +nightly fuzz run "$target" "$corpus" -- -max_total_time="$seconds"
