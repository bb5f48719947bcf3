//! `sim-acc-throughput`, `sim-acc-eval` and `golden-al` on their sample
//! bundles and on bundles built for one case each.

use crate::common::*;
use serde_json::Value;

fn errors(check: &Value) -> Vec<&Value> {
    check["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").collect()
}

fn audit_json(bundle: &str) -> (i32, Value) {
    let out = audit(&[bundle, "--format", "json"]);
    (code(&out), json(&out))
}

fn audit_files(files: &[(&str, &str)]) -> (i32, Value) {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), files);
    audit_json(tmp.path().to_str().unwrap())
}

#[test]
fn the_pass_sample_passes_every_check() {
    let (code, report) = audit_json(PASS);
    assert_eq!(code, 0);
    for c in report["checks"].as_array().unwrap() {
        assert_eq!(c["status"], "pass", "{}: {}", c["id"], c["summary"]);
    }
    let golden = check(&report, "golden-al");
    let matches = golden["findings"].as_array().unwrap();
    assert_eq!(matches.len(), 10, "one finding per throughput job");
    assert!(matches.iter().all(|f| f["rule"] == "golden-al/match"));
    let message = matches[0]["message"].as_str().unwrap();
    assert!(message.contains("3.51") && message.contains("K=5") && message.contains("thinking_on from env SGLANG_DEFAULT_THINKING"), "{message}");
    let out = audit(&[PASS, "--format", "markdown"]);
    let md = stdout(&out);
    let check_lines: Vec<_> = md.lines().filter(|l| l.contains(" Check ")).collect();
    assert_eq!(check_lines.len(), report["checks"].as_array().unwrap().len(), "one line per check:\n{md}");
    assert_eq!(md.lines().filter(|l| l.starts_with("## ")).count(), 1, "one verdict line");
}

#[test]
fn sim_acc_throughput_sample_fails_both_jobs() {
    let (code, report) = audit_json("samples/bundles/sim-acc-throughput-fail");
    assert_eq!(code, 1);
    let c = check(&report, "sim-acc-throughput");
    assert_eq!(c["status"], "fail");
    let rules: Vec<&str> = errors(c).iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["sim-acc-throughput/token-mode", "sim-acc-throughput/not-simulated"]);
    let not_simulated = errors(c)[1];
    assert_eq!(not_simulated["evidence"][0]["line"], 4, "the server_args line");
    assert!(not_simulated["evidence"][0]["text"].as_str().unwrap().starts_with("speculative_algorithm="));
    // Beside two jobs that simulate as required (info findings): two of the four fail.
    let report = json(&audit(&["samples/bundles/sim-acc-throughput-fail", "samples/bundles/vllm-agentx-pass", "--format", "json"]));
    assert_eq!(check(&report, "sim-acc-throughput")["summary"], "2 of 4 spec-decode throughput job(s) do not simulate acceptance as required");
}

