//! Hostile image layers (issue 7, item 2): `..` and absolute names, a
//! symlink out of the root with entries written through it, hard links to
//! paths outside or not yet seen, device nodes and FIFOs, decompression
//! bombs, 10,000-level nesting, a 100,000-entry layer, duplicate entries,
//! PAX headers with huge or bogus values.
//!
//! Each layer is built here, at test time, from tar bytes written by hand
//! (so a header can say what no tar library lets it: `..`, NULs, bogus PAX
//! records, sizes that lie), compressed with flate2 or zstd into an OCI
//! layout in a temporary sandbox, and `auditor image verify` / `image
//! diff` run on it under GNU time. Every run asserts the finding or error
//! and the exit code; that nothing was written but cache files (a snapshot
//! of the sandbox — which holds the directory the hostile names and links
//! aim at — is unchanged, and the cache holds only `layers-v1/*.idx` and
//! `*.pack`); and that its peak RSS is under [`CEILING_KIB`]. Each run
//! prints `hostile-layers peak-rss CASE KIB` (BENCHMARKS.md collects them
//! with `--nocapture`). No services are needed.
//!
//! The layer writer and the sandbox are shared with `image_diff_changes`.

use crate::common::{auditor_measured, check, findings, sandbox_root, snapshot};
use flate2::write::GzEncoder;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Peak RSS allowed to any run at the default limits (docs/GUIDE.md, "Hostile image layers").
const CEILING_KIB: u64 = 512 << 10;

/// Peak RSS allowed to `image diff` over a 1 GiB layer (measured: 18 MiB):
/// a layer, or one file of it, held whole is sixteen times this.
const STREAMED_KIB: u64 = 64 << 10;

pub(crate) const GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
const ZSTD: &str = "application/vnd.oci.image.layer.v1.tar+zstd";
const PLAIN: &str = "application/vnd.oci.image.layer.v1.tar";
const MIB: usize = 1 << 20;

// ---------------------------------------------------------------- tar bytes

pub(crate) fn octal(field: &mut [u8], value: u64) {
    let text = format!("{value:0width$o}\0", width = field.len() - 1);
    field.copy_from_slice(text.as_bytes());
}

/// One ustar header block; sizes of 8 GiB and more in base-256.
pub(crate) fn header(name: &[u8], kind: u8, size: u64, link: &[u8]) -> [u8; 512] {
    header_mode(name, kind, if kind == b'5' { 0o755 } else { 0o644 }, size, link)
}

pub(crate) fn header_mode(name: &[u8], kind: u8, mode: u64, size: u64, link: &[u8]) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name[..n]);
    octal(&mut h[100..108], mode);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    if size <= 0o77777777777 {
        octal(&mut h[124..136], size);
    } else {
        h[124] = 0x80;
        h[128..136].copy_from_slice(&size.to_be_bytes());
    }
    octal(&mut h[136..148], 1_704_067_200);
    h[156] = kind;
    let l = link.len().min(100);
    h[157..157 + l].copy_from_slice(&link[..l]);
    h[257..265].copy_from_slice(b"ustar\x0000");
    h[148..156].fill(b' ');
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    h
}

/// `<len> key=value\n`, where `len` counts itself.
pub(crate) fn pax_record(key: &str, value: &[u8]) -> Vec<u8> {
    let rest = key.len() + value.len() + 3;
    let mut len = rest + 1;
    while rest + len.to_string().len() != len {
        len = rest + len.to_string().len();
    }
    let mut out = format!("{len} {key}=").into_bytes();
    out.extend_from_slice(value);
    out.push(b'\n');
    out
}

fn pad(out: &mut Vec<u8>) {
    out.resize(out.len().div_ceil(512) * 512, 0);
}

/// The header blocks of one entry: a PAX header first when the name or
/// link does not fit ustar, or when `pax` records are given.
fn entry_header(path: &[u8], kind: u8, size: u64, link: &[u8], pax: &[(&str, &[u8])]) -> Vec<u8> {
    let mut records = Vec::new();
    if path.len() > 100 {
        records.extend(pax_record("path", path));
    }
    if link.len() > 100 {
        records.extend(pax_record("linkpath", link));
    }
    for (key, value) in pax {
        records.extend(pax_record(key, value));
    }
    let mut out = Vec::new();
    if !records.is_empty() {
        out.extend_from_slice(&header(b"PaxHeader", b'x', records.len() as u64, b""));
        out.extend(records);
        pad(&mut out);
    }
    out.extend_from_slice(&header(path, kind, size, link));
    out
}

/// Writes tar entries into any sink.
pub(crate) struct Tar<W: Write>(W);

impl<W: Write> Tar<W> {
    fn entry(&mut self, path: &[u8], kind: u8, link: &[u8], data: &[u8], pax: &[(&str, &[u8])]) -> &mut Self {
        let mut bytes = entry_header(path, kind, data.len() as u64, link, pax);
        bytes.extend_from_slice(data);
        pad(&mut bytes);
        self.0.write_all(&bytes).unwrap();
        self
    }
    pub(crate) fn file(&mut self, path: &str, data: &[u8]) -> &mut Self {
        self.entry(path.as_bytes(), b'0', b"", data, &[])
    }
    pub(crate) fn dir(&mut self, path: &str) -> &mut Self {
        self.entry(path.as_bytes(), b'5', b"", b"", &[])
    }
    fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.entry(path.as_bytes(), b'2', target.as_bytes(), b"", &[])
    }
    fn hardlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.entry(path.as_bytes(), b'1', target.as_bytes(), b"", &[])
    }
    fn special(&mut self, path: &str, kind: u8) -> &mut Self {
        self.entry(path.as_bytes(), kind, b"", b"", &[])
    }
    /// A file with mode 0755 (a short path: no PAX header).
    fn executable(&mut self, path: &str, data: &[u8]) -> &mut Self {
        let mut bytes = header_mode(path.as_bytes(), b'0', 0o755, data.len() as u64, b"").to_vec();
        bytes.extend_from_slice(data);
        pad(&mut bytes);
        self.0.write_all(&bytes).unwrap();
        self
    }
    /// Bytes as given (headers a test crafts by hand).
    fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.write_all(bytes).unwrap();
        self
    }
    /// The end-of-archive marker.
    fn end(mut self) -> W {
        self.0.write_all(&[0u8; 1024]).unwrap();
        self.0
    }
}

// ------------------------------------------------------------ layer blobs

/// An image's layer descriptors, diff-ids and runtime config, to build another on.
pub(crate) struct Sample {
    layers: Vec<Value>,
    diff_ids: Vec<String>,
    pub(crate) runtime: Value,
    /// The architecture images built on it declare.
    arch: String,
}

impl Sample {
    /// The same layers, for images of architecture `arch`.
    pub(crate) fn on(&self, arch: &str) -> Sample {
        Sample { layers: self.layers.clone(), diff_ids: self.diff_ids.clone(), runtime: self.runtime.clone(), arch: arch.into() }
    }

    /// The blob digest of layer `i`.
    pub(crate) fn layer_digest(&self, i: usize) -> String {
        self.layers[i]["digest"].as_str().unwrap().to_string()
    }
}

/// A layer blob, its media type and its diff-id.
pub(crate) struct Layer {
    blob: Vec<u8>,
    media_type: &'static str,
    diff_id: String,
}

