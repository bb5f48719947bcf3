//! Environment assignments, in the shapes they reach a server's log or a
//! launch record: env dump blocks printed at launch, `NAME=value` lines as
//! `env` prints them, `export` / `unset` statements (also inside `set -x`
//! traces), and `NAME=value` prefixes of a command. Every assignment keeps
//! the value as written; how the engine interprets it is [`super::knobs`].

use super::lines::Line;
use super::provenance::{FileRef, Provenance};
use super::shell::{self, Token};
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// How an assignment was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvOrigin {
    /// A line of an env dump block printed at launch (`=== ... env vars at launch ===`).
    DumpBlock,
    /// `export NAME=value`.
    Export,
    /// A bare `NAME=value` line (as `env` prints it, or a shell assignment).
    Assignment,
    /// `NAME=value` (or `env NAME=value`) in front of a command.
    CommandPrefix,
    /// `unset NAME`.
    Unset,
}

/// One assignment to an environment variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvAssignment {
    pub name: String,
    /// The value as the process sees it; `None` for `unset`.
    pub value: Option<String>,
    pub origin: EnvOrigin,
    /// The value contains an expansion (`$X`) whose result the input does not show.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expands: bool,
    /// Assignments in one scope belong to one process view (a dump block, a
    /// command, a script); the last one in a scope takes effect.
    pub scope: String,
    pub provenance: Provenance,
}

/// An env dump block: what a launch script printed of the server's environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDump {
    /// The header line, e.g. `=== SGLANG_* env vars at launch ===`.
    pub header: String,
    /// The variable-name prefix the dump lists (`SGLANG_`), when the header says;
    /// a variable with this prefix absent from a complete dump was not set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covers_prefix: Option<String>,
    /// The closing rule line was found.
    pub complete: bool,
    pub scope: String,
    pub provenance: Provenance,
}

static DUMP_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^=+ (?P<what>\S+) env vars at launch\b.*=+\s*$").expect("valid regex"));
static DUMP_END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^=+\s*$").expect("valid regex"));
/// A `set -x` trace prefix: one or more `+` and a space.
static XTRACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\++ ").expect("valid regex"));

/// How plain `NAME=value` lines of a file are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Output of programs: values are raw (as `env` prints them) and only
    /// upper-case names count as environment lines.
    Log,
    /// Shell source: values are shell words.
    Shell,
}

/// Line-by-line environment extraction with the state an env dump needs.
pub struct EnvScanner {
    file: FileRef,
    dialect: Dialect,
    open_dump: Option<EnvDump>,
    pub assignments: Vec<EnvAssignment>,
    pub dumps: Vec<EnvDump>,
    /// Lines that looked like environment statements but did not parse.
    pub problems: Vec<Provenance>,
}

impl EnvScanner {
    pub fn new(file: FileRef, dialect: Dialect) -> Self {
        EnvScanner { file, dialect, open_dump: None, assignments: Vec::new(), dumps: Vec::new(), problems: Vec::new() }
    }

    pub fn line(&mut self, line: &Line) {
        let text = line.text.as_str();
        if let Some(dump) = &mut self.open_dump {
            if DUMP_END.is_match(text) {
                dump.complete = true;
                self.close_dump();
                return;
            }
            let scope = dump.scope.clone();
            match shell::split_assignment(text) {
                Some((name, value)) => self.push(name, Some(value.to_string()), EnvOrigin::DumpBlock, false, &scope, line, text),
                // `env` prints a value with newlines over several lines.
                None => {
                    if let Some(last) = self.assignments.last_mut().filter(|a| a.scope == scope) {
                        if let Some(value) = &mut last.value {
                            value.push('\n');
                            value.push_str(text);
                        }
                    }
                }
            }
            return;
        }
        if let Some(caps) = DUMP_HEADER.captures(text) {
            let what = &caps["what"];
            let covers_prefix = what.strip_suffix('*').filter(|p| !p.is_empty()).map(str::to_string);
            self.open_dump = Some(EnvDump {
                header: text.to_string(),
                covers_prefix,
                complete: false,
                scope: format!("dump@{}", line.number),
                provenance: Provenance::at_line(&self.file, line.number, line.offset, text),
            });
            return;
        }
        self.statement(line);
    }

    /// End of input: a dump block still open was cut short.
    pub fn finish(&mut self) {
        self.close_dump();
    }

    fn close_dump(&mut self) {
        if let Some(dump) = self.open_dump.take() {
            self.dumps.push(dump);
        }
    }

