//! The layout `gh run download RUN_ID` writes: one folder per artifact, named
//! by the benchmark templates (`server_logs_<RF>`, `eval_server_logs_<RF>`,
//! `agentic_<RF>`, `bmk_agentic_<RF>`, `eval_<EXP_NAME>_<RF>`, ...). This
//! module names artifacts, groups them into jobs by their RESULT_FILENAME
//! (RF), tells eval-only jobs from throughput jobs, and reads the job's
//! topology from the RF name grammar.

use regex::Regex;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

pub use crate::evidence::metadata::{JobMeta, Scenario};

/// What an artifact holds, from its name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactRole {
    ServerLogs,
    EvalServerLogs,
    MultinodeServerLogs,
    Agentic,
    BmkAgentic,
    Bmk,
    PowerAudit,
    GpuMetrics,
    EvalGpuMetrics,
    /// `eval_<EXP_NAME>_<RF>` (single-node) or `eval_<RF>` (multi-node).
    Eval,
    /// Run-level artifacts (`results_bmk`, `run-stats`, ...).
    Run,
}

/// Per-job artifact prefixes, longest first so that `eval_server_logs_`
/// wins over `eval_` and `bmk_agentic_` over `bmk_`.
const PREFIXES: [(&str, ArtifactRole); 10] = [
    ("multinode_server_logs_", ArtifactRole::MultinodeServerLogs),
    ("eval_server_logs_", ArtifactRole::EvalServerLogs),
    ("eval_gpu_metrics_", ArtifactRole::EvalGpuMetrics),
    ("bmk_agentic_", ArtifactRole::BmkAgentic),
    ("power_audit_", ArtifactRole::PowerAudit),
    ("server_logs_", ArtifactRole::ServerLogs),
    ("gpu_metrics_", ArtifactRole::GpuMetrics),
    ("agentic_", ArtifactRole::Agentic),
    ("bmk_", ArtifactRole::Bmk),
    ("eval_", ArtifactRole::Eval),
];

const RUN_LEVEL: [&str; 4] = ["results_bmk", "eval_results_all", "changelog-metadata", "run-stats"];

/// A recognised artifact folder name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactName {
    pub role: ArtifactRole,
    /// The name after the prefix: the RF, or `<EXP_NAME>_<RF>` for eval payloads.
    pub key: String,
}

/// Parse an artifact folder name.
pub fn parse_artifact(name: &str) -> Option<ArtifactName> {
    if RUN_LEVEL.contains(&name) || name.starts_with("speedbench-reference-al-") {
        return Some(ArtifactName { role: ArtifactRole::Run, key: name.to_string() });
    }
    PREFIXES.iter().find_map(|(prefix, role)| {
        let key = name.strip_prefix(prefix)?;
        (!key.is_empty()).then(|| ArtifactName { role: *role, key: key.to_string() })
    })
}

/// The artifact folder a bundle path lies in: the first directory component
/// that is a recognised artifact name (wrapper folders of archives are skipped).
pub fn artifact_of(path: &str) -> Option<&str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.into_iter().find(|part| parse_artifact(part).is_some())
}

/// Whether a job measured throughput or only ran evals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobKind {
    Throughput,
    EvalOnly,
    /// Neither the artifact names nor the content say.
    Unknown,
    /// Not a job: run-level files outside any job artifact of a `gh run
    /// download` layout, or files of a repository that no job runs.
    RunLevel,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Throughput => "throughput",
            JobKind::EvalOnly => "eval-only",
            JobKind::Unknown => "unknown",
            JobKind::RunLevel => "run-level",
        }
    }
}

static SINGLE_RF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?P<exp>.+?)_(?P<prec>[a-z0-9]+)_(?P<fw>[a-z0-9-]+)_",
        r"tp(?P<tp>\d+)-pp\d+-dcp\d+-pcp\d+-ep(?P<ep>\d+)-dpa(?:true|false)_disagg-(?:true|false)_",
        r"spec-(?P<spec>[a-z0-9_]+)_conc(?P<conc>\d+)_(?P<runner>.+?)(?:_recipe-(?P<recipe>[0-9a-f]{16}))?$"
    ))
    .expect("valid regex")
});

