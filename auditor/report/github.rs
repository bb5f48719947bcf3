//! `--format github`: GitHub Actions workflow commands, so findings appear as
//! annotations on the files of the run bundle.

use super::{Report, Verdict};
use crate::finding::Severity;
use std::fmt::Write;

/// Escape the message part of a workflow command.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escape a property value of a workflow command.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    // Info findings record what was judged; as annotations they would only bury the problems.
    for (_, f) in report.findings().filter(|(_, f)| f.severity != Severity::Info) {
        let command = match f.severity {
            Severity::Error => "error",
            _ => "warning",
        };
        let mut props = Vec::new();
        if let Some(e) = f.primary() {
            props.push(format!("file={}", property(&report.location(f, e))));
            if let Some(line) = e.line {
                props.push(format!("line={line}"));
            }
        }
        props.push(format!("title={}", property(&f.rule)));
        let _ = writeln!(out, "::{command} {}::{}", props.join(","), data(&f.message));
    }
    for item in &report.not_examined {
        let _ = writeln!(out, "::warning title=not examined::{}", data(item));
    }
    let command = match report.verdict {
        Verdict::Fail => "error",
        Verdict::Incomplete => "warning",
        Verdict::Pass => "notice",
    };
    let summary: Vec<String> = report.checks.iter().map(|c| format!("{} {}", c.id, c.status.as_str())).collect();
    let _ = writeln!(out, "::{command} title=auditor verdict::{} ({})", report.verdict.as_upper(), data(&summary.join(", ")));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escaping() {
        assert_eq!(super::data("50%\nx"), "50%25%0Ax");
        assert_eq!(super::property("a:b,c"), "a%3Ab%2Cc");
    }
}
