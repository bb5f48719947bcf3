#!/usr/bin/env python3
"""Assemble a small, real, reproducible OCI image layout without any container daemon.

Stdlib only. Layers (all gzip, deterministic: fixed mtimes, uid/gid 0, sorted entries,
gzip header mtime 0, so digests are identical on every machine for the same inputs):

  1. base    /bin/busybox (static, from Debian busybox-static) + applet symlinks,
             /usr/bin/env (hard link to /bin/busybox), /etc/{passwd,group,os-release,issue,motd},
             /tmp (1777), /root (0700), empty /usr/lib/python3/dist-packages
  2. python  the `six` 1.16.0 wheel installed (pip --target) into /usr/lib/python3/dist-packages
  3. app     /app/config.json, a modified /etc/issue, and a whiteout /etc/.wh.motd deleting /etc/motd

The config also has one empty_layer history entry (an ENV step), like docker build makes.

index.json refs:
  v1        application/vnd.oci.image.manifest.v1+json  (linux/amd64)
  v1-multi  application/vnd.oci.image.index.v1+json     (linux/amd64 + linux/arm64; the arm64
            manifest reuses the same layers with an arm64 config -- for platform-resolver tests
            only, it is not runnable on arm64)

Usage: build_oci_image.py --out DIR --site DIR --busybox /bin/busybox [--info FILE]
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile

EPOCH = 1704067200  # 2024-01-01T00:00:00Z
CREATED = "2024-01-01T00:00:00Z"
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER_GZ = "application/vnd.oci.image.layer.v1.tar+gzip"
BUSYBOX_APPLETS = ["sh", "ls", "cat", "echo", "true", "false", "sleep", "rm", "mkdir", "touch", "id", "uname"]


class Layer:
    """Collects tar entries, then serialises them deterministically."""

    def __init__(self, name):
        self.name = name
        self.entries = {}  # path -> (TarInfo, bytes|None)

    def _info(self, path, typ, mode):
        ti = tarfile.TarInfo(path)
        ti.type = typ
        ti.mode = mode
        ti.mtime = EPOCH
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    def _parents(self, path):
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d not in self.entries:
                self.dir(d)

    def dir(self, path, mode=0o755):
        path = path.strip("/")
        self._parents(path)
        self.entries[path] = (self._info(path, tarfile.DIRTYPE, mode), None)

    def file(self, path, data, mode=0o644):
        path = path.strip("/")
        if isinstance(data, str):
            data = data.encode()
        self._parents(path)
        ti = self._info(path, tarfile.REGTYPE, mode)
        ti.size = len(data)
        self.entries[path] = (ti, data)

    def symlink(self, path, target):
        path = path.strip("/")
        self._parents(path)
        ti = self._info(path, tarfile.SYMTYPE, 0o777)
        ti.linkname = target
        self.entries[path] = (ti, None)

    def hardlink(self, path, target):
        path = path.strip("/")
        self._parents(path)
        ti = self._info(path, tarfile.LNKTYPE, 0o755)
        ti.linkname = target.strip("/")
        self.entries[path] = (ti, None)

    def tree(self, src_root, dest_prefix):
        for root, dirs, files in os.walk(src_root):
            dirs.sort()
            rel = os.path.relpath(root, src_root)
            base = dest_prefix.strip("/") if rel == "." else f"{dest_prefix.strip('/')}/{rel}"
            self.dir(base)
            for f in sorted(files):
                p = os.path.join(root, f)
                if os.path.islink(p):
                    self.symlink(f"{base}/{f}", os.readlink(p))
                    continue
                with open(p, "rb") as fh:
                    data = fh.read()
                mode = 0o755 if os.stat(p).st_mode & 0o111 else 0o644
                self.file(f"{base}/{f}", data, mode)

    def serialise(self):
        raw = io.BytesIO()
        # hard links must come after their targets; sorting by path does that here
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(self.entries):
                ti, data = self.entries[path]
                tar.addfile(ti, io.BytesIO(data) if data is not None else None)
        tar_bytes = raw.getvalue()
        gz = io.BytesIO()
        with gzip.GzipFile(fileobj=gz, mode="wb", compresslevel=9, mtime=0) as g:
            g.write(tar_bytes)
        return tar_bytes, gz.getvalue()


def sha256(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def canon(obj):
    return json.dumps(obj, indent=2, sort_keys=False).encode() + b"\n"


class Layout:
    def __init__(self, out):
        self.out = out
        if os.path.exists(out):
            shutil.rmtree(out)
        os.makedirs(os.path.join(out, "blobs", "sha256"))
        with open(os.path.join(out, "oci-layout"), "w") as f:
            f.write('{"imageLayoutVersion":"1.0.0"}')

    def blob(self, data, media_type, **extra):
        d = sha256(data)
        with open(os.path.join(self.out, "blobs", "sha256", d.split(":", 1)[1]), "wb") as f:
            f.write(data)
        desc = {"mediaType": media_type, "digest": d, "size": len(data)}
        desc.update(extra)
        return desc


def build_layers(site, busybox):
    base = Layer("base")
    for d in ["bin", "etc", "usr/bin", "usr/lib/python3/dist-packages", "var/lib", "home"]:
        base.dir(d)
    base.dir("tmp", 0o1777)
    base.dir("root", 0o700)
    with open(busybox, "rb") as f:
        base.file("bin/busybox", f.read(), 0o755)
    for applet in BUSYBOX_APPLETS:
        base.symlink(f"bin/{applet}", "busybox")
    base.hardlink("usr/bin/env", "bin/busybox")
    base.file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
    base.file("etc/group", "root:x:0:\nnogroup:x:65534:\n")
    base.file("etc/os-release",
              'PRETTY_NAME="auditor test image"\nNAME="auditor-test"\nID=auditor-test\nVERSION_ID="1"\n')
    base.file("etc/issue", "auditor test base\n")
    base.file("etc/motd", "this file is deleted by a whiteout in the app layer\n")

    py = Layer("python")
    py.tree(site, "usr/lib/python3/dist-packages")

    app = Layer("app")
    app.file("app/config.json", json.dumps({"name": "auditor-test", "version": 1}) + "\n")
    app.file("etc/issue", "auditor test app\n")
    app.file("etc/.wh.motd", b"")
    return [
        (base, "/bin/sh -c #(nop) ADD base rootfs (busybox-static, /etc files) in /"),
        (py, "/bin/sh -c pip install --target /usr/lib/python3/dist-packages six==1.16.0"),
        (app, "/bin/sh -c #(nop) ADD app/config.json, etc/issue; rm /etc/motd"),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--site", required=True, help="dir produced by pip install --target")
    ap.add_argument("--busybox", default="/bin/busybox")
    ap.add_argument("--info", help="write a JSON summary (digests, sizes) here")
    a = ap.parse_args()

    lay = Layout(a.out)
    layer_descs, diff_ids, history, layer_info = [], [], [], []
    for layer, created_by in build_layers(a.site, a.busybox):
        tar_bytes, gz_bytes = layer.serialise()
        desc = lay.blob(gz_bytes, MT_LAYER_GZ)
        layer_descs.append(desc)
        diff_ids.append(sha256(tar_bytes))
        history.append({"created": CREATED, "created_by": created_by, "comment": f"layer {layer.name}"})
        layer_info.append({"name": layer.name, "digest": desc["digest"], "size": desc["size"],
                           "diff_id": sha256(tar_bytes), "uncompressed_size": len(tar_bytes),
                           "entries": len(layer.entries)})
    # an empty-layer step between python and app, as `docker build` records ENV lines
    history.insert(2, {"created": CREATED, "created_by": "/bin/sh -c #(nop) ENV PYTHONDONTWRITEBYTECODE=1",
                       "empty_layer": True})

    def config_for(arch):
        return {
            "created": CREATED,
            "author": "auditor tests/services/build_oci_image.py",
            "architecture": arch,
            "os": "linux",
            "config": {
                "Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"],
                "Cmd": ["/bin/sh"],
                "WorkingDir": "/",
                "Labels": {"org.opencontainers.image.title": "auditor-test",
                           "org.opencontainers.image.version": "1",
                           "io.auditor.test": "true"},
            },
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
            "history": history,
        }

    def manifest_for(arch):
        cfg = lay.blob(canon(config_for(arch)), MT_CONFIG)
        m = {"schemaVersion": 2, "mediaType": MT_MANIFEST, "config": cfg, "layers": layer_descs,
             "annotations": {"org.opencontainers.image.created": CREATED,
                             "org.opencontainers.image.title": "auditor-test"}}
        return lay.blob(canon(m), MT_MANIFEST), cfg

    amd64, amd64_cfg = manifest_for("amd64")
    arm64, arm64_cfg = manifest_for("arm64")
    idx = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": [
        dict(amd64, platform={"architecture": "amd64", "os": "linux"}),
        dict(arm64, platform={"architecture": "arm64", "os": "linux", "variant": "v8"}),
    ]}
    index_desc = lay.blob(canon(idx), MT_INDEX)

    top = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": [
        dict(amd64, annotations={"org.opencontainers.image.ref.name": "v1"}),
        dict(index_desc, annotations={"org.opencontainers.image.ref.name": "v1-multi"}),
    ]}
    with open(os.path.join(a.out, "index.json"), "wb") as f:
        f.write(canon(top))

    info = {
        "manifest_digest": amd64["digest"], "manifest_size": amd64["size"],
        "config_digest": amd64_cfg["digest"],
        "arm64_manifest_digest": arm64["digest"], "arm64_config_digest": arm64_cfg["digest"],
        "index_digest": index_desc["digest"],
        "layers": layer_info,
    }
    if a.info:
        with open(a.info, "w") as f:
            json.dump(info, f, indent=2)
            f.write("\n")
    json.dump(info, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
