//! The GitHub Action: `action.yml`, its logic in `action/run.sh`, and the
//! example workflows. The real script drives the real binary against the
//! samples, in a runner's environment made in a temporary directory (the
//! files a step writes its outputs and job summary to, a pull_request event
//! payload, RUNNER_TEMP, a workspace). One thing is a stand-in: `gh`, first
//! on PATH, which records each call and answers canned JSON, since GitHub's
//! API is not reachable from a test.

use crate::common::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What starts the action's pull-request comment.
const MARKER: &str = "<!-- auditor-report -->";
const REPOSITORY: &str = "acme/bench";
const PR: u64 = 7;
/// A base commit no repository here has: outside a checkout it must go unused.
const NO_SUCH_BASE: &str = "0123456789abcdef0123456789abcdef01234567";

/// `gh` as the script sees it in these tests: each call's arguments (one per
/// line) and, for `--input -`, its standard input are kept under `calls/`;
/// the comment list is answered from `comments.json`, a write with the
/// comment it made; `gh-fails` makes every call fail as a read-only token does.
const FAKE_GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
dir=$(dirname "$0")/..
n=$(find "$dir/calls" -name '*.args' | wc -l)
printf '%s\n' "$@" >"$dir/calls/$n.args"
if [[ " $* " == *" --input - "* ]]; then cat >"$dir/calls/$n.stdin"; fi
if [[ -e $dir/gh-fails ]]; then echo "gh: Resource not accessible by integration (HTTP 403)" >&2; exit 1; fi
case " $* " in
  *" --method "*) echo '{"id": 1}' ;;
  *) cat "$dir/comments.json" ;;
esac
"#;

/// A pull_request event payload as GitHub writes it (the fields the action reads).
fn pull_request(base: &str) -> Value {
    json!({
        "action": "synchronize",
        "number": PR,
        "pull_request": { "number": PR, "base": { "ref": "main", "sha": base }, "head": { "ref": "change", "sha": "f".repeat(40) } },
        "repository": { "full_name": REPOSITORY }
    })
}

/// A push event: no pull request, so no base and nowhere to comment.
fn push() -> Value {
    json!({ "ref": "refs/heads/main", "after": "e".repeat(40), "repository": { "full_name": REPOSITORY } })
}

/// The runner side of a step, in a temporary directory.
struct Runner {
    dir: tempfile::TempDir,
}

/// One run of the script.
struct Step {
    code: i32,
    /// Standard output and error: the step's log.
    log: String,
    outputs: BTreeMap<String, String>,
    summary: String,
}

struct GhCall {
    args: Vec<String>,
    stdin: Option<String>,
}

