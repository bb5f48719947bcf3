//! The library's layers run one way: inputs (`bundle`) -> `evidence` ->
//! `jobs` -> facts -> `checks` -> `report`, with the shared vocabulary
//! (`provenance`, `finding`, `policy`) below them all. This test reads every
//! `use crate::…`/`use super::…` path (and every inline `crate::…` path) of
//! `auditor/`, outside `#[cfg(test)]` modules, and fails on any cycle between
//! top-level modules, or between sibling modules of one folder, naming the
//! imports that close it — so a cycle cannot creep back in unseen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every module of the crate (its path from `auditor/`) with its source
/// text, test-only parts removed.
fn modules(root: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel: PathBuf = path.strip_prefix(root).unwrap().with_extension("");
            let mut module: Module = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            if matches!(module.as_slice(), [m] if m == "main" || m == "lib") {
                continue;
            }
            out.insert(module, without_tests(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    // Modules declared `#[cfg(test)] mod x;` are test code too.
    let test_only: Vec<Module> = out
        .iter()
        .flat_map(|(m, text)| {
            let lines: Vec<&str> = text.lines().collect();
            lines
                .windows(2)
                .filter(|w| w[0].trim() == "#[cfg(test)]")
                .filter_map(|w| w[1].trim().strip_prefix("mod ").and_then(|r| r.strip_suffix(';')))
                .map(|name| [m.clone(), vec![name.to_string()]].concat())
                .collect::<Vec<_>>()
        })
        .collect();
    for m in test_only {
        out.remove(&m);
    }
    out
}

/// The text without comments and without the `#[cfg(test)] mod tests { … }` block.
fn without_tests(text: &str) -> String {
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    match code.find("#[cfg(test)]\nmod tests") {
        Some(i) => code[..i].to_string(),
        None => code,
    }
}

/// The paths a module names: each `use` tree expanded, plus inline `crate::a::b` paths.
fn paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let Some(tree) = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "].iter().find_map(|p| line.strip_prefix(p)) else { continue };
        let mut tree = tree.to_string();
        while !tree.contains(';') {
            let Some(more) = lines.next() else { break };
            tree.push_str(more);
        }
        let tree: String = tree.split(';').next().unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
        expand(&tree, &mut out);
    }
    for start in ["crate::", "super::"] {
        for (i, _) in text.match_indices(start) {
            if text[..i].chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path: String = text[i..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            out.push(path);
        }
    }
    out
}

/// `a::{b, c::{d}}` -> `a::b`, `a::c::d`.
fn expand(tree: &str, out: &mut Vec<String>) {
    let Some(open) = tree.find('{') else {
        out.push(tree.to_string());
        return;
    };
    let (prefix, body) = (&tree[..open], &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())]);
    let mut depth = 0;
    let mut part = String::new();
    for c in body.chars().chain(std::iter::once(',')) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            if !part.is_empty() {
                expand(&format!("{prefix}{part}"), out);
            }
            part.clear();
        } else {
            part.push(c);
        }
    }
}

/// The module a path in `from` names (the longest module prefix), if in the crate.
fn resolve(all: &BTreeMap<Module, String>, from: &Module, path: &str) -> Option<Module> {
    let mut segs = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut full: Module = match segs.peek() {
        Some(&"crate") => {
            segs.next();
            Vec::new()
        }
        Some(&"super") | Some(&"self") => from.clone(),
        _ => return None,
    };
    for seg in segs {
        match seg {
            "super" => {
                full.pop();
            }
            "self" => {}
            s => full.push(s.to_string()),
        }
    }
    (1..=full.len()).rev().map(|n| full[..n].to_vec()).find(|m| all.contains_key(m))
}

