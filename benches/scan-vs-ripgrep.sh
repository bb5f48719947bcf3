#!/usr/bin/env bash
# Reproduces the table in BENCHMARKS.md: `auditor scan` against ripgrep
# (`rg -c -F` with the same literal set, i.e. every keyword of every
# embedded rule pack) over a synthetic 1 GiB set of SGLang-shaped logs, then
# peak RSS of each, then a 5 GiB file without a newline (memory must stay
# flat). Needs python3, ripgrep, hyperfine and GNU time:
#   apt-get install ripgrep hyperfine time
# Usage: benches/scan-vs-ripgrep.sh [DATA_DIR=/tmp/auditor-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-/tmp/auditor-bench}
auditor=target/release/auditor

[ -d "$data/logs" ] || python3 benches/gen-sglang-logs.py "$data/logs" 1024 32
cargo build --release --locked
python3 - "$data/keywords.txt" <<'PY'
import glob, sys, tomllib
words = set()
for path in glob.glob("signatures/packs/*.toml"):
    with open(path, "rb") as f:
        for rule in tomllib.load(f)["rule"]:
            words.update(rule["keywords"])
with open(sys.argv[1], "w") as f:
    f.write("\n".join(sorted(words)) + "\n")
PY

echo "== $(du -sh "$data/logs" | cut -f1) in $(find "$data/logs" -type f | wc -l) files; $(wc -l < "$data/keywords.txt") literals; $(nproc) cores"
scan="$auditor scan $data/logs --format json --output /dev/null"
hashed="$auditor scan --hash $data/logs --format json --output /dev/null"
rg="rg -c -F -f $data/keywords.txt $data/logs"
rg1="rg -j1 -c -F -f $data/keywords.txt $data/logs"
cat "$data"/logs/*/server.log > /dev/null # page cache warm for everyone
hyperfine --warmup 1 --runs 5 --ignore-failure --export-markdown "$data/hyperfine.md" "$scan" "$hashed" "$rg" "$rg1"

peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2 " KiB"} /Elapsed/ {print $2 " wall"}' | paste -sd' '; }
echo "peak RSS  auditor scan: $(peak $scan)"
echo "peak RSS  scan --hash:  $(peak $hashed)"
echo "peak RSS  rg -c -F:     $(peak $rg)"
echo "peak RSS  rg -j1:       $(peak $rg1)"

long="$data/one-line-5g.log"
[ -f "$long" ] || (set +o pipefail; yes 'git apply x.patch; ' | tr -d '\n' | head -c 5G > "$long")
echo "5 GiB without a newline, auditor scan: $(peak $auditor scan "$long" --max-member-size 8G --format json --output /dev/null)"
echo "5 GiB without a newline, rg -c -F:     $(peak rg -c -F -f "$data/keywords.txt" "$long")"
