#!/usr/bin/env bash
# Mutation testing of the decision code with cargo-mutants, scoped so that
# it fits a small shared machine: one source file (or glob) at a time, one
# job (--in-place implies one), mutants applied in this worktree (--in-place) so the existing debug
# target/ is reused instead of copied, and a test command limited to the
# lib tests plus the integration tests that need no services and finish in
# seconds. See TESTING.md for what it runs and what it found.
#
# usage: tests/mutants/run.sh MODULE-PATH... [-- EXTRA cargo-mutants ARGS]
#   tests/mutants/run.sh auditor/checks/engine_patch.rs
#   tests/mutants/run.sh auditor/checks/golden_al.rs -- -F 'judge'
#   BASELINE=skip tests/mutants/run.sh auditor/policy/suppressions.rs
#
# Output: mutants.out/<file stem>/mutants.out (git-ignored).
# --in-place edits the tracked source; cargo-mutants restores each file after
# its mutant, and this script refuses to start on a dirty file and checks
# afterwards that no mutant was left behind.
set -euo pipefail
cd "$(dirname "$0")/../.."

files=()
while [[ $# -gt 0 && $1 != -- ]]; do files+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
[[ ${#files[@]} -gt 0 ]] || { sed -n 2,16p "$0"; exit 2; }

for f in "${files[@]}"; do
    if [[ -n $(git status --porcelain -- "$f") ]]; then
        echo "run.sh: $f has uncommitted changes; --in-place would mix them with mutants" >&2
        exit 1
    fi
done

name=$(basename "${files[0]}" .rs)
[[ ${#files[@]} -gt 1 ]] && name="$name+$((${#files[@]} - 1))"
out=mutants.out/$name
mkdir -p "$out"

file_args=()
for f in "${files[@]}"; do file_args+=(--file "$f"); done

# Tests per mutant: the lib tests and the `it` binary without
#  - the service modules (image_sources, image_forensics, hostile_layers,
#    hostile_bundles): they need the local registry and docker services;
#  - gate::the_real_tree*: they audit the whole real InferenceX tree (~155 s
#    on this machine, against ~30 s for the rest of `it`); run them on their
#    own for a survivor that only they could kill;
#  - oracle_interp::the_interpreter_agrees_with_bash_on_every_job: bash and
#    the interpreter over every job of that tree (half an hour).
# Skips are substrings of test names, so each names its module: a bare
# `hostile_` or `gate::` would also skip lib tests (`evidence::gate::tests`).
# The first -- ends cargo-mutants' options, the second cargo test's.
# --cargo-arg (not test args after --) so the build phase builds only the
# lib tests, the lib, the binary and `it`, not the examples and bin tests.
# Timeouts are fixed rather than derived from the baseline so that
# BASELINE=skip (tests known green at HEAD) saves a full run.
status=0
cargo mutants "${file_args[@]}" \
    --in-place \
    --baseline "${BASELINE:-run}" \
    --timeout "${TEST_TIMEOUT:-300}" --build-timeout "${BUILD_TIMEOUT:-900}" \
    --output "$out" \
    --cargo-arg=--lib --cargo-arg=--test=it \
    "$@" \
    -- -- \
    --skip image_sources:: --skip image_forensics:: --skip hostile_layers:: --skip hostile_bundles:: \
    --skip gate::the_real_tree --skip history:: --skip oracle_interp::the_interpreter_agrees_with_bash_on_every_job \
    || status=$?

# cargo-mutants exits 2 when mutants are missed, 3 on timeouts; 0 all caught.
if [[ -n $(git status --porcelain -- "${files[@]}") ]]; then
    echo "run.sh: a mutant was left in the tree:" >&2
    git diff --stat -- "${files[@]}" >&2
    exit 1
fi
echo "run.sh: results in $out/mutants.out (caught.txt missed.txt unviable.txt timeout.txt); exit $status"
exit "$status"
