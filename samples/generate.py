#!/usr/bin/env python3
"""Generate the auditor's sample run bundles, golden table, archives and README.

Deterministic: no clock, no randomness, no environment lookups. Running it twice
gives byte-identical output. It deletes and recreates only the paths listed in
OWNED_PATHS (relative to this directory); anything else under samples/ is left
alone.

Every file shape follows shared/domain/INFERENCEX.md:
  * artifact names and per-artifact files: section 5 (`gh run download` layout,
    one folder per artifact);
  * EXP_NAME / RESULT_FILENAME grammars: section 4.1;
  * command files written with bash `printf '%q '` (section 6.1) -- see bash_q();
  * the SGLANG_* env dump block at the top of server.log (section 6.2);
  * the SGLang startup line, both the `server_args=ServerArgs(...)` dataclass repr
    (older builds) and the `server_args={...}` dict repr (0.5.2x), section 6.3;
  * meta_env.json and the AgentX aggregate JSON fields (section 5.4);
  * golden AL YAML layout (section 8.1).

Python 3.11, standard library only. Usage: python3 samples/generate.py
"""

from __future__ import annotations

import calendar
import gzip
import hashlib
import io
import json
import shutil
import tarfile
import zipfile
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUNDLES = HERE / "bundles"

PASS_BUNDLE = "dsv41flash-h200-dspark-pass"
FAIL_BUNDLE = "forbidden-env-inherited-fail"
SIM_THROUGHPUT_FAIL = "sim-acc-throughput-fail"
SIM_EVAL_FAIL = "sim-acc-eval-fail"
GOLDEN_FAIL = "golden-al-fail"
ARCH_FAIL = "arch-override-fail"
IMAGE_FAIL = "upstream-image-fail"
EVAL_FAIL = "eval-threshold-fail"
DRAFT_FAIL = "draft-precision-fail"
GOLDEN_FILE = "golden/dsv41flash_dspark.yaml"

OWNED_PATHS = [
    f"bundles/{PASS_BUNDLE}",
    f"bundles/{FAIL_BUNDLE}",
    f"bundles/{SIM_THROUGHPUT_FAIL}",
    f"bundles/{SIM_EVAL_FAIL}",
    f"bundles/{GOLDEN_FAIL}",
    f"bundles/{ARCH_FAIL}",
    f"bundles/{IMAGE_FAIL}",
    f"bundles/{EVAL_FAIL}",
    f"bundles/{DRAFT_FAIL}",
    f"bundles/{PASS_BUNDLE}.tar.gz",
    f"bundles/{PASS_BUNDLE}.zip",
    GOLDEN_FILE,
    "README.md",
    # Written by engine_bundles.py (vLLM, TRT-LLM, ATOM, SGLang disaggregated).
    "bundles/vllm-agentx-pass",
    "bundles/vllm-agentx-eval-sim-fail",
    "bundles/trtllm-dynamo-disagg-pass",
    "bundles/trtllm-dynamo-disagg-al-fail",
    "bundles/atom-agentx-pass",
    "bundles/atom-agentx-rate-fail",
    "bundles/sglang-dynamo-disagg-pass",
    "bundles/sglang-dynamo-disagg-prefill-sa-fail",
    "bundles/sglang-dynamo-disagg-decode-k2-fail",
]

# Archive metadata: every member gets this mtime (2026-10-14 00:00:00 UTC).
ARCHIVE_DATE = (2026, 10, 14, 0, 0, 0)
ARCHIVE_MTIME = calendar.timegm(ARCHIVE_DATE)

CHAT_TEMPLATE = "/workspace/benchmarks/single_node/chat_templates/deepseek_v4_thinking.jinja"
LOADER_EXTRA = '{"enable_multithread_load": true}'  # needs %q escaping in command files
SERVER_PORT = 8888


# =============================================================================
# bash `printf '%q'`
# =============================================================================

# Characters bash's sh_backslash_quote() escapes with a backslash (lib/sh/shquote.c).
_BASH_BACKSLASH = set(" \t\n!\"$&'()*,;<>?[\\]^`{|}")
# Escapes used inside $'...' by bash's ansic_quote().
_BASH_ANSIC = {"\x1b": "E", "\a": "a", "\v": "v", "\b": "b", "\f": "f",
               "\n": "n", "\r": "r", "\t": "t", "\\": "\\", "'": "'"}


def _is_control(c: str) -> bool:
    return ord(c) < 0x20 or ord(c) == 0x7F


def bash_q(s: str) -> str:
    """Quote one word exactly as bash 5.2 `printf %q` does (UTF-8 locale).

    Empty -> ''. Strings with control characters -> $'...' (ANSI-C quoting,
    octal for unnamed controls). Otherwise each special character is
    backslash-escaped; `#` only at the start, `~` at the start or after `:`/`=`.
    Non-ASCII characters are copied unchanged (UTF-8 locale behaviour).
    """
    if s == "":
        return "''"
    if any(_is_control(c) for c in s):
        body = "".join(
            "\\" + _BASH_ANSIC[c] if c in _BASH_ANSIC
            else "\\%03o" % ord(c) if _is_control(c)
            else c
            for c in s
        )
        return "$'" + body + "'"
    out = []
    for i, c in enumerate(s):
        prev = s[i - 1] if i else ""
        if (c in _BASH_BACKSLASH or (c == "#" and i == 0)
                or (c == "~" and (i == 0 or prev in ":="))):
            out.append("\\")
        out.append(c)
    return "".join(out)


def write_command_text(argv: list[str]) -> str:
    """What benchmark_lib.sh's write_command puts in FILE: printf '%q ' ARGV; echo."""
    return "".join(bash_q(a) + " " for a in argv) + "\n"


# =============================================================================
# Python repr shapes of SGLang's server_args startup line
# =============================================================================

@dataclass(frozen=True)
class Record:
    """A nested dataclass value inside ServerArgs (e.g. CudaGraphConfig)."""
    name: str
    fields: tuple


def py_repr(value, shape: str) -> str:
    """Python repr of a ServerArgs value.

    shape "dataclass": nested records print as Name(k=v, ...), as dataclass repr does.
    shape "dict": nested records print as {'k': v, ...}, as the 0.5.2x dict dump does.
    Scalars, strings, lists and dicts use Python's own repr rules.
    """
    if isinstance(value, Record):
        if shape == "dataclass":
            inner = ", ".join(f"{k}={py_repr(v, shape)}" for k, v in value.fields)
            return f"{value.name}({inner})"
        value = dict(value.fields)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {py_repr(v, shape)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(py_repr(v, shape) for v in value) + "]"
    return repr(value)


def server_args_message(fields: list[tuple[str, object]], shape: str) -> str:
    if shape == "dataclass":
        return "server_args=ServerArgs(" + ", ".join(
            f"{k}={py_repr(v, shape)}" for k, v in fields) + ")"
    return "server_args={" + ", ".join(
        f"{k!r}: {py_repr(v, shape)}" for k, v in fields) + "}"


CUDA_GRAPH_BS = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64]


def cuda_graph_config(max_bs: int) -> Record:
    def phase(backend, mbs, bs):
        return Record("PhaseConfig", (("backend", backend), ("max_bs", mbs),
                                      ("bs", bs), ("tc_compiler", "eager")))
    return Record("CudaGraphConfig", (
        ("decode", phase("full", max_bs, list(CUDA_GRAPH_BS))),
        ("prefill", phase("disabled", None, None)),
    ))


