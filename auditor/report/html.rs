//! `--format html`: one self-contained page for a reviewer's browser. Styles
//! and the one small script are inline and a Content-Security-Policy forbids
//! every other load, so the file works offline and names no URL; everything
//! reads without JavaScript (the script only adds a filter box).
//!
//! The page is an askama template (`templates/report.html`) filled from the
//! view built here. Every value from the input reaches the page through the
//! template's HTML escaping; this module computes only structure and numbers
//! (chart coordinates, matrix cells, diff rows), never markup.

use super::{Input, JobEntry, Report, Verdict};
use crate::checks::{GoldenPlot, Status};
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use askama::Template;
use std::collections::{BTreeMap, BTreeSet};

/// How a job, a matrix cell or a finding stands, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Mark {
    /// `--changed-since` left the job unjudged.
    Skipped,
    Pass,
    Warning,
    /// A check could not decide.
    Undetermined,
    Fail,
}

impl Mark {
    fn of(f: &Finding) -> Mark {
        if f.is_violation() {
            Mark::Fail
        } else if f.is_known() || f.suppressed.is_some() || f.severity == Severity::Info {
            Mark::Pass
        } else if f.is_undetermined() {
            Mark::Undetermined
        } else {
            Mark::Warning
        }
    }

    fn class(self) -> &'static str {
        match self {
            Mark::Skipped => "skipped",
            Mark::Pass => "pass",
            Mark::Warning => "warning",
            Mark::Undetermined => "error",
            Mark::Fail => "fail",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Mark::Skipped => "not judged",
            Mark::Pass => "pass",
            Mark::Warning => "warning",
            Mark::Undetermined => "undetermined",
            Mark::Fail => "fail",
        }
    }
}

fn status_class(status: Status) -> &'static str {
    match status {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Na => "na",
        Status::Error => "error",
    }
}

#[derive(Template)]
#[template(path = "report.html")]
struct Page<'r> {
    verdict: &'static str,
    verdict_class: &'static str,
    tool: String,
    policy: &'r str,
    inputs: Vec<(String, String)>,
    counts: String,
    checks: Vec<CheckRow<'r>>,
    matrix: Option<Matrix>,
    charts: Vec<Chart>,
    jobs: Vec<JobView<'r>>,
    places: Vec<PlaceView<'r>>,
    info_places: Vec<PlaceView<'r>>,
    diffs: Vec<DiffView<'r>>,
    config: Vec<ConfigRow<'r>>,
    not_examined: &'r [String],
    not_in_input: &'r [String],
}

struct CheckRow<'r> {
    id: &'r str,
    title: &'r str,
    class: &'static str,
    status: &'static str,
    summary: &'r str,
    errors: usize,
    warnings: usize,
    info: usize,
}

struct Matrix {
    /// Concurrency levels, ascending; `–` (no concurrency known) last.
    columns: Vec<String>,
    rows: Vec<MatrixRow>,
}

struct MatrixRow {
    config: String,
    tp: String,
    cells: Vec<MatrixCell>,
}

struct MatrixCell {
    /// Empty for a cell no job ran.
    class: &'static str,
    jobs: Vec<CellJob>,
}

struct CellJob {
    anchor: String,
    label: &'static str,
    class: &'static str,
    title: String,
}

struct JobView<'r> {
    anchor: String,
    id: &'r str,
    kind: &'static str,
    class: &'static str,
    word: &'static str,
    skipped: Option<&'r str>,
    findings: Vec<JobFinding<'r>>,
}

struct JobFinding<'r> {
    place: String,
    rule: &'r str,
    severity: &'static str,
    message: &'r str,
}

struct PlaceView<'r> {
    anchor: String,
    place: String,
    class: &'static str,
    findings: Vec<FindingView<'r>>,
}

struct FindingView<'r> {
    rule: &'r str,
    severity: &'static str,
    note: Option<String>,
    jobs: Option<String>,
    message: &'r str,
    evidence: Vec<EvidenceLine<'r>>,
    diff: Option<String>,
}

struct EvidenceLine<'r> {
    place: String,
    layer: Option<&'r str>,
    text: &'r str,
}

