//! Static recipe audit (the PR gate): `auditor audit` on a checkout of
//! master configs, srt-slurm recipes and launch scripts, before any run.

use crate::common::*;
use serde_json::Value;

const PASS_TREE: &str = "samples/recipes-pass";
const FAIL_TREE: &str = "samples/recipes-fail";
const RECIPES: &str = "benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4";
const SCRIPT: &str = "benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp.sh";
const MASTER: &str = "configs/nvidia-master.yaml";

fn audit_json(input: &str) -> (i32, Value) {
    let out = audit(&[input, "--format", "json"]);
    (code(&out), json(&out))
}

/// The findings of check `id` that concern `job` (alone, or among the jobs one finding groups).
fn findings<'a>(report: &'a Value, id: &str, job: &str) -> Vec<&'a Value> {
    let concerns = |f: &Value| f["job"] == job || f["jobs"].as_array().is_some_and(|jobs| jobs.iter().any(|j| j == job));
    check(report, id)["findings"].as_array().unwrap().iter().filter(|f| concerns(f)).collect()
}

fn job<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["jobs"].as_array().unwrap().iter().find(|j| j["id"] == id).unwrap_or_else(|| panic!("no job {id}"))
}

/// (file, line) of each evidence item of a finding.
fn places(finding: &Value) -> Vec<(String, u64)> {
    finding["evidence"].as_array().unwrap().iter().map(|e| (e["file"].as_str().unwrap().to_string(), e["line"].as_u64().unwrap_or(0))).collect()
}

#[test]
fn every_role_script_path_and_entry_is_a_job() {
    let (_, report) = audit_json(PASS_TREE);
    let recipe = format!("{RECIPES}/dsv4-fp4-gb200-mtp3-agentic.yaml");
    let mut ids: Vec<(&str, &str, Option<&str>)> =
        report["jobs"].as_array().unwrap().iter().map(|j| (j["id"].as_str().unwrap(), j["kind"].as_str().unwrap(), j["role"].as_str())).collect();
    ids.sort();
    let expected = [
        (format!("{recipe}#decode"), "throughput", Some("decode")),
        (format!("{recipe}#prefill"), "throughput", Some("prefill")),
        (SCRIPT.to_string(), "throughput", None),
        (format!("{SCRIPT} (eval-only)"), "eval-only", None),
        (format!("{MASTER}#dsv4-fp4-b200-sglang-agentic"), "throughput", None),
        (format!("{MASTER}#dsv4-fp4-gb200-dynamo-sglang-agentic"), "throughput", None),
        ("repository".to_string(), "run-level", None),
    ];
    let expected: Vec<(&str, &str, Option<&str>)> = expected.iter().map(|(id, kind, role)| (id.as_str(), *kind, *role)).collect();
    assert_eq!(ids, expected);
    let decode = job(&report, &format!("{recipe}#decode"));
    assert_eq!((decode["from_sources"].clone(), decode["scenario"].clone()), (Value::Bool(true), Value::from("agentic-coding")));
    assert_eq!(decode["meta"]["model_prefix"], "dsv4", "from the master-config entry that runs the recipe");
    assert!(job(&report, &format!("{recipe}#prefill"))["kind_reason"].as_str().unwrap().contains("informational"));
    let entry = job(&report, &format!("{MASTER}#dsv4-fp4-gb200-dynamo-sglang-agentic"));
    assert_eq!((entry["meta"]["hw"].as_str(), entry["meta"]["image"].as_str()), (Some("gb200"), Some("lmsysorg/sglang:v0.5.16-cu130")));
    assert!(entry["kind_reason"].as_str().unwrap().contains(&format!("{recipe}#decode")));
    let helper = report["files"].as_array().unwrap().iter().find(|f| f["path"] == "benchmarks/benchmark_lib.sh").unwrap();
    assert_eq!(helper["job"], "repository");
}

