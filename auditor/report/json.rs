//! `--format json`: the stable machine contract (docs/GUIDE.md, "Formats"), pretty-printed.

use super::Report;

pub fn render(report: &Report) -> String {
    let mut out = serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    out.push('\n');
    out
}
