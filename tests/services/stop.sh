#!/usr/bin/env bash
# Stop the services started by tests/services/start.sh (only those: processes are
# found through the pid files in the state dir, and checked against their cmdline).
#
# Usage: tests/services/stop.sh [--purge]
#   --purge   also delete the whole state dir (registry storage, podman store, image, logs)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"

PURGE=0
for arg in "$@"; do
  case "$arg" in
    --purge) PURGE=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

[ -d "$STATE" ] || { log "nothing to stop ($STATE does not exist)"; exit 0; }
exec 9>"$STATE/.start.lock"
flock -w 30 9 || log "warning: could not lock $STATE/.start.lock within 30s, stopping anyway"

podman_flags_init

# Containers that tests left running (their conmon processes outlive the service).
if [ -x /usr/bin/podman ] && [ -d "$STATE/podman/root" ] && [ -f "$CONTAINERS_CONF" ]; then
  if [ -n "$(timeout 30 /usr/bin/podman "${PODMAN_FLAGS[@]}" ps -q 2>/dev/null 9>&- || true)" ]; then
    log "podman: stopping leftover containers"
    timeout 60 /usr/bin/podman "${PODMAN_FLAGS[@]}" stop -a -t 2 >/dev/null 2>&1 9>&- || true
  fi
fi

stop_one() {
  local name=$1 pid i
  if ! is_running "$name"; then
    rm -f "$STATE/$name.pid"
    log "$name: not running"
    return 0
  fi
  pid=$(cat "$STATE/$name.pid")
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    alive "$pid" || break
    sleep 0.2
  done
  if alive "$pid"; then
    log "$name: did not exit on SIGTERM within 10s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.2
  fi
  rm -f "$STATE/$name.pid"
  log "$name: stopped (pid $pid)"
}

stop_one podman
rm -f "$PODMAN_SOCK"
stop_one registry-auth
stop_one registry-open

if [ "$PURGE" = 1 ]; then
  # unmount anything podman may have left mounted below the state dir (shm, overlay...)
  if command -v findmnt >/dev/null 2>&1; then
    { findmnt -rn -o TARGET | grep -F "$STATE/" | sort -r || true; } | while read -r m; do
      umount -l "$m" 2>/dev/null || true
    done
  fi
  exec 9>&-
  rm -rf "$STATE"
  log "purged $STATE"
fi
