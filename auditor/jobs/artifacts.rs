//! Jobs of a `gh run download` layout: artifact folders grouped by their
//! RESULT_FILENAME (RF), eval-only jobs told from throughput jobs, and the
//! job's topology read from the RF name grammar.

use super::{Job, JobKind, JobMeta, Scenario};
use crate::bundle::layout::{ArtifactName, ArtifactRole, parse_artifact};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

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
        let (jobs, _) = group(&names(&[format!("agentic_{RF}")]));
        assert_eq!(jobs[0].kind, JobKind::Unknown);
    }
}
