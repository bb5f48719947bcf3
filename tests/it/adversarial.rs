//! Issue 24's adversarial corpus, one class at a time: a one-line edit a
//! submitter who wants to pass would try, which bash really honours, on a
//! launch script in the shape of the snapshot's. Each asserts the error, its
//! check and the line that commits it, in the full audit and with
//! `--changed-since` (the edit as the pull request's only change); the
//! honest twin of a form passes.

use crate::common::*;

const SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang_mtp.sh";

/// The script's head: sourced library, then the edit at line 3, then the launch.
fn script(edit: &str) -> String {
    format!(
        "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n{edit}\npython3 -m sglang.launch_server --model-path /models/dsv4 --tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3\n"
    )
}

/// (rule, file, line) of the forbidden-env errors of a report that count.
fn forbidden(report: &serde_json::Value) -> Vec<(String, String, u64)> {
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error" && f.get("pre_existing").is_none())
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["evidence"][0]["file"].as_str().unwrap().to_string(), f["evidence"][0]["line"].as_u64().unwrap()))
        .collect()
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("git").current_dir(dir).args(args).status().expect("run git");
    assert!(status.success(), "git {args:?}");
}

/// Every way below sets SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE to true in the
/// engine's environment, as bash runs it.
const FORMS: &[(&str, &str, u64)] = &[
    ("command export", "command export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", 3),
    ("builtin export", "builtin export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", 3),
    ("re-assignment of an exported name", "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0; SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", 3),
    ("printf -v, then export", "printf -v SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE '%s' 1; export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", 3),
    ("read from a here-string, then export", "read -r SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE <<< 1; export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", 3),
    ("eval", "eval \"export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\"", 3),
    ("a name bash computes", "P=SGLANG_NVFP4; export ${P}_CKPT_FP8_NEXTN_MOE=1", 3),
    ("an assignment printf builds", "export \"$(printf 'SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=%d' 1)\"", 3),
    ("arithmetic", "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=$((0+1))", 3),
    ("a substitution", "Z=0; export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=${Z/0/1}", 3),
    ("a substring", "W=10; export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=${W:0:1}", 3),
    ("set -a and a sourced file the script wrote", "cat > /tmp/e.sh <<EOF\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nEOF\nset -a; . /tmp/e.sh; set +a", 4),
    ("a sourced file the script wrote", "cat > /tmp/e.sh <<'EOF'\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nEOF\nsource /tmp/e.sh", 4),
    ("an alias for export", "shopt -s expand_aliases; alias ex=export; ex SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", 3),
    ("env inside the launch array", "CMD=(env SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 python3 -m sglang.launch_server --model-path /m); \"${CMD[@]}\"", 3),
];

#[test]
fn the_forbidden_flag_set_in_ways_bash_honours_is_an_error_at_its_line() {
    for (what, edit, line) in FORMS {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, &script(edit))]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        let got = forbidden(&report);
        assert!(got.contains(&("forbidden-env/enabled".to_string(), SCRIPT.to_string(), *line)), "{what}: {got:?}");

        // As a pull request's only change, with --changed-since.
        git(tmp.path(), &["init", "-q"]);
        std::fs::write(tmp.path().join(SCRIPT), script("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0")).unwrap();
        git(tmp.path(), &["add", "-A"]);
        git(tmp.path(), &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
        std::fs::write(tmp.path().join(SCRIPT), script(edit)).unwrap();
        let out = audit(&[tmp.path().to_str().unwrap(), "--changed-since", "HEAD", "--format", "json"]);
        assert_eq!(code(&out), 1, "{what}: {}", stdout(&out));
        assert!(forbidden(&json(&out)).contains(&("forbidden-env/enabled".to_string(), SCRIPT.to_string(), *line)), "{what}");
    }
}

