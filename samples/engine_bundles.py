"""Run bundles of the engines other than single-node SGLang, one pass and one
fail variant each, written by generate.py (imported from its main()).

Each bundle follows the InferenceX script or recipe that would have produced it
(snapshot 843c6254):

  * vLLM: benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh (config
    dsv4-fp4-b200-vllm-agentic-mtp). The script builds SPEC_CONFIG with
    `"rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.49`
    unless EVAL_ONLY=true, writes VLLM_CMD with `printf '%q '` to
    vllm_command.txt and sends vLLM's own output to server.log (no env dump);
    vLLM logs `non-default args: {...}` and the engine-config line.
  * TRT-LLM: benchmarks/multi_node/srt-slurm-recipes/trtllm/deepseek-v4/
    agentx-gb300-20260811/dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp.yaml
    (config dsv4-fp4-gb300-dynamo-trt-agentx) run by runners/launch_gb300-nv.sh
    through srtctl: `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '1.49'`
    (golden 2.49 minus the bonus token) in both role environments; the log
    dir outputs/<JOB_ID>/logs/ is uploaded as multinode_server_logs.tar.gz.
  * ATOM: benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh (config
    dsv4-fp4-mi355x-atom-agentic-mtp): `--spec-decode-acceptance-length 2.49`
    appended unless EVAL_ONLY=true, command written with write_command to
    server_command.txt.
  * SGLang disaggregated: benchmarks/multi_node/srt-slurm-recipes/sglang/
    deepseek-v4/agentic/disagg-gb300-2p1d-dep8-tp4-c80-mtp-kvoffload.yaml
    (config dsv4-fp4-gb300-dynamo-sglang-agentic-disagg): SA in
    decode_environment, prefill and decode workers logging their
    server_args in <node>_{prefill,decode}_w0.out inside the tarball.

Deterministic; standard library only.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from generate import (eval_only_files, B200_CLEAN, BASE_SERVER_ARGS, Job, agentic_aggregate, benchmark_command,
                      benchmark_log, det, dumps, exp_name, gpu_identity, gpu_metrics_csv,
                      lm_eval_results, lm_eval_samples, meta_env, py_repr, result_filename,
                      run_stats, write_command_text, write_tar_gz, EVAL_STAMP)

GOLDEN_K3 = 2.49        # dsv4_mtp thinking_on K=3, the value every dsv4 AgentX recipe pins
MODEL = "deepseek-ai/DeepSeek-V4-Pro"
MODEL_DIR = "/data/models/DeepSeek-V4-Pro"

VLLM_PASS, VLLM_FAIL = "vllm-agentx-pass", "vllm-agentx-eval-sim-fail"
TRTLLM_PASS, TRTLLM_FAIL = "trtllm-dynamo-disagg-pass", "trtllm-dynamo-disagg-al-fail"
ATOM_PASS, ATOM_FAIL = "atom-agentx-pass", "atom-agentx-rate-fail"
SGLANG_DISAGG_PASS, SGLANG_DISAGG_FAIL = "sglang-dynamo-disagg-pass", "sglang-dynamo-disagg-prefill-sa-fail"
SGLANG_DISAGG_K_FAIL = "sglang-dynamo-disagg-decode-k2-fail"
BUNDLES = [VLLM_PASS, VLLM_FAIL, TRTLLM_PASS, TRTLLM_FAIL, ATOM_PASS, ATOM_FAIL,
           SGLANG_DISAGG_PASS, SGLANG_DISAGG_FAIL, SGLANG_DISAGG_K_FAIL]


# =============================================================================
# Single-node AgentX (vLLM, ATOM): the single-node template's artifacts
# =============================================================================

def single_node_files(dep, job: Job, cmd_file: str, argv: list[str], log: str, target: float,
                      gpu: str, ident: str) -> dict[str, str]:
    """Artifact-relative path -> content for one single-node AgentX job (section 5.1)."""
    rf = result_filename(dep, job)
    files = {
        f"agentic_{rf}/results/server.log": log,
        f"agentic_{rf}/results/{cmd_file}": write_command_text(argv),
    }
    if job.eval_only:
        files.update(eval_only_files(dep, job, log, gpu, ident))
        return files
    aggregate = agentic_aggregate(dep, job, target)
    if job.kv != "kvnone":
        backend = job.kv.removeprefix("kvdram-")
        aggregate.update({"kv_offloading": "dram", "kv_offload_backend": backend, "allocated_cpu_dram_gb": 1728})
    files.update({
        f"agentic_{rf}/results/benchmark_command.txt": benchmark_command(dep, job),
        f"agentic_{rf}/results/benchmark.log": benchmark_log(dep, job),
        f"agentic_{rf}/results/gpu_metrics.csv": gpu,
        f"bmk_agentic_{rf}/{rf}.json": dumps(aggregate),
        f"server_logs_{rf}/results/server.log": log,
        f"gpu_metrics_{rf}/gpu_metrics.csv": gpu,
        f"gpu_metrics_{rf}/gpu_metrics_identity.json": ident,
    })
    return files


def run_level(dep, jobs: list[Job]) -> dict[str, str]:
    return {"results_bmk/agg_bmk.json": "[]\n", "run-stats/run_stats.json": dumps(run_stats(dep, jobs))}


# ---- vLLM -------------------------------------------------------------------

VLLM_DEPLOYMENT = replace(
    B200_CLEAN,
    bundle=VLLM_PASS,
    config_key="dsv4-fp4-b200-vllm-agentic-mtp",
    image="vllm/vllm-openai:nightly-dev-x86_64-cu13.0.1-426e59f",
    framework="vllm",
    run_id=32044718125,
    head_sha="843c6254d1e0a7b9c3f5e2a8d6b4c1f0e9a7d3b2",
)
VLLM_VERSION = "0.20.2rc1.dev426+g426e59f"
VLLM_ATTENTION = '{"backend":"FLASHINFER_MLA_SPARSE_DSV4","use_prefill_query_quantization":true,"use_fp4_indexer_cache":true}'
VLLM_OFFLOAD_GB = 1728   # TOTAL_CPU_DRAM_GB on b200-dgxc (dram-utilization 0.95)


def vllm_spec_config(synthetic: bool) -> str:
    """SPEC_CONFIG exactly as the script's two branches spell it."""
    if synthetic:
        return ('{"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic", '
                f'"synthetic_acceptance_length": {GOLDEN_K3}}}')
    return '{"method": "mtp", "num_speculative_tokens": 3}'


