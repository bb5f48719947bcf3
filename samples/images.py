#!/usr/bin/env python3
"""The sample images for `auditor image diff` and `auditor image verify` (samples/images/).

Two small OCI layouts, made to show every common kind of engine patch in a few KB:

  upstream  a base layer and an SGLang-shaped distribution installed into site-packages
            (sglang 0.5.16: dist-info METADATA, WHEEL, INSTALLER and a RECORD whose
            hashes match the files, as pip writes them)
  patched   upstream's layers, and one layer on top that edits an installed engine file,
            drops a .patch file next to it and adds a sitecustomize.py hook; its config
            sets SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 and PYTHONPATH

The engine files are short stand-ins written here, not SGLang's code. Deterministic: fixed
mtimes, modes and owners, gzip without a timestamp; running it twice gives the same digests.

Usage: python3 samples/images.py        (writes samples/images/upstream and samples/images/patched)
"""
import base64
import hashlib
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "services"))
from big_diff import layout, write_image  # noqa: E402
from wheel_images import build_layer  # noqa: E402

SITE = "usr/local/lib/python3.12/dist-packages"
DIST = f"{SITE}/sglang-0.5.16.dist-info"
MTIME = 1760000000
CMD = ["python3", "-m", "sglang.launch_server"]
PATH_ENV = "PATH=/usr/local/bin:/usr/bin:/bin"

BASE = {
    "etc/os-release": 'PRETTY_NAME="Ubuntu 24.04 LTS"\nID=ubuntu\n',
    "usr/local/bin/sglang-serve": "#!/usr/bin/python3\nfrom sglang.launch_server import main\nmain()\n",
}
ENGINE = {
    f"{SITE}/sglang/__init__.py": '__version__ = "0.5.16"\n',
    f"{SITE}/sglang/launch_server.py": "def main():\n    from sglang.srt.server_args import prepare_server_args\n    prepare_server_args()\n",
    f"{SITE}/sglang/srt/__init__.py": "",
    f"{SITE}/sglang/srt/server_args.py": (
        "import os\n\n\n"
        "def prepare_server_args():\n"
        "    speculative_algorithm = os.environ.get('SGLANG_SPEC_ALGO', 'EAGLE')\n"
        "    return {'speculative_algorithm': speculative_algorithm}\n"
    ),
    f"{SITE}/sglang/srt/layers/moe/fused_moe.py": (
        "def select_experts(router_logits, top_k):\n"
        "    scores = router_logits.softmax(dim=-1)\n"
        "    return scores.topk(top_k, dim=-1)\n"
    ),
}
PATCH_LAYER = {
    f"{SITE}/sglang/srt/layers/moe/fused_moe.py": (
        "def select_experts(router_logits, top_k):\n"
        "    scores = router_logits.softmax(dim=-1)\n"
        "    # cap the routed experts of the draft layer at the draft's own top-k\n"
        "    return scores.topk(min(top_k, 4), dim=-1)\n"
    ),
    f"{SITE}/sglang/srt/layers/moe/fused_moe.py.patch": (
        "--- a/sglang/srt/layers/moe/fused_moe.py\n+++ b/sglang/srt/layers/moe/fused_moe.py\n"
        "@@ -1,3 +1,4 @@\n def select_experts(router_logits, top_k):\n     scores = router_logits.softmax(dim=-1)\n"
        "-    return scores.topk(top_k, dim=-1)\n"
        "+    # cap the routed experts of the draft layer at the draft's own top-k\n"
        "+    return scores.topk(min(top_k, 4), dim=-1)\n"
    ),
    f"{SITE}/sitecustomize.py": "import os\nos.environ.setdefault('SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE', '1')\n",
}


def record(files):
    """dist-info files for FILES (path -> text): METADATA, WHEEL, INSTALLER and a RECORD of all."""
    meta = {
        f"{DIST}/METADATA": "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.16\n",
        f"{DIST}/WHEEL": "Wheel-Version: 1.0\nGenerator: setuptools (75.1.0)\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{DIST}/INSTALLER": "pip\n",
    }
    lines = []
    for path, text in sorted({**files, **meta}.items()):
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{os.path.relpath(path, SITE)},sha256={digest},{len(data)}\n")
    lines.append(f"{os.path.relpath(DIST, SITE)}/RECORD,,\n")
    return {**meta, f"{DIST}/RECORD": "".join(lines)}


def stage(root, files):
    """Write FILES under ROOT with fixed modes and mtimes; every path, parents first."""
    paths = set()
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
        os.chmod(full, 0o755 if "/bin/" in path else 0o644)
        parts = path.split("/")
        paths.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    for p in paths:
        full = os.path.join(root, p)
        if os.path.isdir(full):
            os.chmod(full, 0o755)
        os.utime(full, (MTIME, MTIME))
    return sorted(paths)


def main():
    out = os.path.join(HERE, "images")
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        layers = {}
        for name, files in [("base", BASE), ("engine", {**ENGINE, **record(ENGINE)}), ("patch", PATCH_LAYER)]:
            root = os.path.join(tmp, name)
            layers[name] = (root, stage(root, files))
        for image in ("upstream", "patched"):
            dest = os.path.join(out, image)
            layout(dest)
            names = ["base", "engine"] + (["patch"] if image == "patched" else [])
            built = [build_layer((dest, *layers[n], 0, 9, {})) for n in names]
            history = ["ADD base.tar /", "RUN pip install sglang==0.5.16",
                       "COPY fused_moe.py fused_moe.py.patch sitecustomize.py /usr/local/lib/python3.12/dist-packages/"]
            env = [PATH_ENV] + (["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", "PYTHONPATH=/opt/overrides"] if image == "patched" else [])
            write_image(dest, built, history[:len(built)], CMD, env)


if __name__ == "__main__":
    main()