static MULTI_RF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?P<exp>.+?)_(?P<prec>[a-z0-9]+)_(?P<fw>[a-z0-9-]+)_",
        r"prefill-tp\d+-pp\d+-dcp\d+-pcp\d+-ep\d+-dp(?:true|false)-nw\d+_",
        r"decode-tp(?P<tp>\d+)-pp\d+-dcp\d+-pcp\d+-ep(?P<ep>\d+)-dp(?:true|false)-nw\d+_disagg-(?:true|false)_",
        r"spec-(?P<spec>[a-z0-9_]+)_conc(?P<conc>\d+(?:x\d+)*)_(?P<runner>.+?)(?:_recipe-(?P<recipe>[0-9a-f]{16}))?$"
    ))
    .expect("valid regex")
});

static AGENTIC_EXP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<prefix>.+?)_(?:tp\d+_conc\d+|p\d+x\d+\S*_d\d+x\d+\S*_conc[0-9x]+)_kv(?:none|dram)").expect("valid regex"));

static FIXED_EXP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?P<prefix>.+)_(?:\d+k\d+k)$").expect("valid regex"));

/// Read what the RESULT_FILENAME grammar says about a job.
pub fn parse_result_filename(rf: &str) -> (JobMeta, Option<Scenario>) {
    let (caps, multinode) = match (SINGLE_RF.captures(rf), MULTI_RF.captures(rf)) {
        (Some(c), _) => (c, false),
        (None, Some(c)) => (c, true),
        (None, None) => return (JobMeta::default(), None),
    };
    let text = |name: &str| caps.name(name).map(|m| m.as_str().to_string());
    let number = |name: &str| caps.name(name).and_then(|m| m.as_str().parse().ok());
    let exp = text("exp").unwrap_or_default();
    let (model_prefix, scenario) = match (AGENTIC_EXP.captures(&exp), FIXED_EXP.captures(&exp)) {
        (Some(c), _) => (Some(c["prefix"].to_string()), Some(Scenario::AgenticCoding)),
        (None, Some(c)) => (Some(c["prefix"].to_string()), Some(Scenario::FixedSeqLen)),
        _ => (None, None),
    };
    let conc = text("conc").unwrap_or_default().split('x').filter_map(|c| c.parse().ok()).collect();
    let meta = JobMeta {
        exp_name: Some(exp),
        model_prefix,
        precision: text("prec"),
        framework: text("fw"),
        tp: number("tp"),
        ep: number("ep"),
        conc,
        spec_decoding: text("spec"),
        runner: text("runner"),
        recipe_fingerprint: text("recipe"),
        multinode: Some(multinode),
        ..JobMeta::default()
    };
    (meta, scenario)
}

/// A benchmark job and the artifacts that belong to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Job {
    /// The RESULT_FILENAME, or `bundle` for files outside any job artifact.
    pub id: String,
    pub kind: JobKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// A throughput job that also ran an eval pass on the same server.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub runs_eval: bool,
    /// How the kind was decided.
    pub kind_reason: String,
    /// The srt-slurm worker role of a recipe job (`prefill`, `decode`, `aggregated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Read from benchmark sources before any run (a repository checkout):
    /// no logs or results exist yet.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_sources: bool,
    pub meta: JobMeta,
    pub artifacts: Vec<String>,
}

impl Job {
    /// A prefill role does not generate tokens: the generation role decides
    /// the golden target, and what prefill sets is informational (domain
    /// brief §8.3, §14).
    pub fn informational(&self) -> bool {
        self.role.as_deref() == Some("prefill")
    }
}

/// What the content of a job's files says, gathered by the evidence parsers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentHints {
    pub meta: JobMeta,
    pub scenario: Option<Scenario>,
    /// `EVAL_ONLY=true` / `false` seen in the job's environment.
    pub eval_only: Option<bool>,
    /// An eval payload (`meta_env.json`) was found.
    pub eval_payload: bool,
}

