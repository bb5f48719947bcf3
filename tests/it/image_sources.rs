//! Image sources against the real loopback services (tests/services): two
//! docker-registry instances (open, and htpasswd basic auth), podman's
//! Docker-API service, the test image as OCI layout, oci-archive and
//! docker-archive, and a fault-injecting proxy in front of the open
//! registry. `tests/run` starts the services and exports their variables;
//! without them these tests fail and say so.

use crate::common::*;
use auditor::image::{self, ImageRef, OpenOptions, Platform, Transport};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: these tests need the loopback services. Run tests/services/start.sh --with-image and source $AUDITOR_SERVICES_DIR/env.sh (tests/run does both).")
    })
}

fn open(reference: &str) -> image::Image {
    let r: ImageRef = reference.parse().unwrap_or_else(|e| panic!("{reference}: {e}"));
    image::open(&r, &OpenOptions::default()).unwrap_or_else(|e| panic!("{reference}: {e}"))
}

fn info() -> Value {
    serde_json::from_str(&std::fs::read_to_string(env("AUDITOR_TEST_IMAGE_INFO")).unwrap()).unwrap()
}

/// `auditor` with extra environment variables.
fn auditor_env(args: &[&str], vars: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_auditor"));
    cmd.args(args).current_dir(root());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().expect("run auditor")
}

/// Every file in a layer's tar, read through the verifying stream to EOF.
fn layer_files(img: &image::Image, index: usize) -> Vec<(String, Vec<u8>)> {
    let mut tar = tar::Archive::new(img.open_layer_tar(index).unwrap());
    let mut files = Vec::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        files.push((path, data));
    }
    let mut rest = tar.into_inner();
    std::io::copy(&mut rest, &mut std::io::sink()).expect("the layer verifies at EOF");
    files
}

#[test]
fn every_transport_gives_the_same_image() {
    let registry = env("AUDITOR_TEST_REGISTRY");
    let manifest = env("AUDITOR_TEST_IMAGE_MANIFEST_DIGEST");
    let config = env("AUDITOR_TEST_IMAGE_CONFIG_DIGEST");
    let info = info();
    let diff_ids: Vec<String> = info["layers"].as_array().unwrap().iter().map(|l| l["diff_id"].as_str().unwrap().to_string()).collect();
    let blobs: Vec<String> = info["layers"].as_array().unwrap().iter().map(|l| l["digest"].as_str().unwrap().to_string()).collect();

    // transports that keep the registry manifest: same manifest digest
    for (reference, transport) in [
        (format!("docker://{registry}/auditor/test:v1"), Transport::Registry),
        (format!("{registry}/auditor/test:v1"), Transport::Registry),
        (format!("{registry}/auditor/test@{manifest}"), Transport::Registry),
        (format!("oci:{}:v1", env("AUDITOR_TEST_IMAGE_OCI_DIR")), Transport::OciLayout),
        (format!("oci-archive:{}", env("AUDITOR_TEST_IMAGE_OCI_ARCHIVE")), Transport::OciArchive),
    ] {
        let img = open(&reference);
        assert_eq!(img.transport, transport, "{reference}");
        assert_eq!(img.manifest_digest.as_deref(), Some(manifest.as_str()), "{reference}");
        assert_eq!(img.config_digest, config, "{reference}");
        assert_eq!(img.layers.iter().map(|l| l.digest.clone()).collect::<Vec<_>>(), blobs, "{reference}");
        assert_eq!(img.diff_ids(), diff_ids, "{reference}");
        assert_eq!(img.platform, "linux/amd64");
    }
    // transports that rewrite the manifest (Docker v2s2 by skopeo; none at
    // all for docker save and the engine): same config and diff-ids
    for (reference, transport, digest) in [
        (format!("docker://{registry}/auditor/test:v1-docker"), Transport::Registry, Some(env("AUDITOR_TEST_IMAGE_DOCKER_MANIFEST_DIGEST"))),
        (format!("docker-archive:{}", env("AUDITOR_TEST_IMAGE_DOCKER_ARCHIVE")), Transport::DockerArchive, None),
        (format!("docker-daemon:{}", env("AUDITOR_TEST_PODMAN_IMAGE")), Transport::DockerDaemon, None),
    ] {
        let img = open(&reference);
        assert_eq!((img.transport, img.manifest_digest.clone()), (transport, digest), "{reference}");
        assert_eq!(img.config_digest, config, "{reference}");
        assert_eq!(img.diff_ids(), diff_ids, "{reference}");
        assert_eq!(img.config.cmd, ["/bin/sh"], "{reference}");
        assert!(img.config.env.contains(&"PYTHONDONTWRITEBYTECODE=1".to_string()), "{reference}");
        assert!(img.config.history.iter().any(|h| h.created_by.contains("pip install --target")), "{reference}");
    }
}

