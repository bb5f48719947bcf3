#!/usr/bin/env python3
"""Build the images `tests/it/image_forensics.rs` diffs and verifies, from real wheels installed by pip.

Starts from the test image (`v1` of the OCI layout make_test_image.sh writes) and adds, into one
new OCI layout (`--out`), these refs:

  fx-upstream  v1 + an "engine" layer: a wheel `sglang-testengine` 0.1.0 built here (a package with
               server.py, a native library _kernels.so that is an ELF copy of busybox, and the
               console script sglang-testengine-serve) installed by pip into /usr/local (compiled .pyc,
               RECORD, INSTALLER written by pip)
  fx-patched   fx-upstream + one layer with every patch shape: server.py and six.py edited in place,
               server.py.orig and /opt/patches/fix-server.patch left behind, sitecustomize.py and a
               .pth with an import line, _kernels.so changed, a new executable /usr/local/bin/gpu-tune,
               the sglang-testengine-serve entry point rewritten, /etc/ld.so.cache (volatile), a chmod
               of /etc/os-release; config Env + SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 and PYTHONPATH
  fx-fork      fx-upstream + six reinstalled by pip as 1.16.0+fork (a rebuilt wheel) with a
               direct_url.json naming a git commit, over a whiteout of the shipped six-1.16.0.dist-info
  fx-pyc       fx-upstream + only server.cpython-*.pyc recompiled from another source (header kept)
  fx-hostile   fx-upstream + a layer whose one entry climbs out of the root (usr/../../../etc/...)
  fx-rebuild   fx-upstream's files flattened and split into two other layers (one gzip -1, one zstd),
               other mtimes and entry order, the /usr/bin/env hard link stored as a copy: the same
               merged filesystem as fx-upstream

Prints a JSON object: {"layout": DIR, "site": "/usr/local/lib/pythonX.Y/site-packages", "refs": [...]}.

Usage: forensic_images.py --base OCI_DIR --six-wheel WHEEL --busybox /bin/busybox --out DIR
"""
import argparse
import base64
import gzip
import hashlib
import io
import json
import marshal
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_oci_image import CREATED, EPOCH, MT_CONFIG, MT_LAYER_GZ, MT_MANIFEST, Layer, Layout, canon, sha256  # noqa: E402

PYVER = f"python{sys.version_info.major}.{sys.version_info.minor}"
SITE = f"usr/local/lib/{PYVER}/site-packages"
SIX_SITE = "usr/lib/python3/dist-packages"
SERVER_PY = '''"""A stand-in serving engine for auditor's image forensics tests."""


def main():
    """Serve."""
    print("serving")
    return 0
'''
PATCHED_SERVER_PY = SERVER_PY.replace('    return 0\n', '    import os\n    os.environ["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"] = "1"  # patched\n    return 0\n')


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(path, files):
    """A wheel from {archive name: bytes}; RECORD is computed here."""
    dist_info = next(n.split("/")[0] for n in files if n.endswith(".dist-info/METADATA"))
    rows = [f"{name},{record_hash(data)},{len(data)}" for name, data in files.items()]
    rows.append(f"{dist_info}/RECORD,,")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(f"{dist_info}/RECORD", "\n".join(rows) + "\n")


def pip(*args):
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--root-user-action=ignore", *args], check=True, env=env)


def read_tree(root):
    """{relative path: (kind, bytes or link target, mode)} of a directory tree."""
    out = {}
    for base, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(base, root)
        if rel != ".":
            out[rel] = ("dir", None, 0o755)
        for f in sorted(files):
            p = os.path.join(base, f)
            r = os.path.normpath(os.path.join(rel, f))
            with open(p, "rb") as fh:
                out[r] = ("file", fh.read(), 0o755 if os.stat(p).st_mode & 0o111 else 0o644)
    return out


def add_tree(layer, tree, prefix=""):
    for rel, (kind, data, mode) in sorted(tree.items()):
        path = f"{prefix}/{rel}".strip("/")
        if kind == "dir":
            layer.dir(path)
        else:
            layer.file(path, data, mode)


