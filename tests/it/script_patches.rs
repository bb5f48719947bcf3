//! `engine-patch` on what a script does: a start-up hook, a harness tool's
//! hook or install, and a patch command in a log beside the scripts. Each
//! case pins a decision of `checks::engine_patch` that mutation testing
//! showed no other test holds (TESTING.md).

use crate::common::*;
use serde_json::Value;

const SCRIPT: &str = "benchmarks/single_node/agentic/x_fp8_h200_mtp.sh";

/// (rule, severity, line) of every engine-patch finding, sorted, and the check.
fn engine_patch(files: &[(&str, &str)]) -> (Vec<(String, String, u64)>, Value) {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), files);
    let report = json(&audit(&[tmp.path().to_str().unwrap(), "--format", "json"]));
    let check = check(&report, "engine-patch").clone();
    let mut got: Vec<(String, String, u64)> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string(), f["evidence"][0]["line"].as_u64().unwrap_or(0)))
        .collect();
    got.sort();
    (got, check)
}

fn expect(rows: &[(&str, &str, u64)]) -> Vec<(String, String, u64)> {
    let mut rows: Vec<(String, String, u64)> = rows.iter().map(|(r, s, l)| (r.to_string(), s.to_string(), *l)).collect();
    rows.sort();
    rows
}