#[test]
fn layers_stream_verified_with_the_real_wheel_inside_on_every_transport() {
    let registry = env("AUDITOR_TEST_REGISTRY");
    for reference in [
        format!("{registry}/auditor/test:v1"),
        format!("{registry}/auditor/test:v1-docker"),
        format!("{registry}/auditor/test:v1-zstd"),
        format!("{registry}/auditor/test:v1-plain"),
        format!("oci:{}:v1", env("AUDITOR_TEST_IMAGE_OCI_DIR")),
        format!("docker-archive:{}", env("AUDITOR_TEST_IMAGE_DOCKER_ARCHIVE")),
        format!("docker-daemon:{}", env("AUDITOR_TEST_PODMAN_IMAGE")),
    ] {
        let img = open(&reference);
        let files = layer_files(&img, 1);
        let record = files.iter().find(|(p, _)| p.ends_with("six-1.16.0.dist-info/RECORD")).unwrap_or_else(|| panic!("{reference}: no RECORD in layer 1"));
        let record = String::from_utf8_lossy(&record.1);
        assert!(record.contains("six.py,sha256="), "{reference}: {record}");
        let six = files.iter().find(|(p, _)| p.ends_with("dist-packages/six.py")).unwrap();
        assert!(String::from_utf8_lossy(&six.1).contains("__version__ = \"1.16.0\""), "{reference}");
        let app = layer_files(&img, 2);
        assert!(app.iter().any(|(p, _)| p == "etc/.wh.motd"), "{reference}: the whiteout is a plain entry of the layer");
    }
}