def vllm_capture_sizes(max_num_seqs: int) -> list[int]:
    return sorted({n * 4 for n in range(1, max_num_seqs + 1)} | {100, 200, 300, 400, 500})


def vllm_offload_config(tp: int) -> str:
    per_rank = VLLM_OFFLOAD_GB * 1000 * 1000 * 1000 // tp
    return ('{\n  "kv_connector": "SimpleCPUOffloadConnector",\n  "kv_role": "kv_both",\n'
            '  "kv_connector_extra_config": {\n'
            f'    "cpu_bytes_to_use_per_rank": {per_rank},\n'
            '    "enable_cross_layers_blocks": "true",\n    "lazy_offload": false\n  }\n}')


def vllm_argv(job: Job, synthetic: bool) -> list[str]:
    max_num_seqs = 2 * job.conc
    compilation = ('{"cudagraph_mode":"FULL_AND_PIECEWISE","cudagraph_capture_sizes":['
                   + ",".join(map(str, vllm_capture_sizes(max_num_seqs))) + "]}")
    return ["vllm", "serve", MODEL_DIR, "--served-model-name", MODEL, "--host", "0.0.0.0",
            "--port", "8888", "--trust-remote-code", "--kv-cache-dtype", "fp8", "--block-size", "256",
            "--max-model-len", "1048576", "--gpu-memory-utilization", "0.90", "--numa-bind",
            "--enable-cumem-allocator", "--no-enable-flashinfer-autotune", "--tokenizer-mode", "deepseek_v4",
            "--tool-call-parser", "deepseek_v4", "--enable-auto-tool-choice", "--reasoning-parser", "deepseek_v4",
            "--attention-config", VLLM_ATTENTION, "--speculative-config", vllm_spec_config(synthetic),
            "--no-disable-hybrid-kv-cache-manager", "--disable-uvicorn-access-log",
            "--compilation-config", compilation, "--max-num-seqs", str(max_num_seqs),
            "--tensor-parallel-size", str(job.tp), "--data-parallel-size", "1",
            "--kv-transfer-config", vllm_offload_config(job.tp)]