# ServerArgs fields in declaration order, with the values an InferenceX AgentX
# launch resolves to. "<...>" placeholders are filled per deployment/job.
BASE_SERVER_ARGS: list[tuple[str, object]] = [
    ("model_path", "<model_dir>"),
    ("tokenizer_path", "<model_dir>"),
    ("load_format", "auto"),
    ("model_loader_extra_config", LOADER_EXTRA),
    ("trust_remote_code", True),
    ("context_length", None),
    ("revision", None),
    ("model_impl", "auto"),
    ("host", "0.0.0.0"),
    ("port", SERVER_PORT),
    ("skip_server_warmup", False),
    ("nccl_port", None),
    ("dtype", "auto"),
    ("quantization", None),
    ("quantization_param_path", None),
    ("kv_cache_dtype", "auto"),
    ("modelopt_quant", None),
    ("mem_fraction_static", 0.85),
    ("max_running_requests", 64),
    ("max_total_tokens", None),
    ("chunked_prefill_size", 8192),
    ("max_prefill_tokens", 16384),
    ("schedule_policy", "fcfs"),
    ("page_size", 64),
    ("device", "cuda"),
    ("tp_size", "<tp>"),
    ("pp_size", 1),
    ("random_seed", "<seed>"),
    ("watchdog_timeout", 300),
    ("base_gpu_id", 0),
    ("log_level", "info"),
    ("log_requests", False),
    ("enable_metrics", True),
    ("decode_log_interval", 40),
    ("api_key", None),
    ("served_model_name", "<served>"),
    ("weight_version", "default"),
    ("chat_template", CHAT_TEMPLATE),
    ("enable_cache_report", False),
    ("reasoning_parser", "deepseek-v4"),
    ("tool_call_parser", "deepseekv4"),
    ("dp_size", 1),
    ("load_balance_method", "round_robin"),
    ("dist_init_addr", None),
    ("nnodes", 1),
    ("node_rank", 0),
    ("json_model_override_args", "{}"),
    ("enable_lora", None),
    ("attention_backend", "dsv4"),
    ("sampling_backend", "flashinfer"),
    ("grammar_backend", "xgrammar"),
    ("speculative_algorithm", None),
    ("speculative_draft_model_path", None),
    ("speculative_draft_model_revision", None),
    ("speculative_draft_load_format", None),
    ("speculative_num_steps", None),
    ("speculative_eagle_topk", None),
    ("speculative_num_draft_tokens", None),
    ("speculative_dflash_block_size", None),
    ("speculative_dspark_block_size", None),
    ("speculative_accept_threshold_single", 1.0),
    ("speculative_accept_threshold_acc", 1.0),
    ("speculative_token_map", None),
    ("speculative_attention_mode", "prefill"),
    ("speculative_draft_attention_backend", None),
    ("speculative_moe_runner_backend", None),
    ("speculative_moe_a2a_backend", None),
    ("speculative_draft_model_quantization", None),
    ("speculative_draft_kv_cache_dtype", None),
    ("enable_multi_layer_eagle", False),
    ("speculative_adaptive", False),
    ("ep_size", "<ep>"),
    ("moe_a2a_backend", "none"),
    ("moe_runner_backend", "auto"),
    ("mamba_ssm_dtype", "float32"),
    ("enable_hierarchical_cache", False),
    ("hicache_ratio", 2.0),
    ("hicache_size", 0),
    ("hicache_write_policy", "write_through"),
    ("hicache_storage_backend", None),
    ("disable_radix_cache", False),
    ("cuda_graph_max_bs", 64),
    ("cuda_graph_bs", list(CUDA_GRAPH_BS)),
    ("disable_cuda_graph", False),
    ("disable_custom_all_reduce", False),
    ("disable_overlap_schedule", False),
    ("enable_mixed_chunk", False),
    ("enable_dp_attention", False),
    ("enable_two_batch_overlap", False),
    ("enable_torch_compile", False),
    ("disaggregation_mode", "null"),
    ("disaggregation_transfer_backend", "mooncake"),
    ("disaggregation_bootstrap_port", 8998),
    ("decrypted_config_file", None),
    ("decrypted_draft_config_file", None),
    ("mm_process_config", {}),
    ("cuda_graph_config", cuda_graph_config(64)),
]


# =============================================================================
# Data tables: deployments (one per bundle) and jobs
# =============================================================================

@dataclass(frozen=True)
class Deployment:
    bundle: str
    config_key: str
    model: str                 # HF id, also --served-model-name
    model_dir: str             # --model-path
    prefix: str                # model-prefix / infmax_model_prefix
    image: str
    precision: str
    framework: str
    hw: str                    # runner SKU
    gpu_name: str
    gpu_mem_mib: int
    arch: str                  # HF architecture printed by "Load weight end"
    weights_gb: float          # checkpoint size, split over TP ranks in the log
    kv_bytes_per_token: int    # sizes the KV pool in "KV Cache is allocated"
    args_shape: str            # "dict" (SGLang 0.5.2x) or "dataclass" (older)
    spec_args: list            # extra CLI args for speculative decoding etc.
    arg_overrides: dict        # ServerArgs values that differ from BASE_SERVER_ARGS
    omitted_args: frozenset    # ServerArgs fields this SGLang build does not have yet
    base_env: dict             # SGLANG_* env present on every job (incl. inherited)
    sa_env: dict               # simulated-acceptance env, throughput jobs only
    num_draft_tokens: int      # verify window, for "accept rate" in decode lines
    pre_args_lines: tuple = () # log lines emitted by ServerArgs post-processing
    run_id: int = 0
    head_sha: str = ""
    sa_on_eval: bool = False   # SA hard-coded where eval-only jobs reach it too
    eval_scores: tuple = (0.9507, 0.9538)  # gsm8k strict-match, flexible-extract


@dataclass(frozen=True)
class Job:
    tp: int
    ep: int
    conc: int
    runner: str                # runner instance, e.g. h200-dgxc_0
    start: datetime            # first timestamp in server.log
    eval_only: bool = False
    sa_env: dict | None = None # this job's SA env instead of the deployment's
    kv: str = "kvnone"         # kvnone | kvdram-<backend> (EXP_NAME offload part)

    @property
    def exp_name_suffix(self) -> str:
        return f"tp{self.tp}_conc{self.conc}_{self.kv}_spec-mtp"


def exp_name(dep: Deployment, job: Job) -> str:
    """Single-node AgentX EXP_NAME: <prefix>_tp<TP>_conc<CONC>_kvnone_spec-mtp."""
    return f"{dep.prefix}_{job.exp_name_suffix}"


def result_filename(dep: Deployment, job: Job) -> str:
    """Single-node RESULT_FILENAME grammar (section 4.1), no _recipe- suffix."""
    return (f"{exp_name(dep, job)}_{dep.precision}_{dep.framework}_"
            f"tp{job.tp}-pp1-dcp1-pcp1-ep{job.ep}-dpafalse_disagg-false_"
            f"spec-mtp_conc{job.conc}_{job.runner}")


def recipe_fingerprint(dep: Deployment) -> str:
    return hashlib.sha256(dep.config_key.encode()).hexdigest()[:16]


