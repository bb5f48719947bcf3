#!/usr/bin/env bash
# DeepSeek-V4-Pro FP4 on B200, SGLang, MTP K=3 (AgentX). Throughput runs
# simulate acceptance at the golden AL; eval-only runs use real verification.
set -euo pipefail
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC RESULT_DIR

export SGLANG_DEFAULT_THINKING=1

if [[ "${EVAL_ONLY:-false}" != "true" ]]; then
    # dsv4_mtp thinking_on, K=3
    export SGLANG_SIMULATE_ACC_LEN=2.49
    export SGLANG_SIMULATE_ACC_METHOD=match-expected
    export SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token
fi

SERVER_LOG="$RESULT_DIR/server.log"
{ set +x; } 2>/dev/null
python3 -m sglang.launch_server \
    --model-path /data/models/DeepSeek-V4-Pro \
    --served-model-name deepseek-ai/DeepSeek-V4-Pro \
    --tp 8 --ep-size 8 --trust-remote-code \
    --speculative-algorithm NEXTN --speculative-num-steps 3 \
    --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \
    --chat-template /workspace/benchmarks/single_node/chat_templates/deepseek_v4_thinking.jinja \
    --host 0.0.0.0 --port 8888 > "$SERVER_LOG" 2>&1 &

wait_for_server_ready --port 8888 --server-log "$SERVER_LOG"

if [ "$EVAL_ONLY" = true ]; then
    run_eval --framework lm-eval --port 8888
else
    run_agentic_replay --port 8888 --conc "$CONC"
fi
