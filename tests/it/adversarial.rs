//! Issue 24's adversarial corpus, one class at a time: a one-line edit a
//! submitter who wants to pass would try, which bash really honours, on a
//! launch script in the shape of the snapshot's. Each asserts the error, its
//! check and the line that commits it, in the full audit and with
//! `--changed-since` (the edit as the pull request's only change); the
//! honest twin of a form passes.

use crate::common::*;

pub(crate) const SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang_mtp.sh";

/// A launch script of no known model: checks that need none (engine-patch,
/// arch-override, draft-precision) judge it alone.
const LAUNCHER: &str = "benchmarks/single_node/x_fp8_h200.sh";

/// The script's head: sourced library, then the edit at line 3, then the launch.
pub(crate) fn script(edit: &str) -> String {
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

/// The lines of a check's error findings.
fn error_lines(report: &serde_json::Value, id: &str) -> Vec<u64> {
    check(report, id)["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").map(|f| f["evidence"][0]["line"].as_u64().unwrap()).collect()
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("git").current_dir(dir).args(args).status().expect("run git");
    assert!(status.success(), "git {args:?}");
}

/// The tree as it stands, committed as the pull request's base.
fn commit_base(dir: &std::path::Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
}

/// Whether a report has an error of check `id` citing (`file`, `line`),
/// not marked as pre-existing.
fn has_error_at(report: &serde_json::Value, id: &str, file: &str, line: u64) -> bool {
    check(report, id)["findings"].as_array().unwrap().iter().any(|f| {
        f["severity"] == "error"
            && f.get("pre_existing").is_none()
            && f["evidence"].as_array().unwrap().iter().any(|e| e["file"] == file && e["line"].as_u64() == Some(line))
    })
}

/// One case of the corpus as a pull request makes it: `files` is the tree
/// at the base (honest), `edit` the new text of `path`. The base has no
/// error in check `id`; the edited tree has one citing (`path`, `line`),
/// in the full audit and with `--changed-since` the base, whose exit is 1.
fn assert_caught(what: &str, files: &[(&str, &str)], path: &str, edit: &str, id: &str, line: u64) {
    assert_caught_with(&[], what, files, path, edit, id, (path, line));
}

/// [`assert_caught`] with more audit arguments (`--interpret-scripts`).
/// The error cites `at` (file, line), in the edited file or in one it reaches.
fn assert_caught_with(flags: &[&str], what: &str, files: &[(&str, &str)], path: &str, edit: &str, id: &str, at: (&str, u64)) {
    let (file, line) = at;
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), files);
    let dir = tmp.path().to_str().unwrap();
    let run = |extra: &[&str]| audit(&[&[dir, "--format", "json"], extra, flags].concat());
    let base = json(&run(&[]));
    assert!(error_lines(&base, id).is_empty(), "{what}: the honest base: {:#}", check(&base, id));
    commit_base(tmp.path());
    write_tree(tmp.path(), &[(path, edit)]);
    let full = json(&run(&[]));
    assert!(has_error_at(&full, id, file, line), "{what}: full audit: {:#}", check(&full, id));
    let out = run(&["--changed-since", "HEAD"]);
    assert_eq!(code(&out), 1, "{what}: --changed-since: {}", stdout(&out));
    assert!(has_error_at(&json(&out), id, file, line), "{what}: --changed-since: {:#}", check(&json(&out), id));
}

/// Every way below sets SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE to true in the
/// engine's environment, as bash runs it.
pub(crate) const FORMS: &[(&str, &str, u64)] = &[
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
    ("an alternate value", "MODEL=dsv4; export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=${MODEL:+1}", 3),
    ("set -a and a sourced file the script wrote", "cat > /tmp/e.sh <<EOF\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nEOF\nset -a; . /tmp/e.sh; set +a", 4),
    ("a sourced file the script wrote", "cat > /tmp/e.sh <<'EOF'\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nEOF\nsource /tmp/e.sh", 4),
    // Bash expands aliases as it reads a line: one defined on the line that uses it does nothing.
    ("an alias for export", "shopt -s expand_aliases\nalias ex=export\nex SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", 5),
    ("env inside the launch array", "CMD=(env SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 python3 -m sglang.launch_server --model-path /m); \"${CMD[@]}\"", 3),
    ("a file printf wrote, sourced under set -a", "printf 'SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\\n' > /tmp/e.sh; set -a; . /tmp/e.sh; set +a", 3),
    ("a file echo appended to, sourced", "echo 'export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1' >> /tmp/e.sh; source /tmp/e.sh", 3),
    ("a base64 payload sourced from a process substitution", "source <(echo ZXhwb3J0IFNHTEFOR19OVkZQNF9DS1BUX0ZQOF9ORVhUTl9NT0U9MQ== | base64 -d)", 3),
    (
        "a hex payload decoded by xxd and sourced",
        "source <(echo 6578706f72742053474c414e475f4e564650345f434b50545f4650385f4e4558544e5f4d4f453d31 | xxd -r -p)",
        3,
    ),
    ("a for loop exporting each of its words", "for kv in NCCL_NVLS_ENABLE=1 SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1; do export \"$kv\"; done", 3),
    ("export of a written file's words", "cat > /tmp/.env <<'EOF'\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nEOF\nexport $(grep -v '^#' /tmp/.env | xargs)", 6),
    (
        "env of a written file's words",
        "cat > /tmp/.env <<'EOF'\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nEOF\nenv $(cat /tmp/.env) python3 -m sglang.launch_server --model-path /m",
        6,
    ),
    (
        "BASH_ENV sourced by the bash -c that launches",
        "cat > /tmp/e.sh <<'EOF'\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nEOF\nexport BASH_ENV=/tmp/e.sh\nbash -c 'exec \"$@\"' _ python3 -m sglang.launch_server --model-path /m",
        7,
    ),
    ("a while-read loop over a heredoc", "while read -r k v; do export \"$k=$v\"; done <<EOF\nNCCL_NVLS_ENABLE 1\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE 1\nEOF", 5),
    ("a while-read loop over a here-string", "while IFS== read -r k v\ndo\n  export \"$k=$v\"\ndone <<< SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", 6),
    (
        "a while-read loop over a file printf wrote",
        "printf 'SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\\n' > /tmp/l; while read -r kv; do export \"$kv\"; done < /tmp/l",
        3,
    ),
    ("printf hex escapes evaluated", "eval \"$(printf '\\x65\\x78\\x70\\x6f\\x72\\x74 SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1')\"", 3),
];

/// Each form is an error at its line (an append onto a file the input
/// lacks is still sourced for what the script wrote). A setting whose text
/// a heredoc holds is cited at the heredoc's line, where it was written,
/// not at the statement that reads it.
#[test]
fn the_forbidden_flag_set_in_ways_bash_honours_is_an_error_at_its_line() {
    let written_at = |what: &str| match what {
        "export of a written file's words" | "env of a written file's words" | "BASH_ENV sourced by the bash -c that launches" => Some(4),
        _ => None,
    };
    for (what, edit, line) in FORMS {
        let base = script("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0");
        let line = written_at(what).unwrap_or(*line);
        assert_caught(what, &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, &base)], SCRIPT, &script(edit), "forbidden-env", line);
    }
}

