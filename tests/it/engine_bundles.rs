//! The engine sample bundles (vLLM, ATOM, TRT-LLM on Dynamo, SGLang
//! disaggregated; `samples/engine_bundles.py`): each pass bundle passes, each
//! fail bundle fails the one rule it was built for, and `auditor evidence`
//! recognises the engine and reads the simulated AL the way that engine
//! spells it.

use crate::common::*;
use serde_json::Value;

fn bundle(name: &str) -> String {
    format!("samples/bundles/{name}")
}

/// Exit code and JSON report of `auditor audit`.
fn audit_json(name: &str) -> (i32, Value) {
    let out = audit(&[&bundle(name), "--format", "json"]);
    (code(&out), json(&out))
}

/// The error findings of a failing bundle; every other check must not fail.
fn only_failing(name: &str, id: &str) -> Vec<Value> {
    let (code, report) = audit_json(name);
    assert_eq!(code, 1, "{name}: {report}");
    for c in report["checks"].as_array().unwrap() {
        let expected = if c["id"] == id { "fail" } else { "not fail" };
        assert_eq!(c["status"] == "fail", expected == "fail", "{name}: {} is {} ({})", c["id"], c["status"], c["summary"]);
    }
    check(&report, id)["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").cloned().collect()
}

fn assert_passes(name: &str) -> Value {
    let (code, report) = audit_json(name);
    assert_eq!(code, 0, "{name}: {report}");
    for c in report["checks"].as_array().unwrap() {
        assert_ne!(c["status"], "fail", "{name}: {} ({})", c["id"], c["summary"]);
    }
    report
}

/// Per job of `auditor evidence`: (kind, engine, speculative facts, source of simulated_al, all sources).
type JobEvidence = (String, String, Value, Value, Value);

fn evidence(name: &str) -> Vec<JobEvidence> {
    let out = auditor(&["evidence", &bundle(name), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json(&out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["job"]["kind"] != "run-level")
        .map(|j| {
            (
                j["job"]["kind"].as_str().unwrap().to_string(),
                j["engine"].as_str().unwrap_or("").to_string(),
                j["speculative"].clone(),
                j["sources"]["speculative.simulated_al"].clone(),
                j["sources"].clone(),
            )
        })
        .collect()
}

#[test]
fn vllm_pass_simulates_throughput_jobs_only() {
    let report = assert_passes("vllm-agentx-pass");
    assert_eq!(check(&report, "sim-acc-eval")["status"], "pass");
    assert_eq!(check(&report, "golden-al")["status"], "pass");
    let jobs = evidence("vllm-agentx-pass");
    assert_eq!(jobs.len(), 3);
    for (kind, engine, spec, source, _) in &jobs {
        assert_eq!(engine, "vllm");
        assert_eq!(spec["method"], "mtp");
        assert_eq!(spec["draft_length"], 3);
        if kind == "throughput" {
            assert_eq!(spec["simulated_al"], 2.49, "{spec}");
            assert_eq!(spec["rejection_sample_method"], "synthetic");
            // Read from vLLM's own `non-default args: {...}` line in server.log.
            assert!(source["from"].as_str().unwrap().contains("synthetic_acceptance_length"), "{source}");
            assert!(source["at"]["file"].as_str().unwrap().ends_with("server.log"), "{source}");
        } else {
            assert_eq!(kind, "eval-only");
            assert!(spec.get("simulated_al").is_none(), "{spec}");
        }
    }
}

#[test]
fn vllm_eval_job_with_synthetic_acceptance_fails_sim_acc_eval() {
    let errors = only_failing("vllm-agentx-eval-sim-fail", "sim-acc-eval");
    assert_eq!(errors.len(), 1);
    let f = &errors[0];
    assert_eq!(f["rule"], "sim-acc-eval/simulated");
    assert!(f["job"].as_str().unwrap().ends_with("b200-dgxc_3"), "{f}");
    let texts: Vec<&str> = f["evidence"].as_array().unwrap().iter().filter_map(|e| e["text"].as_str()).collect();
    assert!(texts.iter().any(|t| t.contains("synthetic")), "{texts:?}");
    let eval = evidence("vllm-agentx-eval-sim-fail").into_iter().find(|j| j.0 == "eval-only").unwrap();
    assert_eq!((eval.1.as_str(), &eval.2["simulated_al"]), ("vllm", &Value::from(2.49)));
}

#[test]
fn atom_pass_reads_the_acceptance_length_flag() {
    assert_passes("atom-agentx-pass");
    let jobs = evidence("atom-agentx-pass");
    let throughput = jobs.iter().find(|j| j.0 == "throughput").unwrap();
    assert_eq!(throughput.1, "atom");
    assert_eq!(throughput.2["simulated_al"], 2.49);
    assert!(throughput.3["at"]["file"].as_str().unwrap().ends_with("server_command.txt"), "{}", throughput.3);
    let eval = jobs.iter().find(|j| j.0 == "eval-only").unwrap();
    assert!(eval.2.get("simulated_al").is_none(), "{}", eval.2);
}

#[test]
fn atom_rate_without_the_bonus_token_fails_golden_al() {
    let errors = only_failing("atom-agentx-rate-fail", "golden-al");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["rule"], "golden-al/mismatch");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("3.49") && message.contains("2.49"), "{message}");
    let throughput = evidence("atom-agentx-rate-fail").into_iter().find(|j| j.0 == "throughput").unwrap();
    assert_eq!((throughput.1.as_str(), &throughput.2["simulated_al"]), ("atom", &Value::from(3.49)));
}