def vllm_log(job: Job, rf: str, synthetic: bool) -> str:
    """vLLM's own stdout/stderr (the script redirects the server into server.log)."""
    api, core = 400 + int(det("api" + rf) * 300), 900 + int(det("core" + rf) * 300)
    t = job.start
    lines: list[str] = []

    def log(who: str, pid: int, src: str, msg: str, dt: float = 0.0) -> None:
        nonlocal t
        t += timedelta(seconds=dt)
        lines.append(f"({who} pid={pid}) INFO {t:%m-%d %H:%M:%S} [{src}] {msg}")

    spec = json.loads(vllm_spec_config(synthetic))
    max_num_seqs = 2 * job.conc
    non_default = {
        "model_tag": MODEL_DIR, "host": "0.0.0.0", "port": 8888, "disable_uvicorn_access_log": True,
        "enable_auto_tool_choice": True, "tool_call_parser": "deepseek_v4", "model": MODEL_DIR,
        "tokenizer_mode": "deepseek_v4", "trust_remote_code": True, "max_model_len": 1048576,
        "served_model_name": [MODEL], "reasoning_parser": "deepseek_v4", "attention_config": json.loads(VLLM_ATTENTION),
        "tensor_parallel_size": job.tp, "enable_cumem_allocator": True, "numa_bind": True, "block_size": 256,
        "gpu_memory_utilization": 0.9, "kv_cache_dtype": "fp8", "enable_flashinfer_autotune": False,
        "disable_hybrid_kv_cache_manager": False, "max_num_seqs": max_num_seqs,
        "speculative_config": spec,
        "kv_transfer_config": json.loads(vllm_offload_config(job.tp)),
        "compilation_config": {"cudagraph_mode": "FULL_AND_PIECEWISE",
                               "cudagraph_capture_sizes": vllm_capture_sizes(max_num_seqs)},
    }
    log("APIServer", api, "api_server.py:1896", f"vLLM API server version {VLLM_VERSION}")
    log("APIServer", api, "utils.py:233", "non-default args: " + py_repr(non_default, "dict"))
    log("APIServer", api, "model.py:547", "Resolved architecture: DeepseekV4ForCausalLM", 9)
    log("APIServer", api, "model.py:1510", "Using max model len 1048576")
    log("APIServer", api, "cache.py:214", "Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts the performance.")
    log("APIServer", api, "scheduler.py:205", "Chunked prefill is enabled with max_num_batched_tokens=8192.", 1)
    log("EngineCore_DP0", core, "core.py:93",
        f"Initializing a V1 LLM engine (v{VLLM_VERSION}) with config: model='{MODEL_DIR}', "
        f"speculative_config=SpeculativeConfig(method='mtp', model='{MODEL_DIR}', num_spec_tokens=3), "
        f"tokenizer='{MODEL_DIR}', skip_tokenizer_init=False, tokenizer_mode=deepseek_v4, revision=None, "
        "trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=1048576, download_dir=None, load_format=auto, "
        f"tensor_parallel_size={job.tp}, pipeline_parallel_size=1, data_parallel_size=1, "
        "disable_custom_all_reduce=False, quantization=modelopt_fp4, enforce_eager=False, kv_cache_dtype=fp8, "
        f"device_config=cuda, seed=0, served_model_name={MODEL}, enable_prefix_caching=True, "
        "enable_chunked_prefill=True, pooler_config=None", 11)
    for rank in range(job.tp):
        lines.append(f"(Worker_TP{rank} pid={core + 20 + rank}) INFO {t:%m-%d %H:%M:%S} [parallel_state.py:1325] "
                     f"rank {rank} in world size {job.tp} is assigned as DP rank 0, PP rank 0, TP rank {rank}, EP rank {rank}")
    log("EngineCore_DP0", core, "gpu_model_runner.py:3402", "Model loading took 88.41 GiB memory and 212.73 seconds", 214)
    log("EngineCore_DP0", core, "gpu_model_runner.py:3480", "Loading drafter model...")
    log("EngineCore_DP0", core, "gpu_worker.py:298", "Available KV cache memory: 61.84 GiB", 21)
    log("EngineCore_DP0", core, "kv_cache_utils.py:1087", "GPU KV cache size: 3,612,416 tokens")
    log("EngineCore_DP0", core, "gpu_model_runner.py:4211", "Graph capturing finished in 41 secs, took 2.17 GiB", 41)
    log("EngineCore_DP0", core, "core.py:221", "init engine (profile, create kv cache, warmup model) took 78.30 seconds")
    log("APIServer", api, "api_server.py:1971", "Starting vLLM API server 0 on http://0.0.0.0:8888", 2)
    lines.append(f"(APIServer pid={api}) INFO:     Started server process [{api}]")
    lines.append(f"(APIServer pid={api}) INFO:     Waiting for application startup.")
    lines.append(f"(APIServer pid={api}) INFO:     Application startup complete.")
    for step in range(3):
        if synthetic:   # synthetic rejection sampling: the realised AL sits on the target
            mean = GOLDEN_K3 - 0.01 + 0.02 * det(f"al{step}{rf}")
        else:           # real verification
            mean = 2.61 + 0.2 * det(f"al{step}{rf}")
        drafted = job.conc * (2900 + 400 * step)
        accepted = int(drafted * (mean - 1) / 3)
        rates = [min(1.0, mean - 1), max(0.0, min(1.0, mean - 2)), max(0.0, mean - 3)] if synthetic else \
            [0.81, 0.52, max(0.0, mean - 2.33)]
        log("APIServer", api, "metrics.py:96",
            f"SpecDecoding metrics: Mean acceptance length: {mean:.2f}, Accepted throughput: {accepted / 10:.2f} tokens/s, "
            f"Drafted throughput: {drafted / 10:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
            f"Per-position acceptance rate: {', '.join(f'{r:.3f}' for r in rates)}, "
            f"Avg Draft acceptance rate: {100 * (mean - 1) / 3:.1f}%", 10)
    return "\n".join(lines) + "\n"


def vllm_jobs() -> list[Job]:
    return [Job(8, 1, 8, "b200-dgxc_2", datetime(2026, 8, 21, 9, 14, 3), kv="kvdram-vllm-simple"),
            Job(8, 1, 14, "b200-dgxc_0", datetime(2026, 8, 21, 9, 14, 41), kv="kvdram-vllm-simple"),
            Job(8, 1, 14, "b200-dgxc_3", datetime(2026, 8, 21, 11, 2, 17), kv="kvdram-vllm-simple", eval_only=True)]


