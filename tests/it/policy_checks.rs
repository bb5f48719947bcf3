//! `arch-override`, `upstream-image` and `eval-threshold` on their sample
//! bundles: check id, status, rule and evidence.

use crate::common::*;
use serde_json::Value;

fn failing(bundle: &str, id: &str) -> Value {
    let out = audit(&[bundle, "--format", "json"]);
    assert_eq!(code(&out), 1, "{bundle}: {}", stdout(&out));
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
    assert_eq!(check["status"], "fail", "{bundle}");
    for other in report["checks"].as_array().unwrap().iter().filter(|c| c["id"] != id) {
        assert_ne!(other["status"], "fail", "{bundle}: only {id} fails, not {}", other["id"]);
    }
    check["findings"].as_array().unwrap().iter().find(|f| f["severity"] == "error").unwrap().clone()
}

/// Check `id` of a report.
fn check_in(report: &Value, id: &str) -> Value {
    report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone()
}

/// Check `id` of auditing a tree of `files` (path, content).
fn check_of_tree(files: &[(&str, &str)], id: &str) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), files);
    check_in(&json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"])), id)
}

/// A check's status and its findings' rules, in report order.
fn status_and_rules(check: &Value) -> (String, Vec<String>) {
    let rules = check["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect();
    (check["status"].as_str().unwrap().to_string(), rules)
}

#[test]
fn arch_override_names_the_flag_value_and_effect() {
    let f = failing("samples/bundles/arch-override-fail", "arch-override");
    assert_eq!(f["rule"], "arch-override/config-override");
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("--json-model-override-args") && message.contains("index_topk_freq") && message.contains("skipping it on most layers"),
        "{message}"
    );
    assert_eq!(f["evidence"][0]["text"], r#"json_model_override_args={"index_topk_freq": 4, "use_index_cache": true}"#);
    assert!(f["evidence"][0]["line"].as_u64().is_some());
}

/// An empty override (`''`, `None`, `{}`: what SGLang logs when the flag is
/// not given) changes nothing; one key does.
#[test]
fn an_empty_config_override_is_no_override() {
    let status = |value: &str| {
        let log = format!("[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/x', tp_size=8, json_model_override_args={value})\n");
        let (status, rules) = status_and_rules(&check_of_tree(&[("logs/server.log", &log)], "arch-override"));
        (status, rules.len())
    };
    for empty in ["''", "' '", "None", "'null'", "'{}'"] {
        assert_eq!(status(empty), ("pass".to_string(), 0), "{empty}");
    }
    assert_eq!(status(r#"'{"num_hidden_layers": 2}'"#), ("fail".to_string(), 1));
}

#[test]
fn upstream_image_fails_a_vendor_rebuild_on_an_established_sku() {
    let f = failing("samples/bundles/upstream-image-fail", "upstream-image");
    assert_eq!(f["rule"], "upstream-image/not-upstream");
    assert!(f["message"].as_str().unwrap().contains("ghcr.io/acme-ai/sglang"));
    assert!(f["evidence"][0]["file"].as_str().unwrap().starts_with("bmk_agentic_"), "{f}");
}

#[test]
fn eval_threshold_shows_score_stderr_and_threshold() {
    let f = failing("samples/bundles/eval-threshold-fail", "eval-threshold");
    assert_eq!(f["rule"], "eval-threshold/below");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("0.8741") && message.contains("± 0.006") && message.contains("0.91") && message.contains("models.dsv4.gsm8k"), "{message}");
    assert!(f["evidence"][0]["line"].as_u64().unwrap() > 1);
}

#[test]
fn a_thresholds_file_replaces_the_embedded_one() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.yaml");
    std::fs::write(&path, "default:\n  gsm8k: 0.80\n").unwrap();
    let out = audit(&["samples/bundles/eval-threshold-fail", "--thresholds", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    // A score exactly at its threshold meets it (0.8741 written in both places); one ten-thousandth above it does not.
    for (threshold, code_want, rule) in [("0.8741", 0, "eval-threshold/met"), ("0.8742", 1, "eval-threshold/below")] {
        std::fs::write(&path, format!("default:\n  gsm8k: {threshold}\n")).unwrap();
        let out = audit(&["samples/bundles/eval-threshold-fail", "--thresholds", path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code(&out), code_want, "{threshold}: {}", stdout(&out));
        let report = json(&out);
        let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "eval-threshold").unwrap();
        assert_eq!(check["findings"][0]["rule"], rule, "{threshold}");
    }
}

#[test]
fn draft_precision_fails_an_explicit_draft_quantization() {
    let f = failing("samples/bundles/draft-precision-fail", "draft-precision");
    assert_eq!(f["rule"], "draft-precision/quantized-draft");
    assert!(f["message"].as_str().unwrap().contains("quark_mxfp4") && f["message"].as_str().unwrap().contains("set explicitly"));
    assert_eq!(f["evidence"][0]["text"], "speculative_draft_model_quantization=quark_mxfp4");
}

#[test]
fn draft_precision_inherited_quantization_passes_and_substituted_drafts_fail() {
    let rf = DSV4_RF;
    let log = |draft: &str, quant: &str| {
        format!(
            "[2026-10-14 03:12:55] server_args={{'model_path': '/data/models/DeepSeek-V4-Pro', 'quantization': 'modelopt_fp4', 'speculative_algorithm': 'EAGLE', 'speculative_num_steps': 3, 'speculative_draft_model_path': {draft}, 'speculative_draft_model_quantization': {quant}}}\n"
        )
    };
    let status = |log: String| {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[(&format!("server_logs_{rf}/server.log"), &log)]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "draft-precision").unwrap().clone();
        (check["status"].as_str().unwrap().to_string(), check["findings"].as_array().unwrap().first().map(|f| f["rule"].as_str().unwrap().to_string()))
    };
    // 0.5.2x logs the target's quantization as the draft's inherited default.
    assert_eq!(status(log("'/data/models/DeepSeek-V4-Pro'", "'modelopt_fp4'")).0, "pass");
    assert_eq!(status(log("None", "'fp8'")), ("fail".to_string(), Some("draft-precision/quantized-draft".to_string())));
    assert_eq!(status(log("'/data/models/DeepSeek-V4-Pro-MTP-FP8'", "None")), ("fail".to_string(), Some("draft-precision/substituted-draft".to_string())));
    // The agreed DSpark heads of dsv4 are a standalone draft that is allowed.
    assert_eq!(status(log("'/data/models/DeepSeek-V4-Pro-0813'", "None")).0, "pass");
}

#[test]
fn checkpoint_headers_show_shipped_against_effective_precision() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("config.json"), r#"{"num_hidden_layers": 61, "quantization_config": {"quant_method": "modelopt"}}"#).unwrap();
    let shard = |name: &str, tensors: &[(&str, &str)]| {
        let mut header = serde_json::Map::new();
        for (t, dtype) in tensors {
            header.insert(t.to_string(), serde_json::json!({"dtype": dtype, "shape": [2], "data_offsets": [0, 4]}));
        }
        let json = serde_json::to_vec(&header).unwrap();
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend(json);
        bytes.extend([0u8; 4]);
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    shard("model-00001.safetensors", &[("model.layers.0.mlp.experts.0.w1.weight", "U8"), ("model.layers.0.mlp.experts.0.w1.weight_scale", "F8_E4M3")]);
    shard("model-00002.safetensors", &[("model.layers.61.mlp.experts.0.w1.weight", "BF16"), ("model.layers.61.enorm.weight", "BF16")]);
    std::fs::write(dir.join("model.safetensors.index.json"), r#"{"weight_map": {"a": "model-00001.safetensors", "b": "model-00002.safetensors"}}"#).unwrap();
    let out = audit(&[FAIL_INHERITED, "--checkpoint", dir.to_str().unwrap(), "--format", "json"]);
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "draft-precision").unwrap();
    let info = check["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "draft-precision/shipped-vs-effective").unwrap();
    let message = info["message"].as_str().unwrap();
    assert!(message.contains("draft tensors ship as BF16") && message.contains("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE cast"), "{message}");
}

#[test]
fn suppressions_accept_findings_until_they_expire_and_unused_ones_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("p.toml");
    std::fs::write(
        &policy,
        concat!(
            "name = \"waived\"\nextends = \"inferencex\"\n",
            "[[suppressions]]\nrule = \"forbidden-env/enabled\"\nreason = \"PR #2600 waiver\"\nowner = \"perf-team\"\nexpires = \"2026-12-31\"\n",
            "[[suppressions]]\nrule = \"draft-precision/*\"\nreason = \"same flag\"\nowner = \"perf-team\"\nexpires = \"2026-12-31\"\n",
            "[[suppressions]]\nrule = \"golden-al/mismatch\"\nreason = \"stale\"\nowner = \"nobody\"\nexpires = \"2027-06-30\"\n",
        ),
    )
    .unwrap();
    let run = |today: &str| {
        let out = audit(&[FAIL_INHERITED, "--policy", policy.to_str().unwrap(), "--today", today, "--format", "json"]);
        (code(&out), json(&out))
    };
    let (code, report) = run("2026-11-30");
    assert_eq!(code, 0, "{report}");
    let forbidden = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    assert_eq!(forbidden["status"], "pass");
    assert_eq!(forbidden["findings"][0]["suppressed"]["owner"], "perf-team");
    assert_eq!(forbidden["summary"], "2 finding(s) accepted by policy suppressions");
    // A passing check whose info findings a suppression accepts keeps its own summary.
    let draft = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "draft-precision").unwrap();
    assert_eq!((draft["status"].as_str(), draft["summary"].as_str()), (Some("pass"), Some("the draft runs as shipped in 2 spec-decode job(s)")));
    let sup = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "suppressions").unwrap();
    assert_eq!(sup["findings"].as_array().unwrap().len(), 1);
    assert_eq!(sup["findings"][0]["rule"], "suppressions/unmatched");
    // After the expiry date the findings count again and the expiry is reported.
    let (code, report) = run("2027-01-01");
    assert_eq!(code, 1);
    let sup = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "suppressions").unwrap();
    let rules: Vec<&str> = sup["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["suppressions/expired", "suppressions/expired", "suppressions/unmatched"]);
}

