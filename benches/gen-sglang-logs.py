#!/usr/bin/env python3
"""Write a synthetic set of SGLang-shaped server logs for benchmarking
`auditor scan` against ripgrep (see BENCHMARKS.md).

Usage: benches/gen-sglang-logs.py OUT_DIR [TOTAL_MIB=1024] [FILES=32]

Deterministic (fixed seed). Each file looks like a real `server.log`: an env
dump block, the `server_args=ServerArgs(...)` line (a few KB, with the
default `json_model_override_args='{}'` that must not match), then decode /
prefill batch lines and access-log lines, a traceback now and then (keyword
hits such as `dist-packages` that a rule must reject), and, rarely, a real
patch trace (`+ git apply ...`) or an `--hf-overrides` launch line.
"""
import os
import random
import sys

out_dir = sys.argv[1]
total = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
files = int(sys.argv[3]) if len(sys.argv) > 3 else 32
per_file = total * (1 << 20) // files
rng = random.Random(20260701)

SERVER_ARGS = (
    "server_args=ServerArgs(model_path='/data/models/DeepSeek-V4.1-Flash', tokenizer_path='/data/models/DeepSeek-V4.1-Flash', "
    "tokenizer_mode='auto', skip_tokenizer_init=False, load_format='auto', trust_remote_code=True, dtype='auto', "
    "kv_cache_dtype='fp8_e4m3', quantization='modelopt_fp4', context_length=None, device='cuda', served_model_name='deepseek-ai/DeepSeek-V4.1-Flash', "
    "chat_template=None, is_embedding=False, revision=None, host='0.0.0.0', port=8888, mem_fraction_static=0.85, max_running_requests=256, "
    "max_total_tokens=None, chunked_prefill_size=8192, max_prefill_tokens=16384, schedule_policy='fcfs', schedule_conservativeness=1.0, "
    "tp_size=8, stream_interval=1, random_seed=42, json_model_override_args='{}', preferred_sampling_params=None, "
    "speculative_algorithm='EAGLE', speculative_draft_model_path=None, speculative_num_steps=3, speculative_eagle_topk=1, "
    "speculative_num_draft_tokens=4, ep_size=1, enable_dp_attention=False, cuda_graph_max_bs=256, "
    "cuda_graph_config=CudaGraphConfig(decode=PhaseConfig(backend='full', max_bs=256, bs=[1, 2, 4, 8, 16, 32, 64, 128, 256]), "
    "prefill=PhaseConfig(backend='disabled')), enable_torch_compile=False, disable_radix_cache=False)"
)
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2913, in run_scheduler_process',
    "    scheduler.event_loop_overlap()",
    '  File "/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py", line 116, in decorate_context',
    "    return func(*args, **kwargs)",
    "RuntimeError: CUDA error: an illegal memory access was encountered (retrying)",
]


def stamp(t):
    return "2026-07-01 %02d:%02d:%02d" % (15 + t // 3600 % 9, t // 60 % 60, t % 60)


def body_line(t):
    r = rng.random()
    if r < 0.45:
        return ("[%s TP0] Decode batch. #running-req: %d, #token: %d, token usage: %.2f, cuda graph: True, "
                "gen throughput (token/s): %.2f, #queue-req: %d, accept len: %.2f, " % (
                    stamp(t), rng.randint(1, 256), rng.randint(1000, 400000), rng.random(), rng.uniform(100, 9000),
                    rng.randint(0, 40), rng.uniform(1.5, 3.5)))
    if r < 0.65:
        return ("[%s TP0] Prefill batch. #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, "
                "#running-req: %d, #queue-req: %d, " % (
                    stamp(t), rng.randint(1, 8), rng.randint(16, 8192), rng.randint(0, 60000), rng.random(),
                    rng.randint(0, 256), rng.randint(0, 40)))
    return '[%s] INFO:     127.0.0.1:%d - "POST /v1/chat/completions HTTP/1.1" 200 OK' % (stamp(t), rng.randint(30000, 60000))


os.makedirs(out_dir, exist_ok=True)
for i in range(files):
    path = os.path.join(out_dir, "server_logs_dsv4_tp8_conc%d_%02d" % (2 ** (i % 8), i), "server.log")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("=== SGLANG_* env vars at launch ===\nSGLANG_DEFAULT_THINKING=1\nSGLANG_SIMULATE_ACC_LEN=2.49\n")
        f.write("===================================\n")
        f.write("[%s] %s\n" % (stamp(0), SERVER_ARGS))
        written, t = 0, 0
        while written < per_file:
            t += 1
            r = rng.random()
            if r < 0.0002:
                lines = TRACEBACK
            elif r < 0.00021:
                lines = ["+ git apply /workspace/patches/0001-indexer.patch"]
            elif r < 0.00022:
                lines = ["+ vllm serve /data/models/x --hf-overrides '{\"text_config\": {\"index_topk_freq\": 4}}' --tp 8"]
            else:
                lines = [body_line(t)]
            text = "\n".join(lines) + "\n"
            f.write(text)
            written += len(text)
print(out_dir)
