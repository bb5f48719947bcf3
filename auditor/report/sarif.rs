//! `--format sarif`: SARIF 2.1.0 for code-scanning tools (valid against the
//! OASIS schema, and as GitHub code scanning takes it). Errors and
//! warnings only, unless info is asked for (`--include-info`): info
//! records what was judged, and code scanning would show each as an alert.
//! Every result has a rule id and one location, the place a reviewer acts
//! on (a file and line where there is one); the rest of its evidence goes
//! to `relatedLocations`. Fingerprints go to partialFingerprints.
//!
//! A location is physical only where there is a file to open: a file of the
//! bundle or on disk inside the source root, named from it under
//! `%SRCROOT%` ([`Places`]: no `./`, no `..`, never absolute; a region only
//! where a line is known, so a region always has `startLine`), or a file
//! inside an image, relative to the `IMAGEROOT` base. What is not such a
//! file (an image, its config, a layer blob, a policy, a file outside the
//! root, a job whose files show nothing) is a logical location; a directory
//! is never a location.

use super::places::{Placement, Places};
use super::{Input, Report, TOOL, VERSION};
use crate::checks::REGISTRY;
use crate::finding::{Finding, Severity};
use crate::provenance::Provenance;
use serde_json::{Value, json};

/// The `uriBaseId` of paths inside an image's filesystem.
const IMAGE_ROOT: &str = "IMAGEROOT";
/// The `uriBaseId` of files under the source root (what GitHub resolves against its checkout).
const SOURCE_ROOT: &str = "%SRCROOT%";

const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// Percent-encode a path for a SARIF `uri` (RFC 3986 path characters kept,
/// except `:`, so that `oci:dir` or `C:x` never reads as a URI scheme).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn render(report: &Report, placement: &Placement) -> String {
    let places = Places::new(report, placement);
    let mut rules: Vec<(&str, &str)> = REGISTRY.iter().flat_map(|c| c.rules.iter().copied()).collect();
    // Rules from data (signature packs) are declared by their findings' messages.
    for (_, f) in report.findings() {
        if !rules.iter().any(|(id, _)| *id == f.rule) {
            rules.push((&f.rule, &f.message));
        }
    }
    let rule_values: Vec<Value> = rules
        .iter()
        .map(|(id, text)| {
            let check = id.split('/').next().unwrap_or(id);
            let help = report.checks.iter().find(|c| c.id == check).map(|c| c.title.as_str()).unwrap_or(text);
            json!({
                "id": id,
                "shortDescription": { "text": text },
                "help": { "text": format!("{help}. See `auditor rules explain {check}`.") },
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings()
        .filter(|(_, f)| placement.annotates(f.severity))
        .map(|(_, f)| {
            let mut placed: Vec<(Rank, Value)> = f.evidence.iter().map(|e| location(report, &places, f, e)).collect();
            // The place to act on first: a file and line under the root, then any file, then a name.
            let primary = placed.iter().enumerate().min_by_key(|(_, (rank, _))| *rank).map(|(i, _)| i);
            let location = match primary {
                Some(i) => placed.remove(i).1,
                None => unplaced(report, f),
            };
            let mut result = json!({
                "ruleId": f.rule,
                "level": level(f.severity),
                "message": { "text": f.message },
                "locations": [location],
                "partialFingerprints": { "auditorFingerprint/v1": f.fingerprint },
            });
            if !placed.is_empty() {
                let related: Vec<Value> = placed
                    .into_iter()
                    .enumerate()
                    .map(|(id, (_, mut loc))| {
                        loc["id"] = json!(id);
                        loc
                    })
                    .collect();
                result["relatedLocations"] = json!(related);
            }
            if let Some(index) = rules.iter().position(|(id, _)| *id == f.rule) {
                result["ruleIndex"] = json!(index);
            }
            if let Some(job) = &f.job {
                result["properties"] = if f.jobs.is_empty() { json!({ "job": job }) } else { json!({ "job": job, "jobs": f.jobs }) };
            }
            result
        })
        .collect();
    let mut sarif = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": TOOL,
                "version": VERSION,
                "informationUri": "https://github.com/inferencex/auditor",
                "rules": rule_values,
            }},
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": report.not_examined.iter().map(|n| json!({
                    "level": "warning", "message": { "text": format!("not examined: {n}") }
                })).collect::<Vec<_>>(),
            }],
            "properties": { "verdict": report.verdict, "infoAsked": placement.include_info },
            "results": results,
        }],
    });
    sarif["runs"][0]["originalUriBaseIds"] = original_uri_base_ids(report);
    let mut out = serde_json::to_string_pretty(&sarif).unwrap_or_default();
    out.push('\n');
    out
}

/// How good a place a location is to act on, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    FileAndLine,
    File,
    Name,
}

