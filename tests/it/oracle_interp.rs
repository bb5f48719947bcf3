//! Bash is the oracle of the interpreter (issue 35, item 5): every sampled
//! job of the real snapshot, run by real bash in the sandbox of
//! [`crate::oracle`] with stubs for every program, against the interpreter
//! on the same script, inputs and tree. Where the two stub variants agree
//! on a launch's argument or variable the interpreter must give that value;
//! where they differ it must say undetermined ([`crate::oracle::compare`]).

use crate::oracle::{InterpLaunch, OracleJob, StubVariant, compare, is_engine, par_map, run_bash, sample_jobs};
use auditor::evidence::shell::interp::{self, Files, Inputs, Limits};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The tree as the job's container sees it: mounted at the job's workdir.
struct Mounted {
    root: PathBuf,
    at: String,
}

impl Files for Mounted {
    fn read(&self, path: &str) -> Option<String> {
        let rel = path.strip_prefix(&self.at)?.trim_start_matches('/');
        let full = self.root.join(rel);
        full.starts_with(&self.root).then(|| std::fs::read_to_string(full).ok()).flatten()
    }
}

/// The interpreter's launches for a job: each engine start, argv and environment.
fn interpreted(tree: &Path, job: &OracleJob) -> Vec<InterpLaunch> {
    let text = std::fs::read_to_string(tree.join(&job.script)).expect("the script");
    let inputs = Inputs {
        // As the runner names it: `bash benchmarks/...` from the workdir.
        script: job.script.clone(),
        args: Vec::new(),
        env: job.env.clone(),
        open: false,
        cwd: job.workdir.clone(),
    };
    let files = Mounted { root: tree.to_path_buf(), at: job.workdir.trim_end_matches('/').to_string() };
    let e = interp::evaluate(&text, &inputs, &files, Limits::default());
    // One launch per statement: paths that differ only where a program's
    // output or status decides are one launch, with what they disagree on undetermined.
    let mut by_statement: Vec<(interp::value::Place, InterpLaunch)> = Vec::new();
    for x in e.execs.iter().filter(|x| is_engine(&x.argv.iter().map(|a| a.display()).collect::<Vec<_>>())) {
        let launch = InterpLaunch {
            argv: x.argv.iter().map(|a| a.known()).collect(),
            env: x.env.iter().map(|(k, v)| (k.clone(), v.known())).collect::<BTreeMap<_, _>>(),
            assumed: !x.ctx.marks.is_empty(),
        };
        match by_statement.iter_mut().find(|(at, _)| *at == x.ctx.at) {
            Some((_, merged)) => {
                merged.assumed &= launch.assumed;
                let n = merged.argv.len().max(launch.argv.len());
                merged.argv = (0..n)
                    .map(|i| match (merged.argv.get(i), launch.argv.get(i)) {
                        (Some(a), Some(b)) if a == b => a.clone(),
                        _ => None,
                    })
                    .collect();
                let keys: std::collections::BTreeSet<String> = merged.env.keys().chain(launch.env.keys()).cloned().collect();
                merged.env = keys
                    .into_iter()
                    .map(|k| {
                        let v = match (merged.env.get(&k), launch.env.get(&k)) {
                            (Some(a), Some(b)) if a == b => a.clone(),
                            _ => None,
                        };
                        (k, v)
                    })
                    .collect();
            }
            None => by_statement.push((x.ctx.at, launch)),
        }
    }
    by_statement.into_iter().map(|(_, l)| l).collect()
}

/// How many of `jobs` the interpreter agrees with bash on, every launch,
/// and what the others disagree on, by script (two jobs at a time).
fn agreement(tree: &Path, jobs: &[OracleJob]) -> (usize, BTreeMap<String, Vec<String>>) {
    let verdicts = par_map(jobs, |job| {
        let bash = [run_bash(tree, job, StubVariant::Quiet), run_bash(tree, job, StubVariant::Chatty)];
        compare(&bash, &interpreted(tree, job))
    });
    let mut agree = 0;
    let mut mismatches: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (job, wrong) in jobs.iter().zip(verdicts) {
        match wrong.first() {
            None => agree += 1,
            Some(first) => mismatches.entry(job.script.clone()).or_default().push(format!("{}: {first}", job.label)),
        }
    }
    let share = agree as f64 / jobs.len().max(1) as f64;
    println!("the interpreter agrees with bash on {agree} of {} jobs ({:.1} %)", jobs.len(), share * 100.0);
    for (script, lines) in &mismatches {
        println!("  {script}: {} job(s), e.g. {}", lines.len(), lines[0]);
    }
    (agree, mismatches)
}

