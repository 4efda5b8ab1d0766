#!/usr/bin/env bash
# A long soak of the viewer: `scripts/viewer-soak.sh [MINUTES] [SCENE]` (default 30,
# dam_break) opens it on an X server of its own (Xvfb), lets it run for a third of the time
# and sits paused for the rest, printing its resident memory and CPU use each minute. Needs
# Xvfb and xdotool (scripts/test.sh installs both) and a release build (built if missing).
# The short version is in the suite: tests/integration/viewer_endurance.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-30}"
scene="${2:-dam_break}"
[ -x target/release/eddy ] || cargo build --release --quiet
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/eddy-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
display=":$((90 + RANDOM % 40))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$viewer" "$xvfb" 2>/dev/null || true' EXIT
sleep 1
DISPLAY="$display" EDDY_VIEWER_SETTINGS=off target/release/eddy view "$scene" >/dev/null 2>&1 &
viewer=$!
window="$(DISPLAY="$display" timeout 60 xdotool search --sync --name '^eddy$' | head -1)"
usage() { # resident kB and CPU ticks (user + system)
  echo "$(awk '/VmRSS/ {print $2}' "/proc/$viewer/status") $(awk '{print $14 + $15}' "/proc/$viewer/stat")"
}
echo "minute,state,rss_mb,cpu_share_of_a_core"
read -r rss0 ticks0 < <(usage)
for m in $(seq 1 "$minutes"); do
  state=running
  if [ "$m" -gt $((minutes / 3)) ]; then
    state=paused
    if [ "$m" -eq $((minutes / 3 + 1)) ]; then
      DISPLAY="$display" xdotool windowfocus --sync "$window" key space
    fi
  fi
  sleep 60
  read -r rss ticks < <(usage)
  awk -v m="$m" -v s="$state" -v r="$rss" -v t="$ticks" -v t0="$ticks0" \
    'BEGIN { printf "%d,%s,%.1f,%.3f\n", m, s, r / 1024, (t - t0) / 100 / 60 }'
  ticks0="$ticks"
done
