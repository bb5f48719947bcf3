#!/usr/bin/env bash
# Shared helpers sourced by the single-node launch scripts.
export PYTHONUNBUFFERED=1

check_env_vars() {
    for name in "$@"; do
        if [ -z "${!name:-}" ]; then
            echo "missing $name" >&2
            return 1
        fi
    done
}

wait_for_server_ready() {
    until curl -sf "http://localhost:8888/health" > /dev/null; do sleep 5; done
}
