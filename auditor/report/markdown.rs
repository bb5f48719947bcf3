//! `--format markdown`: a merge-gate comment. A verdict header, then one
//! line per check (`✅ Check <id>: PASS — reason`), then the evidence.

use super::{Report, Verdict};
use crate::checks::Status;
use crate::finding::Severity;
use std::fmt::Write;

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let icon = match report.verdict {
        Verdict::Pass => "✅",
        Verdict::Fail => "❌",
        Verdict::Incomplete => "⚠️",
    };
    let _ = writeln!(out, "## {icon} auditor verdict: {}\n", report.verdict.as_upper());
    let (read, skipped, incomplete) = report.file_counts();
    let inputs: Vec<String> = report.inputs.iter().map(|i| format!("`{}`", i.label())).collect();
    let _ = writeln!(
        out,
        "Policy `{}` · {} · {} jobs · {read} files read, {skipped} skipped, {incomplete} not examined\n",
        report.policy,
        inputs.join(", "),
        report.job_count()
    );
    for check in &report.checks {
        let (icon, word) = match check.status {
            Status::Pass => ("✅", "PASS"),
            Status::Fail => ("❌", "FAIL"),
            Status::Na => ("➖", "N/A"),
            Status::Error => ("⚠️", "ERROR"),
        };
        let _ = writeln!(out, "{icon} Check {}: {word} — {}  ", check.id, check.summary);
    }
    let findings: Vec<_> = report.findings().filter(|(_, f)| f.severity != Severity::Info).collect();
    if !findings.is_empty() {
        let _ = writeln!(out, "\n### Findings\n\n| Severity | Rule | Job | Where | Message |\n|---|---|---|---|---|");
        for (_, f) in findings {
            let location = f
                .primary()
                .map(|e| format!("`{}{}`", report.location(f, e), e.line.map(|l| format!(":{l}")).unwrap_or_default()))
                .unwrap_or_default();
            let more = if f.evidence.len() > 1 { format!(" (+{} more)", f.evidence.len() - 1) } else { String::new() };
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {location}{more} | {} |",
                f.severity.as_str(),
                f.rule,
                cell(f.job.as_deref().unwrap_or("")),
                cell(&f.message)
            );
        }
    }
    if !report.not_examined.is_empty() {
        let _ = writeln!(out, "\n### Not examined\n");
        for item in &report.not_examined {
            let _ = writeln!(out, "- {}", cell(item));
        }
    }
    out
}