def det(key: str) -> float:
    """Deterministic pseudo-random number in [0, 1) derived from key."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) / float(1 << 48)


def sglang_argv(dep: Deployment, job: Job) -> list[str]:
    return [
        "python3", "-m", "sglang.launch_server",
        "--model-path", dep.model_dir,
        "--served-model-name", dep.model,
        "--host", "0.0.0.0",
        "--port", str(SERVER_PORT),
        "--trust-remote-code",
        "--tp", str(job.tp),
        "--ep-size", str(job.ep),
        *dep.spec_args,
        "--mem-fraction-static", "0.85",
        "--reasoning-parser", "deepseek-v4",
        "--tool-call-parser", "deepseekv4",
        "--max-running-requests", "64",
        "--chat-template", CHAT_TEMPLATE,
        "--model-loader-extra-config", LOADER_EXTRA,
    ]


def resolved_server_args(dep: Deployment, job: Job) -> list[tuple[str, object]]:
    placeholders = {
        "<model_dir>": dep.model_dir, "<served>": dep.model, "<tp>": job.tp,
        "<ep>": job.ep, "<seed>": int(det("seed" + result_filename(dep, job)) * 10**9),
    }
    out = []
    for name, value in BASE_SERVER_ARGS:
        if name in dep.omitted_args:
            continue
        value = dep.arg_overrides.get(name, value)
        if isinstance(value, str) and value in placeholders:
            value = placeholders[value]
        out.append((name, value))
    return out


H200_DEPLOYMENT = Deployment(
    bundle=PASS_BUNDLE,
    config_key="dsv41flash-fp4-h200-sglang-agentic-dspark",
    model="deepseek-ai/DeepSeek-V4.1-Flash",
    model_dir="/data/models/DeepSeek-V4.1-Flash",
    prefix="dsv41flash",
    image="lmsysorg/sglang:nightly-dev-cu13-20261013-7224fce1",
    precision="fp4",
    framework="sglang",
    hw="h200",
    gpu_name="NVIDIA H200",
    gpu_mem_mib=143771,
    arch="DeepseekV4ForCausalLM",
    weights_gb=158.0,
    kv_bytes_per_token=35_136,
    args_shape="dict",
    spec_args=["--speculative-algorithm", "DSPARK",
               "--speculative-dspark-block-size", "5"],
    arg_overrides={
        "speculative_algorithm": "DSPARK",
        "speculative_num_draft_tokens": 6,     # gamma + 1
        "speculative_dspark_block_size": 5,    # gamma = K
    },
    omitted_args=frozenset(),
    base_env={"SGLANG_DEFAULT_THINKING": "1"},
    sa_env={"SGLANG_SIMULATE_ACC_LEN": "3.51",
            "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
            "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"},
    num_draft_tokens=6,
    run_id=32418870215,
    head_sha="5be0c1a79e3f2d4c8a61b07e9d2f4a1c3e8b6d02",
)

B200_DEPLOYMENT = Deployment(
    bundle=FAIL_BUNDLE,
    config_key="dsv4-fp4-b200-sglang-agentic",
    model="deepseek-ai/DeepSeek-V4-Pro",
    model_dir="/data/models/DeepSeek-V4-Pro",
    prefix="dsv4",
    image="lmsysorg/sglang:v0.5.16-cu130",
    precision="fp4",
    framework="sglang",
    hw="b200",
    gpu_name="NVIDIA B200",
    gpu_mem_mib=183359,
    arch="DeepseekV4ForCausalLM",
    weights_gb=690.0,
    kv_bytes_per_token=70_272,
    args_shape="dataclass",
    spec_args=["--quantization", "modelopt_fp4",
               "--kv-cache-dtype", "fp8_e4m3",
               "--moe-runner-backend", "deep_gemm",
               "--speculative-algorithm", "EAGLE",
               "--speculative-num-steps", "3",
               "--speculative-eagle-topk", "1",
               "--speculative-num-draft-tokens", "4"],
    arg_overrides={
        "quantization": "modelopt_fp4",
        "kv_cache_dtype": "fp8_e4m3",
        "attention_backend": "compressed",
        "speculative_algorithm": "EAGLE",
        "speculative_draft_model_path": "/data/models/DeepSeek-V4-Pro",
        "speculative_num_steps": 3,
        "speculative_eagle_topk": 1,
        "speculative_num_draft_tokens": 4,
        "moe_runner_backend": "deep_gemm",
        # Set by ServerArgs post-processing because the inherited env enables
        # SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE (no CLI flag asks for them).
        "speculative_moe_runner_backend": "deep_gemm",
        "speculative_moe_a2a_backend": "deepep",
    },
    # v0.5.16 predates these fields.
    omitted_args=frozenset({"speculative_dflash_block_size",
                            "speculative_dspark_block_size",
                            "speculative_draft_kv_cache_dtype",
                            "speculative_adaptive"}),
    # SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE arrives through the inherited environment
    # (no export in any command file); EnvBool lower-cases "True" -> enabled.
    base_env={"SGLANG_DEFAULT_THINKING": "1",
              "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": "True"},
    sa_env={"SGLANG_SIMULATE_ACC_LEN": "2.49",   # dsv4_mtp thinking_on K=3
            "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
            "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"},
    num_draft_tokens=4,
    pre_args_lines=("Use deep_gemm moe runner and deepep a2a backend for bf16 "
                    "nextn layer in deepseek fp4 checkpoint.",),
    run_id=31907452268,
    head_sha="0c94e2b7d15a8f3e6b2a9c07d4e1f58a3b6c9d20",
)


# The B200 deployment without the forbidden flag: the base of the samples that
# fail one simulated-acceptance check each.
B200_CLEAN = replace(
    B200_DEPLOYMENT,
    base_env={"SGLANG_DEFAULT_THINKING": "1"},
    arg_overrides={k: v for k, v in B200_DEPLOYMENT.arg_overrides.items()
                   if k not in ("speculative_moe_runner_backend", "speculative_moe_a2a_backend")},
    pre_args_lines=(),
)

# Real acceptance on one AgentX throughput job, TOKEN_MODE left out on another.
SIM_THROUGHPUT_DEPLOYMENT = replace(B200_CLEAN, bundle=SIM_THROUGHPUT_FAIL, run_id=31907452301)

# The recipe hard-codes SA, so the eval-only job runs with it too.
SIM_EVAL_DEPLOYMENT = replace(B200_CLEAN, bundle=SIM_EVAL_FAIL, sa_on_eval=True, run_id=31907452377)

# Serves K=2 but pins the K=3 golden value 2.49 (dsv4_mtp thinking_on: K=2 is 2.27).
GOLDEN_DEPLOYMENT = replace(
    B200_CLEAN,
    bundle=GOLDEN_FAIL,
    spec_args=[a if a not in ("3", "4") else {"3": "2", "4": "3"}[a] for a in B200_CLEAN.spec_args],
    arg_overrides={**B200_CLEAN.arg_overrides, "speculative_num_steps": 2, "speculative_num_draft_tokens": 3},
    num_draft_tokens=3,
    run_id=31907452455,
)


# Cross-layer indexer reuse through SGLang's config override (Check 8's canonical hack).
INDEXER_OVERRIDE = '{"index_topk_freq": 4, "use_index_cache": true}'
ARCH_DEPLOYMENT = replace(
    B200_CLEAN,
    bundle=ARCH_FAIL,
    spec_args=[*B200_CLEAN.spec_args, "--json-model-override-args", INDEXER_OVERRIDE],
    arg_overrides={**B200_CLEAN.arg_overrides, "json_model_override_args": INDEXER_OVERRIDE},
    run_id=31907452512,
)

# A vendor rebuild outside lmsysorg/ on an established SKU.
IMAGE_DEPLOYMENT = replace(B200_CLEAN, bundle=IMAGE_FAIL, image="ghcr.io/acme-ai/sglang:v0.5.16-cu130-nvfp4-fast", run_id=31907452588)

# The BF16 MTP head quantized to MXFP4 on the command line (§9.2's example).
DRAFT_DEPLOYMENT = replace(
    B200_CLEAN,
    bundle=DRAFT_FAIL,
    spec_args=[*B200_CLEAN.spec_args, "--speculative-draft-model-quantization", "quark_mxfp4"],
    arg_overrides={**B200_CLEAN.arg_overrides, "speculative_draft_model_quantization": "quark_mxfp4"},
    run_id=31907452702,
)

# gsm8k strict-match 0.8741 on dsv4, whose threshold is 0.91.
EVAL_DEPLOYMENT = replace(B200_CLEAN, bundle=EVAL_FAIL, eval_scores=(0.8741, 0.8802), run_id=31907452630)


def sim_throughput_jobs() -> list[Job]:
    return [Job(8, 8, 8, "b200-dgxc_1", datetime(2026, 9, 2, 14, 40, 7), sa_env={}),
            Job(8, 8, 16, "b200-dgxc_2", datetime(2026, 9, 2, 14, 40, 29),
                sa_env={"SGLANG_SIMULATE_ACC_LEN": "2.49",
                        "SGLANG_SIMULATE_ACC_METHOD": "match-expected"})]


def sim_eval_jobs() -> list[Job]:
    return [Job(8, 8, 16, "b200-dgxc_3", datetime(2026, 9, 2, 16, 2, 11), eval_only=True)]


def h200_jobs() -> list[Job]:
    """TP4/EP1 and TP8/EP8 x conc 1..16 spread over four runners, plus one eval."""
    base = datetime(2026, 10, 14, 3, 12, 55)
    jobs = []
    for i, (tp, ep, conc) in enumerate(
            (tp, ep, conc) for tp, ep in ((4, 1), (8, 8)) for conc in (1, 2, 4, 8, 16)):
        start = base + timedelta(minutes=38 * (i // 4), seconds=23 * (i % 4))
        jobs.append(Job(tp, ep, conc, f"h200-dgxc_{i % 4}", start))
    jobs.append(Job(4, 1, 16, "h200-dgxc_7", datetime(2026, 10, 14, 4, 52, 31),
                    eval_only=True))
    return jobs


def b200_jobs() -> list[Job]:
    return [Job(8, 8, 8, "b200-dgxc_1", datetime(2026, 9, 2, 14, 40, 7)),
            Job(8, 8, 16, "b200-dgxc_2", datetime(2026, 9, 2, 14, 40, 29))]


# =============================================================================
# File builders
# =============================================================================

def env_dump_block(env: dict) -> list[str]:
    """`env | grep -E '^SGLANG_' | sort` framed by the section 6.2 header/footer."""
    header = "=== SGLANG_* env vars at launch ==="
    return [header, *(f"{k}={env[k]}" for k in sorted(env)), "=" * len(header)]


def job_env(dep: Deployment, job: Job) -> dict:
    sa = dep.sa_env if job.sa_env is None else job.sa_env
    if job.eval_only and not dep.sa_on_eval:
        sa = {}
    return {**dep.base_env, **sa}


class LogClock:
    """Emits SGLang-formatted lines: `[YYYY-MM-DD HH:MM:SS<prefix>] message`."""

    def __init__(self, start: datetime):
        self.now = start
        self.lines: list[str] = []

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def log(self, msg: str, prefix: str = "") -> None:
        self.lines.append(f"[{self.now:%Y-%m-%d %H:%M:%S}{prefix}] {msg}")

    def raw(self, text: str) -> None:
        self.lines.append(text)


def rank_prefix(job: Job, rank: int) -> str:
    return f" TP{rank}" + (f" EP{rank}" if job.ep > 1 else "")


def server_log(dep: Deployment, job: Job) -> str:
    rf = result_filename(dep, job)
    clk = LogClock(job.start)
    for line in env_dump_block(job_env(dep, job)):
        clk.raw(line)
    for line in dep.pre_args_lines:
        clk.log(line)
    clk.log(server_args_message(resolved_server_args(dep, job), dep.args_shape))

    ranks = range(job.tp)
    total_gb = dep.gpu_mem_mib / 1024
    weights_gb = dep.weights_gb / job.tp * (1.02 if job.tp == 8 else 1.0)
    clk.tick(6)
    for r in ranks:
        clk.log("Init torch distributed begin.", rank_prefix(job, r))
    clk.tick(2)
    clk.log(f"Init torch distributed ends. mem usage={0.88 + 0.01 * job.tp:.2f} GB", rank_prefix(job, 0))
    for r in ranks:
        clk.log(f"Load weight begin. avail mem={total_gb - 1.3 - 0.01 * r:.2f} GB", rank_prefix(job, r))
    clk.raw(f"Loading safetensors checkpoint shards: 100% Completed | 64/64 "
            f"[00:{38 + job.tp:02d}<00:00,  1.{job.tp}{job.ep}it/s]")
    clk.tick(43)
    clk.log(f"Load weight end. type={dep.arch}, dtype=torch.bfloat16, avail mem="
            f"{total_gb - 1.3 - weights_gb:.2f} GB, mem usage={weights_gb:.2f} GB.", rank_prefix(job, 0))
    free_gb = (total_gb - 1.3 - weights_gb) - total_gb * 0.15
    kv_tokens = int(free_gb * 1024 ** 3 / dep.kv_bytes_per_token) // 64 * 64
    clk.tick(1)
    clk.log(f"KV Cache is allocated. #tokens: {kv_tokens}, KV size: {free_gb:.2f} GB", rank_prefix(job, 0))
    clk.log(f"Memory pool end. avail mem={total_gb * 0.15 + 0.4:.2f} GB", rank_prefix(job, 0))
    clk.log(f"Capture cuda graph begin. This can take up to several minutes. avail mem={total_gb * 0.15 + 0.3:.2f} GB",
            rank_prefix(job, 0))
    clk.log(f"Capture cuda graph bs {CUDA_GRAPH_BS}", rank_prefix(job, 0))
    clk.tick(37)
    clk.log(f"Capture cuda graph end. Time elapsed: {36.4 + 3 * det(rf):.2f} s. mem usage=1.74 GB. "
            f"avail mem={total_gb * 0.15 - 1.4:.2f} GB.", rank_prefix(job, 0))
    clk.log(f"max_total_num_tokens={kv_tokens}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
            f"max_running_requests=64, context_len=1048576, available_gpu_mem={total_gb * 0.15 - 1.4:.2f} GB",
            rank_prefix(job, 0))
    clk.tick(1)
    clk.log(f"INFO:     Started server process [{2000 + int(det('pid' + rf) * 900)}]")
    clk.log("INFO:     Waiting for application startup.")
    clk.log("INFO:     Application startup complete.")
    clk.log(f"INFO:     Uvicorn running on http://0.0.0.0:{SERVER_PORT} (Press CTRL+C to quit)")
    clk.tick(1)
    clk.log('INFO:     127.0.0.1:38412 - "GET /model_info HTTP/1.1" 200 OK')
    clk.log("Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
            "#running-req: 0, #queue-req: 0, ", rank_prefix(job, 0))
    clk.tick(1)
    clk.log('INFO:     127.0.0.1:38420 - "POST /generate HTTP/1.1" 200 OK')
    clk.log("The server is fired up and ready to roll!")
    clk.tick(4)
    clk.log('INFO:     127.0.0.1:38436 - "GET /health HTTP/1.1" 200 OK')

    # Traffic: AgentX replay (throughput) or lm-eval gsm8k (eval-only).
    target = float(dep.sa_env["SGLANG_SIMULATE_ACC_LEN"])
    for step in range(3):
        clk.tick(9 + 3 * step)
        port = 40100 + 17 * step
        new_tok = 512 if job.eval_only else 6144 + 2048 * step
        cached = 0 if job.eval_only else 18432 * (step + 1)
        clk.log(f"Prefill batch, #new-seq: {min(job.conc, 2)}, #new-token: {new_tok}, #cached-token: {cached}, "
                f"token usage: {0.02 + 0.01 * step:.2f}, #running-req: {max(job.conc - 2, 0)}, #queue-req: 0, ",
                rank_prefix(job, 0))
        clk.tick(2)
        if job.eval_only:   # real verification: realised AL is whatever the draft earns
            accept = 2.96 + 0.3 * det(f"al{step}{rf}")
        else:               # simulated acceptance: realised AL sits on the target
            accept = target - 0.03 + 0.05 * det(f"al{step}{rf}")
        tokens = job.conc * (9000 + 2100 * step) if not job.eval_only else job.conc * (700 + 90 * step)
        gen_tput = job.conc * (118.0 - 4.1 * job.conc ** 0.5) * (1.35 if job.tp == 8 else 1.0)
        clk.log(f"Decode batch, #running-req: {job.conc}, #token: {tokens}, token usage: "
                f"{tokens / kv_tokens:.2f}, accept len: {accept:.2f}, accept rate: "
                f"{accept / dep.num_draft_tokens:.2f}, cuda graph: True, gen throughput (token/s): "
                f"{gen_tput * (0.97 + 0.06 * det(f'g{step}{rf}')):.2f}, #queue-req: 0, ",
                rank_prefix(job, 0))
        clk.tick(1)
        clk.log(f'INFO:     127.0.0.1:{port} - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    return "\n".join(clk.lines) + "\n"


def benchmark_command(dep: Deployment, job: Job) -> str:
    """AgentX client command, written with plain `echo` (not %q)."""
    return (f"aiperf profile --model {dep.model} --tokenizer {dep.model_dir} "
            f"--url http://0.0.0.0:{SERVER_PORT} --endpoint-type chat --streaming "
            f"--concurrency {job.conc} --input-file /workspace/agentic/traces/agentx_coding.jsonl "
            f"--custom-dataset-type multi_turn --benchmark-duration 1800 "
            f"--artifact-dir /workspace/results/aiperf_artifacts\n")


def request_stats(dep: Deployment, job: Job) -> dict:
    rf = result_filename(dep, job)
    n = job.conc * 24 + int(det("n" + rf) * 6)
    itl = (7.9 + 0.55 * job.conc ** 0.5) * (0.82 if job.tp == 8 else 1.0)
    ttft = 310.0 + 42.0 * job.conc * (0.8 if job.tp == 8 else 1.0)
    out_tput = job.conc * 1000.0 / itl * 0.93
    return {"n": n, "itl": itl, "ttft": ttft, "out_tput": out_tput}


def benchmark_log(dep: Deployment, job: Job) -> str:
    s = request_stats(dep, job)
    t0 = job.start + timedelta(minutes=2, seconds=2)
    return "\n".join([
        f"{t0:%H:%M:%S} INFO     Starting AIPerf System",
        f"{t0:%H:%M:%S} INFO     Endpoint chat at http://0.0.0.0:{SERVER_PORT} (streaming), concurrency {job.conc}",
        f"{t0 + timedelta(minutes=30, seconds=4):%H:%M:%S} INFO     Profiling complete: {s['n']}/{s['n']} requests successful",
        "Metric                              avg        p50        p90        p99",
        f"Time to First Token (ms)     {s['ttft']:9.1f}  {s['ttft'] * 0.81:9.1f}  {s['ttft'] * 1.9:9.1f}  {s['ttft'] * 3.4:9.1f}",
        f"Inter Token Latency (ms)     {s['itl']:9.2f}  {s['itl'] * 0.96:9.2f}  {s['itl'] * 1.22:9.2f}  {s['itl'] * 1.61:9.2f}",
        f"Output Token Throughput (tokens/sec): {s['out_tput']:.1f}",
        "Artifacts written to /workspace/results/aiperf_artifacts",
    ]) + "\n"


def gpu_metrics_csv(dep: Deployment, job: Job) -> str:
    """nvidia-smi --query-gpu ... --format=csv samples for the node's 8 GPUs."""
    rf = result_filename(dep, job)
    rows = ["timestamp, index, name, power.draw [W], utilization.gpu [%], memory.used [MiB], temperature.gpu"]
    for sample, offset in enumerate((150, 1050)):
        ts = job.start + timedelta(seconds=offset)
        for gpu in range(8):
            busy = gpu < job.tp
            power = (420 + 230 * det(f"p{sample}{gpu}{rf}")) if busy else 71 + 4 * det(f"i{gpu}{rf}")
            util = 88 + int(11 * det(f"u{sample}{gpu}{rf}")) if busy else 0
            mem = int(dep.gpu_mem_mib * 0.94) if busy else 4
            temp = 52 + int(12 * det(f"t{sample}{gpu}{rf}")) if busy else 31
            rows.append(f"{ts:%Y/%m/%d %H:%M:%S}.{100 + 37 * gpu:03d}, {gpu}, {dep.gpu_name}, "
                        f"{power:.2f} W, {util} %, {mem} MiB, {temp}")
    return "\n".join(rows) + "\n"