#[test]
fn the_pass_tree_passes_every_check() {
    let (code, report) = audit_json(PASS_TREE);
    assert_eq!(code, 0);
    assert_eq!(report["verdict"], "pass");
    for c in report["checks"].as_array().unwrap() {
        let expected = if c["id"] == "eval-threshold" { "na" } else { "pass" };
        assert_eq!(c["status"], expected, "{}: {}", c["id"], c["summary"]);
    }
    // The runner's injector pins the AL the entry names; golden-al recomputes it from the recipe's K.
    let recipe = format!("{RECIPES}/dsv4-fp4-gb200-mtp3-agentic.yaml");
    let matched = findings(&report, "golden-al", &format!("{MASTER}#dsv4-fp4-gb200-dynamo-sglang-agentic"));
    assert_eq!(matched.len(), 1);
    assert_eq!(matched[0]["rule"], "golden-al/match");
    assert!(matched[0]["message"].as_str().unwrap().contains("K=3"), "{}", matched[0]["message"]);
    let at = places(matched[0]);
    assert_eq!(at[0], (MASTER.to_string(), 25), "SYNTHETIC_ACCEPTANCE_LENGTH");
    assert_eq!(at[1], (recipe.clone(), 46), "the decode role's speculative-num-steps");
    assert_eq!(findings(&report, "golden-al", &format!("{recipe}#decode")).len(), 1);
}

#[test]
fn prefill_roles_are_informational() {
    let (_, report) = audit_json(FAIL_TREE);
    // Prefill drafts K=3 and simulates at K=3's AL, decode drafts K=2 at the same AL: only decode is judged.
    let prefill = format!("{RECIPES}/dsv4-fp4-gb200-mtp-agentic.yaml#prefill");
    for id in ["golden-al", "sim-acc-throughput", "sim-acc-eval"] {
        assert!(findings(&report, id, &prefill).is_empty(), "{id} judged the prefill role");
    }
    assert_eq!(job(&report, &prefill)["role"], "prefill");
    let decode = findings(&report, "golden-al", &format!("{RECIPES}/dsv4-fp4-gb200-mtp-agentic.yaml#decode"));
    assert_eq!(decode.len(), 1);
}

#[test]
fn eval_only_paths_of_scripts() {
    let (_, pass) = audit_json(PASS_TREE);
    // Gated on EVAL_ONLY != true: the throughput path simulates, the eval-only path does not.
    let simulated = findings(&pass, "sim-acc-throughput", SCRIPT);
    assert_eq!(simulated[0]["rule"], "sim-acc-throughput/simulated");
    let lines: Vec<u64> = places(simulated[0]).into_iter().map(|(_, l)| l).collect();
    assert_eq!(lines, [13, 14, 15]);
    assert_eq!(check(&pass, "sim-acc-eval")["status"], "pass");
    assert!(findings(&pass, "sim-acc-eval", &format!("{SCRIPT} (eval-only)")).is_empty());

    let (_, fail) = audit_json(FAIL_TREE);
    // Unconditional exports reach both paths.
    assert!(findings(&fail, "sim-acc-throughput", SCRIPT).iter().all(|f| f["rule"] == "sim-acc-throughput/simulated"));
    let eval_job = job(&fail, &format!("{SCRIPT} (eval-only)"));
    assert_eq!(eval_job["kind"], "eval-only");
    assert!(eval_job["kind_reason"].as_str().unwrap().contains("EVAL_ONLY=true"));

    // `auditor evidence` on the directory shows each path's view; the `&&`
    // one-liner that sets EVAL_FRAMEWORK belongs to the eval-only path only.
    let out = auditor(&["evidence", FAIL_TREE, "--format", "json"]);
    let evidence = json(&out);
    let view = |id: &str| evidence["jobs"].as_array().unwrap().iter().find(|j| j["job"]["id"] == id).unwrap().clone();
    assert!(view(&format!("{SCRIPT} (eval-only)"))["env"].get("EVAL_FRAMEWORK").is_some());
    assert!(view(SCRIPT)["env"].get("EVAL_FRAMEWORK").is_none());
    assert!(view(SCRIPT)["env"].get("SGLANG_SIMULATE_ACC_LEN").is_some());
    // On the script alone it shows the whole file.
    let whole = json(&auditor(&["evidence", &format!("{FAIL_TREE}/{SCRIPT}"), "--format", "json"]));
    assert!(whole["env"].get("EVAL_FRAMEWORK").is_some() && whole["env"].get("SGLANG_SIMULATE_ACC_LEN").is_some());
    assert_eq!(whole["env"]["EVAL_FRAMEWORK"]["gate"], "eval-only");
    assert!(whole["env"]["SGLANG_SIMULATE_ACC_LEN"].get("gate").is_none());
}

