#!/usr/bin/env bash
# Runs eddy's whole benchmark set in one go and writes it to a dated folder under
# benchmarks/, named after the adapter (BENCHMARKS.md, "One command for a GPU"):
#
#   1. the solver table: every preconditioner on the dam break and the settled pool at
#      64^3, 128^3 and 256^3 (iterations, ms per solve, the true residual);
#   2. the coupled solve's cost: 16 floating bodies, strong (undeflated and deflated)
#      against A alone on the same system (floating_bodies_alone, the term left out) and
#      against the weak scheme's own system, at 32^3 and 64^3;
#   3. the full substep of the dam break at 128^3 and 256^3 with GPU ms per stage and the
#      host traffic per substep (`eddy run`'s summary);
#   4. the default scene (dam_break as shipped): substeps/s over 120 frames;
#   5. the smoke: steps/s at 512^2 and 1024^2 (tolerance 1e-4);
#   6. `eddy check` of the largest case: GPU memory per cell and per particle;
#   7. the viewer's render at 1920x1080 with about a million particles, offscreen, in each
#      render mode (the `render_frame` bench binary, when one is built);
#   8. solves queued ahead (`pressure.pipelined`) against reading each solve: the default
#      scene and floating_bodies, three interleaved runs each;
#   9. the multigrid's one-workgroup tail at several thresholds (EDDY_MG_TAIL_CELLS; 0 runs
#      every level but the coarsest a dispatch per step): the default scene, the plume and
#      the double dam break, two interleaved runs each, and the 128^3 `mg` solve;
#  10. the deflation of the bodies' modes (`body_deflation`) on against off: the shipped
#      floating_bodies and buoyancy, three interleaved runs each.
#
# Each step runs under a time limit (STEP_LIMIT_SCALE=2 doubles them all), so a step that
# runs long leaves a line saying so and the later steps still run: a GPU lease is short.
#
#   scripts/gpu-bench.sh [EDDY]          EDDY: default target/release/eddy (built if missing)
#   QUICK=1 scripts/gpu-bench.sh         small sizes, for checking the script without a GPU
#   RENDER_BENCH=PATH                    the render_frame bench binary (default: the newest
#                                        target/release/deps/render_frame-*; build it with
#                                        `cargo bench --bench render_frame --no-run`)
#   BENCH_OUT=DIR                        write here instead of benchmarks/DATE-ADAPTER
#   SKIP="8 9"                           leave out these steps (any of 1-10; 8, 9 and 10
#                                        compare settings, a short lease may want the time)
#
# On a lent GPU machine: build the release binary here, carry it (and the Vulkan loader),
# run this once, and copy the folder back; its tables go into BENCHMARKS.md with the
# adapter named.
set -euo pipefail
cd "$(dirname "$0")/.."
eddy="${1:-target/release/eddy}"
if [ ! -x "$eddy" ]; then
  cargo build --release
fi
if [ -n "${QUICK:-}" ]; then
  solver_sizes="16 32"; body_size=16; substep_sizes="24 32"; frames=10; smoke_sizes=64,128
  render_res=16; render_size=320x200
else
  solver_sizes="64 128 256"; body_size=32,64; substep_sizes="128 256"; frames=120; smoke_sizes=512,1024
  render_res=104; render_size=1920x1080
fi
scale="${STEP_LIMIT_SCALE:-${QUICK:+4}}"; scale="${scale:-1}"  # QUICK runs on a CPU adapter: 4x
# limited SECONDS CMD...: runs CMD with a time limit; a step past it says so and the script
# goes on with the next.
limited() {
  local secs=$(( $1 * scale )); shift
  local rc=0
  timeout "$secs" "$@" || rc=$?
  if [ "$rc" = 124 ]; then
    echo "(stopped at its ${secs} s limit)"
  elif [ "$rc" != 0 ]; then
    echo "(exited with status $rc)"
  fi
}
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
adapter=$("$eddy" check dam_break 2>&1 | sed -n 's/^adapter *\(.*\): the scene.*/\1/p' | head -1)
adapter="${adapter:-unknown adapter}"
slug=$(printf '%s' "$adapter" | tr -cs 'A-Za-z0-9' '-' | cut -c1-40 | sed 's/-*$//')
out="${BENCH_OUT:-benchmarks/$(date -u +%Y-%m-%d)-${slug:-adapter}${QUICK:+-quick}}"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log() { printf '%s\n' "$*" | tee -a "$out/summary.md"; }

