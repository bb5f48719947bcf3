//! Hostile bundles: member names that climb out of the archive, a million
//! tiny members, a 10 GB file without a newline, bytes that are not text,
//! archives whose headers lie, decompression bombs. Each input is made
//! here at run time (nothing big is committed) inside a sandbox directory;
//! the auditor runs with its working directory, HOME and TMPDIR inside that
//! sandbox, and every test asserts the finding or note, an exit code that
//! never passes silently, a peak RSS under the documented memory ceiling,
//! and that nothing under the sandbox was created or changed.

use crate::common::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The memory ceiling docs/GUIDE.md documents (Limits), in KiB.
const CEILING_KIB: u64 = 512 << 10;

/// A directory holding the input, the auditor's working directory and
/// home, and a sentinel directory an escaping member name points at.
struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox { root: sandbox_root(&["input", "cwd/a/b", "home"], "keep") }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// Run the auditor on `args`; assert the sandbox is unchanged and the
    /// peak RSS is under the ceiling.
    fn run(&self, name: &str, args: &[&str]) -> Measured {
        let before = snapshot(self.root.path());
        let m = auditor_measured(args, &self.path("cwd/a/b"), &self.path("home"));
        assert_eq!(snapshot(self.root.path()), before, "{name}: the auditor wrote under the sandbox");
        eprintln!("{name}: exit {}, peak RSS {} KiB, {:.1} s", m.code, m.max_rss_kib, m.elapsed.as_secs_f64());
        assert!(!m.stderr.contains("panicked"), "{name}: {}", m.stderr);
        assert!(m.max_rss_kib < CEILING_KIB, "{name}: peak RSS {} KiB is over the ceiling", m.max_rss_kib);
        m
    }
}

fn str_of(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The report's record of the file at `path`.
fn file_entry<'a>(report: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    report["files"].as_array().unwrap().iter().find(|f| f["path"] == path).unwrap_or_else(|| panic!("{path} not in {}", report["files"]))
}

/// A tar header for `name` taken as is: `tar::Header::set_path` refuses `..`
/// and absolute names, which is what this test needs to write.
fn raw_tar_header(name: &str, size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    header.set_size(size);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    header
}

const SLIP: &str = "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n";

