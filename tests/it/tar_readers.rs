//! Issue 25: the tool's tar reader held to Go's `archive/tar`, the reader
//! containerd, Docker and umoci extract layers with. `tests/tools/gotar`
//! is built here with the machine's Go (`tests/run` installs Debian's
//! golang-go) and lists the same bytes. Both listings must agree entry for
//! entry: names, link names, types and the data each entry yields. Where a
//! reader refuses the archive, what the other listed before that point must
//! be the same: a runtime cannot apply a layer Go refuses, and the tool
//! names a layer it refuses as not examined. Crafted headers where tar
//! readers disagree, ordinary archives, and the seeds of the `layer_walk`
//! and `tar_readers` fuzz corpora.

use crate::hostile_layers::{edited, header, octal, padded_data, pax_record};
use auditor::tarstream::{Listed, listing};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The Go lister, built once per test run.
fn gotar() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gotar");
        let source = crate::common::root().join("tests/tools/gotar");
        let status = std::process::Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(&source)
            .env("GOFLAGS", "-mod=mod")
            .env("GOCACHE", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gocache"))
            .env("GOPATH", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gopath"))
            .status()
            .expect("Go is needed for the reference tar reader: tests/run installs Debian's golang-go");
        assert!(status.success(), "go build tests/tools/gotar");
        out
    })
}

/// Go's listing of `archive`.
fn go_listing(archive: &[u8]) -> (Vec<Listed>, Option<String>) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), archive).unwrap();
    let out = std::process::Command::new(gotar()).arg(file.path()).output().unwrap();
    assert!(out.status.success(), "gotar: {}", String::from_utf8_lossy(&out.stderr));
    let mut entries = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines().filter(|l| !l.is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(error) = value.get("error") {
            return (entries, Some(error.as_str().unwrap().to_string()));
        }
        entries.push(serde_json::from_value(value).unwrap());
    }
    (entries, None)
}

