//! `forbidden-env` on bundles built for one evasion shape each: the engine's
//! parsing rules decide, whatever the spelling or the source.

use crate::common::*;

const RF: &str = DSV4_RF;

fn audit_tree(files: &[(&str, &str)]) -> (i32, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), files);
    let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json"]);
    (code(&out), json(&out))
}

fn server_log(lines: &[&str]) -> String {
    let mut text = String::from("=== SGLANG_* env vars at launch ===\n");
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("===================================\n[2026-09-02 14:40:07] server_args=ServerArgs(tp_size=8)\n");
    text
}

/// The forbidden-env check of a report.
fn check(report: &serde_json::Value) -> &serde_json::Value {
    report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap()
}

fn status(report: &serde_json::Value) -> &str {
    check(report)["status"].as_str().unwrap()
}

fn messages_of(report: &serde_json::Value) -> Vec<&str> {
    check(report)["findings"].as_array().unwrap().iter().map(|f| f["message"].as_str().unwrap()).collect()
}

fn rules(report: &serde_json::Value) -> Vec<String> {
    check(report)["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect()
}

#[test]
fn every_spelling_sglang_accepts_as_true_fails() {
    for value in ["1", "true", "TRUE", "Yes", "y"] {
        let log = server_log(&[&format!("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE={value}")]);
        let (code, report) = audit_tree(&[(&format!("server_logs_{RF}/server.log"), &log)]);
        assert_eq!(code, 1, "{value}");
        assert_eq!(rules(&report), ["forbidden-env/enabled"], "{value}");
    }
}

#[test]
fn false_spellings_pass_and_invalid_values_warn_that_the_default_applies() {
    for value in ["0", "false", "No", "n"] {
        let log = server_log(&[&format!("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE={value}")]);
        let (_, report) = audit_tree(&[(&format!("server_logs_{RF}/server.log"), &log)]);
        assert_eq!((status(&report), rules(&report).len()), ("pass", 0), "{value}");
    }
    for value in ["on", "enabled", "2", " 1", ""] {
        let log = server_log(&[&format!("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE={value}")]);
        let (_, report) = audit_tree(&[(&format!("server_logs_{RF}/server.log"), &log)]);
        assert_eq!(status(&report), "pass", "{value:?} does not enable the flag");
        let finding = &check(&report)["findings"][0];
        assert_eq!(finding["rule"], "forbidden-env/invalid-value", "{value:?}");
        assert_eq!(finding["severity"], "warning");
        let message = finding["message"].as_str().unwrap();
        assert!(message.contains(&format!("{value:?}")) && message.contains("keeps the default (false)"), "{message}");
    }
}

#[test]
fn legacy_sgl_prefix_overrides_sglang_spelling() {
    let cmd = "SGL_NVFP4_CKPT_FP8_NEXTN_MOE=1 SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0 python3 -m sglang.launch_server --tp 8 \n";
    let (code, report) = audit_tree(&[(&format!("agentic_{RF}/results/sglang_command.txt"), cmd)]);
    assert_eq!(code, 1);
    let message = check(&report)["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("legacy spelling SGL_NVFP4_CKPT_FP8_NEXTN_MOE"), "{message}");
    assert!(message.contains("a prefix of the launch command"), "{message}");
}

#[test]
fn exports_in_a_sourced_helper_and_unset_are_resolved_in_order() {
    let helper = "#!/bin/bash\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE='1'\n";
    let (code, _) = audit_tree(&[(&format!("agentic_{RF}/results/env.sh"), helper)]);
    assert_eq!(code, 1, "an export in a helper script fails");
    let undone = "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nunset SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE\n";
    let (_, report) = audit_tree(&[(&format!("agentic_{RF}/results/env.sh"), undone)]);
    assert_eq!(status(&report), "pass", "unset removes it");
    let overridden = "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0\n";
    let (_, report) = audit_tree(&[(&format!("agentic_{RF}/results/env.sh"), overridden)]);
    assert_eq!(status(&report), "pass", "a later assignment wins");
    assert_eq!(rules(&report), ["forbidden-env/overridden"]);
}

#[test]
fn set_x_trace_and_unknown_expansions() {
    let trace = "+ export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=yes\n";
    let (code, _) = audit_tree(&[(&format!("server_logs_{RF}/ci_job.log"), trace)]);
    assert_eq!(code, 1, "a set -x trace line counts");
    let expansion = "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=$FLAG\n";
    let (_, report) = audit_tree(&[(&format!("server_logs_{RF}/launch.sh"), expansion)]);
    assert_eq!(status(&report), "error", "a value the input does not show is undetermined, never a pass");
    assert_eq!(rules(&report), ["forbidden-env/undetermined"]);
}

#[test]
fn a_bundle_without_environment_evidence_is_not_applicable() {
    let (_, report) = audit_tree(&[(&format!("bmk_{RF}/agg.json"), "{\"tp\": 8}")]);
    assert_eq!(status(&report), "na");
}

#[test]
fn a_policy_file_can_forbid_more_and_rejects_unknown_checks() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[
            (
                "policy.toml",
                "name = \"strict\"\nextends = \"inferencex\"\n[checks.forbidden-env]\ntitle = \"t\"\n[[checks.forbidden-env.forbid]]\nname = \"PYTHONPATH\"\nwhen = \"set\"\nreason = \"import shadowing\"\n",
            ),
            ("bad.toml", "name = \"bad\"\n[checks.no-such-check]\ntitle = \"t\"\n"),
            (&format!("b/agentic_{RF}/results/env.sh"), "export PYTHONPATH=/tmp/shadow\n"),
        ],
    );
    let policy = tmp.path().join("policy.toml");
    let bundle = tmp.path().join("b");
    let out = audit(&[bundle.to_str().unwrap(), "--policy", policy.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("forbidden-env/set"));
    let out = audit(&[bundle.to_str().unwrap(), "--policy", tmp.path().join("bad.toml").to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no-such-check"));
}

#[test]
fn eval_only_content_decides_an_unknown_job() {
    let (_, report) = audit_tree(&[(&format!("agentic_{RF}/results/env.sh"), "export EVAL_ONLY=true\n")]);
    let job = report["jobs"].as_array().unwrap().iter().find(|j| j["id"] == RF).unwrap();
    assert_eq!(job["kind"], "eval-only");
    assert!(job["kind_reason"].as_str().unwrap().contains("EVAL_ONLY=true"));
}

/// One variable, one report: a load-time cast of the draft that
/// forbidden-env forbids fails there and draft-precision only notes it; a
/// policy whose forbidden-env does not forbid that variable, or is off,
/// leaves the failure to draft-precision.
#[test]
fn a_draft_cast_fails_in_the_check_that_forbids_it_and_otherwise_in_draft_precision() {
    let tmp = tempfile::tempdir().unwrap();
    let forbid_other = "name = \"other\"\nextends = \"inferencex\"\n[checks.forbidden-env]\ntitle = \"t\"\n[[checks.forbidden-env.forbid]]\nname = \"PYTHONPATH\"\nwhen = \"set\"\nreason = \"r\"\n";
    let off = "name = \"off\"\nextends = \"inferencex\"\n[checks.forbidden-env]\ntitle = \"t\"\nenabled = false\n";
    let log = server_log(&["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1"]).replace("tp_size=8", "tp_size=8, speculative_algorithm='EAGLE'");
    write_tree(tmp.path(), &[("other.toml", forbid_other), ("off.toml", off), (&format!("b/server_logs_{RF}/server.log"), &log)]);
    let bundle = tmp.path().join("b");
    for (policy, forbidden_env, cast) in [(None, Some("fail"), "info"), (Some("other.toml"), Some("pass"), "error"), (Some("off.toml"), None, "error")] {
        let mut args = vec![bundle.to_str().unwrap().to_string(), "--format".into(), "json".into()];
        if let Some(p) = policy {
            args.extend(["--policy".to_string(), tmp.path().join(p).to_str().unwrap().to_string()]);
        }
        let out = audit(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code(&out), 1, "{policy:?}: {}", stdout(&out));
        let report = json(&out);
        let by_id = |id: &str| report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).cloned();
        assert_eq!(by_id("forbidden-env").map(|c| c["status"].as_str().unwrap().to_string()).as_deref(), forbidden_env, "{policy:?}");
        let draft = by_id("draft-precision").unwrap();
        let found: Vec<(&str, &str)> =
            draft["findings"].as_array().unwrap().iter().map(|f| (f["rule"].as_str().unwrap(), f["severity"].as_str().unwrap())).collect();
        assert_eq!(found, [("draft-precision/load-time-cast", cast)], "{policy:?}: {draft:#}");
        assert_eq!(draft["status"], if cast == "error" { "fail" } else { "pass" }, "{policy:?}");
    }
}

#[test]
fn a_forbidden_shell_variable_never_exported_warns_on_its_line_and_only_for_its_own_names() {
    let path = format!("agentic_{RF}/results/env.sh");
    // (the script's assignment line 3, what a reviewer is told: rule and line of each finding)
    for name in ["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", "SGL_NVFP4_CKPT_FP8_NEXTN_MOE"] {
        // Another engine boolean set the same way is not this check's business.
        let body = format!("#!/bin/bash\nSGLANG_NVFP4_CKPT_FP8_GEMM_IN_ATTN=1\n{name}=1\npython3 -m sglang.launch_server --tp 8\n");
        let (code, report) = audit_tree(&[(&path, &body)]);
        // No rendered environment in the bundle: undetermined (exit 3), never failed.
        assert_eq!(code, 3, "{name}: a shell variable does not reach the server: {report:#}");
        let places: Vec<(String, String, u64)> = finding_places(check(&report))
            .into_iter()
            .filter(|(rule, ..)| rule != "forbidden-env/undetermined")
            .map(|(rule, severity, _, line)| (rule, severity, line))
            .collect();
        assert_eq!(places, [("forbidden-env/unexported".to_string(), "warning".to_string(), 3)], "{name}");
        let unexported = check(&report)["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "forbidden-env/unexported").unwrap();
        let message = unexported["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("{name}=1 is a shell variable that this script never exports")), "{message}");
    }
    // A value the engine reads as false would not enable it anywhere: nothing to say.
    let (code, report) = audit_tree(&[(&path, "#!/bin/bash\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0\npython3 -m sglang.launch_server --tp 8\n")]);
    assert_eq!((code, rules(&report)), (3, vec!["forbidden-env/undetermined".to_string()]), "{report:#}");
    // Exported later in the same script: the export is the violation, and no warning is left.
    let body = "#!/bin/bash\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE\npython3 -m sglang.launch_server --tp 8\n";
    let (code, report) = audit_tree(&[(&path, body)]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(rules(&report).into_iter().filter(|r| r != "forbidden-env/undetermined").collect::<Vec<_>>(), ["forbidden-env/enabled"]);
}

#[test]
fn a_dumped_value_is_called_inherited_only_when_nothing_in_the_bundle_sets_it() {
    let log = server_log(&["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1"]);
    let inherited = "Source: the server environment dumped at launch (inherited: no command or export in the bundle sets it).";
    // Another variable set in a script does not make this one explicit.
    let script = "#!/bin/bash\nexport SGLANG_NVFP4_CKPT_FP8_GEMM_IN_ATTN=1\n";
    let (code, report) = audit_tree(&[(&format!("server_logs_{RF}/results/server.log"), &log), (&format!("agentic_{RF}/results/env.sh"), script)]);
    assert_eq!(code, 1);
    let messages = messages_of(&report);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains(inherited), "{messages:?}");
    // Exported by the bundle's own script: set explicitly, not inherited.
    let script = "#!/bin/bash\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n";
    let (code, report) = audit_tree(&[(&format!("server_logs_{RF}/results/server.log"), &log), (&format!("agentic_{RF}/results/env.sh"), script)]);
    assert_eq!(code, 1);
    let messages = messages_of(&report);
    assert!(!messages.is_empty() && messages.iter().all(|m| !m.contains("inherited")), "{messages:?}");
}
