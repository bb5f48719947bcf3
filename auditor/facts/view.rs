//! The `auditor evidence` view: what the parsers extracted from a file or a
//! job and the facts already derived from it, with each environment
//! variable resolved to the value that takes effect and what the engine
//! makes of it. A typed view, rendered as JSON (every object's keys in name
//! order, as the contract has always printed them) or as lines for people.

use super::{ArgsSource, AuditedJob, Facts};
use crate::evidence::FileEvidence;
use crate::evidence::engine::Engine;
use crate::evidence::env::{EnvAssignment, EnvDump, EnvOrigin};
use crate::evidence::gate::Gate;
use crate::evidence::knobs::{Catalog, Meaning};
use crate::evidence::shell::command::Command;
use crate::jobs::Job;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// What `auditor evidence` shows: one file's evidence whole, or each job's.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum EvidenceView<'a> {
    Files(FilesView<'a>),
    Jobs { input: Input<'a>, jobs: Vec<JobView<'a>>, not_examined: &'a [String] },
}

/// The input a job view was read from.
#[derive(Debug, Serialize)]
pub struct Input<'a> {
    pub path: &'a str,
    pub sha256: Option<&'a str>,
}

/// One job's view: its files' view and the job itself.
#[derive(Debug, Serialize)]
pub struct JobView<'a> {
    #[serde(flatten)]
    pub view: FilesView<'a>,
    pub job: &'a Job,
}

/// The view of some files (one file, or one job's) and their facts.
#[derive(Debug, Serialize)]
pub struct FilesView<'a> {
    pub engine: Option<Engine>,
    pub server_args: &'a Map<String, Value>,
    pub server_args_sources: &'a [ArgsSource],
    pub command_args: &'a Map<String, Value>,
    pub summary: BTreeMap<&'static str, &'a Value>,
    pub speculative: BTreeMap<&'static str, &'a Value>,
    /// Where each summary and speculative fact was read (`summary.model`, ...).
    pub sources: BTreeMap<String, FactSource<'a>>,
    pub env: BTreeMap<String, EnvEntry>,
    pub env_dumps: Vec<&'a EnvDump>,
    pub commands: Vec<&'a Command>,
    pub notes: Vec<NoteView<'a>>,
}

/// Where a fact was read.
#[derive(Debug, Serialize)]
pub struct FactSource<'a> {
    pub from: &'a str,
    pub at: Option<Place<'a>>,
}

#[derive(Debug, Serialize)]
pub struct Place<'a> {
    pub file: &'a str,
    pub line: Option<u64>,
}

/// A variable's value in effect and what the engine makes of it.
#[derive(Debug, Serialize)]
pub struct EnvEntry {
    pub value: String,
    /// The typed value the engine reads; null for a value from an unshown expansion.
    pub effective: Value,
    pub origin: EnvOrigin,
    pub file: String,
    pub line: Option<u64>,
    /// The legacy name it was set under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// Set only on one path of a script that branches on `EVAL_ONLY`.
    #[serde(skip_serializing_if = "Gate::is_always")]
    pub gate: Gate,
    /// How many assignments of the variable the files hold.
    pub sources: usize,
}

/// A note of the facts (no place) or of a file.
#[derive(Debug, Serialize)]
pub struct NoteView<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<Option<u64>>,
    pub message: &'a str,
}