struct DiffView<'r> {
    anchor: String,
    path: &'r str,
    rule: &'r str,
    severity: &'static str,
    kind: &'r str,
    layer: Option<String>,
    step: Option<&'r str>,
    rows: Vec<DiffRow>,
}

/// A line of one side of a diff, with its number.
type Numbered = (u64, String);

/// One row of a side-by-side diff: a hunk header, or the upstream and the
/// pinned line (either may be absent).
struct DiffRow {
    hunk: Option<String>,
    left: Option<Numbered>,
    left_class: &'static str,
    right: Option<Numbered>,
    right_class: &'static str,
}

struct ConfigRow<'r> {
    setting: &'r str,
    upstream: &'r str,
    pinned: &'r str,
    severity: &'static str,
    rule: &'r str,
}

/// A golden table drawn as an SVG: one curve per thinking mode, each judged
/// job a dot (red when off its curve).
struct Chart {
    anchor: String,
    title: String,
    source: String,
    width: u32,
    height: u32,
    /// The plot area: left, top, right, bottom.
    frame: (String, String, String, String),
    x_ticks: Vec<(String, String)>,
    y_ticks: Vec<(String, String)>,
    /// Where x ticks end, below the axis.
    tick_end: String,
    /// Where the legend's swatches and names start.
    legend: (String, String),
    x_label_at: (String, String),
    y_label_at: (String, String),
    curves: Vec<Curve>,
    dots: Vec<Dot>,
}

struct Curve {
    mode: String,
    color: &'static str,
    points: String,
    cells: Vec<(String, String, String)>,
    legend_y: String,
}

struct Dot {
    /// The job's section (the first job's, for a shared dot).
    anchor: Option<String>,
    x: String,
    y: String,
    off: bool,
    title: String,
    label: String,
    label_x: String,
    label_y: String,
    /// From the dot to the golden value it should sit on, when off the curve.
    to_golden: Option<(String, String)>,
}

const CHART_W: u32 = 720;
const CHART_H: u32 = 360;
const MARGIN: (f64, f64, f64, f64) = (64.0, 24.0, 150.0, 48.0);

fn n(v: f64) -> String {
    format!("{v:.1}")
}

/// Tick values over `[lo, hi]`: a step of 1, 2 or 5 times a power of ten, about five ticks.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * mag).find(|s| raw <= *s * (1.0 + 1e-9)).unwrap_or(mag * 10.0);
    let mut out = Vec::new();
    let mut v = (lo / step).ceil() * step;
    while v <= hi + step * 1e-6 && out.len() < 50 {
        out.push(v);
        v += step;
    }
    out
}

fn mode_color(i: usize, mode: &str) -> &'static str {
    match mode {
        "thinking_on" => "#1f6feb",
        "thinking_off" => "#8250df",
        _ => ["#1b7c83", "#bf8700", "#6e7781"][i % 3],
    }
}