#[test]
fn engine_patch_fails_unwaived_patches_with_script_and_line() {
    let out = audit(&["samples/bundles/engine-patch-fail", "--format", "json"]);
    assert_eq!(code(&out), 1);
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "engine-patch").unwrap();
    assert_eq!(check["status"], "fail");
    let found: Vec<(String, u64)> =
        check["findings"].as_array().unwrap().iter().map(|f| (f["rule"].as_str().unwrap().to_string(), f["evidence"][0]["line"].as_u64().unwrap())).collect();
    // Judged on the script's evaluated commands: `git apply ... || patch ...` is two patch commands
    // on line 10 (the patch runs where git apply fails), one finding at that place (one cause, one
    // place) whose evidence shows both.
    assert_eq!(found, [("engine-patch/apply".to_string(), 10), ("engine-patch/edit".to_string(), 11)]);
    let both: Vec<&str> = check["findings"][0]["evidence"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert!(both.iter().any(|t| t.contains("git apply")) && both.iter().any(|t| t.contains("patch -p1")), "{both:?}");
    let f = &check["findings"][0];
    assert!(f["evidence"][0]["file"].as_str().unwrap().ends_with("multinode_server_logs.tar.gz/logs/setup_script.sh"));
    assert!(f["message"].as_str().unwrap().contains("setup_script.sh; no waiver"), "{}", f["message"]);
}

