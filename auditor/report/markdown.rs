//! `--format markdown`: a merge-gate comment. It must fit where it is read:
//! GitHub rejects a comment over 65,536 characters, and a hostile finding
//! must not break the table or inject HTML or mentions. So: a verdict line,
//! one line per check, the errors grouped by place (one row per file:line
//! and rule, with how many jobs), everything else folded into `<details>`,
//! and a cut, pointing to the full report, where the budget runs out.

use super::{Report, Verdict};
use crate::checks::Status;
use crate::finding::{Finding, Severity};

/// GitHub's limit on a comment body, in characters.
pub const LIMIT: usize = 65_536;
/// Kept free for the closing tags and the cut line (measured in bytes,
/// which are never fewer than characters).
const RESERVE: usize = 2_048;
/// Longest message, summary or path shown in a cell, in characters.
const CELL: usize = 400;

/// `text` cut to `max` characters, with an ellipsis when cut.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Text safe in a table cell and in a line: characters that split cells
/// (`|`), start code spans or escapes, open HTML or entities, or mention
/// people become entities; line breaks become spaces; other control
/// characters are dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in clip(text, CELL).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("&#124;"),
            '`' => out.push_str("&#96;"),
            '\\' => out.push_str("&#92;"),
            '@' => out.push_str("&#64;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Code: a backtick span when the text allows one, else `<code>` with
/// the text escaped.
fn code(text: &str) -> String {
    let text = clip(text, CELL);
    if !text.is_empty() && !text.chars().any(|c| matches!(c, '`' | '|' | '\\') || c.is_control()) {
        format!("`{text}`")
    } else {
        format!("<code>{}</code>", escape(&text))
    }
}

/// The comment being written, within [`LIMIT`].
struct Budget {
    out: String,
    full: bool,
    /// Rows (and list items) left out.
    omitted: usize,
}

impl Budget {
    /// Append `line` if it fits; once one does not, nothing more is added.
    fn line(&mut self, line: &str) -> bool {
        if !self.full && self.out.len() + line.len() + 1 + RESERVE <= LIMIT {
            self.out.push_str(line);
            self.out.push('\n');
            true
        } else {
            self.full = true;
            false
        }
    }

    /// A section of `rows` under `head` lines, folded into `<details>` with
    /// `summary` when given.
    fn section(&mut self, summary: Option<&str>, head: &[&str], rows: &[String]) {
        if rows.is_empty() {
            return;
        }
        let opened = match summary {
            Some(summary) => self.line(&format!("\n<details><summary>{summary}</summary>\n")),
            None => self.line(""),
        };
        if !opened || !head.iter().all(|h| self.line(h)) {
            self.omitted += rows.len();
            if opened && summary.is_some() {
                self.out.push_str("\n</details>\n");
            }
            return;
        }
        for (i, row) in rows.iter().enumerate() {
            if !self.line(row) {
                self.omitted += rows.len() - i;
                break;
            }
        }
        if summary.is_some() {
            // Within RESERVE: always closed.
            self.out.push_str("\n</details>\n");
        }
    }
}

const TABLE: [&str; 2] = ["| Where | Rule | Jobs | Message |", "|---|---|---|---|"];

/// One row per place (first evidence file:line) and rule: how many jobs,
/// and the first message.
fn grouped<'r>(report: &'r Report, findings: impl Iterator<Item = &'r Finding>) -> Vec<String> {
    let place = |f: &Finding| match f.primary() {
        Some(e) => {
            let more = if f.evidence.len() > 1 { format!(" (+{} more)", f.evidence.len() - 1) } else { String::new() };
            // One input: the header names it, paths inside it are enough.
            let file = if report.inputs.len() == 1 { e.place() } else { report.place(f, e) };
            format!("{file}{more}")
        }
        None => String::new(),
    };
    super::grouped(findings, |f| (place(f), f.rule.as_str()))
        .into_iter()
        .map(|((place, rule), group)| {
            let (count, message) = (group.findings.len(), group.findings[0].message.as_str());
            let jobs = if group.jobs.is_empty() { "-".to_string() } else { group.jobs.len().to_string() };
            let message = if count > jobs.parse().unwrap_or(1) && count > 1 { format!("{message} ({count} findings)") } else { message.to_string() };
            let place = if place.is_empty() { "-".to_string() } else { code(&place) };
            format!("| {place} | {} | {jobs} | {} |", code(rule), escape(&message))
        })
        .collect()
}