/// Strongly connected components with more than one node (Tarjan).
fn cycles(nodes: &BTreeSet<String>, edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeSet<(String, String)>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        found: Vec<Vec<String>>,
    }
    fn visit(s: &mut State, v: &str) {
        let n = s.index.len();
        s.index.insert(v.to_string(), n);
        s.low.insert(v.to_string(), n);
        s.stack.push(v.to_string());
        let next: Vec<String> = s.edges.iter().filter(|(a, _)| a == v).map(|(_, b)| b.clone()).collect();
        for w in next {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let low = s.low[v].min(s.low[&w]);
                s.low.insert(v.to_string(), low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[&w]);
                s.low.insert(v.to_string(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let at = s.stack.iter().rposition(|x| x == v).unwrap();
            let component = s.stack.split_off(at);
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut s = State { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for n in nodes {
        if !s.index.contains_key(n) {
            visit(&mut s, n);
        }
    }
    s.found
}

#[test]
fn modules_import_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("auditor");
    let all = modules(&root);
    // (from, to) -> the imports behind the edge, for the message.
    let mut imports: BTreeMap<(Module, Module), BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &all {
        for path in paths(text) {
            if let Some(target) = resolve(&all, module, &path).filter(|t| t != module) {
                imports.entry((module.clone(), target)).or_default().insert(path);
            }
        }
    }
    let mut problems = Vec::new();
    // Siblings within every folder, at any depth: the top-level modules,
    // `evidence/`'s language folders, the modules within each of those.
    let folders: BTreeSet<Module> = all.keys().flat_map(|m| (0..m.len()).map(move |n| m[..n].to_vec())).collect();
    for parent in folders {
        let depth = parent.len() + 1;
        let within = |m: &Module| m.len() >= depth && m[..parent.len()] == parent[..];
        let node = |m: &Module| m[..depth].join("::");
        let nodes: BTreeSet<String> = all.keys().filter(|m| within(m)).map(node).collect();
        let edges: BTreeSet<(String, String)> =
            imports.keys().filter(|(a, b)| within(a) && within(b)).map(|(a, b)| (node(a), node(b))).filter(|(a, b)| a != b).collect();
        for cycle in cycles(&nodes, &edges) {
            let mut why = Vec::new();
            for ((a, b), paths) in &imports {
                if within(a) && within(b) && cycle.contains(&node(a)) && cycle.contains(&node(b)) && node(a) != node(b) {
                    why.push(format!("    {} -> {}: {}", a.join("::"), b.join("::"), paths.iter().cloned().collect::<Vec<_>>().join(", ")));
                }
            }
            problems.push(format!("cycle between {}:\n{}", cycle.join(", "), why.join("\n")));
        }
    }
    assert!(problems.is_empty(), "modules import each other in a circle:\n{}", problems.join("\n"));
}

/// The stages of the audit pipeline, in the order data flows through them
/// (DESIGN: inputs -> evidence -> jobs -> facts -> checks -> report, with
/// the references the checks compare against read after the evidence): a
/// stage imports only stages before it. The cycle test above allows a
/// one-way edge the wrong way round; this one does not.
#[test]
fn the_pipeline_stages_import_only_earlier_stages() {
    const STAGES: [&str; 7] = ["bundle", "evidence", "jobs", "reference", "facts", "checks", "report"];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("auditor");
    let all = modules(&root);
    let rank = |m: &Module| STAGES.iter().position(|s| m.first().is_some_and(|f| f == s));
    let mut backwards = Vec::new();
    for (module, text) in &all {
        let Some(from) = rank(module) else { continue };
        for path in paths(text) {
            let Some(target) = resolve(&all, module, &path) else { continue };
            if let Some(to) = rank(&target).filter(|to| *to > from) {
                backwards.push(format!("{} ({}) -> {} ({}): {path}", module.join("::"), STAGES[from], target.join("::"), STAGES[to]));
            }
        }
    }
    backwards.sort();
    backwards.dedup();
    assert!(backwards.is_empty(), "a stage imports a later stage:\n{}", backwards.join("\n"));
}