#[test]
fn sim_acc_eval_sample_fails_on_the_dump_line() {
    let (code, report) = audit_json("samples/bundles/sim-acc-eval-fail");
    assert_eq!(code, 1);
    let c = check(&report, "sim-acc-eval");
    assert_eq!(c["status"], "fail");
    let f = errors(c)[0];
    assert_eq!(f["rule"], "sim-acc-eval/simulated");
    let lines: Vec<u64> = f["evidence"].as_array().unwrap().iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert!(lines.contains(&3), "SGLANG_SIMULATE_ACC_LEN on line 3: {lines:?}");
    assert!(f["job"].as_str().unwrap().ends_with("b200-dgxc_3"));
    let rules: Vec<&str> = c["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["sim-acc-eval/simulated"], "the knob in effect is not also an inactive one, nor the dump a sign of real verification");
    // Beside a bundle whose eval job verifies for real: one of the two eval jobs fails.
    let report = json(&audit(&["samples/bundles/sim-acc-eval-fail", "samples/bundles/vllm-agentx-pass", "--format", "json"]));
    assert_eq!(check(&report, "sim-acc-eval")["summary"], "simulated acceptance in 1 of 2 eval job(s)");
}

#[test]
fn eval_job_without_simulation_is_confirmed_by_its_dump() {
    let (_, report) = audit_json(PASS);
    let c = check(&report, "sim-acc-eval");
    let f = &c["findings"][0];
    assert_eq!(f["rule"], "sim-acc-eval/real-verification");
    assert_eq!(f["evidence"][0]["line"], 1);
}

#[test]
fn golden_al_sample_names_the_k_its_value_belongs_to() {
    let (code, report) = audit_json("samples/bundles/golden-al-fail");
    assert_eq!(code, 1);
    let c = check(&report, "golden-al");
    let f = errors(c)[0];
    assert_eq!(f["rule"], "golden-al/mismatch");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("K=2 is 2.27") && message.contains("2.49 is the golden AL for K=3"), "{message}");
    let evidence: Vec<String> = f["evidence"].as_array().unwrap().iter().map(|e| format!("{}:{}", e["file"].as_str().unwrap(), e["line"])).collect();
    assert!(evidence.iter().any(|e| e == "policies/golden/dsv4_mtp.yaml:12"), "{evidence:?}");
    assert!(evidence.iter().any(|e| e.ends_with("server.log:3")), "{evidence:?}");
}

const DSV41_RF: &str = "dsv41flash_tp4_conc8_kvnone_spec-mtp_fp4_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc8_h200-dgxc_0";

/// A DSpark K=5 job whose SA value is set by `env_line` in a launch script.
fn dspark_job(env_file: (&str, &str), thinking: bool) -> Vec<(String, String)> {
    let dump = if thinking { "=== SGLANG_* env vars at launch ===\nSGLANG_DEFAULT_THINKING=1\n===\n" } else { "" };
    let log = format!(
        "{dump}[2026-10-14 03:12:55] server_args={{'model_path': '/data/models/DeepSeek-V4.1-Flash', 'tp_size': 4, 'speculative_algorithm': 'DSPARK', 'speculative_dspark_block_size': 5, 'speculative_num_draft_tokens': 6}}\n"
    );
    vec![(format!("server_logs_{DSV41_RF}/results/server.log"), log), (format!("agentic_{DSV41_RF}/results/{}", env_file.0), env_file.1.to_string())]
}

fn run_dspark(env_file: (&str, &str), thinking: bool) -> (i32, Value) {
    let files = dspark_job(env_file, thinking);
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    audit_files(&refs)
}

const SA_REST: &str = "export SGLANG_SIMULATE_ACC_METHOD=match-expected SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n";

#[test]
fn golden_comparison_is_numeric_at_two_decimals() {
    for (value, status) in [("3.5", "fail"), ("3.510", "pass"), ("'3.51'", "pass"), ("\"3.51\"", "pass"), ("3.52", "fail"), ("3.514", "pass")] {
        let script = format!("export SGLANG_SIMULATE_ACC_LEN={value}\n{SA_REST}");
        let (_, report) = run_dspark(("launch.sh", &script), true);
        assert_eq!(check(&report, "golden-al")["status"], status, "{value}");
    }
    let yaml = "backend:\n  aggregated_environment:\n    SGLANG_SIMULATE_ACC_LEN: '3.51'\n    SGLANG_SIMULATE_ACC_METHOD: match-expected\n    SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token\n";
    let (_, report) = run_dspark(("config.yaml", yaml), true);
    assert_eq!(check(&report, "golden-al")["status"], "pass", "YAML '3.51'");
}