#[test]
fn the_fail_tree_fails_golden_al_sim_acc_eval_and_upstream_image() {
    let (code, report) = audit_json(FAIL_TREE);
    assert_eq!(code, 1);
    let recipe = format!("{RECIPES}/dsv4-fp4-gb200-mtp-agentic.yaml");

    // A decode role pinning K=3's golden AL (2.49) while drafting K=2 (2.27).
    let golden = check(&report, "golden-al");
    assert_eq!(golden["status"], "fail");
    let mismatch = findings(&report, "golden-al", &format!("{recipe}#decode"));
    assert_eq!(mismatch[0]["rule"], "golden-al/mismatch");
    assert_eq!(mismatch[0]["severity"], "error");
    let message = mismatch[0]["message"].as_str().unwrap();
    assert!(message.contains("K=2 is 2.27") && message.contains("2.49 is the golden AL for K=3"), "{message}");
    let at = places(mismatch[0]);
    assert_eq!(at[0], (recipe.clone(), 25), "SGLANG_SIMULATE_ACC_LEN in decode_environment");
    assert_eq!(at[1], (recipe.clone(), 44), "the decode role's speculative-num-steps: 2");
    let entry = findings(&report, "golden-al", &format!("{MASTER}#dsv4-fp4-gb200-dynamo-sglang-agentic"));
    assert_eq!(entry[0]["rule"], "golden-al/mismatch", "the entry that runs the recipe fails too");

    // A script exporting simulation unconditionally: its eval-only path reaches it.
    let eval = check(&report, "sim-acc-eval");
    assert_eq!(eval["status"], "fail");
    let simulated = findings(&report, "sim-acc-eval", &format!("{SCRIPT} (eval-only)"));
    assert_eq!((simulated[0]["rule"].as_str(), simulated[0]["severity"].as_str()), (Some("sim-acc-eval/simulated"), Some("error")));
    assert_eq!(places(simulated[0])[0], (SCRIPT.to_string(), 9));

    // A master-config entry on a vendor image on an established SKU.
    let image = check(&report, "upstream-image");
    assert_eq!(image["status"], "fail");
    let not_upstream = findings(&report, "upstream-image", &format!("{MASTER}#dsv4-fp4-b200-sglang-agentic"));
    assert_eq!(not_upstream[0]["rule"], "upstream-image/not-upstream");
    assert_eq!(places(not_upstream[0]), [(MASTER.to_string(), 51)]);
    assert!(not_upstream[0]["evidence"][0]["text"].as_str().unwrap().contains("ghcr.io/acme-ai/sglang-dsv4"));

    // SYNTHETIC_ACCEPTANCE=true on a fixed-seq entry is simulation on fixed-seq.
    let fixed = findings(&report, "sim-acc-throughput", &format!("{MASTER}#dsv4-fp4-gb200-dynamo-sglang"));
    assert_eq!(fixed[0]["rule"], "sim-acc-throughput/fixed-seq");
    assert_eq!(places(fixed[0])[0], (MASTER.to_string(), 47));
}

#[test]
fn archives_of_a_checkout_audit_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("checkout.zip");
    zip_tree(&root().join(FAIL_TREE), "InferenceX", &zip);
    let (code, report) = audit_json(zip.to_str().unwrap());
    assert_eq!(code, 1);
    let recipe = format!("InferenceX/{RECIPES}/dsv4-fp4-gb200-mtp-agentic.yaml#decode");
    assert_eq!(findings(&report, "golden-al", &recipe)[0]["rule"], "golden-al/mismatch", "CONFIG_FILE matched by path suffix inside the archive");
    assert_eq!(check(&report, "upstream-image")["status"], "fail");
}

#[test]
fn a_recipe_no_entry_runs_is_undetermined_not_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let recipe = std::fs::read_to_string(root().join(PASS_TREE).join(format!("{RECIPES}/dsv4-fp4-gb200-mtp3-agentic.yaml"))).unwrap();
    write_tree(tmp.path(), &[("recipes/x-agentic.yaml", recipe.as_str())]);
    let (_, report) = audit_json(tmp.path().to_str().unwrap());
    // Simulation would come from the entry's SYNTHETIC_ACCEPTANCE settings, which the input does not hold.
    let open = findings(&report, "sim-acc-throughput", "recipes/x-agentic.yaml#decode");
    assert_eq!(open[0]["rule"], "sim-acc-throughput/undetermined", "{}", open[0]["message"]);
    assert!(open[0]["message"].as_str().unwrap().contains("master-config entry"));
}