/// The same forms read line by line (`--line-reader`, the model before the
/// interpreter): each an error at the statement that sets it.
#[test]
fn the_forbidden_flag_set_in_ways_bash_honours_is_an_error_at_its_line_when_read_line_by_line() {
    for (what, edit, line) in FORMS {
        let base = script("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0");
        let files = [("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, base.as_str())];
        assert_caught_with(&["--line-reader"], what, &files, SCRIPT, &script(edit), "forbidden-env", (SCRIPT, *line));
    }
}

/// The honest twin of a [`FORMS`] edit: the flag disabled the same way.
pub(crate) fn honest_form(edit: &str) -> String {
    let honest = edit
        .replace("NEXTN_MOE=1", "NEXTN_MOE=0")
        .replace("'%s' 1", "'%s' 0")
        .replace("<<< 1", "<<< 0")
        .replace("%d' 1", "%d' 0")
        .replace("$((0+1))", "$((1-1))")
        .replace("${Z/0/1}", "${Z/1/0}")
        .replace("W=10", "W=01")
        .replace("${MODEL:+1}", "${MODEL:+0}")
        .replace("NEXTN_MOE 1", "NEXTN_MOE 0")
        .replace("T0U9MQ==", "T0U9MA==")
        .replace("4d4f453d31", "4d4f453d30");
    honest.replace("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0; SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0", "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0")
}

/// The honest twins: the flag disabled the same ways is no error.
#[test]
fn the_same_forms_disabling_the_flag_pass() {
    for (what, edit, _) in FORMS {
        let honest = honest_form(edit);
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
    let lib = ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n");
    assert_caught("a re-assigned AL", &[lib, (SCRIPT, &honest)], SCRIPT, &bent, "golden-al", 4);
    assert_eq!(check(&bent, "sim-acc-eval")["status"], "pass", "never exported in the eval-only run");
    // Passed as a function's argument, the value is the call's (never read
    // as the literal `$1`, which failed the honest script): judged as the
    // same export written out.
    let by_argument = format!("{head}set_al() {{ export SGLANG_SIMULATE_ACC_LEN=$1; }}\nif [ \"$EVAL_ONLY\" != true ]; then set_al 2.49; fi\n{launch}");
    for id in ["sim-acc-throughput", "golden-al", "sim-acc-eval"] {
        let (written, called) = (check(&honest, id), check(&by_argument, id));
        assert_eq!(written["status"], called["status"], "{id}: {called:#}");
        let rules = |c: &serde_json::Value| c["findings"].as_array().unwrap().iter().map(|f| f["rule"].clone()).collect::<Vec<_>>();
        assert_eq!(rules(&written), rules(&called), "{id}: {called:#}");
    }
}

/// One server argument spelled twice in a recipe's `sglang_config`:
/// srt-slurm passes both, argparse keeps the last, and the engine drafts
/// with K=2 while the AL set is K=3's golden value. golden-al fails,
/// citing the spelling that wins, whichever order the two are written in.
#[test]
fn a_server_argument_spelled_twice_in_a_recipe_is_judged_as_argparse_takes_it() {
    let recipe = "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/agentic/agg-mtp.yaml";
    let text = |steps: &str| {
        format!(
            "name: agg-mtp\nmodel:\n  path: deepseek-v4-pro\n  precision: fp4\nbackend:\n  type: sglang\n  aggregated_environment:\n    SGLANG_DEFAULT_THINKING: \"1\"\n    SGLANG_SIMULATE_ACC_LEN: \"2.49\"\n    SGLANG_SIMULATE_ACC_METHOD: match-expected\n    SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token\n  sglang_config:\n    aggregated:\n      served-model-name: deepseek-ai/DeepSeek-V4-Pro\n      speculative-algorithm: EAGLE\n{steps}      speculative-eagle-topk: 1\n"
        )
    };
    let honest = text("      speculative-num-steps: 3\n");
    for (what, steps, line) in [
        ("underscore after", "      speculative-num-steps: 3\n      speculative_num_steps: 2\n", 17),
        ("underscore before", "      speculative_num_steps: 2\n      speculative-num-steps: 3\n", 16),
    ] {
        assert_caught(what, &[(recipe, &honest)], recipe, &text(steps), "golden-al", line);
    }
}

/// A value the input does not show (a download, a runner's variable) for
/// a forbidden name or a simulation knob keeps its check off PASS:
/// undetermined, the verdict incomplete (exit 3), in the full audit and
/// with `--changed-since`.
#[test]
fn values_the_input_does_not_show_keep_the_check_off_pass() {
    let lib = ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n");
    for (edit, id) in [
        ("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=$(curl -s https://example.org/flag)", "forbidden-env"),
        ("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=$FLAG", "forbidden-env"),
        ("export SGLANG_SIMULATE_ACC_LEN=$(curl -s https://example.org/al)", "sim-acc-throughput"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[lib, (SCRIPT, &script(""))]);
        commit_base(tmp.path());
        write_tree(tmp.path(), &[(SCRIPT, &script(edit))]);
        for extra in [&[][..], &["--changed-since", "HEAD"][..]] {
            let mut args = vec![tmp.path().to_str().unwrap(), "--format", "json"];
            args.extend_from_slice(extra);
            let out = audit(&args);
            assert_eq!(code(&out), 3, "{edit} {extra:?}: {}", stdout(&out));
            let report = json(&out);
            let result = check(&report, id);
            assert_eq!(result["status"], "error", "{edit}: {result:#}");
            let open =
                result["findings"].as_array().unwrap().iter().find(|f| f["rule"] == format!("{id}/undetermined")).unwrap_or_else(|| panic!("{result:#}"));
            assert_eq!(open["evidence"][0]["line"], 3, "{open:#}");
        }
    }
}

/// Ten lines of aliases that expand past the alias budget, prepended to a
/// master config: the lines the loader stopped in are named as not
/// examined and the verdict stays off PASS, in the full audit and with
/// `--changed-since`; the entry beside the bomb is still read and its job
/// still judged.
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
    commit_base(tmp.path());
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
        let jobs = report["jobs"].as_array().unwrap();
        assert!(jobs.iter().any(|j| j["id"].as_str().unwrap().contains("dsv4-fp4-b200-sglang-mtp")), "the entry is still read: {jobs:#?}");
    }
    // Nesting past the parser's limit at the end of a recipe is set aside the
    // same way: the recipe's own keys are still read, and what they set is judged.
    let recipe = "benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4/deep.yaml";
    let deep = format!(
        "backend:\n  type: sglang\n  decode_environment:\n    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: \"1\"\nx: {}{}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(recipe, &deep)]);
    let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let report = json(&out);
    assert_ne!(report["files"][0]["status"], "read", "{}", report["files"]);
    assert_eq!(forbidden(&report), [("forbidden-env/enabled".to_string(), recipe.to_string(), 4)]);
    // As a pull request's only change, the nesting keeps the gate off PASS.
    let tmp = tempfile::tempdir().unwrap();
    let honest = "backend:\n  type: sglang\n  decode_environment:\n    SGLANG_X: \"1\"\n";
    write_tree(tmp.path(), &[(recipe, honest)]);
    commit_base(tmp.path());
    write_tree(tmp.path(), &[(recipe, &format!("{honest}x: {}{}\n", "[".repeat(200_000), "]".repeat(200_000)))]);
    let out = audit(&[tmp.path().to_str().unwrap(), "--changed-since", "HEAD", "--format", "json"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
}

/// A script in the snapshot's shape with one edit at line 2, before the launch.
fn launcher(edit: &str) -> String {
    format!("#!/usr/bin/env bash\n{edit}\npython3 -m sglang.launch_server --model-path /models/dsv4\n")
}

/// Each honest edit at line 2 of a launch script adds no engine-patch error.
fn assert_no_engine_patch(honest: &[&str]) {
    for edit in honest {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[(LAUNCHER, &launcher(edit))]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
        assert!(error_lines(&report, "engine-patch").is_empty(), "{edit}: {:#}", check(&report, "engine-patch"));
    }
}

/// Each edit at line 2 of a launch script, as the pull request's only
/// change, is an error of its check at its line.
fn assert_script_cases(cases: &[(&str, &str, &str, u64)]) {
    for (what, edit, id, line) in cases {
        assert_caught(what, &[(LAUNCHER, &launcher(""))], LAUNCHER, &launcher(edit), id, *line);
    }
}

/// Engine installs and writes whatever names them: a wheel through
/// `pip3.12`, an extra index through `python3.12 -m pip`, a fork through
/// `uv pip`, an archive extracted into site-packages or /sgl-workspace, a
/// `.pth` printf writes. Each is an error at its line; packing the engine
/// tree into an archive is not.
#[test]
fn engine_installs_and_extractions_in_every_spelling_are_errors() {
    assert_script_cases(&[
        ("pip3.12 wheel", "pip3.12 install /tmp/wheels/sglang-0.5.9-py3-none-any.whl", "engine-patch", 2),
        ("extra index", "python3.12 -m pip install --extra-index-url https://example.org/simple vllm", "engine-patch", 2),
        ("uv pip fork", "uv pip install \"sglang @ git+https://github.com/someone/sglang@abc123\"", "engine-patch", 2),
        ("tar -x into site-packages", "tar -xzf /tmp/patched.tgz -C /usr/local/lib/python3.12/dist-packages/sglang", "engine-patch", 2),
        ("unzip into the workspace", "unzip -o /tmp/p.zip -d /sgl-workspace/sglang/python", "engine-patch", 2),
        ("a .pth printf writes", "printf 'import hack\\n' > /usr/local/lib/python3.12/dist-packages/zz.pth", "engine-patch", 2),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(LAUNCHER, &launcher("tar -czf /tmp/box.tar.gz -C /sgl-workspace ."))]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    assert!(error_lines(&report, "engine-patch").is_empty(), "{:#}", check(&report, "engine-patch"));
}

/// Code the gate could not read: an engine `sed -i` base64-encoded and piped
/// to `bash` is an engine patch at the pipeline's line; an export in the
/// same payload dies with the child shell and is no forbidden-env error.
/// Decoded inside `eval`, the payload runs in the script's own shell: its
/// export reaches the launch.
#[test]
fn a_base64_payload_piped_to_a_shell_is_read() {
    use base64::Engine as _;
    let payload = base64::engine::general_purpose::STANDARD
        .encode("sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n");
    let piped = [format!("echo {payload} | base64 -d | bash"), format!("base64 --decode <<< \"{payload}\" | sh")];
    let evaluated = format!("eval \"$(echo {payload} | base64 -d)\"");
    assert_script_cases(&[
        ("base64 piped to bash", &piped[0], "engine-patch", 2),
        ("base64 from a here-string piped to sh", &piped[1], "engine-patch", 2),
        ("base64 decoded inside eval", &evaluated, "forbidden-env", 2),
    ]);
    for (pipeline, flags) in piped.iter().flat_map(|p| [(p, &[][..]), (p, &["--interpret-scripts"][..])]) {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/single_node/x_fp8_h200.sh", &launcher(pipeline))]);
        let report = json(&audit(&[&[tmp.path().to_str().unwrap(), "--format", "json"], flags].concat()));
        assert!(forbidden(&report).is_empty(), "{pipeline} {flags:?}: the child shell's export does not reach the launch");
        if !flags.is_empty() {
            let engine_patch = error_lines(&report, "engine-patch");
            assert_eq!(engine_patch, [2], "{pipeline}: the child shell's sed is the engine patch, at the pipeline");
        }
    }
}

/// Copy of a sample bundle in a temporary directory.
fn sample_copy(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let from = root().join("samples/bundles").join(name);
    for rel in list_files(&from) {
        let to = tmp.path().join(&rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&rel), &to).unwrap();
    }
    tmp
}

/// The server logs of the sample's eval-only job (the log is kept twice:
/// in the eval server-log artifact and the agentic result copy).
fn eval_job_logs(bundle: &std::path::Path) -> Vec<std::path::PathBuf> {
    let logs: Vec<_> = list_files(bundle)
        .into_iter()
        .map(|p| bundle.join(p))
        .filter(|p| p.ends_with("results/server.log") && p.to_string_lossy().contains("dgxc_7"))
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    logs
}

/// Absence is not evidence: the eval job's logs with their env dump cut
/// out leave that one job unseen. The check is undetermined for it, named
/// at its log, the verdict incomplete, and the summary counts only the ten
/// jobs it saw. Dumps that list the flag twice with two values are a warning.
#[test]
fn a_job_without_a_rendered_environment_is_undetermined_not_passed() {
    let bundle = sample_copy("dsv41flash-h200-dspark-pass");
    let run = |dir: &std::path::Path| json(&audit(&[dir.to_str().unwrap(), "--format", "json"]));
    let passing = run(bundle.path());
    assert_eq!(passing["verdict"], "pass", "{:#}", check(&passing, "forbidden-env"));
    for log in eval_job_logs(bundle.path()) {
        let text = std::fs::read_to_string(&log).unwrap();
        let cut: Vec<&str> = text.lines().filter(|l| !l.starts_with("===") && !l.starts_with("SGLANG_DEFAULT_THINKING=")).collect();
        std::fs::write(&log, cut.join("\n")).unwrap();
    }
    let out = audit(&[bundle.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let report = json(&out);
    let env = check(&report, "forbidden-env");
    assert_eq!(env["status"], "error", "{env:#}");
    assert!(env["summary"].as_str().unwrap().contains("takes effect in 10 job(s)"), "{env:#}");
    let open: Vec<_> = env["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "forbidden-env/undetermined").collect();
    assert_eq!(open.len(), 1, "{env:#}");
    assert_eq!(open[0]["severity"], "error");
    assert!(open[0]["job"].as_str().unwrap_or_default().ends_with("dgxc_7") || open[0]["jobs"].to_string().contains("dgxc_7"), "{:#}", open[0]);
    assert!(open[0]["evidence"][0]["file"].as_str().unwrap().ends_with("server.log"), "{:#}", open[0]);
    assert_eq!(open[0]["evidence"][0]["line"], 1);

    let bundle = sample_copy("dsv41flash-h200-dspark-pass");
    for log in eval_job_logs(bundle.path()) {
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::write(
            &log,
            text.replacen(
                "SGLANG_DEFAULT_THINKING=1\n",
                "SGLANG_DEFAULT_THINKING=1\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0\n",
                1,
            ),
        )
        .unwrap();
    }
    let report = run(bundle.path());
    let env = check(&report, "forbidden-env");
    let twice: Vec<_> = env["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "forbidden-env/duplicate").collect();
    assert!(!twice.is_empty(), "{env:#}");
    assert!(twice.iter().all(|f| f["severity"] == "warning" && f["evidence"].as_array().unwrap().len() == 2), "{env:#}");
    assert!(env["findings"].as_array().unwrap().iter().all(|f| f["rule"] != "forbidden-env/overridden"), "{env:#}");
}

/// SGLang's `--config FILE`, written by the script from a heredoc, is a
/// source of server arguments: a quantized draft set there is an error at
/// its line of the heredoc, and a flag given on the command line as well
/// wins over the file's, as SGLang merges them.
#[test]
fn a_config_file_the_script_writes_is_read_as_server_arguments() {
    let body = |quant: &str| {
        format!(
            "#!/usr/bin/env bash\ncat > /tmp/cfg.yaml <<EOF\nspeculative-num-steps: 3\nspeculative-draft-model-quantization: {quant}\nEOF\npython3 -m sglang.launch_server --model-path /models/dsv4 --tp 8 --speculative-algorithm EAGLE --config /tmp/cfg.yaml\n"
        )
    };
    let honest = body("fp8").replace("speculative-draft-model-quantization: fp8\n", "");
    assert_caught("a quantized draft in --config", &[(LAUNCHER, &honest)], LAUNCHER, &body("fp8"), "draft-precision", 4);
    // The command line's own flag follows the file's and wins.
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(LAUNCHER, &body("fp8").replace("--config /tmp/cfg.yaml", "--config /tmp/cfg.yaml --speculative-num-steps 2"))]);
    let ev = json(&auditor(&["evidence", tmp.path().join(LAUNCHER).to_str().unwrap()]));
    let args = &ev["command_args"];
    assert_eq!(
        (args["speculative_num_steps"].clone(), args["speculative_draft_model_quantization"].clone()),
        (serde_json::json!(2), serde_json::json!("fp8")),
        "{ev:#}"
    );
}

/// srt-slurm's own keys, read as srt-slurm applies them (NVIDIA/srt-slurm
/// v1.0.68 `worker_stage.start_worker`, `runtime.py`): `mooncake_kv_store.env`
/// reaches every worker after the role's and the recipe-wide sections,
/// `srun_options`/`sbatch_directives` exports before them; `extra_mount`
/// lays a host tree over the container's. Each is an error at its line; the
/// role section overriding an srun export is not.
#[test]
fn srt_slurm_keys_that_reach_the_workers_are_read() {
    let recipe = "benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4/r.yaml";
    let head = "name: r\nbackend:\n  type: sglang\n  decode_environment:\n    SGLANG_X: '1'\n";
    let cases: &[(&str, &str, &str, u64)] = &[
        ("mooncake env", "  mooncake_kv_store:\n    env:\n      SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\n", "forbidden-env", 8),
        ("srun export", "srun_options:\n  export: ALL,SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n", "forbidden-env", 7),
        (
            "srun export passed into the container",
            "srun_options:\n  container-env: SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE\n  export: ALL,SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n",
            "forbidden-env",
            8,
        ),
        ("sbatch export", "sbatch_directives:\n  export: ALL,SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n", "forbidden-env", 7),
        ("extra_mount", "extra_mount:\n  - /home/me/sglang:/sgl-workspace/sglang\n", "engine-patch", 7),
    ];
    for (what, tail, id, line) in cases {
        assert_caught(what, &[(recipe, head)], recipe, &format!("{head}{tail}"), id, *line);
    }
    // The role's own section is exported after srun's --export: it wins.
    let tmp = tempfile::tempdir().unwrap();
    let honest = "name: r\nbackend:\n  type: sglang\n  decode_environment:\n    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '0'\nsrun_options:\n  export: ALL,SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n";
    write_tree(tmp.path(), &[(recipe, honest)]);
    assert!(forbidden(&json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]))).is_empty());
}

/// Writes into the engine through paths the script computes (`pip show`,
/// `site`, `sysconfig`, `find -exec`), code run by `bash -c` and decoded
/// payloads in hex, and a checkpoint's config.json edited from Python:
/// each is an error at its line (a Python heredoc's, at the line that opens
/// the program, as every write of a Python heredoc is placed).
#[test]
fn computed_engine_paths_child_shells_and_python_config_edits_are_read() {
    assert_script_cases(&[
        ("pip show", "cp x.py \"$(pip show sglang | grep Location | cut -d' ' -f2)/sglang/srt/layers/x.py\"", "engine-patch", 2),
        ("site", "SP=$(python3 -c 'import site; print(site.getsitepackages()[0])')\ncp x.py $SP/sglang/srt/x.py", "engine-patch", 3),
        ("sysconfig", "SP=$(python3 -c \"import sysconfig; print(sysconfig.get_paths()['purelib'])\")\ncp x.py $SP/vllm/x.py", "engine-patch", 3),
        ("a module's __file__ in python -c", "python3 -c \"import sglang.srt.server_args as m; open(m.__file__, 'a').write('x')\"", "engine-patch", 2),
        ("find -exec", "find / -path '*sglang/srt/server_args.py' -exec sed -i 's/a/b/' {} +", "engine-patch", 2),
        ("bash -c", "bash -c \"sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/server_args.py\"", "engine-patch", 2),
        ("printf hex to bash", "printf 'sed -i s/a/b/ /sgl-workspace/sglang/python/sglang/srt/x\\x2epy' | bash", "engine-patch", 2),
        (
            "python writing under site",
            "python3 - <<'EOF'\nimport site, os\nopen(os.path.join(site.getsitepackages()[0], 'sglang/srt/x.py'), 'w').write('x=1')\nEOF",
            "engine-patch",
            // The evaluated Python's own write, in the heredoc.
            4,
        ),
        (
            "python heredoc",
            "python3 - <<EOF\nimport json\np = '/models/dsv4/config.json'\nc = json.load(open(p))\nc['architectures'] = ['X']\njson.dump(c, open(p, 'w'))\nEOF",
            "arch-override",
            // The evaluated Python's own write, in the heredoc.
            7,
        ),
        ("jq", "jq '.architectures=[\"X\"]' /models/dsv4/config.json > /tmp/c && mv /tmp/c /models/dsv4/config.json", "arch-override", 2),
    ]);
    // Found by name anywhere: whose files is not known, a warning at the line.
    let script = "#!/usr/bin/env bash\nfind / -name server_args.py | xargs sed -i s/a/b/\npython3 -m sglang.launch_server --model-path /m\n";
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(LAUNCHER, script)]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    let patch = check(&report, "engine-patch");
    let found = patch["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "engine-patch/found-anywhere").unwrap_or_else(|| panic!("{patch:#}"));
    assert_eq!((found["severity"].as_str(), found["evidence"][0]["line"].as_u64()), (Some("warning"), Some(2)));
}

/// Issue 35's breaches, which the line reader let pass: each sets the
/// forbidden draft flag in the engine's environment as bash runs it (each
/// checked with bash). Judged by the bash interpreter (`--interpret-scripts`).
pub(crate) const INTERPRETED_FORMS: &[(&str, &str, u64)] = &[
    ("a function called with arguments", "setenv() { export \"$1=$2\"; }; setenv SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE 1", 3),
    ("a nameref", "declare -n R=SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE; export R=1", 3),
    ("export of an array", "A=(NCCL_NVLS_ENABLE=1 SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1); export \"${A[@]}\"", 3),
    ("readarray, then export", "readarray -t A <<< \"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\"; export \"${A[@]}\"", 3),
    ("a loop over an associative array", "declare -A M=([SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE]=1); for k in \"${!M[@]}\"; do export \"$k=${M[$k]}\"; done", 3),
    ("brace expansion building the name", "export SGLANG_NVFP4_CKPT_FP8_NEXTN_{MOE,DUMMY}=1", 3),
    ("export of what echo prints", "export $(echo SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1)", 3),
    ("env -S", "env -S 'SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 python3 -m sglang.launch_server --model-path /m'", 3),
    ("bash -s of a here-string", "bash -s <<< \"export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1; python3 -m sglang.launch_server --model-path /m\"", 3),
    ("sudo -E NAME=1", "sudo -E SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 python3 -m sglang.launch_server --model-path /m", 3),
    (
        "python3 -c setting os.environ before runpy runs the server",
        "python3 -c \"import os, runpy, sys; os.environ['SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE']='1'; sys.argv=['s', '--model-path', '/m']; runpy.run_module('sglang.launch_server', run_name='__main__')\"",
        3,
    ),
];

/// The honest twin of an [`INTERPRETED_FORMS`] edit: the flag set to 0.
pub(crate) fn disabled(edit: &str) -> String {
    edit.replace("MOE=1", "MOE=0").replace("R=1", "R=0").replace("MOE 1", "MOE 0").replace("]=1", "]=0").replace("}=1", "}=0").replace("'1'", "'0'")
}

#[test]
fn issue_35_breaches_are_errors_at_their_line_when_the_interpreter_judges() {
    let lib = ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n");
    for (what, edit, line) in INTERPRETED_FORMS {
        let base = script("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0");
        assert_caught_with(&["--interpret-scripts"], what, &[lib, (SCRIPT, &base)], SCRIPT, &script(edit), "forbidden-env", (SCRIPT, *line));
    }
    // A committed .env the script exports with grep | xargs: the error is at the .env's line.
    let dotenv = ("benchmarks/.env", "# the job's settings\nSGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n");
    let load = script("export $(grep -v '^#' benchmarks/.env | xargs)");
    assert_caught_with(&["--interpret-scripts"], "a committed .env", &[lib, dotenv, (SCRIPT, &script(":"))], SCRIPT, &load, "forbidden-env", (dotenv.0, 2));
}

#[test]
fn issue_35_breaches_disabling_the_flag_pass_when_the_interpreter_judges() {
    for (what, edit, _) in INTERPRETED_FORMS {
        let honest = disabled(edit);
        assert_ne!(&honest, edit, "{what}: no honest twin");
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, &script(&honest))]);
        let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json", "--interpret-scripts"]);
        let report = json(&out);
        assert!(forbidden(&report).is_empty(), "{what}: {honest}: {:?}", forbidden(&report));
    }
}

/// An agentic launch script (the kind that must simulate acceptance on its
/// throughput jobs) with `body` between the library and the launch, then the eval.
fn agentic(body: &str, launch_args: &str) -> String {
    format!(
        "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n{body}\npython3 -m sglang.launch_server --model-path /models/dsv4 --tp 8 {launch_args}\nif [ \"$EVAL_ONLY\" = true ]; then run_eval; fi\n"
    )
}

const AGENTIC: &str = "benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp.sh";
const SPEC: &str = "--speculative-algorithm EAGLE --speculative-num-steps 3";
const SIMULATE: &str = "export SGLANG_SIMULATE_ACC_LEN=2.49 SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token";

/// Issue 35: `EVAL_ONLY` saved, flipped and restored around the block that
/// decides simulation: the eval-only job simulates, an error at the export.
#[test]
fn eval_only_flipped_around_the_simulation_gate_is_an_error_at_the_export() {
    let lib = ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n");
    let honest = agentic(&format!("if [ \"$EVAL_ONLY\" != true ]; then {SIMULATE}; fi"), SPEC);
    let flipped = agentic(&format!("SAVED=$EVAL_ONLY; EVAL_ONLY=false\nif [ \"$EVAL_ONLY\" != true ]; then {SIMULATE}; fi\nEVAL_ONLY=$SAVED"), SPEC);
    assert_caught_with(&["--interpret-scripts"], "EVAL_ONLY flipped", &[lib, (AGENTIC, &honest)], AGENTIC, &flipped, "sim-acc-eval", (AGENTIC, 4));
}

/// Issue 35's honest refactors: each passes with no error and nothing left
/// unexamined when the interpreter judges.
#[test]
fn honest_refactors_pass_when_the_interpreter_judges() {
    let lib = "run_eval() { :; }\nset_simulation() { export SGLANG_SIMULATE_ACC_LEN=\"$1\" SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token; }\n";
    let cases: Vec<(&str, String)> = vec![
        (
            "a three-arm if with a SPEC_DECODING=none arm",
            agentic(
                &format!(
                    "SPEC_ARGS=\"\"\nif [ \"$EVAL_ONLY\" = true ]; then\n  SPEC_ARGS=\"{SPEC}\"\nelif [ \"$SPEC_DECODING\" = none ]; then\n  SPEC_ARGS=\"\"\nelse\n  {SIMULATE}\n  SPEC_ARGS=\"{SPEC}\"\nfi"
                ),
                "$SPEC_ARGS",
            ),
        ),
        (
            "a nested case",
            agentic(
                &format!(
                    "case \"$EVAL_ONLY\" in\n  true) ;;\n  *) case \"$MODEL\" in\n       *dsv4*) {SIMULATE} ;;\n       *) {SIMULATE} ;;\n     esac ;;\nesac"
                ),
                SPEC,
            ),
        ),
        (
            "git apply --check",
            agentic(&format!("git apply --check /workspace/patches/fix.patch || true\nif [ \"$EVAL_ONLY\" != true ]; then {SIMULATE}; fi"), SPEC),
        ),
        (
            "a comment ending in a backslash",
            agentic(&format!("# the simulation is for throughput jobs only \\\nif [ \"$EVAL_ONLY\" != true ]; then {SIMULATE}; fi"), SPEC),
        ),
        (
            "simulation in a function called under a correct gate",
            agentic(&format!("enable_simulation() {{ {SIMULATE}; }}\nif [ \"$EVAL_ONLY\" != true ]; then enable_simulation; fi"), SPEC),
        ),
        ("a library helper called with arguments", agentic("if [ \"$EVAL_ONLY\" != true ]; then set_simulation 2.49; fi", SPEC)),
        (
            "legal exports from an array",
            agentic(
                &format!("ENVS=(NCCL_NVLS_ENABLE=1 SGLANG_ENABLE_JIT_DEEPGEMM=1)\nexport \"${{ENVS[@]}}\"\nif [ \"$EVAL_ONLY\" != true ]; then {SIMULATE}; fi"),
                SPEC,
            ),
        ),
        ("[[ … ]] || { export …; }", agentic(&format!("[[ \"$EVAL_ONLY\" == true ]] || {{ {SIMULATE}; }}"), SPEC)),
    ];
    for (what, text) in cases {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", lib), (AGENTIC, &text)]);
        let out = audit(&[tmp.path().to_str().unwrap(), "--format", "json", "--interpret-scripts"]);
        let report = json(&out);
        let errors: Vec<_> = findings(&report).filter(|f| f["severity"] == "error").collect();
        assert!(errors.is_empty(), "{what}:\n{text}\n{errors:#?}");
        assert_eq!(report["verdict"], "pass", "{what}:\n{text}\n{:#}", report["not_examined"]);
    }
}

/// Issue 35's last honest refactor: a vLLM spec config built with
/// `jq -nc` is judged as the literal JSON jq prints: the same findings,
/// the same verdict, the simulated AL read from it (`--interpret-scripts`).
#[test]
fn a_spec_config_built_with_jq_is_judged_as_the_literal_it_prints() {
    let script = |eval: &str, throughput: &str| {
        format!(
            "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\nN=3\nif [ \"${{EVAL_ONLY:-false}}\" = true ]; then\n  SPEC_CONFIG={eval}\nelse\n  SPEC_CONFIG={throughput}\nfi\nvllm serve /models/dsv4 --tp 8 --speculative-config \"$SPEC_CONFIG\"\nif [ \"$EVAL_ONLY\" = true ]; then run_eval; fi\n"
        )
    };
    let literal = script(
        "'{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'",
        "'{\"method\": \"mtp\", \"num_speculative_tokens\": 3, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": 2.49}'",
    );
    let built = script(
        "$(jq -nc --argjson n \"$N\" '{method: \"mtp\", num_speculative_tokens: $n}')",
        "$(jq -nc --argjson n \"$N\" '{method: \"mtp\", num_speculative_tokens: $n, rejection_sample_method: \"synthetic\", synthetic_acceptance_length: 2.49}')",
    );
    let path = "benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh";
    let judged = |text: &str| {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (path, text)]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json", "--interpret-scripts"]));
        let mut found: Vec<(String, String, String)> = findings(&report)
            .map(|f| (f["rule"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string(), f["message"].as_str().unwrap().to_string()))
            .collect();
        found.sort();
        (report["verdict"].clone(), found)
    };
    let (verdict, found) = judged(&literal);
    assert!(found.iter().any(|(rule, _, message)| rule == "sim-acc-throughput/simulated" && message.contains("2.49")), "{found:#?}");
    assert_eq!(judged(&built), (verdict, found), "jq's output is the literal");
}

