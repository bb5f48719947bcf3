#!/usr/bin/env python3
"""Generate one small run bundle per shape in which an environment variable
reaches a serving engine, each setting SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE (the
`forbidden-env` check must fail every one), plus one bundle where the variable
is only mentioned, disabled or unset (the check must pass); and the
`engine-patch` samples: a setup script that patches the installed engine,
and the waiver (samples/waivers/) that covers it.

Shapes follow shared/domain/INFERENCEX.md sections 5 (artifacts, srt-slurm log
tarball contents), 6 (env dumps, command files, recipe environment sections)
and 13.1 (evasion shapes: role env, anchors and merge keys, helpers, inline
prefixes, Python-side writes, image defaults). Deterministic; standard library
only; reuses generate.py's %q quoting and archive writer.
Usage: python3 samples/env_shapes.py
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from generate import write_command_text, write_tar_gz

HERE = Path(__file__).resolve().parent
OUT = HERE / "bundles" / "env-shapes"
FLAG = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"

SINGLE_RF = ("dsv4_tp8_conc8_kvnone_spec-mtp_fp4_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_"
             "disagg-false_spec-mtp_conc8_b200-dgxc_1")
MULTI_RF = ("dsv4_p1x4_d1x8ep8dpa_conc64_kvnone_fp4_dynamo-sglang_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw1_"
            "decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc64_gb200-nv_0")

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "/data/models/DeepSeek-V4-Pro",
          "--served-model-name", "deepseek-ai/DeepSeek-V4-Pro", "--tp", "8", "--ep-size", "8",
          "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
          "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
          "--moe-runner-backend", "deep_gemm", "--host", "0.0.0.0", "--port", "8888"]
LAUNCH_LINE = " ".join(LAUNCH)

SERVER_ARGS = ("[2026-09-02 14:40:07] server_args=ServerArgs(model_path='/data/models/DeepSeek-V4-Pro', "
               "tp_size=8, ep_size=8, quantization='modelopt_fp4', moe_runner_backend='deep_gemm', "
               "speculative_algorithm='EAGLE', speculative_draft_model_path=None, speculative_num_steps=3, "
               "speculative_eagle_topk=1, speculative_num_draft_tokens=4)\n")

SA_ENV = {"SGLANG_SIMULATE_ACC_LEN": "2.49", "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
          "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"}


SA_DUMP = ("=== SGLANG_* env vars at launch ===\nSGLANG_DEFAULT_THINKING=1\n"
           + "".join(f"{k}={v}\n" for k, v in SA_ENV.items()) + "=" * 35 + "\n")


def server_log(preamble: str = SA_DUMP) -> str:
    return preamble + SERVER_ARGS + "[2026-09-02 14:41:30] The server is fired up and ready to roll!\n"


def single_node(files: dict[str, str]) -> dict[str, str]:
    """A single-node AgentX throughput job: agentic_/server_logs_ artifacts."""
    out = {f"server_logs_{SINGLE_RF}/results/server.log": server_log(),
           f"agentic_{SINGLE_RF}/results/sglang_command.txt": write_command_text(LAUNCH),
           f"bmk_agentic_{SINGLE_RF}/{SINGLE_RF}.json": '{"scenario_type": "agentic-coding", "tp": 8, "ep": 8, "conc": 8}\n'}
    out.update({k.format(rf=SINGLE_RF): v for k, v in files.items()})
    return out


def multi_node(logs: dict[str, str]) -> dict[str, str | dict[str, str]]:
    """An srt-slurm multi-node job: the log dir is uploaded as a tarball."""
    base = {"log.out": "srtctl: job 4242 submitted\n",
            "gb200-n2_decode_w0.out": server_log(),
            "gb200-n1_prefill_w0.out": server_log()}
    base.update(logs)
    return {f"multinode_server_logs_{MULTI_RF}/multinode_server_logs.tar.gz": base,
            f"bmk_agentic_{MULTI_RF}/{MULTI_RF}_conc64.json": '{"scenario_type": "agentic-coding", "is_multinode": true}\n'}


RECIPE = f"""name: dsv4-gb200-disagg-mtp-agentic
model:
  path: dsv4-pro
  container: dynamo-sglang
  precision: fp4
