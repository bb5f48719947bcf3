//! `image verify` without an upstream: every installed distribution's
//! `RECORD` (path, `sha256=` urlsafe-base64 digest, size) is checked
//! against the files the image holds, so an in-place edit of an installed
//! package shows even when the upstream image cannot be had. Files inside
//! a distribution's package directories that no RECORD lists, start-up
//! hooks (`.pth`, `sitecustomize.py`, `usercustomize.py`) and
//! `direct_url.json` origins are reported too.

use super::classify::{is_customize, is_patch_file};
use super::node::{Kind, Node};
use super::paths::split;
use super::pyc::{self, Invalidation};
use super::severity::{self, Hook, Origin};
use super::side::{Rules, Side, describe};
use super::sys_path::{SysPath, is_site_dir, pth_imports};
use crate::finding::{Finding, Severity};
use std::collections::BTreeSet;

/// What verifying found, with counts for the summary.
#[derive(Default)]
pub(super) struct Verified {
    pub findings: Vec<Finding>,
    pub distributions: usize,
    /// Distributions without a RECORD (Debian packages, egg-info, editable trees).
    pub unrecorded_distributions: usize,
    /// Files whose hash was checked against a RECORD row.
    pub files_checked: usize,
    /// Compiled files no RECORD lists (bytecode written after install): counted, not listed.
    pub unlisted_bytecode: usize,
    /// Compiled files of engine packages without a RECORD hash, read by their headers.
    pub bytecode: Bytecode,
}