def engine_wheel(work, busybox):
    files = {
        "sglang_testengine/__init__.py": b'__version__ = "0.1.0"\n',
        "sglang_testengine/server.py": SERVER_PY.encode(),
        "sglang_testengine/_kernels.so": busybox,
        "sglang_testengine-0.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sglang-testengine\nVersion: 0.1.0\nSummary: auditor test engine\n",
        "sglang_testengine-0.1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: auditor-tests 1\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "sglang_testengine-0.1.0.dist-info/entry_points.txt": b"[console_scripts]\nsglang-testengine-serve = sglang_testengine.server:main\n",
    }
    wheels = os.path.join(work, "wheels")
    os.makedirs(wheels, exist_ok=True)
    make_wheel(os.path.join(wheels, "sglang_testengine-0.1.0-py3-none-any.whl"), files)
    root = os.path.join(work, "engine-root")
    # by requirement, not by path: pip writes no direct_url.json, as an index install would not
    pip("--root", root, "--prefix", "/usr/local", "--no-warn-script-location", "--find-links", wheels, "sglang-testengine==0.1.0")
    return read_tree(root)


def fork_wheel(work, six_wheel):
    """six 1.16.0 rebuilt as 1.16.0+fork, installed by pip, then given a git direct_url.json."""
    with zipfile.ZipFile(six_wheel) as z:
        files = {}
        for name in z.namelist():
            if name.endswith("/RECORD"):
                continue
            data = z.read(name)
            name = name.replace("six-1.16.0.dist-info", "six-1.16.0+fork.dist-info")
            if name.endswith("/METADATA"):
                data = data.replace(b"Version: 1.16.0\n", b"Version: 1.16.0+fork\n", 1)
            files[name] = data
    wheels = os.path.join(work, "fork-wheels")
    os.makedirs(wheels, exist_ok=True)
    make_wheel(os.path.join(wheels, "six-1.16.0+fork-py2.py3-none-any.whl"), files)
    target = os.path.join(work, "fork-site")
    pip("--no-compile", "--target", target, "--find-links", wheels, "six==1.16.0+fork")
    meta = os.path.join(target, "six-1.16.0+fork.dist-info")
    direct = json.dumps({"url": "https://github.com/example/six-fork.git",
                         "vcs_info": {"vcs": "git", "commit_id": "0123456789abcdef0123456789abcdef01234567"}}).encode()
    with open(os.path.join(meta, "direct_url.json"), "wb") as f:
        f.write(direct)
    with open(os.path.join(meta, "RECORD"), "a") as f:
        f.write(f"six-1.16.0+fork.dist-info/direct_url.json,{record_hash(direct)},{len(direct)}\n")
    return read_tree(target)