def vllm_bundle(synthetic_on_eval: bool) -> dict[str, str]:
    """Pass: SPEC_CONFIG branches on EVAL_ONLY. Fail: a script revision without the
    branch, so the eval-only job verifies drafts synthetically too."""
    dep = VLLM_DEPLOYMENT if not synthetic_on_eval else replace(VLLM_DEPLOYMENT, bundle=VLLM_FAIL, run_id=32044718377)
    jobs = vllm_jobs()
    files: dict[str, str] = {}
    for job in jobs:
        rf = result_filename(dep, job)
        synthetic = synthetic_on_eval or not job.eval_only
        files.update(single_node_files(dep, job, "vllm_command.txt", vllm_argv(job, synthetic),
                                       vllm_log(job, rf, synthetic), GOLDEN_K3,
                                       gpu_metrics_csv(dep, job), dumps(gpu_identity(dep, job))))
    files.update(run_level(dep, jobs))
    return files


# ---- ATOM -------------------------------------------------------------------

ATOM_DEPLOYMENT = replace(
    B200_CLEAN,
    bundle=ATOM_PASS,
    config_key="dsv4-fp4-mi355x-atom-agentic-mtp",
    image="rocm/atom-dev:nightly_202608201032",
    framework="atom",
    hw="mi355x",
    gpu_name="AMD Instinct MI355X",
    gpu_mem_mib=294896,
    run_id=32051190733,
    head_sha="843c6254d1e0a7b9c3f5e2a8d6b4c1f0e9a7d3b2",
)
# The rate a script gets when it divides the AL by K and forgets the bonus
# token: `awk "BEGIN{print $AL/$K}"` -> 0.83, implied AL 1 + 0.83 * 3 = 3.49.
ATOM_WRONG_RATE = "0.83"


def atom_argv(job: Job, acceptance: list[str]) -> list[str]:
    return ["python3", "-u", "-m", "atom.entrypoints.openai_server", "--model", MODEL_DIR,
            "--served-model-name", MODEL, "--host", "0.0.0.0", "--server-port", "8888",
            "--tensor-parallel-size", str(job.tp), "--kv-cache-dtype", "fp8", "--index-cache-dtype", "fp4",
            "--enable-prefix-caching", "--gpu-memory-utilization", "0.9", "--max-num-batched-tokens", "16384",
            "--attn-prefill-chunk-size", "16384", "--state-checkpoint-interval-tokens", "8192", "--level", "3",
            "--cudagraph-mode", "FULL", "--method", "mtp", "--num-speculative-tokens", "3", *acceptance,
            "--max-num-seqs", str(2 * job.conc)]


def atom_log(job: Job, rf: str, simulated: float | None) -> str:
    """ATOM's own output (aiter JIT lines, `[atom HH:MM:SS]` lines); the forced
    acceptance shows only as the realised tokens per forward."""
    t = job.start
    lines = [f"[aiter] import [module_aiter_core] under /app/aiter/aiter/jit/module_aiter_core.so"]

    def log(msg: str, dt: float = 0.0) -> None:
        nonlocal t
        t += timedelta(seconds=dt)
        lines.append(f"[atom {t:%H:%M:%S}] {msg}")

    log(f"Loading tokenizer from {MODEL_DIR}...")
    log(f"Initializing {job.tp} model runner(s), speculative method mtp, num_speculative_tokens=3", 2)
    log("Model load done: DeepseekV4ForCausalLM, 46.2 GB per rank", 188)
    log("KV cache: fp8, 1,482,752 tokens, block size 16", 6)
    log("CUDA graph capture done (FULL), 2 x 48 batch sizes", 57)
    log("Uvicorn running on http://0.0.0.0:8888", 1)
    for step in range(3):
        tpf = (simulated if simulated is not None else 2.72) - 0.01 + 0.02 * det(f"tpf{step}{rf}")
        log(f"mtp_stats: average_tokens_per_forward={tpf:.3f}, running={job.conc}, waiting=0", 30)
    return "\n".join(lines) + "\n"


def atom_metrics_csv(job: Job) -> str:
    """`amd-smi metric -p -c -t -u -w N --csv` samples (benchmark_lib.sh's AMD branch)."""
    rows = ["timestamp,gpu,socket_power,gfx_activity,umc_activity,edge,hotspot,mem"]
    for sample, offset in enumerate((150, 1050)):
        ts = int((job.start + timedelta(seconds=offset) - datetime(1970, 1, 1)).total_seconds())
        for gpu in range(8):
            rows.append(f"{ts},{gpu},{880 + int(250 * det(f'p{sample}{gpu}{job.runner}'))},"
                        f"{90 + int(9 * det(f'u{sample}{gpu}{job.runner}'))},41,48,{71 + gpu % 5},62")
    return "\n".join(rows) + "\n"


def atom_jobs() -> list[Job]:
    return [Job(8, 1, 16, "mi355x-amds_1", datetime(2026, 8, 22, 2, 40, 12)),
            Job(8, 1, 48, "mi355x-amds_4", datetime(2026, 8, 22, 3, 55, 50), eval_only=True)]


