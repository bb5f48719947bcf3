//! What `auditor image diff` counts as a change, decided end to end on OCI
//! layouts built here (no services): a `.pyc` that differs only in its
//! 16-byte header (what every rebuild rewrites: the source's mtime and
//! size) is the same file, one whose compiled body differs is a bytecode
//! patch; an opaque-directory marker (`.wh..wh..opq`) in a pinned layer
//! removes what lower layers put in that directory, and nothing beside it.

use crate::common::findings;
use crate::hostile_layers::{GZIP, Layer, Sandbox, Tar, change, layer};
use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

const SITE: &str = "usr/lib/python3/dist-packages";
const SERVER_PY: &str = "usr/lib/python3/dist-packages/sglang/srt/server.py";
const SERVER_PYC: &str = "usr/lib/python3/dist-packages/sglang/srt/__pycache__/server.cpython-312.pyc";

/// A CPython 3.12 `.pyc`: magic, flags, the source's mtime and size
/// (PEP 552), then the marshalled code object.
fn pyc(mtime: u32, size: u32, body: &[u8]) -> Vec<u8> {
    let mut out = vec![0xcb, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0];
    out.extend_from_slice(&mtime.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(body);
    out
}

const SOURCE: &[u8] = b"def launch_server(server_args):\n    return server_args.port\n";
const BODY: &[u8] = b"\xe3\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\xf3\x0c\x00\x00\x00\x97\x00d\x00\x84\x00Z\x00y\x01)\x02c\x01\x00\x00\x00";

/// The upstream image: a root with sglang installed (its dist-info RECORD
/// lists what it owns, so a change there is an engine file's).
fn upstream(extra: &[(&str, &[u8])]) -> Layer {
    layer(GZIP, |t: &mut Tar<_>| {
        for d in ["usr/", "usr/lib/", "usr/lib/python3/", "usr/lib/python3/dist-packages/"] {
            t.dir(d);
        }
        let mut files: Vec<(String, Vec<u8>)> =
            vec![(SERVER_PY.to_string(), SOURCE.to_vec()), (SERVER_PYC.to_string(), pyc(1_735_000_000, SOURCE.len() as u32, BODY))];
        files.extend(extra.iter().map(|(p, d)| (p.to_string(), d.to_vec())));
        let mut record = String::new();
        for (path, data) in &files {
            let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(data));
            record.push_str(&format!("{},sha256={hash},{}\n", path.strip_prefix(&format!("{SITE}/")).unwrap(), data.len()));
            t.file(path, data);
        }
        record.push_str("sglang-0.5.16.dist-info/METADATA,,\nsglang-0.5.16.dist-info/RECORD,,\n");
        t.file(&format!("{SITE}/sglang-0.5.16.dist-info/METADATA"), b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.16\n");
        t.file(&format!("{SITE}/sglang-0.5.16.dist-info/RECORD"), record.as_bytes());
    })
}

fn engine_patches(report: &Value) -> Vec<(String, String, String)> {
    findings(report)
        .filter(|f| f["rule"].as_str().unwrap().starts_with("engine-patch/"))
        .map(|f| (f["path"].as_str().unwrap_or("").to_string(), f["rule"].as_str().unwrap().to_string(), f["kind"].as_str().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn a_pyc_differing_only_in_its_header_is_unchanged_and_one_differing_in_its_body_is_a_bytecode_patch() {
    let pyc_path = format!("/{SERVER_PYC}");
    let sb = Sandbox::new();
    let base = upstream(&[]);
    sb.image("base", &[&base]);
    // A rebuild: the source's recorded mtime and size (header bytes 8..16, the last one included) differ.
    let mut rebuilt = pyc(1_767_000_000, SOURCE.len() as u32, BODY);
    rebuilt[15] = 0x7f;
    let header_only = layer(GZIP, |t| {
        t.file(SERVER_PYC, &rebuilt);
    });
    sb.image("header-only", &[&base, &header_only]);
    // A bytecode patch: the same header, the first byte of the body (byte 16) differs.
    let mut patched_body = BODY.to_vec();
    patched_body[0] = 0xe2;
    let body = layer(GZIP, |t| {
        t.file(SERVER_PYC, &pyc(1_735_000_000, SOURCE.len() as u32, &patched_body));
    });
    sb.image("body", &[&base, &body]);

    let run = sb.diff("pyc-header-only", "header-only", &[]);
    assert!(change(&run.report, &pyc_path).is_none(), "a header-only difference is not a change: {:#}", run.report);
    assert_eq!(engine_patches(&run.report), [], "{:#}", run.report);
    assert_eq!(run.code, 0, "{:#}", run.report);

    let run = sb.diff("pyc-body", "body", &[]);
    let f = change(&run.report, &pyc_path).unwrap_or_else(|| panic!("a body difference is a change: {:#}", run.report));
    assert_eq!((f["rule"].as_str(), f["kind"].as_str(), f["severity"].as_str()), (Some("engine-patch/bytecode"), Some("bytecode"), Some("error")), "{f:#}");
    assert_eq!(engine_patches(&run.report).len(), 1, "only the .pyc: {:#}", run.report);
    assert_eq!(run.code, 1);
}

#[test]
fn an_opaque_directory_hides_what_lower_layers_put_in_it_and_nothing_beside_it() {
    const DIR: &str = "usr/lib/python3/dist-packages/sglang/srt/layers/attention";
    let (a, nested, sibling) = (format!("{DIR}/a.py"), format!("{DIR}/sub/d.py"), "usr/lib/python3/dist-packages/sglang/srt/layers/moe/c.py".to_string());
    let sb = Sandbox::new();
    let base = upstream(&[(&a, b"A = 1\n"), (&nested, b"D = 4\n"), (&sibling, b"C = 3\n")]);
    sb.image("base", &[&base]);
    // The marker after the layer's own entry: it hides lower layers only, wherever it stands in the tar.
    let opaque = layer(GZIP, |t| {
        t.dir(&format!("{DIR}/"));
        t.file(&format!("{DIR}/b.py"), b"B = 2\n");
        t.file(&format!("{DIR}/.wh..wh..opq"), b"");
    });
    sb.image("opaque", &[&base, &opaque]);
    let run = sb.diff("opaque-dir", "opaque", &[]);
    let kind = |path: &str| change(&run.report, &format!("/{path}")).map(|f| f["kind"].as_str().unwrap().to_string());
    assert_eq!(kind(&a).as_deref(), Some("deleted"), "{:#}", run.report);
    assert_eq!(kind(&nested).as_deref(), Some("deleted"), "everything below the directory: {:#}", run.report);
    assert_eq!(kind(&format!("{DIR}/b.py")).as_deref(), Some("added"), "{:#}", run.report);
    assert_eq!(kind(&sibling), None, "the sibling directory is untouched: {:#}", run.report);
    let mut paths: Vec<String> = engine_patches(&run.report).into_iter().map(|(p, _, _)| p).collect();
    paths.sort();
    assert_eq!(paths, [format!("/{DIR}/a.py"), format!("/{DIR}/b.py"), format!("/{DIR}/sub/d.py")], "{:#}", run.report);
    assert!(findings(&run.report).all(|f| !f["path"].as_str().unwrap_or("").ends_with(".wh..wh..opq")), "the marker is not a file: {:#}", run.report);
}
