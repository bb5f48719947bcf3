#!/usr/bin/env bash
# The `image diff` benchmark of BENCHMARKS.md on images built from real PyPI wheels (not part of
# tests/run: it downloads ~0.9 GB of wheels and writes ~15 GB).
#
# pip downloads the wheels below (pinned) and installs them into a staging root; wheel_images.py
# builds the upstream image `up`, (a) a pinned image with one extra layer changing one .py and
# adding one .patch, (b) `up` fully rebuilt with identical contents. Then, in one run, each under
# /usr/bin/time -v (wall time and peak RSS):
#   decompression limit  gzip -dc of every layer the diff must read, to /dev/null, summed
#   a-cold / a-warm      auditor image diff a --upstream up, empty cache, then again
#   b-cold / b-warm      auditor image diff b --upstream up, empty cache, then again
#   b-cold-registry      b-cold with both images pushed to and pulled from the loopback registry
#                        (only when tests/services runs: . /tmp/auditor-services/env.sh first)
#   a-baseline / b-baseline  skopeo copy of both images to OCI layouts, tar -xzf of every layer
#                        in order, diff -r of the two trees
# The data is deleted at the end (the wheels are kept).
#
# Usage: tests/services/wheel_diff.sh
# Env:   AUDITOR_BIN (default target/release/auditor), WHEEL_DIFF_DIR (default /tmp/auditor-wheeldiff),
#        WHEEL_DIFF_KEEP=1 keeps the data
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${AUDITOR_BIN:-$ROOT/target/release/auditor}"
DIR="${WHEEL_DIFF_DIR:-/tmp/auditor-wheeldiff}"
WHEELS="$DIR/wheels"
PACKAGES="torch==2.15.0 triton==3.9.0 numpy==2.4.6 scipy==1.17.1 pandas==3.1.1 sympy==1.14.0
  networkx==3.6.1 jinja2==3.1.6 transformers==5.24.0 tokenizers==0.23.3 safetensors==0.8.0"
CORES=$(nproc)
[ -x "$BIN" ] || { echo "$BIN missing: cargo build --release first" >&2; exit 2; }
command -v skopeo >/dev/null || { echo "skopeo missing (tests/services/start.sh installs it)" >&2; exit 2; }
[ "${WHEEL_DIFF_KEEP:-0}" = 1 ] || trap 'find "$DIR" -mindepth 1 -maxdepth 1 ! -name wheels -exec rm -rf {} +' EXIT
. "$HERE/bench_lib.sh"

mkdir -p "$WHEELS"
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: -d "$WHEELS" $PACKAGES
if [ ! -d "$DIR/root/usr/local" ]; then
  echo "installing the wheels into $DIR/root" >&2
  python3 -m pip install -q --no-deps --no-index --root-user-action=ignore --no-warn-script-location \
    --root "$DIR/root" --prefix /usr/local "$WHEELS"/*.whl
fi
if [ ! -f "$DIR/b/index.json" ]; then
  rm -rf "$DIR/up" "$DIR/a" "$DIR/b"
  echo "building the images in $DIR" >&2
  (cd "$HERE" && python3 wheel_images.py --root "$DIR/root" --out "$DIR") >&2
fi
du -sh --apparent-size "$DIR/root" "$DIR/up" "$DIR/a" "$DIR/b" >&2

# layers IMAGE... : the layer blobs of the images' manifests, each once
layers() {
  python3 - "$@" <<'EOF'
import json, os, sys
blobs = {}  # digest -> path of its first holder, in order
for layout in sys.argv[1:]:
    idx = json.load(open(os.path.join(layout, "index.json")))
    m = json.load(open(os.path.join(layout, "blobs", "sha256", idx["manifests"][0]["digest"][7:])))
    for l in m["layers"]:
        blobs.setdefault(l["digest"], os.path.join(layout, "blobs", "sha256", l["digest"][7:]))
print("\n".join(blobs.values()))
EOF
}
decompress_limit() { # NAME IMAGE... : gzip -dc of every layer, summed; divided by the cores
  local name=$1 total=0 t; shift
  for blob in $(layers "$@"); do
    t=$( { /usr/bin/time -f %e gzip -dc "$blob" > /dev/null; } 2>&1 )
    total=$(python3 -c "print($total + $t)")
  done
  printf '%-20s gzip -dc summed %7.2f s, / %d cores %7.2f s\n' "$name" "$total" "$CORES" "$(python3 -c "print($total / $CORES)")"
}
decompress_limit a-decompress "$DIR/up" "$DIR/a"
decompress_limit b-decompress "$DIR/up" "$DIR/b"

diff_run() { # SCENARIO : cold (empty cache) and warm runs of auditor image diff SCENARIO --upstream up
  local x=$1
  rm -rf "$DIR/cache-$x"
  drop_caches
  for run in cold warm; do
    measure "$x-$run" "$BIN" image diff "oci:$DIR/$x:v1" --upstream "oci:$DIR/up:v1" --cache-dir "$DIR/cache-$x" --format json
  done
  python3 - "$DIR" "$x" <<'EOF'
import json, sys
d, x = sys.argv[1:]
for run in ("cold", "warm"):
    r = json.load(open(f"{d}/{x}-{run}.out"))
    engine = next(c for c in r["checks"] if c["id"] == "engine-patch")
    print(f"  {x}-{run}: verdict {r['verdict']}; layer_cache {[(c['role'], c['read'], c['cached'], c['shared']) for c in r['layer_cache']]}; "
          f"findings {[(f['rule'], f.get('path')) for f in engine['findings']]}")
EOF
  du -sh "$DIR/cache-$x" | sed 's/^/  cache /'
}
diff_run a
diff_run b

# the same diff with both images pulled from the loopback registry of tests/services (when it runs)
if [ -n "${AUDITOR_TEST_REGISTRY:-}" ]; then
  for x in up b; do
    skopeo copy -q --dest-tls-verify=false "oci:$DIR/$x:v1" "docker://$AUDITOR_TEST_REGISTRY/wheel-diff/$x:v1"
  done
  rm -rf "$DIR/cache-registry"
  drop_caches
  measure b-cold-registry "$BIN" image diff "$AUDITOR_TEST_REGISTRY/wheel-diff/b:v1" --upstream "$AUDITOR_TEST_REGISTRY/wheel-diff/up:v1" \
    --cache-dir "$DIR/cache-registry" --format json
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("  b-cold-registry: verdict", r["verdict"], [(c["role"], c["read"]) for c in r["layer_cache"]])' "$DIR/b-cold-registry.out"
fi

baseline() { # the by-hand way: copy both images out, extract every layer, diff the trees
  set -e
  local x=$1
  rm -rf "$DIR/copy-up" "$DIR/copy-$x" "$DIR/tree-up" "$DIR/tree-$x"
  skopeo copy -q "oci:$DIR/up:v1" "oci:$DIR/copy-up:v1"
  skopeo copy -q "oci:$DIR/$x:v1" "oci:$DIR/copy-$x:v1"
  for y in up "$x"; do
    mkdir -p "$DIR/tree-$y"
    for blob in $(layers "$DIR/copy-$y"); do
      tar -xzf "$blob" -C "$DIR/tree-$y"
    done
  done
  diff -r "$DIR/tree-up" "$DIR/tree-$x" || true
}
export -f baseline layers
export DIR
for x in a b; do
  drop_caches
  measure "$x-baseline" bash -c "baseline $x"
  echo "  $x-baseline diff -r output:"; sed 's/^/    /' "$DIR/$x-baseline.out" | head -6
done
rm -rf "$DIR"/copy-* "$DIR"/tree-*