/// Group artifact folders into jobs. `artifacts` are the artifact folder
/// names seen; the result maps each artifact to its job id.
pub fn group(artifacts: &BTreeSet<String>) -> (Vec<Job>, BTreeMap<String, String>) {
    let parsed: Vec<(String, ArtifactName)> =
        artifacts.iter().filter_map(|a| parse_artifact(a).map(|p| (a.clone(), p))).filter(|(_, p)| p.role != ArtifactRole::Run).collect();
    let known_rfs: BTreeSet<String> = parsed.iter().filter(|(_, p)| p.role != ArtifactRole::Eval).map(|(_, p)| p.key.clone()).collect();

    // RF -> roles present, with artifact names.
    let mut by_rf: BTreeMap<String, Vec<(ArtifactRole, String)>> = BTreeMap::new();
    for (name, artifact) in &parsed {
        let rf = match artifact.role {
            ArtifactRole::Eval => eval_rf(&artifact.key, &known_rfs),
            _ => artifact.key.clone(),
        };
        by_rf.entry(rf).or_default().push((artifact.role, name.clone()));
    }

    let mut jobs = Vec::new();
    let mut assignment = BTreeMap::new();
    for (rf, roles) in by_rf {
        let has = |role: ArtifactRole| roles.iter().any(|(r, _)| *r == role);
        let eval_side = has(ArtifactRole::EvalServerLogs) || has(ArtifactRole::EvalGpuMetrics);
        let bench_side = has(ArtifactRole::ServerLogs)
            || has(ArtifactRole::Bmk)
            || has(ArtifactRole::BmkAgentic)
            || has(ArtifactRole::PowerAudit)
            || has(ArtifactRole::GpuMetrics);
        let (meta, scenario) = parse_result_filename(&rf);
        let make = |id: String, kind, reason: &str| Job {
            id,
            kind,
            scenario,
            runs_eval: false,
            kind_reason: reason.to_string(),
            role: None,
            from_sources: false,
            meta: meta.clone(),
            artifacts: Vec::new(),
        };
        let mut bench = bench_side.then(|| make(rf.clone(), JobKind::Throughput, "throughput artifacts (server_logs_/bmk_/gpu_metrics_)"));
        let mut eval = eval_side.then(|| {
            let id = if bench_side { format!("{rf} (eval-only)") } else { rf.clone() };
            make(id, JobKind::EvalOnly, "eval-only artifacts (eval_server_logs_/eval_gpu_metrics_)")
        });
        if bench.is_none() && eval.is_none() {
            let (kind, reason) = if has(ArtifactRole::Eval) {
                (JobKind::EvalOnly, "eval payload and no throughput artifacts")
            } else {
                (JobKind::Unknown, "artifact names do not say")
            };
            bench = Some(make(rf.clone(), kind, reason));
        }
        for (role, name) in roles {
            let eval_role = matches!(role, ArtifactRole::EvalServerLogs | ArtifactRole::EvalGpuMetrics | ArtifactRole::Eval);
            let to_eval = (eval_role && eval.is_some()) || bench.is_none();
            let Some(target) = (if to_eval { eval.as_mut() } else { bench.as_mut() }) else { continue };
            if role == ArtifactRole::Eval && !to_eval && target.kind == JobKind::Throughput {
                target.runs_eval = true;
            }
            target.artifacts.push(name.clone());
            assignment.insert(name, target.id.clone());
        }
        jobs.extend(bench);
        jobs.extend(eval);
    }
    for job in &mut jobs {
        job.artifacts.sort();
    }
    jobs.sort_by(|a, b| a.id.cmp(&b.id));
    (jobs, assignment)
}

