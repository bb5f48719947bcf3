//! Whole-program behaviour of `auditor scan` and `auditor rules test|list|explain`
//! with the signature packs: rule ids, lines, exit codes, skipped binaries,
//! transparent `.gz`, pack overrides and a rule whose example breaks.

use crate::common::*;
use std::io::Write;
use std::path::Path;

const SCRIPT: &str = "#!/usr/bin/env bash
# git apply foo.patch   (a comment: not a finding)
set -euo pipefail
git apply /tmp/fix.patch
export PYTHONPATH=/workspace/patched:$PYTHONPATH
python3 -m sglang.launch_server --model-path /data/models/x --tp 8
";

fn gzip(path: &Path, text: &str) {
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(path).unwrap(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
}

/// A tree with a patching script, a gzipped log with an architecture
/// override, and a binary file.
fn dirty_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("recipes/launch.sh", SCRIPT)]);
    let log = "[2026-07-01 15:18:36] INFO starting\n\
               vllm serve /data/models/dsv4 --hf-overrides '{\"text_config\": {\"index_topk_freq\": 4}}' --tp 8\n";
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    gzip(&dir.path().join("logs/server.log.gz"), log);
    std::fs::write(dir.path().join("logs/core.dump"), b"\x7fELF\x02\x01\0\0git apply /tmp/x.patch\n").unwrap();
    dir
}

#[test]
fn scan_reports_rules_lines_gz_and_binary_and_fails() {
    let dir = dirty_tree();
    let root = dir.path().to_str().unwrap();
    let out = auditor(&["scan", root, "--format", "json"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let report = json(&out);
    assert_eq!(report["verdict"], "fail");
    let mut found: Vec<(String, String, u64)> = Vec::new();
    for check in report["checks"].as_array().unwrap() {
        for f in check["findings"].as_array().unwrap() {
            let rule = f["rule"].as_str().unwrap();
            assert!(rule.starts_with(&format!("{}/", check["id"].as_str().unwrap())), "{rule} grouped under its check");
            assert_eq!(f["fingerprint"].as_str().unwrap().len(), 32);
            let e = &f["evidence"][0];
            found.push((rule.to_string(), e["file"].as_str().unwrap().to_string(), e["line"].as_u64().unwrap()));
        }
    }
    found.sort();
    let expected = [
        ("arch-override/hf-overrides", "logs/server.log.gz", 2),
        ("engine-patch/git-apply", "recipes/launch.sh", 4),
        ("engine-patch/pythonpath", "recipes/launch.sh", 5),
    ];
    let expected: Vec<(String, String, u64)> = expected.iter().map(|(r, f, l)| (r.to_string(), format!("{root}/{f}"), *l)).collect();
    assert_eq!(found, expected);
    let files = report["files"].as_array().unwrap();
    let core = files.iter().find(|f| f["path"] == "logs/core.dump").unwrap();
    assert_eq!(core["status"], "skipped");
    assert!(core["reason"].as_str().unwrap().contains("binary"), "{core}");
    let text = stdout(&auditor(&["scan", root]));
    assert!(text.contains(&format!("--> {root}/recipes/launch.sh:4")), "{text}");
    assert!(text.contains("git apply /tmp/fix.patch"), "{text}");
}

#[test]
fn fingerprints_do_not_depend_on_how_the_input_is_spelled() {
    let dir = dirty_tree();
    let fingerprints = |path: &str| {
        let report = json(&auditor(&["scan", path, "--format", "json"]));
        let mut all: Vec<String> = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["findings"].as_array().unwrap().iter().map(|f| f["fingerprint"].as_str().unwrap().to_string()))
            .collect();
        all.sort();
        all
    };
    let plain = dir.path().to_str().unwrap().to_string();
    assert_eq!(fingerprints(&plain), fingerprints(&format!("{plain}/")));
}

#[test]
fn a_clean_tree_passes_and_several_inputs_point_at_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[
            ("a/run.sh", "# git apply foo.patch\necho \"sed -i s/a/b/ /usr/lib/python3/dist-packages/x.py\"\npip install aiperf\n"),
            ("b/server.log", "  --hf-overrides HF_OVERRIDES  Extra arguments for the HuggingFace config.\n"),
        ],
    );
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let out = auditor(&["scan", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).contains("verdict: PASS"));

    std::fs::write(b.join("run.sh"), "x; git apply b.patch\n").unwrap();
    let out = auditor(&["scan", a.to_str().unwrap(), b.to_str().unwrap(), "--format", "github"]);
    assert_eq!(code(&out), 1);
    // named from the deepest directory holding both inputs
    assert!(stdout(&out).contains("file=b/run.sh,line=1"), "{}", stdout(&out));
}