fn hex_digest(sha: Sha256) -> String {
    format!("sha256:{}", hex(&sha.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A layer being written: its tar is hashed (the diff-id) and compressed
/// as it streams in.
pub(crate) struct Sink {
    tar: Sha256,
    encoder: Encoder,
}

enum Encoder {
    Gzip(GzEncoder<Vec<u8>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
    Plain(Vec<u8>),
}

impl Sink {
    fn new(media_type: &str) -> Sink {
        let encoder = match media_type {
            GZIP => Encoder::Gzip(GzEncoder::new(Vec::new(), flate2::Compression::fast())),
            ZSTD => Encoder::Zstd(zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap()),
            _ => Encoder::Plain(Vec::new()),
        };
        Sink { tar: Sha256::new(), encoder }
    }

    fn finish(self) -> Layer {
        let (blob, media_type) = match self.encoder {
            Encoder::Gzip(e) => (e.finish().unwrap(), GZIP),
            Encoder::Zstd(e) => (e.finish().unwrap(), ZSTD),
            Encoder::Plain(v) => (v, PLAIN),
        };
        Layer { blob, media_type, diff_id: hex_digest(self.tar) }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tar.update(buf);
        match &mut self.encoder {
            Encoder::Gzip(e) => e.write_all(buf)?,
            Encoder::Zstd(e) => e.write_all(buf)?,
            Encoder::Plain(v) => v.extend_from_slice(buf),
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A layer of `media_type` holding what `build` writes.
pub(crate) fn layer(media_type: &str, build: impl FnOnce(&mut Tar<Sink>)) -> Layer {
    let mut tar = Tar(Sink::new(media_type));
    build(&mut tar);
    tar.end().finish()
}

/// A bomb: a blob of concatenated compressed members (multi-member gzip
/// as pigz writes it, or zstd frames), so gigabytes of zeros cost a few
/// bytes per MiB and no time to build. Its diff-id is computed only when
/// asked: the auditor must stop long before the end, where it is checked.
struct Bomb {
    blob: Vec<u8>,
    media_type: &'static str,
    tar: Option<Sha256>,
    zero_member: Vec<u8>,
}

impl Bomb {
    fn new(media_type: &'static str, hash: bool) -> Bomb {
        let zeros = vec![0u8; MIB];
        let zero_member = compress(media_type, &zeros);
        Bomb { blob: Vec::new(), media_type, tar: hash.then(Sha256::new), zero_member }
    }
    fn bytes(&mut self, bytes: &[u8]) {
        self.blob.extend(compress(self.media_type, bytes));
        if let Some(t) = self.tar.as_mut() {
            t.update(bytes);
        }
    }
    fn zero_mib(&mut self, n: u64) {
        let zeros = vec![0u8; MIB];
        for _ in 0..n {
            self.blob.extend_from_slice(&self.zero_member);
            if let Some(t) = self.tar.as_mut() {
                t.update(&zeros);
            }
        }
    }
    fn finish(self) -> Layer {
        let diff_id = self.tar.map_or_else(|| format!("sha256:{}", "0".repeat(64)), hex_digest);
        Layer { blob: self.blob, media_type: self.media_type, diff_id }
    }
}

fn compress(media_type: &str, bytes: &[u8]) -> Vec<u8> {
    if media_type == ZSTD {
        return zstd::bulk::compress(bytes, 19).unwrap();
    }
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A gzip layer written straight into a layout's blob directory as it is
/// built, so a layer of gigabytes is in memory neither here nor, if the
/// auditor streams, there: the tar is hashed for its diff-id, the blob is
/// hashed and counted on its way to the file. A MiB of zeros is one
/// precompressed gzip member (multi-member gzip, as pigz writes it).
struct BlobFile {
    file: std::io::BufWriter<std::fs::File>,
    dir: PathBuf,
    blob: Sha256,
    size: u64,
    tar: Sha256,
    zero_member: Vec<u8>,
}

impl BlobFile {
    fn new(sb: &Sandbox) -> BlobFile {
        let dir = sb.path("layout/blobs/sha256");
        let file = std::io::BufWriter::new(std::fs::File::create(dir.join("partial")).unwrap());
        BlobFile { file, dir, blob: Sha256::new(), size: 0, tar: Sha256::new(), zero_member: compress(GZIP, &vec![0u8; MIB]) }
    }
    fn put(&mut self, compressed: &[u8]) {
        self.file.write_all(compressed).unwrap();
        self.blob.update(compressed);
        self.size += compressed.len() as u64;
    }
    fn bytes(&mut self, bytes: &[u8]) {
        self.put(&compress(GZIP, bytes));
        self.tar.update(bytes);
    }
    fn zero_mib(&mut self, n: u64) {
        let (member, zeros) = (std::mem::take(&mut self.zero_member), vec![0u8; MIB]);
        for _ in 0..n {
            self.put(&member);
            self.tar.update(&zeros);
        }
        self.zero_member = member;
    }
    /// The blob, renamed to its digest: its descriptor and diff-id.
    fn finish(self) -> (Value, String) {
        self.file.into_inner().unwrap().sync_all().unwrap();
        let digest = hex_digest(self.blob);
        std::fs::rename(self.dir.join("partial"), self.dir.join(&digest[7..])).unwrap();
        (json!({ "mediaType": GZIP, "digest": digest, "size": self.size }), hex_digest(self.tar))
    }
}

/// The layer every image starts from: a small, ordinary root filesystem.
fn base() -> Layer {
    layer(GZIP, |t| {
        for d in ["etc/", "dev/", "tmp/", "usr/", "usr/bin/", "usr/lib/", "usr/lib/python3/", "usr/lib/python3/dist-packages/"] {
            t.dir(d);
        }
        t.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n").file("usr/bin/tool", b"\x7fELF tool").symlink("bin", "usr/bin");
        t.file("usr/lib/python3/dist-packages/mod.py", b"VALUE = 'A'\n");
    })
}

// ---------------------------------------------------------------- sandbox

/// A temporary directory holding the OCI layout, the cache, `HOME` and
/// the sentinel directory hostile names and links aim at.
pub(crate) struct Sandbox {
    root: tempfile::TempDir,
}

/// One measured run.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) report: Value,
    rss_kib: u64,
    elapsed: Duration,
}

impl Sandbox {
    pub(crate) fn new() -> Sandbox {
        let root = sandbox_root(&["layout/blobs/sha256", "cache", "home"], "keep.txt");
        std::fs::write(root.path().join("layout/oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        std::fs::write(root.path().join("layout/index.json"), r#"{"schemaVersion":2,"manifests":[]}"#).unwrap();
        Sandbox { root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// The sentinel directory as a path inside an image (no leading `/`).
    fn sentinel(&self) -> String {
        self.path("sentinel").display().to_string().trim_start_matches('/').to_string()
    }

    fn blob(&self, data: &[u8], media_type: &str) -> Value {
        let digest = format!("sha256:{}", hex(&Sha256::digest(data)));
        std::fs::write(self.path("layout/blobs/sha256").join(&digest[7..]), data).unwrap();
        json!({ "mediaType": media_type, "digest": digest, "size": data.len() })
    }

    /// Write image `tag` of `layers` into the layout; its layer digests.
    pub(crate) fn image(&self, tag: &str, layers: &[&Layer]) -> Vec<String> {
        let descriptors: Vec<Value> = layers.iter().map(|l| self.blob(&l.blob, l.media_type)).collect();
        let diff_ids = layers.iter().map(|l| l.diff_id.clone()).collect();
        self.image_of(tag, descriptors, diff_ids, json!({ "Env": ["PATH=/usr/bin:/bin"] }))
    }

    /// Write image `tag` into the layout: layer blobs already there
    /// (`descriptors`), their diff-ids, and the config's `config` object
    /// (Env, Entrypoint, ...); its layer digests.
    fn image_of(&self, tag: &str, descriptors: Vec<Value>, diff_ids: Vec<String>, runtime: Value) -> Vec<String> {
        self.image_of_arch(tag, descriptors, diff_ids, runtime, "amd64")
    }

    fn image_of_arch(&self, tag: &str, descriptors: Vec<Value>, diff_ids: Vec<String>, runtime: Value, arch: &str) -> Vec<String> {
        let history: Vec<Value> = (0..descriptors.len()).map(|i| json!({ "created_by": format!("layer {i}") })).collect();
        let config = json!({
            "architecture": arch, "os": "linux",
            "config": runtime,
            "rootfs": { "type": "layers", "diff_ids": diff_ids },
            "history": history,
        });
        let config = self.blob(&serde_json::to_vec(&config).unwrap(), "application/vnd.oci.image.config.v1+json");
        let manifest = json!({ "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": config, "layers": descriptors });
        let mut entry = self.blob(&serde_json::to_vec(&manifest).unwrap(), "application/vnd.oci.image.manifest.v1+json");
        entry["annotations"] = json!({ "org.opencontainers.image.ref.name": tag });
        let index_path = self.path("layout/index.json");
        let mut index: Value = serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
        index["manifests"].as_array_mut().unwrap().push(entry);
        std::fs::write(&index_path, serde_json::to_vec(&index).unwrap()).unwrap();
        descriptors.iter().map(|d| d["digest"].as_str().unwrap().to_string()).collect()
    }

    /// Copy the sample image `samples/images/NAME` into the layout as
    /// `tag`: its layers, diff-ids and runtime config, to build on.
    pub(crate) fn sample(&self, name: &str, tag: &str) -> Sample {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/images").join(name);
        let read = |digest: &str| std::fs::read(dir.join("blobs/sha256").join(digest.trim_start_matches("sha256:"))).unwrap();
        let index: Value = serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
        let manifest: Value = serde_json::from_slice(&read(index["manifests"][0]["digest"].as_str().unwrap())).unwrap();
        let config: Value = serde_json::from_slice(&read(manifest["config"]["digest"].as_str().unwrap())).unwrap();
        let layers: Vec<Value> = manifest["layers"].as_array().unwrap().clone();
        for l in &layers {
            self.blob(&read(l["digest"].as_str().unwrap()), l["mediaType"].as_str().unwrap());
        }
        let diff_ids = config["rootfs"]["diff_ids"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_string()).collect();
        let sample = Sample { layers, diff_ids, runtime: config["config"].clone(), arch: "amd64".into() };
        self.image_over(tag, &sample, &[], None);
        sample
    }

    /// Image `tag`: `sample`'s layers and `layers` on top, with `runtime`
    /// as its config's `config` (the sample's when `None`).
    pub(crate) fn image_over(&self, tag: &str, sample: &Sample, layers: &[&Layer], runtime: Option<Value>) -> Sample {
        let runtime = runtime.unwrap_or_else(|| sample.runtime.clone());
        let mut next = Sample { layers: sample.layers.clone(), diff_ids: sample.diff_ids.clone(), runtime, arch: sample.arch.clone() };
        for l in layers {
            next.layers.push(self.blob(&l.blob, l.media_type));
            next.diff_ids.push(l.diff_id.clone());
        }
        self.image_of_arch(tag, next.layers.clone(), next.diff_ids.clone(), next.runtime.clone(), &next.arch);
        next
    }

    /// A multi-platform index `tag` of images already in the layout: one
    /// `(platform, image tag)` per entry.
    pub(crate) fn index(&self, tag: &str, entries: &[(&str, &str)]) {
        let index_path = self.path("layout/index.json");
        let mut index: Value = serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
        let manifests: Vec<Value> = entries
            .iter()
            .map(|(platform, image)| {
                let entry = index["manifests"].as_array().unwrap().iter().find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == *image).unwrap();
                let (os, arch) = platform.split_once('/').unwrap();
                json!({ "mediaType": entry["mediaType"], "digest": entry["digest"], "size": entry["size"], "platform": { "os": os, "architecture": arch } })
            })
            .collect();
        let body = json!({ "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": manifests });
        let mut entry = self.blob(&serde_json::to_vec(&body).unwrap(), "application/vnd.oci.image.index.v1+json");
        entry["annotations"] = json!({ "org.opencontainers.image.ref.name": tag });
        index["manifests"].as_array_mut().unwrap().push(entry);
        std::fs::write(&index_path, serde_json::to_vec(&index).unwrap()).unwrap();
    }

    fn reference(&self, tag: &str) -> String {
        format!("oci:{}:{tag}", self.path("layout").display())
    }

    /// Run `auditor image ARGS --format json --cache-dir CACHE` in the
    /// sandbox and hold it to the guarantees: nothing changed outside the
    /// cache, only cache files in it, peak RSS under the ceiling.
    fn run(&self, case: &str, args: &[&str]) -> Run {
        let cache = self.path("cache");
        let outside_cache = |dir: &Path| snapshot(dir).into_iter().filter(|(p, _)| !p.starts_with(&cache)).collect::<Vec<_>>();
        let before = outside_cache(self.root.path());
        let mut all = vec!["image"];
        all.extend_from_slice(args);
        let cache_arg = cache.display().to_string();
        all.extend_from_slice(&["--format", "json", "--cache-dir", &cache_arg]);
        let m = auditor_measured(&all, self.root.path(), &self.path("home"));
        assert_eq!(outside_cache(self.root.path()), before, "{case}: something outside the cache dir changed");
        assert_eq!(std::fs::read_to_string(self.path("sentinel/keep.txt")).unwrap(), "untouched\n");
        for (path, _) in snapshot(&cache) {
            let rel = path.strip_prefix(&cache).unwrap().display().to_string();
            let name = rel.strip_prefix("layers-v1/").unwrap_or("");
            let ok = rel == "layers-v1"
                || name
                    .strip_prefix("sha256-")
                    .and_then(|n| n.strip_suffix(".idx").or_else(|| n.strip_suffix(".pack")))
                    .map(|n| n.strip_suffix(".blake3").unwrap_or(n))
                    .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(ok, "{case}: {rel} in the cache dir is not a cache file");
        }
        println!("hostile-layers peak-rss {case} {} KiB {:.2} s exit {}", m.max_rss_kib, m.elapsed.as_secs_f64(), m.code);
        assert!(m.max_rss_kib < CEILING_KIB, "{case}: peak RSS {} KiB over the {CEILING_KIB} KiB ceiling", m.max_rss_kib);
        Run { code: m.code, report: m.json(), rss_kib: m.max_rss_kib, elapsed: m.elapsed }
    }

    pub(crate) fn verify(&self, case: &str, tag: &str, flags: &[&str]) -> Run {
        let reference = self.reference(tag);
        let mut args = vec!["verify", reference.as_str()];
        args.extend_from_slice(flags);
        self.run(case, &args)
    }

    /// `image diff TAG --upstream base FLAGS`.
    pub(crate) fn diff(&self, case: &str, tag: &str, flags: &[&str]) -> Run {
        let (pinned, upstream) = (self.reference(tag), self.reference("base"));
        let mut args = vec!["diff", pinned.as_str(), "--upstream", upstream.as_str()];
        args.extend_from_slice(flags);
        self.run(case, &args)
    }
}

// ------------------------------------------------------------ report views

fn hostile_findings(report: &Value) -> Vec<&Value> {
    findings(report).filter(|f| f["rule"] == "image-integrity/hostile-entry").collect()
}

/// The hostile-entry finding at `path`, checked for its shape: kind,
/// severity, the layer digest and the reason in its evidence.
fn hostile<'a>(report: &'a Value, path: &str, layer: &str) -> &'a Value {
    let all = hostile_findings(report);
    let f = all.iter().find(|f| f["path"] == path).copied().unwrap_or_else(|| {
        let clip = |v: &Value| v.as_str().unwrap_or("").chars().take(160).collect::<String>();
        let seen: Vec<String> = all.iter().take(20).map(|f| format!("{} | {}", clip(&f["path"]), clip(&f["evidence"][0]["text"]))).collect();
        panic!("no hostile-entry at {}; {} hostile entries, the first:\n{}", path.chars().take(160).collect::<String>(), all.len(), seen.join("\n"))
    });
    assert_eq!((f["kind"].as_str(), f["severity"].as_str()), (Some("hostile-entry"), Some("error")), "{f:#}");
    assert_eq!(f["evidence"][0]["layer"], layer, "{f:#}");
    f
}

fn reason(f: &Value) -> &str {
    f["evidence"][0]["text"].as_str().unwrap()
}

/// The engine-patch finding (a file-level change) at `path`, if any.
pub(crate) fn change<'a>(report: &'a Value, path: &str) -> Option<&'a Value> {
    findings(report).find(|f| f["path"] == path && f["rule"].as_str().unwrap().starts_with("engine-patch/"))
}

fn not_examined(report: &Value) -> String {
    report["not_examined"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

// ------------------------------------------------------------------ cases

#[test]
fn an_ordinary_layer_passes_with_no_hostile_entry() {
    let sb = Sandbox::new();
    let b = base();
    let ordinary = layer(GZIP, |t| {
        t.file("usr/lib/python3/dist-packages/new.py", b"X = 1\n").hardlink("usr/bin/tool2", "usr/bin/tool").symlink("usr/lib/alias", "python3");
        t.file("usr/lib/alias/via-link.py", b"Y = 2\n").special("dev/null", b'3');
    });
    sb.image("base", &[&b]);
    sb.image("ok", &[&b, &ordinary]);
    let run = sb.diff("ordinary", "ok", &[]);
    assert_eq!(run.code, 0, "{:#}", run.report);
    assert!(hostile_findings(&run.report).is_empty(), "{:#}", run.report);
    assert_eq!(check(&run.report, "image-integrity")["status"], "pass");
    // the hard link has its target's content; an entry through an in-root link lands where it points
    assert!(change(&run.report, "/usr/bin/tool2").is_some());
    assert!(change(&run.report, "/usr/lib/python3/via-link.py").is_some(), "{:#}", run.report);
    assert!(change(&run.report, "/usr/lib/alias/via-link.py").is_none());
    // a cache too small for one layer still gives the same answer (it is trimmed after the command)
    let tiny = Sandbox::new();
    tiny.image("base", &[&b]);
    tiny.image("ok", &[&b, &ordinary]);
    let again = tiny.diff("ordinary-cache-max-size-1", "ok", &["--cache-max-size", "1"]);
    assert_eq!((again.code, &again.report["checks"]), (0, &run.report["checks"]));
    assert!(snapshot(&tiny.path("cache/layers-v1")).is_empty(), "evicted after the command");
}

#[test]
fn dot_dot_and_absolute_names_are_reported_and_nothing_lands_outside() {
    let sb = Sandbox::new();
    let b = base();
    let sentinel = sb.sentinel();
    let climb = format!("usr/{}{sentinel}/dotdot.py", "../".repeat(12));
    let absolute = format!("/{sentinel}/absolute.py");
    let evil = layer(GZIP, |t| {
        t.file(&climb, b"print('escaped')\n").file(&absolute, b"print('absolute')\n").file("etc/fine", b"ok\n");
    });
    sb.image("base", &[&b]);
    let digests = sb.image("names", &[&b, &evil]);
    let run = sb.diff("dotdot-absolute", "names", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let f = hostile(&run.report, &climb, &digests[1]);
    assert!(reason(f).contains("`..` component climbs out of its directory") && reason(f).ends_with("not applied"), "{f:#}");
    let f = hostile(&run.report, &absolute, &digests[1]);
    assert!(reason(f).starts_with("an absolute path: applied inside the root"), "{f:#}");
    // the absolute name is in the index, inside the root; the climbing one is not anywhere
    assert!(change(&run.report, &absolute).is_some());
    assert!(findings(&run.report).all(|f| f["path"] != format!("/{sentinel}/dotdot.py")));
    assert!(change(&run.report, "/etc/fine").is_some());
}

#[test]
fn a_symlink_out_of_the_root_and_entries_written_through_it_are_refused() {
    let sb = Sandbox::new();
    let b = base();
    let sentinel = sb.sentinel();
    let out = format!("{}{sentinel}", "../".repeat(12));
    let evil = layer(GZIP, |t| {
        t.symlink("usr/lib/evil", &out).file("usr/lib/evil/pwned.py", b"print('pwned')\n");
        // an absolute link is inside the root for a runtime: followed, and what is written through it reported
        t.symlink("usr/lib/abs", &format!("/{sentinel}")).file("usr/lib/abs/through-abs.py", b"Z = 3\n");
    });
    let later = layer(GZIP, |t| {
        t.file("usr/lib/evil/later.py", b"print('later')\n");
    });
    sb.image("base", &[&b]);
    let digests = sb.image("links", &[&b, &evil, &later]);
    let run = sb.diff("symlink-escape", "links", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let f = hostile(&run.report, "/usr/lib/evil/pwned.py", &digests[1]);
    assert_eq!(
        reason(f),
        format!(
            "its directory goes through the symlink /usr/lib/evil -> {out}, which leaves the root (an extractor that follows it writes outside the image): not applied"
        )
    );
    hostile(&run.report, "/usr/lib/evil/later.py", &digests[2]);
    let f = hostile(&run.report, "/usr/lib/abs/through-abs.py", &digests[1]);
    assert_eq!(
        reason(f),
        format!(
            "its directory goes through the symlink /usr/lib/abs -> /{sentinel}, an absolute target: applied at /{sentinel}/through-abs.py inside the root, as a runtime does (an extractor that follows it writes outside the image)"
        )
    );
    assert_eq!(hostile_findings(&run.report).len(), 3, "{:#}", run.report);
    // the link itself is indexed as a link; nothing under it, nothing at its target
    assert_eq!(change(&run.report, "/usr/lib/evil").unwrap()["kind"], "added");
    assert!(findings(&run.report).filter(|f| f["rule"] != "image-integrity/hostile-entry").all(|f| !f["path"].as_str().unwrap_or("").contains("pwned")));
    assert!(change(&run.report, &format!("/{sentinel}/through-abs.py")).is_some(), "{:#}", run.report);
}

#[test]
fn hard_links_out_of_the_root_or_to_entries_not_yet_seen_are_refused_without_content() {
    let sb = Sandbox::new();
    let b = base();
    let sentinel = sb.sentinel();
    let climbing = format!("{}{sentinel}/keep.txt", "../".repeat(12));
    let host = format!("/{sentinel}/keep.txt");
    let evil = layer(GZIP, |t| {
        t.hardlink("usr/bin/out", &climbing).hardlink("usr/bin/host", &host).hardlink("usr/bin/ghost", "usr/bin/not-there");
        t.hardlink("usr/bin/early", "usr/bin/late").file("usr/bin/late", b"late\n").hardlink("usr/bin/dir", "usr/lib");
        t.hardlink("usr/bin/passwd-copy", "etc/passwd").hardlink("usr/bin/passwd-abs", "/etc/passwd");
    });
    sb.image("base", &[&b]);
    let digests = sb.image("hard", &[&b, &evil]);
    let run = sb.diff("hardlinks", "hard", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let f = hostile(&run.report, "/usr/bin/out", &digests[1]);
    assert!(reason(f).starts_with(&format!("a hard link whose target {climbing} a `..` component")), "{f:#}");
    for (path, target) in [("/usr/bin/host", host.as_str()), ("/usr/bin/ghost", "/usr/bin/not-there"), ("/usr/bin/early", "/usr/bin/late")] {
        hostile(&run.report, path, &digests[1]);
        let expected =
            format!("a hard link to {target}, which no earlier entry of the image wrote: not applied, no content assumed (a runtime fails to apply the layer)");
        assert!(hostile_findings(&run.report).iter().any(|f| f["path"] == path && reason(f) == expected), "{path}: {:#}", run.report);
        assert!(change(&run.report, path).is_none(), "{path} must not be indexed");
    }
    assert!(reason(hostile(&run.report, "/usr/bin/dir", &digests[1])).starts_with("a hard link to the directory /usr/lib"));
    // An absolute target is flagged like a climbing one, also where the image has it.
    for path in ["/usr/bin/host", "/usr/bin/passwd-abs"] {
        assert!(
            hostile_findings(&run.report).iter().any(|f| f["path"] == path && reason(f).starts_with("a hard link to the absolute path")),
            "{path}: {:#}",
            run.report
        );
    }
    assert_eq!(hostile_findings(&run.report).len(), 7);
    // a link to a file the image has is that file
    assert_eq!(change(&run.report, "/usr/bin/passwd-copy").unwrap()["kind"], "added");
}

/// A header block with its checksum set again after `edit`.
pub(crate) fn edited(mut h: [u8; 512], edit: impl FnOnce(&mut [u8; 512])) -> Vec<u8> {
    edit(&mut h);
    h[148..156].fill(b' ');
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    h.to_vec()
}

/// Headers tar readers read differently, each hiding an edit of an
/// installed module from a reader that is not the runtime's: a directory
/// whose size field covers the edited file's header, a GNU long name
/// beside a PAX path, a star header whose prefix is 131 bytes. Each is
/// read as Go's archive/tar reads it (the edit is a change) and is a
/// hostile entry naming the other reading.
#[test]
fn headers_tar_readers_disagree_on_are_read_as_the_runtime_reads_them() {
    let module = "usr/lib/python3/dist-packages/mod.py";
    let patched = b"VALUE = 'B'\n";
    let file = |name: &str| [header(name.as_bytes(), b'0', patched.len() as u64, b"").to_vec(), padded_data(patched)].concat();
    let long = [module.as_bytes(), b"\0"].concat();
    let mut gnu = header(b"././@LongLink", b'L', long.len() as u64, b"").to_vec();
    gnu.extend_from_slice(&long);
    pad(&mut gnu);
    let mut pax = header(b"PaxHeader", b'x', 0, b"").to_vec();
    let records = pax_record("path", b"usr/lib/python3/dist-packages/other.py");
    pax = edited(pax[..512].try_into().unwrap(), |h| octal(&mut h[124..136], records.len() as u64));
    pax.extend(records);
    pad(&mut pax);
    let star = edited(header(b"mod.py", b'0', patched.len() as u64, b""), |h| {
        // A prefix that fills all 131 bytes: a 155-byte reader runs on into the star times.
        let prefix = format!("usr/lib/python3/dist-packages{}", "/.".repeat(51));
        h[345..476].copy_from_slice(prefix.as_bytes());
        h[476..488].copy_from_slice(b"00000000000\0");
        h[508..512].copy_from_slice(b"tar\0");
    });
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "dir-size",
            [edited(header(b"usr/lib/python3/x/", b'5', 0, b""), |h| octal(&mut h[124..136], 1024)), file(module)].concat(),
            "directory entry with a size field",
        ),
        ("gnu-over-pax", [pax, gnu, file("short.py")].concat(), "Go takes the GNU one"),
        ("star-prefix", [star, padded_data(patched)].concat(), "131-byte prefix"),
    ];
    let b = base();
    for (case, bytes, said) in cases {
        let sb = Sandbox::new();
        let evil = layer(GZIP, |t| {
            t.raw(&bytes);
        });
        sb.image("base", &[&b]);
        sb.image("evil", &[&b, &evil]);
        let run = sb.diff(case, "evil", &[]);
        assert_eq!(run.code, 1, "{case}: {:#}", run.report);
        assert!(change(&run.report, &format!("/{module}")).is_some(), "{case}: the edit the runtime applies: {:#}", run.report);
        let disagree: Vec<_> = hostile_findings(&run.report).into_iter().filter(|f| reason(f).contains("tar readers disagree")).collect();
        assert!(disagree.len() == 1 && reason(disagree[0]).contains(said), "{case}: {disagree:#?}");
    }
}

pub(crate) fn padded_data(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    pad(&mut out);
    out
}

#[test]
fn device_nodes_fifos_and_unknown_entry_types_are_reported() {
    let sb = Sandbox::new();
    let b = base();
    let site = "usr/lib/python3/dist-packages";
    let evil = layer(GZIP, |t| {
        t.special(&format!("{site}/evil.py"), b'3').special("usr/sda", b'4').special(&format!("{site}/hang.py"), b'6');
        t.special("dev/console", b'3').special("dev/initctl", b'6');
        t.entry(b"usr/lib/vendor", b'Z', b"", b"vendor data", &[]).entry(b"usr/lib/label", b'V', b"", b"", &[]);
    });
    sb.image("base", &[&b]);
    let digests = sb.image("special", &[&b, &evil]);
    let run = sb.diff("devices-fifos", "special", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    for (path, kind) in [(format!("/{site}/evil.py"), "char device"), ("/usr/sda".to_string(), "block device"), (format!("/{site}/hang.py"), "fifo")] {
        let f = hostile(&run.report, &path, &digests[1]);
        assert!(reason(f).starts_with(&format!("a {kind} outside /dev: indexed as one")), "{f:#}");
        assert!(change(&run.report, &path).is_some(), "{path} is indexed as its type");
    }
    let f = hostile(&run.report, "/usr/lib/vendor", &digests[1]);
    assert_eq!(reason(f), "tar entry type 'Z' is no file type a layer holds (a runtime refuses the layer): not applied");
    hostile(&run.report, "/usr/lib/label", &digests[1]);
    assert_eq!(hostile_findings(&run.report).len(), 5, "/dev is where devices belong: {:#}", run.report);
    assert!(change(&run.report, "/usr/lib/vendor").is_none());
}

#[test]
fn a_decompression_bomb_of_one_huge_file_is_refused_at_its_header() {
    let sb = Sandbox::new();
    // 8 GiB of zeros in an 8 MiB gzip blob
    let mut bomb = Bomb::new(GZIP, false);
    bomb.bytes(&entry_header(b"bomb/zeros", b'0', 8 << 30, b"", &[]));
    bomb.zero_mib(8 << 10);
    bomb.bytes(&[0u8; 1024]);
    let bomb = bomb.finish();
    let digests = sb.image("bomb", &[&base(), &bomb]);
    let run = sb.verify("bomb-8GiB-file", "bomb", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let f = hostile(&run.report, "bomb/zeros", &digests[1]);
    let end = (8u64 << 30) + 512;
    assert!(
        reason(f)
            .starts_with(&format!("decompression bomb: entry bomb/zeros takes the layer to {end} bytes uncompressed from a {}-byte blob", bomb.blob.len())),
        "{f:#}"
    );
    assert!(not_examined(&run.report).contains("layer 1"), "{:#}", run.report);
    assert!(check(&run.report, "engine-patch")["summary"].as_str().unwrap().contains("1 layer(s) not read in full"));
    assert!(run.elapsed < Duration::from_secs(30), "found at the header, before any data: {:?}", run.elapsed);
}

/// Issue 12's combined attack: every hostile entry a layer showed before
/// a decompression bomb stays in the report with the bomb, and the headers
/// after the bomb are still read (data skipped) for hostile names.
#[test]
fn a_limit_keeps_what_the_layer_showed_before_it_and_lists_what_comes_after() {
    let sb = Sandbox::new();
    let b = base();
    let sentinel = sb.sentinel();
    let up = "../".repeat(12);
    let (climb, absolute, after) = (format!("usr/{up}{sentinel}/dotdot.py"), format!("/{sentinel}/absolute.py"), format!("opt/{up}{sentinel}/after.py"));
    let mut head = Tar(Vec::new());
    head.file(&climb, b"print('escaped')\n").file(&absolute, b"print('absolute')\n");
    head.symlink("usr/lib/evil", &format!("{up}{sentinel}")).file("usr/lib/evil/pwned.py", b"print('pwned')\n");
    head.symlink("usr/lib/abs", &format!("/{sentinel}")).file("usr/lib/abs/through-abs.py", b"Z = 3\n");
    head.hardlink("usr/bin/out", &format!("{up}{sentinel}/keep.txt")).hardlink("usr/bin/host", &format!("/{sentinel}/keep.txt"));
    let mut tail = Tar(Vec::new());
    tail.file(&after, b"print('after')\n");
    let mut bomb = Bomb::new(GZIP, true);
    bomb.bytes(&head.0);
    bomb.bytes(&entry_header(b"usr/share/zeros", b'0', 1 << 30, b"", &[]));
    bomb.zero_mib(1024);
    bomb.bytes(&tail.end());
    let bomb = bomb.finish();
    sb.image("base", &[&b]);
    let digests = sb.image("combined", &[&b, &bomb]);
    let run = sb.diff("limit-keeps-evidence", "combined", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    assert!(run.rss_kib < 300 << 10, "peak RSS {} KiB", run.rss_kib);
    let layer = &digests[1];
    assert!(reason(hostile(&run.report, &climb, layer)).contains("`..` component climbs out"));
    assert!(reason(hostile(&run.report, &absolute, layer)).starts_with("an absolute path: applied inside the root"));
    assert!(reason(hostile(&run.report, "/usr/lib/evil/pwned.py", layer)).contains("which leaves the root"));
    assert!(reason(hostile(&run.report, "/usr/lib/abs/through-abs.py", layer)).contains("an absolute target: applied at"));
    assert!(reason(hostile(&run.report, "/usr/bin/out", layer)).contains("a `..` component"));
    hostile(&run.report, "/usr/bin/host", layer);
    let host: Vec<&str> = hostile_findings(&run.report).into_iter().filter(|f| f["path"] == "/usr/bin/host").map(reason).collect();
    assert!(host.iter().any(|r| r.contains("which no earlier entry of the image wrote")) && host.iter().any(|r| r.contains("the absolute path")), "{host:?}");
    let f = hostile(&run.report, "usr/share/zeros", layer);
    assert!(reason(f).starts_with("decompression bomb: entry usr/share/zeros takes the layer to"), "{f:#}");
    assert!(reason(hostile(&run.report, &after, layer)).contains("`..` component climbs out"), "listed after the limit");
    assert_eq!(hostile_findings(&run.report).len(), 9, "{:#}", run.report);
    let why = not_examined(&run.report);
    assert!(why.contains(&format!("layer 1 ({layer})")) && why.contains("entries from #9 on not examined"), "{why}");
    assert!(why.contains("the 1 tar header(s) after it were read to the layer's end for hostile entries only, and its blob's digest verified"), "{why}");
    // files are not compared while a layer is not read in full: the check cannot pass
    let engine = check(&run.report, "engine-patch");
    assert_eq!(engine["status"], "error", "{engine:#}");
    assert!(engine["summary"].as_str().unwrap().starts_with("1 layer(s) not read in full (see not examined): the files were not compared"), "{engine:#}");
    // with no time to read past the limit, what came before still stands and nothing after is claimed
    let run = sb.diff("limit-keeps-evidence-no-scan", "combined", &["--max-scan-seconds", "0"]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    assert_eq!(hostile_findings(&run.report).len(), 8, "{:#}", run.report);
    assert!(hostile_findings(&run.report).iter().all(|f| f["path"] != after.as_str()));
    assert!(!not_examined(&run.report).contains("tar header(s) after it"), "{:#}", run.report);
    assert!(!sb.path("sentinel/after.py").exists() && !sb.path("sentinel/pwned.py").exists());
}

#[test]
fn a_decompression_bomb_of_many_files_stops_at_the_budget() {
    let sb = Sandbox::new();
    // 64 files of 64 MiB of zeros (4 GiB) in a 4 MiB blob
    let mut bomb = Bomb::new(GZIP, false);
    for i in 0..64 {
        bomb.bytes(&entry_header(format!("bomb/f{i:02}").as_bytes(), b'0', 64 << 20, b"", &[]));
        bomb.zero_mib(64);
    }
    bomb.bytes(&[0u8; 1024]);
    let bomb = bomb.finish();
    let digests = sb.image("bomb", &[&base(), &bomb]);
    let run = sb.verify("bomb-64-files", "bomb", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    // the budget is 100x the blob (or 256 MiB, if more); the first file to end past it is the bomb
    let budget = (bomb.blob.len() as u64 * 100).max(256 << 20);
    let first = (1..=64u64).find(|i| i * (512 + (64 << 20)) > budget).unwrap();
    let path = format!("bomb/f{:02}", first - 1);
    let f = hostile(&run.report, &path, &digests[1]);
    assert!(reason(f).starts_with(&format!("decompression bomb: entry {path} takes the layer to {} bytes", first * (512 + (64 << 20)))), "{f:#}");
    assert!(run.elapsed < Duration::from_secs(60), "{:?}", run.elapsed);
}

#[test]
fn a_bomb_hidden_after_the_end_of_archive_marker_is_refused() {
    let sb = Sandbox::new();
    // a zstd layer: a small tar, its end marker, then 2 GiB of zeros
    let mut bomb = Bomb::new(ZSTD, false);
    bomb.bytes(&entry_header(b"etc/motd", b'0', 0, b"", &[]));
    bomb.bytes(&[0u8; 1024]);
    bomb.zero_mib(2048);
    let bomb = bomb.finish();
    let digests = sb.image("tail", &[&base(), &bomb]);
    let run = sb.verify("bomb-after-end-marker", "tail", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let f = hostile(&run.report, "(data after the end-of-archive marker)", &digests[1]);
    assert!(reason(f).starts_with("decompression bomb: entry (data after the end-of-archive marker) takes the layer to 268435457 bytes"), "{f:#}");
}

#[test]
fn the_layer_limits_are_flags() {
    let sb = Sandbox::new();
    // 300 MiB of zeros in a 300 KiB blob: over the 256 MiB floor, so a bomb by default
    let mut zeros = Bomb::new(GZIP, true);
    zeros.bytes(&entry_header(b"data/zeros.bin", b'0', 300 << 20, b"", &[]));
    zeros.zero_mib(300);
    zeros.bytes(&[0u8; 1024]);
    let zeros = zeros.finish();
    let digests = sb.image("zeros", &[&base(), &zeros]);
    let run = sb.verify("zeros-300MiB-default", "zeros", &[]);
    assert_eq!(run.code, 1);
    hostile(&run.report, "data/zeros.bin", &digests[1]);
    // no ratio limit: read, hashed, verified against its diff-id, clean
    let run = sb.verify("zeros-300MiB-no-ratio", "zeros", &["--max-layer-ratio", "0"]);
    assert_eq!(run.code, 0, "{:#}", run.report);
    assert!(hostile_findings(&run.report).is_empty());
    // a size limit: not examined, not hostile (exit 3) — the cache from the run above is not used for a new cache dir
    let fresh = Sandbox::new();
    let digests = fresh.image("zeros", &[&base(), &zeros]);
    let run = fresh.verify("zeros-300MiB-size-limit", "zeros", &["--max-layer-ratio", "0", "--max-layer-size", "100M"]);
    assert_eq!(run.code, 3, "{:#}", run.report);
    assert!(hostile_findings(&run.report).is_empty());
    let why = not_examined(&run.report);
    assert!(
        why.contains(&format!("layer 1 ({})", digests[1]))
            && why.contains("entry data/zeros.bin takes the uncompressed layer to 314573312 bytes, over --max-layer-size (104857600): not read further"),
        "{why}"
    );
    assert_eq!(check(&run.report, "image-integrity")["status"], "error");
}

#[test]
fn ten_thousand_nested_directories_stop_at_the_depth_and_path_limits() {
    let sb = Sandbox::new();
    let deep = layer(GZIP, |t| {
        let mut path = String::new();
        for _ in 0..10_000 {
            path.push_str("d/");
            t.dir(&path);
        }
        t.file(&format!("{path}bottom.py"), b"print('deep')\n");
    });
    let digests = sb.image("deep", &[&base(), &deep]);
    let run = sb.verify("nested-10k-default", "deep", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let at_257 = "/d".repeat(257);
    assert_eq!(reason(hostile(&run.report, &at_257, &digests[1])), "the path is 257 directories deep, over --max-path-depth (256): not applied");
    // 9,745 hostile entries: 200 listed, the rest counted
    assert_eq!(hostile_findings(&run.report).len(), 200);
    let summary = check(&run.report, "image-integrity")["summary"].as_str().unwrap().to_string();
    assert!(summary.contains("9745 hostile layer entries (9545 not listed)"), "{summary}");
    // deeper allowed (the cached layer is judged again): PATH_MAX stops it at level 2049
    let run = sb.verify("nested-10k-depth-100000", "deep", &["--max-path-depth", "100000"]);
    assert_eq!(run.code, 1);
    let at_2049 = format!("{}… (4098 bytes)", "d/".repeat(512));
    assert_eq!(reason(hostile(&run.report, &at_2049, &digests[1])), "the path is longer than 4096 bytes (PATH_MAX): not applied");
}

#[test]
fn a_layer_of_a_hundred_thousand_entries_is_indexed_in_bounded_memory() {
    let sb = Sandbox::new();
    let n: u64 = 100_000;
    let wide = layer(GZIP, |t| {
        for d in 0..100 {
            t.dir(&format!("data/d{d:02}/"));
        }
        // out of order, as no builder writes them: the merge must not care
        for i in 0..n {
            let k = i * 7919 % n;
            t.file(&format!("data/d{:02}/f{k:06}.bin", k % 100), format!("{k}").as_bytes());
        }
    });
    sb.image("wide", &[&base(), &wide]);
    let run = sb.verify("entries-100k", "wide", &[]);
    assert_eq!(run.code, 0, "{:#}", run.report);
    assert!(hostile_findings(&run.report).is_empty());
    assert_eq!(check(&run.report, "image-integrity")["status"], "pass");
    // the walk streams the layer's index: memory is the merged index, a few hundred bytes a path
    assert!(run.rss_kib < 64 << 10, "{} KiB", run.rss_kib);
    // with a lower entry limit, the layer is not examined
    let fresh = Sandbox::new();
    fresh.image("wide", &[&base(), &wide]);
    let run = fresh.verify("entries-100k-limit-50k", "wide", &["--max-layer-entries", "50000"]);
    assert_eq!(run.code, 3, "{:#}", run.report);
    assert!(not_examined(&run.report).contains("more than 50000 entries, over --max-layer-entries: not read further"), "{:#}", run.report);
    // the layer alone fits (100,100 entries), the image's merged index does not
    let run = fresh.verify("entries-100k-merged-limit", "wide", &["--max-layer-entries", "100100"]);
    assert_eq!(run.code, 3, "{:#}", run.report);
    assert!(not_examined(&run.report).contains("layers 1 to 1 not applied: the merged index passes 100100 paths (--max-layer-entries)"), "{:#}", run.report);
}

#[test]
fn a_million_entry_layer_is_indexed_under_the_ceiling() {
    let sb = Sandbox::new();
    // twice the default --max-layer-entries: 100 directories, 999,900 empty files
    let million = layer(GZIP, |t| {
        for d in 0..100 {
            t.dir(&format!("m/d{d:02}/"));
        }
        for i in 0..999_900u64 {
            t.file(&format!("m/d{:02}/f{i:06}", i % 100), b"");
        }
    });
    sb.image("million", &[&million]);
    let run = sb.verify("entries-1M", "million", &["--max-layer-entries", "1000000"]);
    assert_eq!(run.code, 0, "{:#}", run.report);
    assert!(run.rss_kib < 320 << 10, "{} KiB", run.rss_kib);
}

#[test]
fn an_entry_written_twice_in_one_layer_is_reported_and_the_later_one_wins() {
    let sb = Sandbox::new();
    let b = base();
    let site = "usr/lib/python3/dist-packages";
    let twice = layer(GZIP, |t| {
        t.file(&format!("{site}/mod.py"), b"VALUE = 'B'\n").file(&format!("{site}/mod.py"), b"VALUE = 'C'\n");
        t.file("etc/motd", b"hi\n").symlink("etc/motd", "/etc/passwd");
        t.dir("opt/").dir("opt/").file("etc/same", b"same\n").file("etc/same", b"same\n");
        // two names for one path, through the base's bin -> usr/bin
        t.file("usr/bin/x", b"one\n").file("bin/x", b"two\n");
    });
    sb.image("base", &[&b]);
    let digests = sb.image("twice", &[&b, &twice]);
    let run = sb.diff("duplicates", "twice", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let f = hostile(&run.report, &format!("/{site}/mod.py"), &digests[1]);
    assert!(reason(f).starts_with("written twice as a file with other content in one layer: the later one is indexed"), "{f:#}");
    assert!(reason(hostile(&run.report, "/etc/motd", &digests[1])).starts_with("written as a file and then as a symlink in one layer"));
    assert!(reason(hostile(&run.report, "/bin/x", &digests[1])).contains("(at /usr/bin/x, through a symlink)"));
    assert_eq!(hostile_findings(&run.report).len(), 3, "a directory or identical file twice is no hostile entry: {:#}", run.report);
    // the later content is what the diff compares
    let modified = change(&run.report, &format!("/{site}/mod.py")).unwrap();
    assert!(modified["diff"].as_str().unwrap().contains("+VALUE = 'C'"), "{modified:#}");
}

#[test]
fn pax_names_with_nul_bytes_bad_utf8_or_past_path_max_are_hostile_entries() {
    let sb = Sandbox::new();
    let long = format!("usr/{}", "n".repeat(100_000));
    let odd = layer(GZIP, |t| {
        t.entry(b"usr/short", b'0', b"", b"x", &[("path", b"usr/caf\xe9.py")]);
        t.entry(b"usr/short", b'0', b"", b"x", &[("path", long.as_bytes())]);
        // a negative time is a valid PAX time (before 1970): indexed, no finding
        t.entry(b"usr/old.py", b'0', b"", b"OLD = 1\n", &[("mtime", b"-86400.5")]);
    });
    let digests = sb.image("pax", &[&base(), &odd]);
    let run = sb.verify("pax-names", "pax", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    assert!(reason(hostile(&run.report, "usr/caf\\xe9.py", &digests[1])).starts_with("the path is not UTF-8"));
    let shown = format!("{}… (100004 bytes)", &long[..1024]);
    assert_eq!(reason(hostile(&run.report, &shown, &digests[1])), "the path is longer than 4096 bytes (PATH_MAX): not applied");
    assert_eq!(hostile_findings(&run.report).len(), 2, "{:#}", run.report);
    // A NUL byte in a PAX path or link path: Go refuses the header, so no
    // runtime applies the layer; it is refused and named, not examined.
    for (key, value) in [("path", &b"usr/nul\0hidden.py"[..]), ("linkpath", b"tar\0get")] {
        let nul = layer(GZIP, |t| {
            t.entry(b"usr/l", if key == "path" { b'0' } else { b'2' }, b"", b"", &[(key, value)]);
        });
        sb.image("nul", &[&base(), &nul]);
        let run = sb.verify("pax-nul", "nul", &[]);
        assert_eq!(run.code, 3, "{key}: {:#}", run.report);
        assert!(not_examined(&run.report).contains("NUL byte"), "{key}: {}", not_examined(&run.report));
    }
}

#[test]
fn pax_headers_with_huge_or_bogus_values_are_clear_errors_or_bombs() {
    let sb = Sandbox::new();
    // a size that lies: 99999999999999 bytes claimed, 1 byte there
    let liar = |media_type| {
        layer(media_type, |t| {
            t.entry(b"usr/liar", b'0', b"", b"x", &[("size", b"99999999999999")]);
        })
    };
    let (gz, plain) = (liar(GZIP), liar(PLAIN));
    let bogus_time = layer(GZIP, |t| {
        t.entry(b"usr/when", b'0', b"", b"x", &[("mtime", b"yesterday")]);
    });
    let huge_record = layer(GZIP, |t| {
        t.entry(b"usr/big", b'0', b"", b"x", &[("comment", &vec![b'c'; 2 << 20])]);
    });
    let gz_digests = sb.image("liar-gz", &[&base(), &gz]);
    let plain_digests = sb.image("liar-plain", &[&base(), &plain]);
    sb.image("bogus-time", &[&base(), &bogus_time]);
    let huge_digests = sb.image("huge-record", &[&base(), &huge_record]);
    // compressed: the claim is an expansion no blob of that size can make
    let run = sb.verify("pax-size-lie-gzip", "liar-gz", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    assert!(
        reason(hostile(&run.report, "usr/liar", &gz_digests[1])).starts_with("decompression bomb: entry usr/liar takes the layer to 100000000001536 bytes")
    );
    // uncompressed: over the size limit, not examined
    let run = sb.verify("pax-size-lie-plain", "liar-plain", &[]);
    assert_eq!(run.code, 3, "{:#}", run.report);
    let why = not_examined(&run.report);
    assert!(
        why.contains(&plain_digests[1]) && why.contains("entry usr/liar takes the uncompressed layer to 100000000001536 bytes, over --max-layer-size"),
        "{why}"
    );
    let run = sb.verify("pax-bogus-mtime", "bogus-time", &[]);
    assert_eq!(run.code, 3, "{:#}", run.report);
    assert!(not_examined(&run.report).contains("tar entry at byte 0: PAX record mtime=\"yesterday\" is not a number"), "{:#}", run.report);
    // an extension header over the 1 MiB read is streamed past; its entry is hostile and the walk goes on
    let run = sb.verify("pax-2MiB-record", "huge-record", &[]);
    assert_eq!(run.code, 1, "{:#}", run.report);
    let size = pax_record("comment", &vec![b'c'; 2 << 20]).len();
    let f = hostile(&run.report, "usr/big", &huge_digests[1]);
    assert!(reason(f).starts_with(&format!("its tar header carries PAX records of {size} bytes, over the 1048576 read")), "{f:#}");
    assert!(not_examined(&run.report).is_empty(), "{:#}", run.report);
}

#[test]
fn a_config_that_lies_about_a_diff_id_fails_inspect_verify_layers_and_not_the_walk() {
    let sb = Sandbox::new();
    let mut liar = base();
    liar.diff_id = format!("sha256:{}", "0".repeat(64));
    sb.image("liar", &[&liar]);
    sb.image("honest", &[&base()]);
    let inspect = |tag: &str| {
        let m = auditor_measured(&["image", "inspect", &sb.reference(tag), "--verify-layers", "--format", "json"], sb.root.path(), &sb.path("home"));
        (m.code, m.json())
    };
    let (code, report) = inspect("liar");
    assert_eq!(code, 1, "{report:#}");
    let finding = &report["checks"][0]["findings"][0];
    assert_eq!(finding["rule"], "image-integrity/digest-mismatch", "{report:#}");
    assert!(finding["message"].as_str().unwrap().contains("uncompressed"), "{finding:#}");
    assert_eq!(inspect("honest").0, 0);
    // the walk authenticates the layer by its blob digest and trusts the diff-id for nothing
    let run = sb.verify("diff-id-lie", "liar", &[]);
    assert_eq!(run.code, 0, "{:#}", run.report);
    assert_eq!(check(&run.report, "image-integrity")["status"], "pass");
}

#[test]
fn image_diff_streams_a_gigabyte_layer_of_the_pinned_image_in_bounded_memory() {
    let sb = Sandbox::new();
    let b = base();
    sb.image("base", &[&b]);
    // 1 GiB of zeros in one file, then a small file after it, written to the
    // layout as built: the auditor must read all of it (no ratio limit) and
    // hold none of it
    let mut big = BlobFile::new(&sb);
    big.bytes(&entry_header(b"usr/share/model/weights.bin", b'0', 1 << 30, b"", &[]));
    big.zero_mib(1024);
    let after = b"read past the gigabyte\n";
    let mut tail = entry_header(b"usr/share/model/after.txt", b'0', after.len() as u64, b"", &[]);
    tail.extend_from_slice(after);
    pad(&mut tail);
    tail.extend_from_slice(&[0u8; 1024]);
    big.bytes(&tail);
    let (descriptor, diff_id) = big.finish();
    let descriptors = vec![sb.blob(&b.blob, b.media_type), descriptor];
    let digests = sb.image_of("big", descriptors, vec![b.diff_id.clone(), diff_id], json!({ "Env": ["PATH=/usr/bin:/bin"] }));
    let run = sb.diff("diff-1GiB-layer", "big", &["--max-layer-ratio", "0"]);
    assert!(!not_examined(&run.report).contains(&digests[1]), "{:#}", run.report);
    assert!(hostile_findings(&run.report).is_empty(), "{:#}", run.report);
    assert_eq!(check(&run.report, "image-integrity")["status"], "pass", "{:#}", run.report);
    for path in ["/usr/share/model/weights.bin", "/usr/share/model/after.txt"] {
        assert_eq!(change(&run.report, path).map(|f| &f["kind"]), Some(&json!("added")), "{path}: {:#}", run.report);
    }
    assert!(run.rss_kib < STREAMED_KIB, "a 1 GiB layer took {} KiB: not streamed", run.rss_kib);
    // `image inspect --verify-layers` streams it too, to its diff-id
    let m = auditor_measured(&["image", "inspect", &sb.reference("big"), "--verify-layers", "--format", "json"], sb.root.path(), &sb.path("home"));
    println!("hostile-layers peak-rss inspect-1GiB-layer {} KiB {:.2} s exit {}", m.max_rss_kib, m.elapsed.as_secs_f64(), m.code);
    assert_eq!(m.code, 0, "{}{}", m.stdout, m.stderr);
    assert_eq!(check(&m.json(), "image-integrity")["status"], "pass");
    assert!(m.max_rss_kib < STREAMED_KIB, "inspect: a 1 GiB layer took {} KiB: not streamed", m.max_rss_kib);
}

/// `.pth` lines as CPython splits them: a bare `\r` before `import` (the
/// import runs) is judged as the plain import line is; a `.pth` too large
/// to read whole is an error; a path-only `.pth` is judged apart.
#[test]
fn pth_files_are_read_as_cpython_reads_them() {
    let sb = Sandbox::new();
    let site = "usr/lib/python3/dist-packages";
    let big = format!("{}import hack\n", "/opt/x\n".repeat(200_000));
    let hooks = layer(GZIP, |t| {
        t.file(&format!("{site}/plain.pth"), b"import hack\n").file(&format!("{site}/cr.pth"), b"/opt/x\rimport hack\n");
        t.file(&format!("{site}/big.pth"), big.as_bytes()).file(&format!("{site}/dir.pth"), b"/opt/x\n");
    });
    let b = base();
    sb.image("base", &[&b]);
    sb.image("pth", &[&b, &hooks]);
    for run in [sb.diff("pth-diff", "pth", &[]), sb.verify("pth-verify", "pth", &[])] {
        let severity = |name: &str| {
            let path = format!("/{site}/{name}");
            let f = findings(&run.report).find(|f| f["path"] == path.as_str() && f["rule"] == "engine-patch/hook");
            f.unwrap_or_else(|| panic!("{path}: {:#}", run.report))["severity"].as_str().unwrap().to_string()
        };
        let import = severity("plain.pth");
        assert_eq!(severity("cr.pth"), import, "{:#}", run.report);
        // what a .pth too large to read whole runs is not known: an error, with an upstream or without
        assert_eq!(severity("big.pth"), "error", "{:#}", run.report);
        assert_ne!(severity("dir.pth"), import, "a path-only .pth is judged apart: {:#}", run.report);
    }
}

#[test]
fn start_up_hooks_in_an_image_are_reported_and_never_run() {
    let sb = Sandbox::new();
    let marker = sb.path("sentinel/executed");
    let touch = format!("touch {}", marker.display());
    let python = format!("import os; os.system({touch:?})\n");
    let shell = format!("#!/bin/sh\n{touch}\n");
    let site = "usr/lib/python3/dist-packages";
    let hooks = layer(GZIP, |t| {
        t.file(&format!("{site}/zz-hook.pth"), python.as_bytes()).file(&format!("{site}/sitecustomize.py"), python.as_bytes());
        t.dir("etc/profile.d/").executable("etc/profile.d/x.sh", shell.as_bytes()).executable("usr/bin/entry.sh", shell.as_bytes());
    });
    let b = base();
    sb.image("base", &[&b]);
    let descriptors = vec![sb.blob(&b.blob, b.media_type), sb.blob(&hooks.blob, hooks.media_type)];
    let runtime = json!({ "Env": ["PATH=/usr/bin:/bin"], "Entrypoint": ["/bin/sh", "-c", touch], "Cmd": ["/usr/bin/entry.sh"] });
    let digests = sb.image_of("hooks", descriptors, vec![b.diff_id.clone(), hooks.diff_id.clone()], runtime);
    let hook = |report: &Value, path: &str| {
        let f = findings(report).find(|f| f["path"] == path && f["rule"] == "engine-patch/hook");
        assert_eq!(f.map(|f| f["evidence"][0]["layer"].as_str()), Some(Some(digests[1].as_str())), "{path}: {report:#}");
    };
    let diff = sb.diff("start-up-hooks-diff", "hooks", &[]);
    assert_eq!(diff.code, 1, "{:#}", diff.report);
    hook(&diff.report, &format!("/{site}/sitecustomize.py"));
    hook(&diff.report, &format!("/{site}/zz-hook.pth"));
    // the Entrypoint and Cmd changes, the new executable and the profile.d script are changes shown, not run
    assert_eq!(findings(&diff.report).filter(|f| f["rule"] == "engine-patch/config").count(), 2, "{:#}", diff.report);
    assert_eq!(change(&diff.report, "/usr/bin/entry.sh").map(|f| &f["rule"]), Some(&json!("engine-patch/executable")), "{:#}", diff.report);
    assert!(change(&diff.report, "/etc/profile.d/x.sh").is_some(), "{:#}", diff.report);
    let verify = sb.verify("start-up-hooks-verify", "hooks", &[]);
    // without an upstream, a hook listed in no RECORD is a warning
    assert_eq!(verify.code, 0, "{:#}", verify.report);
    hook(&verify.report, &format!("/{site}/sitecustomize.py"));
    hook(&verify.report, &format!("/{site}/zz-hook.pth"));
    let m = auditor_measured(&["image", "inspect", &sb.reference("hooks"), "--verify-layers", "--format", "json"], sb.root.path(), &sb.path("home"));
    assert_eq!(m.code, 0, "{}{}", m.stdout, m.stderr);
    assert!(!marker.exists(), "something from the image ran");
}