#[test]
fn member_names_that_climb_out_are_read_in_place_reported_and_never_written() {
    let sb = Sandbox::new();
    let absolute = format!("{}/absolute.sh", str_of(&sb.path("sentinel")));
    let members: [(&str, &str); 4] = [
        ("server_logs_x/results/server.log", "[2026-09-02 14:40:07] server started\n"),
        ("../../../sentinel/slip.sh", SLIP),
        (&absolute, "export ABSOLUTE=1\n"),
        ("..\\..\\windows.sh", "export WINDOWS=1\n"),
    ];
    let zip_path = sb.path("input/slip.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    for (name, content) in &members {
        zip.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(content.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    let tgz_path = sb.path("input/slip.tar.gz");
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(std::fs::File::create(&tgz_path).unwrap(), flate2::Compression::fast()));
    for (name, content) in &members {
        tar.append(&raw_tar_header(name, content.len() as u64), content.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();

    for archive in [&zip_path, &tgz_path] {
        let m = sb.run("zip-slip", &["audit", str_of(archive), "--format", "json"]);
        let report = m.json();
        assert_eq!(m.code, 1, "the forbidden flag in the escaping member is still audited: {}", m.stdout);
        let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
        assert_eq!(check["status"], "fail", "{check}");
        assert!(check.to_string().contains("../../../sentinel/slip.sh"), "{check}");
        for name in ["../../../sentinel/slip.sh", absolute.trim_start_matches('/'), "..\\..\\windows.sh"] {
            let entry = file_entry(&report, name);
            assert_eq!(entry["status"], "partial", "{entry}");
            assert!(entry["reason"].as_str().unwrap().contains("points outside the archive"), "{entry}");
        }
        assert_eq!(file_entry(&report, "server_logs_x/results/server.log")["status"], "read");
    }
    assert!(!sb.path("sentinel/slip.sh").exists() && !sb.path("sentinel/absolute.sh").exists());
}

/// `count` one-line members named `bundle/mNNNNNNN.log`.
fn tiny_members(count: u32) -> impl Iterator<Item = String> {
    (0..count).map(|i| format!("bundle/m{i:07}.log"))
}

const MILLION: u32 = 1_000_000;

fn assert_stopped_at_the_member_limit(m: &Measured) {
    assert_eq!(m.code, 3, "{}{}", m.stdout, m.stderr);
    let report = m.json();
    assert_eq!(report["verdict"], "incomplete");
    let notes = report["not_examined"].to_string();
    assert!(notes.contains("more than 200000 members") && notes.contains("--max-members"), "{notes}");
    assert_eq!(report["files"].as_array().unwrap().len(), 200_000);
    assert!(m.elapsed.as_secs() < 300, "took {:?}", m.elapsed);
}

#[test]
fn a_million_member_tar_gz_stops_at_the_member_limit() {
    let sb = Sandbox::new();
    let path = sb.path("input/million.tar.gz");
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(std::fs::File::create(&path).unwrap(), flate2::Compression::fast()));
    for name in tiny_members(MILLION) {
        let mut header = tar::Header::new_gnu();
        header.set_size(2);
        header.set_mode(0o644);
        tar.append_data(&mut header, name, &b"x\n"[..]).unwrap();
    }
    // past the limit: a name that climbs out is still noted, never extracted
    tar.append(&raw_tar_header("../../sentinel/late.sh", SLIP.len() as u64), SLIP.as_bytes()).unwrap();
    tar.into_inner().unwrap().finish().unwrap();
    // The names past the limit are read to the archive's end: given the time, on a loaded machine too.
    let m = sb.run("million-tar-gz", &["audit", str_of(&path), "--format", "json", "--max-scan-seconds", "240"]);
    assert_stopped_at_the_member_limit(&m);
    let notes = m.json()["not_examined"].to_string();
    assert!(
        notes.contains(
            "million.tar.gz: past the member limit, 800001 more member name(s) were read (to the archive's end), not their content: 1 point outside the archive (absolute, or with ..), never extracted: ../../sentinel/late.sh"
        ),
        "{notes}"
    );
}

#[test]
fn a_million_member_zip_stops_at_the_member_limit() {
    let sb = Sandbox::new();
    let path = sb.path("input/million.zip");
    let mut zip = zip::ZipWriter::new(std::io::BufWriter::new(std::fs::File::create(&path).unwrap()));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for name in tiny_members(MILLION) {
        zip.start_file(name, stored).unwrap();
        zip.write_all(b"x\n").unwrap();
    }
    zip.finish().unwrap();
    let m = sb.run("million-zip", &["audit", str_of(&path), "--format", "json"]);
    assert_stopped_at_the_member_limit(&m);
    // The central directory (about 120 bytes an entry in memory) is not loaded: the count says too many.
    let notes = m.json()["not_examined"].to_string();
    assert!(notes.contains("lists 1000000 entries, more than --max-members allows"), "{notes}");
}

#[test]
fn a_ten_gigabyte_line_is_cut_and_memory_stays_flat() {
    let sb = Sandbox::new();
    let bundle = sb.path("input/bundle");
    write_tree(&bundle, &[("server_logs_x/results/server.log", "[2026-09-02 14:40:07] server started\n")]);
    let big = bundle.join("server_logs_x/results/big.log");
    let mut file = std::fs::File::create(&big).unwrap();
    file.write_all(b"SGLANG_DEFAULT_THINKING=1 and then ten gigabytes without a newline ").unwrap();
    file.set_len(10 << 30).unwrap(); // sparse: no disk is used
    drop(file);

    // By default the file is over the member size limit and never read.
    let m = sb.run("10g-default", &["audit", str_of(&bundle), "--format", "json"]);
    assert_eq!(m.code, 3, "{}", m.stdout);
    let report = m.json();
    let entry = file_entry(&report, "server_logs_x/results/big.log");
    assert_eq!(entry["status"], "not-examined", "{entry}");
    assert!(entry["reason"].as_str().unwrap().contains("--max-member-size"), "{entry}");
    assert_eq!(file_entry(&report, "server_logs_x/results/server.log")["status"], "read");

    // Allowed in, the one line is cut at --max-line-length and memory stays flat.
    let m = sb.run("10g-read", &["audit", str_of(&bundle), "--format", "json", "--max-member-size", "11G"]);
    assert_eq!(m.code, 3, "{}", m.stdout);
    let report = m.json();
    assert_eq!(report["verdict"], "incomplete");
    let entry = file_entry(&report, "server_logs_x/results/big.log");
    assert_eq!((entry["status"].as_str(), entry["size"].as_u64()), (Some("partial"), Some(10 << 30)), "{entry}");
    assert!(entry["reason"].as_str().unwrap().contains("longer than 4194304 bytes were cut"), "{entry}");
    assert!(m.max_rss_kib < 64 << 10, "a 10 GiB line read in {} KiB", m.max_rss_kib);
}

#[test]
fn invalid_utf8_nul_bytes_and_crlf_do_not_hide_a_forbidden_flag() {
    let sb = Sandbox::new();
    let bundle = sb.path("input/bundle");
    let src = root().join(FAIL_INHERITED);
    for rel in list_files(&src) {
        let mut bytes = std::fs::read(src.join(&rel)).unwrap();
        if rel.ends_with("server.log") {
            // A junk line first (invalid UTF-8, NULs, a lone CR), then every line CRLF.
            let mut hostile = b"\x00\x00\xff\xfe\xc3\x28 junk \r junk\r\n".to_vec();
            hostile.extend(String::from_utf8(bytes).unwrap().replace('\n', "\r\n").into_bytes());
            bytes = hostile;
        }
        std::fs::create_dir_all(bundle.join(&rel).parent().unwrap()).unwrap();
        std::fs::write(bundle.join(&rel), bytes).unwrap();
    }
    let m = sb.run("crlf-utf8-nul", &["audit", str_of(&bundle), "--format", "json", "--golden", str_of(&root().join(GOLDEN))]);
    assert_eq!(m.code, 1, "{}", m.stdout);
    let report = m.json();
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    assert_eq!(check["status"], "fail");
    let evidence = &check["findings"][0]["evidence"][0];
    assert_eq!(evidence["line"], 4, "one junk line pushes the env dump down: {evidence}");
    assert_eq!(evidence["text"], "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=True", "no CR left on the value: {evidence}");
}

/// Rewrite, in every central-directory record of `name`, the 32-bit
/// uncompressed size (offset 24 of the record) to `size`.
fn lie_in_central_directory(zip: &mut [u8], name: &str, size: u32) {
    let mut at = 0;
    let mut found = false;
    while let Some(i) = zip[at..].windows(4).position(|w| w == b"PK\x01\x02").map(|i| i + at) {
        let name_len = usize::from(u16::from_le_bytes([zip[i + 28], zip[i + 29]]));
        if &zip[i + 46..i + 46 + name_len] == name.as_bytes() {
            zip[i + 24..i + 28].copy_from_slice(&size.to_le_bytes());
            found = true;
        }
        at = i + 4;
    }
    assert!(found, "{name} has no central directory record");
}

#[test]
fn a_zip_whose_central_directory_lies_about_sizes_is_held_to_what_it_declares_and_the_member_cap() {
    let sb = Sandbox::new();
    let line = "[2026-09-02 14:40:07] decode batch, #running-req: 8, #token: 1024\n";
    let big = line.repeat((2 << 20) / line.len());
    let members = [
        ("server_logs_x/results/server.log", "[2026-09-02 14:40:07] server started\n".to_string()),
        ("server_logs_x/results/understated.log", big.clone()),
        ("server_logs_x/results/overstated.log", "small\n".to_string()),
        ("server_logs_x/results/modest.log", line.repeat(10)),
    ];
    let mut bytes = Vec::new();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut bytes));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, content) in &members {
        zip.start_file(*name, stored).unwrap();
        zip.write_all(content.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    lie_in_central_directory(&mut bytes, "server_logs_x/results/understated.log", 100);
    lie_in_central_directory(&mut bytes, "server_logs_x/results/overstated.log", 0x7fff_ffff);
    lie_in_central_directory(&mut bytes, "server_logs_x/results/modest.log", 10);
    let path = sb.path("input/lying.zip");
    std::fs::write(&path, &bytes).unwrap();

    let m = sb.run("lying-zip", &["audit", str_of(&path), "--format", "json", "--max-member-size", "1M"]);
    assert_eq!(m.code, 3, "{}{}", m.stdout, m.stderr);
    let report = m.json();
    // The reader holds a member to the size its central directory declares.
    for name in ["understated", "modest"] {
        let entry = file_entry(&report, &format!("server_logs_x/results/{name}.log"));
        assert_eq!(entry["status"], "partial", "{entry}");
        assert!(entry["reason"].as_str().unwrap().contains("larger than its declared uncompressed size"), "{entry}");
        assert!(entry["size"].as_u64().unwrap() <= 100, "{entry}");
    }
    let overstated = file_entry(&report, "server_logs_x/results/overstated.log");
    assert_eq!(overstated["status"], "not-examined", "{overstated}");
    assert!(overstated["reason"].as_str().unwrap().contains("over the member size limit"), "{overstated}");
    assert_eq!(file_entry(&report, "server_logs_x/results/server.log")["status"], "read");
}

/// A `.tar.gz` holding the members `before`, then a member `name` of `size`
/// zero bytes (a multiple of 64 MiB). The gzip stream is made of concatenated
/// gzip members, one 64 MiB block compressed once and written many times,
/// so a multi-gigabyte bomb takes a second to make.
fn zero_bomb_tar_gz(out: &Path, before: &[(&str, &str)], name: &str, size: u64) {
    const BLOCK: u64 = 64 << 20;
    assert_eq!(size % BLOCK, 0);
    let gz = |bytes: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let header = |path: &str, size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_path(path).unwrap();
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        h.as_bytes().to_vec()
    };
    let mut head = Vec::new();
    for (path, content) in before {
        head.extend(header(path, content.len() as u64));
        head.extend(content.as_bytes());
        head.resize(head.len().next_multiple_of(512), 0);
    }
    head.extend(header(name, size));
    let mut file = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    file.write_all(&gz(&head)).unwrap();
    let zeros = gz(&vec![0; BLOCK as usize]);
    for _ in 0..size / BLOCK {
        file.write_all(&zeros).unwrap();
    }
    file.write_all(&gz(&[0; 1024])).unwrap(); // the end-of-archive marker
    file.flush().unwrap();
}

