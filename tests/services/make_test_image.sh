#!/usr/bin/env bash
# Build the small, real, reproducible test image (no docker daemon needed) and publish it
# to every place the tests look:
#
#   $STATE/image/oci                 OCI layout, refs v1 (amd64 manifest) and v1-multi (index)
#   $STATE/image/test.oci.tar        oci-archive of v1
#   $STATE/image/test.docker.tar     docker-archive of v1 (RepoTags localhost/auditor/test:v1)
#   127.0.0.1:5000/auditor/test:{v1,v1-docker,v1-multi}   open registry
#   127.0.0.1:5001/auditor/test:{v1,v1-docker,v1-multi}   htpasswd registry
#       v1        OCI manifest (pushed with --preserve-digests: same digest as in the layout)
#       v1-docker Docker v2 schema 2 manifest + media types (skopeo --format v2s2)
#       v1-multi  OCI image index (amd64 + arm64 entries)
#       v1-zstd, v1-plain  (open registry only) the same layers as zstd / uncompressed tar
#   podman store: localhost/auditor/test:v1        (docker-archive loaded via POST /images/load)
#                 localhost/auditor/test:v1-skopeo (skopeo copy into containers-storage)
#
# Writes $STATE/image/info.json and $STATE/image/env.sh and merges the latter into $STATE/env.sh.
# Starts the services first (start.sh is idempotent). Safe to run repeatedly.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"

"$HERE/start.sh" >/dev/null
podman_flags_init

IMG="$STATE/image"
CACHE="$STATE/cache"
REPO="auditor/test"
SIX_WHL="six-1.16.0-py2.py3-none-any.whl"
SIX_SHA256="8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254"
mkdir -p "$IMG" "$CACHE"

T0=$(date +%s%N)
step() { local ms=$(( ($(date +%s%N) - T0) / 1000000 )); log "$(printf '[%4d.%01ds] ' $((ms / 1000)) $((ms % 1000 / 100)))image: $*"; }

# ------------------------------------------------------------ python with pip
PY=""
for c in python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -m pip --version >/dev/null 2>&1; then PY=$c; break; fi
done
if [ -z "$PY" ]; then
  log "no python3 with pip found; installing python3-pip"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pip >"$STATE/apt-pip.log" 2>&1 ||
    { apt-get update -q >>"$STATE/apt-pip.log" 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pip >>"$STATE/apt-pip.log" 2>&1; } ||
    die "could not install python3-pip (see $STATE/apt-pip.log)"
  PY=/usr/bin/python3
fi

# ------------------------------------------------------------ the wheel (cached, hash-pinned)
have_wheel() { [ -f "$CACHE/$SIX_WHL" ] && [ "$(sha256sum "$CACHE/$SIX_WHL" | cut -d' ' -f1)" = "$SIX_SHA256" ]; }
if ! have_wheel; then
  echo "six==1.16.0 --hash=sha256:$SIX_SHA256" > "$CACHE/requirements.txt"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$PY" -m pip download -q --no-deps --only-binary=:all: --require-hashes \
    -r "$CACHE/requirements.txt" -d "$CACHE" || die "pip download six==1.16.0 failed"
  have_wheel || die "downloaded $SIX_WHL does not match sha256 $SIX_SHA256"
  step "downloaded $SIX_WHL"
fi

WORK=$(mktemp -d "$STATE/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# --find-links + requirement (not the file path) so pip writes no direct_url.json with a local
# path in it; --no-compile so there is no __pycache__: the layer stays reproducible.
PIP_DISABLE_PIP_VERSION_CHECK=1 "$PY" -m pip install -q --no-deps --no-index --no-compile \
  --find-links "$CACHE" --target "$WORK/site" six==1.16.0 >"$WORK/pip.log" 2>&1 ||
  { cat "$WORK/pip.log" >&2; die "pip install --target failed"; }
step "six installed into a temp site dir"

# ------------------------------------------------------------ OCI layout
[ -x /bin/busybox ] || die "/bin/busybox missing (start.sh installs busybox-static)"
"$PY" "$HERE/build_oci_image.py" --out "$IMG/oci" --site "$WORK/site" --busybox /bin/busybox \
  --info "$IMG/info.json" >/dev/null
rm -rf "$IMG/variants" && cp -a "$IMG/oci" "$IMG/variants"
"$PY" "$HERE/layer_variants.py" --layout "$IMG/variants"
MANIFEST_DIGEST=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifest_digest"])' "$IMG/info.json")
CONFIG_DIGEST=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["config_digest"])' "$IMG/info.json")
INDEX_DIGEST=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["index_digest"])' "$IMG/info.json")
step "OCI layout written to $IMG/oci (manifest $MANIFEST_DIGEST)"