/// A library helper that installs what it is given (`pip install "$@"`)
/// is harmless; the script that hands it an engine wheel commits the
/// install, and the error is at the script's call (`--interpret-scripts`).
#[test]
fn an_engine_install_through_a_library_helper_is_an_error_at_the_call() {
    let lib = ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\ninstall_deps() {\n    python3 -m pip install --quiet \"$@\"\n}\n");
    let source = "source \"$(dirname \"$0\")/../benchmark_lib.sh\"";
    let edit = launcher(&format!("{source}; install_deps --no-deps git+https://github.com/sgl-project/sglang@deadbeef"));
    let base = launcher(&format!("{source}; install_deps --no-deps aiperf==0.3.0"));
    assert_caught_with(&["--interpret-scripts"], "a wheel through a helper", &[lib, (LAUNCHER, &base)], LAUNCHER, &edit, "engine-patch", (LAUNCHER, 2));
}

/// Past the path bound, arrays the arms build differently are joined, each
/// arm's value kept: the launch passing one runs once per arm, each showing
/// its speculative flags. Never a no-drafting error, and no longer
/// undetermined (`--interpret-scripts`).
#[test]
fn a_joined_argument_array_is_judged_per_arm_not_no_drafting() {
    let forks: String = ["A", "B", "C", "D"].iter().map(|v| format!("if [ -n \"${v}\" ]; then V{v}=1; fi\n")).collect();
    let body = format!(
        "SPEC_ARGS=({SPEC})\nif [ \"$DP_ATTENTION\" = true ]; then SPEC_ARGS+=(--speculative-moe-a2a-backend none); fi\n{forks}if [ \"$EVAL_ONLY\" != true ]; then {SIMULATE}; fi"
    );
    let text = agentic(&body, "\"${SPEC_ARGS[@]}\"");
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (AGENTIC, &text)]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json", "--interpret-scripts"]));
    let throughput = check(&report, "sim-acc-throughput");
    let findings = throughput["findings"].as_array().unwrap();
    assert!(findings.iter().all(|f| f["severity"] != "error"), "{throughput:#}");
    assert!(findings.iter().all(|f| f["rule"] != "sim-acc-throughput/undetermined"), "{throughput:#}");
    assert_eq!(throughput["status"], "pass", "{throughput:#}");
}

