//! Every shape in which an environment variable reaches a server, each in a
//! sample bundle of its own (`samples/bundles/env-shapes/`): `forbidden-env`
//! fails each `*-fail` bundle at the line that sets the variable, and passes
//! the bundle where it is only mentioned, disabled or unset.

use crate::common::*;

fn shapes() -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(root().join("samples/bundles/env-shapes")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn every_shape_fails_forbidden_env_at_the_setting_line() {
    let fails: Vec<String> = shapes().into_iter().filter(|n| n.ends_with("-fail")).collect();
    assert!(fails.len() >= 11, "{fails:?}");
    // Judged by the line reader and by the bash interpreter (a `docker run
    // -e` is the container command's environment there).
    for (shape, flags) in fails.iter().flat_map(|s| [(s, &[][..]), (s, &["--interpret-scripts"][..])]) {
        let out = audit(&[&[format!("samples/bundles/env-shapes/{shape}").as_str(), "--format", "json"], flags].concat());
        assert_eq!(code(&out), 1, "{shape} {flags:?}: {}", stdout(&out));
        let report = json(&out);
        let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
        let finding = &check["findings"][0];
        assert_eq!(finding["rule"], "forbidden-env/enabled", "{shape}");
        let evidence = &finding["evidence"][0];
        assert!(evidence["line"].as_u64().unwrap() >= 1, "{shape}");
        assert!(evidence["text"].as_str().unwrap().contains("NVFP4_CKPT_FP8_NEXTN_MOE"), "{shape}: {evidence}");
    }
}

#[test]
fn mentions_disabled_and_unset_pass() {
    let out = audit(&["samples/bundles/env-shapes/mentions-pass", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    assert_eq!(check["status"], "pass");
    assert!(check["findings"].as_array().unwrap().iter().all(|f| f["severity"] != "error"));
}

#[test]
fn yaml_shape_reports_how_the_value_was_read() {
    let out = audit(&["samples/bundles/env-shapes/yaml-anchor-merge-fail", "--format", "json"]);
    let report = json(&out);
    let finding = &report["checks"][0]["findings"][0];
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("=True (written \"yes\" in YAML") && message.contains("recipe:"), "{message}");
    // Both roles get the flag: prefill through the anchor, decode through the merge key.
    let files: Vec<&str> = finding["evidence"].as_array().unwrap().iter().map(|e| e["file"].as_str().unwrap()).collect();
    assert!(files.iter().all(|f| f.ends_with("multinode_server_logs.tar.gz/logs/config.yaml")), "{files:?}");
}