backend:
  type: sglang
  prefill_environment: &server_environment
    SGLANG_DEFAULT_THINKING: '1'
    {FLAG}: yes
  decode_environment:
    <<: *server_environment
    SGLANG_SIMULATE_ACC_LEN: "2.49"
    SGLANG_SIMULATE_ACC_METHOD: match-expected
    SGLANG_SIMULATE_ACC_TOKEN_MODE: "real-draft-token"
  sglang_config:
    decode: {{speculative-algorithm: EAGLE, speculative-num-steps: 3, speculative-eagle-topk: 1, speculative-num-draft-tokens: 4}}
environment:
  ETCD_LEASE_TTL: "30"
benchmark:
  type: custom
"""

SHAPES: dict[str, dict] = {
    # `env` printed before launch: NAME=value lines without a dump header.
    "listing-fail": single_node({"server_logs_{rf}/results/server.log": server_log(
        "HOSTNAME=b200-dgxc-1\nPATH=/usr/local/bin:/usr/bin\n" + f"{FLAG}=1\n" +
        "".join(f"{k}={v}\n" for k, v in SA_ENV.items()))}),
    # set -x trace of an export in the orchestration log.
    "export-trace-fail": multi_node({"sweep_4242.log": f"+ source /configs/dsv4_env.sh\n+ export {FLAG}=true\n+ srtctl apply -f recipe.yaml\n"}),
    # `export -p` output of a setup script.
    "declare-x-fail": multi_node({"sweep_4242.log": f'+ export -p\ndeclare -x HOME="/root"\ndeclare -x {FLAG}="1"\ndeclare -x PATH="/usr/bin"\n'}),
    # `env NAME=value cmd` in the sbatch script.
    "env-command-fail": multi_node({"sbatch_script.sh": f"#!/bin/bash\n#SBATCH --nodes=2\nsrun --nodes=1 env {FLAG}=Y {LAUNCH_LINE} --disaggregation-mode decode\n"}),
    # docker run -e on an AMD-style multi-node launch.
    "docker-env-fail": multi_node({"sbatch_script.sh": f"#!/bin/bash\ndocker run --rm --network host --ipc host \\\n  -e SGLANG_DEFAULT_THINKING=1 \\\n  --env {FLAG}=1 \\\n  lmsysorg/sglang:v0.5.16-cu130 {LAUNCH_LINE}\n"}),
    # Inline prefix inside the command string (AMD DECODE_CMD shape), in the %q command file.
    "inline-prefix-fail": single_node({"agentic_{rf}/results/sglang_command.txt": write_command_text([f"{FLAG}=1", *LAUNCH])}),
    # Recipe role env through an anchor and a merge key, plain YAML `yes`.
    "yaml-anchor-merge-fail": multi_node({"config.yaml": RECIPE}),
    # The container's Env array (docker inspect of the running server).
    "json-env-fail": single_node({"agentic_{rf}/results/docker_inspect.json": '[\n  {\n    "Config": {\n      "Image": "lmsysorg/sglang:v0.5.16-cu130",\n      "Env": [\n        "PATH=/usr/local/bin:/usr/bin",\n        "' + FLAG + '=1"\n      ]\n    }\n  }\n]\n'}),
    # A Python heredoc wrapper that sets the variable and then starts the engine.
    "python-heredoc-fail": multi_node({"setup_script.sh": f"#!/bin/bash\nset -e\npython3 - <<'PY'\nimport os, runpy, sys\nos.environ.setdefault(\"{FLAG}\", \"1\")\nsys.argv = {LAUNCH!r}[2:]\nrunpy.run_module(\"sglang.launch_server\", run_name=\"__main__\")\nPY\n"}),
    # sitecustomize.py shipped next to the server (Python-side env write at interpreter start).
    "sitecustomize-fail": single_node({"agentic_{rf}/results/sitecustomize.py": f"import os\nos.environ[\"{FLAG}\"] = \"true\"\n"}),
    # The legacy SGL_ spelling, which SGLang copies over SGLANG_ at import.
    "legacy-prefix-fail": single_node({"agentic_{rf}/results/sglang_command.txt": write_command_text(["SGL_NVFP4_CKPT_FP8_NEXTN_MOE=1", f"{FLAG}=0", *LAUNCH])}),
    # Mentioned only: comments, echo, heredoc written to a file, disabled, unset.
    "mentions-pass": multi_node({
        "sbatch_script.sh": (f"#!/bin/bash\n# Do not set {FLAG}=1: forbidden by the draft-precision rule.\n"
                             f"echo \"checking that {FLAG}=1 is not set\"\n"
                             f"cat > /tmp/notes.sh <<'EOF'\nexport {FLAG}=1\nEOF\n"
                             f"export {FLAG}=1\nunset {FLAG}\n"
                             f"{FLAG}=1\n"
                             f"srun env {FLAG}=0 {LAUNCH_LINE}\n"),
        "config.yaml": RECIPE.replace(f"{FLAG}: yes", f"{FLAG}: \"0\"  # was yes"),
        "setup_script.sh": f"python3 - <<'PY'\nimport os\n# os.environ['{FLAG}'] = '1'\nprint(os.environ.get('{FLAG}'))\nPY\n",
    }),
}


# A setup script that patches the installed engine in two shapes (§13.3: 23, 25).
PATCH_SETUP = """#!/bin/bash
set -euo pipefail
cat > /tmp/moe_fix.diff <<'DIFF'
--- a/python/sglang/srt/layers/moe/ep_moe/layer.py
+++ b/python/sglang/srt/layers/moe/ep_moe/layer.py
@@ -120,7 +120,7 @@
-        self.use_fp8 = False
+        self.use_fp8 = True
DIFF
cd /sgl-workspace/sglang && git apply -p1 /tmp/moe_fix.diff || patch -p1 --fuzz=3 --forward < /tmp/moe_fix.diff
sed -i 's/max_bs = 256/max_bs = 512/' /sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py
"""

PATCH_BUNDLES: dict[str, dict] = {
    "engine-patch-fail": multi_node({"setup_script.sh": PATCH_SETUP}),
}

WAIVER = """# Inference-engine patch waiver — PR #2600

