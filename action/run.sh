#!/usr/bin/env bash
# The logic of the GitHub Action (action.yml at the repository root), kept
# out of the YAML so it can be linted and tested on its own: run one audit
# that writes every format a workflow needs, set the step's outputs, and
# decide the step's exit status from the verdict and `fail-on`.
#
# Inputs come as environment variables (action.yml maps them):
#   INPUT_PATH       what to audit: a run bundle, an archive, a checkout (default .)
#   INPUT_POLICY     --policy FILE (optional)
#   INPUT_GOLDEN     --golden DIR (optional)
#   INPUT_ARGS       extra arguments, split on whitespace (no quoting)
#   INPUT_FAIL_ON    error | incomplete | never (default error)
#   INPUT_COMMENT    true | false: create or update one pull-request comment
#   INPUT_BASE       --changed-since this commit when PATH is a git checkout;
#                    empty: the pull request's base commit, if the event is one
#   INPUT_COMMENT_AUTHOR  the account the token comments as (default
#                    github-actions[bot]): only its marked comment is updated
#   AUDITOR_BIN      the auditor binary (default: auditor on PATH)
# and the runner's own: GITHUB_EVENT_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY,
# GITHUB_REPOSITORY, GITHUB_WORKSPACE, RUNNER_TEMP. GitHub's API is reached
# only through `gh api` (GH_TOKEN), and only for the comment.
set -euo pipefail

# Finds this action's comment among the pull request's comments. It starts
# the body, so a comment that merely quotes it is never taken for ours; and
# only the token's own account's comment counts, so a pull request's author
# cannot post a marked comment first and have the report written into a
# comment they can edit afterwards.
readonly MARKER='<!-- auditor-report -->'
comment_author=${INPUT_COMMENT_AUTHOR:-github-actions[bot]}

# jq reads the report and the comments: without it the verdict would be lost
# after the audit ran (a self-hosted runner may lack it).
command -v jq >/dev/null || { echo "::error title=auditor action::jq is required (apt-get install jq)"; exit 2; }

bin=${AUDITOR_BIN:-auditor}
path=${INPUT_PATH:-.}
policy=${INPUT_POLICY:-}
golden=${INPUT_GOLDEN:-}
fail_on=${INPUT_FAIL_ON:-error}
comment=${INPUT_COMMENT:-false}
base=${INPUT_BASE:-}
# Words across lines too; read's status is 1 at the end of its input.
read -r -d '' -a extra <<<"${INPUT_ARGS:-}" || true

# A workflow command (`::error::` and the like): GitHub reads `%`, CR and LF
# in its message as escapes.
annotate() {
  local message=${2//'%'/'%25'}
  message=${message//$'\r'/'%0D'}
  message=${message//$'\n'/'%0A'}
  echo "::$1 title=auditor action::$message"
}

usage_error() {
  annotate error "$1"
  exit 2
}

# One step output, in the delimited form so no value (a path with a line
# break in it) can end it early or set another output.
output() {
  [[ -n ${GITHUB_OUTPUT:-} ]] || return 0
  local delimiter="auditor_output_$RANDOM$RANDOM"
  while [[ $2 == *"$delimiter"* ]]; do delimiter+=$RANDOM; done
  printf '%s<<%s\n%s\n%s\n' "$1" "$delimiter" "$2" "$delimiter" >>"$GITHUB_OUTPUT"
}

# A field of the event payload, or nothing outside an event.
event() {
  [[ -n ${GITHUB_EVENT_PATH:-} && -f $GITHUB_EVENT_PATH ]] || return 0
  jq -r "$1 // empty" "$GITHUB_EVENT_PATH"
}

# Whether DIR is inside a git work tree, asked so that nothing the
# repository configures runs (the checkout may be a submitter's).
is_checkout() {
  [[ -d $1 ]] || return 1
  GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
    git -C "$1" -c core.fsmonitor=false -c core.hooksPath=/dev/null -c 'safe.directory=*' \
    rev-parse --is-inside-work-tree >/dev/null 2>&1
}

# Create the pull request's report comment, or update it in place, so a
# pull request has one report however many times it is pushed to.
upsert_comment() {
  local pr=$1 markdown=$2 repo=${GITHUB_REPOSITORY:-} body comments id
  [[ -n $repo ]] || { annotate warning "GITHUB_REPOSITORY is not set: no comment written"; return 1; }
  body=$(jq -Rs --arg marker "$MARKER" '{body: ($marker + "\n" + .)}' <"$markdown") || return 1
  # --paginate prints one JSON array per page; the first of ours wins.
  comments=$(gh api --paginate "repos/$repo/issues/$pr/comments?per_page=100") || return 1
  id=$(jq -rn --arg marker "$MARKER" --arg author "$comment_author" \
    '[inputs[] | select(.user.login == $author and ((.body // "") | startswith($marker))) | .id] | first // empty' <<<"$comments") || return 1
  if [[ -n $id ]]; then
    [[ $id =~ ^[0-9]+$ ]] || return 1
    gh api --method PATCH "repos/$repo/issues/comments/$id" --input - <<<"$body" >/dev/null || return 1
  else
    gh api --method POST "repos/$repo/issues/$pr/comments" --input - <<<"$body" >/dev/null || return 1
  fi
}

case $fail_on in
  error | incomplete | never) ;;
  *) usage_error "fail-on must be error, incomplete or never, not '$fail_on'" ;;
esac
case $comment in
  true | false) ;;
  *) usage_error "comment must be true or false, not '$comment'" ;;
