//! Helpers shared by the integration tests: run the real binary, build
//! bundles in temporary directories.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const PASS: &str = "samples/bundles/dsv41flash-h200-dspark-pass";
pub const FAIL_INHERITED: &str = "samples/bundles/forbidden-env-inherited-fail";
/// A single-node SGLang DeepSeek-V4 agentic MTP run's RESULT_FILENAME (B200).
pub const DSV4_RF: &str = "dsv4_tp8_conc8_kvnone_spec-mtp_fp4_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc8_b200-dgxc_1";

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `.tar.gz` of the real material in `../shared/data/inferencex/`,
/// unpacked into a temporary directory.
pub fn unpack_shared(name: &str) -> tempfile::TempDir {
    let archive = root().join("../shared/data/inferencex").join(name);
    assert!(archive.is_file(), "{} is missing (shared/ sits beside the repository)", archive.display());
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(dir.path()).status().expect("run tar");
    assert!(status.success(), "tar -xzf {}", archive.display());
    dir
}

/// Run `auditor` with `args` from the repository root.
pub fn auditor(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_auditor"))
        .args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        // a test run inside GitHub Actions must not write to the real job summary
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("run auditor")
}

pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The golden tables of the samples (the DSpark cell of DeepSeek-V4.1-Flash).
pub const GOLDEN: &str = "samples/golden";

/// Run `auditor audit ARGS... --golden samples/golden`.
pub fn audit(args: &[&str]) -> Output {
    let mut all = vec!["audit"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--golden", GOLDEN]);
    auditor(&all)
}

/// Write `files` (relative path, content) under `dir`.
pub fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// All regular files under `dir`, relative, sorted.
pub fn list_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Zip the tree at `dir` (members under `prefix/`) into `zip_path`.
pub fn zip_tree(dir: &Path, prefix: &str, zip_path: &Path) {
    let file = std::fs::File::create(zip_path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for rel in list_files(dir) {
        zip.start_file(format!("{prefix}/{}", rel.display()), options).unwrap();
        std::io::copy(&mut std::fs::File::open(dir.join(&rel)).unwrap(), &mut zip).unwrap();
    }
    zip.finish().unwrap();
}

/// A `.tar.gz` of the tree at `dir` (members under `prefix/`).
pub fn targz_tree(dir: &Path, prefix: &str, out: &Path) {
    let gz = flate2::write::GzEncoder::new(std::fs::File::create(out).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for rel in list_files(dir) {
        tar.append_path_with_name(dir.join(&rel), format!("{prefix}/{}", rel.display())).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

/// A finished `auditor` run and what it cost.
pub struct Measured {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// Peak resident set size of the auditor process (Linux `ru_maxrss`), KiB.
    pub max_rss_kib: u64,
    pub elapsed: std::time::Duration,
}

impl Measured {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", self.stdout, self.stderr))
    }
}

/// Run `auditor ARGS` in `cwd` with `HOME` and `TMPDIR` pointed at `home`,
/// and measure the peak RSS of that one process, so tests can hold it to
/// the documented memory ceiling. GNU time (installed by
/// tests/services/start.sh) measures it: `wait4` here would also count the
/// test process, whose memory a spawned child inherits in its `ru_maxrss`.
/// Output goes through files outside `cwd` and `home`.
pub fn auditor_measured(args: &[&str], cwd: &Path, home: &Path) -> Measured {
    let outputs = tempfile::tempdir().unwrap();
    let (out_path, err_path, rss_path) = (outputs.path().join("stdout"), outputs.path().join("stderr"), outputs.path().join("rss"));
    let start = std::time::Instant::now();
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&rss_path)
        .arg(env!("CARGO_BIN_EXE_auditor"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("TMPDIR", home)
        .env_remove("NO_COLOR")
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .status()
        .expect("/usr/bin/time runs auditor (tests/services/start.sh installs it)");
    let elapsed = start.elapsed();
    let rss = std::fs::read_to_string(&rss_path).unwrap();
    assert!(!rss.contains("terminated by signal"), "auditor {args:?}: {rss}");
    Measured {
        code: status.code().expect("exit code"),
        stdout: std::fs::read_to_string(&out_path).unwrap(),
        stderr: std::fs::read_to_string(&err_path).unwrap(),
        max_rss_kib: rss.trim().lines().last().and_then(|l| l.parse().ok()).unwrap_or_else(|| panic!("GNU time wrote {rss:?}")),
        elapsed,
    }
}

/// Every path under `dir` (directories too) with its size and mtime: two
/// snapshots differ if anything was created, removed or written there.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.insert(path, (meta.len(), meta.modified().unwrap()));
        }
    }
    out
}

/// A temporary directory holding `dirs`, and `sentinel/<file>` reading
/// "untouched": the place hostile names and links aim at, which a test
/// checks is still untouched afterwards.
pub fn sandbox_root(dirs: &[&str], file: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for dir in dirs.iter().chain(&["sentinel"]) {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    std::fs::write(root.path().join("sentinel").join(file), "untouched\n").unwrap();
    root
}

/// The check `id` of a JSON report.
pub fn check<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}: {report:#}"))
}

/// Every finding of every check of a JSON report.
pub fn findings(report: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    report["checks"].as_array().unwrap().iter().flat_map(|c| c["findings"].as_array().unwrap())
}

/// An address a traced run connected or sent to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    Inet(std::net::IpAddr, u16),
    Unix(String),
    /// Any other family (`AF_NETLINK`, ...), as strace names it.
    Other(String),
}

impl Peer {
    pub fn is_loopback(&self) -> bool {
        matches!(self, Peer::Inet(ip, _) if ip.is_loopback() || matches!(ip, std::net::IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())))
    }
}

