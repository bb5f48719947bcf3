#!/usr/bin/env python3
"""The OCI layouts of the `image diff` benchmark of BENCHMARKS.md, from real PyPI wheels (stdlib only).

A staging root holds real wheels (torch, triton, numpy, scipy, pandas, transformers, ...)
installed by pip into /usr/local (compiled .pyc, RECORD, INSTALLER as pip writes them). From it:

  up   the upstream image: 3 gzip (-6) layers (everything but torch and triton; triton; torch)
  a    the pinned image: up's layers (the same blobs) and one extra layer that changes one .py
       (torch/nn/functional.py, a line appended) and adds one .patch file
  b    up fully rebuilt with identical contents: 2 layers split differently, every mtime a day
       later, gzip -1, so no blob and no diff-id is shared with up

Layers are built in parallel processes, streamed to disk with both digests computed while writing.

Usage: wheel_images.py --root STAGING --out DIR
Writes DIR/up, DIR/a, DIR/b (OCI layouts, ref "v1") and prints their sizes.
"""
import argparse
import glob
import io
import os
import tarfile
from multiprocessing import Pool

from big_diff import layout, write_image, write_layer

DAY = 86400


def tree(root, top):
    """Every path under ROOT/TOP (TOP itself first), sorted, relative to ROOT."""
    out = [top]
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        rel = os.path.relpath(d, root)
        out += [os.path.join(rel, n) for n in sorted(dirs + files)]
    return out


def groups(root, site):
    """Path lists: (everything but torch and triton, triton, torch), parents before children."""
    parents = ["usr", "usr/local", "usr/local/lib", os.path.dirname(site), site]
    tops = sorted(os.listdir(os.path.join(root, site)))
    torch = [t for t in tops if t == "torch" or t.startswith("torch-")]
    triton = [t for t in tops if t == "triton" or t.startswith("triton-")]
    rest = [t for t in tops if t not in torch + triton]
    base = parents + [p for t in sorted(os.listdir(os.path.join(root, "usr/local"))) if t != "lib" for p in tree(root, f"usr/local/{t}")]
    base += [p for t in rest for p in tree(root, f"{site}/{t}")]
    return base, [p for t in triton for p in tree(root, f"{site}/{t}")], [p for t in torch for p in tree(root, f"{site}/{t}")]


def build_layer(job):
    """Write one gzip tar layer of PATHS (from ROOT, mtimes shifted by SHIFT) into the layout OUT."""
    out, root, paths, shift, level, extra = job

    def fill(tar):
        for rel in paths:
            ti = tar.gettarinfo(os.path.join(root, rel), arcname=rel)
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            ti.mtime = int(ti.mtime) + shift
            if rel in extra:
                data = extra[rel]
                ti.size = len(data)
                tar.addfile(ti, io.BytesIO(data))
            elif ti.isreg():
                with open(os.path.join(root, rel), "rb") as src:
                    tar.addfile(ti, src)
            else:
                tar.addfile(ti)
        for rel, data in extra.items():
            if rel not in paths:
                ti = tarfile.TarInfo(rel)
                ti.size, ti.mode, ti.mtime = len(data), 0o644, 1700000000
                tar.addfile(ti, io.BytesIO(data))
    return write_layer(out, level, fill)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    root = a.root
    site = os.path.relpath(glob.glob(os.path.join(root, "usr/local/lib/python3.*/site-packages"))[0], root)
    changed_py, patch_file = f"{site}/torch/nn/functional.py", f"{site}/torch/fix-attention-mask.patch"
    base, triton, torch = groups(root, site)
    outs = {name: os.path.join(a.out, name) for name in ("up", "a", "b")}
    for out in outs.values():
        layout(out)
    with open(os.path.join(root, changed_py), "rb") as f:
        changed = f.read() + b"\n_SDPA_MASK_FIX = True  # the one changed file\n"
    patch = (b"--- a/torch/nn/functional.py\n+++ b/torch/nn/functional.py\n@@ -1,1 +1,2 @@\n"
             b"+_SDPA_MASK_FIX = True  # the one changed file\n")
    parents = [site, f"{site}/torch", f"{site}/torch/nn"]
    jobs = [
        (outs["up"], root, base, 0, 6, {}),
        (outs["up"], root, triton, 0, 6, {}),
        (outs["up"], root, torch, 0, 6, {}),
        (outs["a"], root, parents + [changed_py], 0, 6, {changed_py: changed, patch_file: patch}),
        (outs["b"], root, torch + triton, DAY, 1, {}),
        (outs["b"], root, base, DAY, 1, {}),
    ]
    # the largest layers first, so the two processes finish together
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][2]))
    with Pool(2) as pool:
        done = dict(zip(order, pool.map(build_layer, [jobs[i] for i in order], chunksize=1)))
    up = [done[0], done[1], done[2]]
    cmd = ["python3", "-m", "sglang.launch_server"]
    write_image(outs["up"], up, ["COPY base /", "RUN pip install triton", "RUN pip install torch"], cmd)
    for r in up:  # a shares up's blobs
        name = r[0]["digest"][7:]
        os.link(os.path.join(outs["up"], "blobs", "sha256", name), os.path.join(outs["a"], "blobs", "sha256", name))
    write_image(outs["a"], up + [done[3]], ["COPY base /", "RUN pip install triton", "RUN pip install torch",
                                            f"COPY fix-attention-mask.patch functional.py /{site}/torch/"], cmd)
    write_image(outs["b"], [done[4], done[5]], ["RUN pip install torch triton", "COPY base /"], cmd)


if __name__ == "__main__":
    main()