esac

[[ -n $base ]] || base=$(event .pull_request.base.sha)
changed_since=
if [[ -n $base ]]; then
  if is_checkout "$path"; then
    changed_since=$base
  else
    annotate notice "$path is not a git checkout: audited in full, not since $base"
  fi
fi

out_dir=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/auditor.XXXXXX")
json=$out_dir/auditor.json
sarif=$out_dir/auditor.sarif
markdown=$out_dir/auditor.md

# Annotations on standard output (and, through GITHUB_STEP_SUMMARY, the
# Markdown report in the job summary), the other formats from the same run.
cmd=("$bin" audit "$path" --format github --also "json=$json" --also "sarif=$sarif" --also "markdown=$markdown")
[[ -z $policy ]] || cmd+=(--policy "$policy")
[[ -z $golden ]] || cmd+=(--golden "$golden")
[[ -z $changed_since ]] || cmd+=(--changed-since "$changed_since")
# Code scanning resolves SARIF paths against the checkout: a path below the
# workspace (`path: benchmarks`) is named from the workspace, not from itself.
if [[ -n ${GITHUB_WORKSPACE:-} && " ${extra[*]} " != *" --source-root"* ]]; then
  workspace=$(realpath -m -- "$GITHUB_WORKSPACE")
  audited=$(realpath -m -- "$path")
  if [[ $audited == "$workspace" || $audited == "$workspace"/* ]]; then
    cmd+=(--source-root "$workspace")
  fi
fi
cmd+=("${extra[@]}")

echo "auditor action: ${cmd[*]}"
code=0
"${cmd[@]}" || code=$?

verdict=
[[ ! -s $json ]] || verdict=$(jq -r .verdict "$json")
output verdict "$verdict"
output exit-code "$code"
[[ ! -s $json ]] || output json "$json"
[[ ! -s $sarif ]] || output sarif "$sarif"
[[ ! -s $markdown ]] || output markdown "$markdown"

if [[ -z $verdict ]]; then
  hint=
  [[ -z $changed_since ]] || hint=" (is $changed_since in the checkout? actions/checkout needs fetch-depth: 0)"
  annotate error "the auditor stopped without a report (exit $code)$hint: see the step log"
  if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
    printf '## auditor: no report (exit %s)\n\nThe audit of %s stopped before it had a verdict; the step log says why.\n' \
      "$code" "$path" >>"$GITHUB_STEP_SUMMARY" || true
  fi
fi

if [[ $comment == true ]]; then
  pr=$(event .pull_request.number)
  if [[ ! $pr =~ ^[0-9]+$ ]]; then
    annotate notice "comment: true, but the event is not a pull request: no comment written"
  elif [[ ! -s $markdown ]]; then
    annotate warning "no report to comment with"
  elif ! upsert_comment "$pr" "$markdown"; then
    # The verdict is the audit's; a token that may not comment (a fork's
    # pull request) must not turn it into a failure.
    annotate warning "could not write the pull-request comment (does the token have pull-requests: write?)"
  fi
fi

# The step's status: usage errors and crashes always fail; a verdict fails
# the step as `fail-on` says.
status=$code
case $code in
  1) [[ $fail_on != never ]] || status=0 ;;
  3) [[ $fail_on == incomplete ]] || status=0 ;;
esac
if [[ $status == 0 && $code != 0 ]]; then
  annotate notice "verdict ${verdict:-none} (exit $code); fail-on: $fail_on lets the step pass"
fi
exit "$status"
