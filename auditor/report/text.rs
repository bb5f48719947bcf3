//! `--format text`: the report for people at a terminal.

use super::{Input, LayerCounts, Placement, Report, Verdict};
use crate::checks::Status;
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use anstyle::{AnsiColor, Style};
use std::fmt::Write;

/// Lines of a finding's unified diff shown at a terminal.
const DIFF_LINES: usize = 40;

/// Colour for a terminal (the caller decides when: `color`), as anstyle
/// writes it.
struct Paint(bool);

fn fg(color: AnsiColor) -> Style {
    Style::new().fg_color(Some(color.into()))
}

impl Paint {
    fn style(&self, style: Style, text: &str) -> String {
        if self.0 { format!("{style}{text}{style:#}") } else { text.to_string() }
    }
    fn verdict(&self, verdict: Verdict) -> String {
        let color = match verdict {
            Verdict::Pass => AnsiColor::Green,
            Verdict::Fail => AnsiColor::Red,
            Verdict::Incomplete => AnsiColor::Yellow,
        };
        self.style(fg(color).bold(), verdict.as_upper())
    }
    fn status(&self, status: Status) -> String {
        let (style, word) = match status {
            Status::Pass => (fg(AnsiColor::Green), "PASS"),
            Status::Fail => (fg(AnsiColor::Red).bold(), "FAIL"),
            Status::Na => (Style::new().dimmed(), "N/A "),
            Status::Error => (fg(AnsiColor::Yellow), "ERR "),
        };
        self.style(style, word)
    }
    fn severity(&self, severity: Severity) -> String {
        let color = match severity {
            Severity::Error => AnsiColor::Red,
            Severity::Warning => AnsiColor::Yellow,
            Severity::Info => AnsiColor::Cyan,
        };
        self.style(fg(color), severity.as_str())
    }
}

/// How an image's layers were obtained, saying what this run verified:
/// a layer taken from the cache had its blob checked against its digest
/// when it was cached, not now.
fn layer_counts(c: &LayerCounts) -> String {
    let mut parts = Vec::new();
    if c.read > 0 {
        parts.push(format!("{} read and verified now", c.read));
    }
    if c.cached > 0 {
        parts.push(format!("{} from the cache, verified on first read (--verify-cached reads them again)", c.cached));
    }
    if c.shared > 0 {
        parts.push(format!("{} shared with the other image, read once", c.shared));
    }
    let layers = if c.layers == 1 { "layer" } else { "layers" };
    if parts.is_empty() { format!("{} {layers}", c.layers) } else { format!("{} {layers}: {}", c.layers, parts.join(", ")) }
}

/// Places named per failing check in the summary.
const TOP_PLACES: usize = 2;

/// The answer before the details: each check that failed or could not
/// conclude, with its counted errors and warnings and where most of them
/// are.
fn summary(report: &Report, paint: &Paint, out: &mut String) {
    for check in report.checks.iter().filter(|c| matches!(c.status, Status::Fail | Status::Error)) {
        let counted = |s: Severity| check.findings.iter().filter(|f| f.severity == s && !f.is_known() && f.suppressed.is_none()).count();
        let mut places: Vec<(String, usize)> = Vec::new();
        for f in check.findings.iter().filter(|f| f.severity == Severity::Error && !f.is_known() && f.suppressed.is_none()) {
            let Some(e) = f.primary() else { continue };
            let place = report.place(f, e);
            match places.iter_mut().find(|(p, _)| *p == place) {
                Some((_, n)) => *n += 1,
                None => places.push((place, 1)),
            }
        }
        places.sort_by_key(|p| std::cmp::Reverse(p.1));
        let mut top: Vec<String> = places.iter().take(TOP_PLACES).map(|(p, _)| p.clone()).collect();
        if places.len() > TOP_PLACES {
            top.push(format!("{} more place(s)", places.len() - TOP_PLACES));
        }
        let at = if top.is_empty() { String::new() } else { format!(" at {}", top.join(", ")) };
        let _ = writeln!(
            out,
            "  {} {}: {} error(s), {} warning(s){at}",
            paint.status(check.status),
            check.id,
            counted(Severity::Error),
            counted(Severity::Warning)
        );
    }
}