/// A launch on the other arm of a condition only the run decides is a job
/// of its own path: a wrong simulated AL written there (vLLM's
/// `synthetic_acceptance_length`, K=4's golden value is 3.24) is an error
/// at its line, where the facts used to read the first arm's launch alone.
/// Both arms at their golden values pass.
#[test]
fn a_launch_on_the_other_arm_of_a_condition_is_judged_too() {
    let script = "benchmarks/single_node/agentic/kimik2.5_fp4_b300_mtp.sh";
    let spec = |k: u32, al: &str| {
        format!(
            "'{{\"method\":\"eagle3\",\"model\":\"/d\",\"num_speculative_tokens\":{k},\"rejection_sample_method\":\"synthetic\",\"synthetic_acceptance_length\":{al}}}'"
        )
    };
    let text = |al: &str| {
        format!(
            "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\nif [[ \"$DCP_SIZE\" -gt 1 ]]; then\n    vllm serve /m --speculative-config {}\nelse\n    vllm serve /m --speculative-config {}\nfi\n",
            spec(3, "2.88"),
            spec(4, al)
        )
    };
    let lib = ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n");
    assert_caught("a wrong AL on the else arm", &[lib, (script, &text("3.24"))], script, &text("3.99"), "golden-al", 6);
}

/// A requirements file holding an engine fork (issue 36), in the tree beside the script.
const FORK_REQUIREMENTS: (&str, &str) =
    ("benchmarks/single_node/requirements-fast.txt", "numpy>=1.24  # kept\nsglang @ git+https://github.com/someone/sglang@fast#subdirectory=python\n");