#[test]
fn a_complete_waiver_naming_the_script_accepts_it_and_an_incomplete_one_says_what_it_lacks() {
    let out = audit(&["samples/bundles/engine-patch-fail", "--waivers", "samples/waivers", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "engine-patch").unwrap();
    assert!(check["findings"].as_array().unwrap().iter().all(|f| f["rule"] == "engine-patch/waived"));
    assert!(check["findings"][0]["message"].as_str().unwrap().contains("PR #2600"));

    let tmp = tempfile::tempdir().unwrap();
    let waiver = std::fs::read_to_string(root().join("samples/waivers/2600.md")).unwrap();
    let cut = waiver.split("## Removal plan").next().unwrap().to_string();
    std::fs::write(tmp.path().join("2600.md"), cut).unwrap();
    let out = audit(&["samples/bundles/engine-patch-fail", "--waivers", tmp.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1);
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "engine-patch").unwrap();
    let message = check["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("names setup_script.sh but lacks: removal plan"), "{message}");
}

#[test]
fn a_waiver_inside_the_input_counts_too() {
    let tmp = tempfile::tempdir().unwrap();
    let waiver = std::fs::read_to_string(root().join("samples/waivers/2600.md")).unwrap();
    write_tree(tmp.path(), &[("docs/waiver/2600.md", &waiver), ("benchmarks/setup_script.sh", "git apply fix.patch\n")]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "engine-patch").unwrap();
    assert_eq!(check["status"], "pass", "{check}");
    assert_eq!(check["findings"][0]["rule"], "engine-patch/waived");
}

/// A waiver covers the script it names and no other: a complete waiver in
/// the input that names another script (even one whose name ends in the
/// patching script's name) leaves an in-place edit of an installed SGLang
/// file an error; the same waiver naming the patching script waives it.
#[test]
fn a_waiver_waives_only_the_script_it_names() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/tokenizer_fix.sh";
    let script = concat!(
        "#!/usr/bin/env bash\n",
        "TOK=/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/multi_tokenizer_mixin.py\n",
        "if ! grep -q 'cached_tokens_details=' \"$TOK\"; then\n",
        "    sed -i 's/cached_tokens=_extract_field_by_index(output, \"cached_tokens\", i),/&\\n            cached_tokens_details=None,/' \"$TOK\"\n",
        "fi\n",
    );
    let waiver = |names: &str| {
        format!(
            "# Inference-engine patch waiver — PR #2700\n## Config covered\n`qwen3.5-fp8-h200-sglang-mtp`, patch entrypoint `bash benchmarks/single_node/agentic/{names}`\n## What is patched\nThe multi-tokenizer mixin copies cached_tokens_details.\n## Why the unmodified upstream image cannot run this benchmark\nThe router drops the field and the client crashes.\n## Upstream PR / issue links\n- https://github.com/sgl-project/sglang/pull/99101\n## Removal plan\nDrop when an lmsysorg/sglang release includes the PR.\n"
        )
    };
    let run = |names: &str| {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[(SCRIPT, script), ("docs/waiver/2700.md", &waiver(names))]);
        let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json"]);
        let report = json(&out);
        let check = check(&report, "engine-patch").clone();
        let found = finding_places(&check);
        (code(&out), check, found)
    };
    for other in ["apply_k3_container_patches.sh", "qwen_tokenizer_fix.sh"] {
        let (code, check, found) = run(other);
        assert_eq!(code, 1, "a waiver naming {other} does not cover {SCRIPT}: {check:#}");
        assert_eq!(check["status"], "fail");
        assert_eq!(found, [("engine-patch/edit".to_string(), "error".to_string(), SCRIPT.to_string(), 4)], "{other}");
        let message = check["findings"][0]["message"].as_str().unwrap();
        assert!(message.contains("in tokenizer_fix.sh; none of the 1 waiver(s) names tokenizer_fix.sh"), "{other}: {message}");
    }
    let (code, check, found) = run("tokenizer_fix.sh");
    assert_eq!(code, 0, "{check:#}");
    assert_eq!(check["status"], "pass");
    assert_eq!(found, [("engine-patch/waived".to_string(), "info".to_string(), SCRIPT.to_string(), 4)]);
    assert!(check["findings"][0]["message"].as_str().unwrap().contains("covered by the waiver of PR #2700"), "{check:#}");
}