## Config covered

`dsv4-fp4-gb200-dynamo-sglang-disagg-agentic`, image `lmsysorg/sglang:v0.5.16-cu130`,
patch entrypoint `setup_script: setup_script.sh` in the recipe.

## What is patched

| Upstream PR/issue | What it changes | Notes |
|---|---|---|
| sgl-project/sglang#99001 | EP MoE layer picks the FP8 path on GB200 | cherry-picked |
| sgl-project/sglang#99017 | CUDA graph max batch size 512 | config only |

## Why the unmodified upstream image cannot run this benchmark

v0.5.16 crashes in the EP MoE layer at concurrency 64 on GB200 (illegal memory access).

## Upstream PR / issue links

- https://github.com/sgl-project/sglang/pull/99001
- https://github.com/sgl-project/sglang/pull/99017

## Removal plan

Remove when an lmsysorg/sglang release includes both PRs (expected v0.5.17).
"""


def write(root: Path, files: dict[str, str | dict[str, str]]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            with tempfile.TemporaryDirectory() as tmp:
                logs = Path(tmp) / "logs"
                for name, text in content.items():
                    (logs / name).parent.mkdir(parents=True, exist_ok=True)
                    (logs / name).write_text(text)
                write_tar_gz(logs, path)
        else:
            path.write_text(content)


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    for name, files in SHAPES.items():
        write(OUT / name, files)
    for name, files in PATCH_BUNDLES.items():
        if (HERE / "bundles" / name).exists():
            shutil.rmtree(HERE / "bundles" / name)
        write(HERE / "bundles" / name, files)
    (HERE / "waivers").mkdir(exist_ok=True)
    (HERE / "waivers" / "2600.md").write_text(WAIVER)
    print(f"wrote {len(SHAPES)} bundles under {OUT.relative_to(HERE.parent)}, {len(PATCH_BUNDLES)} patch bundle(s), 1 waiver")


if __name__ == "__main__":
    main()