#[test]
fn a_defaulted_thinking_mode_is_visible_and_thinking_off_values_need_evidence() {
    let script = format!("export SGLANG_SIMULATE_ACC_LEN=3.51\n{SA_REST}");
    let (_, report) = run_dspark(("launch.sh", &script), false);
    let f = &check(&report, "golden-al")["findings"][0];
    assert_eq!(f["rule"], "golden-al/match");
    assert!(f["message"].as_str().unwrap().contains("thinking mode defaulted to thinking_on"), "{}", f["message"]);
    // dsv4 K=3: thinking_off 2.97 on a run that does not show thinking disabled.
    let rf = DSV4_RF;
    let log =
        "[2026-09-02 14:40:07] server_args=ServerArgs(model_path='/m', speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1)\n";
    let script = "export SGLANG_SIMULATE_ACC_LEN=2.97 SGLANG_SIMULATE_ACC_METHOD=match-expected SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n";
    let off = format!("{script}export THINKING_MODE=thinking_off\n");
    for (env, status, rule) in [(script.to_string(), "fail", "golden-al/thinking-mode"), (off, "pass", "golden-al/match")] {
        let (_, report) = audit_files(&[(&format!("server_logs_{rf}/results/server.log"), log), (&format!("agentic_{rf}/results/launch.sh"), &env)]);
        let c = check(&report, "golden-al");
        assert_eq!((c["status"].as_str().unwrap(), c["findings"][0]["rule"].as_str().unwrap()), (status, rule), "{}", c["findings"][0]["message"]);
    }
}

#[test]
fn trtllm_off_by_one_each_way() {
    let rf = "minimaxm3_tp8_conc16_kvnone_spec-mtp_fp4_trt_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_0";
    let config = "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n  speculative_model: /data/models/MiniMax-M3-EAGLE3-GQA\n";
    for (forced, status) in [("1.78", "pass"), ("2.78", "fail")] {
        let script = format!(
            "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS={forced}\ntrtllm-serve /data/models/MiniMax-M3 --tp_size 8 --extra_llm_api_options ser.yaml\n"
        );
        let (_, report) = audit_files(&[(&format!("agentic_{rf}/results/launch.sh"), &script), (&format!("agentic_{rf}/results/ser.yaml"), config)]);
        let c = check(&report, "golden-al");
        assert_eq!(c["status"], status, "forced {forced}: {}", c["findings"][0]["message"]);
        if status == "fail" {
            let message = c["findings"][0]["message"].as_str().unwrap();
            assert!(message.contains("AL - 1 = 1.78, not the AL itself"), "{message}");
            assert!(message.contains("minimaxm3_eagle3_gqa"), "{message}");
            // An AL the run did not write is named with how it was derived, not shown as the line's text.
            assert!(message.starts_with("simulated AL 3.78 (env TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"), "{message}");
        }
    }
}