def atom_bundle(rate: str | None) -> dict[str, str]:
    """Pass: `--spec-decode-acceptance-length 2.49` on the throughput job only.
    Fail: `--spec-decode-acceptance-rate 0.83` (AL/K, not (AL-1)/K)."""
    dep = ATOM_DEPLOYMENT if rate is None else replace(ATOM_DEPLOYMENT, bundle=ATOM_FAIL, run_id=32051190802)
    jobs = atom_jobs()
    files: dict[str, str] = {}
    for job in jobs:
        rf = result_filename(dep, job)
        if job.eval_only:
            acceptance, simulated = [], None
        elif rate is None:
            acceptance, simulated = ["--spec-decode-acceptance-length", str(GOLDEN_K3)], GOLDEN_K3
        else:
            acceptance, simulated = ["--spec-decode-acceptance-rate", rate], 1 + float(rate) * 3
        argv = atom_argv(job, acceptance)
        identity = {"hostname": job.runner.replace("_", "-n"), "runner": job.runner, "driver_version": "6.14.14",
                    "rocm_version": "7.1.0", "gpus": [{"index": g, "name": dep.gpu_name, "memory_total_mib": dep.gpu_mem_mib}
                                                      for g in range(8)]}
        files.update(single_node_files(dep, job, "server_command.txt", argv, atom_log(job, rf, simulated),
                                       simulated or GOLDEN_K3, atom_metrics_csv(job), dumps(identity)))
    files.update(run_level(dep, jobs))
    return files


# =============================================================================
# Multi-node srt-slurm / Dynamo (TRT-LLM, SGLang disaggregated)
# =============================================================================

def multinode_rf(prefix: str, framework: str, p: tuple, d: tuple, conc: int, kv: str, runner: str) -> str:
    """Multi-node AgentX RESULT_FILENAME (section 4.1); p/d = (workers, tp, ep, dp_attention)."""
    def short(nw, tp, ep, dpa):
        return f"{nw}x{tp}" + (f"ep{ep}" if ep > 1 else "") + ("dpa" if dpa else "")

    def long(nw, tp, ep, dpa):
        return f"tp{tp}-pp1-dcp1-pcp1-ep{ep}-dp{'true' if dpa else 'false'}-nw{nw}"
    return (f"{prefix}_p{short(*p)}_d{short(*d)}_conc{conc}_{kv}_fp4_{framework}_prefill-{long(*p)}_"
            f"decode-{long(*d)}_disagg-true_spec-mtp_conc{conc}_{runner}")


def yaml_scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    plain = text and not any(c in text for c in ":#{}[],&*!|>'\"%@`") and text.strip() == text \
        and text.lower() not in ("true", "false", "null", "yes", "no", "on", "off", "none") \
        and not text.replace(".", "", 1).replace("-", "", 1).isdigit()
    return text if plain else "'" + text.replace("'", "''") + "'"


def to_yaml(obj, indent: int = 0) -> list[str]:
    """Block-style YAML as srtctl dumps the resolved recipe (config.yaml)."""
    pad = " " * indent
    out: list[str] = []
    for key, value in obj.items():
        if isinstance(value, dict) and value:
            out.append(f"{pad}{key}:")
            out.extend(to_yaml(value, indent + 2))
        elif isinstance(value, list):
            out.append(f"{pad}{key}:")
            out.extend(f"{pad}- {yaml_scalar(v)}" for v in value)
        else:
            out.append(f"{pad}{key}: {yaml_scalar(value)}")
    return out


def srt_logs(job_id: int, recipe: dict, workers: dict[str, str], start: datetime, conc: int,
             srt_version: str) -> dict[str, str]:
    """outputs/<JOB_ID>/logs/ as the launcher tars it: sweep log, resolved recipe, worker logs, agentic/."""
    name = recipe["name"]
    sweep = [
        f"[{start:%Y-%m-%d %H:%M:%S}] srtctl {srt_version}: job {job_id} started, recipe {name}",
        f"[{start:%Y-%m-%d %H:%M:%S}] Resolved config written to /logs/config.yaml",
        *(f"[{start + timedelta(seconds=5):%Y-%m-%d %H:%M:%S}] Starting {w.split('_', 1)[1].rsplit('.', 1)[0]} on "
          f"{w.split('_', 1)[0]}: log {w}" for w in sorted(workers)),
        f"[{start + timedelta(minutes=14):%Y-%m-%d %H:%M:%S}] All workers healthy; starting frontend and benchmark",
        f"[{start + timedelta(minutes=75):%Y-%m-%d %H:%M:%S}] Benchmark finished (concurrency {conc}); results in /logs/agentic",
    ]
    logs = {f"sweep_{job_id}.log": "\n".join(sweep) + "\n",
            "config.yaml": "\n".join(to_yaml(recipe)) + "\n",
            "log.out": f"srtctl {srt_version}\nSubmitted batch job {job_id}\n",
            "log.err": ""}
    logs.update(workers)
    return logs


def multinode_files(rf: str, logs: dict[str, str], conc: int, aggregate: dict) -> dict[str, str | dict]:
    """The multi-node template's artifacts for an AgentX throughput job (section 5.2)."""
    return {
        f"multinode_server_logs_{rf}/multinode_server_logs.tar.gz": logs,
        f"bmk_agentic_{rf}/{rf}_conc{conc}.json": dumps(aggregate),
        f"agentic_{rf}/LOGS/agentic/benchmark_command.txt": (
            f"aiperf profile --model {MODEL} --url http://localhost:8000 --endpoint-type chat --streaming "
            f"--concurrency {conc} --custom-dataset-type multi_turn --benchmark-duration 3600 "
            "--artifact-dir /logs/agentic/aiperf_artifacts\n"),
    }


