//! Server arguments in the shapes they arrive in: launch flags abbreviated
//! as argparse allows (and ambiguous ones it refuses), and `ServerArgs(` /
//! `Namespace(` / `non-default args` reprs that lost their head or were
//! garbled by a terminal copy. Fixtures: `tests/fixtures/logs/wild/args_*`
//! and `frag_*`.

use crate::common::*;
use serde_json::Value;

const WILD: &str = "tests/fixtures/logs/wild";

fn evidence(fixture: &str) -> Value {
    let out = auditor(&["evidence", &format!("{WILD}/{fixture}")]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json(&out)
}

fn audit_log(log: &str, framework: &str) -> Value {
    audit_run(log, "dsv4", framework)
}

fn notes(v: &Value) -> Vec<String> {
    v["notes"].as_array().unwrap().iter().map(|n| n["message"].as_str().unwrap().to_string()).collect()
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(root().join(WILD).join(name)).unwrap()
}

/// Audit one job whose server log is `log`, named like an InferenceX run of `model` on `framework`.
fn audit_run(log: &str, model: &str, framework: &str) -> Value {
    let rf = format!("{model}_tp8_conc8_kvnone_spec-mtp_fp4_{framework}_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc8_b200-dgxc_1");
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(&format!("server_logs_{rf}/results/server.log"), log)]);
    let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json"]);
    json(&out)
}

#[test]
fn abbreviated_sglang_flags_are_read_as_the_flags_they_abbreviate() {
    let v = evidence("args_sglang_abbreviated_launch.log");
    assert_eq!(v["speculative"]["draft_length"], 2, "--speculative-num-st 2");
    assert_eq!(v["speculative"]["num_draft_tokens"], 3, "--speculative-num-draft 3");
    assert_eq!(v["speculative"]["eagle_topk"], 1);
    assert_eq!(v["server_args"]["mem_fraction_static"], 0.85, "--mem-frac=0.85");
    assert_eq!(v["server_args"]["json_model_override_args"]["index_topk_freq"], 4);
    assert_eq!(v["summary"]["tensor_parallel"], 8, "--tp 8");
    let notes = notes(&v);
    assert!(
        notes.contains(&"args_sglang_abbreviated_launch.log:7: sglang reads --speculative-num-st as --speculative-num-steps (a unique prefix)".to_string()),
        "{notes:?}"
    );
}