/// What the headers of engine packages' compiled files said.
#[derive(Default)]
pub(super) struct Bytecode {
    /// Read by their headers.
    pub read: usize,
    /// Not matching their source: CPython compiles the source instead.
    pub stale: usize,
    /// Loaded when their source is imported: their bodies are not compared
    /// with the source, which would take compiling it.
    pub not_compared: usize,
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Verify one image.
pub(super) fn verify(side: &Side, rules: &Rules) -> Verified {
    let mut out = Verified { distributions: side.dists.len(), ..Verified::default() };
    let python = SysPath::new(side, &[], rules);
    let finding = |rule: &str, severity: Severity, kind: &str, path: &str, node: Option<&Node>, message: String, text: String| {
        Finding::new(rule, severity, message, None, vec![side.evidence(path, node, text)]).in_image(kind, Some(path))
    };
    for d in side.dists {
        let engine = rules.engine_name(&d.name);
        let Some(rows) = &d.record else {
            out.unrecorded_distributions += 1;
            continue;
        };
        for row in rows {
            let Some(expected) = row.sha256 else { continue };
            let want = format!("RECORD sha256 {}… size {}", &hex(&expected)[..12], row.size.map_or("?".into(), |s| s.to_string()));
            match side.fs.get(&row.path) {
                None if row.path.ends_with(".pyc") => {}
                None => out.findings.push(finding(
                    "engine-patch/record-mismatch",
                    if engine { Severity::Warning } else { Severity::Info },
                    "record-mismatch",
                    &row.path,
                    None,
                    format!("{}: listed in the RECORD of {} but not in the image (deleted after install)", row.path, d.label()),
                    format!("{want}; absent"),
                )),
                Some(node) => {
                    out.files_checked += 1;
                    let same =
                        node.kind == Kind::File && node.digest.as_ref().and_then(|d| d.sha256()) == Some(&expected) && row.size.is_none_or(|s| s == node.size);
                    if !same {
                        // Code that runs at every interpreter start is judged as the engine is, whoever ships it.
                        let startup = python.startup(&row.path).map(|(name, by)| format!(" (part of `{name}`, which {by} imports at every interpreter start)"));
                        out.findings.push(finding(
                            "engine-patch/record-mismatch",
                            if engine || startup.is_some() { Severity::Error } else { Severity::Warning },
                            "record-mismatch",
                            &row.path,
                            Some(node),
                            format!(
                                "{}: does not match the RECORD of {}{}: edited in place after install (written by {})",
                                row.path,
                                d.label(),
                                startup.unwrap_or_default(),
                                side.written_by(node)
                            ),
                            format!("{want}; image {}", describe(node)),
                        ));
                    }
                }
            }
        }
    }
    unrecorded(side, rules, &mut out);
    hooks(side, &mut out);
    shadows(side, rules, &python, &mut out);
    bytecode(side, rules, &mut out);
    for d in side.dists {
        let Some(url) = &d.direct_url else { continue };
        let engine = rules.engine_name(&d.name);
        let severity = if url.vcs.is_some() || (!url.editable && engine) { if engine { Severity::Warning } else { Severity::Info } } else { Severity::Info };
        let path = format!("{}/direct_url.json", d.meta_dir);
        let node = side.fs.get(&path);
        out.findings.push(finding(
            "engine-patch/direct-url",
            severity,
            "direct-url",
            &path,
            node,
            format!("{} was installed from {}, not from a package index", d.label(), url.describe()),
            url.describe(),
        ));
    }
    out
}

/// Files under distributions' package directories that no RECORD lists.
fn unrecorded(side: &Side, rules: &Rules, out: &mut Verified) {
    let mut seen = BTreeSet::new();
    for (dir, d) in side.owners.package_dirs() {
        for (path, node) in side.fs.below(&dir) {
            if !matches!(node.kind, Kind::File | Kind::Symlink) || side.owners.recorded(path).is_some() || !seen.insert(path) {
                continue;
            }
            if path.ends_with(".pyc") {
                out.unlisted_bytecode += 1;
                continue;
            }
            let engine = rules.engine_name(&d.name);
            let written = side.written_by(node);
            let f = if is_patch_file(path) {
                let message = format!("{path}: a patch file or patch leftover inside the package of {}, listed in no RECORD (written by {written})", d.label());
                Finding::new(
                    "engine-patch/patch-file",
                    if engine { Severity::Error } else { Severity::Warning },
                    message,
                    None,
                    vec![side.evidence(path, Some(node), describe(node))],
                )
                .in_image("patch-file", Some(path))
            } else {
                let message = format!("{path}: inside the package of {} but listed in no RECORD (added after install, written by {written})", d.label());
                Finding::new(
                    "engine-patch/unrecorded",
                    if engine { Severity::Warning } else { Severity::Info },
                    message,
                    None,
                    vec![side.evidence(path, Some(node), describe(node))],
                )
                .in_image("unrecorded", Some(path))
            };
            out.findings.push(f);
        }
    }
}

/// Modules with an engine's name importable from a `sys.path` directory
/// the engine is not installed in, that no engine distribution ships.
fn shadows(side: &Side, rules: &Rules, python: &SysPath, out: &mut Verified) {
    for (path, node) in &side.fs.entries {
        let path: &str = path;
        if !matches!(node.kind, Kind::File | Kind::Symlink) || rules.engine_tree(path) {
            continue;
        }
        let owner = side.owners.owner(path);
        if owner.is_some_and(|d| rules.engine_name(&d.name)) {
            continue;
        }
        let Some(shadow) = python.shadow(path, rules) else { continue };
        let shipped = owner.map(|d| format!(", shipped by {}", d.label())).unwrap_or_default();
        let message = format!("{path}: {}{shipped} (written by {})", shadow.describe(), side.written_by(node));
        let f = Finding::new("engine-patch/import-shadowing", Severity::Error, message, None, vec![side.evidence(path, Some(node), describe(node))]);
        out.findings.push(f.in_image("import-shadowing", Some(path)));
    }
}

/// Compiled modules of engine packages that no RECORD hash covers (pip
/// lists `.pyc` files without one), judged by their headers against the
/// source beside them: an unchecked-hash `.pyc` (CPython loads it without
/// looking at the source) and a sourceless one in a package directory
/// are findings; the rest are counted as stale or as not compared.
fn bytecode(side: &Side, rules: &Rules, out: &mut Verified) {
    for (dir, d) in side.owners.package_dirs() {
        if !rules.engine_name(&d.name) {
            continue;
        }
        let mut unchecked = Vec::new();
        for (path, node) in side.fs.below(&dir) {
            let Some(pyc) = node.pyc.as_deref().filter(|_| node.kind == Kind::File) else { continue };
            if side.owners.recorded(path).is_some_and(|(_, row)| row.sha256.is_some()) {
                continue;
            }
            out.bytecode.read += 1;
            let Some(source_path) = pyc::source_of(path) else { continue };
            let source = side.fs.get(&source_path).filter(|s| s.kind == Kind::File);
            let beside = |why: String| {
                let mut evidence = vec![side.evidence(path, Some(node), describe(node))];
                if let Some(s) = source {
                    evidence.push(side.evidence(&source_path, Some(s), format!("its source: {}", describe(s))));
                }
                (why, evidence)
            };
            let judged = match (source, pyc.invalidation()) {
                (None, _) if pyc::is_legacy(path) => {
                    Some((Severity::Error, beside(format!("a compiled module with no {source_path} beside it: CPython imports it as is"))))
                }
                (None, _) => None,
                (Some(_), _) if pyc::is_legacy(path) => None,
                (Some(s), Invalidation::UncheckedHash(claimed)) => {
                    let actual = side.texts.text(s).and_then(|text| pyc.source_hash(&text));
                    let python = pyc.python().map(|v| format!(" (CPython {v})")).unwrap_or_default();
                    match actual {
                        // One cause (a build compiled with --invalidation-mode unchecked-hash): one finding per distribution, below.
                        Some(a) if a == claimed => {
                            unchecked.push((path, node, source_path, s));
                            None
                        }
                        Some(_) => Some((
                            Severity::Error,
                            beside(format!(
                                "an unchecked-hash .pyc{python} not compiled from {source_path} (the source hash it holds is another's): CPython loads it without looking at the source"
                            )),
                        )),
                        None => Some((
                            Severity::Error,
                            beside(format!(
                                "an unchecked-hash .pyc{python}: CPython loads it without looking at {source_path}, and which source it was compiled from could not be checked here"
                            )),
                        )),
                    }
                }
                (Some(s), Invalidation::Timestamp { size }) => {
                    if u64::from(size) == s.size & 0xffff_ffff {
                        out.bytecode.not_compared += 1
                    } else {
                        out.bytecode.stale += 1
                    }
                    None
                }
                (Some(s), Invalidation::CheckedHash(claimed)) => {
                    match side.texts.text(s).and_then(|text| pyc.source_hash(&text)) {
                        Some(a) if a != claimed => out.bytecode.stale += 1,
                        _ => out.bytecode.not_compared += 1,
                    }
                    None
                }
                (Some(_), Invalidation::Unknown(_)) => {
                    out.bytecode.stale += 1;
                    None
                }
            };
            if let Some((severity, (why, evidence))) = judged {
                let message = format!("{path} in the package of {}: {why} (written by {})", d.label(), side.written_by(node));
                out.findings.push(Finding::new("engine-patch/bytecode", severity, message, None, evidence).in_image("bytecode", Some(path)));
            }
        }
        if let Some(&(path, node, ref source_path, source)) = unchecked.first() {
            let more = if unchecked.len() > 1 { format!(" and {} more in {dir}", unchecked.len() - 1) } else { String::new() };
            let message = format!(
                "{path}{more}: unchecked-hash .pyc files of {}: CPython loads them without looking at their sources; each holds its source's hash, \
                 and their bodies are not compared without compiling (written by {})",
                d.label(),
                side.written_by(node)
            );
            let evidence =
                vec![side.evidence(path, Some(node), describe(node)), side.evidence(source_path, Some(source), format!("its source: {}", describe(source)))];
            out.findings.push(Finding::new("engine-patch/bytecode", Severity::Warning, message, None, evidence).in_image("bytecode", Some(path)));
        }
    }
}

/// `.pth` files in installation directories and `sitecustomize.py` /
/// `usercustomize.py` anywhere: shipped by a distribution (listed in its
/// RECORD with that content) is info; otherwise a `.pth` that imports, or
/// a customize module, is a warning.
fn hooks(side: &Side, out: &mut Verified) {
    let sites: BTreeSet<&str> = side.dists.iter().map(|d| d.site.as_str()).collect();
    for (path, node) in &side.fs.entries {
        let path: &str = path;
        let dir = split(path).0;
        let pth = path.ends_with(".pth") && (sites.contains(dir) || is_site_dir(dir));
        if node.kind != Kind::File || !(pth || is_customize(path)) {
            continue;
        }
        let shipped =
            side.owners.recorded(path).filter(|(_, row)| row.sha256.is_some() && row.sha256.as_ref() == node.digest.as_ref().and_then(|d| d.sha256()));
        // A .pth too large to read whole is judged as one that runs code: CPython reads it all.
        let text = side.texts.text(node);
        let hook = match (pth, &text) {
            (true, None) => Hook::PthUnread,
            (true, Some(t)) if pth_imports(t) => Hook::PthImport,
            (true, Some(_)) => Hook::PthPath,
            (false, _) => Hook::Customize,
        };
        let origin = if shipped.is_some() { Origin::Shipped } else { Origin::Unattributed };
        let what = match (shipped, hook) {
            (Some((d, _)), _) => format!("shipped by {} (its RECORD lists this content)", d.label()),
            (None, Hook::PthUnread) => {
                "a .pth file too large to read whole, listed in no RECORD: whether it runs code at every interpreter start is not known".to_string()
            }
            (None, Hook::PthImport) => "a .pth file with an `import` line, listed in no RECORD: code that runs at every interpreter start".to_string(),
            (None, Hook::PthPath) => "a .pth file adding sys.path entries, listed in no RECORD".to_string(),
            (None, Hook::Customize) => "a Python start-up hook listed in no RECORD: it runs in every interpreter, before the engine".to_string(),
        };
        let severity = severity::hook(hook, origin);
        let f = Finding::new("engine-patch/hook", severity, format!("{path}: {what}"), None, vec![side.evidence(path, Some(node), describe(node))]);
        out.findings.push(f.in_image("hook", Some(path)));
    }
}