/// The view of `files` with the `facts` already derived from them.
pub fn files<'a>(files: &'a [FileEvidence], facts: &'a Facts, catalog: &Catalog) -> FilesView<'a> {
    let sources = facts
        .summary
        .entries()
        .into_iter()
        .map(|(k, f)| (format!("summary.{k}"), f))
        .chain(facts.speculative.entries().into_iter().map(|(k, f)| (format!("speculative.{k}"), f)))
        .map(|(key, f)| (key, FactSource { from: &f.from, at: f.provenance.as_ref().map(|p| Place { file: &p.file, line: p.line }) }))
        .collect();
    let mut notes: Vec<NoteView> = facts.notes.iter().map(|n| NoteView { file: None, line: None, message: n }).collect();
    notes.extend(files.iter().flat_map(|f| f.notes.iter().map(move |n| NoteView { file: Some(&f.path), line: Some(n.line), message: &n.message })));
    FilesView {
        engine: facts.engine,
        server_args: &facts.server_args,
        server_args_sources: &facts.server_args_sources,
        command_args: &facts.command_args,
        summary: facts.summary.entries().into_iter().map(|(k, f)| (k, &f.value)).collect(),
        speculative: facts.speculative.entries().into_iter().map(|(k, f)| (k, &f.value)).collect(),
        sources,
        env: env(files, catalog),
        env_dumps: files.iter().flat_map(|f| f.env_dumps.iter()).collect(),
        commands: files.iter().flat_map(|f| f.commands.iter()).collect(),
        notes,
    }
}

/// Each job's view, as the jobs were read from `input`.
pub fn jobs<'a>(input: Input<'a>, jobs: &'a [AuditedJob], not_examined: &'a [String], catalog: &Catalog) -> EvidenceView<'a> {
    let jobs = jobs.iter().map(|j| JobView { view: self::files(&j.files, &j.facts, catalog), job: &j.job }).collect();
    EvidenceView::Jobs { input, jobs, not_examined }
}

/// Every variable the files set, under its current name, resolved to the assignment that takes effect.
fn env(files: &[FileEvidence], catalog: &Catalog) -> BTreeMap<String, EnvEntry> {
    let env: Vec<EnvAssignment> = files.iter().flat_map(|f| f.env.iter().cloned()).collect();
    let names: BTreeSet<String> =
        env.iter().map(|a| catalog.current_name(&a.name).filter(|n| catalog.var(n).is_some()).unwrap_or_else(|| a.name.clone())).collect();
    let mut out = BTreeMap::new();
    for name in names {
        let Some(r) = catalog.effective(&env, &name) else { continue };
        let a = r.assignment;
        let value = a.value.clone().unwrap_or_default();
        let meaning = catalog.meaning(&a.name, &value);
        let warning = match &meaning {
            Meaning::Invalid { reason, .. } => Some(format!("{reason}; the engine keeps its default")),
            _ => None,
        };
        let entry = EnvEntry {
            effective: if a.expands { Value::Null } else { meaning.effective_json(catalog.var(&name)) },
            value,
            origin: a.origin,
            file: a.provenance.file.clone(),
            line: a.provenance.line,
            via: r.via_legacy.then(|| a.name.clone()),
            warning,
            gate: a.gate,
            sources: env.iter().filter(|o| catalog.spells(&name, &o.name)).count(),
        };
        out.insert(name, entry);
    }
    out
}

impl EvidenceView<'_> {
    /// The JSON contract: every object's keys in name order, as printed since the first version.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The view as lines for people: per job (when the view has jobs) the
    /// engine, each variable in effect with its source, and each command.
    pub fn text(&self) -> String {
        let mut out = String::new();
        match self {
            EvidenceView::Files(view) => view.text(&mut out),
            EvidenceView::Jobs { jobs, .. } => {
                for job in jobs {
                    let _ = writeln!(out, "job {} ({})", job.job.id, job.job.kind.as_str());
                    job.view.text(&mut out);
                    out.push('\n');
                }
            }
        }
        out
    }
}

impl FilesView<'_> {
    fn text(&self, out: &mut String) {
        if let Some(engine) = self.engine {
            let _ = writeln!(out, "engine: {engine}");
        }
        for (name, e) in &self.env {
            let line = e.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(out, "{name}={}  (effective {})  {}{line}", e.value, e.effective, e.file);
        }
        for c in &self.commands {
            let _ = writeln!(out, "command: {}", c.argv.join(" "));
        }
    }
}
