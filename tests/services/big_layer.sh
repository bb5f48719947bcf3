#!/usr/bin/env bash
# Memory benchmark for layer streaming (not part of tests/run: it moves gigabytes).
#
# Builds an image whose one layer is an uncompressed tar (media type
# application/vnd.oci.image.layer.v1.tar) holding SIZE_MB MiB of random bytes, so the
# blob that crosses the wire is over 1 GiB and nothing can shrink it; pushes it to the
# open loopback registry as auditor/big:v1; then runs
#   /usr/bin/time -v target/release/auditor image inspect REF --verify-layers
# through the registry and through the OCI layout, and prints peak RSS and wall time.
#
# Usage: tests/services/big_layer.sh [SIZE_MB]   (default 1100; needs ~3x that on disk)
# Env:   AUDITOR_BIN (default target/release/auditor), AUDITOR_SERVICES_DIR
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"
SIZE_MB="${1:-1100}"
BIN="${AUDITOR_BIN:-$ROOT/target/release/auditor}"
[ -x "$BIN" ] || die "$BIN missing: cargo build --release first"
"$HERE/start.sh" >/dev/null
# shellcheck disable=SC1091
. "$STATE/env.sh"

BIG="$STATE/big"
rm -rf "$BIG"; mkdir -p "$BIG"
trap 'rm -rf "$BIG/payload"' EXIT
log "big: writing $SIZE_MB MiB of random bytes"
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom > "$BIG/payload"

log "big: building the OCI layout"
python3 - "$BIG" <<'EOF'
import hashlib, json, os, sys, tarfile
big = sys.argv[1]
out = os.path.join(big, "oci")
os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)

class Hashing:
    def __init__(self, f): self.f, self.h, self.n = f, hashlib.sha256(), 0
    def write(self, b): self.h.update(b); self.n += len(b); return self.f.write(b)
    def tell(self): return self.n

def blob(data, mt):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(out, "blobs", "sha256", d), "wb") as f: f.write(data)
    return {"mediaType": mt, "digest": "sha256:" + d, "size": len(data)}

tmp = os.path.join(out, "layer.tmp")
with open(tmp, "wb") as raw:
    w = Hashing(raw)
    with tarfile.open(fileobj=w, mode="w|", format=tarfile.PAX_FORMAT) as t:
        ti = t.gettarinfo(os.path.join(big, "payload"), arcname="data/random.bin")
        ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname = 1704067200, 0, 0, "root", "root"
        with open(os.path.join(big, "payload"), "rb") as f: t.addfile(ti, f)
digest = w.h.hexdigest()
os.rename(tmp, os.path.join(out, "blobs", "sha256", digest))
layer = {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + digest, "size": w.n}
config = {"architecture": "amd64", "os": "linux", "config": {"Cmd": ["/bin/sh"]},
          "rootfs": {"type": "layers", "diff_ids": ["sha256:" + digest]},
          "history": [{"created_by": "big_layer.sh: %d bytes of random data" % w.n}]}
cfg = blob(json.dumps(config, sort_keys=True).encode(), "application/vnd.oci.image.config.v1+json")
man = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "config": cfg, "layers": [layer]}, sort_keys=True).encode(),
           "application/vnd.oci.image.manifest.v1+json")
man["annotations"] = {"org.opencontainers.image.ref.name": "v1"}
with open(os.path.join(out, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [man]}, f)
with open(os.path.join(out, "oci-layout"), "w") as f: f.write('{"imageLayoutVersion":"1.0.0"}')
print(json.dumps({"layer": layer, "manifest": man["digest"]}))
EOF
rm -f "$BIG/payload"
REF="$AUDITOR_TEST_REGISTRY/auditor/big:v1"
log "big: pushing to $REF"
skopeo copy -q --dest-tls-verify=false --preserve-digests "oci:$BIG/oci:v1" "docker://$REF" >/dev/null

measure() { # measure LABEL REF
  local label=$1 ref=$2 out
  out=$( { /usr/bin/time -v "$BIN" image inspect "$ref" --verify-layers --format json >"$BIG/$label.json"; } 2>&1 ) ||
    { echo "$out" >&2; die "$label: auditor failed"; }
  local rss wall verdict
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' <<<"$out")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' <<<"$out")
  verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$BIG/$label.json")
  printf '%-9s %-48s verdict=%s  peak RSS %s KiB (%s MiB)  wall %s\n' "$label" "$ref" "$verdict" "$rss" "$((rss / 1024))" "$wall"
}
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=d["manifests"][0]; print("manifest", l["digest"])' "$BIG/oci/index.json"
ls -l "$BIG/oci/blobs/sha256" | awk 'NR>1 {print "blob", $5, $9}'
measure registry "docker://$REF"
measure layout "oci:$BIG/oci:v1"