/// Installs judged by what they install (issue 36, item 3) and engine
/// source trees switched to another ref (item 2): a requirements file the
/// tree holds or the script writes, an index chosen by `PIP_INDEX_URL` or
/// a written `pip.conf`, and a fork fetched and checked out (or a commit
/// cherry-picked) in the image's SGLang checkout. Each is an error at its
/// line, in the full audit and with `--changed-since`.
#[test]
fn installs_by_what_they_install_and_engine_trees_switched_to_another_ref_are_errors() {
    let cases: &[(&str, &str, u64)] = &[
        ("pip install -r of a fork", "pip install -r \"$(dirname \"$0\")/requirements-fast.txt\"", 2),
        ("a requirements file the script writes", "printf 'git+https://github.com/someone/vllm@fast\\n' > /tmp/r.txt\npip install -r /tmp/r.txt", 3),
        ("PIP_INDEX_URL", "export PIP_INDEX_URL=https://pypi.example.com/simple\npip install --upgrade sglang", 3),
        ("UV_INDEX_URL", "export UV_INDEX_URL=https://pypi.example.com/simple\nuv pip install --system -U vllm", 3),
        ("a pip.conf", "printf '[global]\\nindex-url = https://pypi.example.com/simple\\n' > /etc/pip.conf\npip install -U sglang", 3),
        ("git fetch of a fork, checked out", "cd /sgl-workspace/sglang && git fetch https://github.com/someone/sglang fast && git checkout FETCH_HEAD", 2),
        ("cherry-pick", "git -C /sgl-workspace/sglang cherry-pick 0123abcd", 2),
        ("pull", "(cd /vllm-workspace/vllm && git pull https://github.com/someone/vllm fast)", 2),
    ];
    for (what, edit, line) in cases {
        assert_caught(what, &[FORK_REQUIREMENTS, (LAUNCHER, &launcher(""))], LAUNCHER, &launcher(edit), "engine-patch", *line);
    }
    // A directory of the input with a start-up hook, or a module with an engine's name, put on PYTHONPATH.
    let hooks = [
        ("benchmarks/single_node/hooks/sitecustomize.py", "import sglang.srt.server_args as s\ns.X = 1\n"),
        ("benchmarks/single_node/shadow/vllm/__init__.py", ""),
    ];
    for (what, dir) in [("sitecustomize.py on PYTHONPATH", "hooks"), ("a vllm package on PYTHONPATH", "shadow")] {
        let edit = launcher(&format!("export PYTHONPATH=/workspace/benchmarks/single_node/{dir}:$PYTHONPATH"));
        assert_caught(what, &[hooks[0], hooks[1], (LAUNCHER, &launcher(""))], LAUNCHER, &edit, "engine-patch", 2);
    }
}

