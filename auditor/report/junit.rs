//! `--format junit`: one testcase per check (failure, skipped for N/A,
//! error when it could not conclude) and one for input coverage.

use super::Report;
use crate::checks::Status;
use std::fmt::Write;

/// Escape for XML text and attributes; characters XML 1.0 forbids become U+FFFD.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

pub fn render(report: &Report) -> String {
    let mut cases = String::new();
    let (mut failures, mut errors, mut skipped) = (0, 0, 0);
    for check in &report.checks {
        let _ = write!(cases, "    <testcase classname=\"auditor.checks\" name=\"{}\">", xml(&check.id));
        match check.status {
            // What a passing check concluded (how much it examined, what it found as information).
            Status::Pass => {
                let _ = write!(cases, "<system-out>{}</system-out>", xml(&check.summary));
            }
            Status::Na => {
                skipped += 1;
                let _ = write!(cases, "<skipped message=\"{}\"/>", xml(&check.summary));
            }
            Status::Fail | Status::Error => {
                let tag = if check.status == Status::Fail { "failure" } else { "error" };
                if check.status == Status::Fail {
                    failures += 1
                } else {
                    errors += 1
                }
                let mut body = String::new();
                for f in &check.findings {
                    let _ = writeln!(body, "{} {}: {}", f.severity.as_str(), f.rule, f.message);
                    for e in &f.evidence {
                        let line = e.line.map(|l| format!(":{l}")).unwrap_or_default();
                        let _ = writeln!(body, "  at {}{line}", report.location(f, e));
                    }
                }
                let _ = write!(cases, "<{tag} message=\"{}\" type=\"{}\">{}</{tag}>", xml(&check.summary), xml(&check.id), xml(&body));
            }
        }
        cases.push_str("</testcase>\n");
    }
    let _ = write!(cases, "    <testcase classname=\"auditor.input\" name=\"input-coverage\">");
    if !report.not_examined.is_empty() {
        errors += 1;
        let _ = write!(cases, "<error message=\"part of the input was not examined\" type=\"incomplete\">{}</error>", xml(&report.not_examined.join("\n")));
    }
    cases.push_str("</testcase>\n");
    let tests = report.checks.len() + 1;
    let counts = format!("tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\"");
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"auditor\" {counts}>\n  <testsuite name=\"auditor policy {}\" {counts}>\n{cases}  </testsuite>\n</testsuites>\n",
        xml(&report.policy)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_and_replaces_forbidden_characters() {
        assert_eq!(super::xml("a<b & \"c\"\u{0}"), "a&lt;b &amp; &quot;c&quot;\u{fffd}");
    }
}
