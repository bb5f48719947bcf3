//! `auditor evidence` on logs as they arrive from the wild.

use crate::common::*;

#[test]
fn wrapped_coloured_truncated_server_args_keep_exactly_the_fields_before_the_cut() {
    let out = auditor(&["evidence", "tests/fixtures/logs/sglang_wrapped_ansi_truncated.log"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = json(&out);
    let keys: Vec<&str> = v["server_args"].as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = vec![
        "model_path",
        "tokenizer_path",
        "speculative_draft_model_path",
        "load_format",
        "model_loader_extra_config",
        "trust_remote_code",
        "dtype",
        "quantization",
        "kv_cache_dtype",
        "tp_size",
        "ep_size",
        "speculative_algorithm",
        "speculative_num_steps",
        "speculative_eagle_topk",
        "cuda_graph_config",
        "speculative_num_draft_tokens",
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

#[test]
fn fuzz_regressions_do_not_panic() {
    // Each file is a crashing input found by `cargo fuzz run <target>`,
    // named `<target>-<what>` (fuzz/README.md lists them).
    let kinds = ["server.log", "run.sh", "sglang_command.txt", "sitecustomize.py", "config.yaml", "meta_env.json"];
    for entry in std::fs::read_dir(root().join("tests/fixtures/fuzz")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let fixture = path.file_name().unwrap().to_string_lossy().into_owned();
        let (name, content) = match fixture.split_once('-').map(|(target, _)| target) {
            // evidence_text: the first byte picks the file kind, the rest is the file.
            Some("evidence_text") => (kinds[usize::from(bytes[0]) % kinds.len()], &bytes[1..]),
            Some("yaml_env") => ("recipe.yaml", &bytes[..]),
            _ => panic!("{fixture}: name it <fuzz target>-<what>"),
        };
        std::fs::write(tmp.path().join(name), content).unwrap();
        let out = auditor(&["evidence", tmp.path().join(name).to_str().unwrap()]);
        assert!(!stderr(&out).contains("panicked"), "{}: {}", path.display(), stderr(&out));
        assert!(matches!(code(&out), 0 | 3), "{}: exit {}", path.display(), code(&out));
        if name.ends_with(".yaml") {
            // The yaml_env target's property: evidence lines lie inside the file, counted as YAML does.
            let text = String::from_utf8_lossy(content).replace("\r\n", "\n");
            let lines = 1 + text.bytes().filter(|&b| b == b'\n' || b == b'\r').count() as u64;
            for (var, fact) in json(&out)["env"].as_object().unwrap() {
                let line = fact["line"].as_u64().unwrap();
                assert!((1..=lines).contains(&line), "{fixture}: {var} at line {line} of {lines}");
            }
        }
    }
}
