//! What Python will import (issue 25, items 2–4), end to end on images
//! built from the sample upstream image (`samples/images/upstream`: sglang
//! 0.5.16 in `/usr/local/lib/python3.12/dist-packages`, `python3 -m
//! sglang.launch_server`) with a layer on top: an engine module placed
//! earlier on `sys.path` than the installed one, a change to code a `.pth`
//! file loads at every start, and compiled modules CPython loads without
//! looking at their source. Each is judged by `image diff` against the
//! sample and by `image verify` alone. No services are needed.

use crate::common::findings;
use crate::hostile_layers::{GZIP, Layer, Sandbox, layer};
use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const SITE: &str = "usr/local/lib/python3.12/dist-packages";
const INSTALLED: &str = "sglang 0.5.16 at /usr/local/lib/python3.12/dist-packages/sglang";

/// The finding about `path` with `rule`.
fn finding<'a>(report: &'a Value, rule: &str, path: &str) -> &'a Value {
    findings(report).find(|f| f["rule"] == rule && f["path"] == path).unwrap_or_else(|| panic!("no {rule} at {path}: {report:#}"))
}

/// Severity and message of the finding about `path`, whatever its rule.
fn about(report: &Value, path: &str) -> (String, String, String) {
    let f = findings(report).find(|f| f["path"] == path).unwrap_or_else(|| panic!("nothing at {path}: {report:#}"));
    (f["rule"].as_str().unwrap().into(), f["severity"].as_str().unwrap().into(), f["message"].as_str().unwrap().into())
}

/// A layer installing distribution `name` `version` into the sample's site
/// directory: its files and a dist-info whose RECORD hashes them, as pip writes it.
fn installed(name: &str, version: &str, files: &[(&str, &[u8])]) -> Layer {
    layer(GZIP, |t| {
        let meta = format!("{name}-{version}.dist-info");
        let mut record = String::new();
        for (rel, data) in files {
            let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(data));
            record.push_str(&format!("{rel},sha256={hash},{}\n", data.len()));
            t.file(&format!("{SITE}/{rel}"), data);
        }
        record.push_str(&format!("{meta}/METADATA,,\n{meta}/RECORD,,\n"));
        t.file(&format!("{SITE}/{meta}/METADATA"), format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n").as_bytes());
        t.file(&format!("{SITE}/{meta}/RECORD"), record.as_bytes());
    })
}

/// A chaining shadow: the package extends its path to the installed one,
/// so every module but the replaced one still comes from the engine.
const CHAIN: &[u8] = b"__path__.append('/usr/local/lib/python3.12/dist-packages/sglang')\n";
const PATCHED_MOE: &[u8] = b"def select_experts(router_logits, top_k):\n    return router_logits.topk(1, dim=-1)\n";

