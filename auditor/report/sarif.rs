//! `--format sarif`: SARIF 2.1.0 for code-scanning tools. Every result has
//! a rule id and a physical location; fingerprints go to partialFingerprints.

use super::{Report, TOOL, VERSION};
use crate::checks::REGISTRY;
use crate::finding::Severity;
use serde_json::{Value, json};

const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// Percent-encode a relative path for a SARIF `uri` (RFC 3986 path characters kept).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn render(report: &Report) -> String {
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
        .map(|(_, f)| {
            let mut locations: Vec<Value> = f
                .evidence
                .iter()
                .map(|e| {
                    let mut region = serde_json::Map::new();
                    if let Some(line) = e.line {
                        region.insert("startLine".into(), json!(line));
                    }
                    region.insert("snippet".into(), json!({ "text": e.text }));
                    json!({ "physicalLocation": {
                        "artifactLocation": { "uri": uri(&report.location(f, e)) },
                        "region": region,
                    }})
                })
                .collect();
            if locations.is_empty() {
                let input = report.inputs.first().map(|i| i.label()).unwrap_or(".");
                locations.push(json!({ "physicalLocation": { "artifactLocation": { "uri": uri(input) } } }));
            }
            let mut result = json!({
                "ruleId": f.rule,
                "level": level(f.severity),
                "message": { "text": f.message },
                "locations": locations,
                "partialFingerprints": { "auditorFingerprint/v1": f.fingerprint },
            });
            if let Some(index) = rules.iter().position(|(id, _)| *id == f.rule) {
                result["ruleIndex"] = json!(index);
            }
            if let Some(job) = &f.job {
                result["properties"] = if f.jobs.is_empty() { json!({ "job": job }) } else { json!({ "job": job, "jobs": f.jobs }) };
            }
            result
        })
        .collect();
    let sarif = json!({
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
            "properties": { "verdict": report.verdict },
            "results": results,
        }],
    });
    let mut out = serde_json::to_string_pretty(&sarif).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn uri_encoding() {
        assert_eq!(super::uri("a b/c%d.log"), "a%20b/c%25d.log");
    }
}
