#!/usr/bin/env bash
# Speed and memory benchmark of `auditor image diff` (not part of tests/run: it moves ~20 GB).
#
# big_diff.py builds two ~5 GB (uncompressed) serving-image-shaped OCI layouts, the second
# rebuilt with one changed .py; then, in one run:
#   cold    auditor image diff b --upstream a, empty cache (every layer of both read)
#   warm    the same diff again (both images' layer indexes cached: no layer read)
#   upstream-warm  a new pinned image on a cached upstream (b's cache entries deleted first)
#   baseline  skopeo copy oci: -> dir: of both images, tar -xzf of every layer, diff -r
# each under /usr/bin/time -v (wall time and peak RSS). Deletes the data at the end.
#
# Usage: tests/services/big_diff.sh [big_diff.py options]
# Env:   AUDITOR_BIN (default target/release/auditor), BIG_DIFF_DIR (default /tmp/auditor-bigdiff),
#        BIG_DIFF_KEEP=1 keeps the data
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${AUDITOR_BIN:-$ROOT/target/release/auditor}"
DIR="${BIG_DIFF_DIR:-/tmp/auditor-bigdiff}"
[ -x "$BIN" ] || { echo "$BIN missing: cargo build --release first" >&2; exit 2; }
command -v skopeo >/dev/null || { echo "skopeo missing (tests/services/start.sh installs it)" >&2; exit 2; }
[ "${BIG_DIFF_KEEP:-0}" = 1 ] || trap 'rm -rf "$DIR"' EXIT

if [ ! -f "$DIR/a/index.json" ] || [ ! -f "$DIR/b/index.json" ]; then
  rm -rf "$DIR"; mkdir -p "$DIR"
  echo "building the images in $DIR" >&2
  python3 "$HERE/big_diff.py" --out "$DIR" "$@" >&2
fi
du -sh "$DIR/a" "$DIR/b" >&2

. "$HERE/bench_lib.sh"

CACHE="$DIR/cache"
rm -rf "$CACHE"
drop_caches
measure cold "$BIN" image diff "oci:$DIR/b:v1" --upstream "oci:$DIR/a:v1" --cache-dir "$CACHE" --format json
measure warm "$BIN" image diff "oci:$DIR/b:v1" --upstream "oci:$DIR/a:v1" --cache-dir "$CACHE" --format json
# a new submission on the same upstream: drop the pinned image's layers from the cache
python3 - "$DIR/b" "$CACHE" <<'EOF'
import json, os, sys
layout, cache = sys.argv[1], sys.argv[2]
idx = json.load(open(os.path.join(layout, "index.json")))
m = json.load(open(os.path.join(layout, "blobs", "sha256", idx["manifests"][0]["digest"][7:])))
for l in m["layers"]:
    for ext in ("idx", "pack"):
        p = os.path.join(cache, "layers-v1", l["digest"].replace(":", "-") + "." + ext)
        if os.path.exists(p):
            os.remove(p)
EOF
measure upstream-warm "$BIN" image diff "oci:$DIR/b:v1" --upstream "oci:$DIR/a:v1" --cache-dir "$CACHE" --format json
python3 - "$DIR" <<'EOF'
import json, sys
d = sys.argv[1]
for name in ("cold", "warm", "upstream-warm"):
    r = json.load(open(f"{d}/{name}.out"))
    engine = next(c for c in r["checks"] if c["id"] == "engine-patch")
    print(f"  {name}: layer_cache {[(c['role'], c['read'], c['cached'], c['shared']) for c in r['layer_cache']]}; "
          f"{engine['summary']}; findings {[(f['rule'], f.get('path')) for f in engine['findings']]}")
EOF

baseline() {
  set -e
  rm -rf "$DIR/dir-a" "$DIR/dir-b" "$DIR/root-a" "$DIR/root-b"
  skopeo copy -q "oci:$DIR/a:v1" "dir:$DIR/dir-a"
  skopeo copy -q "oci:$DIR/b:v1" "dir:$DIR/dir-b"
  for x in a b; do
    mkdir -p "$DIR/root-$x"
    for layer in $(python3 -c 'import json,sys; print(" ".join(l["digest"][7:] for l in json.load(open(sys.argv[1]))["layers"]))' "$DIR/dir-$x/manifest.json"); do
      tar -xzf "$DIR/dir-$x/$layer" -C "$DIR/root-$x"
    done
  done
  diff -r "$DIR/root-a" "$DIR/root-b" || true
}
export -f baseline
export DIR
drop_caches
measure baseline bash -c baseline
echo "  baseline diff -r output:"; sed 's/^/    /' "$DIR/baseline.out" | head -12