    /// `export`, `unset`, bare assignments and command prefixes on one line.
    fn statement(&mut self, line: &Line) {
        let raw = line.text.as_str();
        let (body, trace_offset) = match XTRACE.find(raw) {
            Some(m) => (&raw[m.end()..], m.end()),
            None => (raw, 0),
        };
        let first = body.split_whitespace().next().unwrap_or("");
        let leading_assignment = shell::split_assignment(first).filter(|(n, _)| is_env_style(n));
        // In program output a whole `NAME=value` line is what `env` prints: the
        // value is raw, spaces included, unless the line is a command with a prefix.
        let env_line = self.dialect == Dialect::Log && trace_offset == 0 && leading_assignment.is_some() && body == body.trim_start();
        let shell_like = self.dialect == Dialect::Shell || trace_offset > 0 || matches!(first, "export" | "unset") || leading_assignment.is_some();
        if !shell_like {
            return;
        }
        let tokens = shell::tokenize(body);
        if env_line && !tokens.as_ref().is_ok_and(|t| is_prefixed_command(t)) {
            if let Some((name, value)) = shell::split_assignment(body) {
                self.push(name, Some(value.to_string()), EnvOrigin::Assignment, false, "file", line, body);
            }
            return;
        }
        match tokens {
            Ok(tokens) => self.statements(&tokens, line, trace_offset),
            Err(_) if matches!(first, "export" | "unset") || self.dialect == Dialect::Shell => {
                self.problems.push(Provenance::at_line(&self.file, line.number, line.offset, raw));
            }
            Err(_) => {}
        }
    }