/// In a checkout with its master configs, a recipe none of their entries
/// runs (CONFIG_FILE) is not a job: nothing runs it, so nothing it would
/// run is judged or left undetermined; its files stay in the repository's.
#[test]
fn a_recipe_no_entry_of_the_checkout_runs_is_not_a_job() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let status = std::process::Command::new("cp").args(["-r", PASS_TREE, tree.to_str().unwrap()]).status().unwrap();
    assert!(status.success());
    let recipe = std::fs::read_to_string(tree.join(format!("{RECIPES}/dsv4-fp4-gb200-mtp3-agentic.yaml"))).unwrap();
    // It drafts and leaves simulation to its entry: alone it is undetermined (see above).
    std::fs::write(tree.join(format!("{RECIPES}/unrun-agentic.yaml")), recipe).unwrap();
    let (code, report) = audit_json(tree.to_str().unwrap());
    assert_eq!(code, 0, "{report}");
    let id = format!("{RECIPES}/unrun-agentic.yaml#decode");
    assert!(report["jobs"].as_array().unwrap().iter().all(|j| j["id"] != id.as_str()), "no job for the recipe no entry runs");
    assert!(findings(&report, "sim-acc-throughput", &id).is_empty());
}

/// A checkout that carries its own golden tables is judged against them, not
/// the embedded copies: the same recipe that matches the embedded dsv4 table
/// fails against a tree whose table says otherwise, and the finding cites the
/// tree's file and cell.
#[test]
fn a_tree_is_judged_against_its_own_golden_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let status = std::process::Command::new("cp").args(["-r", PASS_TREE, tree.to_str().unwrap()]).status().unwrap();
    assert!(status.success());
    let embedded = std::fs::read_to_string("policies/golden/dsv4_mtp.yaml").unwrap();
    assert!(embedded.contains("    3: 2.49\n"));
    std::fs::create_dir_all(tree.join("golden_al_distribution")).unwrap();
    std::fs::write(tree.join("golden_al_distribution/dsv4_mtp.yaml"), embedded.replace("    3: 2.49\n", "    3: 2.61\n")).unwrap();
    let (code, report) = audit_json(tree.to_str().unwrap());
    assert_eq!(code, 1, "{report}");
    let golden = check(&report, "golden-al");
    let mismatch = golden["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "golden-al/mismatch").expect("mismatch against the tree's table");
    let message = mismatch["message"].as_str().unwrap();
    assert!(message.contains("2.61"), "{message}");
    let cited: Vec<(String, u64)> = places(mismatch);
    assert!(cited.contains(&("golden_al_distribution/dsv4_mtp.yaml".to_string(), 13)), "the tree's cell is cited: {cited:?}");
}

/// A launch script in the shape of the agentic SGLang recipes: the server
/// command is a bash array spanning lines (with comment lines inside),
/// speculative flags come from a second array, and it runs as `"${CMD[@]}"`.
/// It simulates acceptance length `al` (the recipes' 3.39 is the golden AL
/// of qwen3.5 MTP, thinking on, K=3).
fn array_launch_script(steps: u32, al: &str) -> String {
    format!(
        r#"#!/usr/bin/env bash
SPEC_ARGS=(
    --speculative-algorithm EAGLE
    # --speculative-num-steps 3
    --speculative-num-steps {steps}
    --speculative-eagle-topk 1
)
if [ "${{EVAL_ONLY:-false}}" != "true" ]; then
    export SGLANG_SIMULATE_ACC_LEN={al}
    export SGLANG_SIMULATE_ACC_METHOD=match-expected
    export SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token
fi
SGLANG_CMD=(
    python3 -m sglang.launch_server
    --model-path="$MODEL_PATH"
    --served-model-name "Qwen/Qwen3.5-397B-A17B-FP8"
    # --cuda-graph-max-bs "$CONC"
    --tensor-parallel-size="$TP"
    "${{SPEC_ARGS[@]}}"
)
printf '%q ' "${{SGLANG_CMD[@]}}" | tee "$RESULT_DIR/sglang_command.txt"
"${{SGLANG_CMD[@]}}" > "$SERVER_LOG" 2>&1 &
"#
    )
}

#[test]
fn golden_al_reads_bash_array_launches() {
    const PATH: &str = "benchmarks/single_node/agentic/qwen3.5_fp8_h200_mtp.sh";
    for (steps, rule) in [(3, "golden-al/match"), (2, "golden-al/mismatch")] {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[(PATH, array_launch_script(steps, "3.39").as_str())]);
        let (_, report) = audit_json(tmp.path().to_str().unwrap());
        let judged = findings(&report, "golden-al", PATH);
        assert_eq!(judged.len(), 1, "K={steps}: {judged:?}");
        assert_eq!(judged[0]["rule"], rule, "K={steps}: {}", judged[0]["message"]);
        assert!(judged[0]["message"].as_str().unwrap().contains(&format!("K={steps}")), "{}", judged[0]["message"]);
        let status = if steps == 3 { "pass" } else { "fail" };
        assert_eq!(check(&report, "golden-al")["status"], status);
    }
}