impl Runner {
    fn new(event: &Value) -> Runner {
        let dir = tempfile::tempdir().unwrap();
        write_tree(dir.path(), &[("bin/gh", FAKE_GH), ("event.json", &event.to_string()), ("comments.json", "[]")]);
        std::fs::set_permissions(dir.path().join("bin/gh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        for sub in ["calls", "temp", "home", "workspace"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Runner { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Copy a sample into the workspace; its path there, as a workflow names it.
    fn add(&self, sample: &str) -> String {
        let to = format!("bundles/{}", Path::new(sample).file_name().unwrap().to_str().unwrap());
        std::fs::create_dir_all(self.path("workspace/bundles")).unwrap();
        let status = Command::new("cp").arg("-r").arg(root().join(sample)).arg(self.path("workspace").join(&to)).status().unwrap();
        assert!(status.success());
        to
    }

    /// The pages `gh api --paginate` answers the comment list with: one JSON
    /// array after another, as gh prints them.
    fn comments(&self, pages: &[Value]) {
        std::fs::write(self.path("comments.json"), pages.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")).unwrap();
    }

    /// Run the script with `inputs` (action input names), on fresh output,
    /// summary and `gh` call records.
    fn run(&self, inputs: &[(&str, &str)]) -> Step {
        for file in ["output", "summary.md"] {
            std::fs::write(self.path(file), "").unwrap();
        }
        std::fs::remove_dir_all(self.path("calls")).unwrap();
        std::fs::create_dir(self.path("calls")).unwrap();
        let path = format!("{}:{}", self.path("bin").display(), std::env::var("PATH").unwrap());
        let mut command = Command::new("bash");
        command
            .arg(root().join("action/run.sh"))
            .current_dir(self.path("workspace"))
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.path("home"))
            .env("AUDITOR_BIN", env!("CARGO_BIN_EXE_auditor"))
            .env("GITHUB_OUTPUT", self.path("output"))
            .env("GITHUB_STEP_SUMMARY", self.path("summary.md"))
            .env("GITHUB_EVENT_PATH", self.path("event.json"))
            .env("GITHUB_REPOSITORY", REPOSITORY)
            .env("GITHUB_WORKSPACE", self.path("workspace"))
            .env("RUNNER_TEMP", self.path("temp"));
        for (name, value) in inputs {
            command.env(format!("INPUT_{}", name.to_uppercase().replace('-', "_")), value);
        }
        let out = command.output().unwrap();
        Step {
            code: code(&out),
            log: format!("{}{}", stdout(&out), stderr(&out)),
            outputs: parse_outputs(&std::fs::read_to_string(self.path("output")).unwrap()),
            summary: std::fs::read_to_string(self.path("summary.md")).unwrap(),
        }
    }

    fn gh_calls(&self) -> Vec<GhCall> {
        let count = std::fs::read_dir(self.path("calls")).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "args")).count();
        (0..count)
            .map(|n| GhCall {
                args: std::fs::read_to_string(self.path(&format!("calls/{n}.args"))).unwrap().lines().map(str::to_string).collect(),
                stdin: std::fs::read_to_string(self.path(&format!("calls/{n}.stdin"))).ok(),
            })
            .collect()
    }
}

/// `GITHUB_OUTPUT` in the delimited form (`name<<DELIMITER`, value lines,
/// `DELIMITER`), the only form the script writes.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let (name, delimiter) = line.split_once("<<").unwrap_or_else(|| panic!("not NAME<<DELIMITER: {line:?} in {text}"));
        let mut value = Vec::new();
        loop {
            match lines.next() {
                Some(l) if l == delimiter => break,
                Some(l) => value.push(l),
                None => panic!("{name}: no closing {delimiter} in {text}"),
            }
        }
        assert!(out.insert(name.to_string(), value.join("\n")).is_none(), "{name} set twice: {text}");
    }
    out
}

fn read_json(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap_or_else(|e| panic!("{path}: not JSON: {e}"))
}