/// The honest twins: a requirements file of ordinary packages, a stock
/// reinstall from the default index (a warning, as maintainers treat it),
/// a patch only checked, files of the engine's checkout restored, its log
/// read. None is an engine-patch error.
#[test]
fn honest_installs_and_git_reads_of_engine_trees_add_no_error() {
    let honest = [
        "printf 'numpy\\npandas>=2\\n' > /tmp/r.txt; pip install -r /tmp/r.txt",
        "pip install --upgrade sglang",
        "export PIP_INDEX_URL=; pip install -U numpy",
        "git -C /sgl-workspace/sglang apply --check /tmp/x.patch",
        "git -C /sgl-workspace/sglang checkout -- python/sglang/srt/server_args.py",
        "cd /sgl-workspace/sglang && git log -1 && git fetch --dry-run origin",
        "export PYTHONPATH=/workspace/utils:$PYTHONPATH",
    ];
    assert_no_engine_patch(&honest);
}

/// A recipe that is a symbolic link into a directory the policy skips
/// (`experimental/`) runs the file it leads to (issue 36, item 1): that
/// file's forbidden flag is an error, in the full audit and with
/// `--changed-since`, whether the pull request makes the link or edits
/// the file an existing link leads to. A link out of the tree is not read.
#[test]
fn a_recipe_linked_into_a_skipped_directory_is_judged_as_bash_runs_it() {
    let honest = script("");
    let breach = script("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1");
    let target = "experimental/r/real.sh";
    let lib = ("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n");
    let link = |dir: &std::path::Path| {
        let at = dir.join(SCRIPT);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::remove_file(&at).ok();
        std::os::unix::fs::symlink("../../../experimental/r/real.sh", &at).unwrap();
    };
    let judged = |dir: &std::path::Path, extra: &[&str]| json(&audit(&[&[dir.to_str().unwrap(), "--format", "json"], extra].concat()));
    // The pull request replaces the recipe by a link to a file it adds.
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[lib, (SCRIPT, &honest)]);
    commit_base(tmp.path());
    write_tree(tmp.path(), &[(target, &breach)]);
    link(tmp.path());
    for extra in [&[][..], &["--changed-since", "HEAD"]] {
        let report = judged(tmp.path(), extra);
        assert!(forbidden(&report).iter().any(|(_, file, line)| file == SCRIPT && *line == 3), "{extra:?}: {:#}", check(&report, "forbidden-env"));
    }
    // The link is at the base; the pull request edits the file it leads to.
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[lib, (target, &honest)]);
    link(tmp.path());
    commit_base(tmp.path());
    assert!(forbidden(&judged(tmp.path(), &[])).is_empty());
    write_tree(tmp.path(), &[(target, &breach)]);
    let report = judged(tmp.path(), &["--changed-since", "HEAD"]);
    assert!(!forbidden(&report).is_empty(), "{:#}", check(&report, "forbidden-env"));
    // A link out of the tree leads to nothing the input holds: not read.
    let outside = tempfile::tempdir().unwrap();
    write_tree(outside.path(), &[("real.sh", &breach)]);
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[lib, (SCRIPT, &honest)]);
    std::fs::remove_file(tmp.path().join(SCRIPT)).unwrap();
    std::os::unix::fs::symlink(outside.path().join("real.sh"), tmp.path().join(SCRIPT)).unwrap();
    let report = judged(tmp.path(), &[]);
    assert!(forbidden(&report).is_empty(), "{:#}", check(&report, "forbidden-env"));
    let skipped = report["files"].as_array().unwrap().iter().find(|f| f["path"] == SCRIPT).expect("the link is listed");
    assert_eq!(skipped["status"], "skipped", "{skipped:#}");
}

