//! A job whose script launches the engine differently on paths that exclude
//! each other (`if [[ $DCP_SIZE -gt 1 ]]; then vllm serve … 2.88; else vllm
//! serve … 3.24; fi`) is one job per path: the facts of a job read one
//! launch, and the launch of the other arm must be judged too, or a
//! submitter writes the wrong acceptance length where the checks never
//! look. Launches on one path (a prefill and a decode server) stay one job.

use super::AuditedJob;
use crate::jobs::repository::LEFTOVER;

/// Most paths one job is split into; past it, the job is judged as one (on
/// its first launch) and says so.
const MAX_PATHS: usize = 16;

/// The job, or one job per set of launches that can run together.
pub fn split(job: AuditedJob) -> Vec<AuditedJob> {
    if job.job.id == LEFTOVER {
        return vec![job];
    }
    // Launches with the same argv are one, whichever path runs them.
    let mut launches: Vec<(&Vec<String>, Vec<&crate::evidence::shell::command::Assumed>)> = Vec::new();
    for c in job.files.iter().flat_map(|f| f.commands.iter()).filter(|c| c.launch().is_some()) {
        match launches.iter_mut().find(|(argv, _)| **argv == c.argv) {
            Some((_, path)) => path.retain(|a| c.path.contains(a)),
            None => launches.push((&c.argv, c.path.iter().collect())),
        }
    }
    if launches.len() < 2 {
        return vec![job];
    }
    let excludes = |i: usize, j: usize| launches[i].1.iter().any(|a| launches[j].1.iter().any(|b| a.excludes(b)));
    // Each launch with every later one its set can run beside.
    let mut sets: Vec<Vec<usize>> = Vec::new();
    for i in 0..launches.len() {
        let mut set = vec![i];
        for j in (0..launches.len()).filter(|j| *j != i) {
            if set.iter().all(|k| !excludes(*k, j)) {
                set.push(j);
            }
        }
        set.sort_unstable();
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    if sets.len() < 2 {
        return vec![job];
    }
    if sets.len() > MAX_PATHS {
        let mut job = job;
        job.job.kind_reason.push_str(&format!(
            "; its launches lie on {} paths that exclude each other, more than the {MAX_PATHS} judged apart: judged on its first",
            sets.len()
        ));
        return vec![job];
    }
    let argvs: Vec<Vec<Vec<String>>> = sets.iter().map(|set| set.iter().map(|i| launches[*i].0.clone()).collect()).collect();
    // What sets each path apart: the arms its launches took that another path's did not.
    let arms: Vec<String> = sets
        .iter()
        .map(|set| {
            let mut own: Vec<&crate::evidence::shell::command::Assumed> = Vec::new();
            for a in set.iter().flat_map(|i| launches[*i].1.iter().copied()) {
                if !own.contains(&a) {
                    own.push(a);
                }
            }
            let apart: Vec<String> = own
                .iter()
                .filter(|a| launches.iter().any(|(_, other)| other.iter().any(|b| a.excludes(b))))
                .take(3)
                .map(|a| format!("`{}` {} (line {})", a.condition, if a.held { "held" } else { "failed" }, a.line))
                .collect();
            if apart.is_empty() { String::new() } else { format!(", where {}", apart.join(", ")) }
        })
        .collect();
    let count = argvs.len();
    argvs
        .into_iter()
        .enumerate()
        .map(|(k, kept)| {
            let mut path = job.clone();
            for file in &mut path.files {
                file.commands.retain(|c| c.launch().is_none() || kept.contains(&c.argv));
                // What the files do to files and packages is judged alike
                // whichever path launches (engine-patch, arch-override): once,
                // in the first path, not copied into every other.
                if k > 0 {
                    file.actions = Vec::new();
                    file.signatures = Vec::new();
                }
            }
            path.job.id = format!("{} [path {} of {count}]", job.job.id, k + 1);
            let first = path.files.iter().flat_map(|f| f.commands.iter()).find(|c| c.launch().is_some());
            if let Some(at) = first.and_then(|c| c.provenance.line.map(|l| format!("{}:{l}", c.provenance.file))) {
                path.job.kind_reason.push_str(&format!("; one of {count} paths whose launches exclude each other: the one launching at {at}{}", arms[k]));
            }
            path
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::gate::Gate;
    use crate::evidence::provenance::{FileRef, Provenance};
    use crate::evidence::shell::command::{Assumed, Command};
    use crate::evidence::{Extractor, FileKind};
    use crate::jobs::JobKind;

    fn launch(al: &str, path: &[(u64, bool)]) -> Command {
        Command {
            argv: vec!["vllm".into(), "serve".into(), "/m".into(), "--al".into(), al.into()],
            gate: Gate::Always,
            provenance: Provenance::at_line(&FileRef { path: "s.sh".into(), artifact: None }, 5, 0, ""),
            args_at: Vec::new(),
            branches: Vec::new(),
            open: Vec::new(),
            path: path.iter().map(|(line, held)| Assumed { file: "s.sh".into(), line: *line, condition: "[[ $X ]]".into(), held: *held }).collect(),
        }
    }

    fn job(commands: Vec<Command>) -> AuditedJob {
        let mut file = Extractor::new(1 << 20).extract("s.sh", FileKind::Command, &mut "".as_bytes()).0;
        file.commands = commands;
        let mut job = crate::jobs::repository::leftover_job();
        (job.id, job.kind) = ("s.sh".into(), JobKind::Throughput);
        AuditedJob::new(".", job, vec![file], Vec::new())
    }

    fn launched(jobs: &[AuditedJob]) -> Vec<(String, Vec<String>)> {
        jobs.iter().map(|j| (j.job.id.clone(), j.files[0].commands.iter().map(|c| c.argv[4].clone()).collect())).collect()
    }

    #[test]
    fn launches_on_paths_that_exclude_each_other_are_jobs_of_their_own() {
        let jobs = split(job(vec![launch("2.88", &[(3, true)]), launch("3.99", &[(3, false)])]));
        assert_eq!(launched(&jobs), vec![("s.sh [path 1 of 2]".into(), vec!["2.88".into()]), ("s.sh [path 2 of 2]".into(), vec!["3.99".into()])]);
        assert!(jobs[1].job.kind_reason.ends_with("the one launching at s.sh:5, where `[[ $X ]]` failed (line 3)"), "{}", jobs[1].job.kind_reason);
        // Two servers one path starts, or one launch both arms reach: one job.
        assert_eq!(split(job(vec![launch("2.88", &[(3, true)]), launch("3.99", &[(3, true), (4, false)])])).len(), 1);
        assert_eq!(split(job(vec![launch("2.88", &[(3, true)]), launch("2.88", &[(3, false)])])).len(), 1);
        assert_eq!(split(job(vec![launch("2.88", &[]), launch("3.99", &[(3, false)])])).len(), 1);
    }
}