#[test]
fn the_step_passes_or_fails_as_fail_on_says_and_leaves_every_report() {
    let runner = Runner::new(&pull_request(NO_SUCH_BASE));
    let pass = runner.add("samples/bundles/vllm-agentx-pass");
    let fail = runner.add(FAIL_INHERITED);
    // An archive cut short: what was read passes, the rest was not examined.
    let whole = std::fs::read(root().join("samples/bundles/dsv41flash-h200-dspark-pass.tar.gz")).unwrap();
    std::fs::write(runner.path("workspace/bundles/truncated.tar.gz"), &whole[..20_000]).unwrap();
    let incomplete = "bundles/truncated.tar.gz".to_string();
    let golden = root().join(GOLDEN).display().to_string();

    // (input, verdict, heading, auditor exit code, step status with fail-on error, incomplete, never)
    let cases = [
        (&pass, "pass", "## ✅ auditor verdict: PASS", 0, [0, 0, 0]),
        (&fail, "fail", "## ❌ auditor verdict: FAIL", 1, [1, 1, 0]),
        (&incomplete, "incomplete", "## ⚠️ auditor verdict: INCOMPLETE", 3, [0, 3, 0]),
    ];
    for (input, verdict, heading, exit, statuses) in cases {
        for (fail_on, status) in ["error", "incomplete", "never"].into_iter().zip(statuses) {
            let step = runner.run(&[("path", input.as_str()), ("golden", golden.as_str()), ("fail-on", fail_on)]);
            let case = format!("{verdict} with fail-on {fail_on}:\n{}", step.log);
            assert_eq!(step.code, status, "{case}");
            assert_eq!(step.outputs["verdict"], verdict, "{case}");
            assert_eq!(step.outputs["exit-code"], exit.to_string(), "{case}");

            let report = read_json(&step.outputs["json"]);
            assert_eq!(report["verdict"], verdict, "{case}");
            // The event names a base, but the input is no git checkout: audited in full.
            assert!(report.get("changed_since").is_none(), "{case}");
            assert!(step.log.contains("is not a git checkout: audited in full"), "{case}");

            let sarif = read_json(&step.outputs["sarif"]);
            assert_eq!(sarif["version"], "2.1.0", "{case}");
            let results = sarif["runs"][0]["results"].as_array().unwrap_or_else(|| panic!("no results: {sarif}"));
            if verdict == "fail" {
                assert!(!results.is_empty(), "{case}");
                // Named from the workspace, where code scanning resolves them, not from the bundle.
                for result in results {
                    let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
                    assert!(uri.starts_with(&format!("{fail}/")), "{uri}");
                }
            }

            let markdown = std::fs::read_to_string(&step.outputs["markdown"]).unwrap();
            assert!(markdown.starts_with(heading), "{case}\n{markdown}");
            assert_eq!(step.summary, format!("{markdown}\n"), "the job summary is the Markdown report, once");
            // Annotations in the log, from the same run.
            assert!(step.log.contains(&format!(" title=auditor verdict::{}", verdict.to_uppercase())), "{case}");
            // Every report of a run lies under RUNNER_TEMP, apart from the other runs'.
            for name in ["json", "sarif", "markdown"] {
                assert!(Path::new(&step.outputs[name]).starts_with(runner.path("temp")), "{name}: {}", step.outputs[name]);
            }
        }
    }
    assert!(runner.gh_calls().is_empty(), "no comment asked for, no API call");
}

#[test]
fn a_usage_error_fails_the_step_whatever_fail_on_says() {
    let runner = Runner::new(&push());
    let step = runner.run(&[("path", "bundles/not-there"), ("fail-on", "never")]);
    assert_eq!(step.code, 2, "{}", step.log);
    assert_eq!(step.outputs["exit-code"], "2");
    assert_eq!(step.outputs["verdict"], "");
    assert!(!step.outputs.contains_key("json") && !step.outputs.contains_key("sarif"), "{:?}", step.outputs);
    assert!(step.summary.starts_with("## auditor: no report (exit 2)"), "{}", step.summary);
    assert!(step.log.contains("::error title=auditor action::the auditor stopped without a report (exit 2)"), "{}", step.log);

    // Inputs the action does not know stop it before any audit.
    for (name, value, says) in [("fail-on", "sometimes", "fail-on must be"), ("comment", "yes", "comment must be")] {
        let step = runner.run(&[("path", "."), (name, value)]);
        assert_eq!(step.code, 2, "{}", step.log);
        assert!(step.log.contains(says), "{}", step.log);
        assert!(step.outputs.is_empty(), "{:?}", step.outputs);
    }
}