#[test]
fn docker_save_oci_form_reads_as_a_layout() {
    // Docker 25+ `docker save`: an OCI layout plus manifest.json in one tar
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("save.tar");
    let mut builder = tar::Builder::new(std::fs::File::create(&file).unwrap());
    builder.append_dir_all(".", env("AUDITOR_TEST_IMAGE_OCI_DIR")).unwrap();
    let manifest = b"[{\"Config\":\"blobs/sha256/x\",\"RepoTags\":[\"auditor/test:v1\"],\"Layers\":[]}]";
    let mut h = tar::Header::new_gnu();
    h.set_size(manifest.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    builder.append_data(&mut h, "manifest.json", &manifest[..]).unwrap();
    builder.into_inner().unwrap();
    let img = open(&format!("docker-archive:{}:v1", file.display()));
    assert_eq!((img.transport, img.manifest_digest.unwrap()), (Transport::DockerArchive, env("AUDITOR_TEST_IMAGE_MANIFEST_DIGEST")));
}

#[test]
fn index_picks_the_platform_or_lists_the_present_ones() {
    let registry = env("AUDITOR_TEST_REGISTRY");
    let info = info();
    let r: ImageRef = format!("{registry}/auditor/test:v1-multi").parse().unwrap();
    let arm = image::open(&r, &OpenOptions { platform: Some(Platform::parse("linux/arm64").unwrap()), ..OpenOptions::default() }).unwrap();
    assert_eq!(arm.manifest_digest.as_deref(), info["arm64_manifest_digest"].as_str());
    assert_eq!(arm.index_digest, Some(env("AUDITOR_TEST_IMAGE_INDEX_DIGEST")));
    assert_eq!(arm.platform, "linux/arm64");
    let amd = open(&format!("oci:{}:v1-multi", env("AUDITOR_TEST_IMAGE_OCI_DIR")));
    assert_eq!(amd.manifest_digest, Some(env("AUDITOR_TEST_IMAGE_MANIFEST_DIGEST")));
    let out = auditor(&["image", "inspect", &format!("{registry}/auditor/test:v1-multi"), "--platform", "linux/s390x"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("platform linux/s390x is not in the image index; present: linux/amd64, linux/arm64/v8"), "{}", stderr(&out));
}

#[test]
fn inspect_json_report_carries_the_image_fields() {
    let registry = env("AUDITOR_TEST_REGISTRY");
    let reference = format!("{registry}/auditor/test:v1");
    let first = auditor(&["image", "inspect", &reference, "--verify-layers", "--format", "json"]);
    let second = auditor(&["image", "inspect", &reference, "--verify-layers", "--format", "json"]);
    assert_eq!(code(&first), 0, "{}{}", stdout(&first), stderr(&first));
    assert_eq!(first.stdout, second.stdout, "same image, same bytes");
    let report = json(&first);
    let input = &report["inputs"][0];
    assert_eq!(input["ref"], format!("docker://{reference}"));
    assert_eq!(input["digest"], env("AUDITOR_TEST_IMAGE_MANIFEST_DIGEST"));
    assert_eq!(input["platform"], "linux/amd64");
    assert_eq!(input["layers"].as_array().unwrap().len(), 3);
    assert_eq!(input["diff_ids"][1], info()["layers"][1]["diff_id"]);
    assert_eq!((report["checks"][0]["id"].as_str(), report["checks"][0]["status"].as_str()), (Some("image-integrity"), Some("pass")));
    let text = stdout(&auditor(&["image", "inspect", &reference]));
    assert!(text.contains("pip install --target") && text.contains("label:      io.auditor.test=true"), "{text}");
}

/// A fault proxy (tests/services/fault_proxy.py) in front of the open registry.
struct Proxy {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Proxy {
    fn start(fault: &str, target: &str) -> Proxy {
        Proxy::start_with(fault, target, &[])
    }

    /// A proxy with more of fault_proxy.py's options (`--drip-interval 3`, ...).
    fn start_with(fault: &str, target: &str, options: &[&str]) -> Proxy {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("proxy.log");
        let mut child = Command::new("python3")
            .arg(root().join("tests/services/fault_proxy.py"))
            .args(["--upstream", &env("AUDITOR_TEST_REGISTRY"), "--fault", fault, "--target", target, "--lifetime", "300"])
            .args(options)
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the fault proxy");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("fault proxy printed {line:?}"));
        Proxy { child, port, log, _dir: dir }
    }

    fn reference(&self) -> String {
        format!("127.0.0.1:{}/auditor/test:v1", self.port)
    }

    /// Every logged request: `<time> <method> <path> <status> <fault>`.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Logged requests whose path ends with `target`: (time, status).
    fn requests(&self, target: &str) -> Vec<(f64, u16)> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f.len() >= 4 && f[2].ends_with(target)).then(|| (f[0].parse().unwrap(), f[3].parse().unwrap()))
            })
            .collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_layer() -> String {
    info()["layers"][1]["digest"].as_str().unwrap().to_string()
}

fn inspect_json(reference: &str, vars: &[(&str, &str)]) -> (i32, Value, String) {
    let out = auditor_env(&["image", "inspect", reference, "--verify-layers", "--format", "json"], vars);
    let value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (code(&out), value, stderr(&out))
}

#[test]
fn corrupted_blob_is_a_digest_mismatch_finding() {
    let layer = python_layer();
    let proxy = Proxy::start("corrupt", &layer);
    let (code, report, err) = inspect_json(&proxy.reference(), &[]);
    assert_eq!(code, 1, "{report}{err}");
    let finding = &report["checks"][0]["findings"][0];
    assert_eq!(finding["rule"], "image-integrity/digest-mismatch");
    assert_eq!(finding["evidence"][0]["layer"], layer.as_str());
    assert_eq!(report["verdict"], "fail");
    assert_eq!(proxy.requests(&layer).len(), 1, "a tampered blob is not retried into acceptance");
}

#[test]
fn wrong_size_is_a_size_mismatch_finding() {
    let layer = python_layer();
    let proxy = Proxy::start("size", &layer);
    let (code, report, err) = inspect_json(&proxy.reference(), &[]);
    assert_eq!(code, 1, "{report}{err}");
    let finding = &report["checks"][0]["findings"][0];
    assert_eq!(finding["rule"], "image-integrity/size-mismatch");
    assert_eq!(finding["evidence"][0]["layer"], layer.as_str());
    assert!(finding["message"].as_str().unwrap().contains("Content-Length"), "{finding}");
}

#[test]
fn a_500_then_a_200_succeeds_after_a_retry() {
    let layer = python_layer();
    let proxy = Proxy::start("500-once", &layer);
    let (code, report, err) = inspect_json(&proxy.reference(), &[]);
    assert_eq!(code, 0, "{report}{err}");
    let statuses: Vec<u16> = proxy.requests(&layer).iter().map(|r| r.1).collect();
    assert_eq!(statuses, [500, 200]);
}

#[test]
fn a_layer_that_keeps_failing_leaves_the_report_incomplete() {
    let layer = python_layer();
    let proxy = Proxy::start("500-always", &layer);
    let (code, report, err) = inspect_json(&proxy.reference(), &[]);
    assert_eq!(code, 3, "{report}{err}");
    assert_eq!(report["verdict"], "incomplete");
    assert_eq!(report["checks"][0]["status"], "error");
    let why = report["not_examined"][0].as_str().unwrap();
    assert!(why.contains(&layer) && why.contains("500") && why.contains("gave up after 5 attempts"), "{why}");
    assert_eq!(proxy.requests(&layer).len(), 5);
}

#[test]
fn a_stream_cut_mid_way_resumes_with_range() {
    let layer = info()["layers"][0]["digest"].as_str().unwrap().to_string(); // the 1 MB one
    let proxy = Proxy::start("cut-once", &layer);
    let (code, report, err) = inspect_json(&proxy.reference(), &[]);
    assert_eq!(code, 0, "{report}{err}");
    let statuses: Vec<u16> = proxy.requests(&layer).iter().map(|r| r.1).collect();
    assert_eq!(statuses, [200, 206], "the second request asks only for the rest");
}

#[test]
fn a_corrupted_config_fails_at_open_with_a_finding() {
    let config = env("AUDITOR_TEST_IMAGE_CONFIG_DIGEST");
    let proxy = Proxy::start("corrupt", &config);
    let (code, report, err) = inspect_json(&proxy.reference(), &[]);
    assert_eq!(code, 1, "{report}{err}");
    assert_eq!(report["checks"][0]["findings"][0]["rule"], "image-integrity/digest-mismatch");
    assert_eq!(report["checks"][0]["findings"][0]["evidence"][0]["layer"], config.as_str());
}

#[test]
fn a_429_with_retry_after_is_honoured() {
    let layer = python_layer();
    let proxy = Proxy::start("429-once", &layer);
    let started = Instant::now();
    let (code, report, err) = inspect_json(&proxy.reference(), &[]);
    assert_eq!(code, 0, "{report}{err}");
    assert!(started.elapsed() >= Duration::from_secs(2), "finished in {:?}", started.elapsed());
    let requests = proxy.requests(&layer);
    assert_eq!(requests.iter().map(|r| r.1).collect::<Vec<_>>(), [429, 200]);
    let waited = requests[1].0 - requests[0].0;
    assert!((2.0..10.0).contains(&waited), "retried {waited:.3} s after the 429 (Retry-After: 2)");
}

#[test]
fn a_401_without_credentials_is_a_clear_auth_error() {
    let proxy = Proxy::start("auth", "");
    let home = tempfile::tempdir().unwrap();
    let out = auditor_env(&["image", "inspect", &proxy.reference()], &[("HOME", home.path().to_str().unwrap())]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("authentication failed") && err.contains("401 Unauthorized") && err.contains("without credentials"), "{err}");
}

#[test]
fn a_bearer_challenge_is_followed_to_a_token() {
    let proxy = Proxy::start("bearer", "");
    let home = tempfile::tempdir().unwrap();
    let (code, report, err) = inspect_json(&proxy.reference(), &[("HOME", home.path().to_str().unwrap())]);
    assert_eq!(code, 0, "{report}{err}");
    let log = std::fs::read_to_string(&proxy.log).unwrap();
    assert!(log.contains("/token?") && log.contains("token:repository:auditor/test:pull:anonymous"), "{log}");
    assert!(proxy.requests(&python_layer()).iter().all(|r| r.1 == 200), "{log}");
    // with credentials for this registry, the token request carries them
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), format!(r#"{{"auths":{{"127.0.0.1:{}":{{"username":"u","password":"p"}}}}}}"#, proxy.port)).unwrap();
    let (code, _, err) = inspect_json(&proxy.reference(), &[("HOME", home.path().to_str().unwrap()), ("DOCKER_CONFIG", dir.path().to_str().unwrap())]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&proxy.log).unwrap().contains("token:repository:auditor/test:pull:basic"));
}