#[test]
fn contents_are_hashed_only_when_asked() {
    let dir = dirty_tree();
    let root = dir.path().to_str().unwrap();
    let plain = json(&auditor(&["scan", root, "--format", "json"]));
    assert!(plain["inputs"][0].get("sha256").is_none(), "{}", plain["inputs"]);
    assert!(plain["files"].as_array().unwrap().iter().all(|f| f.get("sha256").is_none()));
    let hashed = json(&auditor(&["scan", root, "--hash", "--format", "json"]));
    assert_eq!(hashed["inputs"][0]["sha256"].as_str().unwrap().len(), 64);
    let script = hashed["files"].as_array().unwrap().iter().find(|f| f["path"] == "recipes/launch.sh").unwrap();
    assert_eq!(script["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(plain["checks"], hashed["checks"], "hashing does not change what is found");
}

#[test]
fn sarif_declares_every_pack_rule_it_reports() {
    let dir = dirty_tree();
    let sarif = json(&auditor(&["scan", dir.path().to_str().unwrap(), "--format", "sarif"]));
    let run = &sarif["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for r in results {
        assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize], r["ruleId"].as_str().unwrap());
    }
}

#[test]
fn unreadable_input_is_a_usage_error_but_a_missing_one_among_others_is_not_examined() {
    let out = auditor(&["scan", "/nonexistent/auditor-scan-input"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no input could be read"), "{}", stderr(&out));
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("ok.sh", "echo hi\n")]);
    let out = auditor(&["scan", dir.path().to_str().unwrap(), "/nonexistent/auditor-scan-input", "--format", "json"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    assert!(json(&out)["not_examined"][0].as_str().unwrap().contains("/nonexistent/auditor-scan-input"));
}

#[test]
fn rules_test_passes_on_the_embedded_packs() {
    let out = auditor(&["rules", "test"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(stdout(&out).contains(" passed, 0 failed"), "{}", stdout(&out));
}

const PACK: &str = r##"
[pack]
check = "engine-patch"
title = "No engine patches"

[[rule]]
id = "engine-patch/git-apply"
title = "git apply"
severity = "error"
kinds = ["script"]
keywords = ["git apply"]
regex = '{{cmd}}git\s+apply\b'
remediation = "Remove it."
examples.match = ["git apply fix.patch"]
examples.no_match = ["# git apply fix.patch", "BROKEN"]
"##;

#[test]
fn rules_test_fails_on_a_broken_example_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let pack = PACK.replace("\"BROKEN\"", "\"cd x && git apply fix.patch\"");
    write_tree(dir.path(), &[("mine.toml", &pack)]);
    let out = auditor(&["rules", "test", "--signatures", dir.path().to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("FAIL engine-patch/git-apply: examples.no_match matched: \"cd x && git apply fix.patch\""), "{text}");
    assert!(text.contains("2 passed, 1 failed"), "{text}");

    write_tree(dir.path(), &[("mine.toml", &PACK.replace("\"BROKEN\"", "\"echo git apply\""))]);
    let out = auditor(&["rules", "test", "--signatures", dir.path().to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn signatures_dir_replaces_the_packs_and_rejects_what_is_not_a_pack() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("mine.toml", &PACK.replace("\"BROKEN\"", "\"echo git apply\""))]);
    let tree = tempfile::tempdir().unwrap();
    write_tree(tree.path(), &[("run.sh", "git apply a.patch\nexport PYTHONPATH=/x\n")]);
    let out = auditor(&["scan", tree.path().to_str().unwrap(), "--signatures", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1);
    let report = json(&out);
    // The policy's checks (forbidden-env, the simulation knobs) stay; the packs given replace the embedded ones.
    let checks: Vec<&serde_json::Value> =
        report["checks"].as_array().unwrap().iter().filter(|c| c["id"] != "forbidden-env" && c["id"] != "sim-acc-eval").collect();
    assert_eq!(checks.len(), 1, "only the packs given: {checks:?}");
    assert_eq!(checks[0]["id"], "engine-patch");
    assert_eq!(checks[0]["findings"].as_array().unwrap().len(), 1, "no PYTHONPATH rule in this pack");

    let out = auditor(&["rules", "test", "--signatures", "signatures"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains(".toml: not a rule pack"), "{}", stderr(&out));
}

#[test]
fn rules_list_and_explain_cover_pack_rules() {
    let listed = stdout(&auditor(&["rules", "list"]));
    assert!(listed.contains("engine-patch/git-apply") && listed.contains("arch-override/hf-overrides"), "{listed}");
    assert!(listed.contains("forbidden-env/enabled"), "{listed}");
    let out = auditor(&["rules", "explain", "arch-override/json-model-override-args"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    for part in ["severity:  error", "To fix:", "Matches, for example:", "Does not match, for example:", "json_model_override_args='{}'"] {
        assert!(text.contains(part), "{part} in {text}");
    }
    assert_eq!(code(&auditor(&["rules", "explain", "engine-patch/no-such-rule"])), 2);
}

/// A launch script's console capture under `set -x`, shaped like an
/// InferenceX single-node run: the GPU listing, `printenv` before the
/// server starts, then the launch line. `{value}` is the forbidden
/// variable's value in the listing.
fn printenv_log(value: &str) -> String {
    format!(
        "+ nvidia-smi -L\n\
         GPU 0: NVIDIA B200 (UUID: GPU-5d1c0c2e-8f7a-4b7e-9d0a-1c2b3d4e5f60)\n\
         + printenv\n\
         HOSTNAME=b200-dgxc-07\n\
         HOME=/root\n\
         SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE={value}\n\
         CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n\
         PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin\n\
         + python3 -m sglang.launch_server --model-path /data/models/DeepSeek-V4-Pro --tp 8 --port 8888\n"
    )
}

/// The same run, where the script exports the variable (a `set -x` trace line).
fn export_log(value: &str) -> String {
    format!(
        "+ export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE={value}\n\
         + SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE={value}\n\
         + python3 -m sglang.launch_server --model-path /data/models/DeepSeek-V4-Pro --tp 8 --port 8888\n\
         [2026-09-02 14:40:13 TP0 EP0] Init torch distributed begin.\n"
    )
}

/// The forbidden-env findings of a scan report: (rule, severity, file, line).
fn env_findings(report: &serde_json::Value) -> Vec<(String, String, String, u64)> {
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").expect("a forbidden-env check");
    finding_places(check)
}

#[test]
fn scan_judges_a_forbidden_variable_by_the_engines_boolean_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    // (value, exit, rule and severity of the finding, if any)
    let cases = [
        ("1", 1, Some(("forbidden-env/enabled", "error"))),
        ("True", 1, Some(("forbidden-env/enabled", "error"))),
        ("0", 0, None),
        ("False", 0, None),
        ("maybe", 0, Some(("forbidden-env/invalid-value", "warning"))),
    ];
    // In the xtrace shape the plain re-assignment of the exported name (line 2) is the one in effect.
    for (shape, log, line) in [("printenv", printenv_log as fn(&str) -> String, 6), ("export", export_log, 2)] {
        for (value, exit, finding) in cases {
            write_tree(dir.path(), &[("logs/server.log", &log(value))]);
            let out = auditor(&["scan", root, "--format", "json"]);
            assert_eq!(code(&out), exit, "{shape} {value}: {}", stdout(&out));
            let report = json(&out);
            let expected: Vec<(String, String, String, u64)> =
                finding.into_iter().map(|(rule, severity)| (rule.into(), severity.into(), format!("{root}/logs/server.log"), line)).collect();
            assert_eq!(env_findings(&report), expected, "{shape} {value}");
            let status = &report["checks"][0]["status"];
            assert_eq!(status, if exit == 1 { "fail" } else { "pass" }, "{shape} {value}");
        }
    }
}

#[test]
fn a_forbidden_variable_fails_the_scan_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("server.log", &printenv_log("1")), ("launch.sh", "#!/usr/bin/env bash\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n")]);
    let root = dir.path().to_str().unwrap();
    for format in ["text", "json", "markdown", "sarif", "junit", "github", "html"] {
        let out = auditor(&["scan", root, "--format", format]);
        assert_eq!(code(&out), 1, "{format}: {}", stdout(&out));
        let text = stdout(&out);
        assert!(text.contains("forbidden-env/enabled"), "{format}: {text}");
        assert!(text.contains("launch.sh") && text.contains("server.log"), "{format}: each file is judged: {text}");
    }
}

#[test]
fn each_file_is_judged_on_its_own_so_a_later_file_does_not_hide_an_earlier_one() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("a/server.log", &printenv_log("1")), ("b/server.log", &printenv_log("0"))]);
    let out = auditor(&["scan", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let report = json(&out);
    let found = env_findings(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].2.ends_with("a/server.log"), "{found:?}");
    let summary = |report: &serde_json::Value| check(report, "forbidden-env")["summary"].as_str().unwrap().to_string();
    assert_eq!(summary(&report), "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE in effect in 1 of 2 file(s) with environment evidence");
    // A file without environment evidence is not counted; each listing is one source.
    write_tree(dir.path(), &[("a/server.log", &printenv_log("0")), ("c/README.md", "# notes\n")]);
    let out = auditor(&["scan", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(
        summary(&json(&out)),
        "none of SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE, SGLANG_GLM_NEXTN_MOE_PTPC takes effect in 2 file(s) with environment evidence (2 environment source(s) examined)"
    );
}

#[test]
fn simulated_acceptance_knobs_are_information_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    // The InferenceX launch dump of SGLANG_* variables, as a throughput run writes it.
    let log = "=== SGLANG_* env vars at launch ===\n\
               SGLANG_DEFAULT_THINKING=1\n\
               SGLANG_SIMULATE_ACC_LEN=2.49\n\
               SGLANG_SIMULATE_ACC_METHOD=match-expected\n\
               SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n\
               ===================================\n\
               [2026-09-02 14:40:13 TP0 EP0] Init torch distributed begin.\n";
    write_tree(dir.path(), &[("results/server.log", log)]);
    let root = dir.path().to_str().unwrap();
    let out = auditor(&["scan", root, "--format", "json"]);
    assert_eq!(code(&out), 0, "information does not fail: {}", stdout(&out));
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sim-acc-eval").unwrap();
    assert_eq!(check["status"], "pass");
    let knobs: Vec<(&str, &str, u64)> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["severity"].as_str().unwrap(), f["evidence"][0]["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(knobs, [("sim-acc-eval/knob", "info", 3), ("sim-acc-eval/knob", "info", 4), ("sim-acc-eval/knob", "info", 5)]);
    for format in ["text", "json", "markdown", "sarif", "junit", "github", "html"] {
        // SARIF holds info only when asked: code scanning would show each as an alert.
        let out = auditor(&["scan", root, "--format", format, "--include-info"]);
        assert_eq!(code(&out), 0, "{format}");
        assert!(stdout(&out).contains("SGLANG_SIMULATE_ACC_LEN=2.49"), "{format}: {}", stdout(&out));
    }
    let sarif = json(&auditor(&["scan", root, "--format", "sarif"]));
    assert_eq!(sarif["runs"][0]["results"].as_array().map(Vec::len), Some(0), "{sarif:#}");
    // Without a knob the check has nothing to show.
    write_tree(dir.path(), &[("results/server.log", &printenv_log("0"))]);
    let report = json(&auditor(&["scan", root, "--format", "json"]));
    assert_eq!(report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sim-acc-eval").unwrap()["status"], "na");
}

/// `scan` names the first five simulated-acceptance knobs in the summary
/// and counts the rest: "1 more" after six, nothing after exactly five.
#[test]
fn the_knob_summary_names_five_and_counts_the_rest() {
    let summary = |n: usize| {
        let tmp = tempfile::tempdir().unwrap();
        for i in 1..=n {
            std::fs::write(tmp.path().join(format!("run{i}.sh")), format!("export SGLANG_SIMULATE_ACC_LEN=2.{i}\n")).unwrap();
        }
        let report = json(&auditor(&["scan", tmp.path().to_str().unwrap(), "--format", "json"]));
        let c = check(&report, "sim-acc-eval");
        (c["findings"].as_array().unwrap().len(), c["summary"].as_str().unwrap().to_string())
    };
    let (found, six) = summary(6);
    assert_eq!(found, 6);
    assert!(six.ends_with("run5.sh:1; 1 more") && six.contains("(6 knob(s) in 6 file(s);"), "{six}");
    let (found, five) = summary(5);
    assert_eq!(found, 5);
    assert!(five.ends_with("run5.sh:1") && !five.contains("more"), "{five}");
}