#[test]
fn a_decompression_bomb_member_is_stopped_with_a_clear_reason() {
    let sb = Sandbox::new();
    let path = sb.path("input/bomb.tar.gz");
    let log = ("bundle/server_logs_x/results/server.log", SLIP);
    zero_bomb_tar_gz(&path, &[log], "bundle/server_logs_x/results/bomb.log", 5 << 30);
    let compressed = std::fs::metadata(&path).unwrap().len();
    assert!(compressed < 8 << 20, "{compressed} bytes");

    let m = sb.run("bomb", &["audit", str_of(&path), "--format", "json"]);
    assert_eq!(m.code, 1, "the member before the bomb is audited: {}", m.stdout);
    let report = m.json();
    let bomb = file_entry(&report, "bundle/server_logs_x/results/bomb.log");
    assert_eq!(bomb["status"], "not-examined", "{bomb}");
    assert!(bomb["reason"].as_str().unwrap().contains("over the member size limit"), "{bomb}");
    let notes = report["not_examined"].to_string();
    assert!(notes.contains("expands more than 1000:1") && notes.contains("--max-ratio"), "skipping the bomb is bounded too: {notes}");
}

#[test]
fn a_gz_log_is_held_to_the_member_size_limit_by_what_it_expands_to() {
    let sb = Sandbox::new();
    let bundle = sb.path("input/bundle");
    write_tree(&bundle, &[("server_logs_x/results/server.log", "[2026-09-02 14:40:07] server started\n")]);
    let line = "[2026-09-02 14:40:07] decode batch, #running-req: 8, #token: 1024\n";
    let mut gz =
        flate2::write::GzEncoder::new(std::fs::File::create(bundle.join("server_logs_x/results/worker.log.gz")).unwrap(), flate2::Compression::default());
    gz.write_all(line.repeat((3 << 20) / line.len()).as_bytes()).unwrap();
    gz.finish().unwrap();
    let m = sb.run("gz-member", &["audit", str_of(&bundle), "--format", "json", "--max-member-size", "1M"]);
    assert_eq!(m.code, 3, "{}", m.stdout);
    let report = m.json();
    let entry = file_entry(&report, "server_logs_x/results/worker.log.gz");
    assert_eq!(entry["status"], "partial", "{entry}");
    assert!(entry["reason"].as_str().unwrap().contains("larger than the member size limit of 1048576 bytes"), "{entry}");
}

