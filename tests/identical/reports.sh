#!/usr/bin/env bash
# Every report a refactor must leave byte-identical, written under OUT:
# the full JSON audit of each sample bundle and recipe tree, of the real
# InferenceX snapshot (unpacked from ../shared when present), and the
# `auditor evidence` JSON of each sample bundle. Run it before and after a
# change with the binary of each, then `diff -r BEFORE AFTER`.
#
#   tests/identical/reports.sh OUT [AUDITOR]   (AUDITOR: target/debug/auditor)
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:?usage: tests/identical/reports.sh OUT [AUDITOR]}"
bin="${2:-target/debug/auditor}"
mkdir -p "$out"
run() { # name, then the auditor arguments; the exit code is kept beside the report
  local name="$1"; shift
  "$bin" "$@" > "$out/$name" 2> "$out/$name.stderr"
  echo "$?" > "$out/$name.rc"
}
for b in samples/bundles/* samples/recipes-pass samples/recipes-fail; do
  n="$(basename "$b")"
  run "audit-$n.json" audit "$b" --format json --today 2026-12-01
  run "audit-golden-$n.json" audit "$b" --golden samples/golden --format json --today 2026-12-01
  [ -d "$b" ] || [ -f "$b" ] && run "evidence-$n.json" evidence "$b" --format json
done
# Single files (the whole-file view) and the text format.
i=0
while IFS= read -r f; do
  i=$((i + 1))
  run "evidence-file-$i.json" evidence "$f" --format json
  run "evidence-file-$i.txt" evidence "$f" --format text
done < <(find samples/bundles samples/recipes-fail -type f \( -name '*.log' -o -name '*.sh' -o -name '*.yaml' -o -name '*.txt' -o -name '*.json' \) | sort | awk 'NR % 7 == 1')
for b in samples/bundles/*; do
  [ -d "$b" ] && run "evidence-$(basename "$b").txt" evidence "$b" --format text
done
tree_tgz=../shared/data/inferencex/tree-843c6254.tar.gz
if [ -f "$tree_tgz" ]; then
  tmp="$(mktemp -d)"
  tar -xzf "$tree_tgz" -C "$tmp"
  run audit-real-tree.json audit "$tmp/InferenceX" --format json --today 2026-12-01
  run audit-real-tree.tgz.json audit "$tree_tgz" --format json --today 2026-12-01
  # Paths in the report name the temporary folder: make them comparable.
  sed -i "s#$tmp#TREE#g" "$out"/audit-real-tree.json*
  rm -rf "$tmp"
fi