: > "$out/summary.md"
log "# eddy benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
log ""
log "- adapter: $adapter"
log "- eddy: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
log "- host: $(nproc) cores, $(uname -srm)"
log ""

step() { echo "gpu-bench: $*" >&2; }
# want N: whether step N runs (SKIP lists the ones left out).
want() { case " ${SKIP:-} " in *" $1 "*) step "$1/10 skipped (SKIP)"; return 1 ;; esac; }

# The solver table one size at a time, so a long size keeps the smaller ones.
if want 1; then
for n in $solver_sizes; do
  step "1/10 solver table at $n"
  limited $(( n >= 256 ? 200 : 60 )) "$eddy" bench --sizes "$n" --json "$out/solver_$n.json" \
    > "$out/solver_$n.txt" 2> "$out/solver_$n.err"
  log "## Solver table ($n^3)"; log '```'; cat "$out/solver_$n.txt" >> "$out/summary.md"; log '```'
done
fi

if want 2; then
step "2/10 16 floating bodies, strong against A alone and weak, at $body_size"
limited 120 "$eddy" bench --sizes "$body_size" \
  --problems floating_bodies,floating_bodies_deflated,floating_bodies_alone,floating_bodies_weak \
  --preconditioners mg,ip --json "$out/bodies.json" > "$out/bodies.txt" 2> "$out/bodies.err"
log "## Coupled solve, 16 bodies ($body_size^3)"; log '```'; cat "$out/bodies.txt" >> "$out/summary.md"; log '```'
fi

if want 3; then
for n in $substep_sizes; do
  step "3/10 full substep, dam break at $n"
  limited $(( n >= 256 ? 60 : 30 )) "$eddy" run dam_break --resolution "$n" --frames 5 --out "$tmp/substep_$n" \
    > "$out/substep_$n.txt" 2> "$out/substep_$n.err"
  log "## Full substep, dam break at $n cells"; log '```'; cat "$out/substep_$n.txt" >> "$out/summary.md"; log '```'
done
fi

if want 4; then
step "4/10 default scene, $frames frames"
limited 40 "$eddy" run dam_break --frames "$frames" --out "$tmp/default" > "$out/default.txt" 2> "$out/default.err"
log "## Default scene ($frames frames)"; log '```'; head -1 "$out/default.txt" >> "$out/summary.md"; log '```'
fi

if want 5; then
step "5/10 smoke at $smoke_sizes"
limited 40 "$eddy" bench --smoke --sizes "$smoke_sizes" --json "$out/smoke.json" > "$out/smoke.txt" 2> "$out/smoke.err"
log "## Smoke ($smoke_sizes)"; log '```'; cat "$out/smoke.txt" >> "$out/summary.md"; log '```'
fi

