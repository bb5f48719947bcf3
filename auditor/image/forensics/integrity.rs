//! The `image-integrity` check: a blob (manifest, config or layer) whose
//! bytes do not match its digest or size is tampered with or corrupt.
//! Sources detect it ([`Tamper`]); this turns it into a finding that
//! names the blob digest, so a report shows it instead of a crash. Layer
//! entries no image builder writes (climbing out of the root, through an
//! escaping symlink, device nodes, decompression bombs, ...) are
//! `hostile-entry` findings of the same check.

use crate::checks::{CheckResult, Status};
use crate::finding::{Finding, Severity};
use crate::image::Tamper;
use crate::provenance::Provenance;

const ID: &str = "image-integrity";
const TITLE: &str = "Image blobs match their digests and sizes";
/// The rules its findings use, with one line each (for `rules list`).
pub const RULES: &[(&str, &str)] = &[
    ("image-integrity/digest-mismatch", "a manifest, config or layer blob whose bytes do not hash to its digest"),
    ("image-integrity/size-mismatch", "a blob whose length is not the size its manifest promises"),
    (HOSTILE_RULE, "a layer entry no image builder writes: a name or link out of the root, a device node, a decompression bomb"),
];

/// The rule of a hostile layer entry.
pub(super) const HOSTILE_RULE: &str = "image-integrity/hostile-entry";

/// The finding for one tampered blob of image `reference`.
pub(super) fn finding(reference: &str, tamper: &Tamper) -> Finding {
    let message = format!("{tamper}: the image is not what its digests promise (corrupted or tampered with in the registry, the archive or in transit)");
    let evidence = Provenance::new(reference.to_string(), None, tamper.to_string()).in_layer(Some(tamper.digest.clone()));
    Finding::new(tamper.kind.rule(), Severity::Error, message, None, vec![evidence])
}

/// The check's result: `verified` blobs checked, `findings` for those that
/// failed and for hostile entries (`unlisted` more of those not listed),
/// `unexamined` layers that could not be read at all.
pub(super) fn result(findings: Vec<Finding>, verified: usize, unexamined: usize, unlisted: u64) -> CheckResult {
    let hostile = findings.iter().filter(|f| f.rule == HOSTILE_RULE).count() as u64 + unlisted;
    let blobs = findings.iter().filter(|f| f.rule != HOSTILE_RULE).count();
    let (status, summary) = if !findings.is_empty() || hostile > 0 {
        let mut parts = Vec::new();
        if blobs > 0 {
            parts.push(format!("{blobs} blob(s) do not match their digest or size"));
        }
        if hostile > 0 {
            let more = if unlisted > 0 { format!(" ({unlisted} not listed)") } else { String::new() };
            parts.push(format!("{hostile} hostile layer entr{}{more}", if hostile == 1 { "y" } else { "ies" }));
        }
        if unexamined > 0 {
            parts.push(format!("{unexamined} layer(s) not read in full"));
        }
        (Status::Fail, parts.join("; "))
    } else if unexamined > 0 {
        (Status::Error, format!("{unexamined} layer(s) not read in full; {verified} blob(s) verified"))
    } else {
        (Status::Pass, format!("{verified} blob(s) verified (manifest, config and layers read)"))
    };
    CheckResult { id: ID.to_string(), title: TITLE.to_string(), status, summary, findings, golden: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::TamperKind;

    #[test]
    fn finding_names_rule_and_blob() {
        let t = Tamper {
            kind: TamperKind::SizeMismatch,
            what: "layer 1".into(),
            digest: "sha256:ab".into(),
            expected_size: Some(10),
            actual_digest: None,
            actual_size: 11,
            note: None,
        };
        let f = finding("docker://r/x:1", &t);
        assert_eq!(f.rule, "image-integrity/size-mismatch");
        assert_eq!(f.evidence[0].layer.as_deref(), Some("sha256:ab"));
        let hostile = Finding::new(HOSTILE_RULE, Severity::Error, "x".into(), None, Vec::new());
        let failed = result(vec![f, hostile], 2, 1, 3);
        assert_eq!(
            (failed.status, failed.summary.as_str()),
            (Status::Fail, "1 blob(s) do not match their digest or size; 4 hostile layer entries (3 not listed); 1 layer(s) not read in full")
        );
        assert_eq!(result(Vec::new(), 2, 1, 0).status, Status::Error);
        assert_eq!(result(Vec::new(), 5, 0, 0).status, Status::Pass);
    }
}
