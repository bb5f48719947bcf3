//! `auditor evidence` on logs as they arrive from the wild.

mod common;

use common::*;

#[test]
fn wrapped_coloured_truncated_server_args_keep_exactly_the_fields_before_the_cut() {
    let out = auditor(&["evidence", "tests/fixtures/logs/sglang_wrapped_ansi_truncated.log"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = json(&out);
    let keys: Vec<&str> = v["server_args"].as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = vec![
        "model_path", "tokenizer_path", "speculative_draft_model_path", "load_format", "model_loader_extra_config",
        "trust_remote_code", "dtype", "quantization", "kv_cache_dtype", "tp_size", "ep_size", "speculative_algorithm",
        "speculative_num_steps", "speculative_eagle_topk", "cuda_graph_config", "speculative_num_draft_tokens",
        "mem_fraction_static",
    ];
    expected.sort();
    assert_eq!(keys, expected, "exactly the fields before the cut; chat_template is unknown");
    assert_eq!(v["server_args"]["model_path"], "/data/models/DeepSeek-V4-Pro");
    assert_eq!(v["server_args"]["speculative_draft_model_path"], "/data/models/DeepSeek-V4-Pro");
    assert_eq!(v["server_args"]["cuda_graph_config"]["decode"]["bs"], serde_json::json!([1, 2, 4]));
    assert_eq!(v["server_args"]["model_loader_extra_config"], r#"{"enable_multithread_load": true}"#);
    let source = &v["server_args_sources"][0];
    assert_eq!(source["complete"], false);
    assert!(source["stop"].as_str().unwrap().contains("after field mem_fraction_static"), "{source}");
    assert_eq!(v["summary"]["tensor_parallel"], 8);
    assert_eq!(v["speculative"]["draft_length"], 3);
    assert_eq!(v["speculative"]["method"], "eagle");
}
