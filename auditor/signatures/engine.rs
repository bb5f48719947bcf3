//! The compiled rule set: every keyword of every pack in one aho-corasick
//! automaton, so a file is searched once for all rules, and a table from
//! each keyword back to the rules that listed it. Only lines holding a
//! keyword are ever looked at by a rule's regex.

use super::pack::{self, PackError, PackHeader, Rule};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Rule packs compiled for scanning.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(super) rules: Vec<Rule>,
    checks: Vec<PackHeader>,
    pub(super) automaton: AhoCorasick,
    /// For each automaton pattern, the rules that listed it, or a prefix of
    /// it, as a keyword (see [`patterns`]).
    pub(super) pattern_rules: Vec<Vec<usize>>,
    /// The automaton ignores ASCII case (some rule asked for it), so
    /// case-sensitive rules check their keyword's bytes themselves.
    pub(super) folds_case: bool,
    /// Where the packs came from, for reports.
    source: String,
}

impl Engine {
    /// The packs embedded in the binary.
    pub fn embedded() -> Result<Engine, PackError> {
        Engine::new(pack::embedded()?, "embedded signatures".to_string())
    }

    /// The packs in `dir` (`--signatures DIR`), replacing the embedded ones.
    pub fn load(dir: &Path) -> Result<Engine, PackError> {
        Engine::new(pack::load_dir(dir)?, format!("signatures {}", dir.display()))
    }

    /// Compile parsed packs; rule ids must be unique across them.
    pub fn new(packs: Vec<(PackHeader, Vec<Rule>)>, source: String) -> Result<Engine, PackError> {
        let mut checks: Vec<PackHeader> = Vec::new();
        let mut rules: Vec<Rule> = Vec::new();
        for (header, pack_rules) in packs {
            for rule in pack_rules {
                if rules.iter().any(|r| r.spec.id == rule.spec.id) {
                    return Err(PackError::Rule { path: source.clone(), rule: rule.spec.id, message: "defined twice".to_string() });
                }
                rules.push(rule);
            }
            if !checks.iter().any(|c| c.check == header.check) {
                checks.push(header);
            }
        }
        let folds_case = rules.iter().any(|r| !r.spec.case_sensitive);
        let (patterns, pattern_rules) = patterns(&rules, folds_case);
        // Leftmost-first lets the automaton use its SIMD (Teddy) prefilter,
        // which standard (overlapping) semantics cannot.
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .ascii_case_insensitive(folds_case)
            .build(&patterns)
            .map_err(|e| PackError::Rule { path: source.clone(), rule: "(all)".to_string(), message: format!("keywords: {e}") })?;
        Ok(Engine { rules, checks, automaton, pattern_rules, folds_case, source })
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.spec.id == id)
    }

    /// The checks the rules feed, with their titles, in pack order.
    pub fn checks(&self) -> &[PackHeader] {
        &self.checks
    }

    /// Where the packs came from (`embedded signatures` or `signatures DIR`).
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// The automaton's patterns (every distinct keyword, longest first) and,
/// for each, the rules it stands for. Leftmost-first reports one pattern per
/// start position: with longest first that is the longest keyword there, and
/// every other keyword starting there is a prefix of it, so a pattern stands
/// for its own rules and those of its prefixes. Later start positions are
/// found by searching again from the next byte.
fn patterns(rules: &[Rule], folds_case: bool) -> (Vec<String>, Vec<Vec<usize>>) {
    let mut by_keyword: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for (index, rule) in rules.iter().enumerate() {
        for keyword in &rule.spec.keywords {
            by_keyword.entry(keyword.as_str()).or_default().insert(index);
        }
    }
    let mut patterns: Vec<&str> = by_keyword.keys().copied().collect();
    patterns.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let is_prefix = |short: &str, long: &str| match folds_case {
        true => long.len() >= short.len() && long.as_bytes()[..short.len()].eq_ignore_ascii_case(short.as_bytes()),
        false => long.starts_with(short),
    };
    let pattern_rules = patterns
        .iter()
        .map(|long| {
            let prefixes = by_keyword.iter().filter(|(short, _)| is_prefix(short, long));
            prefixes.flat_map(|(_, rules)| rules.iter().copied()).collect::<BTreeSet<usize>>().into_iter().collect()
        })
        .collect();
    (patterns.into_iter().map(str::to_string).collect(), pattern_rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_stands_for_the_rules_of_its_prefixes() {
        let packs = pack::embedded().unwrap();
        let mut rules: Vec<Rule> = packs.into_iter().flat_map(|(_, r)| r).take(2).collect();
        rules[0].spec.keywords = vec!["patch -".to_string()];
        rules[1].spec.keywords = vec!["patch --".to_string(), "PATCH".to_string()];
        let (order, exact) = patterns(&rules, false);
        assert_eq!(order, ["patch --", "patch -", "PATCH"]);
        assert_eq!(exact, [vec![0, 1], vec![0], vec![1]]);
        let (_, folded) = patterns(&rules, true);
        assert_eq!(folded, [vec![0, 1], vec![0, 1], vec![1]], "folding case, PATCH is a prefix of the others");
    }
}
