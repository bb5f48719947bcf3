//! `--format junit`: one testcase per check (failure, skipped for N/A,
//! error when it could not conclude) and one for input coverage. Written
//! with quick-xml (nesting and escaping); characters XML 1.0 forbids are
//! replaced here, since no escape can carry them.

use super::Report;
use crate::checks::{CheckResult, Status};
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};
use std::fmt::Write as _;

/// `text` with the characters XML 1.0 forbids (most C0 controls, U+FFFE,
/// U+FFFF) replaced by U+FFFD; quick-xml escapes the rest.
fn xml_chars(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// The failure or error text of a check: each finding and where it is.
fn findings_text(report: &Report, check: &CheckResult) -> String {
    let mut body = String::new();
    for f in &check.findings {
        let _ = writeln!(body, "{} {}: {}", f.severity.as_str(), f.rule, f.message);
        for e in &f.evidence {
            let line = e.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(body, "  at {}{line}", report.location(f, e));
        }
    }
    body
}

pub fn render(report: &Report) -> String {
    let count = |status: Status| report.checks.iter().filter(|c| c.status == status).count();
    let (failures, skipped) = (count(Status::Fail), count(Status::Na));
    let errors = count(Status::Error) + usize::from(!report.not_examined.is_empty());
    let tests = (report.checks.len() + 1).to_string();
    let (failures, errors, skipped) = (failures.to_string(), errors.to_string(), skipped.to_string());
    let counts = [("tests", tests.as_str()), ("failures", failures.as_str()), ("errors", errors.as_str()), ("skipped", skipped.as_str())];
    let suite = xml_chars(&format!("auditor policy {}", report.policy));
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    let written = (|| -> std::io::Result<()> {
        writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        writer.create_element("testsuites").with_attribute(("name", "auditor")).with_attributes(counts).write_inner_content(|w| {
            w.create_element("testsuite").with_attribute(("name", suite.as_str())).with_attributes(counts).write_inner_content(|w| {
                for check in &report.checks {
                    let case = w.create_element("testcase").with_attributes([("classname", "auditor.checks"), ("name", &xml_chars(&check.id))]);
                    let summary = xml_chars(&check.summary);
                    match check.status {
                        // What a passing check concluded (how much it examined, what it found as information).
                        Status::Pass => case.write_inner_content(|w| w.create_element("system-out").write_text_content(BytesText::new(&summary)).map(drop))?,
                        Status::Na => {
                            case.write_inner_content(|w| w.create_element("skipped").with_attribute(("message", summary.as_str())).write_empty().map(drop))?
                        }
                        Status::Fail | Status::Error => {
                            let tag = if check.status == Status::Fail { "failure" } else { "error" };
                            let body = xml_chars(&findings_text(report, check));
                            case.write_inner_content(|w| {
                                w.create_element(tag)
                                    .with_attributes([("message", summary.as_str()), ("type", &xml_chars(&check.id))])
                                    .write_text_content(BytesText::new(&body))
                                    .map(drop)
                            })?
                        }
                    };
                }
                let coverage = w.create_element("testcase").with_attributes([("classname", "auditor.input"), ("name", "input-coverage")]);
                if report.not_examined.is_empty() {
                    coverage.write_empty()?;
                } else {
                    let text = xml_chars(&report.not_examined.join("\n"));
                    coverage.write_inner_content(|w| {
                        w.create_element("error")
                            .with_attributes([("message", "part of the input was not examined"), ("type", "incomplete")])
                            .write_text_content(BytesText::new(&text))
                            .map(drop)
                    })?;
                }
                Ok(())
            })?;
            Ok(())
        })?;
        Ok(())
    })();
    // Writing to a Vec cannot fail; the text is UTF-8 as every input was.
    debug_assert!(written.is_ok());
    let mut out = String::from_utf8(writer.into_inner()).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_characters_xml_forbids() {
        assert_eq!(super::xml_chars("a<b &\u{0}\n"), "a<b &\u{fffd}\n");
    }
}