/// A `sitecustomize.py`/`usercustomize.py` anywhere, or a `.pth` under
/// site-packages, is a start-up hook (error) unless a harness tool's name
/// marks it as the harness's (warning); a `.pth` elsewhere and a plain file
/// of an unknown package are not the engine's. A local tree installed is
/// owned by the package its directory names; an install names package and
/// source. A harness's configuration written is not its code changing. A
/// package the policy does not know is an error when installed from a file
/// or tree, not from the index.
#[test]
fn hooks_and_local_installs_are_judged_by_whose_they_are() {
    let script = concat!(
        "#!/usr/bin/env bash\n",
        "SITE=/usr/local/lib/python3.10/dist-packages\n",
        "echo 'import zz_trace' > $SITE/zz_inject.pth\n",
        "cp extra.pth /tmp/cfg/extra.pth\n",
        "cp helper_util.py $SITE/helper_util.py\n",
        "cp hook.py /opt/hooks/usercustomize.py\n",
        "setup_lm_eval_hook() {\n",
        "    cat > /opt/lm_hooks/sitecustomize.py <<'PY'\n",
        "import os\n",
        "PY\n",
        "}\n",
        "setup_lm_eval_hook\n",
        "pip install -e /opt/bench/aiperf\n",
        "pip install git+https://github.com/sgl-project/sglang.git\n",
        "cp profile.yaml $SITE/aiperf/configs/profile.yaml\n",
        "pip install /tmp/wheels/fastkern-1.0-py3-none-any.whl\n",
        "pip install requests\n",
        "python3 -m sglang.launch_server --model-path /models/x --port 30000 &\n",
    );
    let (got, check) = engine_patch(&[(SCRIPT, script)]);
    assert_eq!(
        got,
        expect(&[
            ("engine-patch/script-hook", "error", 3),
            ("engine-patch/script-hook", "error", 6),
            ("engine-patch/harness", "warning", 8),
            ("engine-patch/harness", "warning", 13),
            ("engine-patch/rebuilt-engine", "error", 14),
            ("engine-patch/install", "error", 16),
        ]),
        "{check:#}"
    );
    let harness: Vec<&str> =
        check["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "engine-patch/harness").map(|f| f["message"].as_str().unwrap()).collect();
    assert!(harness.iter().any(|m| m.contains("harness (lm-eval)")), "the hook is lm-eval's, named by its function: {harness:?}");
    assert!(harness.iter().any(|m| m.contains("harness (aiperf)")), "the tree installed is aiperf's: {harness:?}");
    let install = check["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "engine-patch/rebuilt-engine").unwrap();
    assert!(install["message"].as_str().unwrap().contains("builds sglang from git+https://github.com/sgl-project/sglang.git"), "package and source: {install}");
    assert_eq!(check["status"], "fail");
    assert!(check["summary"].as_str().unwrap().starts_with("4 engine patch(es) without a complete waiver"), "{}", check["summary"]);
}

/// Check 10 as written: a serving engine rebuilt from a fork, a pull-request
/// head or a checkout is an error; another engine package built from a ref
/// is a warning naming the ref; a released package from the index, or one
/// from the image's own files, a warning naming it; an engine package
/// installed once the server is up is the client's (warning).
#[test]
fn installs_are_judged_as_check_10_writes_them() {
    let script = concat!(
        "#!/usr/bin/env bash\n",
        "pip install git+https://github.com/vllm-project/vllm.git@refs/pull/4242/head\n",
        "git clone https://github.com/someone/vllm.git /tmp/vllm\n",
        "cd /tmp/vllm\n",
        "git checkout 0123abcd\n",
        "pip install --force-reinstall -e .\n",
        "cd /\n",
        "pip install -U \"git+https://github.com/huggingface/transformers.git@6ed9ee36f608fd145168377345bfc4a5de12e1e2\"\n",
        "pip install amd-quark\n",
        "pip install /opt/rocm/share/amd_smi\n",
        "python3 -m sglang.launch_server --model-path /models/x --port 30000 &\n",
        "wait_for_server_ready --port 30000\n",
        "pip install -q --upgrade transformers\n",
    );
    let (got, check) = engine_patch(&[(SCRIPT, script)]);
    assert_eq!(
        got,
        expect(&[
            ("engine-patch/rebuilt-engine", "error", 2),
            ("engine-patch/rebuilt-engine", "error", 6),
            ("engine-patch/unmerged-ref", "warning", 8),
            ("engine-patch/stock-package", "warning", 9),
            ("engine-patch/stock-package", "warning", 10),
            ("engine-patch/client-install", "warning", 13),
        ]),
        "{check:#}"
    );
    let message =
        |line: u64| check["findings"].as_array().unwrap().iter().find(|f| f["evidence"][0]["line"] == line).unwrap()["message"].as_str().unwrap().to_string();
    assert!(message(6).contains("vllm from https://github.com/someone/vllm.git at 0123abcd"), "{}", message(6));
    assert!(message(10).contains("the image's own files (/opt/rocm/share/amd_smi)"), "{}", message(10));
    assert!(message(9).contains("amd-quark from the package index"), "{}", message(9));
    assert!(check["summary"].as_str().unwrap().starts_with("2 engine patch(es) without a complete waiver"), "{}", check["summary"]);
}

/// A bind mount whose container path lies in an engine's installed tree
/// (site-packages, /sgl-workspace) replaces engine files while it runs:
/// `docker run -v` (also assembled in a variable), `--mount type=bind`, and
/// pyxis `srun --container-mounts`. Mounts of models, logs and the
/// workspace are not the engine's.
#[test]
fn bind_mounts_over_an_engine_tree_are_engine_patches() {
    let script = concat!(
        "#!/usr/bin/env bash\n",
        "MOUNTS=\"-v $PWD/patches/scheduler.py:/usr/local/lib/python3.12/dist-packages/vllm/v1/core/sched/scheduler.py:ro\"\n",
        "docker run --rm $MOUNTS -v /data/models:/data/models vllm/vllm-openai:v0.24.0 vllm serve /data/models/x\n",
        "docker run --mount type=bind,source=/home/u/fix.py,target=/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py lmsysorg/sglang:v1 python3 -m sglang.launch_server --model-path /m\n",
        "srun --container-image=x --container-mounts=$GITHUB_WORKSPACE:/workspace,/tmp/x/io.py:/sgl-workspace/sglang/python/sglang/srt/io.py bash run.sh\n",
        "docker run -v /tmp:/run_logs -v \"$HF_HOME:/root/.cache/huggingface\" busybox true\n",
        "podman run -v=/tmp/m.py:/sgl-workspace/sglang/python/sglang/srt/m.py img true\n",
    );
    let (got, check) = engine_patch(&[(SCRIPT, script)]);
    assert_eq!(
        got,
        expect(&[
            ("engine-patch/bind-mount", "error", 3),
            ("engine-patch/bind-mount", "error", 4),
            ("engine-patch/bind-mount", "error", 5),
            ("engine-patch/bind-mount", "error", 7)
        ]),
        "{check:#}"
    );
    let messages: Vec<&str> = check["findings"].as_array().unwrap().iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert!(
        // `$PWD` is the run's working directory, /workspace, where the interpreter evaluates the script.
        messages
            .iter()
            .any(|m| m.contains("/workspace/patches/scheduler.py over /usr/local/lib/python3.12/dist-packages/vllm/v1/core/sched/scheduler.py (vllm)")),
        "the mounted file and the engine file it covers: {messages:#?}"
    );
    assert!(messages.iter().any(|m| m.starts_with("srun --container-mounts lays /tmp/x/io.py over /sgl-workspace/")), "{messages:#?}");
}

/// The signature rules that parsed commands replace in scripts still run
/// over logs: a `git apply` in a server log's shell trace is reported, and
/// a waiver that names another script does not cover it.
#[test]
fn a_patch_command_in_a_log_is_reported_beside_a_clean_script() {
    let log = concat!(
        "+ cd /sgl-workspace/sglang\n",
        "+ git apply /tmp/fix-indexer.patch\n",
        "[2026-10-14 03:12:55] server_args=ServerArgs(model_path='/models/x', port=30000)\n",
    );
    let script = "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /models/x --port 30000\n";
    // A waiver for another script does not cover it, and the message says so.
    let waiver = "# Waiver\n## Config covered\n`apply_fix.sh`\n## What is patched\nThe indexer.\n## Why the upstream image cannot run it\nIt crashes.\n## Upstream PR / issue links\n- https://github.com/sgl-project/sglang/pull/1\n## Removal plan\nDrop with v0.6.\n";
    let (got, check) = engine_patch(&[("server_logs_x/server.log", log), (SCRIPT, script), ("docs/waiver/7.md", waiver)]);
    assert_eq!(got, expect(&[("engine-patch/git-apply", "error", 2)]), "{check:#}");
    let message = check["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("none of the 1 waiver(s) names server.log"), "{message}");
    assert!(check["summary"].as_str().unwrap().starts_with("1 engine patch(es) without a complete waiver"), "{}", check["summary"]);
}

/// An engine file written is one finding at the statement that writes it:
/// copied over, or written by the Python the script runs (a heredoc, `-c`,
/// a program it wrote to a file and runs later), evaluated, at the Python
/// line. The signature rule that also matches that line is the same cause,
/// and so is the pattern reader's `python -c` write.
#[test]
fn engine_files_written_are_named_by_how() {
    let script = concat!(
        "#!/usr/bin/env bash\n",
        "cp fixed_scheduler.py /sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\n",
        "python3 - <<'PY'\n",
        "open('/sgl-workspace/sglang/python/sglang/srt/layers/topk.py', 'w').write('')\n",
        "PY\n",
        "python3 -c \"import sys\n",
        "open('/sgl-workspace/sglang/python/sglang/srt/layers/sampler.py', 'w').write('')\"\n",
        "cat > /tmp/fix.py <<'PY'\n",
        "open('/sgl-workspace/sglang/python/sglang/srt/layers/radix.py', 'w').write('')\n",
        "PY\n",
        "python3 /tmp/fix.py\n",
        "python3 -m sglang.launch_server --model-path /models/x --port 30000\n",
    );
    let (got, check) = engine_patch(&[(SCRIPT, script)]);
    let want = expect(&[
        ("engine-patch/overwrite", "error", 2),
        ("engine-patch/overwrite", "error", 4),
        ("engine-patch/overwrite", "error", 7),
        ("engine-patch/overwrite", "error", 9),
    ]);
    assert_eq!(got, want, "{check:#}");
    assert_eq!(check["status"], "fail");
}