#[test]
fn comment_creates_one_marked_comment_then_updates_it() {
    let runner = Runner::new(&pull_request(NO_SUCH_BASE));
    let pass = runner.add("samples/bundles/vllm-agentx-pass");
    let list = ["api".to_string(), "--paginate".into(), format!("repos/{REPOSITORY}/issues/{PR}/comments?per_page=100")];
    let body = |call: &GhCall| {
        serde_json::from_str::<Value>(call.stdin.as_deref().expect("the body on standard input")).unwrap()["body"].as_str().unwrap().to_string()
    };

    // No comment of the action's account starts with the marker (one quotes
    // it; the pull request's author planted one): a new comment.
    let bot = json!({ "login": "github-actions[bot]" });
    runner.comments(&[
        json!([{ "id": 40, "body": "lgtm", "user": { "login": "author" } }, { "id": 41, "body": format!("the action writes {MARKER} first"), "user": bot }]),
        json!([{ "id": 39, "body": format!("{MARKER}\n## ✅ auditor verdict: PASS"), "user": { "login": "author" } }, { "id": 43, "body": "ok", "user": bot }]),
    ]);
    let step = runner.run(&[("path", pass.as_str()), ("comment", "true")]);
    assert_eq!(step.code, 0, "{}", step.log);
    let markdown = std::fs::read_to_string(&step.outputs["markdown"]).unwrap();
    let calls = runner.gh_calls();
    assert_eq!(calls.len(), 2, "{:?}", calls.iter().map(|c| &c.args).collect::<Vec<_>>());
    assert_eq!(calls[0].args, list);
    assert_eq!(calls[1].args, ["api", "--method", "POST", &format!("repos/{REPOSITORY}/issues/{PR}/comments"), "--input", "-"]);
    assert_eq!(body(&calls[1]), format!("{MARKER}\n{markdown}"));

    // The action's comment, on the second page: updated in place, none created.
    runner.comments(&[
        json!([{ "id": 40, "body": "lgtm", "user": { "login": "author" } }]),
        json!([{ "id": 42, "body": format!("{MARKER}\n## ❌ auditor verdict: FAIL"), "user": bot }, { "id": 44, "body": "thanks", "user": bot }]),
    ]);
    let step = runner.run(&[("path", pass.as_str()), ("comment", "true")]);
    assert_eq!(step.code, 0, "{}", step.log);
    let calls = runner.gh_calls();
    assert_eq!(calls.len(), 2, "{:?}", calls.iter().map(|c| &c.args).collect::<Vec<_>>());
    assert_eq!(calls[0].args, list);
    assert_eq!(calls[1].args, ["api", "--method", "PATCH", &format!("repos/{REPOSITORY}/issues/comments/42"), "--input", "-"]);
    assert_eq!(body(&calls[1]), format!("{MARKER}\n{markdown}"));

    // A token that may not comment (a fork's pull request) leaves the verdict to decide.
    std::fs::write(runner.path("gh-fails"), "").unwrap();
    let step = runner.run(&[("path", pass.as_str()), ("comment", "true")]);
    assert_eq!(step.code, 0, "{}", step.log);
    assert!(step.log.contains("::warning title=auditor action::could not write the pull-request comment"), "{}", step.log);
    std::fs::remove_file(runner.path("gh-fails")).unwrap();

    // No comment unless asked, and none outside a pull request.
    runner.run(&[("path", pass.as_str())]);
    assert!(runner.gh_calls().is_empty());
    let runner = Runner::new(&push());
    let pass = runner.add("samples/bundles/vllm-agentx-pass");
    let step = runner.run(&[("path", pass.as_str()), ("comment", "true")]);
    assert_eq!(step.code, 0, "{}", step.log);
    assert!(runner.gh_calls().is_empty());
    assert!(step.log.contains("the event is not a pull request"), "{}", step.log);
}

