//! Which lines of a YAML file hold commands. A GitHub workflow runs its
//! steps' `run:` scripts; its other values (`with:` inputs such as a review
//! prompt, names, conditions) are data, and prose in them that mentions
//! `git apply` applies nothing. A performance changelog is prose whole.

use super::nodes::{MAX_DEPTH, load, scalar_text};
use saphyr::{MarkedYaml, YamlData};

/// Whether `path` is a GitHub workflow.
fn is_workflow(path: &str) -> bool {
    (path.starts_with(".github/workflows/") || path.contains("/.github/workflows/")) && (path.ends_with(".yml") || path.ends_with(".yaml"))
}

/// Whether `path` is the benchmark's performance changelog.
fn is_changelog(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with("perf-changelog") && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

/// The line ranges (first, last; 1-based) of `text` that hold commands,
/// when its place says only some do: `None` for any other YAML file.
pub fn code_lines(path: &str, text: &str) -> Option<Vec<(u64, u64)>> {
    if is_changelog(path) {
        return Some(Vec::new());
    }
    if !is_workflow(path) {
        return None;
    }
    // A workflow that does not load is read whole, as before.
    let docs = load(text, false).ok()?;
    let mut out = Vec::new();
    for doc in &docs {
        runs(doc, 0, &mut out);
    }
    Some(out)
}

/// The `run:` values under `node`.
fn runs(node: &MarkedYaml, depth: usize, out: &mut Vec<(u64, u64)>) {
    if depth > MAX_DEPTH {
        return;
    }
    match &node.data {
        YamlData::Mapping(map) => {
            for (key, value) in map {
                if scalar_text(key).as_deref() == Some("run") && scalar_text(value).is_some() {
                    out.push((value.span.start.line() as u64, value.span.end.line().max(value.span.start.line()) as u64));
                } else {
                    runs(value, depth + 1, out);
                }
            }
        }
        YamlData::Sequence(items) => items.iter().for_each(|i| runs(i, depth + 1, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::code_lines;

    #[test]
    fn a_workflow_runs_its_run_scripts_only() {
        let text = "on: push\njobs:\n  review:\n    steps:\n      - uses: anthropics/claude-code-action@v1\n        with:\n          prompt: |\n            - `.patch` files, `git apply` invocations;\n      - name: apply\n        run: |\n          git apply fix.patch\n          echo done\n      - run: echo one\n";
        let code = code_lines(".github/workflows/review.yml", text).expect("a workflow");
        let is_code = |line: u64| code.iter().any(|(a, b)| (*a..=*b).contains(&line));
        assert!(!is_code(8), "{code:?}");
        assert!(is_code(11) && is_code(12) && is_code(13), "{code:?}");
        assert_eq!(code_lines("perf-changelog.yaml", "- description: git apply x"), Some(Vec::new()));
        assert_eq!(code_lines("recipes/r.yaml", "a: 1"), None);
    }
}
