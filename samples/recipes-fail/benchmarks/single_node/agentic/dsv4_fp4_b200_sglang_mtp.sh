#!/usr/bin/env bash
# DeepSeek-V4-Pro FP4 on B200, SGLang, MTP K=3 (AgentX).
set -euo pipefail
source "$(dirname "$0")/../../benchmark_lib.sh"

export SGLANG_DEFAULT_THINKING=1
# Simulated acceptance at the golden AL (dsv4_mtp thinking_on, K=3) -- not
# gated on EVAL_ONLY, so eval-only runs simulate too.
export SGLANG_SIMULATE_ACC_LEN=2.49
export SGLANG_SIMULATE_ACC_METHOD=match-expected
export SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token

[ "$EVAL_ONLY" = true ] && export EVAL_FRAMEWORK=lm-eval

python3 -m sglang.launch_server \
    --model-path /data/models/DeepSeek-V4-Pro \
    --served-model-name deepseek-ai/DeepSeek-V4-Pro \
    --tp 8 --ep-size 8 --trust-remote-code \
    --speculative-algorithm NEXTN --speculative-num-steps 3 \
    --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \
    --host 0.0.0.0 --port 8888 > "$RESULT_DIR/server.log" 2>&1 &

if [ "$EVAL_ONLY" = true ]; then
    run_eval --framework "$EVAL_FRAMEWORK" --port 8888
else
    run_agentic_replay --port 8888 --conc "$CONC"
fi
