#!/usr/bin/env bash
# Soak benchmark (not a test): a long run of a small scene in release mode, checked as it
# goes and after it ends.
#
# During the run, `eddy run --check-invariants` stops at the first frame where a pressure
# solve ends above its tolerance, or a particle is NaN/inf or outside the domain (all
# particles are read back every frame), and eddy itself stops at the first NaN/inf in the
# simulation's measurements. After it, this script checks stats.csv: one complete row per
# frame, no NaN/inf anywhere, the particle count constant, every frame's last solve within
# the tolerance. It prints the figures benchmarks/history.md records.
#
# Settings (environment): FRAMES (10000), SCENE (scenes/dam_break.ron), RESOLUTION (16,
# cells along the longest axis), OUT (target/soak). Extra arguments go to `eddy run`.
# Ctrl-C stops the run after the current frame; the rows so far are still checked.
set -euo pipefail
cd "$(dirname "$0")/.."

FRAMES=${FRAMES:-10000}
SCENE=${SCENE:-scenes/dam_break.ron}
RESOLUTION=${RESOLUTION:-16}
OUT=${OUT:-target/soak}

cargo build --release --quiet
eddy=target/release/eddy
tolerance=$(sed -n 's/^ *tolerance: *\([0-9.eE+-]*\).*/\1/p' "$SCENE" | head -n 1)
tolerance=${tolerance:-1e-5}

mkdir -p "$(dirname "$OUT")"
log="$OUT.log"
start=$(date +%s.%N)
status=0
"$eddy" run "$SCENE" --resolution "$RESOLUTION" --frames "$FRAMES" --out "$OUT" \
  --overwrite --check-invariants "$@" 2> >(tee "$log" >&2) || status=$?
end=$(date +%s.%N)

# The adapter line eddy printed, the run's own verdict, and the stats it left.
adapter=$(sed -n 's/^adapter: //p' "$log" | head -n 1)
verdict=$(grep -E '^(invariants held|error:|interrupted)' "$log" | tail -n 1 || true)
awk -F, -v frames="$FRAMES" -v tol="$tolerance" -v start="$start" -v end="$end" \
    -v adapter="$adapter" -v status="$status" -v verdict="$verdict" '
  NR == 1 { ncol = NF; next }
  {
    if (NF != ncol) { bad = bad sprintf("row %d has %d columns; ", NR - 1, NF) }
    if (tolower($0) ~ /nan|inf/) { bad = bad sprintf("frame %s has NaN/inf; ", $1) }
    if ($1 != NR - 1) { bad = bad sprintf("row %d is frame %s; ", NR - 1, $1) }
    if (NR == 2) { particles = $4 }
    if ($4 != particles) { bad = bad sprintf("frame %s has %s particles, not %s; ", $1, $4, particles) }
    if ($7 + 0 > tol + 0) { over++ }
    if ($7 + 0 > maxres) { maxres = $7 + 0 }
    if ($8 + 0 > maxdiv) { maxdiv = $8 + 0 }
    if ($6 + 0 > maxit) { maxit = $6 + 0 }
    substeps += $3; iters += $13; rows++
  }
  END {
    wall = end - start
    ok = (status == 0 && rows == frames && bad == "" && over == 0)
    printf "soak: %s\n", ok ? "PASS" : "FAIL"
    printf "  adapter          %s\n", adapter
    printf "  frames           %d of %d (%d substeps, %d PCG iterations)\n", rows, frames, substeps, iters
    printf "  wall time        %.1f s (%.1f frames/s)\n", wall, rows / wall
    printf "  particles        %s, constant: %s\n", particles, (bad ~ /particles/) ? "no" : "yes"
    printf "  last solve/frame max residual %.3e (tolerance %s, %d above), max PCG iterations %d\n", maxres, tol, over, maxit
    printf "  max |div u|      %.3e 1/s\n", maxdiv
    printf "  eddy             exit %d: %s\n", status, verdict
    if (bad != "") printf "  problems         %s\n", bad
    exit ok ? 0 : 1
  }' "$OUT/stats.csv"