if want 6; then
largest=${substep_sizes##* }
step "6/10 memory at $largest"
"$eddy" check dam_break > "$out/check_default.txt" 2>&1 || true
printf '(name: "dam break %s", domain: (1.0, 1.0, 0.5), resolution: (%s, %s, %s),\n fluid: [Box(min: (0.0, 0.0, 0.0), max: (0.35, 0.6, 0.5))])\n' \
  "$largest" "$largest" "$largest" "$((largest / 2))" > "$tmp/large.ron"
"$eddy" check "$tmp/large.ron" > "$out/check_$largest.txt" 2>&1 || true
log "## Memory (eddy check, dam break at $largest)"; log '```'; cat "$out/check_$largest.txt" >> "$out/summary.md"; log '```'
fi

if want 7; then
render_bin="${RENDER_BENCH:-$(ls -t target/release/deps/render_frame-* 2>/dev/null | grep -v '\.d$' | head -1 || true)}"
if [ -n "$render_bin" ] && [ -x "$render_bin" ]; then
  step "7/10 render at $render_size, dam break at $render_res cells"
  EDDY_RENDER_SIZE=$render_size EDDY_RENDER_RESOLUTION=$render_res \
    limited 60 "$render_bin" > "$out/render.txt" 2> "$out/render.err"
  log "## Viewer render ($render_size, dam break at $render_res cells)"; log '```'; cat "$out/render.txt" >> "$out/summary.md"; log '```'
else
  step "7/10 skipped: no render_frame bench binary (cargo bench --bench render_frame --no-run)"
  log "## Viewer render: skipped (no render_frame bench binary)"
fi
fi

# pipelined SCENE OUT ON: SCENE (a shipped scene's file) with pressure.pipelined set to ON
# (true or false; the shipped default is true, so both are written out).
pipelined() {
  sed "0,/pressure: (/s//pressure: (pipelined: $3, /" "$1" > "$2"
}
if want 8; then
step "8/10 solves queued ahead, on against off"
: > "$out/pipelined.txt"
for sc in dam_break floating_bodies; do
  pipelined "scenes/$sc.ron" "$tmp/${sc}_on.ron" true
  pipelined "scenes/$sc.ron" "$tmp/${sc}_off.ron" false
  for i in 1 2 3; do
    for v in off on; do
      f="$tmp/${sc}_$v.ron"
      printf '%s %s: ' "$sc" "$v" >> "$out/pipelined.txt"
      limited 30 "$eddy" run "$f" --frames "$frames" --overwrite --out "$tmp/pipe" 2>/dev/null \
        | grep -E 'steps/s|^per substep' | tr '\n' ' ' >> "$out/pipelined.txt"
      echo >> "$out/pipelined.txt"
    done
  done
done
log "## Solves queued ahead (pressure.pipelined), on against off"; log '```'; cat "$out/pipelined.txt" >> "$out/summary.md"; log '```'
fi

if want 9; then
step "9/10 the multigrid's one-workgroup tail at several thresholds"
: > "$out/mg_tail.txt"
for i in 1 2; do
  for sc in dam_break smoke_plume double_dam_break; do
    for t in 0 1024 4096 16384; do
      printf '%s tail %s: ' "$sc" "$t" >> "$out/mg_tail.txt"
      EDDY_MG_TAIL_CELLS=$t limited 30 "$eddy" run "$sc" --frames "$frames" --overwrite --out "$tmp/tail" 2>/dev/null \
        | grep -E 'steps/s|^per substep' | tr '\n' ' ' >> "$out/mg_tail.txt"
      echo >> "$out/mg_tail.txt"
    done
  done
done
n=${substep_sizes%% *}
for t in 0 4096; do
  echo "mg solve at $n^3, tail $t:" >> "$out/mg_tail.txt"
  EDDY_MG_TAIL_CELLS=$t limited 60 "$eddy" bench --sizes "$n" --preconditioners mg --problems dam_break \
    >> "$out/mg_tail.txt" 2>/dev/null
done
log "## The multigrid's one-workgroup tail (EDDY_MG_TAIL_CELLS)"; log '```'; cat "$out/mg_tail.txt" >> "$out/summary.md"; log '```'
fi

if want 10; then
step "10/10 the bodies' deflation, on against off"
: > "$out/deflation.txt"
for sc in floating_bodies buoyancy; do
  for v in true false; do
    sed "0,/^    resolution:/s//    body_deflation: Some($v),\n    resolution:/" "scenes/$sc.ron" > "$tmp/${sc}_defl_$v.ron"
  done
  for i in 1 2 3; do
    for v in false true; do
      printf '%s deflation %s: ' "$sc" "$v" >> "$out/deflation.txt"
      limited 30 "$eddy" run "$tmp/${sc}_defl_$v.ron" --frames "$frames" --overwrite --out "$tmp/defl" 2>/dev/null \
        | grep -E 'steps/s|^  pressure' | tr '\n' ' ' >> "$out/deflation.txt"
      awk -F, 'NR > 1 { s += $13 } END { printf "mg iterations %d", s }' "$tmp/defl/stats.csv" >> "$out/deflation.txt"
      echo >> "$out/deflation.txt"
    done
  done
done
log "## The bodies' deflation (body_deflation), on against off"; log '```'; cat "$out/deflation.txt" >> "$out/summary.md"; log '```'
fi

step "done: $out/summary.md"
echo "$out"