fn chart(index: usize, plot: &GoldenPlot, anchors: &BTreeMap<&str, String>) -> Chart {
    let table = &plot.table;
    let mut ks: Vec<f64> = table.modes.values().flat_map(|row| row.keys().map(|k| f64::from(*k))).collect();
    ks.extend(plot.points.iter().map(|p| f64::from(p.draft_length)));
    let mut als: Vec<f64> = table.modes.values().flat_map(|row| row.values().map(|c| c.al)).collect();
    als.extend(plot.points.iter().map(|p| p.simulated));
    let span = |v: &[f64], pad: f64| {
        let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
        if !lo.is_finite() {
            (0.0, 1.0)
        } else if hi - lo < 1e-9 {
            (lo - 1.0, hi + 1.0)
        } else {
            (lo - (hi - lo) * pad, hi + (hi - lo) * pad)
        }
    };
    let (x0, x1) = span(&ks, 0.08);
    let (y0, y1) = span(&als, 0.12);
    let (left, top, right, bottom) = (MARGIN.0, MARGIN.1, f64::from(CHART_W) - MARGIN.2, f64::from(CHART_H) - MARGIN.3);
    let x = |k: f64| left + (k - x0) / (x1 - x0) * (right - left);
    let y = |al: f64| bottom - (al - y0) / (y1 - y0) * (bottom - top);
    let x_ticks = {
        let whole: BTreeSet<u32> = ks.iter().map(|k| *k as u32).collect();
        whole.into_iter().map(|k| (n(x(f64::from(k))), k.to_string())).collect()
    };
    let y_ticks = ticks(y0, y1).into_iter().map(|v| (n(y(v)), format!("{v:.2}"))).collect();
    let curves = table
        .modes
        .iter()
        .enumerate()
        .map(|(i, (mode, row))| Curve {
            mode: mode.clone(),
            color: mode_color(i, mode),
            points: row.iter().map(|(k, c)| format!("{},{}", n(x(f64::from(*k))), n(y(c.al)))).collect::<Vec<_>>().join(" "),
            cells: row.iter().map(|(k, c)| (n(x(f64::from(*k))), n(y(c.al)), format!("{mode} K={k}: golden AL {}", c.text))).collect(),
            legend_y: n(top + 16.0 + 20.0 * i as f64),
        })
        .collect();
    // Jobs at the same place share a dot.
    let mut same: BTreeMap<(String, u32, String, bool), Vec<&crate::checks::GoldenPoint>> = BTreeMap::new();
    for p in &plot.points {
        same.entry((p.mode.clone(), p.draft_length, format!("{:.4}", p.simulated), p.on_curve)).or_default().push(p);
    }
    let mut labels = 0;
    let dots = same
        .into_values()
        .map(|points| {
            let p = points[0];
            let (dx, dy) = (x(f64::from(p.draft_length)), y(p.simulated));
            let golden = p.golden.map(|g| format!("{g:.2}")).unwrap_or_else(|| "none for this K".to_string());
            let values = format!("simulated AL {:.2}, golden AL {golden}", p.simulated);
            let jobs = match points.len() {
                1 => format!("job {}", p.job),
                k => format!("{k} jobs ({}{})", points.iter().take(3).map(|p| p.job.as_str()).collect::<Vec<_>>().join(", "), if k > 3 { ", …" } else { "" }),
            };
            let title = format!("{jobs}: {values} ({} K={})", p.mode, p.draft_length);
            let off = !p.on_curve;
            let label = if off { values.clone() } else { format!("{:.2}", p.simulated) };
            let shift = if off {
                labels += 1;
                14.0 * labels as f64
            } else {
                0.0
            };
            Dot {
                anchor: anchors.get(p.job.as_str()).cloned(),
                x: n(dx),
                y: n(dy),
                off,
                title,
                label,
                label_x: n(dx + 9.0),
                label_y: n(dy - 8.0 - shift),
                to_golden: p.golden.filter(|_| off).map(|g| (n(dx), n(y(g)))),
            }
        })
        .collect();
    Chart {
        anchor: format!("chart-{index}"),
        title: format!("{} ({})", table.name, table.model),
        source: table.source.clone(),
        width: CHART_W,
        height: CHART_H,
        frame: (n(left), n(top), n(right), n(bottom)),
        x_ticks,
        y_ticks,
        tick_end: n(bottom + 5.0),
        legend: (n(right + 14.0), n(right + 36.0)),
        x_label_at: (n((left + right) / 2.0), n(bottom + 36.0)),
        y_label_at: (n(18.0), n((top + bottom) / 2.0)),
        curves,
        dots,
    }
}

/// The configuration a job belongs to, for the matrix rows: every setting
/// but its TP and concurrency.
fn config_of(job: &JobEntry) -> String {
    let m = &job.job.meta;
    let parts: Vec<&str> = [m.model_prefix.as_deref(), m.precision.as_deref(), m.hw.as_deref(), m.framework.as_deref(), m.spec_decoding.as_deref()]
        .into_iter()
        .flatten()
        .chain(job.job.scenario.map(|s| s.as_str()))
        .chain(job.job.role.as_deref())
        .collect();
    if parts.is_empty() { job.job.id.clone() } else { parts.join(" · ") }
}

fn kind_label(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Throughput => "T",
        JobKind::EvalOnly => "E",
        _ => "?",
    }
}

