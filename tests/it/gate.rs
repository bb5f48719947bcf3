//! The PR gate on a repository with a past: `--baseline` (known findings do
//! not fail the gate, new ones do), `--changed-since` (only what a change
//! touches is judged), and reports that fit where they are read (a GitHub
//! comment, annotations, the job summary). Driven against the real
//! InferenceX tree and against git repositories built here.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The real InferenceX tree, unpacked into a temporary directory.
fn real_tree() -> (tempfile::TempDir, PathBuf) {
    let dir = unpack_shared("tree-843c6254.tar.gz");
    let tree = dir.path().join("InferenceX");
    assert!(tree.join("configs/nvidia-master.yaml").is_file());
    (dir, tree)
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Error findings of a JSON report that count (not baselined, not suppressed).
pub fn counted_errors(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    findings(report).filter(|f| f["severity"] == "error" && f.get("baselined").is_none() && f.get("suppressed").is_none()).collect()
}

#[test]
fn the_real_tree_passes_against_its_own_report_and_fails_on_one_new_violation() {
    let (dir, tree) = real_tree();
    let report_path = dir.path().join("report.json");
    let out = auditor(&["audit", s(&tree), "--format", "json", "--output", s(&report_path)]);
    assert_eq!(code(&out), 1, "the tree has known violations: {}", stderr(&out));

    // Its own JSON report as the baseline: every failure is known.
    let out = auditor(&["audit", s(&tree), "--baseline", s(&report_path), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["verdict"], "pass");
    let known = report["baseline"]["baselined"].as_u64().unwrap();
    assert!(known > 80, "{}", report["baseline"]);
    assert_eq!(report["baseline"]["new"], 0);
    assert_eq!(findings(&report).filter(|f| f["baselined"] == true).count() as u64, known, "baselined findings stay in the report, marked");
    assert!(counted_errors(&report).is_empty());
    let text = stdout(&auditor(&["audit", s(&tree), "--baseline", s(&report_path)]));
    assert!(text.contains("verdict: PASS") && text.contains(&format!("baseline: {}: {known} finding(s) known before", report_path.display())), "{text}");

    // A baseline file written by `auditor baseline`, then one new violation.
    let baseline = dir.path().join("baseline.json");
    let out = auditor(&["baseline", s(&tree), "--output", s(&baseline)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    assert_eq!(file["baseline_version"], 1);
    let entry = &file["findings"][0];
    assert!(entry["fingerprint"].is_string() && entry["rule"].is_string() && entry["where"].is_string(), "{entry}");

    let script = "benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp.sh";
    let mut text = std::fs::read_to_string(tree.join(script)).unwrap();
    text.push_str("\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n");
    std::fs::write(tree.join(script), text).unwrap();
    let out = auditor(&["audit", s(&tree), "--baseline", s(&baseline), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report = json(&out);
    let new = counted_errors(&report);
    assert!(!new.is_empty());
    for f in &new {
        assert_eq!(f["evidence"][0]["file"], script, "only the new violation counts: {f}");
    }
    assert!(new.iter().any(|f| f["rule"] == "forbidden-env/enabled"), "{new:?}");
    assert!(report["baseline"]["baselined"].as_u64().unwrap() > 80);
    let md = stdout(&auditor(&["audit", s(&tree), "--baseline", s(&baseline), "--format", "markdown"]));
    assert!(md.starts_with("## ❌ auditor verdict: FAIL"), "{md}");
    let error_rows: Vec<&str> = md.split("### Errors").nth(1).unwrap().split("<details>").next().unwrap().lines().filter(|l| l.starts_with("| `")).collect();
    assert!(!error_rows.is_empty() && error_rows.iter().all(|r| r.contains(script)), "{error_rows:?}");
}

#[test]
fn an_unreadable_or_foreign_baseline_is_a_usage_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let out = auditor(&["audit", PASS, "--baseline", s(&missing)]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains(&format!("baseline {}: cannot read", missing.display())), "{}", stderr(&out));
    for (name, content, says) in [
        ("garbage.json", "not json {", "not JSON"),
        ("other.json", "{\"name\": 1}", "neither a JSON report"),
        ("bad-fp.json", "{\"baseline_version\": 1, \"findings\": [{\"rule\": \"x\"}]}", "findings[0]: no \"fingerprint\""),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let out = auditor(&["audit", PASS, "--baseline", s(&path)]);
        assert_eq!(code(&out), 2, "{name}");
        assert!(stderr(&out).contains(name) && stderr(&out).contains(says), "{name}: {}", stderr(&out));
    }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=auditor tests", "-c", "user.email=tests@example.invalid", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(args)
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?}");
}

/// A launch script with an eval path: a throughput and an eval-only job.
pub const SCRIPT: &str = "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../benchmark_lib.sh\"\npython3 -m sglang.launch_server --model-path /models/m --tp 8 --port 8000\nif [ \"$EVAL_ONLY\" = true ]; then run_eval; fi\n";

/// A git repository of launch scripts (each a throughput and an eval-only job), committed.
pub fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[
            ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"),
            ("benchmarks/single_node/a_fp8_h100.sh", SCRIPT),
            ("benchmarks/single_node/b_fp8_h100.sh", SCRIPT),
            ("benchmarks/single_node/c_fp8_h100.sh", "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /models/m --tp 4\n"),
        ],
    );
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    dir
}

fn judged(report: &serde_json::Value) -> Vec<String> {
    report["jobs"].as_array().unwrap().iter().filter(|j| j.get("skipped").is_none()).map(|j| j["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn changed_since_judges_only_the_jobs_of_changed_files_and_lists_the_rest_as_skipped() {
    let dir = repo();
    let root = s(dir.path());
    let b = "benchmarks/single_node/b_fp8_h100.sh";
    std::fs::write(dir.path().join(b), format!("{SCRIPT}export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n")).unwrap();

    let out = auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(judged(&report), vec![b.to_string(), format!("{b} (eval-only)")]);
    let skipped: Vec<&serde_json::Value> = report["jobs"].as_array().unwrap().iter().filter(|j| j.get("skipped").is_some()).collect();
    assert!(skipped.iter().any(|j| j["id"] == "benchmarks/single_node/a_fp8_h100.sh"), "{skipped:?}");
    assert!(skipped.iter().all(|j| j["skipped"].as_str().unwrap().contains("unchanged since HEAD")));
    assert_eq!(report["changed_since"]["skipped"].as_u64().unwrap() as usize, skipped.len());
    assert_eq!(report["changed_since"]["judged"], 2);
    let failing = counted_errors(&report);
    assert!(!failing.is_empty() && failing.iter().all(|f| f["job"].as_str().unwrap().starts_with(b)), "{failing:?}");
    let text = stdout(&auditor(&["audit", root, "--changed-since", "HEAD"]));
    assert!(text.contains("changed: since HEAD: 1 file(s) changed; 2 job(s) judged"), "{text}");

    // Committed: nothing changed since HEAD, every job is skipped, nothing fails.
    git(dir.path(), &["commit", "-qam", "b"]);
    let out = auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(judged(&json(&out)).is_empty());
    // ...but against the first commit, b's jobs are judged again.
    let out = auditor(&["audit", root, "--changed-since", "HEAD~1", "--format", "json"]);
    assert_eq!(code(&out), 1);
    assert_eq!(judged(&json(&out)).len(), 2);

    // A sourced library changed: the scripts that source it are judged, c (which does not) is not.
    std::fs::write(dir.path().join("benchmarks/benchmark_lib.sh"), "run_eval() { true; }\n").unwrap();
    let report = json(&auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]));
    let ids = judged(&report);
    assert!(ids.iter().any(|j| j == "benchmarks/single_node/a_fp8_h100.sh") && ids.iter().any(|j| j == b), "{ids:?}");
    assert!(!ids.iter().any(|j| j.contains("c_fp8_h100")), "{ids:?}");
    // An untracked new script is a change too.
    std::fs::write(dir.path().join("benchmarks/single_node/d_fp8_h100.sh"), SCRIPT).unwrap();
    let report = json(&auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]));
    assert!(judged(&report).iter().any(|j| j == "benchmarks/single_node/d_fp8_h100.sh"), "{:?}", judged(&report));
}