def host_of(runner: str) -> str:
    return runner.replace("_", "-n")


def gpu_identity(dep: Deployment, job: Job) -> dict:
    host = host_of(job.runner)
    gpus = []
    for gpu in range(8):
        h = hashlib.sha256(f"{host}/{gpu}".encode()).hexdigest()
        gpus.append({
            "index": gpu,
            "name": dep.gpu_name,
            "uuid": f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}",
            "serial": str(1650924000000 + int(h[32:40], 16) % 999999),
            "pci_bus_id": f"00000000:{(0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)[gpu]:02X}:00.0",
            "memory_total_mib": dep.gpu_mem_mib,
        })
    return {"hostname": host, "runner": job.runner, "driver_version": "580.95.05",
            "cuda_version": "13.0", "gpus": gpus}


def agentic_aggregate(dep: Deployment, job: Job, target: float | None = None) -> dict:
    """The AgentX aggregate; `target` is the AL the server ran at (SGLang: the SA env)."""
    s = request_stats(dep, job)
    if target is None:
        target = float(dep.sa_env["SGLANG_SIMULATE_ACC_LEN"])
    return {
        "hw": dep.hw,
        "conc": job.conc,
        "image": dep.image,
        "recipe_fingerprint": recipe_fingerprint(dep),
        "model": dep.model,
        "infmax_model_prefix": dep.prefix,
        "framework": dep.framework,
        "precision": dep.precision,
        "spec_decoding": "mtp",
        "disagg": False,
        "scenario_type": "agentic-coding",
        "is_multinode": False,
        "tp": job.tp,
        "ep": job.ep,
        "dp_attention": False,
        "kv_offloading": "none",
        "kv_offload_backend": None,
        "allocated_cpu_dram_gb": 0,
        "num_requests_total": s["n"],
        "num_requests_successful": s["n"],
        "request_accounting": {"total": s["n"], "successful": s["n"], "failed": 0},
        "request_metrics": {
            "ttft_ms": {"mean": round(s["ttft"], 1), "p50": round(s["ttft"] * 0.81, 1),
                        "p90": round(s["ttft"] * 1.9, 1), "p99": round(s["ttft"] * 3.4, 1)},
            "itl_ms": {"mean": round(s["itl"], 2), "p50": round(s["itl"] * 0.96, 2),
                       "p90": round(s["itl"] * 1.22, 2), "p99": round(s["itl"] * 1.61, 2)},
            "output_throughput_tok_s": round(s["out_tput"], 1),
            "output_throughput_per_gpu_tok_s": round(s["out_tput"] / job.tp, 1),
            "e2e_normalized_interactivity_tok_s": round(1000.0 / (s["itl"] * 1.17), 2),
        },
        "server_metrics": {"spec_accept_length_mean": round(target - 0.01, 2)},
        "dataset": "agentx-coding",
    }


