#!/usr/bin/env bash
# Start the loopback test services used by auditor's integration tests:
#   - an open Docker distribution registry          (127.0.0.1:$AUDITOR_TEST_REGISTRY_PORT, default 5000)
#   - an htpasswd (bcrypt, basic auth) registry     (127.0.0.1:$AUDITOR_TEST_REGISTRY_AUTH_PORT, default 5001)
#   - `podman system service` (Docker Engine API)   (unix://$STATE/podman.sock)
#
# Installs missing Debian packages first (only when missing). Idempotent: services
# that are already running (pid file + process alive + endpoint answering) are left
# alone. Writes the variables tests should use to $STATE/env.sh and prints them.
#
# Usage: tests/services/start.sh [--with-image]
#   --with-image   also run make_test_image.sh afterwards (builds + pushes + loads the test image)
#
# Environment knobs:
#   AUDITOR_SERVICES_DIR            state dir (default /tmp/auditor-services)
#   AUDITOR_TEST_REGISTRY_PORT      open registry port (default 5000)
#   AUDITOR_TEST_REGISTRY_AUTH_PORT auth registry port (default 5001)
#   AUDITOR_SERVICES_WAIT           seconds to wait for each service (default 60)
#   AUDITOR_SERVICES_NO_INSTALL=1   never call apt-get (fail if something is missing)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"

WITH_IMAGE=0
for arg in "$@"; do
  case "$arg" in
    --with-image) WITH_IMAGE=1 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

T0=$(date +%s%N)
phase() { local ms=$(( ($(date +%s%N) - T0) / 1000000 )); log "$(printf '[%4d.%01ds] ' $((ms / 1000)) $((ms % 1000 / 100)))$*"; }

