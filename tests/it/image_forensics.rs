//! `auditor image diff` and `auditor image verify` on real images:
//! tests/services/forensic_images.py builds, from the services' test image
//! and wheels installed by pip, an upstream with a small engine package
//! and patched, forked-wheel, pyc-only and rebuilt variants (OCI layout),
//! and this file pushes two of them to the loopback registry. `tests/run`
//! starts the services; without them these tests fail and say so.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: these tests need the loopback services. Run tests/services/start.sh --with-image and source $AUDITOR_SERVICES_DIR/env.sh (tests/run does both)."))
}

/// The built images (once per test run): the layout dir and the engine's site dir.
struct Images {
    layout: PathBuf,
    site: String,
}

fn images() -> &'static Images {
    static IMAGES: OnceLock<Images> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("forensic-images");
        let wheel = Path::new(&env("AUDITOR_SERVICES_DIR")).join("cache/six-1.16.0-py2.py3-none-any.whl");
        let run = Command::new("python3")
            .arg(root().join("tests/services/forensic_images.py"))
            .args(["--base", &env("AUDITOR_TEST_IMAGE_OCI_DIR"), "--busybox", "/bin/busybox", "--out"])
            .arg(&out)
            .arg("--six-wheel")
            .arg(&wheel)
            .output()
            .expect("run forensic_images.py");
        assert!(run.status.success(), "forensic_images.py failed: {}", String::from_utf8_lossy(&run.stderr));
        let info: Value = serde_json::from_slice(&run.stdout).expect("forensic_images.py prints JSON");
        Images { layout: out, site: info["site"].as_str().unwrap().to_string() }
    })
}

fn oci(reference: &str) -> String {
    format!("oci:{}:{reference}", images().layout.display())
}

/// Run an image command with `--format json` and a cache dir; (exit code, report).
fn run(args: &[&str], cache: &Path) -> (i32, Value) {
    let mut all: Vec<&str> = args.to_vec();
    let cache = cache.to_str().unwrap();
    all.extend_from_slice(&["--format", "json", "--cache-dir", cache]);
    let out = auditor(&all);
    let report = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{args:?}: {e}\nstdout: {}\nstderr: {}", stdout(&out), stderr(&out)));
    (code(&out), report)
}

fn diff(pinned: &str, upstream: &str, cache: &Path) -> (i32, Value) {
    run(&["image", "diff", pinned, "--upstream", upstream], cache)
}

/// The finding of `rule` at `path`.
fn finding<'a>(report: &'a Value, rule: &str, path: &str) -> &'a Value {
    let all: Vec<&Value> = report["checks"].as_array().unwrap().iter().flat_map(|c| c["findings"].as_array().unwrap()).collect();
    all.iter().find(|f| f["rule"] == rule && f["path"] == path).copied().unwrap_or_else(|| {
        let seen: Vec<String> = all.iter().map(|f| format!("{} {} {}", f["rule"], f["path"], f["severity"])).collect();
        panic!("no {rule} finding at {path}; findings:\n{}", seen.join("\n"))
    })
}

fn layer_counts<'a>(report: &'a Value, role: &str) -> &'a Value {
    report["layer_cache"].as_array().unwrap().iter().find(|c| c["role"] == role).unwrap()
}