/// A master-config entry scheduled on the `h200` label, its instance's
/// launcher (after the real `runners/launch_h200-cw.sh`) and the script it
/// runs: the tree a runner edit is made in.
fn runner_tree(launcher: &str) -> Vec<(&'static str, String)> {
    let master = "x-fp8-h200-sglang:\n  image: lmsysorg/sglang:v0.5.12-cu130\n  model: x/X\n  model-prefix: x\n  runner: h200\n  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-start: 4, conc-end: 4 }\n";
    vec![
        ("configs/nvidia-master.yaml", master.to_string()),
        ("configs/runners.yaml", "labels:\n  h200:\n  - h200-cw_00\n  - h200-cw_01\n".to_string()),
        ("runners/launch_h200-cw.sh", launcher.to_string()),
        (LAUNCHER, "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /m --tp 8\n".to_string()),
    ]
}

/// The launcher of [`runner_tree`], with `edit` at `line` (a replaced line when `replace`).
fn runner(edit: &str, line: usize, replace: bool) -> String {
    let mut lines: Vec<&str> = vec![
        "#!/usr/bin/env bash",
        "MODEL_CODE=\"${EXP_NAME%%_*}\"",
        "SQUASH_FILE=\"/mnt/vast/gharunner/squash/$(echo \"$IMAGE\" | sed 's/[\\/:@#]/_/g').sqsh\"",
        "JOB_ID=$(salloc --partition=h200 --gres=gpu:h200:$TP --time=180 --no-shell 2>&1 | grep -oP 'Granted job allocation \\K[0-9]+')",
        "srun --jobid=$JOB_ID bash -c \"",
        "    if unsquashfs -l \\\"$SQUASH_FILE\\\" > /dev/null 2>&1; then",
        "        echo 'Squash file already exists'",
        "    else",
        "        enroot import -o \\\"$SQUASH_FILE\\\" docker://$IMAGE",
        "    fi",
        "\"",
        "CONTAINER_IMAGE=$(realpath $SQUASH_FILE)",
        "srun --jobid=$JOB_ID --container-image=$CONTAINER_IMAGE --container-mounts=$GITHUB_WORKSPACE:/workspace/ \\",
        "--no-container-entrypoint --export=ALL \\",
        "bash benchmarks/single_node/${MODEL_CODE}_${PRECISION}_h200.sh",
        "scancel $JOB_ID",
    ];
    if !edit.is_empty() {
        if replace {
            lines[line - 1] = edit;
        } else {
            lines.insert(line - 1, edit);
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn a_runner_that_starts_another_image_than_the_entry_pins_is_an_error_at_its_line() {
    let base = runner_tree(&runner("", 0, false));
    let files: Vec<(&str, &str)> = base.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let path = "runners/launch_h200-cw.sh";
    let cases = [
        ("IMAGE rewritten", runner("IMAGE=lmsysorg/sglang:v0.5.12-cu130-patched", 3, false), 3),
        ("squash file swapped after the import", runner("CONTAINER_IMAGE=/mnt/vast/gharunner/squash/mine.sqsh", 12, true), 12),
        (
            "another reference imported under the pinned name",
            runner("        enroot import -o \\\"$SQUASH_FILE\\\" docker://ghcr.io/me/sglang:v0.5.12-cu130", 9, true),
            9,
        ),
    ];
    for (what, edit, line) in &cases {
        assert_caught(what, &files, path, edit, "upstream-image", *line as u64);
    }
}

#[test]
fn an_unrelated_runner_edit_adds_no_error() {
    let base = runner_tree(&runner("", 0, false));
    let files: Vec<(&str, &str)> = base.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &files);
    // A launcher that is a link to a file the change leaves alone is not a change.
    write_tree(tmp.path(), &[("runners/h200-nb.sh", &runner("", 0, false))]);
    std::os::unix::fs::symlink("h200-nb.sh", tmp.path().join("runners/launch_h200-nb.sh")).unwrap();
    commit_base(tmp.path());
    let edit =
        runner("JOB_ID=$(salloc --partition=h200 --gres=gpu:h200:$TP --time=240 --no-shell 2>&1 | grep -oP 'Granted job allocation \\K[0-9]+')", 4, true);
    write_tree(tmp.path(), &[("runners/launch_h200-cw.sh", &edit)]);
    let dir = tmp.path().to_str().unwrap();
    let out = audit(&[dir, "--format", "json", "--changed-since", "HEAD"]);
    let report = json(&out);
    assert!(error_lines(&report, "upstream-image").is_empty(), "{:#}", check(&report, "upstream-image"));
    // The edit reaches the entry's job, which is judged and passes.
    let judged = report["changed_since"]["judged"].as_u64().unwrap_or(0);
    assert!(judged >= 1, "{:#}", report["changed_since"]);
    assert_eq!(report["changed_since"]["changed_files"].as_u64(), Some(1), "{:#}", report["changed_since"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

/// Prose is not code: a review prompt in a workflow's `with:` input and a
/// changelog entry that mention `git apply` apply nothing, while the same
/// command in a workflow's `run:` script is still read as one.
#[test]
fn prose_in_workflow_inputs_and_changelogs_is_not_a_command() {
    let prompt = "on: pull_request\njobs:\n  verify:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: anthropics/claude-code-action@v1\n        with:\n          prompt: |\n            Reject engine patches:\n            - `.patch` files, `git apply` / `patch` invocations;\n";
    let changelog = "- config-keys: [x-fp8-h200-sglang]\n  description:\n    - \"git apply fix.patch no longer needed\"\n";
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[
            (".github/workflows/verify.yml", prompt),
            ("perf-changelog.yaml", changelog),
            (LAUNCHER, "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /m\n"),
        ],
    );
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    assert!(error_lines(&report, "engine-patch").is_empty(), "{:#}", check(&report, "engine-patch"));
    let run = format!("{prompt}      - name: patch\n        run: |\n          git apply /tmp/fix.patch\n");
    write_tree(tmp.path(), &[(".github/workflows/verify.yml", &run)]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    assert!(has_error_at(&report, "engine-patch", ".github/workflows/verify.yml", 13), "{:#}", check(&report, "engine-patch"));
}

/// vLLM's `--hf-config-path` makes the engine build the model from another
/// config than the checkpoint's: a config the tree carries is an override
/// at the launch that reads it. The checkpoint's own directory is none.
#[test]
fn a_config_read_in_place_of_the_checkpoints_is_an_override() {
    let script = |args: &str| {
        format!(
            "#!/usr/bin/env bash
MODEL=/models/x
vllm serve $MODEL --tensor-parallel-size 8{args}
"
        )
    };
    let config = ("benchmarks/single_node/cfg/config.json", "{\"architectures\": [\"DeepseekV3ForCausalLM\"], \"num_hidden_layers\": 30}\n");
    let base = script("");
    let edit = script(" --hf-config-path /workspace/benchmarks/single_node/cfg");
    assert_caught("--hf-config-path to a config of the tree", &[(LAUNCHER, &base), config], LAUNCHER, &edit, "arch-override", 3);
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(LAUNCHER, &script(" --hf-config-path $MODEL")), config]);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    assert!(error_lines(&report, "arch-override").is_empty(), "{:#}", check(&report, "arch-override"));
}

/// The synthetic-acceptance injector is part of what an entry's jobs run:
/// its runner runs it (`python3 …/inject_synthetic_acceptance.py`), so a
/// change to it, or to the package it imports, selects the entry's jobs.
#[test]
fn a_change_to_the_injector_a_runner_runs_selects_the_entrys_jobs() {
    let launcher = runner("python3 \"$GITHUB_WORKSPACE/runners/inject_synthetic_acceptance.py\" recipe.yaml \"$FRAMEWORK\"", 12, false);
    let mut files = runner_tree(&launcher);
    files
        .push(("runners/inject_synthetic_acceptance.py", "import sys\nfrom synthetic_injectors import inject\ninject(sys.argv[1], sys.argv[2])\n".to_string()));
    files.push(("runners/synthetic_injectors/__init__.py", "from .sglang import inject\n".to_string()));
    files.push(("runners/synthetic_injectors/sglang.py", "def inject(path, framework):\n    pass\n".to_string()));
    files.push(("runners/unrelated.py", "print(1)\n".to_string()));
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let entry = "configs/nvidia-master.yaml#x-fp8-h200-sglang";
    for (path, selects) in [("runners/synthetic_injectors/sglang.py", true), ("runners/unrelated.py", false)] {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &files);
        commit_base(tmp.path());
        write_tree(tmp.path(), &[(path, "def inject(path, framework):\n    open(path, 'a').write('x')\n")]);
        let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json", "--changed-since", "HEAD"]));
        let job = report["jobs"].as_array().unwrap().iter().find(|j| j["id"] == entry).unwrap_or_else(|| panic!("{:#}", report["jobs"]));
        assert_eq!(job.get("skipped").is_none(), selects, "{path}: {job:#}");
    }
}

/// Issue 36's engine writes by where they land, each with the honest twin
/// beside it: a write through `importlib.util.find_spec` (and a read of
/// it that writes nothing), through a helper function with parameters, a
/// `cp` over a kernel library the engine loads (aiter), and a mount the
/// script assembles in a variable (`${EXTRA_DOCKER_MOUNTS:-} -v …`)
/// laid over the engine's files. Each is an error at its line, in the
/// full audit and with `--changed-since`.
#[test]
fn engine_writes_by_where_they_land_are_errors_and_their_twins_pass() {
    let find_spec = "python3 - <<'EOF'\nimport importlib.util, os, shutil\nspec = importlib.util.find_spec('vllm')\nd = os.path.dirname(spec.origin)\nshutil.copy('/tmp/x.py', os.path.join(d, 'model_executor/x.py'))\nEOF";
    let helper = "python3 - <<'EOF'\nimport os, sglang\ndef patch(path, old, new):\n    s = open(path).read()\n    open(path, 'w').write(s.replace(old, new))\npatch(os.path.join(os.path.dirname(sglang.__file__), 'srt/server_args.py'), 'a', 'b')\nEOF";
    let mount = "M=\"${EXTRA_DOCKER_MOUNTS:-} -v /workspace/p/conn.py:/sgl-workspace/sglang/python/sglang/srt/disaggregation/mori/conn.py:ro\"\ndocker run --rm $M img python3 -m sglang.launch_server --model-path /m";
    assert_script_cases(&[
        // The evaluated Python's own write, in the heredoc.
        ("a write through importlib.util.find_spec", find_spec, "engine-patch", 6),
        ("a helper function with parameters", helper, "engine-patch", 6),
        (
            "cp over aiter's kernels",
            "cp /workspace/fix.py \"$(python3 -c 'import aiter, os; print(os.path.dirname(aiter.__file__))')/ops/triton/gemm.py\"",
            "engine-patch",
            2,
        ),
        ("a mount assembled in a variable", mount, "engine-patch", 3),
    ]);
    let honest = [
        "python3 - <<'EOF'\nimport importlib.util, os\nspec = importlib.util.find_spec('vllm')\nprint(open(os.path.join(os.path.dirname(spec.origin), 'version.py')).read())\nEOF",
        "M=\"${EXTRA_DOCKER_MOUNTS:-} -v /data/models:/models:ro\"\ndocker run --rm $M img python3 -m sglang.launch_server --model-path /models/m",
        "cp /workspace/fix.py /tmp/aiter_notes.py",
    ];
    assert_no_engine_patch(&honest);
}

/// An srt-slurm recipe's `setup_script:` runs in the engine's container
/// before the workers start: a script of the recipes' `configs/` that
/// edits the engine is an error at its line, in the full audit and with
/// `--changed-since`; one that only installs a tool is not.
#[test]
fn an_srt_slurm_setup_script_that_edits_the_engine_is_an_error() {
    let recipe = (
        "benchmarks/multi_node/srt-slurm-recipes/vllm/x/agg.yaml",
        "name: x\nsetup_script: deps.sh\nbackend:\n  type: vllm\n  vllm_config:\n    aggregated:\n      tensor-parallel-size: 8\nbenchmark:\n  type: sa-bench\n  isl: 1024\n  osl: 1024\n",
    );
    let setup = "benchmarks/multi_node/srt-slurm-recipes/configs/deps.sh";
    let honest = "#!/bin/bash\napt-get install -y jq\n";
    let breach = "#!/bin/bash\napt-get install -y jq\nsed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py\n";
    assert_caught("a setup_script editing vLLM", &[recipe, (setup, honest)], setup, breach, "engine-patch", 3);
}

/// A multi-node entry runs what its runner runs, evaluated with the
/// entry's inputs (`IS_MULTINODE`, the exp-name's model prefix), not the
/// single-node script the name grammar picks for its model, precision and
/// SKU: a forbidden flag in that script is the entry's; a script in which
/// the auditor finds no engine launch leaves the entry undetermined,
/// naming it.
#[test]
fn a_multi_node_entry_runs_what_its_runner_runs() {
    let entry = |prefix: &str| {
        format!(
            "{prefix}-fp8-mi355x-sglang-disagg:\n  image: lmsysorg/sglang:v1\n  model: x/X\n  model-prefix: {prefix}\n  precision: fp8\n  framework: sglang-disagg\n  runner: mi355x-amds\n  multinode: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-start: 4, conc-end: 4 }}\n"
        )
    };
    let launcher = "#!/usr/bin/env bash\nif [[ \"$IS_MULTINODE\" == \"true\" ]]; then\n  SCRIPT_NAME=\"${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh\"\n  JOB_ID=$(bash \"benchmarks/multi_node/${SCRIPT_NAME}\")\nelse\n  bash benchmarks/single_node/fixed_seq_len/${EXP_NAME%%_*}_${PRECISION}_mi355x.sh\nfi\n";
    let master = format!("{}{}", entry("q"), entry("r"));
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[
            ("configs/amd-master.yaml", master.as_str()),
            ("runners/launch_mi355x-amds.sh", launcher),
            ("benchmarks/single_node/fixed_seq_len/q_fp8_mi355x.sh", "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /m --tp 8\n"),
            (
                "benchmarks/multi_node/q_fp8_mi355x_sglang-disagg.sh",
                "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /m --tp 8 --disaggregation-mode decode\n",
            ),
            ("benchmarks/single_node/fixed_seq_len/r_fp8_mi355x.sh", "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /m --tp 8\n"),
            ("benchmarks/multi_node/r_fp8_mi355x_sglang-disagg.sh", "#!/usr/bin/env bash\nsbatch job.slurm\n"),
        ],
    );
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    let reason = |id: &str| {
        let jobs = report["jobs"].as_array().unwrap();
        let job = jobs.iter().find(|j| j["id"] == id).unwrap_or_else(|| panic!("no job {id}: {:#?}", jobs.iter().map(|j| &j["id"]).collect::<Vec<_>>()));
        job["kind_reason"].as_str().unwrap().to_string()
    };
    let q = reason("configs/amd-master.yaml#q-fp8-mi355x-sglang-disagg");
    assert!(q.ends_with("runs benchmarks/multi_node/q_fp8_mi355x_sglang-disagg.sh (by its runner's evaluation)"), "{q}");
    let r = reason("configs/amd-master.yaml#r-fp8-mi355x-sglang-disagg");
    assert!(r.contains("its runner runs benchmarks/multi_node/r_fp8_mi355x_sglang-disagg.sh") && !r.contains("single_node"), "{r}");
    let not_in_input = report["not_in_input"].to_string();
    assert!(not_in_input.contains("r_fp8_mi355x_sglang-disagg.sh"), "{not_in_input}");
}