#[test]
fn an_undeterminable_table_is_an_error_not_a_pass() {
    // No gh layout, no model prefix: the table cannot be chosen.
    let log = "=== SGLANG_* env vars at launch ===\nSGLANG_SIMULATE_ACC_LEN=2.5\n===\n[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/data/models/SomeNewModel', speculative_algorithm='EAGLE', speculative_num_steps=3)\n";
    let (code, report) = audit_files(&[("logs/server.log", log)]);
    let c = check(&report, "golden-al");
    assert_eq!(c["status"], "error", "{c}");
    assert_eq!(code, 3);
    let message = c["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("model prefix is unknown"), "{message}");
    // A known model without a table fails, naming the table it looked for.
    let log = log.replace("SomeNewModel", "DeepSeek-R1");
    let (code, report) = audit_files(&[("logs/server.log", &log)]);
    let c = check(&report, "golden-al");
    assert_eq!((code, c["status"].as_str().unwrap()), (1, "fail"));
    assert!(c["findings"][0]["message"].as_str().unwrap().contains("table dsr1_mtp"), "{}", c["findings"][0]["message"]);
}

#[test]
fn launch_scripts_that_build_their_speculative_settings() {
    // A script whose arms launch differently is a job per path (`<file> [path k of n]`).
    let of_job = |f: &Value, file: &str| f["job"].as_str().is_some_and(|j| j == file || j.starts_with(&format!("{file} [path ")));
    let rules = |report: &Value, file: &str| -> Vec<String> {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["findings"].as_array().unwrap().iter())
            .filter(|f| of_job(f, file))
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    // A config assembled by printf, and an ATOM acceptance rate computed by awk.
    let printf = concat!(
        "MODEL_PATH=/data/models/MiniMax-M3\nNUM_SPEC_TOKENS=3\nAL=2.78\nDRAFT=/data/models/MiniMax-M3-EAGLE3-GQA\n",
        "SPEC_CONFIG=$(printf \\\n  '{\"method\":\"eagle3\",\"model\":\"%s\",\"num_speculative_tokens\":%d,\"rejection_sample_method\":\"synthetic\",\"synthetic_acceptance_length\":%.2f}' \\\n  \"$DRAFT\" \"$NUM_SPEC_TOKENS\" \"$AL\")\n",
        "CMD=(vllm serve \"$MODEL_PATH\" --speculative-config \"$SPEC_CONFIG\")\n\"${CMD[@]}\" &\n",
    );
    let awk = concat!(
        "ACC=2.99\nK=3\nRATE=$(awk \"BEGIN{print ($ACC-1)/$K}\")\n",
        "CMD=(python -m atom.entrypoints.openai_server --model /data/models/GLM-5.2 --method mtp --num-speculative-tokens \"$K\" --spec-decode-acceptance-rate \"$RATE\")\n\"${CMD[@]}\" &\n",
    );
    // K and AL picked by CONC in branches; a config the input does not show.
    let branches = concat!(
        "if [ \"$CONC\" -le 8 ]; then\n  K=7\n  AL=3.84\nelse\n  K=0\nfi\n",
        "SPEC=\"{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": $K, \\\"rejection_sample_method\\\": \\\"synthetic\\\", \\\"synthetic_acceptance_length\\\": $AL}\"\n",
        "vllm serve /data/models/GLM-5.2 --speculative-config \"$SPEC\"\n",
    );
    let hidden = "SPEC_CONFIG=$(build_config)\nvllm serve /data/models/GLM-5.2 --speculative-config \"$SPEC_CONFIG\"\n";
    let dir = "benchmarks/single_node/agentic";
    let files = [
        (format!("{dir}/minimaxm3_fp4_b200_mtp.sh"), printf),
        (format!("{dir}/glm5.2_fp4_mi355x_atom_mtp.sh"), awk),
        (format!("{dir}/glm5.2_fp4_b300_vllm_mtp.sh"), branches),
        (format!("{dir}/glm5.2_fp4_b200_vllm_mtp.sh"), hidden),
    ];
    let owned: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let (_, report) = audit_files(&owned);
    let printf_rules = rules(&report, &files[0].0);
    assert!(printf_rules.contains(&"sim-acc-throughput/simulated".to_string()) && printf_rules.contains(&"golden-al/match".to_string()), "{printf_rules:?}");
    let awk_rules = rules(&report, &files[1].0);
    assert!(awk_rules.contains(&"sim-acc-throughput/simulated".to_string()), "{awk_rules:?}");
    // Each arm is followed: where CONC <= 8 the launch drafts K=7 at 3.84, and the golden AL there is 3.91.
    let branch_rules = rules(&report, &files[2].0);
    assert!(branch_rules.contains(&"golden-al/mismatch".to_string()) && !branch_rules.iter().any(|r| r == "golden-al/no-cell"), "{branch_rules:?}");
    // The AL and the draft length are both written by the launch's --speculative-config: one evidence line in the script, not two.
    let golden = check(&report, "golden-al");
    let open = golden["findings"].as_array().unwrap().iter().find(|f| of_job(f, &files[2].0) && f["rule"] == "golden-al/mismatch").unwrap();
    let lines: Vec<(&str, u64)> = open["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["file"].as_str().unwrap(), e["line"].as_u64().unwrap()))
        .filter(|(f, _)| *f == files[2].0.as_str())
        .collect();
    assert_eq!(lines, [(files[2].0.as_str(), 8)], "{open}");
    assert!(open["message"].as_str().unwrap().contains("K=7 is 3.91"), "{open}");
    let hidden_rules = rules(&report, &files[3].0);
    assert!(
        hidden_rules.contains(&"sim-acc-throughput/undetermined".to_string()) && !hidden_rules.iter().any(|r| r.ends_with("no-drafting")),
        "{hidden_rules:?}"
    );
}

/// The golden-AL summary counts jobs, not findings: of the jobs that
/// simulate, how many miss their golden AL (a match is not a miss), and,
/// when none misses, how many could not be judged.
#[test]
fn the_golden_al_summary_counts_the_jobs_each_way() {
    const VLLM: &str = "samples/bundles/vllm-agentx-pass"; // 2 simulating jobs at the golden AL
    const MISS: &str = "samples/bundles/golden-al-fail"; // 1 job off its golden AL
    let summary = |args: &[&str]| {
        let mut all = vec!["audit"];
        all.extend_from_slice(args);
        all.extend(["--format", "json"]);
        let report = json(&auditor(&all));
        let c = check(&report, "golden-al");
        (c["status"].as_str().unwrap().to_string(), c["summary"].as_str().unwrap().to_string())
    };
    // PASS's 10 jobs have no table without --golden (no-table errors), and match with it.
    assert_eq!(summary(&[VLLM, MISS, PASS]), ("fail".into(), "11 of 13 simulating job(s) not at the golden AL".into()));
    assert_eq!(summary(&[VLLM, MISS, PASS, "--golden", GOLDEN]), ("fail".into(), "1 of 13 simulating job(s) not at the golden AL".into()));
    let tmp = tempfile::tempdir().unwrap();
    let log = "=== SGLANG_* env vars at launch ===\nSGLANG_SIMULATE_ACC_LEN=2.5\n===\n[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/data/models/SomeNewModel', speculative_algorithm='EAGLE', speculative_num_steps=3)\n";
    write_tree(tmp.path(), &[("logs/server.log", log)]);
    let unknown = tmp.path().to_str().unwrap();
    assert_eq!(summary(&[VLLM, unknown, "--golden", GOLDEN]), ("error".into(), "the golden AL of 1 of 3 simulating job(s) could not be determined".into()));
}

/// An eval job's env dump shows real verification only when it is whole
/// and covers SGLANG_SIMULATE_ACC_LEN: a dump cut short, or one of other
/// variables, says nothing about the knob.
#[test]
fn only_a_whole_dump_of_the_knobs_prefix_shows_real_verification() {
    const RF: &str = DSV4_RF;
    let args = "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/x', tp_size=8, speculative_algorithm='EAGLE')\n";
    let rules = |dump: &str| {
        let log = format!("{dump}{args}");
        let (_, report) = audit_files(&[(&format!("eval_server_logs_{RF}/server.log"), &log)]);
        let c = check(&report, "sim-acc-eval");
        c["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let whole = "=== SGLANG_* env vars at launch ===\nSGLANG_ENABLE_JIT=1\n===================================\n";
    assert_eq!(rules(whole), ["sim-acc-eval/real-verification"]);
    assert!(rules("=== SGLANG_* env vars at launch ===\nSGLANG_ENABLE_JIT=1\n").is_empty(), "a dump cut short");
    assert!(rules("=== NCCL_* env vars at launch ===\nNCCL_DEBUG=INFO\n===================================\n").is_empty(), "another prefix");
}

#[test]
fn vllm_mtp_method_names_take_the_mtp_table_and_a_draft_length_it_lacks_is_named() {
    let rf = "dsv4_tp8_conc14_kvnone_spec-mtp_fp4_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc14_b200-dgxc_3";
    let golden = |method: &str, k: u32, al: &str| {
        let cmd = format!(
            "vllm serve /data/models/DeepSeek-V4-Pro --tensor-parallel-size 8 --speculative-config '{{\"method\": \"{method}\", \"num_speculative_tokens\": {k}, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": {al}}}'\n"
        );
        let (_, report) = audit_files(&[(&format!("agentic_{rf}/results/vllm_command.txt"), &cmd)]);
        check(&report, "golden-al").clone()
    };
    // vLLM's model-specific MTP methods (deepseek_mtp, ...) are MTP: the dsv4 MTP table, K=3 thinking_on is 2.49.
    for method in ["mtp", "deepseek_mtp", "MTP"] {
        let c = golden(method, 3, "2.49");
        assert_eq!((c["status"].as_str(), c["findings"][0]["rule"].as_str()), (Some("pass"), Some("golden-al/match")), "{method}: {c:#}");
        assert!(c["findings"][0]["message"].as_str().unwrap().contains("dsv4_mtp"), "{method}: {c:#}");
    }
    // K=9 is not in the table: the error lists what the table has instead of guessing.
    let c = golden("deepseek_mtp", 9, "2.6");
    assert_eq!((c["status"].as_str(), c["findings"][0]["rule"].as_str()), (Some("fail"), Some("golden-al/no-cell")), "{c:#}");
    let message = c["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("has no value for thinking_on K=9 (it has thinking_off K=1,2,3,4,5,6,7,8; thinking_on K=1,2,3,4,5,6,7,8)"), "{message}");
}

#[test]
fn trtllm_forced_acceptance_is_simulation_on_eval_and_fixed_seq_jobs() {
    let script = "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78\ntrtllm-serve /data/models/MiniMax-M3 --tp_size 8 --extra_llm_api_options ser.yaml\n";
    let config = "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n  speculative_model: /data/models/MiniMax-M3-EAGLE3-GQA\n";
    let run = |dir: &str| audit_files(&[(&format!("{dir}/results/launch.sh"), script), (&format!("{dir}/results/ser.yaml"), config)]).1;
    // An eval-only job: its scores would not measure the model.
    let agentic = "minimaxm3_tp8_conc16_kvnone_spec-mtp_fp4_trt_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_0";
    let c = check(&run(&format!("eval_server_logs_{agentic}")), "sim-acc-eval").clone();
    assert_eq!(c["status"], "fail", "{c:#}");
    assert_eq!(finding_places(&c).iter().map(|(rule, _, _, line)| (rule.as_str(), *line)).collect::<Vec<_>>(), [("sim-acc-eval/simulated", 1)]);
    // A fixed-seq throughput job must show real acceptance.
    let fixed = "minimaxm3_1k1k_fp4_trt_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_0";
    let c = check(&run(&format!("server_logs_{fixed}")), "sim-acc-throughput").clone();
    assert_eq!(c["status"], "fail", "{c:#}");
    assert_eq!(finding_places(&c).iter().map(|(rule, _, _, line)| (rule.as_str(), *line)).collect::<Vec<_>>(), [("sim-acc-throughput/fixed-seq", 1)]);
}

#[test]
fn a_trtllm_launch_whose_speculative_settings_file_is_not_shown_is_undetermined() {
    let rf = "minimaxm3_tp8_conc16_kvnone_spec-mtp_fp4_trt_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_0";
    let script = "trtllm-serve /data/models/MiniMax-M3 --tp_size 8 --extra_llm_api_options ser.yaml\n";
    let (code, report) = audit_files(&[(&format!("server_logs_{rf}/results/launch.sh"), script)]);
    let c = check(&report, "sim-acc-throughput");
    assert_eq!((code, c["status"].as_str(), c["findings"][0]["rule"].as_str()), (3, Some("error"), Some("sim-acc-throughput/undetermined")), "{c:#}");
    assert!(c["findings"][0]["message"].as_str().unwrap().contains("reads its speculative settings from ser.yaml"), "{c:#}");
}

#[test]
fn an_eval_job_simulates_only_at_a_length_sglang_reads_as_on() {
    let rf = DSV4_RF;
    let log =
        "[2026-09-02 14:40:07] server_args=ServerArgs(model_path='/m', speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1)\n";
    // (value in the launch script, status, the one finding's rule, what its message says)
    let cases = [
        ("2.49", "fail", "sim-acc-eval/simulated", "SGLANG_SIMULATE_ACC_LEN=2.49"),
        // A value the input does not show: not known either way (one decision for every check).
        ("$GOLDEN_AL", "error", "sim-acc-eval/undetermined", "SGLANG_SIMULATE_ACC_LEN=$GOLDEN_AL"),
        ("-1", "pass", "sim-acc-eval/inactive-knob", "a negative value disables simulation"),
        ("off", "pass", "sim-acc-eval/inactive-knob", "not a number: SGLang keeps the default (-1, off)"),
    ];
    for (value, status, rule, said) in cases {
        let script = format!("export SGLANG_SIMULATE_ACC_LEN={value}\npython3 -m sglang.launch_server --model-path /m --tp 8\n");
        let (_, report) =
            audit_files(&[(&format!("eval_server_logs_{rf}/results/server.log"), log), (&format!("eval_server_logs_{rf}/results/launch.sh"), &script)]);
        let c = check(&report, "sim-acc-eval");
        let rules: Vec<&str> =
            c["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).filter(|r| *r != "sim-acc-eval/real-verification").collect();
        assert_eq!((c["status"].as_str().unwrap(), rules), (status, vec![rule]), "{value}: {c:#}");
        let message = c["findings"][0]["message"].as_str().unwrap();
        assert!(message.contains(said), "{value}: {message}");
    }
}

/// One decision of "simulation in effect" for every check: a length from an
/// expansion the input does not show is "not known" for the throughput job
/// (sim-acc-throughput undetermined, golden-al not judged) as for the eval job.
#[test]
fn a_length_the_input_does_not_show_is_not_known_to_every_check() {
    let rf = DSV4_RF;
    let log =
        "[2026-09-02 14:40:07] server_args=ServerArgs(model_path='/m', speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1)\n";
    let script = "export SGLANG_SIMULATE_ACC_LEN=$GOLDEN_AL\npython3 -m sglang.launch_server --model-path /m --tp 8\n";
    let (code, report) = audit_files(&[(&format!("server_logs_{rf}/results/server.log"), log), (&format!("server_logs_{rf}/results/launch.sh"), script)]);
    let c = check(&report, "sim-acc-throughput");
    assert_eq!((c["status"].as_str(), c["findings"][0]["rule"].as_str()), (Some("error"), Some("sim-acc-throughput/undetermined")), "{c:#}");
    let message = c["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("SGLANG_SIMULATE_ACC_LEN=$GOLDEN_AL (set from an expansion"), "{message}");
    assert_eq!(c["findings"][0]["evidence"][0]["line"], 1, "{c:#}");
    assert_ne!(check(&report, "golden-al")["status"], "fail");
    assert_eq!(code, 3, "nothing failed, part could not be judged");
}

#[test]
fn the_runners_acceptance_inputs_say_why_they_do_nothing() {
    // An eval-only job: the injector does nothing there, whatever SYNTHETIC_ACCEPTANCE says.
    let rf = DSV4_RF;
    let script = "export SYNTHETIC_ACCEPTANCE=true SYNTHETIC_ACCEPTANCE_LENGTH=2.49\npython3 -m sglang.launch_server --model-path /m --tp 8\n";
    let (_, report) = audit_files(&[(&format!("eval_server_logs_{rf}/results/launch.sh"), script)]);
    let c = check(&report, "sim-acc-eval");
    // Both inputs of the one statement are one finding, whose evidence (the statement) shows both.
    let f = &c["findings"][0];
    assert_eq!((c["findings"].as_array().unwrap().len(), f["rule"].as_str()), (1, Some("sim-acc-eval/runner-setting")), "{c:#}");
    let shown: Vec<&str> = f["evidence"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap()).collect();
    for name in ["SYNTHETIC_ACCEPTANCE=true", "SYNTHETIC_ACCEPTANCE_LENGTH=2.49"] {
        assert!(shown.iter().any(|t| t.contains(name)), "{name}: {c:#}");
    }
    assert!(f["message"].as_str().unwrap().ends_with("which does nothing on eval-only jobs"), "{f:#}");
    // A scan has no job: the input alone does nothing unless SYNTHETIC_ACCEPTANCE is true.
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[("launch.sh", "export SYNTHETIC_ACCEPTANCE_LENGTH=2.49\n")]);
    let report = json(&auditor(&["scan", tmp.path().to_str().unwrap(), "--format", "json"]));
    let c = check(&report, "sim-acc-eval");
    assert_eq!(c["findings"][0]["rule"], "sim-acc-eval/knob", "{c:#}");
    assert!(c["findings"][0]["message"].as_str().unwrap().contains("which does nothing unless SYNTHETIC_ACCEPTANCE is true"), "{c:#}");
}

#[test]
fn an_unset_token_mode_is_an_error_only_when_every_file_was_read() {
    let script = "export SGLANG_SIMULATE_ACC_LEN=3.51\nexport SGLANG_SIMULATE_ACC_METHOD=match-expected\n";
    let mut files = dspark_job(("launch.sh", script), true);
    let rules = |files: &[(String, String)]| {
        let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let (_, report) = audit_files(&refs);
        let c = check(&report, "sim-acc-throughput").clone();
        c["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert_eq!(rules(&files), ["sim-acc-throughput/token-mode", "sim-acc-throughput/simulated"]);
    // A file of the job that could not be read may set it.
    files.push((format!("server_logs_{DSV41_RF}/results/setup.zip"), "PK\u{3}\u{4} not really a zip".to_string()));
    assert_eq!(rules(&files), ["sim-acc-throughput/undetermined", "sim-acc-throughput/simulated"]);
}

/// (rule, lines of its evidence) of each finding of a check.
fn rules_and_lines(c: &Value) -> Vec<(String, Vec<u64>)> {
    c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["evidence"].as_array().unwrap().iter().filter_map(|e| e["line"].as_u64()).collect()))
        .collect()
}

#[test]
fn an_sglang_setting_takes_effect_only_beside_a_length_in_its_own_environment() {
    let rf = DSV4_RF;
    let recipe = "backend:\n  prefill_environment:\n    SGLANG_SIMULATE_ACC_METHOD: match-expected\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: '2.49'\n    SGLANG_SIMULATE_ACC_METHOD: match-expected\n";
    let (_, report) = audit_files(&[(&format!("eval_server_logs_{rf}/results/config.yaml"), recipe)]);
    let c = check(&report, "sim-acc-eval");
    // The decode role simulates (lines 5-6); the prefill role's method has no length beside it (line 3).
    let expected = [("sim-acc-eval/simulated".to_string(), vec![5, 6]), ("sim-acc-eval/inactive-knob".to_string(), vec![3])];
    assert_eq!(rules_and_lines(c), expected, "{c:#}");
    assert!(c["findings"][1]["message"].as_str().unwrap().ends_with("no effect without SGLANG_SIMULATE_ACC_LEN"), "{c:#}");
}

#[test]
fn an_atom_eval_job_given_an_acceptance_length_or_rate_simulates() {
    let dir = "eval_server_logs_dsv4_tp8_conc48_kvnone_spec-mtp_fp4_atom_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc48_mi355x-amds_4";
    let launch =
        "python3 -u -m atom.entrypoints.openai_server --model /data/models/DeepSeek-V4-Pro --tensor-parallel-size 8 --method mtp --num-speculative-tokens 3";
    for (flag, setting) in [("--spec-decode-acceptance-length 2.49", "2.49"), ("--spec-decode-acceptance-rate 0.83", "0.83")] {
        let (_, report) = audit_files(&[(&format!("{dir}/results/server_command.txt"), &format!("{launch} {flag}\n"))]);
        let c = check(&report, "sim-acc-eval");
        assert_eq!(rules_and_lines(c), [("sim-acc-eval/simulated".to_string(), vec![1])], "{flag}: {c:#}");
        // The one setting given, not also a length derived from a rate.
        let message = c["findings"][0]["message"].as_str().unwrap();
        assert_eq!(message.matches(setting).count(), 1, "{message}");
        assert!(!message.contains(", "), "one knob: {message}");
    }
}