#[test]
fn a_nested_decompression_bomb_is_held_to_the_outer_archive_ratio() {
    let sb = Sandbox::new();
    let inner = sb.path("input/inner.tar.gz");
    zero_bomb_tar_gz(&inner, &[], "worker/bomb.log", 1 << 30);
    let path = sb.path("input/nested.tar.gz");
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(std::fs::File::create(&path).unwrap(), flate2::Compression::default()));
    tar.append_path_with_name(&inner, "bundle/server_logs_x/logs.tar.gz").unwrap();
    tar.into_inner().unwrap().finish().unwrap();
    std::fs::remove_file(&inner).unwrap();

    let m = sb.run("nested-bomb", &["audit", str_of(&path), "--format", "json"]);
    assert_eq!(m.code, 3, "{}", m.stdout);
    let report = m.json();
    let bomb = file_entry(&report, "bundle/server_logs_x/logs.tar.gz/worker/bomb.log");
    assert_ne!(bomb["status"], "read", "{bomb}");
    assert!(bomb.to_string().contains("expands more than 1000:1"), "{bomb}");
    assert!(bomb["size"].as_u64().unwrap() < 64 << 20, "stopped early: {bomb}");
}

#[test]
fn nothing_in_a_bundle_is_ever_executed() {
    let sb = Sandbox::new();
    let marker = sb.path("sentinel/executed");
    let touch = format!("#!/bin/sh\ntouch {}\n", str_of(&marker));
    let python = format!("import pathlib; pathlib.Path({:?}).touch()\n", str_of(&marker));
    let bundle = sb.path("input/bundle");
    write_tree(
        &bundle,
        &[
            ("server_logs_x/results/server.log", "[2026-09-02 14:40:07] server started\n"),
            ("server_logs_x/launch.sh", &touch),
            ("server_logs_x/sitecustomize.py", &python),
            ("server_logs_x/hook.pth", &format!("import os; os.system('touch {}')\n", str_of(&marker))),
            ("server_logs_x/Makefile", &format!("all:\n\ttouch {}\n", str_of(&marker))),
        ],
    );
    use std::os::unix::fs::PermissionsExt;
    let script = bundle.join("server_logs_x/launch.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let archive = sb.path("input/bundle.tar.gz");
    targz_tree(&bundle, "bundle", &archive);
    for input in [&bundle, &archive] {
        for command in ["audit", "evidence", "scan"] {
            let m = sb.run("never-executed", &[command, str_of(input)]);
            assert!(matches!(m.code, 0 | 1 | 3), "{command}: exit {}: {}", m.code, m.stderr);
        }
    }
    assert!(!marker.exists(), "something from the bundle ran");
}

#[test]
fn auditing_a_bundle_needs_no_network() {
    // A network namespace of its own has no interface up, not even loopback:
    // the audit of a bundle must not notice.
    let unshared = std::process::Command::new("unshare")
        .args(["-n", env!("CARGO_BIN_EXE_auditor"), "audit", FAIL_INHERITED, "--format", "json"])
        .current_dir(root())
        .output()
        .expect("unshare (util-linux) runs");
    assert!(stderr(&unshared).is_empty(), "{}", stderr(&unshared));
    let here = auditor(&["audit", FAIL_INHERITED, "--format", "json"]);
    assert_eq!(code(&here), 1);
    assert_eq!((code(&unshared), unshared.stdout), (code(&here), here.stdout));
}

/// An optional extension header (type flag, claimed size), then a member's name and content.
type LongEntry<'a> = (Option<(u8, u64)>, &'a str, &'a str);

/// A `.tar.gz` of `entries`: each an extension header (type flag, claimed
/// size) streamed as zeros, then a regular member `(name, content)`; the
/// zeros are one 64 MiB gzip member written many times, so hundreds of
/// MiB take a moment to make and under a megabyte on disk.
fn long_header_tar_gz(out: &Path, entries: &[LongEntry]) {
    const BLOCK: u64 = 64 << 20;
    let gz = |bytes: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let header = |path: &str, flag: u8, size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_path(path).unwrap();
        h.set_size(size);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::new(flag));
        h.set_cksum();
        h.as_bytes().to_vec()
    };
    let zeros = gz(&vec![0; BLOCK as usize]);
    let mut file = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    for &(extension, name, content) in entries {
        if let Some((flag, size)) = extension {
            assert_eq!(size % BLOCK, 0);
            file.write_all(&gz(&header("././@LongLink", flag, size))).unwrap();
            for _ in 0..size / BLOCK {
                file.write_all(&zeros).unwrap();
            }
        }
        let mut member = header(name, b'0', content.len() as u64);
        member.extend(content.as_bytes());
        member.resize(member.len().next_multiple_of(512), 0);
        file.write_all(&gz(&member)).unwrap();
    }
    file.write_all(&gz(&[0; 1024])).unwrap();
    file.flush().unwrap();
}