/// Run `auditor ARGS` from the repository root under `strace -f`
/// (tests/services/start.sh installs it) and return every address it, any
/// of its threads or any child connected or sent to (`connect`, `sendto`,
/// `sendmsg`, `sendmmsg`): the witness of where the auditor tried to reach,
/// whether or not the attempt got anywhere.
pub fn auditor_traced(args: &[&str]) -> (Output, Vec<Peer>) {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-q", "-e", "trace=connect,sendto,sendmsg,sendmmsg", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_auditor"))
        .args(args)
        .current_dir(root())
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("strace runs auditor (tests/services/start.sh installs it)");
    let text = std::fs::read_to_string(&trace).unwrap_or_else(|e| panic!("strace wrote no trace ({e}): {}", stderr(&out)));
    // the tracer followed the auditor to its end: otherwise an empty list proves nothing
    assert!(text.contains("+++ exited with "), "strace did not trace auditor {args:?}: {text}{}", stderr(&out));
    (out, strace_peers(&text))
}

/// The socket addresses in an strace log: `{sa_family=AF_INET, sin_port=htons(5000),
/// sin_addr=inet_addr("127.0.0.1")}`, `{sa_family=AF_INET6, sin6_port=htons(443), ...,
/// inet_pton(AF_INET6, "::1", &sin6_addr), ...}`, `{sa_family=AF_UNIX, sun_path="/x"}`.
fn strace_peers(text: &str) -> Vec<Peer> {
    let inet = regex::Regex::new(r#"^AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)"#).unwrap();
    let inet6 = regex::Regex::new(r#"^AF_INET6, sin6_port=htons\((\d+)\),.*?inet_pton\(AF_INET6, "([^"]+)""#).unwrap();
    let unix = regex::Regex::new(r#"^AF_UNIX, sun_path=(.*)$"#).unwrap();
    let mut peers = Vec::new();
    for line in text.lines() {
        for rest in line.match_indices("{sa_family=").map(|(i, m)| &line[i + m.len()..]) {
            let addr = &rest[..rest.find('}').unwrap_or(rest.len())];
            let peer = if let Some(c) = inet.captures(addr).or_else(|| inet6.captures(addr)) {
                Peer::Inet(c[2].parse().unwrap_or_else(|e| panic!("{addr}: {e}")), c[1].parse().unwrap())
            } else if let Some(c) = unix.captures(addr) {
                Peer::Unix(c[1].trim_matches('"').to_string())
            } else {
                Peer::Other(addr.split(',').next().unwrap_or(addr).to_string())
            };
            if !peers.contains(&peer) {
                peers.push(peer);
            }
        }
    }
    peers
}

#[test]
fn strace_addresses_are_read_in_every_family() {
    let log = r#"12  connect(6, {sa_family=AF_INET, sin_port=htons(5000), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS
13  connect(7, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28 <unfinished ...>
13  sendto(3, "x", 1, MSG_NOSIGNAL, {sa_family=AF_UNIX, sun_path="/run/docker.sock"}, 110) = 1
14  sendto(4, [{nlmsg_len=20}], 20, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 20
14  sendto(5, "q", 1, 0, NULL, 0) = 1"#;
    let peers = strace_peers(log);
    assert_eq!(
        peers,
        [
            Peer::Inet("127.0.0.1".parse().unwrap(), 5000),
            Peer::Inet("2001:db8::1".parse().unwrap(), 443),
            Peer::Unix("/run/docker.sock".into()),
            Peer::Other("AF_NETLINK".into())
        ]
    );
    assert_eq!(peers.iter().map(Peer::is_loopback).collect::<Vec<_>>(), [true, false, false, false]);
}

/// A check's findings as (rule, severity, file, line) of their first evidence.
pub fn finding_places(check: &serde_json::Value) -> Vec<(String, String, String, u64)> {
    check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let e = &f["evidence"][0];
            (f["rule"].as_str().unwrap().into(), f["severity"].as_str().unwrap().into(), e["file"].as_str().unwrap().into(), e["line"].as_u64().unwrap())
        })
        .collect()
}