def meta_env(dep: Deployment, job: Job) -> dict:
    return {
        "is_multinode": False,
        "framework": dep.framework,
        "precision": dep.precision,
        "spec_decoding": "mtp",
        "recipe_fingerprint": recipe_fingerprint(dep),
        "tp": job.tp,
        "pp": 1,
        "dcp_size": 1,
        "pcp_size": 1,
        "conc": job.conc,
        "ep": job.ep,
        "dp_attention": False,
        "model": dep.model,
        "infmax_model_prefix": dep.prefix,
        "hw": dep.hw,
        "isl": None,   # AgentX recipes have no fixed ISL/OSL
        "osl": None,
    }


EVAL_STAMP = "2026-10-14T05-10-11.123456"
GSM8K_DOCS = [  # short, self-written GSM8K-style items
    ("A box holds 6 pencils. How many pencils are in 7 boxes?", "6 * 7 = 42 pencils.\n#### 42", "42"),
    ("Mia had 50 stickers and gave away 18. How many are left?", "50 - 18 = 32 stickers.\n#### 32", "32"),
    ("A train travels 80 km each hour for 3 hours. How far does it go?", "80 * 3 = 240 km.\n#### 240", "240"),
]


def lm_eval_results(dep: Deployment, job: Job) -> dict:
    n = 1319
    strict, flexible = dep.eval_scores
    return {
        "results": {"gsm8k": {
            "alias": "gsm8k",
            "exact_match,strict-match": strict,
            "exact_match_stderr,strict-match": 0.006,
            "exact_match,flexible-extract": flexible,
            "exact_match_stderr,flexible-extract": 0.0058,
        }},
        "group_subtasks": {"gsm8k": []},
        "configs": {"gsm8k": {
            "task": "gsm8k", "dataset_path": "gsm8k", "dataset_name": "main",
            "test_split": "test", "num_fewshot": 5, "output_type": "generate_until",
            "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
        }},
        "versions": {"gsm8k": 3.0},
        "n-shot": {"gsm8k": 5},
        "higher_is_better": {"gsm8k": {"exact_match": True}},
        "n-samples": {"gsm8k": {"original": n, "effective": n}},
        "config": {
            "model": "local-chat-completions",
            "model_args": (f"model={dep.model},base_url=http://0.0.0.0:{SERVER_PORT}/v1/chat/completions,"
                           f"num_concurrent={job.conc},max_retries=3,tokenized_requests=False"),
            "batch_size": 1,
            "limit": None,
            "gen_kwargs": {"max_gen_toks": 8192},
        },
        "apply_chat_template": True,
        "fewshot_as_multiturn": True,
        "model_name": dep.model,
        "lm_eval_version": "0.4.9.1",
        "date": float(calendar.timegm((2026, 10, 14, 4, 55, 3))),
        "total_evaluation_time_seconds": "907.52",
    }


