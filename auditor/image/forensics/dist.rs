//! Installed Python distributions, read from an image's merged filesystem:
//! each `*.dist-info` (or `*.egg-info`) directory with its name and version
//! (`METADATA`), installer (`INSTALLER`), wheel build (`WHEEL`), where it
//! came from (`direct_url.json`, PEP 610) and the files it installed with
//! their hashes (`RECORD`). This is what names the package a changed file
//! belongs to, tells a reinstalled or forked wheel from the shipped one,
//! and lets `image verify` check files against their own RECORD.

use super::file_index::FsIndex;
use super::node::{Kind, Node};
use super::paths::{resolve, split};
use crate::policy::pattern::normalise_name;
use base64::Engine as _;
use std::collections::{BTreeMap, HashMap};

/// How the text of a captured file is read back (from the layer cache).
pub(crate) trait TextSource {
    fn text(&self, node: &Node) -> Option<Vec<u8>>;
}

/// Where a distribution was installed from (PEP 610 `direct_url.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirectUrl {
    pub url: String,
    /// `git`, `hg`, ... for a VCS install.
    pub vcs: Option<String>,
    pub commit: Option<String>,
    pub editable: bool,
}

impl DirectUrl {
    fn parse(bytes: &[u8]) -> Option<DirectUrl> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        Some(DirectUrl {
            url: v["url"].as_str()?.to_string(),
            vcs: v["vcs_info"]["vcs"].as_str().map(str::to_string),
            commit: v["vcs_info"]["commit_id"].as_str().map(str::to_string),
            editable: v["dir_info"]["editable"].as_bool().unwrap_or(false),
        })
    }

    /// In words: `git https://…@abc123`, `editable file:///src`, `local file:///w.whl`.
    pub(crate) fn describe(&self) -> String {
        match (&self.vcs, self.editable) {
            (Some(vcs), _) => format!("{vcs} {}{}", self.url, self.commit.as_deref().map(|c| format!("@{c}")).unwrap_or_default()),
            (None, true) => format!("editable {}", self.url),
            (None, false) if self.url.starts_with("file:") => format!("local {}", self.url),
            (None, false) => format!("direct URL {}", self.url),
        }
    }
}

/// One `RECORD` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordRow {
    /// Absolute path inside the image.
    pub path: String,
    /// The `sha256=` hash, when the row has one.
    pub sha256: Option<[u8; 32]>,
    pub size: Option<u64>,
}

/// An installed distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Distribution {
    pub name: String,
    /// PEP 503 normalised name.
    pub key: String,
    pub version: String,
    /// The `*.dist-info` / `*.egg-info` path.
    pub meta_dir: String,
    /// The directory it is installed into.
    pub site: String,
    pub installer: Option<String>,
    /// `WHEEL`'s `Build:` tag, and its `Generator:`.
    pub build: Option<String>,
    pub generator: Option<String>,
    pub direct_url: Option<DirectUrl>,
    /// `None` when there is no RECORD (Debian packages, egg-info).
    pub record: Option<Vec<RecordRow>>,
    /// `console_scripts` names from `entry_points.txt`.
    pub scripts: Vec<String>,
}

impl Distribution {
    /// `sglang 0.5.16`.
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.name, self.version)
    }
}

/// Every distribution in the image, in path order.
pub(crate) fn find(fs: &FsIndex, texts: &dyn TextSource) -> Vec<Distribution> {
    let mut out = Vec::new();
    for (path, node) in &fs.entries {
        let (parent, name) = split(path);
        let meta_dir_name = split(parent).1;
        let (meta_dir, is_meta) = if meta_dir_name.ends_with(".dist-info") {
            (parent, name == "METADATA")
        } else if meta_dir_name.ends_with(".egg-info") {
            (parent, name == "PKG-INFO")
        } else {
            // a Debian-style egg-info file holds PKG-INFO itself
            (&path[..], name.ends_with(".egg-info") && node.kind == Kind::File)
        };
        if !is_meta {
            continue;
        }
        if let Some(d) = read(fs, texts, meta_dir, node) {
            out.push(d);
        }
    }
    out
}