/// A library edited inside one function changes what the scripts calling
/// it run, not what every script sourcing it runs: those are judged, the
/// others skipped with the function named; an edit at the library's top
/// level reaches them all.
#[test]
fn changed_since_a_library_function_judges_the_scripts_that_call_it() {
    let dir = repo();
    let root = s(dir.path());
    let lib = "benchmarks/benchmark_lib.sh";
    let library = |replay: &str, top: &str| format!("run_eval() {{ :; }}\n{top}replay() {{\n    {replay}\n}}\n");
    let d = "benchmarks/single_node/d_fp8_h100.sh";
    write_tree(dir.path(), &[(lib, &library("echo replay", "")), (d, &SCRIPT.replace("python3 -m", "replay\npython3 -m"))]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "replay"]);

    std::fs::write(dir.path().join(lib), library("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", "")).unwrap();
    let out = auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]);
    let report = json(&out);
    let ids = judged(&report);
    assert!(ids.iter().any(|j| j == d) && ids.iter().any(|j| *j == format!("{d} (eval-only)")), "{ids:?}");
    assert!(!ids.iter().any(|j| j.contains("a_fp8_h100") || j.contains("b_fp8_h100")), "{ids:?}");
    let a = report["jobs"].as_array().unwrap().iter().find(|j| j["id"] == "benchmarks/single_node/a_fp8_h100.sh").unwrap();
    let why = a["skipped"].as_str().unwrap();
    assert!(why.contains(&format!("it sources {lib}, whose changed functions (replay) none of its files names")), "{why}");
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let errors = counted_errors(&report);
    assert!(errors.iter().any(|f| f["job"] == d && f["evidence"][0]["file"] == lib && f["evidence"][0]["line"] == 3), "{errors:?}");

    // The same edit with a top-level line beside it: every script sourcing the library runs it.
    std::fs::write(dir.path().join(lib), library("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", "PORT=8001\n")).unwrap();
    let ids = judged(&json(&auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"])));
    for script in ["a_fp8_h100", "b_fp8_h100", "d_fp8_h100"] {
        assert!(ids.iter().any(|j| j.contains(script)), "{script}: {ids:?}");
    }
}

#[test]
fn changed_since_a_master_config_entry_judges_that_entry_only() {
    let dir = tempfile::tempdir().unwrap();
    let entry = |key: &str, image: &str| {
        format!(
            "{key}:\n  image: {image}\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: h100\n  precision: fp8\n  framework: sglang\n  multinode: false\n"
        )
    };
    let master = format!("{}{}", entry("dsr1-fp8-h100-sglang", "lmsysorg/sglang:v0.5.0"), entry("dsr1-fp8-h200-sglang", "lmsysorg/sglang:v0.5.0"));
    write_tree(dir.path(), &[("configs/nvidia-master.yaml", &master)]);
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    let changed =
        master.replacen("lmsysorg/sglang:v0.5.0", "example.com/fork/sglang:v0.5.0", 2).replacen("example.com/fork/sglang:v0.5.0", "lmsysorg/sglang:v0.5.0", 1);
    std::fs::write(dir.path().join("configs/nvidia-master.yaml"), changed).unwrap();
    let out = auditor(&["audit", s(dir.path()), "--changed-since", "HEAD", "--format", "json"]);
    let report = json(&out);
    let ids = judged(&report);
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert!(ids[0].starts_with("configs/nvidia-master.yaml#dsr1-fp8-h200-sglang"), "{ids:?}");
    assert!(
        report["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["id"].as_str().unwrap().starts_with("configs/nvidia-master.yaml#dsr1-fp8-h100-sglang") && j.get("skipped").is_some())
    );
}

/// Under `--interpret-scripts`, `--changed-since` evaluates only what the
/// change selects, yet groups jobs as a whole evaluation would: a script
/// outside `single_node` that an entry runs by name is evaluated to link
/// it, and an unchanged helper beside a changed changelog is listed as
/// skipped, not judged without evaluation.
#[test]
fn changed_since_interpreted_evaluates_what_the_change_selects_and_groups_as_a_whole_read() {
    let dir = tempfile::tempdir().unwrap();
    let master = |image: &str| {
        format!(
            "dsr1-fp8-h100-sglang:\n  image: {image}\n  model: deepseek-ai/DeepSeek-R1\n  model-prefix: dsr1\n  runner: h100\n  precision: fp8\n  framework: sglang\n  multinode: false\n"
        )
    };
    let launcher = "benchmarks/other/dsr1_fp8_h100_sglang.sh";
    let helper = "utils/patch_engine.sh";
    write_tree(
        dir.path(),
        &[
            ("configs/nvidia-master.yaml", &master("lmsysorg/sglang:v0.5.0")),
            (launcher, "#!/usr/bin/env bash\nlaunch() { python3 -m sglang.launch_server --model-path \"$1\" --tp 8; }\nlaunch /models/m\n"),
            (helper, "#!/usr/bin/env bash\nsed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py\n"),
            ("perf-changelog.yaml", "- one\n"),
        ],
    );
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    std::fs::write(dir.path().join("configs/nvidia-master.yaml"), master("lmsysorg/sglang:v0.5.1")).unwrap();
    std::fs::write(dir.path().join("perf-changelog.yaml"), "- one\n- two\n").unwrap();
    let whole = json(&auditor(&["audit", s(dir.path()), "--interpret-scripts", "--format", "json"]));
    let out = auditor(&["audit", s(dir.path()), "--interpret-scripts", "--changed-since", "HEAD", "--format", "json"]);
    let report = json(&out);
    let job = |report: &serde_json::Value, prefix: &str| {
        report["jobs"].as_array().unwrap().iter().find(|j| j["id"].as_str().unwrap().starts_with(prefix)).cloned().unwrap_or_else(|| panic!("no job {prefix}"))
    };
    let entry = "configs/nvidia-master.yaml#dsr1-fp8-h100-sglang";
    assert!(job(&report, entry).get("skipped").is_none(), "the changed entry is judged");
    let runs = job(&report, entry)["kind_reason"].as_str().unwrap().to_string();
    assert_eq!(runs, job(&whole, entry)["kind_reason"].as_str().unwrap(), "linked as in a whole read");
    assert!(runs.contains(&format!("runs {launcher}")), "{runs}");
    let unchanged = job(&report, "repository (unchanged scripts)");
    assert!(unchanged["skipped"].as_str().unwrap().contains("not evaluated"), "{unchanged}");
    let files = report["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f["path"] == helper && f["job"] == "repository (unchanged scripts)"), "{files:?}");
    assert!(judged(&report).iter().any(|j| j == "repository"), "the changelog's job is judged");
    assert_eq!(code(&out), 0, "the helper's patch is not the change's: {}", stdout(&out));

    // The helper changed: evaluated and judged, its patch the change's.
    std::fs::write(dir.path().join(helper), "#!/usr/bin/env bash\nsed -i 's/a/c/' /usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py\n")
        .unwrap();
    let out = auditor(&["audit", s(dir.path()), "--interpret-scripts", "--changed-since", "HEAD", "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(counted_errors(&json(&out)).iter().any(|f| f.to_string().contains(helper)));
}

#[test]
fn changed_since_outside_git_or_with_an_unknown_ref_is_a_usage_error() {
    let plain = tempfile::tempdir().unwrap();
    write_tree(plain.path(), &[("benchmarks/single_node/a_fp8_h100.sh", SCRIPT)]);
    let out_plain = auditor(&["audit", s(plain.path()), "--changed-since", "HEAD"]);
    assert_eq!(code(&out_plain), 2);
    assert!(stderr(&out_plain).contains("is not a git checkout") && stderr(&out_plain).contains(s(plain.path())), "{}", stderr(&out_plain));
    let dir = repo();
    let out = auditor(&["audit", s(dir.path()), "--changed-since", "no-such-ref"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("\"no-such-ref\" is not a commit"), "{}", stderr(&out));
}

#[test]
fn the_real_tree_fits_one_comment_and_the_github_format_fills_the_step_summary() {
    let (dir, tree) = real_tree();
    let out = auditor(&["audit", s(&tree), "--format", "markdown"]);
    assert_eq!(code(&out), 1);
    let md = stdout(&out);
    assert!(md.chars().count() < 65_536, "{} characters", md.chars().count());
    assert!(md.contains("### Errors (") && md.contains("<details>"), "errors shown, the rest folded");
    assert_eq!(md.matches("<details>").count(), md.matches("</details>").count());

    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_auditor")).args(["audit", s(&tree), "--format", "github"]).env("GITHUB_STEP_SUMMARY", &summary).output().unwrap();
    assert_eq!(code(&out), 1);
    let annotations = stdout(&out);
    let first = annotations.lines().next().unwrap();
    assert!(first.starts_with("::error file="), "errors with a file come first: {first}");
    let errors_end = annotations.lines().position(|l| !l.starts_with("::error file=")).unwrap();
    assert!(annotations.lines().skip(errors_end).all(|l| !l.starts_with("::error file=")), "all file errors before the rest");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.starts_with("earlier step\n## ❌ auditor verdict: FAIL"), "appended, not overwritten: {}", &written[..200.min(written.len())]);
    assert!(written.chars().count() < 65_536 + 20);
}

/// A triage list: one `RULE FILE:LINE — reason` a line (`#` comments).
/// Each is a place a maintainer would act on, with the reason why; the list
/// is reviewed like code.
pub fn triage_list(path: &Path) -> std::collections::BTreeMap<(String, String, u64), String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().unwrap().to_string_lossy();
    let mut out = std::collections::BTreeMap::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#')) {
        let (head, reason) = line.split_once(" — ").unwrap_or_else(|| panic!("{name}:{}: no ' — reason'", n + 1));
        let (rule, place) = head.trim().split_once(' ').unwrap_or_else(|| panic!("{name}:{}: expected RULE FILE:LINE", n + 1));
        let (file, at) = place.trim().rsplit_once(':').unwrap_or_else(|| panic!("{name}:{}: expected FILE:LINE", n + 1));
        assert!(reason.trim().len() > 20, "{name}:{}: every place carries its reason", n + 1);
        let key = (rule.to_string(), file.to_string(), at.parse().unwrap_or_else(|_| panic!("{name}:{}: line number", n + 1)));
        assert!(out.insert(key, reason.trim().to_string()).is_none(), "{name}:{}: listed twice", n + 1);
    }
    out
}

/// The counted error places of a report, as (rule, file, line); every
/// error has a file and a line.
pub fn error_places(report: &serde_json::Value) -> std::collections::BTreeSet<(String, String, u64)> {
    let mut got = std::collections::BTreeSet::new();
    for f in counted_errors(report).into_iter().filter(|f| f.get("pre_existing").is_none()) {
        let e = &f["evidence"][0];
        let (Some(file), Some(line)) = (e["file"].as_str(), e["line"].as_u64()) else { panic!("an error without a file and line: {f}") };
        got.insert((f["rule"].as_str().unwrap().to_string(), file.to_string(), line));
    }
    got
}

/// Fails unless `got` is exactly the places `list` triages.
pub fn assert_triaged(got: &std::collections::BTreeSet<(String, String, u64)>, list: &Path) {
    let listed: std::collections::BTreeSet<_> = triage_list(list).into_keys().collect();
    let new: Vec<_> = got.difference(&listed).collect();
    let vanished: Vec<_> = listed.difference(got).collect();
    assert!(
        new.is_empty() && vanished.is_empty(),
        "new error places (triage them in {}): {new:#?}\nvanished (remove them with a reason): {vanished:#?}",
        list.display()
    );
}

/// Regression test on real material (issue: the PR gate on a real
/// repository): the gate reports exactly the triaged error places of the
/// InferenceX snapshot, each with a file and line, none from a retired
/// config, nothing left unexamined. A new error place or a vanished one
/// fails until `tests/real_tree/errors.txt` says why.
#[test]
fn the_real_tree_reports_exactly_the_triaged_error_places() {
    let (_dir, tree) = real_tree();
    let out = audit(&[s(&tree), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report = json(&out);
    let got = error_places(&report);
    assert!(got.iter().all(|(_, file, _)| !file.split('/').any(|d| d == "deprecated")), "an error from a retired config: {got:#?}");
    assert_triaged(&got, &root().join("tests/real_tree/errors.txt"));
    assert!(got.len() <= 60, "a few dozen places at most: {}", got.len());
    assert_eq!(report["not_examined"].as_array().map_or(0, Vec::len), 0, "{:#}", report["not_examined"]);
    // What must not be an error: the waived patch script, the eval client's sitecustomize.
    for f in counted_errors(&report) {
        let file = f["evidence"][0]["file"].as_str().unwrap();
        assert!(!file.ends_with("apply_k3_container_patches.sh"), "the waived patch script: {f}");
        let line = f["evidence"][0]["line"].as_u64().unwrap();
        let lm_eval = file == "benchmarks/benchmark_lib.sh" && (870..=900).contains(&line);
        assert!(!lm_eval, "the evaluation client (lm-eval installs, its sitecustomize) is harness: {f}");
    }
}

/// The line reader (`--line-reader`, the model before the interpreter)
/// still reports exactly its own triaged places on the snapshot
/// (`tests/real_tree/errors-line-reader.txt`), all of which the default
/// reports too.
#[test]
fn the_real_tree_read_line_by_line_reports_exactly_its_triaged_places() {
    let (_dir, tree) = real_tree();
    let out = audit(&[s(&tree), "--line-reader", "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let got = error_places(&json(&out));
    assert_triaged(&got, &root().join("tests/real_tree/errors-line-reader.txt"));
    let default = triage_list(&root().join("tests/real_tree/errors.txt"));
    let lost: Vec<_> = got.iter().filter(|p| !default.contains_key(*p)).collect();
    assert!(lost.is_empty(), "places the line reader finds and the interpreter's list lacks: {lost:#?}");
}

/// A checkout given as a `.tar.gz` is judged against its own golden tables
/// and model list, read from the archive under the reader's limits, as the
/// same checkout unpacked is: the golden-AL findings cite the tree's table,
/// never the embedded copy, and the drafts its `MODELS.md` agrees are no
/// substitution.
#[test]
fn the_real_tree_as_a_tar_gz_is_judged_against_its_own_tables() {
    let archive = root().join("../shared/data/inferencex/tree-843c6254.tar.gz");
    let out = auditor(&["audit", s(&archive), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report = json(&out);
    let golden = check(&report, "golden-al");
    let cited: Vec<&str> =
        golden["findings"].as_array().unwrap().iter().flat_map(|f| f["evidence"].as_array().unwrap()).filter_map(|e| e["file"].as_str()).collect();
    assert!(cited.iter().any(|f| f.starts_with("InferenceX/golden_al_distribution/")), "{cited:?}");
    assert!(!cited.iter().any(|f| f.starts_with("policies/golden/")), "an embedded table stood in for the tree's: {cited:?}");
    let drafts = check(&report, "draft-precision");
    let errors = drafts["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").count();
    assert_eq!(errors, 2, "only the two online-quantisation errors of the triaged list: {drafts:#}");
}

/// Reading git executes nothing: a checkout is hostile input, and its own
/// `.git/config` and `.gitattributes` may name commands for git to run (an
/// fsmonitor hook, clean and smudge filters, a textconv driver, an external
/// diff, a pager). `--changed-since` still finds what changed, and none of
/// them runs.
#[test]
fn changed_since_runs_nothing_the_repository_configures() {
    let dir = repo();
    let root = s(dir.path());
    let marker = dir.path().join("ran");
    let hook = dir.path().join("hook.sh");
    std::fs::write(&hook, format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hook = s(&hook);
    for (key, value) in [
        ("core.fsmonitor", hook),
        ("core.pager", hook),
        ("diff.external", hook),
        ("filter.evil.clean", hook),
        ("filter.evil.smudge", hook),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", hook),
    ] {
        git(dir.path(), &["config", key, value]);
    }
    std::fs::write(dir.path().join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    let b = "benchmarks/single_node/b_fp8_h100.sh";
    std::fs::write(dir.path().join(b), format!("{SCRIPT}export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n")).unwrap();
    let out = auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]);
    assert!(!marker.exists(), "the repository's own configuration ran: {}", std::fs::read_to_string(&marker).unwrap_or_default());
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(judged(&json(&out)).contains(&b.to_string()), "the change is still found");
}

/// A commit's tree read from git objects (what `--changed-since` will audit
/// the base from) is the commit as checked out: the same files with the
/// same contents, whatever the work tree holds now, and nothing the
/// repository configures runs while it is read.
#[test]
fn a_commit_read_from_git_objects_is_the_commit_as_checked_out() {
    use auditor::bundle::{Limits, read_bundle, read_git_tree};
    use auditor::evidence::Extractor;
    let dir = repo();
    let sub = dir.path().join("benchmarks");
    // The work tree moves on: a file changed, one added, one deleted.
    std::fs::write(sub.join("single_node/a_fp8_h100.sh"), "echo changed\n").unwrap();
    std::fs::write(sub.join("single_node/new.sh"), "echo new\n").unwrap();
    std::fs::remove_file(sub.join("single_node/c_fp8_h100.sh")).unwrap();
    let marker = dir.path().join("ran");
    let hook = dir.path().join("hook.sh");
    std::fs::write(&hook, format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for key in ["core.fsmonitor", "filter.evil.smudge", "filter.evil.clean", "core.pager"] {
        git(dir.path(), &["config", key, s(&hook)]);
    }
    std::fs::write(dir.path().join(".gitattributes"), "* filter=evil\n").unwrap();

    let limits = Limits::default();
    let from_git = read_git_tree(dir.path(), "HEAD", "benchmarks/", "base", &limits, &mut Extractor::new(4096)).unwrap();
    assert!(!marker.exists(), "the repository's own configuration ran: {}", std::fs::read_to_string(&marker).unwrap_or_default());
    // The same commit checked out elsewhere, read as a directory.
    let checkout = tempfile::tempdir().unwrap();
    let status = Command::new("git").args(["clone", "-q", "--no-checkout"]).arg(dir.path()).arg(checkout.path()).status().unwrap();
    assert!(status.success());
    let status = Command::new("git")
        .arg("-C")
        .arg(checkout.path())
        .args(["-c", "filter.evil.smudge=cat", "-c", "filter.evil.clean=cat", "checkout", "-q", "HEAD", "--", "."])
        .status()
        .unwrap();
    assert!(status.success());
    let from_disk = read_bundle(&checkout.path().join("benchmarks"), &limits, &mut Extractor::new(4096)).unwrap();
    let files = |b: &auditor::bundle::Bundle| b.files.iter().map(|f| (f.path.clone(), f.sha256.clone())).collect::<Vec<_>>();
    let (mut git_files, mut disk_files) = (files(&from_git), files(&from_disk));
    git_files.sort();
    disk_files.sort();
    assert_eq!(git_files, disk_files);
    assert!(git_files.iter().any(|(p, _)| p == "single_node/c_fp8_h100.sh") && !git_files.iter().any(|(p, _)| p == "single_node/new.sh"));
    assert_eq!(from_git.sha256, from_disk.sha256, "the same manifest digest as the directory's");
}

/// With `--changed-since`, only what the change writes fails: the base
/// commit is audited too (from git objects), a finding present at both is
/// pre-existing (listed, marked, never failing, even on a line the change
/// moved), one the change removes is listed as fixed by it, and a new one
/// fails.
/// A new launch script that sources a helper with an unwaived patch: the
/// patch is pre-existing (the change did not write it) and does not fail
/// the change, but it is listed as reaching the new job, for the reviewer.
#[test]
fn a_pre_existing_error_that_reaches_a_new_job_is_listed_not_counted() {
    let dir = repo();
    let root = s(dir.path());
    let helper = "benchmarks/patch_lib.sh";
    let sourcing =
        |script: &str| format!("#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../patch_lib.sh\"\n{}", script.trim_start_matches("#!/usr/bin/env bash\n"));
    std::fs::write(dir.path().join(helper), "sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\n").unwrap();
    std::fs::write(dir.path().join("benchmarks/single_node/a_fp8_h100.sh"), sourcing(SCRIPT)).unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "a patch, merged before"]);

    let d = "benchmarks/single_node/d_fp8_h100.sh";
    std::fs::write(dir.path().join(d), sourcing(SCRIPT)).unwrap();
    let out = auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let report = json(&out);
    let reach = report["changed_since"]["reaching_new_jobs"].as_array().unwrap_or_else(|| panic!("{:#}", report["changed_since"]));
    let edit = reach.iter().find(|r| r["rule"] == "engine-patch/edit").unwrap_or_else(|| panic!("{reach:#?}"));
    assert_eq!(edit["where"], format!("{helper}:1"));
    assert!(edit["jobs"].as_array().unwrap().iter().any(|j| j.as_str().unwrap().starts_with(d)), "{edit}");
    assert!(edit["jobs"].as_array().unwrap().iter().all(|j| !j.as_str().unwrap().starts_with("benchmarks/single_node/a_")), "a's job is not new: {edit}");
    let text = stdout(&auditor(&["audit", root, "--changed-since", "HEAD"]));
    assert!(text.contains(&format!("reaches: pre-existing engine-patch/edit at {helper}:1 now also runs in new job(s) {d}")), "{text}");
}

#[test]
fn changed_since_fails_only_on_what_the_change_introduces() {
    let dir = repo();
    let root = s(dir.path());
    let (a, b) = ("benchmarks/single_node/a_fp8_h100.sh", "benchmarks/single_node/b_fp8_h100.sh");
    let violation = "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n";
    std::fs::write(dir.path().join(b), format!("{SCRIPT}{violation}")).unwrap();
    git(dir.path(), &["commit", "-qam", "a violation, merged before"]);

    // An unrelated edit to b that moves the violation's line: judged, pre-existing, passes.
    std::fs::write(dir.path().join(b), format!("# tuned\n{SCRIPT}{violation}")).unwrap();
    let out = auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let report = json(&out);
    assert!(judged(&report).contains(&b.to_string()));
    let pre: Vec<&serde_json::Value> = findings(&report).filter(|f| f["pre_existing"] == true).collect();
    assert!(!pre.is_empty() && pre.iter().any(|f| f["rule"] == "forbidden-env/enabled"), "{report:#}");
    assert_eq!(report["changed_since"]["pre_existing"].as_u64().unwrap() as usize, pre.len());
    assert!(counted_errors(&report).iter().all(|f| f["pre_existing"] == true), "nothing new counts");
    let text = stdout(&auditor(&["audit", root, "--changed-since", "HEAD"]));
    assert!(text.contains("verdict: PASS") && text.contains(&format!("{} finding(s) pre-existing at HEAD, not counted", pre.len())), "{text}");

    // The fix: the violation removed passes and names what it fixed.
    std::fs::write(dir.path().join(b), SCRIPT).unwrap();
    let report = json(&auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]));
    assert_eq!(report["verdict"], "pass");
    let fixed = report["changed_since"]["fixed"].as_array().unwrap();
    assert!(fixed.iter().any(|f| f["rule"] == "forbidden-env/enabled" && f["where"].as_str().unwrap().starts_with(b)), "{fixed:?}");

    // A new violation in a fails, and is not pre-existing.
    std::fs::write(dir.path().join(b), format!("{SCRIPT}{violation}")).unwrap();
    std::fs::write(dir.path().join(a), format!("{SCRIPT}{violation}")).unwrap();
    let out = auditor(&["audit", root, "--changed-since", "HEAD", "--format", "json"]);
    assert_eq!(code(&out), 1);
    let report = json(&out);
    let new: Vec<&serde_json::Value> = counted_errors(&report).into_iter().filter(|f| f["pre_existing"] != true).collect();
    assert!(!new.is_empty() && new.iter().all(|f| f["job"].as_str().unwrap().starts_with(a)), "{new:?}");
}

/// SARIF of the real tree as GitHub code scanning takes it: no `note`, every
/// result at a file and a line named from the tree's root (no absolute,
/// `./` or `..` URI), the schema and the upload limits; annotations too.
#[test]
fn sarif_and_annotations_of_the_real_tree_fit_code_scanning() {
    let (_dir, tree) = real_tree();
    let out = auditor(&["audit", s(&tree), "--format", "sarif"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let sarif = json(&out);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.len() > 40, "{}", results.len());
    let problems = crate::honest::sarif_problems("real tree", &sarif);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let unplaced = crate::honest::unplaced(&sarif);
    assert!(unplaced.is_empty(), "{}", unplaced.join("\n"));
    let annotations = stdout(&auditor(&["audit", s(&tree), "--format", "github"]));
    for file in annotations.lines().filter_map(|l| l.split("file=").nth(1)).map(|f| f.split(',').next().unwrap()) {
        assert!(!file.starts_with('/') && !file.starts_with("./") && !file.split('/').any(|p| p == ".."), "{file}");
        assert!(tree.join(file).is_file(), "{file} is not a file of the tree");
    }
}

/// The text report answers first: its first 15 lines name every check that
/// failed, with its count and top places; inside a check, errors come
/// before warnings.
#[test]
fn the_text_report_of_the_real_tree_answers_in_its_first_lines() {
    let (_dir, tree) = real_tree();
    let report = json(&auditor(&["audit", s(&tree), "--format", "json"]));
    let failing: Vec<String> =
        report["checks"].as_array().unwrap().iter().filter(|c| c["status"] == "fail").map(|c| c["id"].as_str().unwrap().to_string()).collect();
    assert!(failing.len() >= 5, "{failing:?}");
    let text = stdout(&auditor(&["audit", s(&tree)]));
    let head: Vec<&str> = text.lines().take(15).collect();
    for id in &failing {
        assert!(
            head.iter().any(|l| l.trim_start().starts_with(&format!("FAIL {id}: ")) && l.contains("error(s)")),
            "{id} not in the first 15 lines:\n{}",
            head.join("\n")
        );
    }
    let mut seen_warning = false;
    for line in text.lines() {
        if !line.starts_with("  ") {
            seen_warning = false;
        } else if line.starts_with("  warning ") {
            seen_warning = true;
        } else if line.starts_with("  error ") {
            assert!(!seen_warning, "an error after a warning in one check: {line}");
        }
    }
}