#[test]
fn every_patch_kind_in_a_patched_image_is_found_with_its_kind_path_and_severity() {
    let cache = tempfile::tempdir().unwrap();
    let site = &images().site;
    let (code, report) = diff(&oci("fx-patched"), &oci("fx-upstream"), cache.path());
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(check(&report, "engine-patch")["status"], "fail");
    let server = format!("{site}/sglang_testengine/server.py");
    for (rule, kind, path, severity) in [
        ("engine-patch/distribution-file", "modified", server.clone(), "error"),
        ("engine-patch/distribution-file", "modified", "/usr/lib/python3/dist-packages/six.py".to_string(), "warning"),
        ("engine-patch/patch-file", "patch-file", "/opt/patches/fix-server.patch".to_string(), "error"),
        ("engine-patch/patch-file", "patch-file", format!("{server}.orig"), "error"),
        ("engine-patch/hook", "hook", format!("{site}/sitecustomize.py"), "error"),
        ("engine-patch/hook", "hook", format!("{site}/zz-inject.pth"), "error"),
        ("engine-patch/native-library", "native-library", format!("{site}/sglang_testengine/_kernels.so"), "error"),
        ("engine-patch/executable", "executable", "/usr/local/bin/gpu-tune".to_string(), "warning"),
        ("engine-patch/entry-point", "entry-point", "/usr/local/bin/sglang-testengine-serve".to_string(), "error"),
        ("engine-patch/volatile", "added", "/etc/ld.so.cache".to_string(), "info"),
        ("engine-patch/image-file", "metadata", "/etc/os-release".to_string(), "info"),
    ] {
        let f = finding(&report, rule, &path);
        assert_eq!((f["kind"].as_str(), f["severity"].as_str()), (Some(kind), Some(severity)), "{rule} {path}: {f:#}");
    }
    // the distribution and version are named; the change carries a unified diff; the evidence names the layer
    let edit = finding(&report, "engine-patch/distribution-file", &server);
    assert!(edit["message"].as_str().unwrap().contains("sglang-testengine 0.1.0"), "{edit:#}");
    let unified = edit["diff"].as_str().unwrap();
    assert!(unified.contains("+    os.environ[\"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE\"] = \"1\"  # patched"), "{unified}");
    let last_layer = report["inputs"][0]["layers"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(edit["evidence"][0]["layer"], last_layer);
    assert!(finding(&report, "engine-patch/distribution-file", "/usr/lib/python3/dist-packages/six.py")["message"].as_str().unwrap().contains("six 1.16.0"));
    // the config: an injection variable, and the forbidden flag through forbidden-env
    let injection = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["findings"].as_array().unwrap())
        .find(|f| f["rule"] == "engine-patch/injection-env")
        .expect("PYTHONPATH finding");
    assert_eq!((injection["kind"].as_str(), injection["severity"].as_str()), (Some("config"), Some("error")));
    assert!(injection["message"].as_str().unwrap().contains("PYTHONPATH=/opt/patches"));
    let forbidden = check(&report, "forbidden-env");
    assert_eq!(forbidden["status"], "fail");
    assert_eq!(forbidden["findings"][0]["rule"], "forbidden-env/enabled");
    assert!(forbidden["findings"][0]["message"].as_str().unwrap().contains("image config's Env"));
    assert_eq!(check(&report, "image-integrity")["status"], "pass");
    // the other formats render the same findings
    for format in ["text", "markdown", "sarif", "junit", "github", "html"] {
        let out = auditor(&[
            "image",
            "diff",
            &oci("fx-patched"),
            "--upstream",
            &oci("fx-upstream"),
            "--format",
            format,
            "--cache-dir",
            cache.path().to_str().unwrap(),
        ]);
        assert_eq!(crate::common::code(&out), 1, "{format}");
        assert!(stdout(&out).contains("zz-inject.pth"), "{format}: {}", stdout(&out));
    }
}

#[test]
fn a_forked_wheel_reinstall_is_one_finding_naming_version_label_and_origin() {
    let cache = tempfile::tempdir().unwrap();
    let (code, report) = diff(&oci("fx-fork"), &oci("fx-upstream"), cache.path());
    let f = finding(&report, "engine-patch/wheel-reinstall", "/usr/lib/python3/dist-packages/six-1.16.0+fork.dist-info");
    assert_eq!((f["kind"].as_str(), f["severity"].as_str()), (Some("wheel-reinstall"), Some("warning")));
    let message = f["message"].as_str().unwrap();
    for part in ["version 1.16.0 -> 1.16.0+fork", "local version label +fork", "git https://github.com/example/six-fork.git@0123456789abcdef"] {
        assert!(message.contains(part), "{part}: {message}");
    }
    // six is not an engine package: a warning, so the diff passes
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(check(&report, "engine-patch")["findings"].as_array().unwrap().len(), 1, "{report:#}");
}

