//! The compiled rule set: every keyword of every pack in one aho-corasick
//! automaton, so a file is searched once for all rules, and a table from
//! each keyword back to the rules that listed it. Only lines holding a
//! keyword are ever looked at by a rule's regex.

use super::pack::{self, PackError, PackHeader, Rule};
use super::stream::Stream;
use crate::evidence::provenance::FileRef;
use crate::evidence::FileKind;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// Rule packs compiled for scanning.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(super) rules: Vec<Rule>,
    checks: Vec<PackHeader>,
    pub(super) automaton: AhoCorasick,
    /// For each automaton pattern, the rules that listed it as a keyword.
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
        let mut patterns: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, rule) in rules.iter().enumerate() {
            for keyword in &rule.spec.keywords {
                patterns.entry(keyword.as_str()).or_default().push(index);
            }
        }
        let folds_case = rules.iter().any(|r| !r.spec.case_sensitive);
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .ascii_case_insensitive(folds_case)
            .build(patterns.keys())
            .map_err(|e| PackError::Rule { path: source.clone(), rule: "(all)".to_string(), message: format!("keywords: {e}") })?;
        let pattern_rules = patterns.into_values().collect();
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

    /// Start a push-style scan of one file: feed it bytes as they are read
    /// (e.g. by another parser reading the same stream), then finish it.
    /// Lines longer than `max_line` bytes are examined up to the cap only.
    pub fn stream(&self, file: FileRef, kind: FileKind, max_line: usize) -> Stream<'_> {
        Stream::new(self, file, kind, max_line)
    }

    /// Scan a whole reader as the file `file` of kind `kind`.
    pub fn scan_reader(&self, file: FileRef, kind: FileKind, max_line: usize, reader: &mut dyn Read) -> super::FileScan {
        let mut stream = self.stream(file, kind, max_line);
        stream.read_from(reader);
        stream.finish()
    }
}