def lm_eval_samples() -> str:
    def h(s: str) -> str:
        return hashlib.sha256(s.encode()).hexdigest()
    lines = []
    for i, (q, a, target) in enumerate(GSM8K_DOCS):
        prompt = f"Question: {q}\nAnswer:"
        resp = f"{a.splitlines()[0]} The answer is {target}.\n#### {target}"
        lines.append(json.dumps({
            "doc_id": i, "doc": {"question": q, "answer": a}, "target": target,
            "resps": [[resp]], "filtered_resps": [target], "filter": "strict-match",
            "metrics": ["exact_match"], "doc_hash": h(q + a), "prompt_hash": h(prompt),
            "target_hash": h(target), "exact_match": 1.0,
        }))
    return "\n".join(lines) + "\n"


def run_stats(dep: Deployment, jobs: list[Job]) -> dict:
    return {"run_id": dep.run_id, "run_attempt": 1, "workflow": "Run Sweep",
            "head_sha": dep.head_sha, "config_keys": [dep.config_key],
            "jobs_total": len(jobs), "jobs_succeeded": len(jobs), "jobs_failed": 0}


# =============================================================================
# Bundle assembly
# =============================================================================

def dumps(obj) -> str:
    return json.dumps(obj, indent=2) + "\n"


def eval_only_files(dep: Deployment, job: Job, log: str, gpu: str, ident: str) -> dict[str, str]:
    """The artifacts an eval-only job uploads: its server log and GPU metrics, and the lm-eval payload."""
    rf, exp = result_filename(dep, job), exp_name(dep, job)
    return {
        f"eval_server_logs_{rf}/results/server.log": log,
        f"eval_gpu_metrics_{rf}/gpu_metrics.csv": gpu,
        f"eval_gpu_metrics_{rf}/gpu_metrics_identity.json": ident,
        f"eval_{exp}_{rf}/meta_env.json": dumps(meta_env(dep, job)),
        f"eval_{exp}_{rf}/results_{EVAL_STAMP}.json": dumps(lm_eval_results(dep, job)),
        f"eval_{exp}_{rf}/samples_gsm8k_{EVAL_STAMP}.jsonl": lm_eval_samples(),
    }


def job_files(dep: Deployment, job: Job) -> dict[str, str]:
    """Artifact-relative path -> content for one job (section 5.1)."""
    rf = result_filename(dep, job)
    log = server_log(dep, job)
    cmd = write_command_text(sglang_argv(dep, job))
    gpu = gpu_metrics_csv(dep, job)
    ident = dumps(gpu_identity(dep, job))
    files = {
        f"agentic_{rf}/results/server.log": log,
        f"agentic_{rf}/results/sglang_command.txt": cmd,
    }
    if job.eval_only:
        files.update(eval_only_files(dep, job, log, gpu, ident))
        return files
    files.update({
        f"agentic_{rf}/results/benchmark_command.txt": benchmark_command(dep, job),
        f"agentic_{rf}/results/benchmark.log": benchmark_log(dep, job),
        f"agentic_{rf}/results/gpu_metrics.csv": gpu,
        f"bmk_agentic_{rf}/{rf}.json": dumps(agentic_aggregate(dep, job)),
        f"server_logs_{rf}/results/server.log": log,
        f"gpu_metrics_{rf}/gpu_metrics.csv": gpu,
        f"gpu_metrics_{rf}/gpu_metrics_identity.json": ident,
    })
    return files


def bundle_files(dep: Deployment, jobs: list[Job]) -> dict[str, str]:
    files: dict[str, str] = {}
    for job in jobs:
        files.update(job_files(dep, job))
    files["results_bmk/agg_bmk.json"] = "[]\n"   # AgentX rows are not bmk_ agg rows
    files["run-stats/run_stats.json"] = dumps(run_stats(dep, jobs))
    return files


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel in sorted(files):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel].encode("utf-8"))


# =============================================================================
# Golden table and README
# =============================================================================

GOLDEN_YAML = """\
# Source GitHub Actions run: none (sample table written for the auditor's samples/, not a collection run)
# Acceptance Length (AL) reference values in the SPEED-Bench golden format.
# dataset: coding | temperature: 1.0 | output_len: 4096
# thinking_on chat_template_kwargs: {"thinking": true, "reasoning_effort": "high"}
# speculative-config: method=dspark | draft_sample_method=probabilistic | rejection_sample_method=block
# Model: deepseek-v4.1-flash (DSpark block size = num_speculative_tokens).
# Only thinking_on K=5 is known for this sample (3.51, the value the sample run pins
# with SGLANG_SIMULATE_ACC_LEN); every other cell is intentionally absent: a missing
# (mode, K) cell means "no golden value", never a value to guess.
#
# key = num_speculative_tokens (DSpark level); value = golden AL
deepseek-v4.1-flash:
  thinking_on:
    5: 3.51
"""