/// An `sglang` package placed where Python looks before (or beside) the
/// installed one — the standard library, `/`, the `WorkingDir`, a
/// `PYTHONPATH` entry — is an engine patch naming the package it shadows;
/// a module of another name in the same places, or a file that is no
/// module, is not.
#[test]
fn an_engine_module_earlier_on_sys_path_is_an_engine_patch_naming_what_it_shadows() {
    let sb = Sandbox::new();
    let sample = sb.sample("upstream", "base");
    let shadows = layer(GZIP, |t| {
        t.file("usr/lib/python3.12/sglang/__init__.py", CHAIN).file("usr/lib/python3.12/sglang/srt/layers/moe/fused_moe.py", PATCHED_MOE);
        t.file("sglang/srt/server_args.py", b"def prepare_server_args():\n    return {}\n");
        t.file("w/sglang/__init__.py", CHAIN).file("opt/p/sglang.py", b"from sglang import *\n").file("usr/lib/python3.12/vllm.py", b"X = 1\n");
        // honest twins: another module name, and files that are no module
        t.file("usr/lib/python3.12/helpers.py", b"X = 1\n").file("usr/lib/python3.12/sglang.txt", b"notes\n").file("opt/sglang/notes.md", b"x\n");
    });
    let mut runtime = sample.runtime.clone();
    runtime["WorkingDir"] = json!("/w");
    runtime["Env"] = json!(["PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONPATH=/opt/p"]);
    sb.image_over("shadowed", &sample, &[&shadows], Some(runtime));
    let diff = sb.diff("shadowing-diff", "shadowed", &[]);
    let verify = sb.verify("shadowing-verify", "shadowed", &[]);
    for (run, what) in [(&diff, "diff"), (&verify, "verify")] {
        assert_eq!(run.code, 1, "{what}: {:#}", run.report);
        let shadow = |path: &str, dir: &str, order: &str| {
            let f = finding(&run.report, "engine-patch/import-shadowing", path);
            let message = f["message"].as_str().unwrap();
            assert_eq!(f["severity"], "error", "{what} {path}: {f:#}");
            assert!(message.contains(&format!("importable from {dir} (")) && message.contains(order), "{what} {path}: {message}");
        };
        let ahead = format!("ahead of the installed {INSTALLED}");
        shadow("/usr/lib/python3.12/sglang/__init__.py", "/usr/lib/python3.12", &ahead);
        shadow("/usr/lib/python3.12/sglang/srt/layers/moe/fused_moe.py", "/usr/lib/python3.12", &ahead);
        shadow("/sglang/srt/server_args.py", "/", &ahead);
        shadow("/w/sglang/__init__.py", "/w", &ahead);
        shadow("/opt/p/sglang.py", "/opt/p", &ahead);
        shadow("/usr/lib/python3.12/vllm.py", "/usr/lib/python3.12", "an engine package name");
        for honest in ["/usr/lib/python3.12/helpers.py", "/usr/lib/python3.12/sglang.txt", "/opt/sglang/notes.md"] {
            assert!(findings(&run.report).all(|f| f["path"] != honest || f["severity"] != "error"), "{what} {honest}: {:#}", run.report);
        }
    }
    // the diff shows what the shadow holds
    let f = finding(&diff.report, "engine-patch/import-shadowing", "/usr/lib/python3.12/sglang/srt/layers/moe/fused_moe.py");
    assert!(f["diff"].as_str().is_some_and(|d| d.contains("+    return router_logits.topk(1, dim=-1)")), "{f:#}");
    // the sample upstream itself has no shadow
    assert_eq!(sb.verify("shadowing-upstream", "base", &[]).code, 0);
}

/// The line setuptools ships in `distutils-precedence.pth`.
const PRECEDENCE: &[u8] =
    b"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n";

/// A change to a module a `.pth` file imports at every interpreter start
/// (setuptools' `_distutils_hack`, loaded by `distutils-precedence.pth`)
/// is judged as an engine patch although setuptools is no engine package;
/// a change to a setuptools module nothing loads at start stays a warning.
#[test]
fn code_a_pth_file_loads_at_every_start_is_judged_like_the_engine() {
    let sb = Sandbox::new();
    let sample = sb.sample("upstream", "sample");
    let setuptools = installed(
        "setuptools",
        "70.0.0",
        &[
            ("distutils-precedence.pth", PRECEDENCE),
            ("_distutils_hack/__init__.py", b"def add_shim():\n    pass\n"),
            ("setuptools/dist.py", b"class Distribution:\n    pass\n"),
        ],
    );
    let base = sb.image_over("base", &sample, &[&setuptools], None);
    let hook = b"import sys\n\ndef add_shim():\n    sys.meta_path.insert(0, __import__('_distutils_hack.rewrite').rewrite.Finder('sglang.srt.layers.moe.fused_moe'))\n";
    let patched = layer(GZIP, |t| {
        t.file(&format!("{SITE}/_distutils_hack/__init__.py"), hook).file(&format!("{SITE}/_distutils_hack/rewrite.py"), b"class Finder: ...\n");
        t.file(&format!("{SITE}/setuptools/dist.py"), b"class Distribution:\n    name = 'x'\n");
    });
    sb.image_over("hooked", &base, &[&patched], None);
    let hack = format!("/{SITE}/_distutils_hack/__init__.py");
    let loaded_by = format!("/{SITE}/distutils-precedence.pth imports at every interpreter start");
    let diff = sb.diff("start-up-code-diff", "hooked", &[]);
    assert_eq!(diff.code, 1, "{:#}", diff.report);
    for path in [hack.clone(), format!("/{SITE}/_distutils_hack/rewrite.py")] {
        let (rule, severity, message) = about(&diff.report, &path);
        assert_eq!((rule.as_str(), severity.as_str()), ("engine-patch/hook", "error"), "{message}");
        assert!(message.contains("`_distutils_hack`") && message.contains(&loaded_by) && message.contains("setuptools 70.0.0"), "{message}");
    }
    assert_eq!(about(&diff.report, &format!("/{SITE}/setuptools/dist.py")).1, "warning");
    // without the upstream: the edited file no longer matches setuptools' RECORD, and it runs at every start
    let verify = sb.verify("start-up-code-verify", "hooked", &[]);
    assert_eq!(verify.code, 1, "{:#}", verify.report);
    let f = finding(&verify.report, "engine-patch/record-mismatch", &hack);
    assert_eq!(f["severity"], "error", "{f:#}");
    assert!(f["message"].as_str().unwrap().contains(&loaded_by), "{f:#}");
    assert_eq!(finding(&verify.report, "engine-patch/record-mismatch", &format!("/{SITE}/setuptools/dist.py"))["severity"], "warning");
    assert_eq!(sb.verify("start-up-code-honest", "base", &[]).code, 0, "setuptools as shipped passes");
}