/// A suppression of one finding (by fingerprint) accepts that one only: the
/// check still fails on the other.
#[test]
fn a_suppression_of_one_finding_leaves_the_check_failing_on_the_rest() {
    let report = json(&audit(&[FAIL_INHERITED, "--format", "json"]));
    let forbidden = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    let prints: Vec<&str> = forbidden["findings"].as_array().unwrap().iter().map(|f| f["fingerprint"].as_str().unwrap()).collect();
    assert_eq!(prints.len(), 2, "{forbidden}");
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("p.toml");
    std::fs::write(
        &policy,
        format!(
            "name = \"one\"\nextends = \"inferencex\"\n[[suppressions]]\nrule = \"forbidden-env/enabled\"\nfingerprint = \"{}\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"2099-12-31\"\n",
            prints[0]
        ),
    )
    .unwrap();
    let out = audit(&[FAIL_INHERITED, "--policy", policy.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1);
    let report = json(&out);
    let forbidden = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    assert_eq!(forbidden["status"], "fail", "{forbidden}");
    let accepted: Vec<bool> = forbidden["findings"].as_array().unwrap().iter().map(|f| !f["suppressed"].is_null()).collect();
    assert_eq!(accepted.iter().filter(|a| **a).count(), 1, "{forbidden}");
}

/// Each check's summary counts what it examined: jobs across three bundles
/// (3 + 1 + 11), the files read, the environment sources.
#[test]
fn summaries_count_what_each_check_examined() {
    let report = json(&audit(&["samples/bundles/vllm-agentx-pass", "samples/bundles/golden-al-fail", PASS, "--format", "json"]));
    let summary = |id: &str| report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["summary"].as_str().unwrap().to_string();
    assert_eq!(summary("arch-override"), "no architecture override in the engine arguments of 15 job(s) or in 109 file(s)");
    assert_eq!(
        summary("forbidden-env"),
        "none of SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE, SGLANG_GLM_NEXTN_MOE_PTPC takes effect in 15 job(s) (24 environment source(s) examined)"
    );
    assert_eq!(summary("draft-precision"), "the draft runs as shipped in 15 spec-decode job(s)");
    assert_eq!(summary("engine-patch"), "no unwaived engine patch in 109 file(s)");
    assert_eq!(summary("eval-threshold"), "2 eval score(s) of 2 job(s) meet their thresholds");
    assert_eq!(summary("upstream-image"), "13 job(s) run their framework's upstream image");
    // Failing jobs are those with an error; the notes (info) of two other jobs do not count.
    let report = json(&audit(&["samples/bundles/draft-precision-fail", FAIL_INHERITED, "--format", "json"]));
    let draft = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "draft-precision").unwrap();
    assert_eq!(draft["summary"], "the draft does not run as shipped in 1 of 3 spec-decode job(s)");
    let report = json(&audit(&[FAIL_INHERITED, "samples/bundles/vllm-agentx-pass", "--format", "json"]));
    let forbidden = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    assert_eq!(forbidden["summary"], "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE in effect in 2 of 5 job(s)");
}