#[test]
fn engine_patches_in_scripts_are_judged_on_parsed_commands() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/x_fp8_h200_mtp.sh";
    const WAIVED: &str = "benchmarks/single_node/agentic/apply_fix.sh";
    let script = concat!(
        "#!/usr/bin/env bash\n",
        "TOK=/sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py\n",
        "if ! sed -n '/a/,/b/p' \"$TOK\" | grep -q c; then\n",
        "    sed -i '/a/,/b/ {\n",
        "        /c/a\\\n",
        "            d\n",
        "    }' \"$TOK\"\n",
        "fi\n",
        "python3 - <<'PY'\n",
        "import json\n",
        "print(json.load(open('/sgl-workspace/results.json')))\n",
        "PY\n",
        "git clone https://github.com/NVIDIA/srt-slurm.git srt-slurm\n",
        "cd srt-slurm\n",
        "git show abc -- src/srtctl/x.sh | git apply -\n",
        "uv pip install -e .\n",
    );
    let waived = "#!/usr/bin/env bash\npatch -p1 -d /sgl-workspace/sglang < fix.diff\n";
    let waiver = "# Waiver\n## Config covered\n`apply_fix.sh`\n## What is patched\nThe indexer.\n## Why the upstream image cannot run it\nIt crashes.\n## Upstream PR / issue links\n- https://github.com/sgl-project/sglang/pull/1\n## Removal plan\nDrop with v0.6.\n";
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(SCRIPT, script), (WAIVED, waived), ("docs/waiver/7.md", waiver)]);
    let (_, report) = audit_json(tmp.path().to_str().unwrap());
    let got: Vec<(String, String, String, u64)> = check(&report, "engine-patch")["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let (file, line) = places(f)[0].clone();
            (f["rule"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string(), file, line)
        })
        .collect();
    let expected = [
        ("engine-patch/edit", "error", SCRIPT, 4),
        ("engine-patch/harness", "warning", SCRIPT, 15),
        ("engine-patch/harness", "warning", SCRIPT, 16),
        ("engine-patch/waived", "info", WAIVED, 2),
    ];
    let mut got = got;
    got.sort();
    let expected: Vec<(String, String, String, u64)> = expected.iter().map(|(r, s, f, l)| (r.to_string(), s.to_string(), f.to_string(), *l)).collect();
    assert_eq!(got, expected, "the read-only sed -n and Python read are not patches; no line-regex double report");
    assert_eq!(check(&report, "engine-patch")["status"], "fail");
}

/// The golden-AL tolerance is 0.005 either side, as the recipe writes the
/// value: 3.395 and 3.385 match the golden 3.39 (though 3.385 - 3.39 is a
/// hair over 0.005 in binary floating point), 3.3951 and 3.3849 do not.
#[test]
fn golden_al_accepts_exactly_the_tolerance_either_side_and_nothing_past_it() {
    const PATH: &str = "benchmarks/single_node/agentic/qwen3.5_fp8_h200_mtp.sh";
    for (al, rule) in [("3.395", "golden-al/match"), ("3.385", "golden-al/match"), ("3.3951", "golden-al/mismatch"), ("3.3849", "golden-al/mismatch")] {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[(PATH, array_launch_script(3, al).as_str())]);
        let (_, report) = audit_json(tmp.path().to_str().unwrap());
        let judged = findings(&report, "golden-al", PATH);
        assert_eq!(judged.len(), 1, "{al}: {judged:?}");
        assert_eq!(judged[0]["rule"], rule, "{al}: {}", judged[0]["message"]);
        let status = if rule == "golden-al/match" { "pass" } else { "fail" };
        assert_eq!(check(&report, "golden-al")["status"], status, "{al}");
        let cited: Vec<String> = judged[0]["evidence"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap_or("").to_string()).collect();
        assert!(cited.iter().any(|t| t.contains(&format!("SGLANG_SIMULATE_ACC_LEN={al}"))), "{al}: the recipe's value is cited: {cited:?}");
    }
}