/// The worst mark of each job, by its index in the report.
fn job_marks(report: &Report) -> Vec<Mark> {
    let index: BTreeMap<&str, usize> = report.jobs.iter().enumerate().map(|(i, j)| (j.job.id.as_str(), i)).collect();
    let mut marks: Vec<Mark> = report.jobs.iter().map(|j| if j.skipped.is_some() { Mark::Skipped } else { Mark::Pass }).collect();
    for (_, f) in report.findings() {
        for job in f.concerned_jobs() {
            if let Some(&i) = index.get(job) {
                marks[i] = marks[i].max(Mark::of(f));
            }
        }
    }
    marks
}

fn matrix(report: &Report, marks: &[Mark]) -> Option<Matrix> {
    let jobs: Vec<(usize, &JobEntry)> = report.jobs.iter().enumerate().filter(|(_, j)| j.job.kind != JobKind::RunLevel).collect();
    if jobs.is_empty() {
        return None;
    }
    let concs = |j: &JobEntry| if j.job.meta.conc.is_empty() { vec![None] } else { j.job.meta.conc.iter().map(|c| Some(*c)).collect() };
    let columns: BTreeSet<(bool, u32)> = jobs.iter().flat_map(|(_, j)| concs(j)).map(|c| (c.is_none(), c.unwrap_or(0))).collect();
    let columns: Vec<Option<u32>> = columns.into_iter().map(|(none, c)| (!none).then_some(c)).collect();
    let mut rows: BTreeMap<(String, bool, u32), Vec<Vec<usize>>> = BTreeMap::new();
    for (i, j) in &jobs {
        let tp = j.job.meta.tp;
        let row = rows.entry((config_of(j), tp.is_none(), tp.unwrap_or(0))).or_insert_with(|| vec![Vec::new(); columns.len()]);
        for c in concs(j) {
            if let Some(col) = columns.iter().position(|x| *x == c) {
                row[col].push(*i);
            }
        }
    }
    let label = |v: Option<u32>| v.map_or("–".to_string(), |v| v.to_string());
    Some(Matrix {
        columns: columns.iter().map(|c| label(*c)).collect(),
        rows: rows
            .into_iter()
            .map(|((config, none, tp), cells)| MatrixRow {
                config,
                tp: label((!none).then_some(tp)),
                cells: cells
                    .into_iter()
                    .map(|ids| MatrixCell {
                        class: ids.iter().map(|i| marks[*i]).max().map_or("", Mark::class),
                        jobs: ids
                            .iter()
                            .map(|i| {
                                let j = &report.jobs[*i];
                                CellJob {
                                    anchor: format!("job-{i}"),
                                    label: kind_label(j.job.kind),
                                    class: marks[*i].class(),
                                    title: format!("{} ({}): {}", j.job.id, j.job.kind.as_str(), marks[*i].word()),
                                }
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect(),
    })
}

/// Where a finding is, for people: its first evidence's path and line.
fn place_of(report: &Report, f: &Finding) -> String {
    f.primary().map(|e| report.place(f, e)).unwrap_or_else(|| "(no file)".to_string())
}

/// A side-by-side view of a unified diff.
fn side_by_side(diff: &str) -> Vec<DiffRow> {
    let mut rows = Vec::new();
    let (mut old, mut new) = (0u64, 0u64);
    let (mut dels, mut adds): (Vec<Numbered>, Vec<Numbered>) = (Vec::new(), Vec::new());
    let mut in_hunk = false;
    let flush = |rows: &mut Vec<DiffRow>, dels: &mut Vec<Numbered>, adds: &mut Vec<Numbered>| {
        let n = dels.len().max(adds.len());
        let (mut d, mut a) = (dels.drain(..), adds.drain(..));
        for _ in 0..n {
            let (left, right) = (d.next(), a.next());
            rows.push(DiffRow {
                hunk: None,
                left_class: if left.is_some() { "del" } else { "gap" },
                right_class: if right.is_some() { "add" } else { "gap" },
                left,
                right,
            });
        }
    };
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("@@") {
            flush(&mut rows, &mut dels, &mut adds);
            let ranges: Vec<u64> =
                header.split_whitespace().take_while(|w| *w != "@@").filter_map(|w| w.trim_start_matches(['-', '+']).split(',').next()?.parse().ok()).collect();
            if let [o, n, ..] = ranges[..] {
                (old, new) = (o, n);
            }
            in_hunk = true;
            rows.push(DiffRow { hunk: Some(line.to_string()), left: None, left_class: "", right: None, right_class: "" });
            continue;
        }
        if !in_hunk {
            continue;
        }
        match line.as_bytes().first() {
            Some(b'-') => {
                dels.push((old, line[1..].to_string()));
                old += 1;
            }
            Some(b'+') => {
                adds.push((new, line[1..].to_string()));
                new += 1;
            }
            Some(b'\\') => {}
            _ => {
                flush(&mut rows, &mut dels, &mut adds);
                let text = line.get(1..).unwrap_or("").to_string();
                rows.push(DiffRow { hunk: None, left: Some((old, text.clone())), left_class: "ctx", right: Some((new, text)), right_class: "ctx" });
                old += 1;
                new += 1;
            }
        }
    }
    flush(&mut rows, &mut dels, &mut adds);
    rows
}

/// The layer a piece of image evidence names, as `layer N (sha256:…)` of
/// the image that holds it, with that layer's build step.
fn layer_of<'r>(report: &'r Report, digest: &str) -> (String, Option<&'r str>) {
    for input in &report.inputs {
        if let Input::Image(image) = input
            && let Some(i) = image.layers.iter().position(|l| l == digest)
        {
            let step = image.steps.get(i).map(String::as_str).filter(|s| !s.is_empty());
            return (format!("layer {i} of {} ({digest})", image.reference), step);
        }
    }
    (digest.to_string(), None)
}

fn places<'r>(report: &'r Report, findings: &[&'r Finding], diffs: &BTreeMap<&str, String>, first: usize) -> Vec<PlaceView<'r>> {
    let groups = super::grouped(findings.iter().copied(), |f| place_of(report, f));
    groups
        .into_iter()
        .enumerate()
        .map(|(i, (place, group))| {
            let mut members = group.findings;
            members.sort_by_key(|f| f.severity);
            PlaceView {
                anchor: format!("place-{}", first + i),
                class: members.iter().map(|f| Mark::of(f)).max().unwrap_or(Mark::Pass).class(),
                place,
                findings: members
                    .into_iter()
                    .map(|f| FindingView {
                        rule: &f.rule,
                        severity: f.severity.as_str(),
                        note: f
                            .suppressed
                            .as_ref()
                            .map(|s| format!("suppressed: {}, {}", s.reason, s.owner))
                            .or_else(|| f.baselined.then(|| "in the baseline, not counted".to_string()))
                            .or_else(|| f.pre_existing.then(|| "pre-existing at the base, not counted".to_string())),
                        jobs: f.jobs_label(),
                        message: &f.message,
                        evidence: f.evidence.iter().map(|e| EvidenceLine { place: report.place(f, e), layer: e.layer.as_deref(), text: &e.text }).collect(),
                        diff: diffs.get(f.fingerprint.as_str()).cloned(),
                    })
                    .collect(),
            }
        })
        .collect()
}

pub fn render(report: &Report) -> String {
    let marks = job_marks(report);
    let job_anchor: BTreeMap<&str, String> = report.jobs.iter().enumerate().map(|(i, j)| (j.job.id.as_str(), format!("job-{i}"))).collect();
    let findings: Vec<&Finding> = report.findings().map(|(_, f)| f).collect();
    let with_diff: Vec<&Finding> = findings.iter().copied().filter(|f| f.diff.is_some()).collect();
    let diff_anchor: BTreeMap<&str, String> = with_diff.iter().enumerate().map(|(i, f)| (f.fingerprint.as_str(), format!("diff-{i}"))).collect();
    let shown: Vec<&Finding> = findings.iter().copied().filter(|f| f.severity != Severity::Info).collect();
    let info: Vec<&Finding> = findings.iter().copied().filter(|f| f.severity == Severity::Info).collect();
    let places_shown = places(report, &shown, &diff_anchor, 0);
    let info_places = places(report, &info, &diff_anchor, places_shown.len());
    let mut counts = Vec::new();
    if !report.jobs.is_empty() {
        counts.push(format!("{} job(s)", report.job_count()));
    }
    if !report.files.is_empty() {
        counts.push(format!("files: {}", report.file_counts()));
    }
    let page = Page {
        verdict: report.verdict.as_upper(),
        verdict_class: match report.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Incomplete => "error",
        },
        tool: format!("{} {}", report.tool.name, report.tool.version),
        policy: &report.policy,
        inputs: report.inputs.iter().map(|i| (i.label().to_string(), i.identity())).collect(),
        counts: counts.join(" · "),
        checks: report
            .checks
            .iter()
            .map(|c| {
                let count = |s: Severity| c.findings.iter().filter(|f| f.severity == s && !f.is_known() && f.suppressed.is_none()).count();
                CheckRow {
                    id: &c.id,
                    title: &c.title,
                    class: status_class(c.status),
                    status: c.status.as_str(),
                    summary: &c.summary,
                    errors: count(Severity::Error),
                    warnings: count(Severity::Warning),
                    info: count(Severity::Info),
                }
            })
            .collect(),
        matrix: matrix(report, &marks),
        charts: report.checks.iter().flat_map(|c| &c.golden).enumerate().map(|(i, p)| chart(i, p, &job_anchor)).collect(),
        jobs: report
            .jobs
            .iter()
            .enumerate()
            .filter(|(_, j)| j.job.kind != JobKind::RunLevel)
            .map(|(i, j)| JobView {
                anchor: format!("job-{i}"),
                id: &j.job.id,
                kind: j.job.kind.as_str(),
                class: marks[i].class(),
                word: marks[i].word(),
                skipped: j.skipped.as_deref(),
                findings: findings
                    .iter()
                    .filter(|f| f.severity != Severity::Info && f.concerned_jobs().any(|id| id == j.job.id))
                    .map(|f| JobFinding { place: place_of(report, f), rule: &f.rule, severity: f.severity.as_str(), message: &f.message })
                    .collect(),
            })
            .collect(),
        places: places_shown,
        info_places,
        diffs: with_diff
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let layer = f.primary().and_then(|e| e.layer.as_deref()).map(|d| layer_of(report, d));
                DiffView {
                    anchor: format!("diff-{i}"),
                    path: f.path.as_deref().unwrap_or(""),
                    rule: &f.rule,
                    severity: f.severity.as_str(),
                    kind: f.kind.as_deref().unwrap_or(""),
                    step: layer.as_ref().and_then(|l| l.1),
                    layer: layer.map(|l| l.0),
                    rows: side_by_side(f.diff.as_deref().unwrap_or("")),
                }
            })
            .collect(),
        config: findings
            .iter()
            .filter_map(|f| {
                let c = f.config_change.as_ref()?;
                Some(ConfigRow {
                    setting: &c.setting,
                    upstream: c.upstream.as_deref().unwrap_or(""),
                    pinned: c.pinned.as_deref().unwrap_or(""),
                    severity: f.severity.as_str(),
                    rule: &f.rule,
                })
            })
            .collect(),
        not_examined: &report.not_examined,
        not_in_input: &report.not_in_input,
    };
    let mut out = page.render().unwrap_or_else(|e| format!("<!doctype html><p>report could not be rendered: {e}</p>\n"));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{FileRecord, FileStatus};
    use crate::checks::{CheckResult, GoldenPoint};
    use crate::finding::ConfigChange;
    use crate::jobs::Job;
    use crate::provenance::Provenance;
    use crate::report::FileEntry;

    const NASTY: &str = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>&amp;";

    fn job(id: &str, tp: Option<u32>, conc: &[u32], kind: JobKind) -> JobEntry {
        let meta =
            crate::evidence::meta::JobMeta { model_prefix: Some("dsv4".into()), precision: Some("fp4".into()), tp, conc: conc.to_vec(), ..Default::default() };
        let job = Job {
            id: id.into(),
            kind,
            scenario: None,
            runs_eval: false,
            kind_reason: String::new(),
            role: None,
            from_sources: false,
            meta,
            artifacts: Vec::new(),
        };
        JobEntry { bundle: "b".into(), job, files: 1, skipped: None }
    }

    fn golden_table() -> crate::reference::golden::Table {
        let text = "m<x>:\n  thinking_on:\n    1: 1.80\n    2: 2.27\n    3: 2.49\n  thinking_off:\n    2: 2.61\n";
        crate::reference::golden::parse("t<b>", "src<i>.yaml", text).unwrap()
    }

    /// A report whose every string from the input is hostile.
    fn hostile() -> Report {
        let mut finding = Finding::new(
            "golden-al/mismatch",
            Severity::Error,
            format!("message {NASTY}"),
            Some(&format!("job{NASTY}")),
            vec![Provenance::new(format!("dir/{NASTY}.log"), Some(3), NASTY).in_layer(Some(format!("sha256:{NASTY}")))],
        );
        finding.diff = Some(format!("--- a\n+++ b\n@@ -1,2 +1,2 @@\n keep {NASTY}\n-old {NASTY}\n+new {NASTY}\n"));
        finding.path = Some(format!("/p/{NASTY}"));
        let mut config = Finding::new("engine-patch/config", Severity::Warning, NASTY.into(), None, vec![Provenance::new("img", None, NASTY)]);
        config.config_change = Some(ConfigChange { setting: format!("Env {NASTY}"), upstream: None, pinned: Some(NASTY.into()) });
        let mut check = CheckResult {
            id: "golden-al".into(),
            title: NASTY.into(),
            status: Status::Fail,
            summary: NASTY.into(),
            findings: vec![finding, config],
            golden: Vec::new(),
        };
        check.golden = vec![GoldenPlot {
            table: golden_table(),
            points: vec![GoldenPoint {
                job: format!("job{NASTY}"),
                mode: "thinking_on".into(),
                draft_length: 2,
                simulated: 2.49,
                golden: Some(2.27),
                on_curve: false,
            }],
        }];
        let files = vec![FileEntry {
            bundle: "b".into(),
            artifact: None,
            job: None,
            record: FileRecord { path: NASTY.into(), size: None, sha256: None, status: FileStatus::Read },
        }];
        Report::new(
            NASTY.into(),
            vec![Input::Bundle { path: NASTY.into(), sha256: None }],
            vec![check],
            vec![job(&format!("job{NASTY}"), Some(8), &[8], JobKind::Throughput)],
            files,
            vec![NASTY.into()],
        )
    }

    #[test]
    fn every_string_from_the_input_is_escaped() {
        let html = render(&hostile());
        assert_eq!(html.matches("<script").count(), 1, "only the page's own script: {html}");
        assert!(!html.contains("<img") && !html.contains("<b>") && !html.contains("<i>") && !html.contains("<x>"), "{html}");
        assert!(!html.contains("\"'>"), "no attribute is closed by input");
        assert!(html.contains("&#60;script&#62;alert(1)&#60;/script&#62;") || html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        // Entities in the input are shown as written, not decoded.
        assert!(html.contains("&#38;amp;") || html.contains("&amp;amp;"), "{html}");
        for needle in ["message ", "keep ", "old ", "new ", "Env ", "thinking_on"] {
            assert!(html.contains(needle), "{needle} is rendered");
        }
    }

    #[test]
    fn a_unified_diff_becomes_rows_of_upstream_and_pinned() {
        let diff = "--- upstream/f.py\n+++ pinned/f.py\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n\\ No newline at end of file\n";
        let rows = side_by_side(diff);
        let shown: Vec<(Option<String>, Option<Numbered>, Option<Numbered>)> = rows.into_iter().map(|r| (r.hunk, r.left, r.right)).collect();
        let line = |n: u64, t: &str| Some((n, t.to_string()));
        assert_eq!(
            shown,
            [
                (Some("@@ -1,3 +1,4 @@".to_string()), None, None),
                (None, line(1, "a"), line(1, "a")),
                (None, line(2, "b"), line(2, "B")),
                (None, None, line(3, "B2")),
                (None, line(3, "c"), line(4, "c")),
            ]
        );
        // An added file: every line on the pinned side only.
        let added = side_by_side("--- /dev/null\n+++ pinned/x\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        assert!(added[1..].iter().all(|r| r.left.is_none() && r.right.is_some()) && added.len() == 3);
    }

    #[test]
    fn the_matrix_has_a_row_per_configuration_and_tp_and_a_cell_per_concurrency() {
        let jobs = vec![
            job("a", Some(4), &[1], JobKind::Throughput),
            job("b", Some(4), &[8], JobKind::Throughput),
            job("c", Some(4), &[8], JobKind::EvalOnly),
            job("d", Some(8), &[8], JobKind::Throughput),
            job("e", None, &[], JobKind::Throughput),
        ];
        let bad = Finding::new("forbidden-env/enabled", Severity::Error, "x".into(), Some("c"), vec![Provenance::new("f", Some(1), "X=1")]);
        let warn = Finding::new("forbidden-env/invalid-value", Severity::Warning, "x".into(), Some("d"), vec![Provenance::new("f", Some(2), "X=?")]);
        let check = CheckResult {
            id: "forbidden-env".into(),
            title: "t".into(),
            status: Status::Fail,
            summary: "s".into(),
            findings: vec![bad, warn],
            golden: Vec::new(),
        };
        let report = Report::new("p".into(), Vec::new(), vec![check], jobs, Vec::new(), Vec::new());
        let m = matrix(&report, &job_marks(&report)).unwrap();
        assert_eq!(m.columns, ["1", "8", "–"]);
        let rows: Vec<(&str, Vec<&str>, Vec<usize>)> =
            m.rows.iter().map(|r| (r.tp.as_str(), r.cells.iter().map(|c| c.class).collect(), r.cells.iter().map(|c| c.jobs.len()).collect())).collect();
        assert_eq!(
            rows,
            [("4", vec!["pass", "fail", ""], vec![1, 2, 0]), ("8", vec!["", "warning", ""], vec![0, 1, 0]), ("–", vec!["", "", "pass"], vec![0, 0, 1])]
        );
        assert!(m.rows.iter().all(|r| r.config == "dsv4 · fp4"));
        let cell = &m.rows[0].cells[1];
        let c = report.jobs.iter().position(|j| j.job.id == "c").unwrap();
        assert!(cell.jobs.iter().any(|j| j.anchor == format!("job-{c}") && j.class == "fail" && j.label == "E"), "the failing eval job links to its section");
    }

    #[test]
    fn a_point_off_its_curve_is_red_with_both_values() {
        let point = |job: &str, k, sim, golden: Option<f64>, on| GoldenPoint {
            job: job.into(),
            mode: "thinking_on".into(),
            draft_length: k,
            simulated: sim,
            golden,
            on_curve: on,
        };
        let plot = GoldenPlot { table: golden_table(), points: vec![point("ok", 3, 2.49, Some(2.49), true), point("bad", 2, 2.49, Some(2.27), false)] };
        let anchors = BTreeMap::from([("bad", "job-1".to_string())]);
        let c = chart(0, &plot, &anchors);
        assert_eq!(c.curves.iter().map(|c| c.mode.as_str()).collect::<Vec<_>>(), ["thinking_off", "thinking_on"]);
        assert_eq!(c.curves[1].cells.len(), 3);
        let off: Vec<&Dot> = c.dots.iter().filter(|d| d.off).collect();
        assert_eq!(off.len(), 1);
        assert_eq!(off[0].label, "simulated AL 2.49, golden AL 2.27");
        assert!(off[0].title.contains("job bad") && off[0].title.contains("K=2"));
        assert_eq!(off[0].anchor.as_deref(), Some("job-1"));
        // The off point sits above its golden value (SVG y grows downwards), joined to it.
        let (_, gy) = off[0].to_golden.clone().unwrap();
        assert!(off[0].y.parse::<f64>().unwrap() < gy.parse::<f64>().unwrap());
        let on = c.dots.iter().find(|d| !d.off).unwrap();
        assert!(on.to_golden.is_none() && on.title.contains("job ok"));
        // Ticks cover the range in round steps.
        let rounded = |lo, hi| ticks(lo, hi).into_iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<f64>>();
        assert_eq!(rounded(1.7, 2.7), [1.8, 2.0, 2.2, 2.4, 2.6]);
        assert_eq!(rounded(2.0, 4.5), [2.0, 2.5, 3.0, 3.5, 4.0, 4.5]);
    }
}