#[test]
fn long_names_long_link_names_and_pax_records_of_hundreds_of_mib_cost_no_memory() {
    let sb = Sandbox::new();
    let dir = sb.path("input/bundle");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("server.log"), SLIP).unwrap();
    // one long name of 640 MiB: the 0.6 MB archive
    let one = dir.join("logs.tar.gz");
    long_header_tar_gz(&one, &[(Some((b'L', 640 << 20)), "logs/cut.log", "ok\n")]);
    let compressed = std::fs::metadata(&one).unwrap().len();
    assert!(compressed < 1 << 20, "{compressed} bytes");

    let m = sb.run("long-name-640MiB", &["audit", str_of(&dir), "--format", "json"]);
    let report = m.json();
    assert_eq!(m.code, 1, "the rest of the bundle is audited: {}", m.stdout);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    assert!(check.to_string().contains("server.log"), "{check}");
    let notes = report["not_examined"].to_string();
    assert!(notes.contains("logs.tar.gz"), "the archive is not examined (in part): {notes}");

    // with the ratio limit lifted each header is streamed past, its member
    // is not examined, and the members after it are read
    let many = dir.join("logs.tar.gz");
    long_header_tar_gz(
        &many,
        &[
            (Some((b'L', 640 << 20)), "logs/a.log", "ok\n"),
            (Some((b'K', 320 << 20)), "logs/b.log", "ok\n"),
            (Some((b'x', 320 << 20)), "logs/c.log", "ok\n"),
            (None, "logs/d.log", SLIP),
        ],
    );
    let m = sb.run("long-headers-1280MiB", &["audit", str_of(&dir), "--format", "json", "--max-ratio", "100000"]);
    let report = m.json();
    assert_eq!(m.code, 1, "{}", m.stdout);
    for (name, what) in [
        ("logs.tar.gz/logs/a.log", "a GNU long name of 671088640 bytes"),
        ("logs.tar.gz/logs/b.log", "a GNU long link name of 335544320 bytes"),
        ("logs.tar.gz/logs/c.log", "PAX records of 335544320 bytes"),
    ] {
        let entry = file_entry(&report, name);
        assert_eq!(entry["status"], "not-examined", "{entry}");
        assert!(entry["reason"].as_str().unwrap().contains(what), "{entry}");
    }
    assert_eq!(file_entry(&report, "logs.tar.gz/logs/d.log")["status"], "read");
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "forbidden-env").unwrap();
    assert!(check.to_string().contains("logs.tar.gz/logs/d.log"), "the member after the long headers is audited: {check}");
}