fn auth_file(dir: &Path, password: &str) -> PathBuf {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{}:{password}", env("AUDITOR_TEST_REGISTRY_USER")));
    let path = dir.join("config.json");
    let json = format!(r#"{{"auths":{{"{}":{{"auth":"{b64}"}}}}}}"#, env("AUDITOR_TEST_REGISTRY_AUTH"));
    std::fs::write(&path, json).unwrap();
    path
}

#[test]
fn credentials_from_config_json_work_against_the_htpasswd_registry() {
    let reference = format!("{}/auditor/test:v1", env("AUDITOR_TEST_REGISTRY_AUTH"));
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    // none: refused
    let out = auditor_env(&["image", "inspect", &reference], &[("HOME", home)]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    // DOCKER_CONFIG/config.json
    let dir = tempfile::tempdir().unwrap();
    auth_file(dir.path(), &env("AUDITOR_TEST_REGISTRY_PASSWORD"));
    let (code_ok, report, err) = inspect_json(&reference, &[("HOME", home), ("DOCKER_CONFIG", dir.path().to_str().unwrap())]);
    assert_eq!(code_ok, 0, "{err}");
    assert_eq!(report["inputs"][0]["digest"], env("AUDITOR_TEST_IMAGE_MANIFEST_DIGEST"));
    // REGISTRY_AUTH_FILE with a wrong password: the error names the source
    let bad = tempfile::tempdir().unwrap();
    let file = auth_file(bad.path(), "wrong");
    let out = auditor_env(&["image", "inspect", &reference], &[("HOME", home), ("REGISTRY_AUTH_FILE", file.to_str().unwrap())]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains(&format!("credentials of auditor from {}", file.display())), "{}", stderr(&out));
}

#[test]
fn a_credential_helper_supplies_credentials() {
    let registry = env("AUDITOR_TEST_REGISTRY_AUTH");
    let dir = tempfile::tempdir().unwrap();
    let helper = dir.path().join("docker-credential-auditortest");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\nread server\n[ \"$server\" = '{registry}' ] || {{ echo 'credentials not found'; exit 1; }}\nprintf '{{\"ServerURL\":\"%s\",\"Username\":\"{}\",\"Secret\":\"{}\"}}' \"$server\"\n",
            env("AUDITOR_TEST_REGISTRY_USER"),
            env("AUDITOR_TEST_REGISTRY_PASSWORD")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.path().join("config.json"), format!(r#"{{"credHelpers":{{"{registry}":"auditortest"}}}}"#)).unwrap();
    let path = format!("{}:{}", dir.path().display(), std::env::var("PATH").unwrap_or_default());
    let (code, report, err) = inspect_json(&format!("{registry}/auditor/test:v1-docker"), &[("DOCKER_CONFIG", dir.path().to_str().unwrap()), ("PATH", &path)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["inputs"][0]["digest"], env("AUDITOR_TEST_IMAGE_DOCKER_MANIFEST_DIGEST"));
}

#[test]
fn missing_images_and_bad_references_exit_2() {
    let registry = env("AUDITOR_TEST_REGISTRY");
    for reference in [
        format!("{registry}/auditor/does-not-exist:v1"),
        "docker-daemon:localhost/auditor/does-not-exist:v1".to_string(),
        format!("oci:{}:nope", env("AUDITOR_TEST_IMAGE_OCI_DIR")),
        "oci:/nonexistent/layout".to_string(),
        "docker-archive:/nonexistent.tar".to_string(),
        "ftp://x/y".to_string(),
    ] {
        let out = auditor(&["image", "inspect", &reference]);
        assert_eq!(code(&out), 2, "{reference}: {}", stderr(&out));
        // a reference that is not one is refused by the argument parser, naming the argument
        let err = stderr(&out);
        assert!(err.starts_with("auditor: error: ") || err.starts_with("error: invalid value") && err.contains("<REF>"), "{reference}: {err}");
    }
}

/// The Engine API over the podman socket, as the services README does it.
fn engine(method: &str, path: &str, body: Option<&str>) -> String {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-m", "60", "--unix-socket", &env("AUDITOR_TEST_PODMAN_SOCK"), "-X", method]);
    if let Some(body) = body {
        cmd.args(["-H", "Content-Type: application/json", "-d", body]);
    }
    let out = cmd.arg(format!("http://d/v1.41{path}")).output().expect("curl");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn container_changes_through_the_engine() {
    let name = format!("auditor-changes-{}", std::process::id());
    engine("DELETE", &format!("/containers/{name}?force=1"), None);
    let create = format!(
        r#"{{"Image":"{}","Cmd":["/bin/sh","-c","echo hi > /tmp/new.txt; rm /etc/issue"],"HostConfig":{{"NetworkMode":"none"}}}}"#,
        env("AUDITOR_TEST_PODMAN_IMAGE")
    );
    let created: Value = serde_json::from_str(&engine("POST", &format!("/containers/create?name={name}"), Some(&create))).unwrap();
    let id = created["Id"].as_str().expect("container created").to_string();
    engine("POST", &format!("/containers/{id}/start"), None);
    engine("POST", &format!("/containers/{id}/wait"), None);
    let out = auditor(&["image", "changes", &name, "--format", "json"]);
    let text = stdout(&auditor(&["image", "changes", &id]));
    engine("DELETE", &format!("/containers/{id}?force=1"), None);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let changes = json(&out);
    let has = |path: &str, kind: &str| changes.as_array().unwrap().iter().any(|c| c["path"] == path && c["kind"] == kind);
    assert!(has("/tmp/new.txt", "added") && has("/etc/issue", "deleted"), "{changes}");
    assert!(text.contains("A /tmp/new.txt\n") && text.contains("D /etc/issue\n"), "{text}");
    let missing = auditor(&["image", "changes", "auditor-no-such-container"]);
    assert_eq!(code(&missing), 2);
}

/// `auditor image inspect REF --verify-layers --format json ARGS...` with its
/// working directory, HOME and TMPDIR in a fresh directory that must stay
/// empty: a registry fault never makes the auditor write anything.
fn inspect_sandboxed(reference: &str, args: &[&str]) -> Measured {
    let sandbox = tempfile::tempdir().unwrap();
    let mut all = vec!["image", "inspect", reference, "--verify-layers", "--format", "json"];
    all.extend_from_slice(args);
    let m = auditor_measured(&all, sandbox.path(), sandbox.path());
    assert!(snapshot(sandbox.path()).is_empty(), "the auditor wrote {:?}", snapshot(sandbox.path()));
    assert!(!m.stderr.contains("panicked"), "{}", m.stderr);
    eprintln!("{reference}: exit {}, peak RSS {} KiB, {:.1} s", m.code, m.max_rss_kib, m.elapsed.as_secs_f64());
    m
}

#[test]
fn a_connection_reset_mid_blob_resumes_and_one_that_keeps_resetting_is_a_clear_error() {
    let layer = info()["layers"][0]["digest"].as_str().unwrap().to_string(); // the 1 MB one
    let proxy = Proxy::start("reset-once", &layer);
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 0, "{}{}", m.stdout, m.stderr);
    let statuses: Vec<u16> = proxy.requests(&layer).iter().map(|r| r.1).collect();
    assert_eq!(statuses, [200, 206], "resumed with Range after the reset");

    let proxy = Proxy::start("reset-always", &layer);
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 3, "{}{}", m.stdout, m.stderr);
    let why = m.json()["not_examined"][0].as_str().unwrap().to_string();
    assert!(why.contains(&layer) && why.contains("the stream broke at byte") && why.contains("gave up after 5 attempts"), "{why}");
    assert_eq!(proxy.requests(&layer).len(), 5);
}

#[test]
fn a_slow_drip_times_out_then_resumes_or_is_a_clear_error() {
    let layer = info()["layers"][0]["digest"].as_str().unwrap().to_string();
    let proxy = Proxy::start_with("drip-once", &layer, &["--drip-interval", "3"]);
    let m = inspect_sandboxed(&proxy.reference(), &["--read-timeout", "1"]);
    assert_eq!(m.code, 0, "{}{}", m.stdout, m.stderr);
    let statuses: Vec<u16> = proxy.requests(&layer).iter().map(|r| r.1).collect();
    assert_eq!(statuses, [200, 206], "the stalled stream was resumed with Range");
    assert!(m.elapsed < Duration::from_secs(30), "{:?}", m.elapsed);

    // A byte every 0.3 s is never silent for the 1 s timeout, but stalled all the same.
    let proxy = Proxy::start_with("drip", &layer, &["--drip-interval", "0.3"]);
    let m = inspect_sandboxed(&proxy.reference(), &["--read-timeout", "1"]);
    assert_eq!(m.code, 3, "{}{}", m.stdout, m.stderr);
    let why = m.json()["not_examined"][0].as_str().unwrap().to_string();
    assert!(why.contains(&layer) && why.contains("a stalled stream") && why.contains("gave up after 5 attempts"), "{why}");
    assert!(m.elapsed < Duration::from_secs(60), "{:?}", m.elapsed);
}

#[test]
fn a_redirect_to_another_host_is_refused_unless_allowed() {
    let layer = python_layer();
    let proxy = Proxy::start("redirect", &layer);
    let other = format!("localhost:{}", proxy.port);
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 3, "{}{}", m.stdout, m.stderr);
    let why = m.json()["not_examined"][0].as_str().unwrap().to_string();
    assert!(why.contains(&format!("redirected to {other}, another host")) && why.contains(&format!("--allow-redirect {other}")), "{why}");
    assert!(!proxy.log().contains("?redirected 200"), "nothing was fetched from the other host: {}", proxy.log());

    let proxy = Proxy::start("redirect", &layer);
    let other = format!("localhost:{}", proxy.port);
    let m = inspect_sandboxed(&proxy.reference(), &["--allow-redirect", &other]);
    assert_eq!(m.code, 0, "{}{}", m.stdout, m.stderr);
    assert!(proxy.log().contains("?redirected 200"), "{}", proxy.log());

    let proxy = Proxy::start("redirect-same", &layer);
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 0, "a redirect to the registry itself is followed: {}{}", m.stdout, m.stderr);
    assert!(proxy.log().contains("?redirected 200"), "{}", proxy.log());
}

#[test]
fn a_redirect_chain_stops_at_the_cap() {
    let layer = python_layer();
    let proxy = Proxy::start("redirect-loop", &layer);
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 3, "{}{}", m.stdout, m.stderr);
    let why = m.json()["not_examined"][0].as_str().unwrap().to_string();
    assert!(why.contains(&layer) && why.ends_with("more than 10 redirects"), "{why}");
    // the request and ten redirects followed, the eleventh refused; a refusal is not retried
    let log = proxy.log();
    let statuses: Vec<&str> = log.lines().filter(|l| l.contains(&layer)).map(|l| l.split(' ').nth(3).unwrap()).collect();
    assert_eq!(statuses, ["307"; 11], "{log}");
}

/// A registry on loopback that the auditor talks to over HTTPS, as to any
/// registry not on `localhost`/127.x: the fault proxy speaks TLS with a
/// certificate for [`Tls::HOST`] signed by a throwaway CA, and the auditor
/// runs in a user and mount namespace whose `/etc/hosts` resolves that name
/// to 127.0.0.1, with the CA in `SSL_CERT_FILE`.
struct Tls {
    dir: tempfile::TempDir,
}

impl Tls {
    const HOST: &str = "auditor-registry.test";

    fn new() -> Tls {
        let dir = tempfile::tempdir().unwrap();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl").args(args).current_dir(dir.path()).output().expect("openssl runs (tests/services/start.sh installs it)");
            assert!(out.status.success(), "openssl {args:?}: {}", stderr(&out));
        };
        openssl(&["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=auditor test CA"]);
        openssl(&["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "leaf.csr", "-subj", &format!("/CN={}", Tls::HOST)]);
        let ext = format!("subjectAltName=DNS:{}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n", Tls::HOST);
        std::fs::write(dir.path().join("leaf.ext"), ext).unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "cert.pem",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ]);
        std::fs::write(dir.path().join("hosts"), format!("127.0.0.1 localhost\n127.0.0.1 {}\n", Tls::HOST)).unwrap();
        Tls { dir }
    }

    fn proxy(&self, fault: &str, target: &str) -> Proxy {
        let file = |name: &str| self.dir.path().join(name).display().to_string();
        Proxy::start_with(fault, target, &["--tls-cert", &file("cert.pem"), "--tls-key", &file("key.pem")])
    }

    /// `auditor image inspect HOST:PORT/auditor/test:v1 --verify-layers
    /// --format json ARGS`, with its working directory, HOME and TMPDIR in
    /// a directory that must stay empty.
    fn inspect(&self, proxy: &Proxy, args: &[&str]) -> std::process::Output {
        let sandbox = tempfile::tempdir().unwrap();
        let reference = format!("{}:{}/auditor/test:v1", Tls::HOST, proxy.port);
        let hosts = self.dir.path().join("hosts");
        let out = Command::new("unshare")
            .args(["-rm", "sh", "-c", &format!("mount --bind {} /etc/hosts && exec \"$0\" \"$@\"", hosts.display())])
            .arg(env!("CARGO_BIN_EXE_auditor"))
            .args(["image", "inspect", &reference, "--verify-layers", "--format", "json"])
            .args(args)
            .current_dir(sandbox.path())
            .env("HOME", sandbox.path())
            .env("TMPDIR", sandbox.path())
            .env("SSL_CERT_FILE", self.dir.path().join("ca.pem"))
            .output()
            .expect("unshare (util-linux) runs");
        assert!(snapshot(sandbox.path()).is_empty(), "the auditor wrote {:?}", snapshot(sandbox.path()));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
        out
    }
}