# ---------------------------------------------------------------- packages
# binary-or-file to check -> Debian package providing it (chromium and a font:
# the browser test of the HTML report, tests/it/html.rs; bubblewrap, xxd and
# bc: the sandbox in which tests/it/oracle.rs runs launch scripts with real
# bash, xxd and bc being pure programs it keeps real there)
ensure_packages() {
  local missing=()
  local pair bin pkg
  for pair in \
      /usr/bin/docker-registry:docker-registry \
      /usr/bin/podman:podman \
      /usr/bin/skopeo:skopeo \
      /usr/bin/htpasswd:apache2-utils \
      /usr/bin/curl:curl \
      /usr/bin/ss:iproute2 \
      /usr/bin/pgrep:procps \
      /bin/busybox:busybox-static \
      /usr/bin/python3:python3 \
      /usr/bin/zstd:zstd \
      /usr/bin/time:time \
      /usr/bin/strace:strace \
      /usr/bin/openssl:openssl \
      /usr/bin/jq:jq \
      /usr/bin/bwrap:bubblewrap \
      /usr/bin/xxd:xxd \
      /usr/bin/bc:bc \
      /usr/bin/shellcheck:shellcheck \
      /usr/bin/go:golang-go \
      /usr/bin/chromium:chromium \
      /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core \
      ; do
    bin=${pair%%:*}; pkg=${pair##*:}
    if [ ! -e "$bin" ] || ! dpkg -s "$pkg" >/dev/null 2>&1; then
      missing+=("$pkg")
    fi
  done
  # OCI runtime: runc, not crun. crun 1.8 refuses this sandbox's hybrid cgroup layout
  # ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2": the v2
  # mount has hugetlb enabled); runc 1.1 runs containers fine here. Listing runc also
  # satisfies podman's "crun | runc" dependency, so crun is not pulled in.
  if [ ! -x /usr/sbin/runc ] || ! dpkg -s runc >/dev/null 2>&1; then
    missing+=(runc)
  fi
  if [ ${#missing[@]} -eq 0 ]; then
    phase "packages: all present"
    return 0
  fi
  [ "${AUDITOR_SERVICES_NO_INSTALL:-0}" = 1 ] && die "missing packages: ${missing[*]} (AUDITOR_SERVICES_NO_INSTALL=1)"
  [ "$(id -u)" = 0 ] || die "missing packages ${missing[*]} and not root: install them first"
  phase "packages: installing ${missing[*]}"
  # The docker-registry package ships a sysv/systemd service that would listen on
  # :5000 with /etc/docker/registry/config.yml. Make sure apt does not start it.
  local tmp_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    tmp_policy=1
  fi
  local rc=0
  export DEBIAN_FRONTEND=noninteractive
  local apt_opts=(-y -q --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold -o DPkg::Lock::Timeout=300)
  if ! apt-get install "${apt_opts[@]}" "${missing[@]}" >"$STATE/apt.log" 2>&1; then
    phase "packages: first install attempt failed, running apt-get update"
    apt-get update -q >>"$STATE/apt.log" 2>&1 || true
    apt-get install "${apt_opts[@]}" "${missing[@]}" >>"$STATE/apt.log" 2>&1 || rc=$?
  fi
  [ $tmp_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
  if [ $rc != 0 ]; then
    tail -n 30 "$STATE/apt.log" >&2
    die "apt-get install ${missing[*]} failed (full log: $STATE/apt.log)"
  fi
  phase "packages: installed"
}

# ---------------------------------------------------------------- helpers
port_in_use() { ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }

# spawn NAME CMD...: start CMD detached, logs to $STATE/NAME.log, pid in $STATE/NAME.pid
spawn() {
  local name=$1; shift
  : > "$STATE/$name.log"
  # setsid (without -f) execs in place, so $! is the service's own pid.
  # 9>&- : do not leak the start.sh lock fd into the daemon (it would hold the lock forever)
  setsid "$@" >>"$STATE/$name.log" 2>&1 </dev/null 9>&- &
  echo $! > "$STATE/$name.pid"
}

# wait_for NAME CHECK-FUNCTION
wait_for() {
  local name=$1 check=$2 waited=0 limit=${AUDITOR_SERVICES_WAIT:-60}
  local pid; pid=$(cat "$STATE/$name.pid")
  while ! "$check"; do
    # plain liveness here: right after the fork the cmdline is still start.sh's own
    if ! alive "$pid"; then
      echo "---- tail of $STATE/$name.log ----" >&2
      tail -n 40 "$STATE/$name.log" >&2 || true
      die "$name exited during startup"
    fi
    if [ "$waited" -ge $((limit * 5)) ]; then
      echo "---- tail of $STATE/$name.log ----" >&2
      tail -n 40 "$STATE/$name.log" >&2 || true
      die "$name did not answer within ${limit}s"
    fi
    sleep 0.2; waited=$((waited + 1))
  done
}

http_code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$@" 2>/dev/null || true; }

check_open()  { [ "$(http_code "http://127.0.0.1:$REG_PORT/v2/")" = 200 ]; }
check_auth()  { [ "$(http_code "http://127.0.0.1:$REG_AUTH_PORT/v2/")" = 401 ] &&
                [ "$(http_code -u "$REG_USER:$REG_PASSWORD" "http://127.0.0.1:$REG_AUTH_PORT/v2/")" = 200 ]; }
check_podman() { [ -S "$PODMAN_SOCK" ] &&
                 [ "$(curl -s -m 5 --unix-socket "$PODMAN_SOCK" http://d/_ping 2>/dev/null || true)" = OK ]; }

# ---------------------------------------------------------------- registries
write_registry_config() {
  # write_registry_config NAME PORT WITH_AUTH
  local name=$1 port=$2 auth=$3 dir="$STATE/$1"
  mkdir -p "$dir/storage"
  {
    cat <<EOF
# generated by tests/services/start.sh -- do not edit, rewritten on every start
version: 0.1
log:
  level: info
  accesslog:
    disabled: false
  fields:
    service: $name
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
  cache:
    blobdescriptor: inmemory
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:$port
  secret: auditor-test-http-secret-$name
  headers:
    X-Content-Type-Options: [nosniff]
health:
  storagedriver:
    enabled: false
EOF
    if [ "$auth" = 1 ]; then
      cat <<EOF
auth:
  htpasswd:
    realm: auditor-test-registry
    path: $dir/htpasswd
EOF
    fi
  } > "$dir/config.yml.new"
  mv -f "$dir/config.yml.new" "$dir/config.yml"
}

write_htpasswd() {
  local f="$STATE/registry-auth/htpasswd"
  # Keep an existing file if it still verifies (bcrypt hashing is salted, so
  # regenerating would change the file on every run for no reason).
  if [ -f "$f" ] && htpasswd -v -b "$f" "$REG_USER" "$REG_PASSWORD" >/dev/null 2>&1 &&
     grep -q "^$REG_USER:\$2y\$" "$f"; then
    return 0
  fi
  # -B = bcrypt (the only scheme docker distribution's htpasswd auth accepts)
  htpasswd -B -b -c "$f.new" "$REG_USER" "$REG_PASSWORD" >/dev/null 2>&1 ||
    die "htpasswd -B failed"
  mv -f "$f.new" "$f"
}

start_registry() {
  # start_registry NAME PORT CHECK
  local name=$1 port=$2 check=$3
  if is_running "$name"; then
    if "$check"; then phase "$name: already running (pid $(cat "$STATE/$name.pid")), port $port"; return 0; fi
    wait_for "$name" "$check"
    phase "$name: already running (pid $(cat "$STATE/$name.pid")), port $port"; return 0
  fi
  rm -f "$STATE/$name.pid"
  if port_in_use "$port"; then
    ss -Htlnp "sport = :$port" >&2 || true
    die "port $port is already in use by another process (set AUDITOR_TEST_REGISTRY_PORT / AUDITOR_TEST_REGISTRY_AUTH_PORT to change)"
  fi
  spawn "$name" /usr/bin/docker-registry serve "$STATE/$name/config.yml"
  wait_for "$name" "$check"
  phase "$name: started (pid $(cat "$STATE/$name.pid")), http://127.0.0.1:$port"
}

# ---------------------------------------------------------------- podman
write_podman_config() {
  # container rlimits: at most 4096, and never above our own hard limits (see containers.conf)
  local NOFILE_HARD NPROC_HARD
  NOFILE_HARD=$(ulimit -Hn); [ "$NOFILE_HARD" = unlimited ] || [ "$NOFILE_HARD" -gt 4096 ] && NOFILE_HARD=4096
  NPROC_HARD=$(ulimit -Hu);  [ "$NPROC_HARD" = unlimited ] || [ "$NPROC_HARD" -gt 4096 ] && NPROC_HARD=4096
  mkdir -p "$STATE/podman/root" "$STATE/podman/runroot" "$STATE/podman/tmp"
  cat > "$STATE/podman/storage.conf" <<EOF
# generated by tests/services/start.sh
[storage]
driver = "vfs"
graphroot = "$STATE/podman/root"
runroot = "$STATE/podman/runroot"
EOF
  cat > "$STATE/podman/containers.conf" <<EOF
# generated by tests/services/start.sh
[containers]
# no systemd, no cgroup namespace games in this sandbox
cgroupns = "host"
log_driver = "k8s-file"
netns = "none"
# podman's defaults for root (nofile=1048576, nproc = podman's own limit) are above this
# sandbox's hard limits (nofile 20000; podman lowers its own nproc to 32768 at startup), and
# root here has no CAP_SYS_RESOURCE to raise them: crun then fails with "setrlimit
# RLIMIT_NOFILE/RLIMIT_NPROC: Operation not permitted". Lowering is always allowed.
default_ulimits = ["nofile=$NOFILE_HARD:$NOFILE_HARD", "nproc=$NPROC_HARD:$NPROC_HARD"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$STATE/podman/events.log"
tmp_dir = "$STATE/podman/tmp"
runtime = "$PODMAN_RUNTIME"
[network]
network_config_dir = "$STATE/podman/networks"
EOF
  mkdir -p "$STATE/podman/networks"
}

# A podman service that answers _ping can still have lost the ability to start
# containers (seen after a long-lived service outlived its runtime state). When
# the test image is in the store, run `/bin/sh -c true` in it through the API as
# the tests do; a failure anywhere means the service is not reused.
podman_runs_containers() {
  local api="http://d/v1.41" image=localhost/auditor/test:v1 id code
  local -a c=(curl -s -m 30 --unix-socket "$PODMAN_SOCK")
  [ "$("${c[@]}" -o /dev/null -w '%{http_code}' "$api/images/${image//\//%2F}/json")" = 200 ] || return 0
  id=$("${c[@]}" -X POST -H 'Content-Type: application/json' \
    -d "{\"Image\":\"$image\",\"Cmd\":[\"/bin/sh\",\"-c\",\"true\"],\"HostConfig\":{\"NetworkMode\":\"none\"}}" \
    "$api/containers/create" | sed -n 's/.*"Id": *"\([0-9a-f]*\)".*/\1/p')
  [ -n "$id" ] || return 1
  code=$("${c[@]}" -X POST -o /dev/null -w '%{http_code}' "$api/containers/$id/start")
  local waited; waited=$("${c[@]}" -X POST "$api/containers/$id/wait")
  "${c[@]}" -X DELETE -o /dev/null "$api/containers/$id?force=1" || true
  [ "$code" = 204 ] && printf '%s' "$waited" | grep -q '"StatusCode": *0'
}

start_podman() {
  if is_running podman; then
    wait_for podman check_podman
    if podman_runs_containers; then
      phase "podman: already running (pid $(cat "$STATE/podman.pid")), $DOCKER_HOST_URL"; return 0
    fi
    log "podman: running but cannot start a container; restarting it"
    local old; old=$(cat "$STATE/podman.pid")
    kill -TERM "$old" 2>/dev/null || true
    pkill -TERM -f -- "conmon .*$STATE/podman" 2>/dev/null || true
    for _ in $(seq 1 50); do alive "$old" || break; sleep 0.2; done
    alive "$old" && kill -KILL "$old" 2>/dev/null || true
  fi
  rm -f "$STATE/podman.pid" "$PODMAN_SOCK"
  # runroot and tmpdir are meant to be on a tmpfs that a reboot empties; here they live
  # on disk. If no conmon of ours is alive (fresh boot, or the previous session's
  # processes were all killed), clear them so podman runs its after-reboot refresh and
  # marks stale "running" containers as exited instead of trusting dead pids.
  if ! pgrep -f -- "conmon .*$STATE/podman" >/dev/null 2>&1; then
    rm -rf "$STATE/podman/runroot" "$STATE/podman/tmp"
    mkdir -p "$STATE/podman/runroot" "$STATE/podman/tmp"
  fi
  spawn podman /usr/bin/podman "${PODMAN_FLAGS[@]}" system service --time=0 "$DOCKER_HOST_URL"
  wait_for podman check_podman
  phase "podman: started (pid $(cat "$STATE/podman.pid")), $DOCKER_HOST_URL"
}

# ---------------------------------------------------------------- main
mkdir -p "$STATE"
exec 9>"$STATE/.start.lock"
flock -w 120 9 || die "could not lock $STATE/.start.lock"

ensure_packages
PODMAN_RUNTIME=runc
podman_flags_init

write_registry_config registry-open "$REG_PORT" 0
write_registry_config registry-auth "$REG_AUTH_PORT" 1
write_htpasswd
write_podman_config

start_registry registry-open "$REG_PORT" check_open
start_registry registry-auth "$REG_AUTH_PORT" check_auth
start_podman

write_env
phase "all services up; env written to $STATE/env.sh"
cat "$STATE/env.sh"

if [ "$WITH_IMAGE" = 1 ]; then
  exec 9>&-
  "$HERE/make_test_image.sh"
fi