/// The honest twins: the flag disabled the same ways is no error.
#[test]
fn the_same_forms_disabling_the_flag_pass() {
    for (what, edit, _) in FORMS {
        let honest = edit
            .replace("NEXTN_MOE=1", "NEXTN_MOE=0")
            .replace("'%s' 1", "'%s' 0")
            .replace("<<< 1", "<<< 0")
            .replace("%d' 1", "%d' 0")
            .replace("$((0+1))", "$((1-1))")
            .replace("${Z/0/1}", "${Z/1/0}")
            .replace("W=10", "W=01");
        let honest = honest.replace("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0; SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0", "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0");
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, &script(&honest))]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        assert!(forbidden(&report).is_empty(), "{what}: {honest}: {:?}", forbidden(&report));
    }
}

/// Honest gating in the other spellings bash accepts: a `case` over
/// `EVAL_ONLY` and `if ! "${EVAL_ONLY:-false}"` (the value run as the
/// `true`/`false` builtin). Simulation set under them is the throughput
/// run's only: the eval-only job does not simulate.
#[test]
fn honest_eval_only_gates_in_other_spellings_add_no_error() {
    let launch = "python3 -m sglang.launch_server --model-path /models/dsv4 --tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3\nif [ \"$EVAL_ONLY\" = true ]; then run_eval; fi\n";
    let gates = [
        "case \"${EVAL_ONLY:-false}\" in\n  true) ;;\n  *) export SGLANG_SIMULATE_ACC_LEN=2.49 ;;\nesac\n",
        "if ! \"${EVAL_ONLY:-false}\"; then\n  export SGLANG_SIMULATE_ACC_LEN=2.49\nfi\n",
    ];
    for gate in gates {
        let text = format!("#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n{gate}{launch}");
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, &text)]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        let eval = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sim-acc-eval").unwrap();
        assert_eq!(eval["status"], "pass", "{gate}: {eval:#}");
        let jobs: Vec<&str> = report["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_str().unwrap()).collect();
        assert!(jobs.contains(&format!("{SCRIPT} (eval-only)").as_str()), "{jobs:?}");
    }
}

/// A plain re-assignment of the simulated AL after its gated export: bash
/// updates the exported value of the throughput run, so golden-al judges the
/// second value at its line, and the eval-only run (where it was never
/// exported) stays free of simulation.
#[test]
fn a_re_assigned_simulated_al_is_judged_where_it_takes_effect() {
    let launch = "python3 -m sglang.launch_server --model-path /models/dsv4 --tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3\nif [ \"$EVAL_ONLY\" = true ]; then run_eval; fi\n";
    let gate = "if [ \"$EVAL_ONLY\" != true ]; then export SGLANG_SIMULATE_ACC_LEN=2.49; fi\n";
    let check = |text: &str, id: &str| {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, text)]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone()
    };
    let head = "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n";
    let honest = format!("{head}{gate}{launch}");
    assert_eq!(check(&honest, "golden-al")["status"], "pass");
    let bent = format!("{head}{gate}SGLANG_SIMULATE_ACC_LEN=3.10\n{launch}");
    let golden = check(&bent, "golden-al");
    let mismatch = golden["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "golden-al/mismatch").unwrap_or_else(|| panic!("{golden:#}"));
    assert_eq!(mismatch["evidence"][0]["line"], 4, "{mismatch}");
    assert_eq!(check(&bent, "sim-acc-eval")["status"], "pass", "never exported in the eval-only run");
}

/// Ten lines of aliases that expand past the alias budget, prepended to a
/// master config: the file is named as not examined and the verdict stays
/// off PASS, in the full audit and with `--changed-since`.
#[test]
fn a_yaml_alias_bomb_never_hides_jobs_behind_a_pass() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (prev, name) in "abcdefghi".chars().zip("bcdefghij".chars()) {
        bomb.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let entry = "dsv4-fp4-b200-sglang-mtp:\n  image: lmsysorg/sglang:v0.5.9\n  model: deepseek-ai/DeepSeek-V4-Pro\n  model-prefix: dsv4\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - search-space:\n      - { tp: 8, spec-decoding: mtp, conc-list: [1] }\n";
    let master = "configs/nvidia-master.yaml";
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, &script("")), (master, entry)]);
    git(tmp.path(), &["init", "-q"]);
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
    std::fs::write(tmp.path().join(master), format!("{bomb}{entry}")).unwrap();
    for extra in [&[][..], &["--changed-since", "HEAD"][..]] {
        let mut args = vec![tmp.path().to_str().unwrap(), "--format", "json"];
        args.extend_from_slice(extra);
        let out = audit(&args);
        assert_eq!(code(&out), 3, "{extra:?}: {}", stdout(&out));
        let report = json(&out);
        let unread = report["files"].as_array().unwrap().iter().find(|f| f["path"] == master).unwrap();
        assert_ne!(unread["status"], "read", "{unread}");
        assert!(unread["reason"].as_str().unwrap_or("").contains("alias"), "{unread}");
    }
    // Nesting past the parser's limit at the end of a recipe hides it the same way, and is named the same way.
    let recipe = "benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4/deep.yaml";
    let deep = format!(
        "backend:\n  type: sglang\n  decode_environment:\n    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: \"1\"\nx: {}{}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(recipe, &deep)]);
    let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let report = json(&out);
    assert_ne!(report["files"][0]["status"], "read", "{}", report["files"]);
}