# ------------------------------------------------------------ archives
rm -f "$IMG/test.docker.tar" "$IMG/test.oci.tar"
skopeo copy -q "oci:$IMG/oci:v1" "docker-archive:$IMG/test.docker.tar:localhost/$REPO:v1" >/dev/null
skopeo copy -q "oci:$IMG/oci:v1" "oci-archive:$IMG/test.oci.tar:v1" >/dev/null
step "docker-archive and oci-archive written"

# ------------------------------------------------------------ registries
push() { # push REGISTRY EXTRA-ARGS...
  local reg=$1; shift
  skopeo copy -q --dest-tls-verify=false --preserve-digests "$@" \
    "oci:$IMG/oci:v1" "docker://$reg/$REPO:v1" >/dev/null
  skopeo copy -q --dest-tls-verify=false --format v2s2 "$@" \
    "oci:$IMG/oci:v1" "docker://$reg/$REPO:v1-docker" >/dev/null
  skopeo copy -q --dest-tls-verify=false --all --preserve-digests "$@" \
    "oci:$IMG/oci:v1-multi" "docker://$reg/$REPO:v1-multi" >/dev/null
}
# the same layers recompressed (layer_variants.py), for the decoders: zstd and plain tar
push_variants() { # push_variants REGISTRY
  local v
  for v in v1-zstd v1-plain; do
    skopeo copy -q --dest-tls-verify=false --preserve-digests \
      "oci:$IMG/variants:$v" "docker://$1/$REPO:$v" >/dev/null
  done
}
push "127.0.0.1:$REG_PORT"
push_variants "127.0.0.1:$REG_PORT"
step "pushed to 127.0.0.1:$REG_PORT/$REPO:{v1,v1-docker,v1-multi,v1-zstd,v1-plain}"
push "127.0.0.1:$REG_AUTH_PORT" --dest-creds "$REG_USER:$REG_PASSWORD"
step "pushed to 127.0.0.1:$REG_AUTH_PORT/$REPO:{v1,v1-docker,v1-multi} (basic auth)"
DOCKER_MANIFEST_DIGEST=$(skopeo inspect --raw --tls-verify=false "docker://127.0.0.1:$REG_PORT/$REPO:v1-docker" | sha256sum | cut -d' ' -f1)
DOCKER_MANIFEST_DIGEST="sha256:$DOCKER_MANIFEST_DIGEST"

# ------------------------------------------------------------ podman
LOAD_OUT=$(curl -sS -m 120 --unix-socket "$PODMAN_SOCK" -X POST -H 'Content-Type: application/x-tar' \
  --data-binary "@$IMG/test.docker.tar" "http://d/v1.41/images/load?quiet=1") ||
  die "POST /images/load failed"
case "$LOAD_OUT" in *"localhost/$REPO:v1"*) ;; *) die "unexpected /images/load answer: $LOAD_OUT" ;; esac
skopeo copy -q "oci:$IMG/oci:v1" "$(podman_store_ref "localhost/$REPO:v1-skopeo")" >/dev/null
PODMAN_IMAGE_ID=$(curl -sS --unix-socket "$PODMAN_SOCK" "http://d/v1.41/images/localhost%2F${REPO//\//%2F}:v1/json" |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["Id"])')
step "loaded into podman: localhost/$REPO:v1 ($PODMAN_IMAGE_ID) and :v1-skopeo"

# ------------------------------------------------------------ env
cat > "$IMG/env.sh" <<EOF
export AUDITOR_TEST_IMAGE_REPO='$REPO'
export AUDITOR_TEST_IMAGE_TAG='v1'
export AUDITOR_TEST_IMAGE_MANIFEST_DIGEST='$MANIFEST_DIGEST'
export AUDITOR_TEST_IMAGE_CONFIG_DIGEST='$CONFIG_DIGEST'
export AUDITOR_TEST_IMAGE_INDEX_DIGEST='$INDEX_DIGEST'
export AUDITOR_TEST_IMAGE_DOCKER_MANIFEST_DIGEST='$DOCKER_MANIFEST_DIGEST'
export AUDITOR_TEST_IMAGE_OCI_DIR='$IMG/oci'
export AUDITOR_TEST_IMAGE_OCI_ARCHIVE='$IMG/test.oci.tar'
export AUDITOR_TEST_IMAGE_DOCKER_ARCHIVE='$IMG/test.docker.tar'
export AUDITOR_TEST_IMAGE_INFO='$IMG/info.json'
export AUDITOR_TEST_PODMAN_IMAGE='localhost/$REPO:v1'
export AUDITOR_TEST_PODMAN_IMAGE_ID='$PODMAN_IMAGE_ID'
EOF
write_env
step "done; env in $STATE/env.sh"
cat "$IMG/env.sh"
