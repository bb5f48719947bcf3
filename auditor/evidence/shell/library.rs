//! A sourced shell library as a set of functions: which of them a change
//! touches, and whether a script can call them. A pull request that edits
//! one helper of `benchmark_lib.sh` changes what the scripts calling that
//! helper run, not what every script sourcing the library runs; judging
//! only those keeps the gate's cost proportional to the change.
//!
//! A change outside the library's top-level function definitions (its
//! top-level code, a function defined inside a branch, a text that does not
//! parse) touches every script that sources it. A function is called where
//! its name is written: as a command, in an array later run, in a string
//! handed to `trap` or `eval`; a name assembled from pieces at run time is
//! not seen, and the library's own evaluation (every function, called or
//! not) still judges what the changed function does.

use crate::evidence::shell::syntax;
use brush_parser::ast::{Command, SourceLocation};
use std::collections::BTreeSet;

/// A top-level function definition: its name and its lines (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Definition {
    name: String,
    first: u64,
    last: u64,
}

/// The top-level function definitions of a script, or `None` when it does not parse.
fn definitions(text: &str) -> Option<Vec<Definition>> {
    let parsed = syntax::parse_shared(text);
    let program = parsed.as_ref().as_ref().ok()?;
    let mut out = Vec::new();
    for item in program.complete_commands.iter().flat_map(|list| &list.0) {
        let and_or = &item.0;
        if !and_or.additional.is_empty() {
            continue;
        }
        if let [Command::Function(def)] = and_or.first.seq.as_slice()
            && let Some(span) = def.location()
        {
            out.push(Definition { name: def.fname.value.clone(), first: span.start.line as u64, last: span.end.line as u64 });
        }
    }
    Some(out)
}

/// Lines that change nothing when they change: blank, or a comment.
fn inert(line: &str) -> bool {
    let line = line.trim();
    line.is_empty() || line.starts_with('#')
}

/// Name the functions of `defs` holding each of `lines` of `text`; `false`
/// when a line that does something lies outside every definition.
fn holders(defs: &[Definition], text: &str, lines: impl Iterator<Item = u64>, out: &mut BTreeSet<String>) -> bool {
    let all: Vec<&str> = text.lines().collect();
    for line in lines {
        match defs.iter().find(|d| (d.first..=d.last).contains(&line)) {
            Some(d) => {
                out.insert(d.name.clone());
            }
            None if all.get(line as usize - 1).is_none_or(|l| inert(l)) => {}
            None => return false,
        }
    }
    true
}

/// The functions whose behaviour differs between `old` and `new` texts of
/// a library: those whose definitions changed (added, edited, removed),
/// and the library's functions that call one of them. `None` when the
/// change reaches beyond its functions (top-level code, a call of a changed
/// function from the top level, a text that does not parse), so that every
/// script sourcing it runs something else.
pub fn changed_functions(old: &str, new: &str) -> Option<BTreeSet<String>> {
    let (old_defs, new_defs) = (definitions(old)?, definitions(new)?);
    let mut changed = BTreeSet::new();
    for op in similar::TextDiff::from_lines(old, new).ops() {
        if op.tag() == similar::DiffTag::Equal {
            continue;
        }
        let (was, now) = (op.old_range(), op.new_range());
        let old_lines = (was.start as u64 + 1)..=(was.end as u64);
        let new_lines = (now.start as u64 + 1)..=(now.end as u64);
        if !holders(&old_defs, old, old_lines, &mut changed) || !holders(&new_defs, new, new_lines, &mut changed) {
            return None;
        }
    }
    // A function that calls a changed one changes with it; the top level
    // calling one changes every script.
    let lines: Vec<&str> = new.lines().collect();
    let body = |d: &Definition| lines[(d.first as usize - 1).min(lines.len())..(d.last as usize).min(lines.len())].join("\n");
    loop {
        let before = changed.len();
        for d in &new_defs {
            let text = body(d);
            if !changed.contains(&d.name) && named(&text, &changed).is_some() {
                changed.insert(d.name.clone());
            }
        }
        if changed.len() == before {
            break;
        }
    }
    let top: String = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !new_defs.iter().any(|d| (d.first..=d.last).contains(&(*i as u64 + 1))))
        .map(|(_, l)| *l)
        .collect::<Vec<_>>()
        .join("\n");
    if named(&top, &changed).is_some() {
        return None;
    }
    Some(changed)
}

/// The first of `names` that `text` names as a word (anywhere: a call, a
/// string handed to `trap` or `eval`, a comment), or `None`.
pub fn named<'n>(text: &str, names: &'n BTreeSet<String>) -> Option<&'n str> {
    names.iter().map(String::as_str).find(|name| syntax::names_word(text, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "\
#!/bin/bash
# the library
PORT=8000

leaf() {
    echo leaf
}

caller() {
    leaf \"$@\"
}

other() {
    cat <<EOF
other
EOF
}

by_array() {
    local cmd=(leaf --x)
    \"${cmd[@]}\"
}
";

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_edit_inside_a_function_changes_it_and_its_callers() {
        let new = LIB.replace("echo leaf", "echo leaf; export SGLANG_SIMULATE_ACC_LEN=3");
        // A function runs another where it writes its name: as a call, in an array it runs.
        assert_eq!(changed_functions(LIB, &new), Some(set(&["by_array", "caller", "leaf"])));
        let heredoc = LIB.replace("other\nEOF", "changed\nEOF");
        assert_eq!(changed_functions(LIB, &heredoc), Some(set(&["other"])));
        assert_eq!(changed_functions(LIB, LIB), Some(set(&[])));
    }

    #[test]
    fn added_and_removed_functions_are_changed() {
        let added = format!("{LIB}\nfresh() {{\n    true\n}}\n");
        assert_eq!(changed_functions(LIB, &added), Some(set(&["fresh"])));
        let removed = LIB.replace("other() {\n    cat <<EOF\nother\nEOF\n}\n", "");
        assert_eq!(changed_functions(LIB, &removed), Some(set(&["other"])));
    }

    #[test]
    fn top_level_changes_and_calls_reach_every_script() {
        assert_eq!(changed_functions(LIB, &LIB.replace("PORT=8000", "PORT=9000")), None);
        // Comments and blank lines at the top level change nothing.
        assert_eq!(changed_functions(LIB, &LIB.replace("# the library", "# the library, edited\n")), Some(set(&[])));
        let called = format!("{}\nleaf\n", LIB.replace("echo leaf", "echo LEAF"));
        assert_eq!(changed_functions(LIB, &called), None);
        assert_eq!(changed_functions(LIB, "if then fi"), None);
    }

    #[test]
    fn names_are_whole_words() {
        let names = set(&["run_eval"]);
        assert_eq!(named("run_eval --port 1", &names), Some("run_eval"));
        assert_eq!(named("x=$(run_eval)", &names), Some("run_eval"));
        assert_eq!(named("trap 'run_eval' EXIT", &names), Some("run_eval"));
        assert_eq!(named("run_eval_helper; my_run_eval", &names), None);
    }
}