/// Compiles with the CPython of the test machine: each `(member, edit,
/// mode)` is the sample layer's `member`, with `edit` appended, compiled
/// with invalidation `mode`; the `.pyc` bytes in order.
fn compiled(blob: &std::path::Path, cases: &[(&str, &str, &str)]) -> Vec<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import py_compile, sys, tarfile
blob, out = sys.argv[1], sys.argv[2]
layer = tarfile.open(blob)
for i, case in enumerate(sys.argv[3:]):
    member, edit, mode = case.split("|")
    source = f"{out}/{i}.py"
    with open(source, "wb") as f:
        f.write(layer.extractfile(member).read() + edit.encode())
    py_compile.compile(source, cfile=f"{out}/{i}.pyc", doraise=True, invalidation_mode=py_compile.PycInvalidationMode[mode])
"#;
    let mut args = vec!["-c".to_string(), script.to_string(), blob.display().to_string(), dir.path().display().to_string()];
    args.extend(cases.iter().map(|(m, e, mode)| format!("{m}|{e}|{mode}")));
    let out = std::process::Command::new("python3").args(&args).output().expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (0..cases.len()).map(|i| std::fs::read(dir.path().join(format!("{i}.pyc"))).unwrap()).collect()
}

/// `image verify` reads the compiled files pip lists without a hash: an
/// unchecked-hash `.pyc` not compiled from the `.py` beside it (CPython
/// loads it without looking) and a sourceless `.pyc` are errors shown with
/// their source; unchecked-hash files that do hold their source's hash are
/// one warning; timestamp `.pyc` files are counted, stale or not compared.
#[test]
fn verify_reads_compiled_files_as_cpython_would_load_them() {
    let sb = Sandbox::new();
    let sample = sb.sample("upstream", "base");
    let blob = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples/images/upstream/blobs/sha256")
        .join(sample.layer_digest(1).trim_start_matches("sha256:"));
    let (moe, args, launch) =
        (format!("{SITE}/sglang/srt/layers/moe/fused_moe.py"), format!("{SITE}/sglang/srt/server_args.py"), format!("{SITE}/sglang/launch_server.py"));
    let edit = "\ndef select_experts(router_logits, top_k):\n    return router_logits.topk(1, dim=-1)\n";
    let pycs = compiled(
        &blob,
        &[(&moe, edit, "UNCHECKED_HASH"), (&args, "", "UNCHECKED_HASH"), (&launch, "", "TIMESTAMP"), (&launch, edit, "TIMESTAMP"), (&moe, edit, "TIMESTAMP")],
    );
    let tag = |path: &str| {
        let (dir, name) = path.rsplit_once('/').unwrap();
        format!("{dir}/__pycache__/{}.cpython-311.pyc", name.trim_end_matches(".py"))
    };
    let layer = layer(GZIP, |t| {
        t.file(&tag(&moe), &pycs[0]).file(&tag(&args), &pycs[1]).file(&tag(&launch), &pycs[2]);
        t.file(&format!("{SITE}/sglang/srt/__pycache__/__init__.cpython-311.pyc"), &pycs[3]);
        t.file(&format!("{SITE}/sglang/srt/layers/moe/topk.pyc"), &pycs[4]);
    });
    sb.image_over("compiled", &sample, &[&layer], None);
    let run = sb.verify("pyc-verify", "compiled", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let bytecode: Vec<&Value> = findings(&run.report).filter(|f| f["rule"] == "engine-patch/bytecode").collect();
    let at = |path: &str| bytecode.iter().find(|f| f["path"] == format!("/{path}")).unwrap_or_else(|| panic!("{path}: {:#}", run.report));
    let f = at(&tag(&moe));
    assert_eq!(f["severity"], "error", "{f:#}");
    assert!(f["message"].as_str().unwrap().contains("not compiled from") && f["message"].as_str().unwrap().contains("CPython 3.11"), "{f:#}");
    assert_eq!(f["evidence"][1]["file"], format!("/{moe}"), "the source is shown beside it: {f:#}");
    assert_eq!(at(&tag(&args))["severity"], "warning");
    assert_eq!(at(&format!("{SITE}/sglang/srt/layers/moe/topk.pyc"))["severity"], "error");
    assert_eq!(bytecode.len(), 3, "{:#}", run.report);
    // the timestamp files: one matching its source's size (loaded, body not compared), one stale
    let summary = crate::common::check(&run.report, "engine-patch")["summary"].as_str().unwrap().to_string();
    assert!(summary.contains("5 compiled file(s) of engine packages without a RECORD hash read by their headers: 1 stale"), "{summary}");
    assert!(summary.contains("1 loaded with their source"), "{summary}");
}

/// An index whose amd64 image is the upstream's and whose arm64 image is
/// patched: without `--platform`, the arm64 image is named as not
/// examined and the verdict is incomplete (it said "the pinned image is
/// the upstream image"); `--platform linux/arm64` examines it and finds
/// the patch; an index that is the upstream's, platform for platform,
/// passes whole.
#[test]
fn every_platform_of_an_index_is_examined_or_named() {
    let sb = Sandbox::new();
    let sample = sb.sample("upstream", "upstream-amd64");
    sb.image_over("upstream-arm64", &sample.on("arm64"), &[], None);
    let patch = layer(GZIP, |t| {
        t.file(&format!("{SITE}/sglang/srt/layers/moe/fused_moe.py"), PATCHED_MOE);
    });
    sb.image_over("patched-arm64", &sample.on("arm64"), &[&patch], None);
    sb.index("base", &[("linux/amd64", "upstream-amd64"), ("linux/arm64", "upstream-arm64")]);
    sb.index("pinned", &[("linux/amd64", "upstream-amd64"), ("linux/arm64", "patched-arm64")]);
    sb.index("same", &[("linux/amd64", "upstream-amd64"), ("linux/arm64", "upstream-arm64")]);
    let not_examined =
        |run: &crate::hostile_layers::Run| run.report["not_examined"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect::<Vec<_>>();
    let diff = sb.diff("platforms-diff", "pinned", &[]);
    assert_eq!((diff.code, diff.report["verdict"].as_str()), (3, Some("incomplete")), "{:#}", diff.report);
    let named = not_examined(&diff);
    assert!(named.len() == 1 && named[0].contains("platform linux/arm64") && named[0].contains("--platform linux/arm64"), "{named:?}");
    let verify = sb.verify("platforms-verify", "pinned", &[]);
    assert_eq!(verify.code, 3, "{:#}", verify.report);
    assert!(not_examined(&verify).iter().any(|n| n.contains("platform linux/arm64")), "{:#}", verify.report);
    let arm = sb.diff("platforms-arm64", "pinned", &["--platform", "linux/arm64"]);
    assert_eq!(arm.code, 1, "{:#}", arm.report);
    assert_eq!(about(&arm.report, &format!("/{SITE}/sglang/srt/layers/moe/fused_moe.py")).1, "error");
    assert!(not_examined(&arm).is_empty(), "--platform narrows: {:#}", arm.report);
    let same = sb.diff("platforms-same", "same", &[]);
    assert_eq!(same.code, 0, "{:#}", same.report);
    assert!(not_examined(&same).is_empty(), "{:#}", same.report);
}
