#!/usr/bin/env python3
"""Two large serving-image-shaped OCI layouts for the `image diff` benchmark (stdlib only).

Image A ("upstream"): a dist-packages tree of FILES small Python modules (layer 0) and LAYERS
layers of native-library-like blobs (each BLOB_MB MiB, half random, half repetitive, so gzip
shrinks them about 2x, as it does real .so files). Image B ("pinned"): the same files with one
.py changed, rebuilt: other mtimes, so every layer blob and diff-id differs. Layers are gzip -1,
streamed to disk with both digests computed while writing; every layer is built in its own
process.

Usage: big_diff.py --out DIR [--files 30000] [--layers 4] [--blobs-per-layer 12] [--blob-mb 100]
Writes DIR/a and DIR/b (OCI layouts, ref "v1") and prints their sizes.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import random
import tarfile
import tempfile
from multiprocessing import Pool

SITE = "usr/local/lib/python3.12/dist-packages"
CHANGED = f"{SITE}/benchpkg_007/mod_7007.py"


class Hashing:
    def __init__(self, f):
        self.f, self.h, self.n = f, hashlib.sha256(), 0

    def write(self, b):
        self.h.update(b)
        self.n += len(b)
        return self.f.write(b)

    def flush(self):
        self.f.flush()


class Blob(io.RawIOBase):
    """SIZE bytes of deterministic content for SEED: 64 KiB random, 64 KiB of a repeated line."""

    def __init__(self, size, seed):
        self.left, self.rng, self.buf = size, random.Random(seed), b""

    def readable(self):
        return True

    def read(self, n=-1):
        if n < 0:
            n = self.left
        while len(self.buf) < n and self.left > len(self.buf):
            self.buf += self.rng.randbytes(65536) + (b"kernel_%08d " % self.rng.randrange(10**8)) * 4096
        out, self.buf = self.buf[:min(n, self.left)], self.buf[min(n, self.left):]
        self.left -= len(out)
        return out


def module(i, changed):
    rng = random.Random(i)
    words = ["tensor", "attention", "kv_cache", "scheduler", "decode", "prefill", "batch", "token", "rank"]
    body = "".join(f"def {rng.choice(words)}_{j}(x):\n    return x * {rng.randrange(1000)} + {rng.choice(words)!r}\n\n" for j in range(40))
    if changed:
        body += "def patched(x):\n    return x  # the one changed file\n"
    return f'"""module {i}"""\n\n{body}'.encode()


def write_layer(out, level, fill):
    """Stream a gzip (LEVEL) tar layer whose entries FILL(tar) adds into the layout OUT, both
    digests computed while writing; returns (descriptor, diff-id, uncompressed size)."""
    fd, tmp = tempfile.mkstemp(prefix="tmp-", dir=os.path.join(out, "blobs", "sha256"))
    with os.fdopen(fd, "wb") as f:
        outer = Hashing(f)
        gz = gzip.GzipFile(fileobj=outer, mode="wb", compresslevel=level, mtime=0)
        inner = Hashing(gz)
        with tarfile.open(fileobj=inner, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            fill(tar)
        gz.close()
    digest, diff_id = "sha256:" + outer.h.hexdigest(), "sha256:" + inner.h.hexdigest()
    os.chmod(tmp, 0o644)  # mkstemp makes it 0600
    os.rename(tmp, os.path.join(out, "blobs", "sha256", digest[7:]))
    return {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest, "size": outer.n}, diff_id, inner.n


def layout(out):
    """An empty OCI layout at OUT."""
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        f.write('{"imageLayoutVersion":"1.0.0"}')


def build_layer(job):
    out, name, kind, index, mtime, files, blobs, blob_mb, changed = job

    def fill(tar):
        def add(path, data=None, size=0, mode=0o644, stream=None):
            ti = tarfile.TarInfo(path)
            ti.mtime, ti.mode = mtime, mode
            if data is None and stream is None:
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
            else:
                ti.size = len(data) if data is not None else size
            tar.addfile(ti, io.BytesIO(data) if data is not None else stream)
        if kind == "py":
            for d in ["usr", "usr/local", "usr/local/lib", "usr/local/lib/python3.12", SITE]:
                add(d)
            for i in range(files):
                pkg = f"{SITE}/benchpkg_{i // 1000:03d}"
                if i % 1000 == 0:
                    add(pkg)
                path = f"{pkg}/mod_{i}.py"
                add(path, module(i, changed and path == CHANGED))
        else:
            lib = f"opt/engine/lib{index}"
            for d in ["opt", "opt/engine", lib]:
                add(d)
            for j in range(blobs):
                size = blob_mb << 20
                add(f"{lib}/libkernels_{j}.so", size=size, mode=0o755, stream=Blob(size, index * 1000 + j))
    return write_layer(out, 1, fill)


def write_blob(out, data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(out, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + d, "size": len(data)}


def write_image(out, layers, created_by, cmd, env=("PATH=/usr/local/bin:/usr/bin:/bin",)):
    """Config, manifest and index.json (ref "v1") of the layout OUT for LAYERS: (descriptor, diff-id, size) each."""
    config = {"architecture": "amd64", "os": "linux",
              "config": {"Env": list(env), "Cmd": cmd},
              "rootfs": {"type": "layers", "diff_ids": [r[1] for r in layers]},
              "history": [{"created_by": c} for c in created_by]}
    cfg = dict(write_blob(out, json.dumps(config).encode()), mediaType="application/vnd.oci.image.config.v1+json")
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg, "layers": [r[0] for r in layers]}
    desc = dict(write_blob(out, json.dumps(manifest).encode()), mediaType="application/vnd.oci.image.manifest.v1+json",
                annotations={"org.opencontainers.image.ref.name": "v1"})
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [desc]}, f)
    print(f"{os.path.basename(out)}: {len(layers)} layers, {sum(r[0]['size'] for r in layers)} B compressed, "
          f"{sum(r[2] for r in layers)} B uncompressed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--files", type=int, default=30000)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--blobs-per-layer", type=int, default=12)
    ap.add_argument("--blob-mb", type=int, default=100)
    a = ap.parse_args()
    jobs, outs = [], {}
    for name, mtime, changed in [("a", 1700000000, False), ("b", 1700086400, True)]:
        out = os.path.join(a.out, name)
        layout(out)
        outs[name] = out
        jobs.append((out, name, "py", 0, mtime, a.files, 0, 0, changed))
        jobs += [(out, name, "lib", i, mtime, 0, a.blobs_per_layer, a.blob_mb, changed) for i in range(1, a.layers + 1)]
    with Pool(2) as pool:
        results = pool.map(build_layer, jobs, chunksize=1)
    for name, out in outs.items():
        mine = [r for j, r in zip(jobs, results) if j[1] == name]
        write_image(out, mine, [f"RUN build layer {i}" for i in range(len(mine))], ["python3", "-m", "engine"])

if __name__ == "__main__":
    main()