class Builder:
    def __init__(self, out, base):
        self.lay = Layout(out)
        self.base = base
        self.refs = []
        with open(os.path.join(base, "index.json")) as f:
            index = json.load(f)
        v1 = next(m for m in index["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == "v1")
        self.manifest = json.loads(self.read(v1["digest"]))
        self.config = json.loads(self.read(self.manifest["config"]["digest"]))
        for layer in self.manifest["layers"]:
            self.lay.blob(self.read(layer["digest"]), layer["mediaType"])

    def read(self, digest):
        with open(os.path.join(self.base, "blobs", "sha256", digest.split(":", 1)[1]), "rb") as f:
            return f.read()

    def base_tars(self):
        return [gzip.decompress(self.read(layer["digest"])) for layer in self.manifest["layers"]]

    def image(self, ref, layers, env_add=(), base_layers=None, base_diff_ids=None, base_history=None):
        """layers: [(tar bytes, blob bytes, media type, created_by)] on top of v1's (or the given) layers."""
        descs = list(self.manifest["layers"] if base_layers is None else base_layers)
        diff_ids = list(self.config["rootfs"]["diff_ids"] if base_diff_ids is None else base_diff_ids)
        history = list(self.config["history"] if base_history is None else base_history)
        for tar_bytes, blob, mt, created_by in layers:
            descs.append(self.lay.blob(blob, mt))
            diff_ids.append(sha256(tar_bytes))
            history.append({"created": CREATED, "created_by": created_by})
        config = json.loads(json.dumps(self.config))
        config["rootfs"]["diff_ids"] = diff_ids
        config["history"] = history
        config["config"]["Env"] = config["config"]["Env"] + list(env_add)
        cfg = self.lay.blob(canon(config), MT_CONFIG)
        manifest = {"schemaVersion": 2, "mediaType": MT_MANIFEST, "config": cfg, "layers": descs}
        desc = self.lay.blob(canon(manifest), MT_MANIFEST)
        self.refs.append(dict(desc, annotations={"org.opencontainers.image.ref.name": ref}))
        return descs, diff_ids, history, config

    def finish(self):
        with open(os.path.join(self.lay.out, "index.json"), "wb") as f:
            f.write(canon({"schemaVersion": 2, "manifests": self.refs}))


def gz(layer):
    tar_bytes, gz_bytes = layer.serialise()
    return tar_bytes, gz_bytes, MT_LAYER_GZ


def merged_files(tars):
    """Apply layer tars in order (whiteouts too): {path: (TarInfo, data)}."""
    fs = {}
    for t in tars:
        with tarfile.open(fileobj=io.BytesIO(t)) as tar:
            for m in tar.getmembers():
                name = m.name.rstrip("/")
                d, b = os.path.split(name)
                if b.startswith(".wh."):
                    gone = os.path.join(d, b[4:])
                    for p in [p for p in fs if p == gone or p.startswith(gone + "/")]:
                        del fs[p]
                    continue
                data = tar.extractfile(m).read() if m.isfile() else None
                fs[name] = (m, data)
    return fs


def rebuilt_layers(tars):
    """The merged files of `tars` as two differently split layers: /usr (gzip -1) and the rest (zstd)."""
    fs = merged_files(tars)
    parts = {"usr": io.BytesIO(), "rest": io.BytesIO()}
    tars_out = {k: tarfile.open(fileobj=v, mode="w", format=tarfile.GNU_FORMAT) for k, v in parts.items()}
    for path in sorted(fs, reverse=True):
        m, data = fs[path]
        ti = tarfile.TarInfo(path + ("/" if m.isdir() else ""))
        ti.type, ti.mode, ti.uid, ti.gid, ti.mtime = m.type, m.mode, m.uid, m.gid, EPOCH + 86400
        ti.linkname = m.linkname
        if m.islnk():  # a hard link stored as a copy of its target
            target_m, target_data = fs[m.linkname.rstrip("/")]
            ti.type, data = tarfile.REGTYPE, target_data
        if data is not None:
            ti.size = len(data)
        key = "usr" if path == "usr" or path.startswith("usr/") else "rest"
        tars_out[key].addfile(ti, io.BytesIO(data) if data is not None else None)
    for t in tars_out.values():
        t.close()
    usr_tar, rest_tar = parts["usr"].getvalue(), parts["rest"].getvalue()
    zstd = shutil.which("zstd")
    rest_blob, rest_mt = (subprocess.run([zstd, "-q", "-3", "-c"], input=rest_tar, stdout=subprocess.PIPE, check=True).stdout,
                          "application/vnd.oci.image.layer.v1.tar+zstd") if zstd else (gzip.compress(rest_tar, 6), MT_LAYER_GZ)
    return [(usr_tar, gzip.compress(usr_tar, 1, mtime=0), MT_LAYER_GZ, "RUN rebuild: /usr"),
            (rest_tar, rest_blob, rest_mt, "RUN rebuild: the rest")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--six-wheel", required=True)
    ap.add_argument("--busybox", default="/bin/busybox")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.busybox, "rb") as f:
        busybox = f.read()
    b = Builder(a.out, a.base)
    with tempfile.TemporaryDirectory() as work:
        engine_tree = engine_wheel(work, busybox)
        fork_tree = fork_wheel(work, a.six_wheel)

    engine = Layer("engine")
    add_tree(engine, engine_tree)
    engine_tar, engine_blob, mt = gz(engine)
    up_layers, up_diff_ids, up_history, _ = b.image("fx-upstream", [(engine_tar, engine_blob, mt, "RUN pip install sglang-testengine==0.1.0")])

    def on_upstream(ref, layers, env_add=()):
        b.image(ref, layers, env_add, up_layers, up_diff_ids, up_history)

    site_files = {k: v for k, v in engine_tree.items() if k.startswith(SITE)}
    six_py = next(data for name, data in read_tree_from_tar(b.base_tars()[1]).items() if name.endswith("dist-packages/six.py"))
    patch = Layer("patch")
    patch.file(f"{SITE}/sglang_testengine/server.py", PATCHED_SERVER_PY)
    patch.file(f"{SITE}/sglang_testengine/server.py.orig", SERVER_PY)
    patch.file("opt/patches/fix-server.patch", "--- a/server.py\n+++ b/server.py\n@@ -6,3 +6,5 @@\n"
               "     print(\"serving\")\n+    import os\n+    os.environ[\"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE\"] = \"1\"  # patched\n     return 0\n")
    patch.file(f"{SIX_SITE}/six.py", six_py.replace(b'__version__ = "1.16.0"', b'__version__ = "1.16.0"  # patched in place', 1))
    patch.file(f"{SITE}/sitecustomize.py", 'import os\nos.environ["SGLANG_ENABLE_TORCH_COMPILE"] = "1"\n')
    patch.file(f"{SITE}/zz-inject.pth", 'import os; os.environ.setdefault("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", "1")\n')
    patch.file(f"{SITE}/sglang_testengine/_kernels.so", busybox + b"\0patched", 0o755)
    patch.file("usr/local/bin/gpu-tune", "#!/bin/sh\necho tuned\n", 0o755)
    serve = engine_tree["usr/local/bin/sglang-testengine-serve"][1]
    patch.file("usr/local/bin/sglang-testengine-serve", serve.replace(b"main()", b"main()  # wrapped", 1) + b"# patched\n", 0o755)
    patch.file("etc/ld.so.cache", b"ld.so-1.7.0\0cache rebuilt")
    patch.file("etc/os-release", 'PRETTY_NAME="auditor test image"\nNAME="auditor-test"\nID=auditor-test\nVERSION_ID="1"\n', 0o600)
    on_upstream("fx-patched", [(*gz(patch), "RUN apply patches")], ["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", "PYTHONPATH=/opt/patches"])

    fork = Layer("fork")
    fork.file(f"{SIX_SITE}/.wh.six-1.16.0.dist-info", b"")
    add_tree(fork, fork_tree, SIX_SITE)
    on_upstream("fx-fork", [(*gz(fork), "RUN pip install --force-reinstall six-fork")])

    pyc_name = next(k for k in site_files if "/__pycache__/server." in k and k.endswith(".pyc"))
    original = engine_tree[pyc_name][1]
    code = compile(PATCHED_SERVER_PY, f"/{SITE}/sglang_testengine/server.py", "exec")
    pyc = Layer("pyc")
    pyc.file(pyc_name, original[:16] + marshal.dumps(code))
    on_upstream("fx-pyc", [(*gz(pyc), "RUN python -c 'recompile server'")])

    hostile = io.BytesIO()
    with tarfile.open(fileobj=hostile, mode="w", format=tarfile.PAX_FORMAT) as tar:
        ti = tarfile.TarInfo("usr/../../../etc/cron.d/evil")
        ti.size, ti.mtime = 4, EPOCH
        tar.addfile(ti, io.BytesIO(b"evil"))
    on_upstream("fx-hostile", [(hostile.getvalue(), gzip.compress(hostile.getvalue(), mtime=0), MT_LAYER_GZ, "ADD evil.tar /")])

    b.image("fx-rebuild", rebuilt_layers(b.base_tars() + [engine_tar]), base_layers=[], base_diff_ids=[], base_history=[])
    b.finish()
    json.dump({"layout": a.out, "site": "/" + SITE, "six_site": "/" + SIX_SITE, "refs": [r["annotations"]["org.opencontainers.image.ref.name"] for r in b.refs]}, sys.stdout)
    print()


def read_tree_from_tar(tar_bytes):
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


if __name__ == "__main__":
    main()