#[test]
fn an_abbreviated_draft_length_is_judged_by_golden_al_and_an_abbreviated_override_fails_arch_override() {
    let log = fixture("args_sglang_abbreviated_launch.log");
    let report = audit_log(&log, "sglang");
    let golden = check(&report, "golden-al");
    assert_eq!(golden["status"], "fail", "{golden}");
    let message = golden["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("K=2"), "the abbreviated --speculative-num-st 2 gives K: {message}");
    let arch = check(&report, "arch-override");
    assert_eq!(arch["status"], "fail", "{arch}");
    let evidence = &arch["findings"][0]["evidence"][0];
    assert!(evidence["text"].as_str().unwrap().starts_with("--json-model-override"), "{evidence}");
    assert_eq!(evidence["line"], 7);
    // The same run with the K its AL belongs to passes golden-al.
    let report = audit_log(&log.replace("--speculative-num-st 2", "--speculative-num-st 3"), "sglang");
    assert_eq!(check(&report, "golden-al")["status"], "pass", "{}", check(&report, "golden-al"));
}

#[test]
fn abbreviated_vllm_flags_with_underscores_and_equals() {
    let v = evidence("args_vllm_abbreviated_serve.log");
    assert_eq!(v["server_args"]["hf_overrides"]["index_topk_freq"], 4, "--hf-over");
    assert_eq!(v["speculative"]["draft_length"], 3, "--speculative_conf");
    assert_eq!(v["server_args"]["gpu_memory_utilization"], 0.9, "--gpu-memory-util=0.9");
    let report = audit_log(&fixture("args_vllm_abbreviated_serve.log"), "vllm");
    let arch = check(&report, "arch-override");
    assert_eq!(arch["status"], "fail", "{arch}");
    assert!(arch["findings"][0]["message"].as_str().unwrap().contains("index_topk_freq"));
}

#[test]
fn an_ambiguous_prefix_is_noted_with_its_place_and_never_guessed() {
    let v = evidence("args_sglang_ambiguous_prefix.log");
    let notes = notes(&v);
    let ambiguous: Vec<&String> = notes.iter().filter(|n| n.contains(" is ambiguous")).collect();
    assert_eq!(ambiguous.len(), 1, "{notes:?}");
    assert!(ambiguous[0].starts_with("args_sglang_ambiguous_prefix.log:1: --speculative-draft is ambiguous"), "{}", ambiguous[0]);
    assert!(ambiguous[0].contains("--speculative-draft-model-path") && ambiguous[0].contains("--speculative-draft-model-revision"));
    assert!(v["speculative"].get("draft_model").is_none(), "{}", v["speculative"]);
    assert!(v["server_args"].get("speculative_draft_model_path").is_none() && v["server_args"].get("speculative_draft").is_none());
    // The flags around it are still read.
    assert_eq!(v["speculative"]["draft_length"], 3);
}

#[test]
fn a_headless_wrapped_sglang_serverargs_fragment_yields_what_is_certain() {
    let v = evidence("frag_sglang_serverargs_midline_wrapped.log");
    let source = &v["server_args_sources"][0];
    assert_eq!(source["kind"], "sglang-server-args-fragment");
    assert_eq!(source["complete"], false);
    assert!(source["stop"].as_str().unwrap().contains("fragment"), "{source}");
    assert_eq!(v["speculative"]["algorithm"], "EAGLE");
    assert_eq!(v["sources"]["speculative.algorithm"]["from"], "sglang-server-args-fragment.speculative_algorithm");
    assert_eq!(v["speculative"]["draft_length"], 3);
    // A key wrapped across lines (`mem_fractio|n_static`), a doubled space
    // and a stray prompt between pieces do not stop the reading.
    assert_eq!(v["server_args"]["mem_fraction_static"], 0.85);
    assert_eq!(v["server_args"]["tp_size"], 8);
    assert_eq!(v["server_args"]["pp_size"], 1);
    // The cut head (`ath='...'`) is not taken for a shorter key.
    let args = v["server_args"].as_object().unwrap();
    assert!(!args.contains_key("model_path") && !args.contains_key("ath") && !args.contains_key("path"), "{:?}", args.keys());
}

#[test]
fn vllm_fragments_namespace_cut_at_both_ends_and_headless_non_default_args() {
    let v = evidence("frag_vllm_namespace_cut.log");
    assert_eq!(v["server_args_sources"][0]["kind"], "vllm-namespace-fragment");
    assert_eq!(v["speculative"]["draft_length"], 2);
    assert_eq!(v["sources"]["speculative.draft_length"]["from"], "vllm-namespace-fragment.speculative_config.num_speculative_tokens");
    let args = v["server_args"].as_object().unwrap();
    // `l_size=8` is the tail of a cut key; `calculate_kv_sca` was cut.
    assert!(!args.contains_key("tensor_parallel_size") && !args.contains_key("l_size"));
    assert!(!args.keys().any(|k| k.starts_with("calculate_kv")));
    assert_eq!(args["pipeline_parallel_size"], 1);
    let v = evidence("frag_vllm_nondefault_headless.log");
    assert_eq!(v["server_args_sources"][0]["kind"], "vllm-non-default-args-fragment");
    assert_eq!(v["speculative"]["method"], "mtp");
    assert_eq!(v["server_args"]["hf_overrides"]["index_topk_freq"], 4);
    // The first pair starts the excerpt: nothing shows it was not cut.
    assert!(v["server_args"].get("model_tag").is_none());
}

#[test]
fn prose_with_key_value_words_is_not_read_as_arguments() {
    let v = evidence("frag_prose_key_value.log");
    assert!(v["server_args"].as_object().unwrap().is_empty(), "{}", v["server_args"]);
    assert!(v["speculative"].as_object().unwrap().is_empty(), "{}", v["speculative"]);
    assert!(v["server_args_sources"].as_array().unwrap().is_empty());
}

#[test]
fn a_trtllm_config_shown_by_cat_or_a_heredoc_gives_the_speculative_and_kv_cache_settings() {
    let v = evidence("args_trtllm_cat_config.log");
    assert_eq!(v["engine"], "trtllm");
    assert_eq!(v["speculative"]["draft_length"], 3);
    assert_eq!(v["speculative"]["draft_model"], "/data/models/MiniMax-M3-EAGLE3-GQA", "speculative_model_dir");
    assert_eq!(v["sources"]["speculative.draft_length"]["at"]["line"], 13, "the line of the config as the log shows it");
    assert_eq!(v["summary"]["kv_cache_dtype"], "fp8");
    assert_eq!(v["sources"]["summary.kv_cache_dtype"]["from"], "kv_cache_config.dtype");
    // Forcing 2.78 accepted tokens is AL 3.78 for K=3: golden-al judges it.
    let report = audit_run(&fixture("args_trtllm_cat_config.log"), "minimaxm3", "trt");
    let golden = check(&report, "golden-al");
    assert_eq!(golden["status"], "fail", "{golden}");
    assert!(golden["findings"][0]["message"].as_str().unwrap().contains("AL - 1 = 1.78"), "{}", golden["findings"][0]["message"]);
    // The heredoc's config (not the block after its EOF) with the right value passes.
    let v = evidence("args_trtllm_heredoc_config.log");
    assert_eq!(v["speculative"]["draft_length"], 3, "max_draft_len: 9 after EOF is not a shown config");
    let report = audit_run(&fixture("args_trtllm_heredoc_config.log"), "minimaxm3", "trt");
    assert_eq!(check(&report, "golden-al")["status"], "pass", "{}", check(&report, "golden-al"));
}