#[test]
fn a_redirect_from_https_to_plain_http_is_refused_even_to_an_allowed_host() {
    let tls = Tls::new();
    let layer = python_layer();
    // over HTTPS, untouched, the image reads: what is refused below is the redirect
    let proxy = tls.proxy("none", &layer);
    let out = tls.inspect(&proxy, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(proxy.requests(&layer).iter().map(|r| r.1).collect::<Vec<_>>(), [200]);

    let proxy = tls.proxy("redirect-http", &layer);
    let out = tls.inspect(&proxy, &["--allow-redirect", Tls::HOST]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let why = json(&out)["not_examined"][0].as_str().unwrap().to_string();
    assert!(why.contains(&layer) && why.ends_with("refusing a redirect from HTTPS to plain HTTP"), "{why}");
    assert_eq!(proxy.requests(&layer).iter().map(|r| r.1).collect::<Vec<_>>(), [307], "not followed, not retried: {}", proxy.log());
}

#[test]
fn image_diff_reaches_nothing_but_the_loopback_registry_it_names() {
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().to_str().unwrap();
    let layout = format!("oci:{}:v1", env("AUDITOR_TEST_IMAGE_OCI_DIR"));
    let diff = |pinned: &str, upstream: &str| auditor_traced(&["image", "diff", pinned, "--upstream", upstream, "--format", "json", "--cache-dir", cache]);
    // two images on disk: no socket at all, not even the Docker socket DOCKER_HOST names
    let (out, peers) = diff(&layout, &format!("oci-archive:{}", env("AUDITOR_TEST_IMAGE_OCI_ARCHIVE")));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(peers.is_empty(), "{peers:?}");
    // the loopback registry: its address and nothing else
    let registry = env("AUDITOR_TEST_REGISTRY");
    let (out, peers) = diff(&format!("{registry}/auditor/test:v1"), &layout);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let named = Peer::Inet(registry.split(':').next().unwrap().parse().unwrap(), registry.rsplit(':').next().unwrap().parse().unwrap());
    assert_eq!(peers, [named], "only the registry the reference names");
    // the witness sees an attempt to leave loopback (TEST-NET-1, never routed)
    let (out, peers) = diff("192.0.2.1:5000/auditor/test:v1", &layout);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(peers.iter().any(|p| !p.is_loopback()), "{peers:?}");
}

#[test]
fn an_oversized_manifest_is_refused_before_it_is_read() {
    let proxy = Proxy::start("big-manifest", "manifests/v1");
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 2, "{}{}", m.stdout, m.stderr);
    assert!(m.stderr.contains("malformed manifest: 5242880 bytes, over the limit of 4194304 bytes (raise --max-manifest-size)"), "{}", m.stderr);
    assert!(m.max_rss_kib < 64 << 10, "{} KiB", m.max_rss_kib);
}

#[test]
fn a_manifest_that_references_itself_or_nests_an_index_is_a_clear_error() {
    let proxy = Proxy::start("index-self", "manifests/v1");
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 1, "{}{}", m.stdout, m.stderr);
    let finding = &m.json()["checks"][0]["findings"][0];
    assert!(finding["rule"].as_str().unwrap().starts_with("image-integrity/"), "the entry is not the document it names: {finding}");
    assert_eq!(proxy.log().lines().filter(|l| l.contains("index-self")).count(), 2, "the tag, then the entry once: {}", proxy.log());

    let proxy = Proxy::start("index-nested", "manifests/v1");
    let m = inspect_sandboxed(&proxy.reference(), &[]);
    assert_eq!(m.code, 2, "{}{}", m.stdout, m.stderr);
    assert!(m.stderr.contains("an index nested in an index"), "{}", m.stderr);
    assert!(proxy.log().lines().count() <= 4, "{}", proxy.log());
}