def multinode_aggregate(image: str, framework: str, conc: int, p: tuple, d: tuple, al: float, kv: str) -> dict:
    backend = kv.removeprefix("kvdram-")
    return {
        "hw": "gb300", "conc": conc, "image": image, "model": MODEL, "infmax_model_prefix": "dsv4",
        "framework": framework, "precision": "fp4", "spec_decoding": "mtp", "disagg": True,
        "scenario_type": "agentic-coding", "is_multinode": True,
        "prefill_tp": p[1], "prefill_ep": p[2], "prefill_dp_attention": p[3], "prefill_num_workers": p[0],
        "decode_tp": d[1], "decode_ep": d[2], "decode_dp_attention": d[3], "decode_num_workers": d[0],
        "kv_offloading": "dram", "kv_offload_backend": backend,
        "server_metrics": {"spec_accept_length_mean": round(al - 0.01, 2)},
        "dataset": "agentx-coding",
    }


def write_bundle(root: Path, files: dict[str, str | dict]) -> None:
    """Files, and tarballs (dict values: the log dir's files) written with generate.write_tar_gz."""
    for rel in sorted(files):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        content = files[rel]
        if isinstance(content, dict):
            with tempfile.TemporaryDirectory() as tmp:
                logs = Path(tmp) / "logs"
                for name in sorted(content):
                    (logs / name).parent.mkdir(parents=True, exist_ok=True)
                    (logs / name).write_bytes(content[name].encode("utf-8"))
                write_tar_gz(logs, path)
        else:
            path.write_bytes(content.encode("utf-8"))


# ---- TRT-LLM (Dynamo, srt-slurm v1.0.50) -----------------------------------

TRT_IMAGE = "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24"
TRT_P, TRT_D = (1, 4, 4, True), (4, 8, 8, False)


def trt_env(forced: str) -> dict:
    return {"TLLM_LOG_LEVEL": "INFO", "TRTLLM_SERVER_DISABLE_GC": "1", "TRTLLM_WORKER_DISABLE_GC": "1",
            "NCCL_GRAPH_MIXING_SUPPORT": "0", "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": forced,
            "UCX_TLS": "cuda_ipc,cuda_copy,sm,self,tcp", "DYN_ENGINE_CONV_AFFINITY": "1",
            "DYN_DEFAULT_THINKING_MODE": "disabled", "MIMALLOC_ARENA_RESERVE": "0", "TRTLLM_PINNED_WEIGHT_STAGING": "1"}