#[test]
fn in_a_pull_request_a_checkout_is_judged_since_its_base() {
    let repo = crate::gate::repo();
    let head = Command::new("git").arg("-C").arg(repo.path()).args(["rev-parse", "HEAD"]).output().unwrap();
    let base = String::from_utf8(head.stdout).unwrap().trim().to_string();
    let changed = "benchmarks/single_node/b_fp8_h100.sh";
    std::fs::write(repo.path().join(changed), format!("{}export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n", crate::gate::SCRIPT)).unwrap();
    let checkout = repo.path().display().to_string();
    let judged = |report: &Value| report["jobs"].as_array().unwrap().iter().filter(|j| j.get("skipped").is_none()).count();

    // The base comes from the event; only the changed script's two jobs are judged.
    let runner = Runner::new(&pull_request(&base));
    let step = runner.run(&[("path", checkout.as_str())]);
    assert_eq!(step.code, 1, "{}", step.log);
    assert!(step.log.contains(&format!("--changed-since {base}")), "{}", step.log);
    let report = read_json(&step.outputs["json"]);
    assert_eq!(report["changed_since"]["ref"], base.as_str(), "{report:#}");
    assert_eq!(report["changed_since"]["judged"], 2);
    assert_eq!(judged(&report), 2);

    // `base` given outside a pull request.
    let runner = Runner::new(&push());
    let step = runner.run(&[("path", checkout.as_str()), ("base", base.as_str())]);
    assert_eq!(read_json(&step.outputs["json"])["changed_since"]["ref"], base.as_str(), "{}", step.log);

    // Neither: every job is judged.
    let step = runner.run(&[("path", checkout.as_str())]);
    let report = read_json(&step.outputs["json"]);
    assert!(report.get("changed_since").is_none(), "{report:#}");
    assert!(!step.log.contains("--changed-since"), "{}", step.log);
    assert_eq!(judged(&report), report["jobs"].as_array().unwrap().len());
    assert!(judged(&report) > 2);
}

/// A YAML file as JSON, so a missing key reads as null instead of panicking.
fn yaml(path: &str) -> Value {
    use saphyr::{LoadableYamlNode, Yaml};
    fn convert(node: &Yaml) -> Value {
        match node {
            Yaml::Mapping(map) => Value::Object(map.iter().map(|(k, v)| (k.as_str().map_or_else(|| format!("{k:?}"), str::to_string), convert(v))).collect()),
            Yaml::Sequence(items) => Value::Array(items.iter().map(convert).collect()),
            _ => {
                if let Some(s) = node.as_str() {
                    json!(s)
                } else if let Some(b) = node.as_bool() {
                    json!(b)
                } else if let Some(i) = node.as_integer() {
                    json!(i)
                } else if let Some(f) = node.as_floating_point() {
                    json!(f)
                } else {
                    Value::Null
                }
            }
        }
    }
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let docs = Yaml::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(docs.len(), 1, "{path}");
    convert(&docs[0])
}

const WORKFLOWS: [&str; 3] = ["examples/workflows/pr-gate.yml", "examples/workflows/bundle-audit.yml", "examples/workflows/reaudit-matrix.yml"];

/// Every step of a workflow (of every job) or of the action.
fn steps(doc: &Value) -> Vec<&Value> {
    match doc["jobs"].as_object() {
        Some(jobs) => jobs.values().flat_map(|j| j["steps"].as_array().unwrap()).collect(),
        None => doc["runs"]["steps"].as_array().unwrap().iter().collect(),
    }
}

