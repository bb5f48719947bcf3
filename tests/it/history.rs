//! The gate over the real pull-request stream (issue 23): the last ~400
//! merged pull requests of InferenceX as a git repository
//! (`../shared/data/inferencex/history-843c6254-last400.git.tar.gz`, read
//! offline). Whole trees of commits spread over its months report exactly
//! their triaged error places (`tests/real_tree/commits/<commit>.txt`); each
//! fix pull request's violation is reported at its parent, and the fix
//! itself passes `--changed-since` naming it (`tests/real_tree/fixes.txt`);
//! the pull requests the stream fails fail on what they introduced only
//! (`tests/real_tree/pr-stream-failures.txt`).

use crate::common::*;
use crate::gate::{assert_triaged, counted_errors, error_places};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Error places: (rule, file, line).
type Places = std::collections::BTreeSet<(String, String, u64)>;

/// The history, unpacked and cloned into a temporary directory.
fn history() -> (tempfile::TempDir, PathBuf) {
    let dir = unpack_shared("history-843c6254-last400.git.tar.gz");
    let repo = dir.path().join("ix");
    git(dir.path(), &["clone", "-q", "ixshallow", "ix"]);
    (dir, repo)
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").current_dir(dir).args(args).status().expect("run git");
    assert!(status.success(), "git {args:?}");
}

fn checkout(repo: &Path, rev: &str) {
    git(repo, &["checkout", "-q", "--detach", rev]);
}

/// The audit of the checkout as JSON, and its exit code.
fn audit_repo(repo: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec![repo.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = audit(&args);
    (code(&out), json(&out))
}

/// Every commit with a triage list reports exactly the error places it
/// lists: the line reader's (`tests/real_tree/commits-line-reader/`), a
/// Python write cited at its statement rather than at its `python -c`, and
/// the engine writes through `importlib.util.find_spec` that only
/// evaluation finds (issue 35).
#[test]
fn commits_over_the_months_report_exactly_their_triaged_error_places() {
    assert_commits_triaged("tests/real_tree/commits", &[]);
}

/// Read line by line (`--line-reader`), the same commits report exactly
/// the places `tests/real_tree/commits-line-reader/` lists.
#[test]
fn commits_read_line_by_line_report_exactly_their_triaged_error_places() {
    assert_commits_triaged("tests/real_tree/commits-line-reader", &["--line-reader"]);
}

fn assert_commits_triaged(dir: &str, flags: &[&str]) {
    let (_dir, repo) = history();
    let mut lists: Vec<PathBuf> = std::fs::read_dir(root().join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
    lists.sort();
    assert!(lists.len() >= 8, "at least eight commits are triaged: {lists:?}");
    for list in &lists {
        let commit = list.file_stem().unwrap().to_str().unwrap();
        checkout(&repo, commit);
        let (code, report) = audit_repo(&repo, flags);
        let got = error_places(&report);
        if !got.is_empty() {
            assert_eq!(code, 1, "{commit}");
        }
        assert_triaged(&got, list);
    }
}

/// A fix that deletes the patching script (#2164 reverts #2127) names the
/// patch as fixed: the base evaluates the scripts the change deleted, not
/// only those the checkout still has (the old `--interpret-scripts` flag
/// is still accepted).
#[test]
fn a_fix_deleting_its_script_is_named_fixed() {
    let (_dir, repo) = history();
    checkout(&repo, "584396d");
    let (code, report) = audit_repo(&repo, &["--interpret-scripts", "--changed-since", "584396d^1"]);
    assert_eq!(code, 0, "{:#?}", counted_errors(&report));
    let fixed = report["changed_since"]["fixed"].as_array().cloned().unwrap_or_default();
    let place = "benchmarks/multi_node/amd_utils/setup_deps_agentic.sh:118";
    assert!(fixed.iter().any(|f| f["rule"] == "engine-patch/overwrite" && f["where"] == place), "{fixed:#?}");
}

/// `tests/real_tree/fixes.txt`: `COMMIT RULE FILE:LINE — what it fixed`.
fn fixes() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root().join("tests/real_tree/fixes.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let head = l.split(" — ").next().unwrap();
            let mut words = head.split_whitespace();
            let (Some(commit), Some(rule), Some(place)) = (words.next(), words.next(), words.next()) else { panic!("fixes.txt: {l}") };
            (commit.to_string(), rule.to_string(), place.to_string())
        })
        .collect()
}

/// Each fix in the history: the gate reports the violation at the fix's
/// parent, and with `--changed-since` the parent the fix passes and names it.
#[test]
fn each_fix_is_reported_at_its_parent_and_passes_naming_what_it_fixed() {
    let (_dir, repo) = history();
    let fixes = fixes();
    assert!(fixes.len() >= 2, "{fixes:?}");
    for (commit, rule, place) in &fixes {
        let (file, line) = place.rsplit_once(':').unwrap();
        checkout(&repo, &format!("{commit}^1"));
        let (_, report) = audit_repo(&repo, &[]);
        assert!(error_places(&report).contains(&(rule.clone(), file.to_string(), line.parse().unwrap())), "{commit}^1 reports {rule} at {place}");
        checkout(&repo, commit);
        let (code, report) = audit_repo(&repo, &["--changed-since", &format!("{commit}^1")]);
        assert_eq!(code, 0, "the fix {commit} passes: {:#?}", counted_errors(&report));
        let fixed = report["changed_since"]["fixed"].as_array().unwrap();
        assert!(fixed.iter().any(|f| f["rule"] == rule.as_str() && f["where"] == place.as_str()), "{commit} names {rule} at {place} as fixed: {fixed:#?}");
    }
}

/// The pull requests of the stream that fail: each with the errors it
/// introduced (`  RULE FILE:LINE — reason` under `COMMIT (#PR) exit 1: ...`).
fn failing_pull_requests() -> Vec<(String, Places)> {
    let text = std::fs::read_to_string(root().join("tests/real_tree/pr-stream-failures.txt")).unwrap();
    let mut out: Vec<(String, Places)> = Vec::new();
    let mut failing = false;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        if !line.starts_with(' ') {
            failing = line.contains(" exit 1:");
            if failing {
                out.push((line.split_whitespace().next().unwrap().to_string(), Default::default()));
            }
            continue;
        }
        if let (true, Some((_, places))) = (failing, out.last_mut()) {
            let head = line.trim().split(" — ").next().unwrap();
            let (rule, place) = head.split_once(' ').unwrap();
            let (file, at) = place.rsplit_once(':').unwrap();
            places.insert((rule.to_string(), file.to_string(), at.parse().unwrap()));
        }
    }
    out
}

/// A pull request fails only for a violation its own change introduced:
/// each failing one of the stream reports exactly the errors its triage
/// lists, and nothing found at its base counts.
#[test]
fn failing_pull_requests_fail_only_on_what_they_introduced() {
    let (_dir, repo) = history();
    let failing = failing_pull_requests();
    assert!(failing.len() >= 9, "{failing:?}");
    for (commit, listed) in &failing {
        checkout(&repo, commit);
        let (code, report) = audit_repo(&repo, &["--changed-since", &format!("{commit}^1")]);
        assert_eq!(code, 1, "{commit}");
        assert_eq!(&error_places(&report), listed, "{commit}");
    }
}
