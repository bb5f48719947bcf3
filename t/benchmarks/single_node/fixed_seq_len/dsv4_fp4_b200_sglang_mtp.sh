#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
python3 -c "import sglang.srt.server_args as m; open(m.__file__,\"a\").write(\"x\")"
python3 -m sglang.launch_server --model-path /models/dsv4 --tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3