def readme(pass_jobs: list[Job], fail_jobs: list[Job]) -> str:
    def rf_list(dep, jobs):
        return "\n".join(f"  - `{result_filename(dep, j)}`" + (" (eval-only)" if j.eval_only else "")
                         for j in jobs)
    return f"""\
# Samples

Real-shaped InferenceX run bundles for the auditor's README, tests and demos.
Everything here is produced by `python3 samples/generate.py` (standard library
only, deterministic: two runs give byte-identical files). Edit the generator,
not the outputs. Shapes follow `shared/domain/INFERENCEX.md` (artifact names and
contents §5, name grammars §4.1, `printf '%q '` command files §6.1, env dump
blocks §6.2, SGLang `server_args` lines §6.3, JSON fields §5.4, golden YAML §8.1).

## `bundles/{PASS_BUNDLE}/` (+ `.tar.gz`, `.zip`)

The `gh run download RUN_ID` layout (one folder per artifact) of an AgentX run of
config `{H200_DEPLOYMENT.config_key}`: SGLang nightly
(`{H200_DEPLOYMENT.image}`) serving `{H200_DEPLOYMENT.model}` on H200 with
DSpark block size 5 (K=5, `speculative_num_draft_tokens` 6). Ten throughput jobs
(TP4/EP1 and TP8/EP8 x conc 1, 2, 4, 8, 16) carry `agentic_*`, `bmk_agentic_*`,
`server_logs_*` and `gpu_metrics_*` artifacts; each `server.log` starts with the
§6.2 env dump (`SGLANG_SIMULATE_ACC_LEN=3.51`, METHOD `match-expected`,
TOKEN_MODE `real-draft-token`, `SGLANG_DEFAULT_THINKING=1`) followed by the
0.5.2x dict-shaped `server_args={{...}}` line. One eval-only job (TP4, conc 16)
has `eval_server_logs_*`, `eval_gpu_metrics_*`, `eval_<EXP_NAME>_<RF>` (meta_env,
lm-eval gsm8k results with strict-match 0.9507, samples) and `agentic_*`, no
`bmk_*`, and no SA variables in its env dump. Run-level `results_bmk/` and
`run-stats/` are included. The archives hold the same tree under
`{PASS_BUNDLE}/` with fixed metadata. Expected verdict with
`--golden samples/golden`: **pass** — every check passes or is not applicable
(golden-al: `dsv41flash` + `dspark`, K=5 -> 3.51 from `golden/dsv41flash_dspark.yaml`;
eval-threshold: gsm8k default 0.90).

Jobs:
{rf_list(H200_DEPLOYMENT, pass_jobs)}

## `bundles/{FAIL_BUNDLE}/`

Two AgentX throughput jobs of `{B200_DEPLOYMENT.config_key}`
(`{B200_DEPLOYMENT.image}`, `{B200_DEPLOYMENT.model}`, `modelopt_fp4`, EAGLE
K=3 with steps/topk/draft 3/1/4, SA 2.49 = `dsv4_mtp` thinking_on K=3) in the same
artifact layout. `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=True` reaches the server through
the inherited environment: it is in the `server.log` env dump (line 3 of every
`server.log`), not in any `sglang_command.txt`. Mixed-case `True` is enabled by
SGLang's EnvBool, and the log shows the consequence (`Use deep_gemm moe runner
and deepep a2a backend for bf16 nextn layer in deepseek fp4 checkpoint.` and
`speculative_moe_runner_backend='deep_gemm'`, `speculative_moe_a2a_backend='deepep'`
in the older `server_args=ServerArgs(...)` dataclass-repr line of v0.5.16).
Expected verdict: **fail** — `forbidden-env` fails with evidence at the env dump
line in `server.log` (`draft-precision` may report the same flag, since that rule
names it too); the SA value and golden AL checks pass.

Jobs:
{rf_list(B200_DEPLOYMENT, fail_jobs)}

## `bundles/{SIM_THROUGHPUT_FAIL}/`

The same B200 deployment without the forbidden flag. Job conc 8 serves EAGLE K=3
with real acceptance (no `SGLANG_SIMULATE_ACC_*` at all); job conc 16 sets
`SGLANG_SIMULATE_ACC_LEN=2.49` and METHOD but leaves out
`SGLANG_SIMULATE_ACC_TOKEN_MODE` (SGLang's default is `fixed`). Expected verdict:
**fail** — `sim-acc-throughput` fails both jobs (`not-simulated`, `token-mode`).

## `bundles/{SIM_EVAL_FAIL}/`

One eval-only job (TP8, conc 16) of the same deployment whose recipe hard-codes
SA, so its `server.log` env dump carries `SGLANG_SIMULATE_ACC_LEN=2.49` (line 3).
Expected verdict: **fail** — `sim-acc-eval/simulated`.

## `bundles/{GOLDEN_FAIL}/`

One throughput job serving EAGLE with `speculative_num_steps=2` (K=2) but pinning
`SGLANG_SIMULATE_ACC_LEN=2.49`, the `dsv4_mtp` thinking_on value for K=3 (K=2 is
2.27): the "AL correct for a different K" evasion shape (§13.2). Expected
verdict: **fail** — `golden-al/mismatch`, naming K=3 as the K the value belongs to.

## `bundles/{ARCH_FAIL}/`

One throughput job launched with `--json-model-override-args
'{INDEXER_OVERRIDE}'` (logged as `json_model_override_args`): cross-layer
indexer reuse, Check 8's canonical architecture hack. Expected verdict:
**fail** — `arch-override/config-override`.

## `bundles/{IMAGE_FAIL}/`

One throughput job whose aggregate JSON records the image
`{IMAGE_DEPLOYMENT.image}` for framework sglang on B200 (an established SKU).
Expected verdict: **fail** — `upstream-image/not-upstream`.

## `bundles/{DRAFT_FAIL}/`

One throughput job launched with `--speculative-draft-model-quantization
quark_mxfp4` on the BF16 MTP head of an NVFP4 checkpoint (§9.2's example of a
forbidden draft quantization). Expected verdict: **fail** —
`draft-precision/quantized-draft`.

## `bundles/{EVAL_FAIL}/`

One eval-only job whose lm-eval gsm8k strict-match is 0.8741, below the dsv4
threshold 0.91. Expected verdict: **fail** — `eval-threshold/below`.

## `bundles/env-shapes/`

Written by `python3 samples/env_shapes.py`: one small bundle per shape in which
`SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE` reaches a server (`*-fail`: env listing, `set
-x` export trace, `declare -x`, `env NAME=v cmd`, `docker run -e/--env`, inline
command prefix, recipe YAML with anchor and merge key, JSON `Env` array, Python
heredoc `os.environ.setdefault`, `sitecustomize.py`, legacy `SGL_` spelling),
each failing `forbidden-env`, and `mentions-pass`, where the flag is only
mentioned (comment, echo, heredoc written to a file), set to 0, or set and
unset, which passes it.

## `recipes-pass/` and `recipes-fail/` (written by hand, not by this generator)

Repository checkouts shaped like InferenceX (`configs/nvidia-master.yaml`,
`benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4/*.yaml`,
`benchmarks/single_node/agentic/*.sh`) for the static recipe audit (the PR
gate, README "Auditing a repository of recipes"). Golden values are the
embedded `dsv4_mtp` ones (thinking_on K=2 2.27, K=3 2.49).

- `recipes-pass/`: a GB200 disaggregated AgentX entry whose recipe drafts K=3
  on both roles and gets simulated acceptance from the entry's
  `SYNTHETIC_ACCEPTANCE=true` / `SYNTHETIC_ACCEPTANCE_LENGTH=2.49` (the runner's
  injector), and a B200 single-node AgentX entry whose script exports SA only
  when `EVAL_ONLY != true`. Expected verdict: **pass** (eval-threshold n/a).
- `recipes-fail/`: the GB200 recipe drafts K=3 on prefill and K=2 on decode
  with `SGLANG_SIMULATE_ACC_LEN: "2.49"` in both role environments
  (`golden-al/mismatch` on the decode role only); a fixed-seq entry sets
  `SYNTHETIC_ACCEPTANCE=true` (`sim-acc-throughput/fixed-seq`); the B200 entry
  pins `ghcr.io/acme-ai/sglang-dsv4:v0.5.16-cu130-tuned`
  (`upstream-image/not-upstream`) and its script exports SA unconditionally, so
  the eval-only path simulates (`sim-acc-eval/simulated`). Expected verdict:
  **fail**.

## `golden/dsv41flash_dspark.yaml`

A golden AL table in the repository's format (comment header, top-level key
`deepseek-v4.1-flash`) holding only `thinking_on: {{5: 3.51}}`, the one cell this
sample knows. Pass `--golden samples/golden` when auditing the pass bundle.

## Engine bundles (written by `engine_bundles.py`, called from this generator)

One pass and one fail bundle per engine, each shaped after the InferenceX
script or srt-slurm recipe that would write it (snapshot 843c6254). All serve
`deepseek-ai/DeepSeek-V4-Pro` with K=3 MTP, whose golden AL is the embedded
`dsv4_mtp` thinking_on 2.49 (no thinking indicator in these runs: the policy
default thinking_on applies). `auditor evidence` on each shows the engine
(`vllm`, `atom`, `trtllm`, `sglang`) and the `speculative.simulated_al` fact.

- `bundles/vllm-agentx-pass/`: config `dsv4-fp4-b200-vllm-agentic-mtp`
  (`benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh`), TP8 with
  SimpleCPU KV offload. Two throughput jobs (conc 8, 14) launched with
  `--speculative-config '{{"method": "mtp", "num_speculative_tokens": 3,
  "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.49}}'`
  (`vllm_command.txt`; `server.log` is vLLM's own output with its
  `non-default args: {{...}}` and engine-config lines and `SpecDecoding metrics`)
  and one eval-only job (conc 14, lm-eval gsm8k) with the real-verification
  `SPEC_CONFIG`. Expected: **pass** (exit 0).
- `bundles/vllm-agentx-eval-sim-fail/`: the same run from a script without the
  `EVAL_ONLY` branch, so the eval-only job also verifies synthetically.
  Expected: **fail** (exit 1) — `sim-acc-eval/simulated`.
- `bundles/atom-agentx-pass/`: config `dsv4-fp4-mi355x-atom-agentic-mtp`
  (`dsv4_fp4_mi355x_atom_mtp.sh`): a throughput job (TP8, conc 16) with
  `--method mtp --num-speculative-tokens 3 --spec-decode-acceptance-length 2.49`
  in `server_command.txt` (`write_command`), and an eval-only job (conc 48)
  without it; ATOM's `[atom HH:MM:SS]` log lines, `amd-smi` metrics.
  Expected: **pass** (exit 0).
- `bundles/atom-agentx-rate-fail/`: the throughput job uses
  `--spec-decode-acceptance-rate 0.83`, AL/K instead of (AL-1)/K, so ATOM runs
  at 1 + 0.83 x 3 = 3.49. Expected: **fail** (exit 1) — `golden-al/mismatch`.
- `bundles/trtllm-dynamo-disagg-pass/`: config `dsv4-fp4-gb300-dynamo-trt-agentx`,
  recipe `trtllm/deepseek-v4/agentx-gb300-20260811/dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp.yaml`
  run by srt-slurm v1.0.50: `multinode_server_logs.tar.gz` holds the
  resolved `config.yaml` (both role environments with
  `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '1.49'`, i.e. golden AL - 1;
  `trtllm_config.{{prefill,decode}}.speculative_config` MTP `max_draft_len: 3`),
  `sweep_<JOB_ID>.log`, `log.out`, and the prefill and four decode worker logs
  (`<node>_{{prefill,decode}}_w<i>.out`, TRT-LLM's version banner and
  `[TRT-LLM] [I]` lines); `bmk_agentic_<RF>/<RF>_conc4.json` and
  `agentic_<RF>/LOGS/agentic/`. Expected: **pass** (exit 0).
- `bundles/trtllm-dynamo-disagg-al-fail/`: the knob set to the golden AL itself,
  `'2.49'`, forgetting that TRT-LLM counts draft tokens only: it runs at 3.49.
  Expected: **fail** (exit 1) — `golden-al/mismatch`.
- `bundles/sglang-dynamo-disagg-pass/`: config
  `dsv4-fp4-gb300-dynamo-sglang-agentic-disagg`, recipe
  `sglang/deepseek-v4/agentic/disagg-gb300-2p1d-dep8-tp4-c80-mtp-kvoffload.yaml`
  (srt-slurm v1.0.38): SA in `decode_environment`, EAGLE 3/1/4 on both roles,
  and prefill/decode worker logs with SGLang's `server_args={{...}}` line
  (`disaggregation_mode` prefill / decode). Expected: **pass** (exit 0).
- `bundles/sglang-dynamo-disagg-prefill-sa-fail/`: the three
  `SGLANG_SIMULATE_ACC_*` variables in `prefill_environment` only; the
  decode engine, which generates the tokens, verifies for real. Expected:
  **fail** (exit 1) — `sim-acc-throughput/not-simulated`.
- `bundles/sglang-dynamo-disagg-decode-k2-fail/`: SA 2.49 on the decode role,
  which drafts K=2 (`speculative-num-steps: 2`, draft tokens 3) while prefill
  keeps K=3: the target follows the generating role's K (2.27), read from the
  decode worker's `server_args`, not the prefill worker's. Expected: **fail**
  (exit 1) — `golden-al/mismatch`, naming K=3 as the K 2.49 belongs to.

## `images/upstream/`, `images/patched/`

Produced by `python3 samples/images.py` (standard library only, deterministic;
it borrows the layer and layout writers of the benchmark scripts in
`tests/services/`). Two OCI layouts (ref `v1`) for `auditor image diff` and
`auditor image verify`: `upstream` holds a base layer and an SGLang-shaped
distribution (`sglang 0.5.16`, with the `dist-info` METADATA, WHEEL, INSTALLER
and a RECORD whose hashes match, as pip writes them; the engine files are short
stand-ins, not SGLang's code). `patched` adds one layer that edits
`sglang/srt/layers/moe/fused_moe.py`, drops `fused_moe.py.patch` next to it and
adds a `sitecustomize.py`, and its config sets
`SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1` and `PYTHONPATH`. The README shows the
diff; `tests/it/cli.rs` (`the_sample_images_show_each_patch_the_readme_shows`)
holds it to the findings shown.
"""