#[test]
fn the_action_maps_every_input_to_the_script_and_every_output_from_it() {
    let action = yaml("action.yml");
    let script = std::fs::read_to_string(root().join("action/run.sh")).unwrap();
    assert_eq!(action["runs"]["using"], "composite");
    let inputs: Vec<&String> = action["inputs"].as_object().unwrap().keys().collect();
    // (serde_json's map is sorted by key)
    assert_eq!(inputs, ["args", "base", "comment", "comment-author", "fail-on", "golden", "path", "policy", "token"]);
    assert_eq!(
        (&action["inputs"]["path"]["default"], &action["inputs"]["fail-on"]["default"], &action["inputs"]["comment"]["default"]),
        (&json!("."), &json!("error"), &json!("false"))
    );

    let all = steps(&action);
    let audit = all.iter().find(|s| s["id"] == "audit").expect("a step with id audit");
    assert!(audit["run"].as_str().unwrap().contains("$GITHUB_ACTION_PATH/action/run.sh"), "{audit}");
    for input in inputs.iter().filter(|i| **i != "token") {
        let var = format!("INPUT_{}", input.to_uppercase().replace('-', "_"));
        assert_eq!(audit["env"][&var], format!("${{{{ inputs.{input} }}}}"), "{var}");
        assert!(script.contains(&format!("${{{var}:-")), "run.sh does not read {var}");
    }
    assert_eq!(audit["env"]["GH_TOKEN"], "${{ inputs.token }}");
    assert!(audit["env"]["AUDITOR_BIN"].as_str().unwrap().ends_with("/bin/auditor"));

    let outputs = action["outputs"].as_object().unwrap();
    for name in ["verdict", "exit-code", "sarif", "json", "markdown"] {
        assert_eq!(outputs[name]["value"], format!("${{{{ steps.audit.outputs.{name} }}}}"), "{name}");
        assert!(script.contains(&format!("output {name} ")), "run.sh never sets {name}");
    }

    // Built from the action's own checkout, cached under a key over its lock file and sources.
    let run_of = |id: &str| all.iter().find(|s| s["id"] == id).and_then(|s| s["run"].as_str()).unwrap_or_else(|| panic!("no run step {id}")).to_string();
    assert!(run_of("key").contains("Cargo.lock") && run_of("key").contains("$GITHUB_ACTION_PATH"));
    let cache = all.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/cache@"))).expect("a cache step");
    assert!(cache["with"]["key"].as_str().unwrap().contains("steps.key.outputs.hash"), "{cache}");
    let build = all.iter().find(|s| s["run"].as_str().is_some_and(|r| r.contains("cargo install"))).expect("a build step");
    assert!(build["run"].as_str().unwrap().contains(r#"cargo install --locked --path "$GITHUB_ACTION_PATH""#), "{build}");
    assert_eq!(build["if"], "steps.cache.outputs.cache-hit != 'true'");
}

#[test]
fn the_example_workflows_use_the_action_as_it_is_declared() {
    let action = yaml("action.yml");
    let reference = regex::Regex::new(r"steps\.([\w-]+)\.outputs\.([\w-]+)").unwrap();
    for path in WORKFLOWS {
        let workflow = yaml(path);
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let uses_action = |s: &&Value| s["uses"].as_str().is_some_and(|u| u == "./" || u.ends_with("/auditor@main"));
        let ours: Vec<&Value> = steps(&workflow).into_iter().filter(uses_action).collect();
        assert!(!ours.is_empty(), "{path} does not use the action");
        for step in &ours {
            for key in step["with"].as_object().into_iter().flat_map(|w| w.keys()) {
                assert!(action["inputs"].get(key).is_some(), "{path}: the action has no input {key}");
            }
            let id = step["id"].as_str().unwrap_or_else(|| panic!("{path}: the action's step has no id"));
            for found in reference.captures_iter(&text).filter(|c| &c[1] == id) {
                assert!(action["outputs"].get(&found[2]).is_some(), "{path}: the action has no output {}", &found[2]);
            }
        }
    }

    let gate = yaml(WORKFLOWS[0]);
    assert!(gate["on"].get("pull_request").is_some(), "{gate}");
    assert_eq!(gate["permissions"]["security-events"], "write");
    let steps_of = |doc: &Value| steps(doc).into_iter().cloned().collect::<Vec<Value>>();
    let gate_steps = steps_of(&gate);
    let checkout = gate_steps.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/checkout@"))).expect("a checkout");
    assert_eq!(checkout["with"]["fetch-depth"], 0, "--changed-since needs the base commit");
    let upload =
        gate_steps.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))).expect("an upload-sarif step");
    assert_eq!(upload["with"]["sarif_file"], "${{ steps.audit.outputs.sarif }}");

    // The bundle is audited where `gh run download` put it.
    let bundle = steps_of(&yaml(WORKFLOWS[1]));
    let download = bundle.iter().filter_map(|s| s["run"].as_str()).find(|r| r.contains("gh run download")).expect("gh run download");
    let audited = bundle.iter().find(|s| s["id"] == "audit").unwrap()["with"]["path"].as_str().unwrap().replace("${{ runner.temp }}", "$RUNNER_TEMP");
    assert!(download.contains(&format!(r#"--dir "{audited}""#)), "{download} / {audited}");

    let matrix = yaml(WORKFLOWS[2]);
    let jobs = &matrix["jobs"];
    assert!(jobs["list"]["steps"][0]["run"].as_str().unwrap().contains("gh run list"));
    assert_eq!(jobs["list"]["outputs"]["runs"], "${{ steps.list.outputs.runs }}");
    assert_eq!(jobs["audit"]["strategy"]["matrix"]["run"], "${{ fromJSON(needs.list.outputs.runs) }}");
    let upload = jobs["audit"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/upload-artifact@")))
        .expect("each run's report kept");
    assert_eq!(upload["with"]["path"], "${{ steps.audit.outputs.json }}");
    assert_eq!(upload["with"]["name"], "auditor-report-${{ matrix.run }}");
    assert_eq!(jobs["summary"]["steps"][0]["with"]["pattern"], "auditor-report-*");
}

#[test]
fn the_matrix_summary_merges_the_reports_into_one_table() {
    let matrix = yaml(WORKFLOWS[2]);
    let script = matrix["jobs"]["summary"]["steps"][1]["run"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Reports as the artifacts download: one folder per artifact, the report in it.
    for (run, bundle) in [("11", "samples/bundles/vllm-agentx-pass"), ("12", FAIL_INHERITED)] {
        let out = audit(&[bundle, "--format", "json"]);
        write_tree(dir.path(), &[(&format!("reports/auditor-report-{run}/auditor.json"), &stdout(&out))]);
    }
    let summary = dir.path().join("summary.md");
    // Run as GitHub runs a `run:` block.
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir.path())
        .env("RUNS", "[11,12,13]")
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let table = std::fs::read_to_string(&summary).unwrap();
    let url = |run: &str| format!("[{run}](https://github.com/{REPOSITORY}/actions/runs/{run})");
    assert!(table.starts_with("## Re-audit of 3 run(s)"), "{table}");
    assert!(table.contains(&format!("| {} | pass |  | 0 |", url("11"))), "{table}");
    assert!(table.contains(&format!("| {} | fail | forbidden-env | 2 |", url("12"))), "{table}");
    assert!(table.contains(&format!("| {} | no report | | |", url("13"))), "{table}");
    assert!(table.trim_end().ends_with("1 fail, 1 pass"), "{table}");
}

#[test]
fn the_scripts_are_shellcheck_clean_and_no_input_is_pasted_into_one() {
    let mut scripts = vec![("action/run.sh".to_string(), std::fs::read_to_string(root().join("action/run.sh")).unwrap())];
    for path in std::iter::once("action.yml").chain(WORKFLOWS) {
        for (i, step) in steps(&yaml(path)).iter().enumerate() {
            if let Some(run) = step["run"].as_str() {
                // `${{ … }}` in a run block is pasted into the script before bash reads it:
                // an input (a branch name, a path) would run as shell code. They go through env.
                assert!(!run.contains("${{"), "{path} step {i}: {run}");
                scripts.push((format!("{path} step {i}"), run.to_string()));
            }
        }
    }
    for (name, text) in scripts {
        let mut child = Command::new("shellcheck")
            .args(["--shell=bash", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("shellcheck (tests/services/start.sh installs it)");
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{name}:\n{}", stdout(&out));
    }
}
