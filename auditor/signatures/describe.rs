//! What `auditor rules list` and `auditor rules explain` print about the
//! signature rules: everything a reviewer needs to trust a match (what the
//! rule looks for, where, and its own examples) and to fix it.

use super::{Engine, Rule};
use std::fmt::Write;

/// The signature checks and their rules, one line each, for `rules list`.
pub fn list(engine: &Engine) -> String {
    let mut out = String::new();
    for check in engine.checks() {
        let _ = writeln!(out, "{}  {} (signature rules, {})", check.check, check.title, engine.source());
        for rule in engine.rules().iter().filter(|r| r.check == check.check) {
            let _ = writeln!(out, "  {}  [{}] {}", rule.spec.id, rule.spec.severity.as_str(), rule.spec.title);
        }
    }
    out
}

/// A signature check (its title, description and rules), for `rules explain <check-id>`.
pub fn explain_check(engine: &Engine, id: &str) -> Option<String> {
    let check = engine.checks().iter().find(|c| c.check == id)?;
    let mut out = format!("{}: {}\n", check.check, check.title);
    if !check.description.is_empty() {
        let _ = writeln!(out, "{}", check.description.trim_end());
    }
    let _ = writeln!(out, "\nRules (`auditor rules explain <rule-id>` for one):");
    for rule in engine.rules().iter().filter(|r| r.check == id) {
        let _ = writeln!(out, "  {}  [{}] {}", rule.spec.id, rule.spec.severity.as_str(), rule.spec.title);
    }
    Some(out)
}

/// One rule in full, for `rules explain <rule-id>`.
pub fn explain_rule(rule: &Rule) -> String {
    let spec = &rule.spec;
    let mut out = format!("{}: {}\n", spec.id, spec.title);
    let _ = writeln!(out, "severity:  {}", spec.severity.as_str());
    let _ = writeln!(out, "files:     {}", rule.kinds.names().join(", "));
    let case = if spec.case_sensitive { "" } else { " (any case)" };
    let _ = writeln!(out, "keywords:  {}{case}", spec.keywords.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", "));
    if let Some(regex) = &spec.regex {
        let _ = writeln!(out, "confirmed on the keyword's line by:\n{}", indent(regex));
    }
    if let Some(window) = &spec.window {
        let _ = writeln!(out, "and within that line and the next {} line(s) by:\n{}", window.lines, indent(&window.regex));
    }
    if spec.skip_comments {
        let _ = writeln!(out, "lines starting with # are not matched");
    }
    let _ = writeln!(out, "\nTo fix:\n{}", indent(spec.remediation.trim()));
    let _ = writeln!(out, "\nMatches, for example:");
    for example in &spec.examples.matches {
        let _ = writeln!(out, "{}", indent(example.trim_matches('\n')));
    }
    let _ = writeln!(out, "\nDoes not match, for example:");
    for example in &spec.examples.no_match {
        let _ = writeln!(out, "{}", indent(example.trim_matches('\n')));
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains_rules_and_checks_and_lists_them() {
        let engine = Engine::embedded().unwrap();
        let text = explain_rule(engine.rule("engine-patch/git-apply").unwrap());
        assert!(text.starts_with("engine-patch/git-apply: "), "{text}");
        assert!(text.contains("severity:  error") && text.contains("To fix:") && text.contains("git apply /tmp/fix.patch"), "{text}");
        assert!(text.contains("# git apply foo.patch"), "negative examples are shown: {text}");
        let check = explain_check(&engine, "arch-override").unwrap();
        assert!(check.contains("arch-override/hf-overrides"), "{check}");
        assert!(explain_check(&engine, "forbidden-env").is_none());
        let listed = list(&engine);
        assert!(engine.rules().iter().all(|r| listed.contains(&r.spec.id)), "{listed}");
    }
}
