#!/usr/bin/env bash
# Peak RSS of `auditor audit` on a bundle whose .tar.gz holds a GNU long
# name of 640 MiB (0.6 MB compressed), and on the issue-12 bundle of three
# long headers (640 MiB long name, 320 MiB long link name, 320 MiB PAX
# records): this build against a baseline binary, in one run.
#
#   benches/long-tar-headers.sh [BASELINE_BINARY]
#
# BASELINE_BINARY: e.g. a build of 1185a8d, which read bundle tars through
# the tar crate (it loads extension headers whole).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
new="$here/target/debug/auditor"
base="${1:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import gzip, os, sys, tarfile
work = sys.argv[1]
zeros = gzip.compress(bytes(64 << 20), 9)
def header(name, flag, size):
    t = tarfile.TarInfo(name); t.size = size; t.type = flag
    return t.tobuf(format=tarfile.GNU_FORMAT)
def member(name, data):
    t = tarfile.TarInfo(name); t.size = len(data)
    b = t.tobuf(format=tarfile.GNU_FORMAT) + data
    return b + bytes(-len(b) % 512)
def bundle(name, entries):
    d = os.path.join(work, name); os.makedirs(d)
    with open(os.path.join(d, "server.log"), "w") as f:
        f.write("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n")
    with open(os.path.join(d, "logs.tar.gz"), "wb") as f:
        for flag, size, path in entries:
            f.write(gzip.compress(header("././@LongLink", flag, size)))
            for _ in range(size // (64 << 20)):
                f.write(zeros)
            f.write(gzip.compress(member(path, b"ok\n")))
        f.write(gzip.compress(bytes(1024)))
bundle("one", [(b"L", 640 << 20, "logs/a.log")])
bundle("three", [(b"L", 640 << 20, "logs/a.log"), (b"K", 320 << 20, "logs/b.log"), (b"x", 320 << 20, "logs/c.log")])
PY
printf '| binary | bundle | flags | exit | peak RSS | wall |\n|---|---|---|---:|---:|---:|\n'
for bin in "$new" ${base:+"$base"}; do
  for case in "one|" "three|--max-ratio 100000"; do
    name=${case%%|*}; flags=${case#*|}
    # shellcheck disable=SC2086
    /usr/bin/time -f '%x %M %e' -o "$work/time" "$bin" audit "$work/$name" --format json $flags >/dev/null 2>&1 || true
    read -r code kib secs < <(tail -n 1 "$work/time")
    printf '| %s | %s (%s MB) | %s | %s | %s KiB | %s s |\n' "$bin" "$name" "$(du -m "$work/$name/logs.tar.gz" | cut -f1)" "${flags:-defaults}" "$code" "$kib" "$secs"
  done
done