/// The adversarial corpus (tests/it/adversarial.rs): every breach and its
/// honest twin, each the one job of a tree of its own, run by bash and by
/// the interpreter. Each must agree, and bash must launch the engine in
/// each (or a breach would test nothing).
#[test]
fn the_interpreter_agrees_with_bash_on_the_adversarial_corpus() {
    use crate::adversarial::{FORMS, INTERPRETED_FORMS, SCRIPT, disabled, honest_form, script};
    let mut edits: Vec<(String, String)> = Vec::new();
    for (what, edit, _) in FORMS {
        edits.push((what.to_string(), edit.to_string()));
        edits.push((format!("{what} (honest twin)"), honest_form(edit)));
    }
    // Bash expands an alias as it reads a line: not on the line that defines it.
    edits.push(("an alias used on its own line".into(), "shopt -s expand_aliases\nalias ex=export; ex SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1".into()));
    // The oracle runs no Python: a launch Python makes (runpy) is the interpreter's to see alone.
    for (what, edit, _) in INTERPRETED_FORMS.iter().filter(|(_, edit, _)| !edit.contains("runpy")) {
        edits.push((what.to_string(), edit.to_string()));
        edits.push((format!("{what} (honest twin)"), disabled(edit)));
    }
    let verdicts = par_map(&edits, |(what, edit)| {
        let tree = tempfile::tempdir().unwrap();
        crate::common::write_tree(tree.path(), &[("benchmarks/benchmark_lib.sh", "run_eval() { :; }\n"), (SCRIPT, &script(edit))]);
        let env = [("PATH", crate::oracle::CONTAINER_PATH), ("EVAL_ONLY", "false")];
        let job = OracleJob {
            script: SCRIPT.into(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            label: what.clone(),
            workdir: "/workspace".into(),
        };
        let bash = [run_bash(tree.path(), &job, StubVariant::Quiet), run_bash(tree.path(), &job, StubVariant::Chatty)];
        // BASH_ENV is the harness's in bash's runs, so its records leave it out (crate::oracle).
        let mut launches = interpreted(tree.path(), &job);
        launches.iter_mut().for_each(|l| drop(l.env.remove("BASH_ENV")));
        let mut wrong = compare(&bash, &launches);
        if bash[0].launches.is_empty() {
            wrong.push(format!("bash launches no engine under Quiet: {}", bash[0].stderr_tail));
        }
        wrong.into_iter().map(|w| format!("{what}: {w}")).collect::<Vec<_>>()
    });
    let wrong: Vec<String> = verdicts.into_iter().flatten().collect();
    assert!(wrong.is_empty(), "{} form(s): {wrong:#?}", edits.len());
}

/// The share of sampled jobs where the interpreter agrees with bash on every
/// launch, and what the others disagree on: a quick subset of
/// [`the_interpreter_agrees_with_bash_on_every_job`] to run by hand.
#[test]
#[ignore = "a quick subset of the_interpreter_agrees_with_bash_on_every_job, which runs every job"]
fn the_interpreter_agrees_with_bash_on_sampled_jobs() {
    let unpacked = crate::common::unpack_shared("tree-843c6254.tar.gz");
    let tree = unpacked.path().join("InferenceX");
    let jobs = sample_jobs(&tree);
    assert!(!jobs.is_empty());
    let (agree, _) = agreement(&tree, &jobs);
    let share = agree as f64 / jobs.len() as f64;
    assert!(share >= FLOOR, "agreement fell below {FLOOR}: {agree} of {}", jobs.len());
}

/// Every job of the snapshot (3,086; about half an hour in a debug build on
/// two cores, 13 minutes with `cargo test --release --test it
/// oracle_interp::the_interpreter_agrees_with_bash_on_every_job --
/// --nocapture`; `ORACLE_JOB=<label substring>` narrows it to the jobs it
/// names): the interpreter must agree with bash on each.
#[test]
fn the_interpreter_agrees_with_bash_on_every_job() {
    let unpacked = crate::common::unpack_shared("tree-843c6254.tar.gz");
    let tree = unpacked.path().join("InferenceX");
    // ORACLE_JOB=<label substring> narrows the run to the jobs it names (a tool for one script's jobs).
    let filter = std::env::var("ORACLE_JOB").unwrap_or_default();
    let jobs: Vec<OracleJob> = crate::oracle::snapshot_jobs(&tree).into_iter().filter(|j| j.label.contains(&filter)).collect();
    assert!(!jobs.is_empty());
    let (agree, _) = agreement(&tree, &jobs);
    let share = agree as f64 / jobs.len() as f64;
    assert!(share >= FLOOR, "agreement fell below {FLOOR}: {agree} of {}", jobs.len());
}

/// The agreement reached: every job (3,086 of 3,086 on the snapshot).
const FLOOR: f64 = 1.0;

/// A tool, not a check: `ORACLE_JOB=<label substring> cargo test --test it
/// oracle_interp::show_interpreted -- --ignored --nocapture` prints, for the
/// first sampled job of each matching script, its inputs, the
/// interpreter's launches and what the comparison with bash finds.
#[test]
#[ignore = "a tool: ORACLE_JOB=<substring of a job label> selects the jobs to show"]
fn show_interpreted() {
    let filter = std::env::var("ORACLE_JOB").unwrap_or_default();
    let unpacked = crate::common::unpack_shared("tree-843c6254.tar.gz");
    let tree = unpacked.path().join("InferenceX");
    let mut seen = std::collections::BTreeSet::new();
    for job in sample_jobs(&tree).iter().filter(|j| j.label.contains(&filter) && seen.insert(j.script.clone())) {
        println!("==== {} ({} in {})\n{:#?}", job.label, job.script, job.workdir, job.env);
        let mine = interpreted(&tree, job);
        println!("{mine:#?}");
        let bash = [run_bash(&tree, job, StubVariant::Quiet), run_bash(&tree, job, StubVariant::Chatty)];
        for wrong in compare(&bash, &mine) {
            println!("  {wrong}");
        }
    }
}

/// GNU sed is the oracle of the interpreter's `sed`: each script over each
/// input, through a pipe as the runners use it, gives what `sed` prints, or
/// the interpreter leaves it undetermined.
#[test]
fn sed_as_the_interpreter_evaluates_it_is_what_gnu_sed_prints() {
    let inputs = ["lmsysorg/sglang:v0.5.12-cu130@sha256:0a1b", "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc3", "a+b (c) {d} x*y ^z$ a|b", "aaa bbb"];
    let scripts: &[&[&str]] = &[
        &["s/[\\/:@#]/_/g"],
        &["s/[\\/:@#]/+/g"],
        &["s|nvcr.io/||"],
        &["s|nvcr.io/|nvcr.io#|"],
        &["-e", "s/a/X/2", "-e", "s/b*/Y/"],
        &["s/\\(a\\)\\(b\\)*/<\\2\\1&>/g"],
        &["-E", "s/(a|b)+/[\\1]/g"],
        &["-r", "s/[[:digit:]]+\\.?/N/g"],
        &["s/a+b/P/; s/(c)/Q/; s/{d}/R/; s/x*y/S/; s/^z/T/; s/\\^z\\$/U/"],
        &["s/[]a]/M/g"],
        &["s/[^a-z]/-/g"],
        &["s/.*/&&/"],
        &["s:/:\\n:g"],
        &["s/a/b/I"],
    ];
    let mut disagree = Vec::new();
    let mut determined = 0;
    for input in inputs {
        for script in scripts {
            let real =
                std::process::Command::new("sed").args(*script).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().and_then(
                    |mut c| {
                        use std::io::Write;
                        c.stdin.take().expect("stdin").write_all(format!("{input}\n").as_bytes())?;
                        c.wait_with_output()
                    },
                );
            let real = String::from_utf8(real.expect("GNU sed on PATH").stdout).expect("utf-8");
            let quoted: Vec<String> = script.iter().map(|s| format!("'{}'", s.replace('\'', "'\\''"))).collect();
            let text = format!(
                "X=\"$(printf '%s\\n' '{}' | sed {})\"\npython3 -m sglang.launch_server --model-path \"$X\"\n",
                input.replace('\'', "'\\''"),
                quoted.join(" ")
            );
            let inputs = Inputs { script: "/w/s.sh".into(), args: Vec::new(), env: BTreeMap::new(), open: false, cwd: "/w".into() };
            let e = interp::evaluate(&text, &inputs, &interp::NoFiles, Limits::default());
            let got = e.execs.iter().find(|x| x.argv.len() == 5).and_then(|x| x.argv[4].known());
            if let Some(v) = got {
                determined += 1;
                // `$( … )` drops the trailing newlines.
                if v != real.trim_end_matches('\n') {
                    disagree.push(format!("sed {script:?} on {input:?}: sed prints {real:?}, the interpreter {v:?}"));
                }
            }
        }
    }
    assert!(disagree.is_empty(), "{disagree:#?}");
    // The forms the runners use are among those it determines.
    assert!(determined >= inputs.len() * (scripts.len() - 2), "determined {determined}");
}