# =============================================================================
# Deterministic archives
# =============================================================================

def archive_entries(root: Path) -> list[tuple[str, Path]]:
    """(member name, path) for the tree under root, dirs included, sorted."""
    base = root.parent
    paths = [root, *root.rglob("*")]
    return sorted(((p.relative_to(base).as_posix(), p) for p in paths), key=lambda e: e[0])


def write_tar_gz(root: Path, dest: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in archive_entries(root):
            info = tarfile.TarInfo(name)
            info.mtime = ARCHIVE_MTIME
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if path.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                data = path.read_bytes()
                info.mode, info.size = 0o644, len(data)
                tar.addfile(info, io.BytesIO(data))
    with dest.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                               mtime=0, compresslevel=9) as gz:
        gz.write(buf.getvalue())


def write_zip(root: Path, dest: Path) -> None:
    with zipfile.ZipFile(dest, "w") as zf:
        for name, path in archive_entries(root):
            if path.is_dir():
                info = zipfile.ZipInfo(name + "/", date_time=ARCHIVE_DATE)
                info.external_attr = (0o40755 << 16) | 0x10
                data = b""
            else:
                info = zipfile.ZipInfo(name, date_time=ARCHIVE_DATE)
                info.external_attr = 0o100644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                data = path.read_bytes()
            info.create_system = 3  # unix, so the mode bits are honoured
            zf.writestr(info, data, compress_type=info.compress_type, compresslevel=9)


# =============================================================================
# Main
# =============================================================================

def clean() -> None:
    for rel in OWNED_PATHS:
        path = HERE / rel
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def main() -> None:
    clean()
    pass_jobs, fail_jobs = h200_jobs(), b200_jobs()
    for dep, jobs in ((H200_DEPLOYMENT, pass_jobs), (B200_DEPLOYMENT, fail_jobs),
                      (SIM_THROUGHPUT_DEPLOYMENT, sim_throughput_jobs()),
                      (SIM_EVAL_DEPLOYMENT, sim_eval_jobs()),
                      (GOLDEN_DEPLOYMENT, b200_jobs()[:1]),
                      (ARCH_DEPLOYMENT, b200_jobs()[:1]),
                      (IMAGE_DEPLOYMENT, b200_jobs()[:1]),
                      (EVAL_DEPLOYMENT, sim_eval_jobs()),
                      (DRAFT_DEPLOYMENT, b200_jobs()[:1])):
        write_tree(BUNDLES / dep.bundle, bundle_files(dep, jobs))
    import engine_bundles  # imports this module's helpers, so not at the top
    assert [f"bundles/{b}" for b in engine_bundles.BUNDLES] == OWNED_PATHS[-len(engine_bundles.BUNDLES):]
    engine_bundles.write_all(BUNDLES)
    write_tar_gz(BUNDLES / PASS_BUNDLE, BUNDLES / f"{PASS_BUNDLE}.tar.gz")
    write_zip(BUNDLES / PASS_BUNDLE, BUNDLES / f"{PASS_BUNDLE}.zip")
    (HERE / GOLDEN_FILE).parent.mkdir(parents=True, exist_ok=True)
    (HERE / GOLDEN_FILE).write_bytes(GOLDEN_YAML.encode())
    (HERE / "README.md").write_bytes(readme(pass_jobs, fail_jobs).encode())


if __name__ == "__main__":
    main()
