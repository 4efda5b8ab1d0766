#!/usr/bin/env bash
# Measures the rigid bodies' stability against their density (docs/guide/07-rigid-bodies.md): a
# tilted box and a sphere thrown into a 16^3 pool (3 s) and into a 64 x 96 smoke slice
# (4 s) at each density ratio to the fluid, under the strong or the weak coupling. Prints
# one markdown row per ratio: whether `eddy run --check-invariants` held, and the bodies'
# largest speed and spin in the last frame.
#
#   scripts/body-stability.sh [strong|weak] [EDDY]   (EDDY: default target/release/eddy)
#   RATIOS="0.5 100" scripts/body-stability.sh      (only these density ratios)
set -euo pipefail
cd "$(dirname "$0")/.."
scheme="${1:-strong}"
eddy="${2:-target/release/eddy}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$dir}"

liquid() { # ratio
  local rho; rho=$(awk "BEGIN{print $1 * 1000}")
  cat <<SCENE
(name: "stability", resolution: (16, 16, 16), body_coupling: $scheme,
 fluid: [Box(min: (0.0, 0.0, 0.0), max: (1.0, 0.5, 1.0))],
 bodies: [
   (shape: Box(half_extents: (0.15, 0.08, 0.12)), center: (0.35, 0.75, 0.4), density: $rho,
    rotation_deg: (20.0, 10.0, 30.0), velocity: (1.0, -1.0, 0.0)),
   (shape: Sphere(radius: 0.1), center: (0.7, 0.7, 0.65), density: $rho, velocity: (-0.5, -2.0, 0.5)),
 ])
SCENE
}

smoke() { # ratio
  local rho; rho=$(awk "BEGIN{print $1 * 1.2}")
  cat <<SCENE
(name: "stability", kind: smoke, domain: (1.0, 1.5, 0.015625), resolution: (64, 96, 1),
 body_coupling: $scheme, frame_dt: 0.016666667,
 smoke: (buoyancy: 4.0, sources: [(shape: Sphere(center: (0.5, 0.15, 0.0078), radius: 0.08),
                                   temperature: 1.0, velocity: (0.0, 1.0, 0.0))]),
 bodies: [
   (shape: Box(half_extents: (0.12, 0.05, 0.0)), center: (0.45, 0.6, 0.0), density: $rho,
    rotation_deg: (0.0, 0.0, 30.0), velocity: (1.0, -1.0, 0.0)),
   (shape: Sphere(radius: 0.08), center: (0.7, 1.1, 0.0), density: $rho, velocity: (-0.5, -2.0, 0.0)),
 ])
SCENE
}

run() { # kind ratio frames
  local scene="$dir/$1-$2.ron" out="$dir/$1-$2"
  "$1" "$2" > "$scene"
  if "$eddy" run "$scene" --frames "$3" --out "$out" --check-invariants > "$out.log" 2>&1; then
    # The last frame's largest body speed and spin (bodies.csv: vx,vy,vz at 11-13, w at 14-16).
    awk -F, -v f="$3" 'NR > 1 && $1 == f {
        v = sqrt($11*$11 + $12*$12 + $13*$13); w = sqrt($14*$14 + $15*$15 + $16*$16);
        if (v > mv) mv = v; if (w > mw) mw = w }
      END { printf "stable (%.2f m/s, %.1f rad/s)", mv, mw }' "$out/bodies.csv"
  else
    printf "**stopped**: %s" "$(grep -o 'frame [0-9]*, substep [0-9]*: [^(]*' "$out.log" | head -1 | cut -c1-90)"
  fi
}

echo "| density / fluid's | liquid ($scheme) | smoke ($scheme) |"
echo "|---|---|---|"
for ratio in ${RATIOS:-0.01 0.05 0.1 0.3 0.5 1 2 10 100}; do
  l=$(run liquid "$ratio" 180)
  if awk "BEGIN{exit !($ratio >= 0.5)}"; then s=$(run smoke "$ratio" 240); else s="(below the smoke's range)"; fi
  echo "| $ratio | $l | $s |"
done
