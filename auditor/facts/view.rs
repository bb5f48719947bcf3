//! The `auditor evidence` view: what the parsers extracted from a file or a
//! job, with each environment variable resolved to the value that takes
//! effect and what the engine makes of it.

use crate::evidence::FileEvidence;
use crate::evidence::env::EnvAssignment;
use crate::evidence::knobs::Catalog;
use crate::facts;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The JSON view of the evidence of some files (one file, or one job's).
pub fn render(files: &[FileEvidence], catalog: &Catalog) -> Value {
    let env: Vec<EnvAssignment> = files.iter().flat_map(|f| f.env.iter().cloned()).collect();
    let names: BTreeSet<String> =
        env.iter().map(|a| catalog.current_name(&a.name).filter(|n| catalog.var(n).is_some()).unwrap_or_else(|| a.name.clone())).collect();
    let mut env_view = Map::new();
    for name in names {
        let Some(r) = catalog.effective(&env, &name) else { continue };
        let a = r.assignment;
        let value = a.value.clone().unwrap_or_default();
        let meaning = catalog.meaning(&a.name, &value);
        let mut entry = json!({
            "value": value,
            "effective": if a.expands { Value::Null } else { meaning.effective_json(catalog.var(&name)) },
            "origin": a.origin,
            "file": a.provenance.file,
            "line": a.provenance.line,
        });
        if r.via_legacy {
            entry["via"] = json!(a.name);
        }
        if let crate::evidence::knobs::Meaning::Invalid { reason, .. } = &meaning {
            entry["warning"] = json!(format!("{reason}; the engine keeps its default"));
        }
        if !a.gate.is_always() {
            // Set only on one path of a script that branches on EVAL_ONLY.
            entry["gate"] = json!(a.gate);
        }
        let sources = env.iter().filter(|o| o.name == name || Some(&o.name) == catalog.legacy_name(&name).as_ref()).count();
        entry["sources"] = json!(sources);
        env_view.insert(name, entry);
    }
    let facts = facts::derive(files, catalog);
    let mut sources = Map::new();
    for (group, entries) in [("summary", facts.summary.entries()), ("speculative", facts.speculative.entries())] {
        for (key, fact) in entries {
            let place = fact.provenance.as_ref().map(|p| json!({"file": p.file, "line": p.line}));
            sources.insert(format!("{group}.{key}"), json!({"from": fact.from, "at": place}));
        }
    }
    let values = |entries: Vec<(&str, &facts::Fact)>| -> Map<String, Value> { entries.into_iter().map(|(k, f)| (k.to_string(), f.value.clone())).collect() };
    let mut notes: Vec<Value> = facts.notes.iter().map(|n| json!({"message": n})).collect();
    notes.extend(files.iter().flat_map(|f| f.notes.iter().map(move |n| json!({"file": f.path, "line": n.line, "message": n.message}))));
    json!({
        "engine": facts.engine,
        "server_args": facts.server_args,
        "server_args_sources": facts.server_args_sources,
        "command_args": facts.command_args,
        "summary": values(facts.summary.entries()),
        "speculative": values(facts.speculative.entries()),
        "sources": sources,
        "env": env_view,
        "env_dumps": files.iter().flat_map(|f| f.env_dumps.iter()).collect::<Vec<_>>(),
        "commands": files.iter().flat_map(|f| f.commands.iter()).collect::<Vec<_>>(),
        "notes": notes,
    })
}

/// The evidence view as lines for people: per job (when the view has
/// jobs) the engine, each variable in effect with its source, and each
/// command.
pub fn text(view: &Value) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let one = |v: &Value, out: &mut String| {
        if let Some(engine) = v["engine"].as_str() {
            let _ = writeln!(out, "engine: {engine}");
        }
        for (name, e) in v["env"].as_object().into_iter().flatten() {
            let line = e["line"].as_u64().map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(out, "{name}={}  (effective {})  {}{line}", e["value"].as_str().unwrap_or(""), e["effective"], e["file"].as_str().unwrap_or(""));
        }
        for c in v["commands"].as_array().into_iter().flatten() {
            let argv: Vec<&str> = c["argv"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let _ = writeln!(out, "command: {}", argv.join(" "));
        }
    };
    match view["jobs"].as_array() {
        Some(jobs) => {
            for job in jobs {
                let _ = writeln!(out, "job {} ({})", job["job"]["id"].as_str().unwrap_or(""), job["job"]["kind"].as_str().unwrap_or(""));
                one(job, &mut out);
                out.push('\n');
            }
        }
        None => one(view, &mut out),
    }
    out
}