#[test]
fn trtllm_pass_applies_the_al_minus_one_rule() {
    assert_passes("trtllm-dynamo-disagg-pass");
    let jobs = evidence("trtllm-dynamo-disagg-pass");
    assert_eq!(jobs.len(), 1);
    let (kind, engine, spec, source, _) = &jobs[0];
    assert_eq!((kind.as_str(), engine.as_str()), ("throughput", "trtllm"));
    assert_eq!(spec["forced_accepted_tokens"], 1.49);
    assert_eq!(spec["simulated_al"], 2.49);
    assert_eq!(spec["draft_length"], 3);
    assert_eq!(source["from"], "env TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS plus 1");
    assert!(source["at"]["file"].as_str().unwrap().ends_with("multinode_server_logs.tar.gz/logs/config.yaml"), "{source}");
}

#[test]
fn trtllm_golden_al_given_as_the_knob_fails_golden_al() {
    let errors = only_failing("trtllm-dynamo-disagg-al-fail", "golden-al");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["rule"], "golden-al/mismatch");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("3.49") && message.contains("2.49"), "{message}");
    let (_, engine, spec, _, _) = evidence("trtllm-dynamo-disagg-al-fail").remove(0);
    assert_eq!((engine.as_str(), &spec["simulated_al"]), ("trtllm", &Value::from(3.49)));
}

#[test]
fn sglang_disagg_pass_simulates_on_the_decode_role() {
    assert_passes("sglang-dynamo-disagg-pass");
    let (kind, engine, spec, source, sources) = evidence("sglang-dynamo-disagg-pass").remove(0);
    assert_eq!((kind.as_str(), engine.as_str()), ("throughput", "sglang"));
    assert_eq!(spec["simulated_al"], 2.49);
    assert_eq!(spec["simulate_token_mode"], "real-draft-token");
    assert!(source["at"]["file"].as_str().unwrap().ends_with("logs/config.yaml"), "{source}");
    // K comes from the decode worker's server_args, not the prefill worker's.
    let k = &sources["speculative.draft_length"];
    assert!(k["at"]["file"].as_str().unwrap().ends_with("_decode_w0.out"), "{k}");
}

#[test]
fn sglang_disagg_simulation_only_on_prefill_does_not_count() {
    let errors = only_failing("sglang-dynamo-disagg-prefill-sa-fail", "sim-acc-throughput");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["rule"], "sim-acc-throughput/not-simulated");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("SGLANG_SIMULATE_ACC_LEN=2.49") && message.contains("do not reach the engine that generates tokens"), "{message}");
    let (_, engine, spec, _, _) = evidence("sglang-dynamo-disagg-prefill-sa-fail").remove(0);
    assert_eq!(engine, "sglang");
    assert!(spec.get("simulated_al").is_none(), "prefill_environment does not reach the decode engine: {spec}");
}

#[test]
fn sglang_disagg_target_follows_the_decode_roles_k() {
    let errors = only_failing("sglang-dynamo-disagg-decode-k2-fail", "golden-al");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["rule"], "golden-al/mismatch");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("K=2 is 2.27") && message.contains("2.49 is the golden AL for K=3"), "{message}");
    let (_, engine, spec, _, sources) = evidence("sglang-dynamo-disagg-decode-k2-fail").remove(0);
    assert_eq!((engine.as_str(), &spec["draft_length"]), ("sglang", &Value::from(2)));
    let k = &sources["speculative.draft_length"];
    assert!(k["at"]["file"].as_str().unwrap().ends_with("_decode_w0.out"), "the prefill worker drafts K=3 and does not decide: {k}");
}

#[test]
fn a_vllm_prefill_producer_does_not_decide_the_draft_length() {
    let rf = "dsv4_p1x8_d1x8_conc64_kvnone_fp4_dynamo-vllm_prefill-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw1_decode-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw1_disagg-true_spec-mtp_conc64_gb200-nv_0";
    let line = |role: &str, k: u32| {
        format!(
            "(APIServer pid=12) INFO 08-20 10:08:10 [utils.py:233] non-default args: {{'model': '/model/', 'speculative_config': {{'method': 'mtp', 'num_speculative_tokens': {k}}}, 'kv_transfer_config': {{'kv_connector': 'P2pNcclConnector', 'kv_role': '{role}'}}}}\n"
        )
    };
    let tmp = tempfile::tempdir().unwrap();
    let (prefill, decode) = (line("kv_producer", 2), line("kv_consumer", 3));
    write_tree(
        tmp.path(),
        &[
            (&format!("multinode_server_logs_{rf}/logs/node1_prefill_w0.out"), &prefill),
            (&format!("multinode_server_logs_{rf}/logs/node2_decode_w0.out"), &decode),
        ],
    );
    let out = auditor(&["evidence", tmp.path().to_str().unwrap(), "--format", "json"]);
    let report = json(&out);
    let job = report["jobs"].as_array().unwrap().iter().find(|j| j["engine"] == "vllm").unwrap();
    assert_eq!(job["speculative"]["draft_length"], 3, "{job}");
    assert!(job["sources"]["speculative.draft_length"]["at"]["file"].as_str().unwrap().ends_with("node2_decode_w0.out"));
}
