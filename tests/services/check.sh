#!/usr/bin/env bash
# End-to-end smoke check of the running services and the test image
# (run start.sh and make_test_image.sh first). Exits non-zero on the first failure and
# prints "N passed, 0 failed" at the end.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"
[ -f "$STATE/env.sh" ] || die "$STATE/env.sh missing: run start.sh first"
# shellcheck disable=SC1091
. "$STATE/env.sh"
[ -n "${AUDITOR_TEST_IMAGE_MANIFEST_DIGEST:-}" ] || die "no test image in env.sh: run make_test_image.sh first"
podman_flags_init

PASS=0
ok()   { PASS=$((PASS + 1)); printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*" >&2; printf '%d passed, 1 failed\n' "$PASS"; exit 1; }
expect_eq() { [ "$2" = "$3" ] && ok "$1" || fail "$1: expected '$3', got '$2'"; }
expect_has() { case "$2" in *"$3"*) ok "$1" ;; *) fail "$1: '$3' not in: $2" ;; esac; }

OPEN="$AUDITOR_TEST_REGISTRY"; AUTH="$AUDITOR_TEST_REGISTRY_AUTH"
CREDS="$AUDITOR_TEST_REGISTRY_USER:$AUDITOR_TEST_REGISTRY_PASSWORD"
REPO="$AUDITOR_TEST_IMAGE_REPO"
ACCEPT='Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json'

# ---- registries over plain HTTP
expect_has "open registry /v2/_catalog" "$(curl -fsS "http://$OPEN/v2/_catalog")" "\"$REPO\""
expect_eq  "auth registry /v2/_catalog without creds -> 401" \
  "$(curl -s -o /dev/null -w '%{http_code}' "http://$AUTH/v2/_catalog")" 401
expect_has "auth registry 401 carries WWW-Authenticate: Basic" \
  "$(curl -s -D - -o /dev/null "http://$AUTH/v2/" | tr -d '\r' | grep -i '^www-authenticate:')" 'Basic realm="auditor-test-registry"'
expect_eq  "auth registry with wrong password -> 401" \
  "$(curl -s -o /dev/null -w '%{http_code}' -u "$AUDITOR_TEST_REGISTRY_USER:nope" "http://$AUTH/v2/_catalog")" 401
expect_has "auth registry /v2/_catalog with creds" "$(curl -fsS -u "$CREDS" "http://$AUTH/v2/_catalog")" "\"$REPO\""
expect_eq  "open registry manifest v1 digest header" \
  "$(curl -fsS -o /dev/null -D - -H "$ACCEPT" "http://$OPEN/v2/$REPO/manifests/v1" | tr -d '\r' | awk -F': ' 'tolower($1)=="docker-content-digest"{print $2}')" \
  "$AUDITOR_TEST_IMAGE_MANIFEST_DIGEST"
expect_eq  "blob GET returns the bytes of its digest (config)" \
  "sha256:$(curl -fsSL -u "$CREDS" "http://$AUTH/v2/$REPO/blobs/$AUDITOR_TEST_IMAGE_CONFIG_DIGEST" | sha256sum | cut -d' ' -f1)" \
  "$AUDITOR_TEST_IMAGE_CONFIG_DIGEST"

# ---- skopeo through both registries
expect_eq "skopeo inspect open v1" \
  "$(skopeo inspect --tls-verify=false --format '{{.Digest}}' "docker://$OPEN/$REPO:v1")" "$AUDITOR_TEST_IMAGE_MANIFEST_DIGEST"
expect_eq "skopeo inspect auth v1 (--creds)" \
  "$(skopeo inspect --tls-verify=false --creds "$CREDS" --format '{{.Digest}}' "docker://$AUTH/$REPO:v1")" "$AUDITOR_TEST_IMAGE_MANIFEST_DIGEST"
expect_eq "skopeo inspect auth v1-docker is Docker schema 2" \
  "$(skopeo inspect --tls-verify=false --creds "$CREDS" --raw "docker://$AUTH/$REPO:v1-docker" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mediaType"])')" \
  "application/vnd.docker.distribution.manifest.v2+json"
expect_eq "skopeo inspect open v1-multi --override-arch arm64" \
  "$(skopeo inspect --tls-verify=false --override-arch arm64 --format '{{.Architecture}}' "docker://$OPEN/$REPO:v1-multi")" arm64