/// A name of a listing, readable.
fn shown(entries: &[Listed]) -> Vec<String> {
    let text = |hex: &str| {
        String::from_utf8_lossy(&(0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect::<Vec<_>>()).into_owned()
    };
    entries.iter().map(|e| format!("{} {:?} -> {:?} ({} bytes)", char::from(e.kind), text(&e.name), text(&e.link), e.len)).collect()
}

/// The two readers agree on `archive`: the same entries and, when one
/// refuses it, the same entries before that point; `refused` says whether
/// Go refuses it.
fn agree(case: &str, archive: &[u8], refused: bool) {
    let (ours, our_error) = listing(archive);
    let (go, go_error) = go_listing(archive);
    let context = || format!("{case}:\n tool {:?} {our_error:?}\n go   {:?} {go_error:?}", shown(&ours), shown(&go));
    assert_eq!(go_error.is_some(), refused, "{}", context());
    match (&our_error, &go_error) {
        (None, None) => assert_eq!(ours, go, "{}", context()),
        (Some(_), _) => assert!(go.starts_with(&ours), "{}", context()),
        (None, Some(_)) => assert!(ours.starts_with(&go), "{}", context()),
    }
    if our_error.is_some() != go_error.is_some() {
        panic!("{}: one reader refuses what the other reads", context());
    }
}

fn file(name: &str, data: &[u8]) -> Vec<u8> {
    [header(name.as_bytes(), b'0', data.len() as u64, b"").to_vec(), padded_data(data)].concat()
}

fn with_size(h: [u8; 512], size: u64) -> Vec<u8> {
    edited(h, |h| octal(&mut h[124..136], size))
}

fn pax(records: &[(&str, &[u8])]) -> Vec<u8> {
    let body: Vec<u8> = records.iter().flat_map(|(k, v)| pax_record(k, v)).collect();
    [header(b"PaxHeader", b'x', body.len() as u64, b"").to_vec(), padded_data(&body)].concat()
}

fn gnu(flag: u8, name: &str) -> Vec<u8> {
    let long = [name.as_bytes(), b"\0"].concat();
    [header(b"././@LongLink", flag, long.len() as u64, b"").to_vec(), padded_data(&long)].concat()
}

const END: [u8; 1024] = [0; 1024];

#[test]
fn the_tool_reads_every_crafted_header_as_go_does() {
    let payload = b"VALUE = 'B'\n";
    let hidden = file("usr/lib/python3/dist-packages/sglang/x.py", payload);
    let full_star = |name: &[u8]| {
        edited(header(name, b'0', payload.len() as u64, b""), |h| {
            h[345..476].copy_from_slice(format!("usr/lib{}", "/.".repeat(62)).as_bytes());
            h[476..488].copy_from_slice(b"00000000000\0");
            h[508..512].copy_from_slice(b"tar\0");
        })
    };
    let ustar_prefix = edited(header(b"x.py", b'0', 0, b""), |h| h[345..374].copy_from_slice(b"usr/lib/python3/dist-packages"));
    let mut signed = header("caf\u{e9}.py".as_bytes(), b'0', 0, b"");
    let sum: i64 = signed.iter().enumerate().map(|(i, &x)| if (148..156).contains(&i) { 32 } else { i64::from(x as i8) }).sum();
    signed[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    let mut ordinary = tar::Builder::new(Vec::new());
    for (path, data) in [("etc/passwd", &b"root:x:0:0\n"[..]), ("usr/lib/python3/dist-packages/mod.py", b"A = 1\n")] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        ordinary.append_data(&mut h, path, data).unwrap();
    }
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    ordinary.append_link(&mut h, format!("usr/{}/link", "l".repeat(120)), "a".repeat(150)).unwrap();
    let ordinary = ordinary.into_inner().unwrap();
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("ordinary, GNU long names from the tar crate", ordinary, false),
        ("a directory whose size covers a header", [with_size(header(b"d/", b'5', 0, b""), hidden.len() as u64), hidden.clone(), END.to_vec()].concat(), false),
        ("a hard link with a size", [with_size(header(b"h", b'1', 0, b"etc/passwd"), hidden.len() as u64), hidden.clone(), END.to_vec()].concat(), false),
        ("a symlink with a size", [with_size(header(b"s", b'2', 0, b"x"), hidden.len() as u64), hidden.clone(), END.to_vec()].concat(), false),
        ("a FIFO with a size", [with_size(header(b"f", b'6', 0, b""), hidden.len() as u64), hidden.clone(), END.to_vec()].concat(), false),
        ("a device with a size", [with_size(header(b"c", b'3', 0, b""), hidden.len() as u64), hidden.clone(), END.to_vec()].concat(), false),
        ("an old-style file named with a slash", [with_size(header(b"e/", 0, 0, b""), hidden.len() as u64), hidden.clone(), END.to_vec()].concat(), false),
        ("a contiguous file", [header(b"c7", b'7', payload.len() as u64, b"").to_vec(), padded_data(payload), END.to_vec()].concat(), false),
        (
            "a GNU long name beside a PAX path",
            [pax(&[("path", b"usr/other.py")]), gnu(b'L', "usr/lib/python3/x.py"), file("short", payload), END.to_vec()].concat(),
            false,
        ),
        (
            "a PAX path beside a GNU long name, the other order",
            [gnu(b'L', "usr/lib/python3/x.py"), pax(&[("path", b"usr/other.py")]), file("short", payload), END.to_vec()].concat(),
            false,
        ),
        (
            "a GNU long link name beside a PAX linkpath",
            [pax(&[("linkpath", b"etc/a")]), gnu(b'K', "etc/b"), header(b"l", b'2', 0, b"c").to_vec(), END.to_vec()].concat(),
            false,
        ),
        ("an empty PAX path", [pax(&[("path", b"")]), file("kept", payload), END.to_vec()].concat(), false),
        ("a PAX size over the header's", [pax(&[("size", b"12")]), header(b"p", b'0', 0, b"").to_vec(), padded_data(payload), END.to_vec()].concat(), false),
        ("a PAX size on a directory", [pax(&[("size", b"512")]), header(b"pd/", b'5', 0, b"").to_vec(), hidden.clone(), END.to_vec()].concat(), false),
        ("a star header with a full prefix", [full_star(b"mod.py"), padded_data(payload), END.to_vec()].concat(), false),
        ("a ustar prefix", [ustar_prefix, END.to_vec()].concat(), false),
        (
            "a star header whose times are not numbers",
            [edited(full_star(b"t.py").try_into().unwrap(), |h| h[476..482].copy_from_slice(b"/hide/")), padded_data(payload), END.to_vec()].concat(),
            true,
        ),
        ("a mode that is not a number", [edited(header(b"m", b'0', 0, b""), |h| h[100..104].copy_from_slice(b"07 5")), END.to_vec()].concat(), true),
        ("a uid in base-256, negative", [edited(header(b"u", b'0', 0, b""), |h| h[108..116].copy_from_slice(&[0xff; 8])), END.to_vec()].concat(), false),
        ("a signed checksum", [signed.to_vec(), END.to_vec()].concat(), false),
        ("one zero block and the stream's end", [file("a", payload), vec![0; 512]].concat(), false),
        ("a header after a lone zero block", [file("a", payload), vec![0; 512], hidden.clone(), END.to_vec()].concat(), true),
        ("no end marker", file("a", payload), false),
    ];
    for (case, archive, refused) in &cases {
        agree(case, archive, *refused);
    }
    // Each case where readers disagree hides the payload from a reader that honours the size.
    let (ours, _) = listing(&cases[1].1);
    assert_eq!(ours.len(), 2, "{:?}", shown(&ours));
}

/// Every seed of the fuzz corpora of layer readers, as the layers the
/// `layer_walk` target makes of it and whole.
#[test]
fn the_fuzz_corpus_layers_read_alike() {
    let root = crate::common::root().join("fuzz/corpus");
    let mut seen = 0;
    for target in ["layer_walk", "tar_readers"] {
        let Ok(dir) = std::fs::read_dir(root.join(target)) else { continue };
        for seed in dir {
            let path = seed.unwrap().path();
            // What a local fuzz run adds (named by SHA-1, git-ignored) is not a seed.
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            // A layer_walk seed is a split byte and one or two layers; a tar_readers seed one archive.
            let layers: Vec<&[u8]> = match (target, data.split_first()) {
                ("layer_walk", Some((&split, tar))) => {
                    let at = (tar.len() * usize::from(split) / 255) / 512 * 512;
                    if at == 0 || at >= tar.len() { vec![tar] } else { vec![&tar[..at], &tar[at..]] }
                }
                _ => vec![&data[..]],
            };
            for layer in layers {
                let (ours, our_error) = listing(layer);
                let (go, go_error) = go_listing(layer);
                assert_eq!((&ours, our_error.is_some()), (&go, go_error.is_some()), "{}: {our_error:?} {go_error:?}", path.display());
                seen += 1;
            }
        }
    }
    assert!(seen >= 6, "the corpus seeds were read: {seen}");
}
