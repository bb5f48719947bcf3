//! `image verify` without an upstream: every installed distribution's
//! `RECORD` (path, `sha256=` urlsafe-base64 digest, size) is checked
//! against the files the image holds, so an in-place edit of an installed
//! package shows even when the upstream image cannot be had. Files inside
//! a distribution's package directories that no RECORD lists, start-up
//! hooks (`.pth`, `sitecustomize.py`, `usercustomize.py`) and
//! `direct_url.json` origins are reported too.

use super::classify::{Rules, Side, describe, is_customize, is_patch_file, pth_imports};
use super::node::{Kind, Node};
use super::paths::split;
use super::severity::{self, Hook, Origin};
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
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Verify one image.
pub(super) fn verify(side: &Side, rules: &Rules) -> Verified {
    let mut out = Verified { distributions: side.dists.len(), ..Verified::default() };
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
                    let same = node.kind == Kind::File && node.digest == Some(expected) && row.size.is_none_or(|s| s == node.size);
                    if !same {
                        out.findings.push(finding(
                            "engine-patch/record-mismatch",
                            if engine { Severity::Error } else { Severity::Warning },
                            "record-mismatch",
                            &row.path,
                            Some(node),
                            format!(
                                "{}: does not match the RECORD of {}: edited in place after install (written by {})",
                                row.path,
                                d.label(),
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

/// `.pth` files in installation directories and `sitecustomize.py` /
/// `usercustomize.py` anywhere: shipped by a distribution (listed in its
/// RECORD with that content) is info; otherwise a `.pth` that imports, or
/// a customize module, is a warning.
fn hooks(side: &Side, out: &mut Verified) {
    let sites: BTreeSet<&str> = side.dists.iter().map(|d| d.site.as_str()).collect();
    for (path, node) in &side.fs.entries {
        let path: &str = path;
        let dir = split(path).0;
        let pth = path.ends_with(".pth") && (sites.contains(dir) || dir.ends_with("/site-packages") || dir.ends_with("/dist-packages"));
        if node.kind != Kind::File || !(pth || is_customize(path)) {
            continue;
        }
        let shipped = side.owners.recorded(path).filter(|(_, row)| row.sha256.is_some() && row.sha256 == node.digest);
        // A .pth too large to read whole is judged as one that runs code: CPython reads it all.
        let text = side.texts.text(node);
        let hook = match (pth, text.as_ref().is_none_or(|t| pth_imports(t))) {
            (true, true) => Hook::PthImport,
            (true, false) => Hook::PthPath,
            (false, _) => Hook::Customize,
        };
        let origin = if shipped.is_some() { Origin::Shipped } else { Origin::Unattributed };
        let what = match (shipped, hook) {
            (Some((d, _)), _) => format!("shipped by {} (its RECORD lists this content)", d.label()),
            (None, Hook::PthImport) if text.is_none() => {
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
