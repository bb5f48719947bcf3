#!/usr/bin/env bash
# The gate as a pull-request workflow runs it, over the real pull-request
# stream: for each of the last N commits on main (each a squash-merged pull
# request) of the InferenceX history in ../shared (a shallow bare
# repository, used offline), check the commit out and run
# `auditor audit . --changed-since <commit>^1`, then print one line per
# pull request: exit code, counted errors, pre-existing and fixed findings,
# and the subject.
#
#   benches/pr-stream.sh [N] [AUDITOR]     (N: 100; AUDITOR: target/release/auditor)
set -uo pipefail
cd "$(dirname "$0")/.."
n="${1:-100}"
bin="$(realpath "${2:-target/release/auditor}")"
history=../shared/data/inferencex/history-843c6254-last400.git.tar.gz
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$history" -C "$work"
git clone -q "$work/ixshallow" "$work/ix"
cd "$work/ix"
git log --first-parent --format='%H %s' -n "$n" main > "$work/merges"
printf 'exit\terrors\tpre-existing\tfixed\tmerge\tsubject\n'
while read -r merge subject; do
  git checkout -q --detach "$merge"
  "$bin" audit . --changed-since "$merge^1" --format json --output "$work/report.json" > /dev/null 2> "$work/stderr"
  code=$?
  python3 - "$work/report.json" "$code" "${merge:0:8}" "$subject" <<'PY'
import json, sys
path, code, merge, subject = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception:
    print(f"{code}\t-\t-\t-\t{merge}\t{subject}"); sys.exit()
errors = sum(1 for c in r["checks"] for f in c["findings"]
             if f["severity"] == "error" and not f.get("pre_existing") and not f.get("baselined") and not f.get("suppressed")
             and not f["rule"].endswith("/undetermined"))
c = r.get("changed_since", {})
print(f"{code}\t{errors}\t{c.get('pre_existing', 0)}\t{len(c.get('fixed', []))}\t{merge}\t{subject}")
PY
done < "$work/merges"