/// Engine installs and writes whatever names them: a wheel through
/// `pip3.12`, an extra index through `python3.12 -m pip`, a fork through
/// `uv pip`, an archive extracted into site-packages or /sgl-workspace. Each
/// is an error at its line; packing the engine tree into an archive is not.
#[test]
fn engine_installs_and_extractions_in_every_spelling_are_errors() {
    let script = concat!(
        "#!/usr/bin/env bash\n",
        "pip3.12 install /tmp/wheels/sglang-0.5.9-py3-none-any.whl\n",
        "python3.12 -m pip install --extra-index-url https://example.org/simple vllm\n",
        "uv pip install \"sglang @ git+https://github.com/someone/sglang@abc123\"\n",
        "tar -xzf /tmp/patched.tgz -C /usr/local/lib/python3.12/dist-packages/sglang\n",
        "unzip -o /tmp/p.zip -d /sgl-workspace/sglang/python\n",
        "tar -czf /tmp/box.tar.gz -C /sgl-workspace .\n",
        "python3 -m sglang.launch_server --model-path /m\n",
    );
    let path = "benchmarks/single_node/x_fp8_h200.sh";
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(path, script)]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "engine-patch").unwrap();
    let mut errors: Vec<u64> =
        check["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").map(|f| f["evidence"][0]["line"].as_u64().unwrap()).collect();
    errors.sort();
    assert_eq!(errors, [2, 3, 4, 5, 6], "{check:#}");
}

/// Code the gate could not read: an engine `sed -i` base64-encoded and piped
/// to `bash` is an engine patch at the pipeline's line; an export in the
/// same payload dies with the child shell and is no forbidden-env error.
#[test]
fn a_base64_payload_piped_to_a_shell_is_read() {
    use base64::Engine as _;
    let payload = base64::engine::general_purpose::STANDARD
        .encode("sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n");
    let path = "benchmarks/single_node/x_fp8_h200.sh";
    for pipeline in [format!("echo {payload} | base64 -d | bash"), format!("base64 --decode <<< \"{payload}\" | sh")] {
        let script = format!("#!/usr/bin/env bash\n{pipeline}\npython3 -m sglang.launch_server --model-path /m\n");
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[(path, &script)]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        let check = |id: &str| report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
        let patch = check("engine-patch");
        let edit = patch["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "engine-patch/edit").unwrap_or_else(|| panic!("{pipeline}: {patch:#}"));
        assert_eq!(edit["evidence"][0]["line"], 2);
        assert!(forbidden(&report).is_empty(), "{pipeline}: the child shell's export does not reach the launch");
    }
    // Decoded inside `eval`, the payload runs in the script's own shell: its export reaches the launch.
    let script = format!("#!/usr/bin/env bash\neval \"$(echo {payload} | base64 -d)\"\npython3 -m sglang.launch_server --model-path /m\n");
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(path, &script)]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    assert_eq!(forbidden(&report), [("forbidden-env/enabled".to_string(), path.to_string(), 2)]);
}