fn read(fs: &FsIndex, texts: &dyn TextSource, meta_dir: &str, metadata: &Node) -> Option<Distribution> {
    let member = |name: &str| fs.get(&format!("{meta_dir}/{name}")).and_then(|n| texts.text(n));
    let fields = texts.text(metadata).map(|m| headers(&m)).unwrap_or_default();
    let (site, dir_name) = split(meta_dir);
    let stem = dir_name.rsplit_once('.').map_or(dir_name, |(s, _)| s);
    let (dir_dist, dir_version) = stem.split_once('-').unwrap_or((stem, ""));
    let name = fields.get("name").cloned().unwrap_or_else(|| dir_dist.to_string());
    let version = fields.get("version").cloned().unwrap_or_else(|| dir_version.split('-').next().unwrap_or("").to_string());
    let wheel = member("WHEEL").map(|w| headers(&w)).unwrap_or_default();
    let record = member("RECORD").map(|r| parse_record(&String::from_utf8_lossy(&r), site));
    let scripts = member("entry_points.txt").map(|e| console_scripts(&String::from_utf8_lossy(&e))).unwrap_or_default();
    Some(Distribution {
        key: normalise_name(&name),
        name,
        version,
        meta_dir: meta_dir.to_string(),
        site: site.to_string(),
        installer: member("INSTALLER").map(|i| String::from_utf8_lossy(&i).trim().to_string()),
        build: wheel.get("build").cloned(),
        generator: wheel.get("generator").cloned(),
        direct_url: member("direct_url.json").and_then(|d| DirectUrl::parse(&d)),
        record,
        scripts,
    })
}

/// RFC 822-style headers up to the first blank line, keys lower-cased
/// (the first value of a repeated key).
fn headers(bytes: &[u8]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in String::from_utf8_lossy(bytes).lines() {
        if line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            out.entry(k.trim().to_ascii_lowercase()).or_insert_with(|| v.trim().to_string());
        }
    }
    out
}

/// `name = module:func` lines of the `[console_scripts]` section.
fn console_scripts(text: &str) -> Vec<String> {
    let mut in_section = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[console_scripts]";
        } else if in_section && let Some((name, _)) = line.split_once('=') {
            out.push(name.trim().to_string());
        }
    }
    out
}

/// RECORD rows (CSV: path, `algo=urlsafe-b64`, size), paths resolved
/// against the installation directory.
fn parse_record(text: &str, site: &str) -> Vec<RecordRow> {
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields = csv_fields(line);
        let Some(path) = fields.first().and_then(|p| resolve(site, p)) else { continue };
        let sha256 = fields
            .get(1)
            .and_then(|h| h.strip_prefix("sha256="))
            .and_then(|b| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(b.trim_end_matches('=')).ok())
            .and_then(|d| <[u8; 32]>::try_from(d).ok());
        let size = fields.get(2).and_then(|s| s.parse().ok());
        rows.push(RecordRow { path, sha256, size });
    }
    rows
}

/// One CSV line: comma-separated, `"` quotes with `""` for a quote.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let (mut quoted, mut chars) = (false, line.chars().peekable());
    while let Some(c) = chars.next() {
        let field = fields.last_mut().expect("one field at least");
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => field.push(c),
        }
    }
    fields
}

/// Which distribution a path belongs to.
pub(crate) struct Owners<'a> {
    dists: &'a [Distribution],
    recorded: HashMap<&'a str, (usize, &'a RecordRow)>,
    /// (site, top-level name) -> distribution, from RECORD paths.
    tops: HashMap<(&'a str, &'a str), usize>,
    /// Editable source trees (`file://` dirs) -> distribution.
    trees: Vec<(String, usize)>,
}

impl<'a> Owners<'a> {
    pub(crate) fn new(dists: &'a [Distribution]) -> Self {
        let (mut recorded, mut tops, mut trees) = (HashMap::new(), HashMap::new(), Vec::new());
        for (i, d) in dists.iter().enumerate() {
            for row in d.record.iter().flatten() {
                recorded.insert(row.path.as_str(), (i, row));
                if let Some(rest) = row.path.strip_prefix(d.site.as_str()).and_then(|r| r.strip_prefix('/'))
                    && let Some((top, _)) = rest.split_once('/')
                    && !top.ends_with(".dist-info")
                    && !top.ends_with(".data")
                    && top != "__pycache__"
                {
                    tops.entry((d.site.as_str(), top)).or_insert(i);
                }
            }
            if let Some(dir) = d.direct_url.as_ref().filter(|u| u.editable).and_then(|u| u.url.strip_prefix("file://")) {
                trees.push((dir.trim_end_matches('/').to_string(), i));
            }
        }
        Owners { dists, recorded, tops, trees }
    }