/// A recipe that master-config entries name but the checkout does not hold
/// (kept in NVIDIA/srt-slurm) is listed once, with how many jobs run it, as
/// not in the input; the jobs that run it are undetermined warnings with a
/// file and line, never errors; retired configs are skipped with the reason.
#[test]
fn recipes_outside_the_tree_are_listed_once_and_retired_configs_skipped() {
    let entry = |key: &str| {
        format!(
            "{key}:\n  image: lmsysorg/sglang:v0.5.16-cu130\n  model-prefix: dsv4\n  framework: dynamo-sglang\n  runner: gb200\n  multinode: true\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: mtp\n        additional-settings: [\"CONFIG_FILE=recipes/sglang/dsv4/elsewhere.yaml\"]\n"
        )
    };
    let master = format!("{}{}", entry("a-fp4-gb200-dynamo-sglang"), entry("b-fp4-gb200-dynamo-sglang"));
    let tmp = tempfile::tempdir().unwrap();
    let retired = "old-fp4-b200-sglang:\n  image: ghcr.io/someone/sglang:x\n  framework: sglang\n  runner: b200\n";
    write_tree(tmp.path(), &[(MASTER, master.as_str()), ("configs/deprecated/old-master.yaml", retired)]);
    let (_, report) = audit_json(tmp.path().to_str().unwrap());
    let listed: Vec<&str> = report["not_in_input"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(listed[0].contains("recipes/sglang/dsv4/elsewhere.yaml") && listed[0].contains("(2 job(s) run it)"), "{}", listed[0]);
    for f in crate::common::findings(&report).filter(|f| f["rule"] == "sim-acc-throughput/undetermined") {
        assert_eq!(f["severity"], "warning", "{f}");
        assert!(f["evidence"][0]["line"].as_u64().is_some(), "{f}");
    }
    assert!(crate::common::findings(&report).all(|f| f["severity"] != "error"), "the retired ghcr.io image is not judged");
    let old = report["files"].as_array().unwrap().iter().find(|f| f["path"] == "configs/deprecated/old-master.yaml").unwrap();
    assert_eq!(old["status"], "skipped");
    assert!(old["reason"].as_str().unwrap().contains("--include-deprecated"), "{old}");
    let (_, with_retired) = audit_json_args(tmp.path().to_str().unwrap(), &["--include-deprecated"]);
    assert!(crate::common::findings(&with_retired).any(|f| f["rule"] == "upstream-image/not-upstream"), "--include-deprecated audits it");
}

fn audit_json_args(input: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![input, "--format", "json"];
    args.extend_from_slice(extra);
    let out = audit(&args);
    (code(&out), json(&out))
}

/// vLLM drafts greedily unless the speculative config says otherwise, so a
/// Kimi-K3 DSpark recipe that does not name its draft sample method is held
/// to the greedy table, and one that names `probabilistic` to that table.
/// The recipe is the real one from the InferenceX snapshot, its sampling
/// switched to synthetic acceptance.
#[test]
fn a_vllm_recipe_without_a_draft_sample_method_is_held_to_the_greedy_table() {
    const PATH: &str = "benchmarks/multi_node/srt-slurm-recipes/vllm/kimi-k3/agentic/agg-gb200-dcp16-dspark4-maxseq2-mooncake-agentic.yaml";
    let real = std::fs::read_to_string(root().join("tests/fixtures/recipes/kimi-k3-vllm-agg-dspark4.yaml")).unwrap();
    let shipped = r#""draft_sample_method":"probabilistic","rejection_sample_method":"block""#;
    assert!(real.contains(shipped), "the fixture is the real recipe");
    for (sampling, al, rule, table) in [
        (r#""rejection_sample_method":"synthetic","synthetic_acceptance_length":3.22"#, "3.22", "golden-al/match", "kimik3_dspark (kimi-k3)"),
        (
            r#""draft_sample_method":"probabilistic","rejection_sample_method":"synthetic","synthetic_acceptance_length":3.22"#,
            "3.22",
            "golden-al/mismatch",
            "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method (kimi-k3)",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), &[(PATH, real.replace(shipped, sampling).as_str())]);
        let (_, report) = audit_json(tmp.path().to_str().unwrap());
        let judged = check(&report, "golden-al")["findings"].as_array().unwrap().clone();
        assert_eq!(judged.len(), 1, "{sampling}: {judged:?}");
        let message = judged[0]["message"].as_str().unwrap();
        assert_eq!(judged[0]["rule"], rule, "{sampling}: {message}");
        assert!(message.contains(&format!("(simulated AL {al})")) && message.contains(&format!("for {table} / thinking_on / K=4")), "{message}");
        assert_eq!(judged[0]["evidence"][0]["file"], PATH);
    }
}