/// Where one piece of evidence is, as a SARIF location.
fn location(report: &Report, places: &Places, finding: &Finding, evidence: &Provenance) -> (Rank, Value) {
    let message = (!evidence.text.is_empty()).then(|| json!({ "text": evidence.text }));
    let with_message = |mut loc: Value| {
        if let Some(m) = &message {
            loc["message"] = m.clone();
        }
        loc
    };
    // Evidence about an image as a whole (its config, a blob): no file.
    if let Some(image) = image_named(report, &evidence.file) {
        return (Rank::Name, with_message(json!({ "logicalLocations": [image_logical(&image.reference, evidence.layer.as_deref())] })));
    }
    // A file inside an image: its path from the image's root, and the image
    // and layer that wrote it.
    if finding.kind.is_some() && evidence.file.starts_with('/') {
        let mut loc = json!({ "physicalLocation": {
            "artifactLocation": { "uri": uri(evidence.file.trim_start_matches('/')), "uriBaseId": IMAGE_ROOT },
        }});
        if let Some(image) = evidence.layer.as_deref().and_then(|l| image_with_layer(report, l)) {
            loc["logicalLocations"] = json!([image_logical(&image.reference, evidence.layer.as_deref())]);
        }
        return (Rank::File, with_message(loc));
    }
    let path = report.location(finding, evidence);
    let named = is_file(report, &evidence.file, &path).then(|| places.relative(&path)).flatten();
    let Some(relative) = named else {
        return (Rank::Name, with_message(json!({ "logicalLocations": [{ "fullyQualifiedName": path, "kind": "resource" }] })));
    };
    let mut physical = json!({ "artifactLocation": { "uri": uri(&relative), "uriBaseId": SOURCE_ROOT } });
    match evidence.line.filter(|l| *l >= 1) {
        Some(line) => physical["region"] = json!({ "startLine": line, "snippet": { "text": evidence.text } }),
        None => return (Rank::File, with_message(json!({ "physicalLocation": physical }))),
    }
    (Rank::FileAndLine, json!({ "physicalLocation": physical }))
}

/// A finding with no evidence (a job whose files show nothing, an input
/// as a whole): the job or the input, as a logical location.
fn unplaced(report: &Report, finding: &Finding) -> Value {
    let input = report.inputs.first().map(Input::label).unwrap_or(".");
    let logical = match &finding.job {
        Some(job) => json!({ "name": job, "fullyQualifiedName": format!("{input}::{job}"), "kind": "module" }),
        None => json!({ "fullyQualifiedName": input, "kind": "module" }),
    };
    json!({ "logicalLocations": [logical] })
}

/// Whether the evidence names a file a reviewer can open: a file the
/// report read from a bundle, else a regular file on disk (reference data,
/// `auditor scan` paths). A directory or a name (`policy X`) is not.
fn is_file(report: &Report, file: &str, path: &str) -> bool {
    report.files.iter().any(|f| f.record.path == file) || std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

fn image_named<'a>(report: &'a Report, reference: &str) -> Option<&'a super::ImageInput> {
    report.inputs.iter().find_map(|i| match i {
        Input::Image(image) if image.reference == reference => Some(image),
        _ => None,
    })
}

fn image_with_layer<'a>(report: &'a Report, layer: &str) -> Option<&'a super::ImageInput> {
    report.inputs.iter().find_map(|i| match i {
        Input::Image(image) if image.layers.iter().any(|l| l == layer) => Some(image),
        _ => None,
    })
}

/// An image, or one of its layer blobs, as a logical location.
fn image_logical(reference: &str, layer: Option<&str>) -> Value {
    match layer {
        Some(layer) => json!({ "name": layer, "fullyQualifiedName": format!("{reference}@{layer}"), "kind": "resource" }),
        None => json!({ "name": reference, "fullyQualifiedName": reference, "kind": "resource" }),
    }
}

/// `%SRCROOT%` and `IMAGEROOT` described, neither with a URI: the source
/// root is where the reader checked the sources out, and an image's
/// filesystem is not on disk.
fn original_uri_base_ids(report: &Report) -> Value {
    let images: Vec<&str> = report
        .inputs
        .iter()
        .filter_map(|i| match i {
            Input::Image(image) => Some(image.reference.as_str()),
            _ => None,
        })
        .collect();
    let mut bases = json!({ SOURCE_ROOT: { "description": { "text": "the audited directory (or --source-root): paths are relative to it" } } });
    if !images.is_empty() {
        bases[IMAGE_ROOT] = json!({ "description": { "text": format!("the root of the filesystem of image {}", images.join(" / ")) } });
    }
    bases
}

#[cfg(test)]
mod tests {
    #[test]
    fn uri_encoding() {
        assert_eq!(super::uri("a b/c%d.log"), "a%20b/c%25d.log");
        assert_eq!(super::uri("oci:img/x"), "oci%3Aimg/x", "no scheme");
    }
}
