//! `auditor rules test`: every rule carries its own examples of what it must
//! and must not match, and they are run through the real engine (prefilter,
//! comment handling, regex, window), so a rule edit that stops matching its
//! examples fails here and in the unit test that runs the embedded packs.

use super::Engine;
use crate::bundle::Limits;
use crate::provenance::FileRef;

/// An example that did not behave as its rule says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleFailure {
    pub rule: String,
    /// The example is listed under `examples.match` (else `examples.no_match`).
    pub should_match: bool,
    pub example: String,
}

impl std::fmt::Display for ExampleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (list, what) = if self.should_match { ("match", "did not match") } else { ("no_match", "matched") };
        write!(f, "{}: examples.{list} {what}: {:?}", self.rule, self.example)
    }
}

/// Run every example of every rule; returns the ones that fail and how many ran.
pub fn run(engine: &Engine) -> (Vec<ExampleFailure>, usize) {
    let mut failures = Vec::new();
    let mut count = 0;
    for rule in engine.rules() {
        let lists = [(true, &rule.spec.examples.matches), (false, &rule.spec.examples.no_match)];
        for (should_match, examples) in lists {
            for example in examples {
                count += 1;
                let file = FileRef { path: "example".to_string(), artifact: None };
                let scan = engine.scan_reader(file, rule.kinds.first(), Limits::default().max_line_length, &mut example.as_bytes());
                if scan.findings.iter().any(|f| f.rule == rule.spec.id) != should_match {
                    failures.push(ExampleFailure { rule: rule.spec.id.clone(), should_match, example: example.clone() });
                }
            }
        }
    }
    (failures, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_packs_pass_their_own_examples() {
        let engine = Engine::embedded().unwrap();
        let (failures, count) = run(&engine);
        let listed: Vec<String> = failures.iter().map(ToString::to_string).collect();
        assert!(failures.is_empty(), "{}", listed.join("\n"));
        assert!(count >= 2 * engine.rules().len());
    }
}