#[test]
fn a_rebuild_with_another_layer_split_and_compression_diffs_clean() {
    let cache = tempfile::tempdir().unwrap();
    let (code, report) = diff(&oci("fx-rebuild"), &oci("fx-upstream"), cache.path());
    assert_eq!(code, 0, "{report:#}");
    let engine = check(&report, "engine-patch");
    assert_eq!(engine["status"], "pass");
    assert_eq!(engine["findings"].as_array().unwrap().len(), 0, "{engine:#}");
    assert!(engine["summary"].as_str().unwrap().contains(", 0 changed"), "{engine:#}");
    assert_ne!(report["inputs"][0]["diff_ids"], report["inputs"][1]["diff_ids"]);
    // the same image: no layer read at all
    let (code, same) = diff(&oci("fx-upstream"), &oci("fx-upstream"), cache.path());
    assert_eq!(code, 0);
    assert!(check(&same, "engine-patch")["summary"].as_str().unwrap().contains("no layer read"));
    assert_eq!(layer_counts(&same, "upstream")["read"], 0);
    assert_eq!(layer_counts(&same, "pinned")["read"], 0);
}

#[test]
fn a_bytecode_only_change_is_found() {
    let cache = tempfile::tempdir().unwrap();
    let (code, report) = diff(&oci("fx-pyc"), &oci("fx-upstream"), cache.path());
    assert_eq!(code, 1, "{report:#}");
    let findings = check(&report, "engine-patch")["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!((f["rule"].as_str(), f["kind"].as_str(), f["severity"].as_str()), (Some("engine-patch/bytecode"), Some("bytecode"), Some("error")));
    assert!(f["path"].as_str().unwrap().contains("/sglang_testengine/__pycache__/server.cpython-"), "{f:#}");
}

#[test]
fn verify_flags_in_place_edits_against_record_and_passes_the_shipped_image() {
    let cache = tempfile::tempdir().unwrap();
    let site = &images().site;
    let (code, report) = run(&["image", "verify", &oci("fx-patched")], cache.path());
    assert_eq!(code, 1, "{report:#}");
    let server = finding(&report, "engine-patch/record-mismatch", &format!("{site}/sglang_testengine/server.py"));
    assert_eq!((server["kind"].as_str(), server["severity"].as_str()), (Some("record-mismatch"), Some("error")));
    assert!(server["message"].as_str().unwrap().contains("RECORD of sglang-testengine 0.1.0"));
    let six = finding(&report, "engine-patch/record-mismatch", "/usr/lib/python3/dist-packages/six.py");
    assert_eq!(six["severity"], "warning");
    assert_eq!(finding(&report, "engine-patch/hook", &format!("{site}/zz-inject.pth"))["severity"], "warning");
    assert_eq!(finding(&report, "engine-patch/patch-file", &format!("{site}/sglang_testengine/server.py.orig"))["severity"], "error");
    // the forked wheel: its direct_url.json
    let (_, fork) = run(&["image", "verify", &oci("fx-fork")], cache.path());
    let url = finding(&fork, "engine-patch/direct-url", "/usr/lib/python3/dist-packages/six-1.16.0+fork.dist-info/direct_url.json");
    assert!(url["message"].as_str().unwrap().contains("git https://github.com/example/six-fork.git"));
    // as shipped: every RECORD matches
    let (code, shipped) = run(&["image", "verify", &oci("fx-upstream")], cache.path());
    assert_eq!(code, 0, "{shipped:#}");
    assert!(check(&shipped, "engine-patch")["summary"].as_str().unwrap().contains("2 distribution(s)"), "{shipped:#}");
}

/// Push a ref of the layout to the open registry, digests preserved.
fn push(reference: &str, to: &str) -> String {
    let dest = format!("docker://{}/auditor/forensics:{to}", env("AUDITOR_TEST_REGISTRY"));
    let out = Command::new("skopeo")
        .args(["copy", "-q", "--dest-tls-verify=false", "--preserve-digests"])
        .arg(oci(reference))
        .arg(&dest)
        .output()
        .expect("run skopeo");
    assert!(out.status.success(), "skopeo copy: {}", String::from_utf8_lossy(&out.stderr));
    dest
}

#[test]
fn the_second_diff_against_a_registry_upstream_reads_no_upstream_layer() {
    let upstream = push("fx-upstream", "upstream");
    let rebuild = push("fx-rebuild", "rebuild");
    let patched = push("fx-patched", "patched");
    let cache = tempfile::tempdir().unwrap();
    // cold: the upstream's four layers are read (the rebuild shares none of its blobs)
    let (_, cold) = diff(&rebuild, &upstream, cache.path());
    assert_eq!(layer_counts(&cold, "upstream")["read"], 4, "{:#}", cold["layer_cache"]);
    assert_eq!(layer_counts(&cold, "pinned")["read"], 2);
    // warm: another submission on the same upstream reads only its own new layer
    let (code, warm) = diff(&patched, &upstream, cache.path());
    assert_eq!(code, 1);
    let up = layer_counts(&warm, "upstream");
    assert_eq!((up["read"].as_u64(), up["cached"].as_u64()), (Some(0), Some(4)), "{:#}", warm["layer_cache"]);
    let pin = layer_counts(&warm, "pinned");
    assert_eq!((pin["read"].as_u64(), pin["cached"].as_u64()), (Some(1), Some(4)), "{:#}", warm["layer_cache"]);
    // the diff itself is the same as with a cold cache
    let (_, again) = diff(&patched, &upstream, tempfile::tempdir().unwrap().path());
    assert_eq!(warm["checks"], again["checks"]);
    assert_eq!(layer_counts(&again, "upstream")["shared"], 4, "a cold cache reads the shared layers once, from the pinned image");
}

#[test]
fn a_layer_entry_climbing_out_of_the_root_is_a_hostile_entry_not_applied() {
    let cache = tempfile::tempdir().unwrap();
    let (code, report) = run(&["image", "verify", &oci("fx-hostile")], cache.path());
    assert_eq!(code, 1, "{report:#}");
    let f = finding(&report, "image-integrity/hostile-entry", "usr/../../../etc/cron.d/evil");
    assert_eq!((f["kind"].as_str(), f["severity"].as_str()), (Some("hostile-entry"), Some("error")));
    assert_eq!(check(&report, "image-integrity")["status"], "fail");
}

#[test]
fn a_corrupted_layer_blob_is_an_integrity_failure_and_the_files_are_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let layout = dir.path().join("layout");
    let copy = Command::new("cp").arg("-a").arg(&images().layout).arg(&layout).status().unwrap();
    assert!(copy.success());
    // the patch layer of fx-patched: its last layer
    let (_, clean) = diff(&oci("fx-patched"), &oci("fx-upstream"), dir.path());
    let blob = clean["inputs"][0]["layers"].as_array().unwrap().last().unwrap().as_str().unwrap().trim_start_matches("sha256:").to_string();
    let path = layout.join("blobs/sha256").join(blob);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();
    let pinned = format!("oci:{}:fx-patched", layout.display());
    let upstream = format!("oci:{}:fx-upstream", layout.display());
    let (code, report) = diff(&pinned, &upstream, tempfile::tempdir().unwrap().path());
    assert_eq!(code, 1, "{report:#}");
    let integrity = check(&report, "image-integrity");
    assert_eq!(integrity["findings"][0]["rule"], "image-integrity/digest-mismatch", "{integrity:#}");
    let engine = check(&report, "engine-patch");
    assert!(engine["summary"].as_str().unwrap().contains("files were not compared"), "{engine:#}");
}