    /// The RECORD row that lists `path`, and its distribution.
    pub(crate) fn recorded(&self, path: &str) -> Option<(&'a Distribution, &'a RecordRow)> {
        self.recorded.get(path).map(|&(i, row)| (&self.dists[i], row))
    }

    /// The distribution `path` belongs to: listed in its RECORD, inside its
    /// metadata dir, under one of its top-level package directories, or in
    /// its editable source tree.
    pub(crate) fn owner(&self, path: &str) -> Option<&'a Distribution> {
        if let Some((d, _)) = self.recorded(path) {
            return Some(d);
        }
        if let Some(d) = self.dists.iter().find(|d| path.strip_prefix(d.meta_dir.as_str()).is_some_and(|r| r.is_empty() || r.starts_with('/'))) {
            return Some(d);
        }
        let mut dir = split(path).0;
        while dir != "/" {
            let (parent, name) = split(dir);
            if let Some(&i) = self.tops.get(&(parent, name)) {
                return Some(&self.dists[i]);
            }
            dir = parent;
        }
        self.trees.iter().find(|(t, _)| path.strip_prefix(t.as_str()).is_some_and(|r| r.starts_with('/'))).map(|&(_, i)| &self.dists[i])
    }

    /// Every top-level package directory RECORD paths go through
    /// (`site/pkg`), with its distribution, in path order.
    pub(crate) fn package_dirs(&self) -> Vec<(String, &'a Distribution)> {
        let mut dirs: Vec<(String, &Distribution)> = self.tops.iter().map(|(&(site, top), &i)| (format!("{site}/{top}"), &self.dists[i])).collect();
        dirs.sort_by(|a, b| a.0.cmp(&b.0));
        dirs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_rows() {
        let text = "six.py,sha256=A6XhZg5JN3q-cS_Aj2MEx98BmtaELcoDW98W5BOQ0mA,34549\n\
                    \"odd,name.py\",,\n\
                    ../../../bin/tool,sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,3\n\
                    six-1.16.0.dist-info/RECORD,,\n";
        let rows = parse_record(text, "/usr/lib/python3/dist-packages");
        assert_eq!(rows[0].path, "/usr/lib/python3/dist-packages/six.py");
        assert_eq!((rows[0].size, rows[0].sha256.map(|h| h[0])), (Some(34549), Some(0x03)));
        assert_eq!((rows[1].path.as_str(), rows[1].sha256), ("/usr/lib/python3/dist-packages/odd,name.py", None));
        assert_eq!(rows[2].path, "/usr/bin/tool");
        assert_eq!(rows.len(), 4);
        assert_eq!(resolve("/a", "../../../x"), None);
    }

    #[test]
    fn names_headers_scripts_and_urls() {
        assert_eq!(normalise_name("Flash_Attn.Extra"), "flash-attn-extra");
        assert_eq!(normalise_name("sgl-kernel"), "sgl-kernel");
        let h = headers(b"Metadata-Version: 2.1\nName: six\nVersion: 1.16.0+fork\n\nName: body\n");
        assert_eq!((h["name"].as_str(), h["version"].as_str()), ("six", "1.16.0+fork"));
        assert_eq!(console_scripts("[console_scripts]\nvllm = vllm.cli:main\n[gui_scripts]\nx = y:z\n"), ["vllm"]);
        let git = DirectUrl::parse(br#"{"url":"https://github.com/x/six","vcs_info":{"vcs":"git","commit_id":"abc"}}"#).unwrap();
        assert_eq!(git.describe(), "git https://github.com/x/six@abc");
        let ed = DirectUrl::parse(br#"{"url":"file:///sgl-workspace/sglang/python","dir_info":{"editable":true}}"#).unwrap();
        assert_eq!(ed.describe(), "editable file:///sgl-workspace/sglang/python");
        assert!(DirectUrl::parse(b"{}").is_none());
    }
}