/// The RF of an `eval_` artifact key: `<EXP_NAME>_<RF>` single-node, `<RF>` multi-node.
fn eval_rf(key: &str, known: &BTreeSet<String>) -> String {
    if known.contains(key) {
        return key.to_string();
    }
    if let Some(rf) = known.iter().filter(|rf| key.ends_with(&format!("_{rf}"))).max_by_key(|rf| rf.len()) {
        return rf.clone();
    }
    // The RF begins with the EXP_NAME: find the split where the tail repeats the head.
    for (i, _) in key.match_indices('_') {
        let (exp, rest) = (&key[..i], &key[i + 1..]);
        if rest.starts_with(exp) && rest[exp.len()..].starts_with('_') {
            return rest.to_string();
        }
    }
    key.to_string()
}

/// The pseudo-job for files outside any job artifact: run-level files of a
/// `gh run download` layout, or, when no job artifact is recognised at all,
/// the one job of unknown kind that the bundle holds (decided by content).
pub fn unassigned_job(id: &str, layout_recognised: bool) -> Job {
    let (kind, reason) = match layout_recognised {
        true => (JobKind::RunLevel, "run-level files outside any job artifact"),
        false => (JobKind::Unknown, "not a gh run download layout: one job of unknown kind"),
    };
    Job {
        id: id.to_string(),
        kind,
        scenario: None,
        runs_eval: false,
        kind_reason: reason.to_string(),
        role: None,
        from_sources: false,
        meta: JobMeta::default(),
        artifacts: Vec::new(),
    }
}