if skopeo inspect --tls-verify=false "docker://$AUTH/$REPO:v1" >/dev/null 2>&1; then
  fail "skopeo inspect auth registry without creds should fail"
else ok "skopeo inspect auth registry without creds fails"; fi
expect_eq "skopeo inspect oci layout" \
  "$(skopeo inspect --format '{{.Digest}}' "oci:$AUDITOR_TEST_IMAGE_OCI_DIR:v1")" "$AUDITOR_TEST_IMAGE_MANIFEST_DIGEST"
expect_has "skopeo inspect docker-archive" \
  "$(skopeo inspect --config "docker-archive:$AUDITOR_TEST_IMAGE_DOCKER_ARCHIVE")" '"io.auditor.test": "true"'

TMPC=$(mktemp -d)
skopeo copy -q --src-tls-verify=false --src-creds "$CREDS" "docker://$AUTH/$REPO:v1-docker" "oci:$TMPC/pulled:v1" >/dev/null
expect_eq "skopeo copy auth registry (Docker v2s2) -> oci: keeps the layer digests" \
  "$(skopeo inspect --format '{{.Layers}}' "oci:$TMPC/pulled:v1")" \
  "$(skopeo inspect --format '{{.Layers}}' "oci:$AUDITOR_TEST_IMAGE_OCI_DIR:v1")"
rm -rf "$TMPC"

# ---- podman Docker-compatible API
SOCK="$AUDITOR_TEST_PODMAN_SOCK"; API="http://d/v1.41"
expect_eq  "podman /_ping" "$(curl -fsS --unix-socket "$SOCK" http://d/_ping)" OK
expect_has "podman /version ApiVersion" "$(curl -fsS --unix-socket "$SOCK" "$API/version")" '"ApiVersion":"1.41"'
expect_has "podman /images/json lists the test image" "$(curl -fsS --unix-socket "$SOCK" "$API/images/json")" "\"$AUDITOR_TEST_PODMAN_IMAGE\""
ENC=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$AUDITOR_TEST_PODMAN_IMAGE")
expect_has "podman /images/{name}/json Id" "$(curl -fsS --unix-socket "$SOCK" "$API/images/$ENC/json")" "\"$AUDITOR_TEST_PODMAN_IMAGE_ID\""
expect_has "podman /images/{name}/history" "$(curl -fsS --unix-socket "$SOCK" "$API/images/$ENC/history")" 'pip install --target'
TMP=$(mktemp -d); trap 'rm -rf "$TMP"; curl -s --unix-socket "$SOCK" -X DELETE "$API/containers/auditor-check?force=1" >/dev/null 2>&1 || true' EXIT
curl -fsS --unix-socket "$SOCK" "$API/images/$ENC/get" -o "$TMP/export.tar"
expect_has "podman /images/{name}/get is a docker-archive" "$(tar xOf "$TMP/export.tar" manifest.json)" "$AUDITOR_TEST_PODMAN_IMAGE"

# ---- a real container run + /changes
curl -s --unix-socket "$SOCK" -X DELETE "$API/containers/auditor-check?force=1" >/dev/null 2>&1 || true
CID=$(curl -fsS --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' "$API/containers/create?name=auditor-check" \
  -d "{\"Image\":\"$AUDITOR_TEST_PODMAN_IMAGE\",\"Cmd\":[\"/bin/sh\",\"-c\",\"echo hi > /tmp/new.txt; rm /etc/issue\"],\"HostConfig\":{\"NetworkMode\":\"none\"}}" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["Id"])')
expect_eq "podman container start" "$(curl -s -o "$TMP/start.out" -w '%{http_code}' --unix-socket "$SOCK" -X POST "$API/containers/$CID/start")" 204
expect_has "podman container wait exit 0" "$(curl -fsS --unix-socket "$SOCK" -X POST "$API/containers/$CID/wait")" '"StatusCode":0'
CHANGES=$(curl -fsS --unix-socket "$SOCK" "$API/containers/$CID/changes")
expect_has "podman /containers/{id}/changes added file"   "$CHANGES" '{"Path":"/tmp/new.txt","Kind":1}'
expect_has "podman /containers/{id}/changes deleted file" "$CHANGES" '{"Path":"/etc/issue","Kind":2}'

printf '%d passed, 0 failed\n' "$PASS"
