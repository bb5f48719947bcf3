#!/usr/bin/env python3
"""Add the v1 image again with its layers recompressed, to an OCI layout (stdlib + the zstd CLI).

  v1-plain  the layers as uncompressed tar   (application/vnd.oci.image.layer.v1.tar)
  v1-zstd   the layers as zstd               (application/vnd.oci.image.layer.v1.tar+zstd)

Same config (so the same diff_ids), new layer blobs and manifests. skopeo cannot force
recompression when pushing (it reuses the blobs the registry has), so the variants are
made here and pushed with --preserve-digests.

Usage: layer_variants.py --layout DIR
"""
import argparse
import gzip
import hashlib
import json
import os
import subprocess

MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layout", required=True)
    a = ap.parse_args()
    blobs = os.path.join(a.layout, "blobs", "sha256")

    def read(digest):
        with open(os.path.join(blobs, digest.split(":", 1)[1]), "rb") as f:
            return f.read()

    def write(data, mt):
        d = hashlib.sha256(data).hexdigest()
        with open(os.path.join(blobs, d), "wb") as f:
            f.write(data)
        return {"mediaType": mt, "digest": "sha256:" + d, "size": len(data)}

    index_path = os.path.join(a.layout, "index.json")
    with open(index_path) as f:
        index = json.load(f)
    index["manifests"] = [m for m in index["manifests"]
                          if m.get("annotations", {}).get("org.opencontainers.image.ref.name") not in ("v1-plain", "v1-zstd")]
    v1 = next(m for m in index["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == "v1")
    manifest = json.loads(read(v1["digest"]))
    tars = [gzip.decompress(read(layer["digest"])) for layer in manifest["layers"]]
    variants = {
        "v1-plain": ("application/vnd.oci.image.layer.v1.tar", lambda t: t),
        "v1-zstd": ("application/vnd.oci.image.layer.v1.tar+zstd",
                    lambda t: subprocess.run(["zstd", "-q", "-19", "-c"], input=t, stdout=subprocess.PIPE, check=True).stdout),
    }
    for name, (mt, encode) in variants.items():
        m = dict(manifest, layers=[write(encode(t), mt) for t in tars])
        desc = write(json.dumps(m, sort_keys=True, separators=(",", ":")).encode(), MT_MANIFEST)
        desc["annotations"] = {"org.opencontainers.image.ref.name": name}
        index["manifests"].append(desc)
    with open(index_path, "w") as f:
        json.dump(index, f, sort_keys=True, separators=(",", ":"))


if __name__ == "__main__":
    main()