def trt_recipe(forced: str) -> dict:
    spec = {"decoding_type": "MTP", "max_draft_len": 3}
    return {
        "name": "dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp",
        "model": {"path": MODEL, "container": TRT_IMAGE, "precision": "fp4"},
        "dynamo": {"install": True, "wheel": "1.4.0.dev20260807", "request_plane": "tcp"},
        "resources": {"gpu_type": "gb300", "gpus_per_node": 4, "prefill_nodes": 1, "prefill_workers": 1,
                      "gpus_per_prefill": 4, "decode_nodes": 8, "decode_workers": 4, "gpus_per_decode": 8},
        "backend": {
            "type": "trtllm",
            "prefill_environment": {**trt_env(forced), "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                                    "CUDA_SCALE_LAUNCH_QUEUES": "4x"},
            "decode_environment": trt_env(forced),
            "trtllm_config": {
                "prefill": {"custom_tokenizer": "deepseek_v4", "enable_attention_dp": True, "enable_chunked_prefill": True,
                            "kv_cache_config": {"dtype": "fp8", "enable_block_reuse": True, "free_gpu_memory_fraction": 0.8,
                                                "tokens_per_block": 128},
                            "max_batch_size": 128, "max_num_tokens": 4096, "moe_config": {"backend": "TRTLLM"},
                            "moe_expert_parallel_size": 4, "pipeline_parallel_size": 1, "print_iter_log": True,
                            "speculative_config": spec, "tensor_parallel_size": 4},
                "decode": {"cuda_graph_config": {"batch_sizes": [1, 2, 4], "enable_padding": True},
                           "custom_tokenizer": "deepseek_v4", "enable_attention_dp": False,
                           "kv_cache_config": {"avg_seq_len": 200000, "dtype": "fp8", "enable_block_reuse": False,
                                               "free_gpu_memory_fraction": 0.9, "tokens_per_block": 128},
                           "max_batch_size": 1, "max_num_tokens": 4, "moe_config": {"backend": "TRTLLM"},
                           "moe_expert_parallel_size": 8, "pipeline_parallel_size": 1, "print_iter_log": True,
                           "speculative_config": spec, "stream_interval": 20, "tensor_parallel_size": 8},
            },
        },
        "frontend": {"type": "dynamo", "enable_multiple_frontends": False, "orchestrator_placement": "first_decode"},
        "benchmark": {"client_placement": "last_decode", "type": "custom", "use_chat_template": True,
                      "command": "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh",
                      "env": {"MODEL": MODEL, "MODEL_PREFIX": "dsv4", "FRAMEWORK": "dynamo-trt", "PRECISION": "fp4",
                              "CONC": "4", "RESULT_DIR": "/logs/agentic", "PORT": "8000", "IS_MULTINODE": "true"}},
    }


def trt_worker_log(role: str, worker: int, start: datetime) -> str:
    """dynamo.trtllm worker output: TRT-LLM's version banner and `[TRT-LLM] [I]`
    logger lines (the per-iteration lines of `print_iter_log: true` on decode).
    The engine settings are in the resolved config.yaml, not in these lines."""
    t = start + timedelta(seconds=7 + worker)

    def tl(msg: str, dt: float = 0.0) -> str:
        nonlocal t
        t += timedelta(seconds=dt)
        return f"[{t:%m/%d/%Y-%H:%M:%S}] [TRT-LLM] [I] {msg}"
    lines = [
        "[TensorRT-LLM] TensorRT-LLM version: 1.3.0rc24",
        tl("Using LLM with PyTorch backend", 1),
    ]
    if role == "decode":
        for step in range(2):
            lines.append(tl(f"iter = {1200 * (step + 1)}, global_rank = 0, rank = 0, currank_total_memory = 187.5GB, "
                            f"states = {{'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 4}}", 60))
    return "\n".join(lines) + "\n"


def trt_bundle(forced: str, bundle: str, job_id: int) -> tuple[str, dict]:
    rf = multinode_rf("dsv4", "dynamo-trt", TRT_P, TRT_D, 4, "kvdram-native", "gb300-nv_0")
    recipe = trt_recipe(forced)
    start = datetime(2026, 8, 24, 6, 31, 5)
    workers = {"watchtower-cn0412_prefill_w0.out": trt_worker_log("prefill", 0, start)}
    for w in range(4):
        workers[f"watchtower-cn04{14 + 2 * w}_decode_w{w}.out"] = trt_worker_log("decode", w, start)
    logs = srt_logs(job_id, recipe, workers, start, 4, "v1.0.50")
    al = float(forced) + 1
    return bundle, multinode_files(rf, logs, 4, multinode_aggregate(TRT_IMAGE, "dynamo-trt", 4, TRT_P, TRT_D, al, "kvdram-native"))


# ---- SGLang disaggregated (Dynamo, srt-slurm v1.0.38) -----------------------

SGL_IMAGE = "lmsysorg/sglang:nightly-dev-cu13-20260719-99f5a6f4"
SGL_P, SGL_D = (1, 8, 8, True), (1, 4, 1, False)
SGL_SA = {"SGLANG_SIMULATE_ACC_LEN": str(GOLDEN_K3), "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
          "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"}
SGL_COMMON_ENV = {"SGLANG_DISAGGREGATION_WAITING_TIMEOUT": "900", "PYTHONUNBUFFERED": "1",
                  "SGLANG_DEFAULT_THINKING": "1", "SGLANG_DSV4_REASONING_EFFORT": "high",
                  "SGLANG_MOONCAKE_CUSTOM_MEM_POOL": "True", "DYN_SKIP_SGLANG_LOG_FORMATTING": "1",
                  "SGLANG_LOG_MS": "1"}


def sgl_spec(steps: int) -> dict:
    """EAGLE with topk 1: steps K, verify window K + 1."""
    return {"speculative-algorithm": "EAGLE", "speculative-num-steps": steps, "speculative-eagle-topk": 1,
            "speculative-num-draft-tokens": steps + 1}


def sgl_role_config(role: str, tp: int, dp: int, ep: int, dpa: bool, steps: int = 3) -> dict:
    return {"host": "0.0.0.0", "served-model-name": MODEL, "enable-metrics": True, "model-path": "/model/",
            "trust-remote-code": True, "watchdog-timeout": 86400, "tp-size": tp, "dp-size": dp, "ep-size": ep,
            "enable-dp-attention": dpa, "disaggregation-transfer-backend": "mooncake", "disaggregation-mode": role,
            "mem-fraction-static": 0.9, "max-running-requests": 128, "cuda-graph-max-bs": 128,
            **({"moe-a2a-backend": "megamoe", "chunked-prefill-size": 32768} if role == "prefill"
               else {"moe-runner-backend": "flashinfer_mxfp4"}),
            **sgl_spec(steps)}


def sgl_recipe(sa_role: str, decode_steps: int = 3) -> dict:
    """The 2p1d recipe; `sa_role` names the role environment that carries SA;
    `decode_steps` is the K the decode role drafts (the prefill role keeps 3)."""
    env = {role: {"SGLANG_DISAGGREGATION_WAITING_TIMEOUT": "900",
                  **({"SGLANG_DISABLE_DRAFT_EXTEND_CUDA_GRAPH": "1"} if role == "decode" else {}),
                  **(SGL_SA if role == sa_role else {}),
                  **SGL_COMMON_ENV} for role in ("prefill", "decode")}
    return {
        "name": "disagg-gb300-2p1d-dep8-tp4-c80-mtp-kvoffload",
        "model": {"path": "deepseek-v4-pro", "container": "dynamo-sglang", "precision": "fp4"},
        "dynamo": {"install": True, "wheel": "1.3.0.dev20260718"},
        "resources": {"gpu_type": "gb300", "gpus_per_node": 4, "prefill_nodes": 2, "decode_nodes": 1,
                      "prefill_workers": 1, "decode_workers": 1, "gpus_per_prefill": 8, "gpus_per_decode": 4},
        "frontend": {"type": "dynamo", "nginx_session_affinity": True, "enable_multiple_frontends": True},
        "backend": {"type": "sglang", "prefill_environment": env["prefill"], "decode_environment": env["decode"],
                    "sglang_config": {"prefill": sgl_role_config("prefill", 8, 8, 8, True),
                                      "decode": sgl_role_config("decode", 4, 1, 1, False, decode_steps)}},
        "benchmark": {"type": "custom", "command": "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh",
                      "env": {"RESULT_DIR": "/logs/agentic", "PORT": "8000", "IS_MULTINODE": "true"}},
    }


def sgl_worker_log(role: str, cfg: dict, start: datetime) -> str:
    """A dynamo.sglang worker: SGLang's own `server_args={...}` line (dict shape of the nightly builds)."""
    overrides = {k.replace("-", "_"): v for k, v in cfg.items()}
    overrides.update({"model_path": "/model/", "tokenizer_path": "/model/", "served_model_name": MODEL,
                      "speculative_algorithm": "EAGLE", "speculative_draft_model_path": "/model/",
                      "quantization": "modelopt_fp4", "attention_backend": "dsv4", "random_seed": 811346420,
                      "port": 30000, "chat_template": None, "model_loader_extra_config": "{}",
                      "json_model_override_args": "{}"})
    fields = [(name, overrides.get(name, value)) for name, value in BASE_SERVER_ARGS]
    fields = [(k, v) for k, v in fields if not (isinstance(v, str) and v.startswith("<"))]
    t = start + timedelta(seconds=6)
    msg = "server_args={" + ", ".join(f"{k!r}: {py_repr(v, 'dict')}" for k, v in fields) + "}"
    lines = [f"[{t:%Y-%m-%d %H:%M:%S}.{412:03d}] {msg}"]
    t += timedelta(seconds=212)
    lines.append(f"[{t:%Y-%m-%d %H:%M:%S}.107 TP0] Load weight end. type=DeepseekV4ForCausalLM, dtype=torch.bfloat16")
    t += timedelta(seconds=60)
    if role == "decode":
        for step in range(2):
            t += timedelta(seconds=40)
            accept = GOLDEN_K3 - 0.01 + 0.02 * det(f"sgl{step}{role}")
            lines.append(f"[{t:%Y-%m-%d %H:%M:%S}.221 TP0] Decode batch, #running-req: 80, #token: 1641216, "
                         f"token usage: 0.41, pre-allocated usage: 0.02, #retracted-req: 0, accept len: {accept:.2f}, "
                         f"accept rate: {accept / 4:.2f}, cuda graph: True, gen throughput (token/s): 2611.40, #queue-req: 0, ")
    else:
        lines.append(f"[{t:%Y-%m-%d %H:%M:%S}.604 DP0 TP0 EP0] Prefill batch, #new-seq: 3, #new-token: 24576, "
                     "#cached-token: 188416, token usage: 0.12, #running-req: 0, #queue-req: 0, ")
    return "\n".join(lines) + "\n"


def sgl_bundle(sa_role: str, bundle: str, job_id: int, decode_steps: int = 3) -> tuple[str, dict]:
    rf = multinode_rf("dsv4", "dynamo-sglang", SGL_P, SGL_D, 80, "kvdram-hicache", "gb300-nv_0")
    recipe = sgl_recipe(sa_role, decode_steps)
    start = datetime(2026, 8, 25, 13, 5, 40)
    cfg = recipe["backend"]["sglang_config"]
    workers = {"watchtower-cn0201_prefill_w0.out": sgl_worker_log("prefill", cfg["prefill"], start),
               "watchtower-cn0205_decode_w0.out": sgl_worker_log("decode", cfg["decode"], start)}
    logs = srt_logs(job_id, recipe, workers, start, 80, "v1.0.38")
    return bundle, multinode_files(rf, logs, 80, multinode_aggregate(SGL_IMAGE, "dynamo-sglang", 80, SGL_P, SGL_D, GOLDEN_K3, "kvdram-hicache"))


# =============================================================================
# Entry point (called by generate.main)
# =============================================================================

def write_all(bundles_dir: Path) -> None:
    for name, files in [
        (VLLM_PASS, vllm_bundle(False)),
        (VLLM_FAIL, vllm_bundle(True)),
        (ATOM_PASS, atom_bundle(None)),
        (ATOM_FAIL, atom_bundle(ATOM_WRONG_RATE)),
        trt_bundle("1.49", TRTLLM_PASS, 1873402),
        trt_bundle(str(GOLDEN_K3), TRTLLM_FAIL, 1873455),
        sgl_bundle("decode", SGLANG_DISAGG_PASS, 1874110),
        sgl_bundle("prefill", SGLANG_DISAGG_FAIL, 1874163),
        sgl_bundle("decode", SGLANG_DISAGG_K_FAIL, 1874190, decode_steps=2),
    ]:
        write_bundle(bundles_dir / name, files)
