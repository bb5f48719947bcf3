#!/usr/bin/env bash
# Reproduces the table "`auditor audit` against ripgrep" in BENCHMARKS.md:
# `auditor audit DIR --format json` against `rg -c -F -f literals.txt DIR`,
# where literals.txt is every literal the audit searches a log's bytes for
# (the line parsers' prefilter and the signature keywords, printed by
# `examples/audit-literals.rs`), over 400 MiB of synthetic SGLang-shaped
# server logs in 16 files; then peak RSS of each. A baseline binary (an
# older build) can be measured side by side in the same run.
# Needs python3, ripgrep, hyperfine and GNU time:
#   apt-get install ripgrep hyperfine time
# Usage: benches/audit-vs-ripgrep.sh [DATA_DIR=/tmp/auditor-audit-bench] [BASELINE_BINARY] [RUNS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-/tmp/auditor-audit-bench}
baseline=${2:-}
runs=${3:-10}
auditor=target/release/auditor

[ -d "$data/logs" ] || python3 benches/gen-sglang-logs.py "$data/logs" 400 16
cargo build --release --locked
cargo run -q --release --locked --example audit-literals > "$data/literals.txt"

echo "== $(du -sh "$data/logs" | cut -f1) in $(find "$data/logs" -type f | wc -l) files; $(wc -l < "$data/literals.txt") literals; $(nproc) cores"
audit="$auditor audit $data/logs --format json --output /dev/null"
rg="rg -c -F -f $data/literals.txt $data/logs"
commands=("$audit" "$rg")
if [ -n "$baseline" ]; then
    # The reports must be byte-identical, exit code included.
    new_rc=0; old_rc=0
    $auditor audit "$data/logs" --format json > "$data/new.json" || new_rc=$?
    "$baseline" audit "$data/logs" --format json > "$data/old.json" || old_rc=$?
    cmp "$data/new.json" "$data/old.json" && [ "$new_rc" = "$old_rc" ] && echo "reports identical (exit $new_rc)"
    commands+=("$baseline audit $data/logs --format json --output /dev/null")
fi
cat "$data"/logs/*/server.log > /dev/null # page cache warm for everyone
# The audit exits 1 (the logs hold findings): failures are expected.
hyperfine --warmup 1 --runs "$runs" --ignore-failure --export-markdown "$data/hyperfine.md" "${commands[@]}"

peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2 " KiB"} /Elapsed/ {print $2 " wall"}' | paste -sd' '; }
for command in "${commands[@]}"; do
    echo "peak RSS  $command: $(peak $command)"
done
