//! `--format github`: GitHub Actions workflow commands, so findings appear as
//! annotations on the files of the run bundle. With `GITHUB_STEP_SUMMARY`
//! set, the CLI also appends the Markdown report to the job summary.

use super::places::{Placement, Places};
use super::{Report, Verdict};
use crate::checks::{CheckResult, Status};
use crate::finding::{Finding, Severity};
use std::fmt::Write;

/// Escape the message part of a workflow command.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escape a property value of a workflow command.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(report: &Report, placement: &Placement) -> String {
    let places = Places::new(report, placement);
    let mut out = String::new();
    // Info findings record what was judged; as annotations they would only
    // bury the problems, and so would known (baselined) or accepted ones.
    // GitHub shows only the first few annotations of a step: errors that
    // point at a file come first, then other errors, then warnings.
    // A file is named from the source root (no `./`, no `..`, never absolute), or not at all.
    let file = |f: &Finding| f.primary().and_then(|e| Some((places.relative(&report.location(f, e))?, e.line)));
    let mut shown: Vec<_> = report
        .findings()
        .map(|(_, f)| f)
        .filter(|f| placement.annotates(f.severity) && !f.is_known() && f.suppressed.is_none())
        .map(|f| (f, file(f)))
        .collect();
    shown.sort_by_key(|(f, file)| (f.severity != Severity::Error, file.is_none()));
    for (f, file) in shown {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props = Vec::new();
        if let Some((path, line)) = file {
            props.push(format!("file={}", property(&path)));
            if let Some(line) = line {
                props.push(format!("line={line}"));
            }
        }
        props.push(format!("title={}", property(&f.rule)));
        let _ = writeln!(out, "::{command} {}::{}", props.join(","), data(&f.message));
    }
    let quiet = report.findings().filter(|(_, f)| f.severity != Severity::Info && (f.is_known() || f.suppressed.is_some())).count();
    if quiet > 0 {
        let _ = writeln!(out, "::notice title=auditor::{quiet} finding(s) in the baseline or accepted by suppressions are not annotated (see the JSON report)");
    }
    // Without jobs (`auditor scan`, images), a check that passed with only
    // information to show (knobs a scan lists but cannot judge) says so in
    // one notice, without a file; an audit's per-job conclusions stay in the
    // step summary.
    let informational = |c: &CheckResult| c.status == Status::Pass && !c.findings.is_empty() && c.findings.iter().all(|f| f.severity == Severity::Info);
    for check in report.checks.iter().filter(|c| report.jobs.is_empty() && informational(c)) {
        let _ = writeln!(out, "::notice title={}::{}", property(&check.id), data(&check.summary));
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
    use super::*;
    use crate::provenance::Provenance;

    #[test]
    fn errors_with_a_file_come_first_and_known_ones_are_not_annotated() {
        let at = |file: &str| vec![Provenance::new(file, Some(7), "t")];
        let mut known = Finding::new("c/known", Severity::Error, "known".into(), None, at("k.sh"));
        known.baselined = true;
        let findings = vec![
            Finding::new("c/warn", Severity::Warning, "w".into(), None, at("w.sh")),
            Finding::new("c/nofile", Severity::Error, "n".into(), None, Vec::new()),
            known,
            Finding::new("c/file", Severity::Error, "f".into(), None, at("f.sh")),
        ];
        let check = CheckResult { id: "c".into(), title: "t".into(), status: Status::Fail, summary: "s".into(), findings, golden: Vec::new() };
        let out = render(&Report::new("p".into(), Vec::new(), vec![check], Vec::new(), Vec::new(), Vec::new()), &Placement::default());
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("::error file=f.sh,line=7,title=c/file::f"), "{out}");
        assert!(lines[1].starts_with("::error title=c/nofile::n"), "{out}");
        assert!(lines[2].starts_with("::warning file=w.sh"), "{out}");
        assert!(!out.contains("c/known") && out.contains("1 finding(s) in the baseline"), "{out}");
    }

    #[test]
    fn escaping() {
        assert_eq!(super::data("50%\nx"), "50%25%0Ax");
        assert_eq!(super::property("a:b,c"), "a%3Ab%2Cc");
    }
}