    fn statements(&mut self, tokens: &[Token], line: &Line, base: usize) {
        for command in tokens.split(|t| matches!(t, Token::Operator(op, _) if op != ">" && op != "<" && op != ">>")) {
            let words: Vec<&shell::Word> = command
                .iter()
                .map_while(|t| match t {
                    Token::Word(w) => Some(w),
                    Token::Operator(..) => None,
                })
                .collect();
            let Some(first) = words.first() else { continue };
            let span_text = |w: &shell::Word| &line.text[base + w.span.0..base + w.span.1];
            let at = |w: &shell::Word| (line.offset + (base + w.span.0) as u64, span_text(w));
            match first.text.as_str() {
                "export" => {
                    for word in words.iter().skip(1).filter(|w| !w.text.starts_with('-')) {
                        if let Some((name, value)) = shell::split_assignment(&word.text) {
                            let (offset, text) = at(word);
                            self.push_at(name, Some(value.to_string()), EnvOrigin::Export, word.expands, "file", line.number, offset, text);
                        }
                    }
                }
                "unset" => {
                    for word in words.iter().skip(1).filter(|w| shell::is_var_name(&w.text)) {
                        let (offset, _) = at(first);
                        let text = &line.text[base + first.span.0..base + word.span.1];
                        self.push_at(&word.text, None, EnvOrigin::Unset, false, "file", line.number, offset, text);
                    }
                }
                _ => {
                    let assigns: Vec<_> = words.iter().take_while(|w| shell::split_assignment(&w.text).is_some()).collect();
                    if assigns.is_empty() {
                        continue;
                    }
                    let (origin, scope) = match words.len() > assigns.len() {
                        true => (EnvOrigin::CommandPrefix, format!("command@{}", line.number)),
                        false => (EnvOrigin::Assignment, "file".to_string()),
                    };
                    for word in assigns {
                        let Some((name, value)) = shell::split_assignment(&word.text) else { continue };
                        let (offset, text) = at(word);
                        self.push_at(name, Some(value.to_string()), origin, word.expands, &scope, line.number, offset, text);
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push(&mut self, name: &str, value: Option<String>, origin: EnvOrigin, expands: bool, scope: &str, line: &Line, text: &str) {
        let offset = line.offset + (text.as_ptr() as usize - line.text.as_ptr() as usize) as u64;
        self.push_at(name, value, origin, expands, scope, line.number, offset, text);
    }

    #[allow(clippy::too_many_arguments)]
    fn push_at(&mut self, name: &str, value: Option<String>, origin: EnvOrigin, expands: bool, scope: &str, line: u64, offset: u64, text: &str) {
        self.assignments.push(EnvAssignment {
            name: name.to_string(),
            value,
            origin,
            expands,
            scope: scope.to_string(),
            provenance: Provenance::at_line(&self.file, line, offset, text),
        });
    }
}

/// Whether tokens start with assignments followed by a command word.
fn is_prefixed_command(tokens: &[Token]) -> bool {
    let mut words = tokens.iter().map_while(|t| match t {
        Token::Word(w) => Some(w),
        Token::Operator(..) => None,
    });
    let mut saw_assignment = false;
    for word in words.by_ref() {
        if shell::split_assignment(&word.text).is_some() {
            saw_assignment = true;
        } else {
            return saw_assignment;
        }
    }
    false
}

/// Upper-case environment style: `[A-Z_][A-Z0-9_]*`.
fn is_env_style(name: &str) -> bool {
    shell::is_var_name(name) && !name.chars().any(|c| c.is_ascii_lowercase())
}

/// The assignments to `names` of one scope, resolved: the last one wins, and
/// `unset` removes. Returns the winning assignment, or `None` if unset/absent.
pub fn last_in_scope<'a>(assignments: impl IntoIterator<Item = &'a EnvAssignment>, name: &str) -> Option<&'a EnvAssignment> {
    assignments
        .into_iter()
        .filter(|a| a.name == name)
        .last()
        .filter(|a| a.value.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::lines::LineReader;

    fn scan(text: &str, dialect: Dialect) -> EnvScanner {
        let mut scanner = EnvScanner::new(FileRef { path: "f".into(), artifact: None }, dialect);
        let mut reader = LineReader::new(text.as_bytes(), 1 << 20);
        while let Some(line) = reader.next_line().unwrap() {
            scanner.line(&line);
        }
        scanner.finish();
        scanner
    }

    fn triples(s: &EnvScanner) -> Vec<(String, Option<String>, EnvOrigin)> {
        s.assignments.iter().map(|a| (a.name.clone(), a.value.clone(), a.origin)).collect()
    }

    #[test]
    fn dump_block_is_a_scope_of_its_own() {
        let s = scan(
            "=== SGLANG_* env vars at launch ===\nSGLANG_A=1\nSGLANG_B=x y\n===================================\nSGLANG_C=2\n",
            Dialect::Log,
        );
        assert_eq!(s.dumps.len(), 1);
        assert_eq!(s.dumps[0].covers_prefix.as_deref(), Some("SGLANG_"));
        assert!(s.dumps[0].complete);
        let a = &s.assignments;
        assert_eq!((a[0].origin, a[0].scope.as_str(), a[0].provenance.line), (EnvOrigin::DumpBlock, "dump@1", Some(2)));
        assert_eq!(a[1].value.as_deref(), Some("x y"));
        assert_eq!((a[2].origin, a[2].scope.as_str()), (EnvOrigin::Assignment, "file"));
        assert_eq!(a[0].provenance.span, Some((36, 46)));
    }

    #[test]
    fn variant_header_and_truncated_block() {
        let s = scan("=== SGLANG_SIMULATE_ACC_* env vars at launch (empty => real verification) ===\nSGLANG_SIMULATE_ACC_LEN=2.99\n", Dialect::Log);
        assert_eq!(s.dumps[0].covers_prefix.as_deref(), Some("SGLANG_SIMULATE_ACC_"));
        assert!(!s.dumps[0].complete);
        assert_eq!(s.assignments.len(), 1);
    }

    #[test]
    fn exports_traces_unset_and_prefixes() {
        let s = scan(
            "+ export SGLANG_X='1' B=\"2 3\"\nexport -n C\nunset SGLANG_X\nA=1 B=$Y python3 -m sglang.launch_server\n++ FOO=bar\n",
            Dialect::Log,
        );
        assert_eq!(
            triples(&s),
            [
                ("SGLANG_X".into(), Some("1".into()), EnvOrigin::Export),
                ("B".into(), Some("2 3".into()), EnvOrigin::Export),
                ("SGLANG_X".into(), None, EnvOrigin::Unset),
                ("A".into(), Some("1".into()), EnvOrigin::CommandPrefix),
                ("B".into(), Some("$Y".into()), EnvOrigin::CommandPrefix),
                ("FOO".into(), Some("bar".into()), EnvOrigin::Assignment),
            ]
        );
        assert!(s.assignments[4].expands);
        assert_eq!(s.assignments[3].scope, "command@4");
        assert_eq!(s.assignments[0].provenance.text, "SGLANG_X='1'");
        assert_eq!(s.assignments[0].provenance.span, Some((9, 21)));
    }

    #[test]
    fn log_dialect_keeps_raw_values_and_ignores_lowercase() {
        let s = scan("SGLANG_X='1'\nserver_args=ServerArgs(a=1)\n[2026] INFO X=1\n", Dialect::Log);
        assert_eq!(triples(&s), [("SGLANG_X".into(), Some("'1'".into()), EnvOrigin::Assignment)]);
    }

    #[test]
    fn shell_dialect_unquotes_and_reports_bad_lines() {
        let s = scan("x='1'; export Y=2\nexport Z='unterminated\n", Dialect::Shell);
        assert_eq!(triples(&s), [("x".into(), Some("1".into()), EnvOrigin::Assignment), ("Y".into(), Some("2".into()), EnvOrigin::Export)]);
        assert_eq!(s.problems.len(), 1);
    }

    #[test]
    fn last_assignment_wins_and_unset_removes() {
        let s = scan("export A=1\nexport A=2\n", Dialect::Shell);
        assert_eq!(last_in_scope(&s.assignments, "A").and_then(|a| a.value.as_deref()), Some("2"));
        let s = scan("export A=1\nunset A\n", Dialect::Shell);
        assert!(last_in_scope(&s.assignments, "A").is_none());
    }
}