pub fn render(report: &Report, color: bool, placement: &Placement) -> String {
    let paint = Paint(color);
    let mut out = String::new();
    let _ = writeln!(out, "auditor {} · policy {}", report.tool.version, report.policy);
    let _ = writeln!(out, "verdict: {}", paint.verdict(report.verdict));
    summary(report, &paint, &mut out);
    if placement.quiet {
        // an incomplete verdict can come from what was not examined alone
        if !report.not_examined.is_empty() {
            let _ = writeln!(out, "  not examined: {} item(s) (run without --quiet to list them)", report.not_examined.len());
        }
        return out;
    }
    for input in &report.inputs {
        let _ = match input {
            Input::Bundle { sha256: None, .. } => writeln!(out, "input:   {}", input.label()),
            _ => writeln!(out, "input:   {} ({})", input.label(), input.identity()),
        };
    }
    for c in report.layer_cache.iter().flatten() {
        let _ = writeln!(out, "layers:  {} {}: {}", c.role, c.reference, layer_counts(c));
    }
    let mut kinds: Vec<String> = Vec::new();
    for kind in [JobKind::Throughput, JobKind::EvalOnly, JobKind::Unknown] {
        let n = report.jobs.iter().filter(|j| j.job.kind == kind).count();
        if n > 0 {
            kinds.push(format!("{n} {}", kind.as_str()));
        }
    }
    if !report.jobs.is_empty() {
        let _ = writeln!(out, "jobs:    {} ({})", report.job_count(), kinds.join(", "));
    }
    if !report.files.is_empty() {
        let _ = writeln!(out, "files:   {}", report.file_counts());
    }
    if let Some(c) = &report.changed_since {
        let _ = writeln!(
            out,
            "changed: since {}: {} file(s) changed; {} job(s) judged, {} skipped as unchanged; {} finding(s) pre-existing at {}, not counted; {} fixed by this change",
            c.reference,
            c.changed_files,
            c.judged,
            c.skipped,
            c.pre_existing,
            c.reference,
            c.fixed.len()
        );
        for r in &c.reaching_new_jobs {
            let _ = writeln!(out, "reaches: pre-existing {} at {} now also runs in new job(s) {} (not counted)", r.rule, r.place, r.jobs.join(", "));
        }
    }
    if let Some(b) = &report.baseline {
        let _ = writeln!(
            out,
            "baseline: {}: {} finding(s) known before, not counted; {} new; {} baseline fingerprint(s) no longer found",
            b.path, b.baselined, b.new, b.stale
        );
    }
    out.push('\n');
    for check in &report.checks {
        let _ = writeln!(out, "{}  {}  {}", paint.status(check.status), check.id, check.summary);
        let info = check.findings.iter().filter(|f| f.severity == Severity::Info).count();
        if info > 0 {
            let _ = writeln!(out, "      ({info} info finding(s) with the evidence of what was judged: --format json shows them)");
        }
        let baselined = check.findings.iter().filter(|f| f.baselined).count();
        if baselined > 0 {
            let _ = writeln!(out, "      ({baselined} finding(s) in the baseline, not counted: --format json lists them, marked \"baselined\")");
        }
        let pre_existing = check.findings.iter().filter(|f| f.pre_existing && !f.baselined).count();
        if pre_existing > 0 {
            let _ = writeln!(out, "      ({pre_existing} finding(s) pre-existing at the base, not counted: --format json lists them, marked \"pre_existing\")");
        }
        // Errors before warnings, each in report order.
        let (mut shown, unlisted): (Vec<&Finding>, Vec<&Finding>) =
            check.findings.iter().filter(|f| f.severity != Severity::Info && !f.is_known()).partition(|f| placement.lists(f.severity));
        shown.sort_by_key(|f| f.severity != Severity::Error);
        if !unlisted.is_empty() {
            let _ = writeln!(out, "      ({} warning(s) not listed: --min-severity {})", unlisted.len(), placement.min_severity.as_str());
        }
        for finding in shown {
            let job = finding.jobs_label().map(|j| format!("  [{j}]")).unwrap_or_default();
            let accepted = finding.suppressed.as_ref().map(|s| format!(" (suppressed: {}, {})", s.reason, s.owner)).unwrap_or_default();
            let _ = writeln!(out, "  {}{accepted} {}{job}", paint.severity(finding.severity), finding.rule);
            let _ = writeln!(out, "      {}", finding.message);
            for e in &finding.evidence {
                let line = e.line.map(|l| format!(":{l}")).unwrap_or_default();
                let _ = writeln!(out, "      --> {}{line}", report.location(finding, e));
                let _ = writeln!(out, "          {}", e.text);
            }
            if let Some(diff) = &finding.diff {
                let lines: Vec<&str> = diff.lines().collect();
                for line in lines.iter().take(DIFF_LINES) {
                    let _ = writeln!(out, "          {line}");
                }
                if lines.len() > DIFF_LINES {
                    let _ = writeln!(out, "          … {} more line(s) (--format json has the whole diff)", lines.len() - DIFF_LINES);
                }
            }
        }
    }
    if !report.not_in_input.is_empty() {
        let _ = writeln!(out, "\nnamed but not in the input ({}; --format json lists them):", report.not_in_input.len());
        for item in report.not_in_input.iter().take(5) {
            let _ = writeln!(out, "  - {item}");
        }
        if report.not_in_input.len() > 5 {
            let _ = writeln!(out, "  … {} more", report.not_in_input.len() - 5);
        }
    }
    if !report.not_examined.is_empty() {
        let _ = writeln!(out, "\nnot examined:");
        for item in &report.not_examined {
            let _ = writeln!(out, "  - {item}");
        }
    }
    out
}