/// arch-override beyond the engine's own arguments: a config.json edited by
/// a script is reported always, for the job that has it; an override flag
/// found by the signature rules (a recipe) is reported for a job whose
/// engine arguments did not already show an override, and not again for
/// one whose did. A tree of scripts alone is judged, not "not applicable".
#[test]
fn arch_override_reports_config_edits_and_recipe_flags_per_job() {
    const A: &str = DSV4_RF;
    const B: &str = "dsv4_tp8_conc16_kvnone_spec-mtp_fp4_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_2";
    let edit = "#!/bin/bash\nsed -i 's/\"num_hidden_layers\": 61/\"num_hidden_layers\": 40/' /data/models/dsv4/config.json\n";
    let log = "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/x', tp_size=8, json_model_override_args='{\"num_hidden_layers\": 2}')\n";
    let launch = "#!/bin/bash\npython3 -m sglang.launch_server --model-path /models/x --json-model-override-args '{\"num_hidden_layers\": 2}' --tp 8\n";
    let recipe = "model: x\nhf-overrides: '{\"num_hidden_layers\": 40}'\n";
    let found = |files: &[(&str, &str)]| {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), files);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "arch-override").unwrap().clone();
        let mut rows: Vec<(String, String, String, u64)> = check["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let job = f["job"].as_str().unwrap_or("-");
                let job = if job == A {
                    "A"
                } else if job == B {
                    "B"
                } else {
                    job
                };
                (f["rule"].as_str().unwrap().into(), job.into(), f["evidence"][0]["file"].as_str().unwrap().into(), f["evidence"][0]["line"].as_u64().unwrap())
            })
            .collect();
        rows.sort();
        (check["status"].as_str().unwrap().to_string(), rows)
    };
    let row = |rule: &str, job: &str, file: &str, line: u64| (format!("arch-override/{rule}"), job.to_string(), file.to_string(), line);
    assert_eq!(found(&[("bench.sh", edit)]), ("fail".into(), vec![row("config-json-edit", "bundle", "bench.sh", 2)]));
    let a = |f: &str| format!("server_logs_{A}/{f}");
    let b = |f: &str| format!("server_logs_{B}/{f}");
    let (status, rows) = found(&[
        (&a("server.log"), log),
        (&a("launch.sh"), launch),
        (&a("bench.sh"), edit),
        (&a("recipe.yaml"), recipe),
        (&b("bench.sh"), edit),
        (&b("recipe.yaml"), recipe),
    ]);
    assert_eq!(status, "fail");
    assert_eq!(
        rows,
        vec![
            row("config-json-edit", "A", &a("bench.sh"), 2),
            row("config-json-edit", "B", &b("bench.sh"), 2),
            row("config-override", "A", &a("server.log"), 1),
            row("hf-overrides", "B", &b("recipe.yaml"), 2),
        ]
    );
}