/// Apply what the files' content says to a job: metadata fills gaps in the
/// name grammar, and content decides a kind the names left open or contradicts.
pub fn apply_hints(job: &mut Job, hints: &ContentHints) {
    job.meta.fill_from(&hints.meta);
    if job.scenario.is_none() {
        job.scenario = hints.scenario;
    }
    match (job.kind, hints.eval_only) {
        (JobKind::Unknown, Some(true)) => {
            job.kind = JobKind::EvalOnly;
            job.kind_reason = "EVAL_ONLY=true in the job's environment".to_string();
        }
        (JobKind::Unknown, Some(false)) => {
            job.kind = JobKind::Throughput;
            job.kind_reason = "EVAL_ONLY=false in the job's environment".to_string();
        }
        (JobKind::Unknown, None) if hints.eval_payload => {
            job.kind = JobKind::EvalOnly;
            job.kind_reason = "eval payload (meta_env.json) and no throughput artifacts".to_string();
        }
        (JobKind::Throughput, Some(true)) => {
            job.kind = JobKind::EvalOnly;
            job.kind_reason = "EVAL_ONLY=true in the job's environment, although its artifacts look like throughput".to_string();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RF: &str = "dsv41flash_tp4_conc16_kvnone_spec-mtp_fp4_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc16_h200-dgxc_2";

    #[test]
    fn single_node_result_filename() {
        let (meta, scenario) = parse_result_filename(&format!("{RF}_recipe-0123456789abcdef"));
        assert_eq!(scenario, Some(Scenario::AgenticCoding));
        assert_eq!(meta.model_prefix.as_deref(), Some("dsv41flash"));
        assert_eq!(meta.exp_name.as_deref(), Some("dsv41flash_tp4_conc16_kvnone_spec-mtp"));
        assert_eq!((meta.tp, meta.ep, meta.conc.as_slice()), (Some(4), Some(1), &[16][..]));
        assert_eq!(meta.runner.as_deref(), Some("h200-dgxc_2"));
        assert_eq!(meta.recipe_fingerprint.as_deref(), Some("0123456789abcdef"));
        assert_eq!((meta.precision.as_deref(), meta.framework.as_deref()), (Some("fp4"), Some("sglang")));
    }

    #[test]
    fn multi_node_and_fixed_seq_result_filenames() {
        let rf = "dsv4_8k1k_fp4_dynamo-sglang_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw2_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc64x128_gb200-nv_0";
        let (meta, scenario) = parse_result_filename(rf);
        assert_eq!(scenario, Some(Scenario::FixedSeqLen));
        assert_eq!(meta.model_prefix.as_deref(), Some("dsv4"));
        assert_eq!((meta.tp, meta.ep, meta.conc.as_slice()), (Some(8), Some(8), &[64, 128][..]));
        assert_eq!(meta.multinode, Some(true));
        assert_eq!(parse_result_filename("random_name").0, JobMeta::default());
    }

    #[test]
    fn artifact_names() {
        let cases = [
            ("eval_server_logs_X", ArtifactRole::EvalServerLogs),
            ("eval_results_all", ArtifactRole::Run),
            ("bmk_agentic_X", ArtifactRole::BmkAgentic),
            ("bmk_X", ArtifactRole::Bmk),
            ("eval_E_X", ArtifactRole::Eval),
            ("multinode_server_logs_X", ArtifactRole::MultinodeServerLogs),
        ];
        for (name, role) in cases {
            assert_eq!(parse_artifact(name).map(|a| a.role), Some(role), "{name}");
        }
        assert_eq!(parse_artifact("logs"), None);
        assert_eq!(artifact_of("wrap/agentic_X/results/server.log"), Some("agentic_X"));
        assert_eq!(artifact_of("agentic_X"), None);
    }

    fn names(list: &[String]) -> BTreeSet<String> {
        list.iter().cloned().collect()
    }

    #[test]
    fn groups_throughput_and_eval_only_jobs() {
        let eval_rf = RF.replace("dgxc_2", "dgxc_7");
        let exp = "dsv41flash_tp4_conc16_kvnone_spec-mtp";
        let artifacts = names(&[
            format!("agentic_{RF}"),
            format!("bmk_agentic_{RF}"),
            format!("server_logs_{RF}"),
            format!("eval_server_logs_{eval_rf}"),
            format!("eval_{exp}_{eval_rf}"),
            format!("agentic_{eval_rf}"),
            "results_bmk".to_string(),
        ]);
        let (jobs, assignment) = group(&artifacts);
        assert_eq!(jobs.len(), 2);
        let eval = jobs.iter().find(|j| j.id == eval_rf).unwrap();
        assert_eq!(eval.kind, JobKind::EvalOnly);
        assert_eq!(eval.artifacts.len(), 3);
        let bench = jobs.iter().find(|j| j.id == RF).unwrap();
        assert_eq!((bench.kind, bench.runs_eval), (JobKind::Throughput, false));
        assert_eq!(assignment.get(&format!("eval_{exp}_{eval_rf}")), Some(&eval_rf));
        assert!(!assignment.contains_key("results_bmk"));
    }

    #[test]
    fn same_rf_for_both_kinds_makes_two_jobs() {
        let artifacts = names(&[format!("server_logs_{RF}"), format!("eval_server_logs_{RF}"), format!("agentic_{RF}"), format!("eval_x_{RF}")]);
        let (jobs, assignment) = group(&artifacts);
        assert_eq!(jobs.len(), 2);
        assert_eq!(assignment[&format!("eval_x_{RF}")], format!("{RF} (eval-only)"));
        assert_eq!(assignment[&format!("agentic_{RF}")], RF);
    }

    #[test]
    fn in_job_eval_and_multinode_eval_only() {
        let (jobs, _) = group(&names(&[format!("bmk_{RF}"), format!("eval_e_{RF}")]));
        assert_eq!((jobs.len(), jobs[0].kind, jobs[0].runs_eval), (1, JobKind::Throughput, true));
        let (jobs, _) = group(&names(&[format!("multinode_server_logs_{RF}"), format!("eval_{RF}")]));
        assert_eq!(jobs[0].kind, JobKind::EvalOnly);
        let (mut jobs, _) = group(&names(&[format!("agentic_{RF}")]));
        assert_eq!(jobs[0].kind, JobKind::Unknown);
        apply_hints(&mut jobs[0], &ContentHints { eval_only: Some(true), ..Default::default() });
        assert_eq!(jobs[0].kind, JobKind::EvalOnly);
    }
}