pub fn render(report: &Report) -> String {
    let mut b = Budget { out: String::new(), full: false, omitted: 0 };
    let icon = match report.verdict {
        Verdict::Pass => "✅",
        Verdict::Fail => "❌",
        Verdict::Incomplete => "⚠️",
    };
    b.line(&format!("## {icon} auditor verdict: {}\n", report.verdict.as_upper()));
    let mut inputs: Vec<String> = report.inputs.iter().take(5).map(|i| code(i.label())).collect();
    if report.inputs.len() > 5 {
        inputs.push(format!("+{} more", report.inputs.len() - 5));
    }
    b.line(&format!("Policy {} · {} · {} jobs · files: {}", code(&report.policy), inputs.join(", "), report.job_count(), report.file_counts()));
    if let Some(c) = &report.changed_since {
        b.line(&format!(
            "\nChanged since {}: {} file(s) changed · {} job(s) judged · {} skipped as unchanged · {} pre-existing, not counted · {} fixed by this change",
            code(&c.reference),
            c.changed_files,
            c.judged,
            c.skipped,
            c.pre_existing,
            c.fixed.len()
        ));
        for r in &c.reaching_new_jobs {
            b.line(&format!(
                "- pre-existing `{}` at {} now also runs in new job(s) {} (not counted)",
                r.rule,
                code(&r.place),
                r.jobs.iter().map(|j| code(j)).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if let Some(base) = &report.baseline {
        b.line(&format!(
            "\nBaseline {}: {} finding(s) known before, not counted · {} new · {} fixed since",
            code(&base.path),
            base.baselined,
            base.new,
            base.stale
        ));
    }
    b.line("");
    for check in &report.checks {
        let (icon, word) = match check.status {
            Status::Pass => ("✅", "PASS"),
            Status::Fail => ("❌", "FAIL"),
            Status::Na => ("➖", "N/A"),
            Status::Error => ("⚠️", "ERROR"),
        };
        if !b.line(&format!("{icon} Check {}: {word} — {}  ", escape(&check.id), escape(&check.summary))) {
            b.omitted += 1;
        }
    }
    let all = || report.findings().map(|(_, f)| f);
    let counted = |f: &&Finding| !f.is_known() && f.suppressed.is_none();
    let errors = grouped(report, all().filter(|f| f.severity == Severity::Error).filter(counted));
    if !errors.is_empty() {
        let n = all().filter(|f| f.severity == Severity::Error).filter(counted).count();
        b.line(&format!("\n### Errors ({n} finding(s) at {} place(s))", errors.len()));
        b.section(None, &TABLE, &errors);
    }
    let warnings = grouped(report, all().filter(|f| f.severity == Severity::Warning).filter(counted));
    b.section(Some(&format!("Warnings ({} place(s))", warnings.len())), &TABLE, &warnings);
    let not_examined: Vec<String> = report.not_examined.iter().map(|n| format!("- {}", escape(n))).collect();
    b.section(Some(&format!("Not examined ({})", not_examined.len())), &[], &not_examined);
    let not_in_input: Vec<String> = report.not_in_input.iter().map(|n| format!("- {}", escape(n))).collect();
    b.section(Some(&format!("Named but not in the input ({})", not_in_input.len())), &[], &not_in_input);
    let baselined = grouped(report, all().filter(|f| f.baselined));
    b.section(Some(&format!("In the baseline ({} place(s)): known before, not counted", baselined.len())), &TABLE, &baselined);
    let pre_existing = grouped(report, all().filter(|f| f.pre_existing && !f.baselined));
    b.section(Some(&format!("Pre-existing at the base ({} place(s)): not written by this change, not counted", pre_existing.len())), &TABLE, &pre_existing);
    let suppressed = grouped(report, all().filter(|f| f.suppressed.is_some() && !f.is_known()));
    b.section(Some(&format!("Accepted by policy suppressions ({} place(s))", suppressed.len())), &TABLE, &suppressed);
    let skipped: Vec<String> = report.skipped_jobs().map(|(j, _)| format!("- {}", code(&j.job.id))).collect();
    let why = report.changed_since.as_ref().map(|c| format!(": unchanged since {}", code(&c.reference))).unwrap_or_default();
    b.section(Some(&format!("Jobs not judged ({}){why}", skipped.len())), &[], &skipped);
    let info = grouped(report, all().filter(|f| f.severity == Severity::Info && !f.is_known()));
    b.section(Some(&format!("Info: what was judged ({} place(s))", info.len())), &TABLE, &info);
    if b.omitted > 0 {
        b.out.push_str(&format!(
            "\n… {} more row(s) not shown, to stay under GitHub's {LIMIT}-character comment limit: see the JSON/SARIF report (`--format json`, `--format sarif`).\n",
            b.omitted
        ));
    }
    b.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{FileRecord, FileStatus};
    use crate::checks::CheckResult;
    use crate::jobs::{Job, JobKind, JobMeta};
    use crate::provenance::Provenance;
    use crate::report::{FileEntry, Input, JobEntry};

    fn hostile_report(n: usize) -> Report {
        let nasty = "a|b`c\\|d <script>alert(1)</script> @everyone\n| --- |\r\n&amp; ";
        let findings: Vec<Finding> = (0..n)
            .map(|i| {
                let severity = [Severity::Error, Severity::Warning, Severity::Info][i % 3];
                let evidence = vec![Provenance::new(format!("dir|{i}/`x`<b>.sh"), Some(i as u64), nasty)];
                Finding::new(&format!("forbidden-env/r|{}", i % 7), severity, format!("{nasty}{}", "m".repeat(2_000)), Some(&format!("job|{i}")), evidence)
            })
            .collect();
        let check =
            CheckResult { id: "forbidden-env".into(), title: "t".into(), status: Status::Fail, summary: nasty.repeat(100), findings, golden: Vec::new() };
        let job = Job {
            id: "job|1".into(),
            kind: JobKind::Throughput,
            scenario: None,
            runs_eval: false,
            kind_reason: String::new(),
            role: None,
            from_sources: true,
            meta: JobMeta::default(),
            artifacts: Vec::new(),
        };
        let jobs = vec![JobEntry { bundle: "b".into(), job, files: 1, skipped: Some("unchanged".into()) }];
        let files = vec![FileEntry {
            bundle: "b".into(),
            artifact: None,
            job: None,
            record: FileRecord { path: "x".into(), size: None, sha256: None, status: FileStatus::Read },
        }];
        Report::new("p|`".into(), vec![Input::Bundle { path: "b|<i>".into(), sha256: None }], vec![check], jobs, files, vec![nasty.repeat(50); 5_000])
    }

    #[test]
    fn twenty_thousand_hostile_findings_fit_one_comment_with_valid_rows() {
        let md = render(&hostile_report(20_000));
        assert!(md.chars().count() < LIMIT, "{} characters", md.chars().count());
        assert!(md.starts_with("## ❌ auditor verdict: FAIL"));
        assert!(md.contains("more row(s) not shown") && md.contains("see the JSON/SARIF report"), "the cut points to the full report");
        assert!(md.contains("### Errors (6667 finding(s)"), "errors are counted in full even when cut");
        assert!(!md.contains("<script>") && !md.contains("@everyone") && !md.contains("<b>"), "no HTML or mention injection");
        assert_eq!(md.matches("<details>").count(), md.matches("</details>").count(), "every fold is closed");
        for row in md.lines().filter(|l| l.starts_with("| ")) {
            // Four cells: five pipes that split cells, none escaped inside them.
            let splitting = row.match_indices('|').count();
            assert_eq!(splitting, 5, "{row}");
            assert!(!row.contains('`') || row.matches('`').count() % 2 == 0, "{row}");
        }
        assert!(md.lines().all(|l| !l.contains('\r')));
    }

    #[test]
    fn escaping_keeps_cells_and_code_spans_intact() {
        assert_eq!(escape("a|b\nc`d\\<e>@f&"), "a&#124;b c&#96;d&#92;&lt;e&gt;&#64;f&amp;");
        assert_eq!(code("x/y.sh:3"), "`x/y.sh:3`");
        assert_eq!(code("a`b|c"), "<code>a&#96;b&#124;c</code>");
        assert_eq!(clip("ééé", 2), "éé…");
    }

    #[test]
    fn errors_are_grouped_by_place_with_a_job_count() {
        let at = |line| vec![Provenance::new("r.yaml", Some(line), "X=1")];
        let findings = vec![
            Finding::new("forbidden-env/enabled", Severity::Error, "X on".into(), Some("a"), at(3)),
            Finding::new("forbidden-env/enabled", Severity::Error, "X on".into(), Some("b"), at(3)),
            Finding::new("forbidden-env/enabled", Severity::Error, "X on".into(), Some("c"), at(9)),
        ];
        let check = CheckResult { id: "forbidden-env".into(), title: "t".into(), status: Status::Fail, summary: "s".into(), findings, golden: Vec::new() };
        let md = render(&Report::new("p".into(), Vec::new(), vec![check], Vec::new(), Vec::new(), Vec::new()));
        assert!(md.contains("### Errors (3 finding(s) at 2 place(s))"), "{md}");
        assert!(md.contains("| `r.yaml:3` | `forbidden-env/enabled` | 2 | X on |"), "{md}");
        assert!(md.contains("| `r.yaml:9` | `forbidden-env/enabled` | 1 | X on |"), "{md}");
    }
}
