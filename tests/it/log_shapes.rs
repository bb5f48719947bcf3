//! Commands and environment inside logs, in every shape a log holds them
//! (`tests/fixtures/logs/wild/`): bare launch lines of console captures,
//! commands after shell prompts, `docker run -e`, pasted compose
//! `environment:` blocks, `env`/`printenv` listings and `set -x` traces
//! under log decorations, JSON arguments over lines or shell-escaped. Each
//! shape has a `fail/` log that sets `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1`
//! that way and a `pass/` log where the same text is a comment, an `echo`
//! or prose, beside a harmless variable set the same way.

use crate::common::*;

const VAR: &str = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE";
const WILD: &str = "tests/fixtures/logs/wild";
const SHAPES: [&str; 16] = [
    "bare-launch-console",
    "bare-wrapped-launch",
    "compose-list",
    "compose-map",
    "docker-run",
    "env-listing",
    "json-arg-escaped",
    "json-arg-over-lines",
    "printenv-compose-service",
    "prompt-container",
    "prompt-dollar",
    "prompt-glued",
    "prompt-hash",
    "prompt-user-host",
    "prompt-venv-root",
    "set-x-ci-trace",
];

fn path(side: &str, shape: &str) -> String {
    format!("{WILD}/{side}/{shape}.log")
}

/// Exit code and the forbidden-env check of `auditor audit FILE`.
fn forbidden_env(file: &str) -> (i32, serde_json::Value) {
    let out = audit(&[file, "--format", "json"]);
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap().clone();
    (code(&out), check)
}

fn evidence(file: &str) -> serde_json::Value {
    let out = auditor(&["evidence", file]);
    assert_eq!(code(&out), 0, "{file}: {}", stderr(&out));
    json(&out)
}

/// Physical line `n` (1-based) of a fixture.
fn line_of(file: &str, n: u64) -> String {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    text.lines().nth(n as usize - 1).unwrap_or_default().to_string()
}

#[test]
fn every_fixture_is_a_listed_shape() {
    for side in ["fail", "pass"] {
        let mut names: Vec<String> = std::fs::read_dir(root().join(WILD).join(side))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".log").to_string())
            .collect();
        names.sort();
        assert_eq!(names, SHAPES, "{side}/");
    }
}

#[test]
fn the_flag_set_in_each_shape_fails_at_the_line_that_sets_it() {
    for shape in SHAPES {
        let file = path("fail", shape);
        let (code, check) = forbidden_env(&file);
        assert_eq!((code, check["status"].as_str()), (1, Some("fail")), "{shape}: {check}");
        let finding = &check["findings"][0];
        assert_eq!(finding["rule"], "forbidden-env/enabled", "{shape}");
        let message = finding["message"].as_str().unwrap();
        assert!(!message.contains('\\'), "{shape}: a value never keeps a continuation's backslash: {message}");
        let at = &finding["evidence"][0];
        assert!(at["file"].as_str().unwrap().ends_with(&format!("{shape}.log")), "{shape}: {at}");
        let line = at["line"].as_u64().unwrap();
        assert!(line_of(&file, line).contains(VAR), "{shape}: line {line} does not set {VAR}");
        // Every assignment and launch read from the log says where it was written.
        let ev = evidence(&file);
        for (name, a) in ev["env"].as_object().unwrap() {
            let n = a["line"].as_u64().unwrap_or_else(|| panic!("{shape}: {name} has no line"));
            assert!(line_of(&file, n).contains(name.as_str()), "{shape}: {name} at line {n}");
        }
        for c in ev["commands"].as_array().unwrap() {
            assert!(c["provenance"]["line"].as_u64().is_some(), "{shape}: {c}");
        }
    }
}

#[test]
fn the_same_text_in_a_comment_echo_or_prose_passes() {
    for shape in SHAPES {
        let file = path("pass", shape);
        let (_, check) = forbidden_env(&file);
        // `pass`, not `na`: the shape was read, and its harmless variable
        // with it. A shape that renders no environment is undetermined
        // (absence is not evidence), never failed.
        let open = check["findings"].as_array().unwrap().iter().any(|f| f["rule"] == "forbidden-env/undetermined");
        assert_eq!(check["status"], if open { "error" } else { "pass" }, "{shape}: {check}");
        assert!(
            check["findings"].as_array().unwrap().iter().all(|f| f["severity"] != "error" || f["rule"] == "forbidden-env/undetermined"),
            "{shape}: {check}"
        );
        let ev = evidence(&file);
        let env = ev["env"].as_object().unwrap();
        assert!(env.keys().any(|k| k != VAR), "{shape}: nothing read from the shape: {env:?}");
    }
}

#[test]
fn launches_over_lines_keep_their_arguments_whole_and_their_lines() {
    let arg_after = |ev: &serde_json::Value, flag: &str| -> String {
        let argv: Vec<&str> = ev["commands"][0]["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        let k = argv.iter().position(|a| *a == flag).unwrap_or_else(|| panic!("{flag} in {argv:?}"));
        argv[k + 1].to_string()
    };
    let ev = evidence(&path("fail", "json-arg-over-lines"));
    let json: serde_json::Value = serde_json::from_str(&arg_after(&ev, "--json-model-override-args")).unwrap();
    assert_eq!(json["rope_scaling"]["factor"], 4.0);
    assert_eq!(arg_after(&ev, "--speculative-num-steps"), "3", "the words after the closing quote belong to the launch");
    let ev = evidence(&path("fail", "json-arg-escaped"));
    let json: serde_json::Value = serde_json::from_str(&arg_after(&ev, "--speculative-config")).unwrap();
    assert_eq!(json["method"], "deepseek_mtp");

    // A pasted session: `\` continuations with bash's `> ` prompt on each line.
    let ev = evidence(&path("fail", "prompt-container"));
    assert_eq!(ev["env"]["SGLANG_ENABLE_SPEC_V2"]["line"], 6, "each assignment at its own physical line");
    assert_eq!(arg_after(&ev, "--speculative-num-steps"), "3");
    // docker run: `-e NAME="1"` is the container's (the server's) environment, unquoted.
    let ev = evidence(&path("fail", "docker-run"));
    let spec = &ev["env"]["SGLANG_ENABLE_SPEC_V2"];
    assert_eq!((spec["value"].as_str(), spec["origin"].as_str(), spec["line"].as_u64()), (Some("1"), Some("container"), Some(9)));
    // A compose map: the value as compose's YAML reads it.
    let ev = evidence(&path("fail", "compose-map"));
    assert_eq!(ev["env"][VAR]["value"], "True");
    assert_eq!(ev["env"][VAR]["origin"], "container");
}
