#!/usr/bin/env bash
# The audit with every script evaluated by the bash interpreter
# (the default) against the line reader (`--line-reader`), same binary, same
# machine, runs interleaved so a drift of the machine's speed hits both:
#
# 1. the whole snapshot (../shared tree-843c6254), N pairs: wall, CPU and
#    peak RSS medians (/usr/bin/time), and the median of the pairs' ratios;
# 2. the pull-request gate: the last M merged pull requests of the history
#    in ../shared, each checked out and audited with
#    `--changed-since <merge>^1` in both modes, one timed run each.
#
#   benches/interpreter-vs-lines.sh [N] [M] [AUDITOR]   (N: 5, M: 20; AUDITOR: target/release/auditor)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-5}"
prs="${2:-20}"
bin="$(realpath "${3:-target/release/auditor}")"
shared=../shared/data/inferencex
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$shared/tree-843c6254.tar.gz" -C "$work"
tar -xzf "$shared/history-843c6254-last400.git.tar.gz" -C "$work"
git clone -q "$work/ixshallow" "$work/ix"

# One timed run: "<wall> <user+sys> <peak KiB>" appended to $1.
timed() {
  local out="$1"; shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@" > /dev/null 2>&1 || true
  tail -n 1 "$work/t" | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' >> "$out"
}

"$bin" audit "$work/InferenceX" --format json --output /dev/null > /dev/null 2>&1 || true   # warm-up
for _ in $(seq "$pairs"); do
  timed "$work/snap-lines" "$bin" audit "$work/InferenceX" --line-reader --format json --output /dev/null
  timed "$work/snap-interp" "$bin" audit "$work/InferenceX" --format json --output /dev/null
done

touch "$work/pr-lines" "$work/pr-interp"
cd "$work/ix"
[ "$prs" -gt 0 ] && git log --first-parent --format='%H' -n "$prs" main > "$work/merges" || : > "$work/merges"
while read -r merge; do
  git checkout -q --detach "$merge"
  timed "$work/pr-lines" "$bin" audit . --changed-since "$merge^1" --line-reader --format json --output /dev/null
  timed "$work/pr-interp" "$bin" audit . --changed-since "$merge^1" --format json --output /dev/null
done < "$work/merges"

python3 - "$work" "$pairs" "$prs" <<'PY'
import statistics as st, sys
work, pairs, prs = sys.argv[1], sys.argv[2], sys.argv[3]
def rows(name):
    return [tuple(map(float, l.split())) for l in open(f"{work}/{name}")]
def line(label, a, b, k, unit, scale=1.0):
    x, y = [r[k] * scale for r in a], [r[k] * scale for r in b]
    ratio = st.median(q / p for p, q in zip(x, y) if p > 0)
    print(f"| {label} | {st.median(x):.2f} {unit} ({min(x):.2f}–{max(x):.2f}) | {st.median(y):.2f} {unit} ({min(y):.2f}–{max(y):.2f}) | {ratio:.2f}× |")
print(f"| the snapshot, {pairs} pairs | line reader median (min–max) | interpreter median (min–max) | ratio (paired median) |")
print("|---|---|---|---|")
a, b = rows("snap-lines"), rows("snap-interp")
line("wall", a, b, 0, "s"); line("CPU (user + sys)", a, b, 1, "s"); line("peak RSS", a, b, 2, "MiB", 1 / 1024)
if not rows("pr-lines"):
    sys.exit()
print()
print(f"| the last {prs} merged PRs, `--changed-since` | line reader median (min–max) | interpreter median (min–max) | ratio (paired median) |")
print("|---|---|---|---|")
a, b = rows("pr-lines"), rows("pr-interp")
line("wall", a, b, 0, "s"); line("CPU (user + sys)", a, b, 1, "s"); line("peak RSS", a, b, 2, "MiB", 1 / 1024)
PY
