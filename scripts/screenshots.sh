#!/usr/bin/env bash
# Regenerates the guide's pictures (docs/images/*.png) with the viewer's own
# `--frames N --screenshot PNG`, so they show what `eddy view` shows today.
#
# Works without a GPU or a display: runs under Xvfb when DISPLAY is unset (install
# `xvfb` and `mesa-vulkan-drivers`, or run scripts/test.sh once). Settings (environment):
# EDDY (the eddy binary; default: `cargo build` and target/debug/eddy), SIZE (960x600).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${EDDY:-}" ]; then
  cargo build --quiet
  EDDY=target/debug/eddy
fi
SIZE=${SIZE:-960x600}
OUT=docs/images
mkdir -p "$OUT"

run() {
  if [ -n "${DISPLAY:-}" ]; then
    "$EDDY" view "$@"
  else
    xvfb-run -a -s "-screen 0 1280x800x24" "$EDDY" view "$@"
  fi
}

shot() {
  local name=$1
  shift
  run "$@" --size "$SIZE" --screenshot "$OUT/$name.png" >/dev/null
  echo "$OUT/$name.png"
}

# The liquid, with the whole window: controls on the left, stats on the right.
shot liquid dam_break --frames 30 --camera -30,25,3.0
# The smoke mode: the plume's dye after a second.
shot smoke smoke_plume --frames 60 --camera 0,0,1.9
# A debug view of the same slice: its vorticity (diverging colormap, legend in the panel).
shot smoke_vorticity smoke_plume --frames 60 --camera 0,0,1.9 --smoke-view vorticity
# A liquid debug slice: the dam break's pressure through the middle, as a flat 2D image.
shot pressure_slice dam_break --frames 30 --field pressure --axis z --slice 8 --layout flat
# The liquid's screen-space surface, and the same frame as particles.
shot surface dam_break --frames 45 --render surface
shot particles dam_break --frames 45 --render particles
