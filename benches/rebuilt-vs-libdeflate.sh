#!/usr/bin/env bash
# Reproduces "rebuilt image pair against libdeflate" in BENCHMARKS.md: `auditor image diff B
# --upstream UP` on the rebuilt pair of tests/services/wheel_diff.sh ((b): 2.7 GB of real wheels,
# no blob shared), each run with a fresh --cache-dir, paired run for run with the yardstick —
# libdeflate-gunzip of every layer blob the diff reads, 2 at a time (the tool walks 2 layers at
# once on this machine) — A B A B ..., the ratio taken pair by pair; prints each pair and the
# medians. Needs the data (WHEEL_DIFF_KEEP=1 tests/services/wheel_diff.sh once), GNU time and
# libdeflate-tools (apt-get install libdeflate-tools time).
# Usage: benches/rebuilt-vs-libdeflate.sh [PAIRS=4] [AUDITOR_BIN=target/release/auditor]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-4}
bin=${2:-target/release/auditor}
dir=${WHEEL_DIFF_DIR:-/tmp/auditor-wheeldiff}
[ -f "$dir/b/index.json" ] || { echo "no data in $dir: run WHEEL_DIFF_KEEP=1 tests/services/wheel_diff.sh first" >&2; exit 2; }
blobs=$(python3 - "$dir/b" "$dir/up" <<'PY'
import json, os, sys
seen = {}
for layout in sys.argv[1:]:
    index = json.load(open(os.path.join(layout, "index.json")))
    manifest = json.load(open(os.path.join(layout, "blobs/sha256", index["manifests"][0]["digest"][7:])))
    for layer in manifest["layers"]:
        seen.setdefault(layer["digest"], os.path.join(layout, "blobs/sha256", layer["digest"][7:]))
print("\n".join(seen.values()))
PY
)
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
wall() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
diff_once() { rm -rf "$cache/c"; wall "$bin" image diff "oci:$dir/b" --upstream "oci:$dir/up" --cache-dir "$cache/c" --format json; }
inflate_once() { echo "$blobs" | wall xargs -P2 -I{} sh -c 'libdeflate-gunzip -c < "$1" > /dev/null' _ {}; }
cat $blobs > /dev/null # the blobs in the page cache for both
diff_once > /dev/null; inflate_once > /dev/null # warm-up, not counted
ratios=(); as=(); bs=()
for i in $(seq "$pairs"); do
  a=$(diff_once); b=$(inflate_once)
  r=$(python3 -c "print(f'{$a / $b:.3f}')")
  echo "pair $i: image diff $a s, libdeflate $b s, ratio $r"
  as+=("$a"); bs+=("$b"); ratios+=("$r")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
echo "median: image diff $(median "${as[@]}") s, libdeflate $(median "${bs[@]}") s, ratio $(median "${ratios[@]}")"
