//! `auditor evidence`: what the parsers extract, as JSON.

use crate::common::*;

#[test]
fn command_file_decodes_printf_q_and_names_the_engine() {
    let dir = std::fs::read_dir(root().join(PASS)).unwrap();
    let agentic = dir.filter_map(Result::ok).find(|e| e.file_name().to_string_lossy().starts_with("agentic_")).unwrap();
    let path = agentic.path().join("results/sglang_command.txt");
    let out = auditor(&["evidence", path.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["engine"], "sglang");
    let argv: Vec<&str> = v["commands"][0]["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(&argv[..3], ["python3", "-m", "sglang.launch_server"]);
    assert!(argv.contains(&r#"{"enable_multithread_load": true}"#), "%q decoded: {argv:?}");
}

#[test]
fn bundle_evidence_lists_jobs_with_effective_env() {
    let out = auditor(&["evidence", FAIL_INHERITED]);
    let v = json(&out);
    let jobs = v["jobs"].as_array().unwrap();
    let job = jobs.iter().find(|j| j["job"]["kind"] == "throughput").unwrap();
    let var = &job["env"]["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"];
    assert_eq!((var["value"].as_str(), var["effective"].as_bool()), (Some("True"), Some(true)));
    assert_eq!(var["origin"], "dump-block");
    assert_eq!(job["env"]["SGLANG_SIMULATE_ACC_LEN"]["effective"], 2.49);
    assert_eq!(job["env_dumps"][0]["covers_prefix"], "SGLANG_");
}
