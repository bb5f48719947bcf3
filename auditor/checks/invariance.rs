//! Verdict invariance: checks decide on typed facts, never on text written
//! for people. Every sample bundle and recipe tree (and a few built trees
//! that reach the engine-specific paths) is audited twice, once as read and
//! once with every description, note and message of the evidence rewritten
//! before the checks run; rule ids, severities, statuses and evidence
//! places must not move. A check that starts deciding on `from`, a note or
//! a message again fails here.

use super::AuditedJob;
use crate::audit::{Options, audit_prepared};
use crate::bundle::Limits;
use crate::jobs::Unexamined;
use crate::policy::Policy;
use crate::reference::References;
use std::path::{Path, PathBuf};

/// Text no check may match on: reversed, so that every substring and prefix
/// test fails, and marked.
fn reword(text: &str) -> String {
    format!("«{}»", text.chars().rev().collect::<String>())
}

/// Rewrite every piece of prose a check could see in a job.
fn reword_job(job: &mut AuditedJob) {
    let facts = &mut job.facts;
    for fact in facts.summary.facts_mut().chain(facts.speculative.facts_mut()).chain(facts.thinking.iter_mut()) {
        fact.from = reword(&fact.from);
        fact.branch = fact.branch.as_deref().map(reword);
    }
    facts.notes.iter_mut().for_each(|n| *n = reword(n));
    for source in &mut facts.server_args_sources {
        source.kind = reword(&source.kind);
        source.stop = source.stop.as_deref().map(reword);
    }
    for file in &mut job.files {
        file.notes.iter_mut().for_each(|n| n.message = reword(&n.message));
        file.signatures.iter_mut().for_each(|f| f.message = reword(&f.message));
        file.env_dumps.iter_mut().for_each(|d| d.header = reword(&d.header));
    }
    job.unexamined.iter_mut().filter_map(Unexamined::prose_mut).for_each(|u| *u = reword(u));
}

/// What a verdict is made of: per check its status, and per finding its
/// rule, severity, jobs and evidence places (file, artifact, line).
type Place = (Option<String>, String, Option<String>, Option<u64>);
type Verdict = Vec<(String, String, Vec<(String, String, Option<String>, Vec<String>, Vec<Place>)>)>;

fn verdict(paths: &[PathBuf], prepare: &dyn Fn(&mut AuditedJob)) -> Verdict {
    let mut inputs = References::default();
    inputs.golden.add_dir(&root().join("samples/golden")).unwrap();
    let report = audit_prepared(paths, &Policy::embedded(), &Limits::default(), &inputs, &Options::default(), prepare).unwrap();
    report
        .checks
        .iter()
        .map(|c| {
            let findings = c
                .findings
                .iter()
                .map(|f| {
                    let places = f.evidence.iter().map(|e| (e.layer.clone(), e.file.clone(), e.artifact.clone(), e.line)).collect();
                    (f.rule.clone(), f.severity.as_str().to_string(), f.job.clone(), f.jobs.clone(), places)
                })
                .collect();
            (c.id.clone(), c.status.as_str().to_string(), findings)
        })
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const EVAL_RF: &str = "dsv4_tp8_conc16_kvnone_spec-mtp_fp4_sglang_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_3";
const TRT_RF: &str = "minimaxm3_tp8_conc16_kvnone_spec-mtp_fp4_trt_tp8-pp1-dcp1-pcp1-ep8-dpafalse_disagg-false_spec-mtp_conc16_b200-dgxc_0";
const AGENTIC: &str = "benchmarks/single_node/agentic";

/// Trees that reach what the samples do not: the runner's inputs on an
/// eval-only job, TRT-LLM forced tokens, vLLM acceptance rates, ATOM's
/// forced length and rate.
fn built_trees(dir: &Path) -> Vec<PathBuf> {
    let trees: [(&str, Vec<(String, &str)>); 2] = [
        (
            "gh",
            vec![
                (
                    format!("eval_server_logs_{EVAL_RF}/results/server.log"),
                    "=== SGLANG_* env vars at launch ===\nSGLANG_DEFAULT_THINKING=1\n===\n[2026-10-14 03:12:55] server_args={'model_path': '/data/models/DeepSeek-V4', 'tp_size': 8, 'speculative_algorithm': 'EAGLE', 'speculative_num_steps': 3}\n",
                ),
                (format!("eval_server_logs_{EVAL_RF}/results/launch.sh"), "export SYNTHETIC_ACCEPTANCE=true SYNTHETIC_ACCEPTANCE_LENGTH=2.49\n"),
                (
                    format!("agentic_{TRT_RF}/results/launch.sh"),
                    "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=2.78\ntrtllm-serve /data/models/MiniMax-M3 --tp_size 8 --extra_llm_api_options ser.yaml\n",
                ),
                (
                    format!("agentic_{TRT_RF}/results/ser.yaml"),
                    "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n  speculative_model: /data/models/MiniMax-M3-EAGLE3-GQA\n",
                ),
            ],
        ),
        (
            "repo",
            vec![
                (
                    format!("{AGENTIC}/glm5.2_fp4_mi355x_atom_mtp.sh"),
                    "python -m atom.entrypoints.openai_server --model /data/models/GLM-5.2 --method mtp --num-speculative-tokens 3 --spec-decode-acceptance-length 2.99\n",
                ),
                (
                    format!("{AGENTIC}/glm5.2_fp8_mi355x_atom_mtp.sh"),
                    "python -m atom.entrypoints.openai_server --model /data/models/GLM-5.2 --method mtp --num-speculative-tokens 3 --spec-decode-acceptance-rate 0.66\n",
                ),
                (
                    format!("{AGENTIC}/glm5.2_fp4_b300_vllm_mtp.sh"),
                    "vllm serve /data/models/GLM-5.2 --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_rates\": [1.0, 0.49, 0.0]}'\n",
                ),
            ],
        ),
    ];
    trees
        .into_iter()
        .map(|(name, files)| {
            let tree = dir.join(name);
            for (path, text) in files {
                let path = tree.join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            tree
        })
        .collect()
}

#[test]
fn verdicts_do_not_depend_on_prose() {
    let built = tempfile::tempdir().unwrap();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(root().join("samples/bundles")).unwrap().map(|e| e.unwrap().path()).collect();
    inputs.sort();
    inputs.extend(["samples/recipes-pass", "samples/recipes-fail"].map(|d| root().join(d)));
    inputs.extend(built_trees(built.path()));
    let mut rules = std::collections::BTreeSet::new();
    for input in &inputs {
        let paths = [input.clone()];
        let plain = verdict(&paths, &|_| {});
        let reworded = verdict(&paths, &reword_job);
        assert_eq!(plain, reworded, "{}: a check decided on prose", input.display());
        rules.extend(plain.iter().flat_map(|(_, _, f)| f.iter().map(|f| f.0.clone())));
    }
    // The paths that used to read prose are exercised.
    for rule in ["sim-acc-eval/runner-setting", "sim-acc-throughput/simulated", "golden-al/mismatch", "golden-al/match"] {
        assert!(rules.contains(rule), "{rule} not reached: {rules:?}");
    }
}