/// An eval job without eval results cannot be judged: eval-threshold is an
/// error naming the job, not "not applicable"; a bundle without eval jobs
/// or results is not applicable.
#[test]
fn an_eval_job_without_results_is_undetermined() {
    const RF: &str = DSV4_RF;
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[(&format!("eval_server_logs_{RF}/server.log"), "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/x', tp_size=8)\n")],
    );
    let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 3);
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "eval-threshold").unwrap();
    assert_eq!(check["status"], "error", "{check}");
    let findings: Vec<(&str, &str)> = check["findings"].as_array().unwrap().iter().map(|f| (f["rule"].as_str().unwrap(), f["job"].as_str().unwrap())).collect();
    assert_eq!(findings, [("eval-threshold/undetermined", RF)]);
    let report = json(&audit(&[FAIL_INHERITED, "--format", "json"]));
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "eval-threshold").unwrap();
    assert_eq!(check["status"], "na", "{check}");
}

/// The draft inherits the target's KV-cache dtype and its own weights'
/// dtype: a vLLM speculative_config that sets either to something else
/// fails draft-precision; `auto`, or the target's own KV dtype, does not.
#[test]
fn a_draft_kv_cache_or_weight_dtype_override_fails_and_inheriting_passes() {
    let rules = |spec: &str| {
        let script = format!(
            "#!/bin/bash\nvllm serve /data/models/GLM-5.2 --kv-cache-dtype fp8 --speculative-config '{{\"method\": \"mtp\", \"num_speculative_tokens\": 3{spec}}}'\n"
        );
        let check = check_of_tree(&[("benchmarks/single_node/glm5.2_fp8_b200_vllm_mtp.sh", &script)], "draft-precision");
        assert!(check["findings"].as_array().unwrap().iter().all(|f| f["severity"] == "error"), "{check}");
        status_and_rules(&check)
    };
    assert_eq!(rules(""), ("pass".into(), vec![]));
    assert_eq!(rules(r#", "kv_cache_dtype": "fp8", "dtype": "auto""#), ("pass".into(), vec![]));
    assert_eq!(rules(r#", "kv_cache_dtype": "auto""#), ("pass".into(), vec![]));
    assert_eq!(rules(r#", "kv_cache_dtype": "fp8_e5m2""#), ("fail".into(), vec!["draft-precision/kv-dtype".to_string()]));
    assert_eq!(rules(r#", "dtype": "float16""#), ("fail".into(), vec!["draft-precision/dtype".to_string()]));
}

/// A draft the input's own MODELS.md agrees for the target is the shipped
/// draft: matched by the row's model prefix when the job has one, else by
/// the target's name in the model path or served model name. A draft
/// agreed for another target is a substitution.
#[test]
fn drafts_agreed_in_the_inputs_model_list_are_matched_to_their_own_target() {
    let models = concat!(
        "| Model | Primary engines | Agreed draft model(s) (PoR) | Proposed |\n",
        "|---|---|---|---|\n",
        "| Kimi-K3 (`kimik3`) | vLLM | `Acme/Kimi-K3-Draft2`, `Inferact/Kimi-K3-DSpark` | None |\n",
        "| MiniMax-M3 | vLLM | `Acme/MiniMax-M3-Draft2` | None |\n",
    );
    let rf = |prefix: &str| format!("{prefix}_tp8_conc8_kvnone_spec-mtp_fp4_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc8_b200-dgxc_1");
    let log = |model: &str, served: &str, draft: &str| {
        format!(
            "[2026-10-14 03:12:55] server_args={{'model_path': '{model}', 'served_model_name': '{served}', 'speculative_algorithm': 'EAGLE', 'speculative_num_steps': 3, 'speculative_draft_model_path': '{draft}'}}\n"
        )
    };
    let judged = |log_path: &str, log: String| status_and_rules(&check_of_tree(&[("MODELS.md", models), (log_path, &log)], "draft-precision"));
    let in_job = |prefix: &str| format!("server_logs_{}/server.log", rf(prefix));
    let known = ("pass".to_string(), vec!["draft-precision/known-draft".to_string()]);
    let substituted = ("fail".to_string(), vec!["draft-precision/substituted-draft".to_string()]);
    // By prefix, whatever the checkpoint directory is called.
    assert_eq!(judged(&in_job("kimik3"), log("/models/ckpt-0412", "ckpt", "Acme/Kimi-K3-Draft2")), known);
    // Agreed for another target: a dsv4 job may not use Kimi-K3's draft.
    assert_eq!(judged(&in_job("dsv4"), log("/data/models/DeepSeek-V4-Pro", "dsv4", "Acme/Kimi-K3-Draft2")), substituted);
    // No prefix (a bare log): by the target's name in the model path, or in the served model name.
    assert_eq!(judged("logs/server.log", log("/data/models/MiniMax-M3", "m3", "Acme/MiniMax-M3-Draft2")), known);
    assert_eq!(judged("logs/server.log", log("/models/ckpt-0412", "MiniMax-M3", "Acme/MiniMax-M3-Draft2")), known);
    assert_eq!(judged("logs/server.log", log("/models/ckpt-0412", "m3", "Acme/MiniMax-M3-Draft2")), substituted);
    // A draft the policy already agrees needs no note from the list, listed there or not.
    assert_eq!(judged(&in_job("kimik3"), log("/models/ckpt-0412", "ckpt", "Inferact/Kimi-K3-DSpark")), ("pass".to_string(), vec![]));
    assert_eq!(judged(&in_job("dsv4"), log("/data/models/DeepSeek-V4-Pro", "dsv4", "/data/models/DeepSeek-V4-Pro-0813")), ("pass".to_string(), vec![]));
    // A target for which neither the policy nor the list names any draft: a standalone draft is named for review, not failed.
    let unlisted = ("pass".to_string(), vec!["draft-precision/unlisted-draft".to_string()]);
    assert_eq!(judged(&in_job("kimik2.5"), log("/data/models/Kimi-K2.6", "k26", "/data/models/kimi-k2.6-eagle3.1-mla")), unlisted);
    // A draft path the input does not show is undetermined, not a substitution.
    let open = judged(&in_job("dsv4"), log("/data/models/DeepSeek-V4-Pro", "dsv4", "$DRAFT_MODEL_PATH"));
    assert_eq!(open.1, vec!["draft-precision/undetermined".to_string()], "{open:?}");
}

/// Dynamo's `DYN_DEFAULT_THINKING_MODE` (the snapshot's TRT-LLM DeepSeek-V4
/// recipes) sets the mode of requests that set none: an AL that is the other
/// mode's table value is named with both values, as a warning, since the
/// client's own setting is not shown; the recipe that agrees with its mode
/// matches.
#[test]
fn a_dynamo_default_thinking_mode_is_held_to_its_table_value_with_both_shown() {
    let recipe = |al: &str, mode: &str| {
        format!(
            "name: x\nmodel:\n  path: deepseek-ai/DeepSeek-V4-Pro\n  precision: fp4\nbackend:\n  type: trtllm\n  decode_environment:\n    TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '{al}'\n    DYN_DEFAULT_THINKING_MODE: {mode}\n  trtllm_config:\n    decode:\n      speculative_config:\n        decoding_type: MTP\n        num_nextn_predict_layers: 3\n"
        )
    };
    let path = "benchmarks/multi_node/srt-slurm-recipes/trtllm/deepseek-v4/agentx/dynamo-disagg-mtp.yaml";
    let master = "dsv4-fp4-gb300-dynamo-trt-agentic-mtp:\n  image: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24\n  model: deepseek-ai/DeepSeek-V4-Pro\n  model-prefix: dsv4\n  precision: fp4\n  framework: dynamo-trt\n  runner: gb300\n  multinode: true\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: mtp\n        additional-settings: [\"CONFIG_FILE=recipes/trtllm/deepseek-v4/agentx/dynamo-disagg-mtp.yaml\"]\n";
    let judged = |text: String| check_of_tree(&[("configs/nvidia-master.yaml", master), (path, &text)], "golden-al");
    let check = judged(recipe("1.49", "disabled"));
    let finding = check["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "golden-al/thinking-mode").unwrap_or_else(|| panic!("{check:#}"));
    assert_eq!(finding["severity"], "warning");
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("thinking_on AL 2.49") && message.contains("golden AL is 2.97") && message.contains("not shown"), "{message}");
    assert!(finding["evidence"].as_array().unwrap().iter().any(|e| e["text"].as_str().unwrap_or("").contains("DYN_DEFAULT_THINKING_MODE")), "{finding:#}");
    let agrees = judged(recipe("1.97", "disabled"));
    assert!(agrees["findings"].as_array().unwrap().iter().any(|f| f["rule"] == "golden-al/match"), "{agrees:#}");
}

/// ATOM online quantization (`--online_quant_config`, the shape of the real
/// `glm5.2_fp4_mi355x_atom_mtp.sh`) quantizes the draft head too unless
/// its exclude_layer names it.
#[test]
fn atom_online_quantization_must_exclude_the_draft_head() {
    let rules = |exclude: &str| {
        let script = format!(
            "#!/bin/bash\npython -m atom.entrypoints.openai_server --model /data/models/GLM-5.2 --method mtp --num-speculative-tokens 3 --online_quant_config '{{\"global_quant_config\":\"ptpc_fp8\",\"exclude_layer\":[{exclude}]}}' --kv_cache_dtype fp8\n"
        );
        status_and_rules(&check_of_tree(&[("benchmarks/single_node/glm5.2_fp4_mi355x_atom_mtp.sh", &script)], "draft-precision"))
    };
    assert_eq!(rules(r#""lm_head","model.embed_tokens","*.mlp.gate","*expert*""#), ("fail".into(), vec!["draft-precision/online-quant".to_string()]));
    assert_eq!(rules(r#""lm_head","*expert*","model.layers.78.*mtp*""#), ("pass".into(), vec![]));
}

/// A policy exception excuses the image it names only: an exception for
/// another image leaves the sample's vendor rebuild failing.
#[test]
fn an_image_exception_excuses_only_the_image_it_names() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = |image: &str, sku: &str| {
        let path = tmp.path().join(format!("{}{sku}.toml", image.replace('/', "_")));
        let sku = if sku.is_empty() { String::new() } else { format!("sku = \"{sku}\"\n") };
        std::fs::write(
            &path,
            format!(
                "name = \"x\"\nextends = \"inferencex\"\n[checks.upstream-image]\ntitle = \"t\"\nestablished_skus = [\"b200\"]\n[[checks.upstream-image.upstream_orgs]]\nframeworks = [\"sglang\"]\norgs = [\"lmsysorg\"]\n[[checks.upstream-image.image_exceptions]]\nimage = \"{image}\"\n{sku}reason = \"r\"\n"
            ),
        )
        .unwrap();
        path
    };
    // An exception with a SKU excuses the image on that SKU only (the sample runs on b200).
    for (image, sku, status, rule) in [
        ("ghcr.io/other/sglang", "", "fail", "upstream-image/not-upstream"),
        ("ghcr.io/acme-ai/sglang", "", "pass", "upstream-image/exception"),
        ("ghcr.io/acme-ai/sglang", "h100", "fail", "upstream-image/not-upstream"),
        ("ghcr.io/acme-ai/sglang", "B200", "pass", "upstream-image/exception"),
    ] {
        let path = policy(image, sku);
        let report = json(&audit(&["samples/bundles/upstream-image-fail", "--policy", path.to_str().unwrap(), "--format", "json"]));
        let check = check_in(&report, "upstream-image");
        assert_eq!(status_and_rules(&check), (status.to_string(), vec![rule.to_string()]), "{image} {sku}: {check}");
    }
}

/// The upstream-image rule binds the frameworks the benchmark's text binds
/// (Check 6(a): vLLM and SGLang entries): for a framework the policy marks
/// `binding = false`, or one it does not name, the sample's vendor rebuild
/// is a warning naming its registry, and the check passes.
#[test]
fn a_framework_the_rule_does_not_bind_gets_a_warning_naming_the_registry() {
    let tmp = tempfile::tempdir().unwrap();
    for (orgs, rule) in [
        ("[[checks.upstream-image.upstream_orgs]]\nframeworks = [\"sglang\"]\norgs = [\"lmsysorg\"]\nbinding = false\n", "upstream-image/not-bound"),
        ("[[checks.upstream-image.upstream_orgs]]\nframeworks = [\"vllm\"]\norgs = [\"vllm\"]\n", "upstream-image/unknown-framework"),
    ] {
        let path = tmp.path().join(format!("{}.toml", rule.replace('/', "_")));
        std::fs::write(&path, format!("name = \"x\"\n[checks.upstream-image]\ntitle = \"t\"\nestablished_skus = [\"b200\"]\n{orgs}")).unwrap();
        let report = json(&audit(&["samples/bundles/upstream-image-fail", "--policy", path.to_str().unwrap(), "--format", "json"]));
        let check = check_in(&report, "upstream-image");
        assert_eq!(status_and_rules(&check), ("pass".to_string(), vec![rule.to_string()]), "{check}");
        let finding = &check["findings"][0];
        assert_eq!(finding["severity"], "warning");
        assert!(finding["message"].as_str().unwrap().contains("registry ghcr.io/"), "{finding}");
    }
}