#[test]
fn auditing_a_bundle_reaches_for_no_socket() {
    // strace, not a namespace: an attempt that fails is an attempt all the same
    let (out, peers) = auditor_traced(&["audit", PASS, "--golden", GOLDEN, "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["verdict"], "pass");
    assert!(peers.is_empty(), "auditing a bundle reached for {peers:?}");
}

#[test]
fn names_past_the_member_limit_are_still_read_for_ones_that_climb_out() {
    let sb = Sandbox::new();
    let names = ["bundle/a.log", "bundle/b.log", "bundle/c.log", "../../sentinel/late.sh", "/etc/cron.d/x"];
    let zip_path = sb.path("input/few.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    for name in names {
        zip.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(SLIP.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    let tgz_path = sb.path("input/few.tar.gz");
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(std::fs::File::create(&tgz_path).unwrap(), flate2::Compression::fast()));
    for name in names {
        tar.append(&raw_tar_header(name, SLIP.len() as u64), SLIP.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
    for (archive, label) in [(&zip_path, "few.zip"), (&tgz_path, "few.tar.gz")] {
        let m = sb.run("past-the-limit", &["audit", str_of(archive), "--format", "json", "--max-members", "2"]);
        let report = m.json();
        assert_eq!(report["files"].as_array().unwrap().len(), 2, "{report}");
        let notes = report["not_examined"].to_string();
        let expected = format!(
            "{label}: past the member limit, 3 more member name(s) were read (to the archive's end), not their content: 2 point outside the archive (absolute, or with ..), never extracted: ../../sentinel/late.sh, /etc/cron.d/x"
        );
        assert!(notes.contains(&expected), "{notes}");
        assert!(!sb.path("sentinel/late.sh").exists());
    }
    // a zip whose central directory fits the limit, reached by the files before it: its directory names the rest
    let dir = sb.path("input/dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.log"), "ok\n").unwrap();
    let mut zip = zip::ZipWriter::new(std::fs::File::create(dir.join("z.zip")).unwrap());
    for name in ["bundle/c.log", "../../sentinel/late.sh"] {
        zip.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(SLIP.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    let m = sb.run("past-the-limit-central-directory", &["audit", str_of(&dir), "--format", "json", "--max-members", "2"]);
    let notes = m.json()["not_examined"].to_string();
    assert!(notes.contains("z.zip: past the member limit, 2 more member name(s) were read (to the archive's end), not their content: 1 point outside the archive (absolute, or with ..), never extracted: ../../sentinel/late.sh"), "{notes}");
}
