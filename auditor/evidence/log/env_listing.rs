//! Environment printed by a program: the env dump blocks a launch script
//! prints of the server's environment, `NAME=value` listings as `env` and
//! `printenv` print them, and compose `environment:` blocks pasted into a
//! log — each line read without its log decorations.

use crate::evidence::env::{EnvAssignment, EnvDump, EnvOrigin, Scope};
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::shell::words;
use crate::evidence::text::lines::Line;
use crate::evidence::text::logline;
use crate::evidence::yaml::compose::ComposeBlocks;
use regex::Regex;
use std::sync::LazyLock;

static DUMP_HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^=+ (?P<what>\S+) env vars at launch\b.*=+\s*$").expect("valid regex"));
static DUMP_END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^=+\s*$").expect("valid regex"));

/// Reads env dump blocks, `env`-style listing lines and pasted compose
/// `environment:` blocks of program output, each line without its log
/// decorations (timestamps, compose service prefixes, colour codes).
pub struct ListingScanner {
    file: FileRef,
    open_dump: Option<EnvDump>,
    compose: ComposeBlocks,
    pub assignments: Vec<EnvAssignment>,
    pub dumps: Vec<EnvDump>,
}

impl ListingScanner {
    pub fn new(file: FileRef) -> Self {
        ListingScanner { compose: ComposeBlocks::new(file.clone()), file, open_dump: None, assignments: Vec::new(), dumps: Vec::new() }
    }

    /// Read one line; true when the line belonged to a dump block or listing.
    pub fn line(&mut self, line: &Line) -> bool {
        self.read(line, &logline::clean(&line.text))
    }

    /// [`Self::line`] for a line already cleaned of its log decorations.
    pub fn read(&mut self, line: &Line, clean: &logline::Clean) -> bool {
        let text = clean.message();
        // Where the message starts in the line (the whole line when colour codes were removed).
        let base = if line.text.ends_with(text) { line.text.len() - text.len() } else { 0 };
        let offset = line.offset + base as u64;
        if let Some(dump) = &mut self.open_dump {
            if DUMP_END.is_match(text) {
                dump.complete = true;
                self.close_dump();
                return true;
            }
            let scope = dump.scope.clone();
            match words::split_assignment(text) {
                Some((name, value)) => self.push(name, value, EnvOrigin::DumpBlock, scope.clone(), Provenance::at_line(&self.file, line.number, offset, text)),
                // `env` prints a value with newlines over several lines.
                None => {
                    if let Some(value) = self.assignments.last_mut().filter(|a| a.scope == scope).and_then(|a| a.value.as_mut()) {
                        value.push('\n');
                        value.push_str(text);
                    }
                }
            }
            return true;
        }
        if self.compose.line(line, text, offset, &mut self.assignments) {
            return true;
        }
        if let Some(caps) = DUMP_HEADER.captures(text) {
            let covers_prefix = caps["what"].strip_suffix('*').filter(|p| !p.is_empty()).map(str::to_string);
            self.open_dump = Some(EnvDump {
                header: text.to_string(),
                covers_prefix,
                complete: false,
                scope: Scope::Dump(line.number),
                provenance: Provenance::at_line(&self.file, line.number, offset, text),
            });
            return true;
        }
        // `env` output: a whole `NAME=value` line, the value raw (spaces
        // included); one that ends in a `\` continuation is a command's start.
        match words::split_assignment(text) {
            Some((name, value)) if is_env_style(name) && !looks_like_command(value) && !text.trim_end().ends_with('\\') => {
                self.push(name, value, EnvOrigin::Listing, Scope::Listing, Provenance::at_line(&self.file, line.number, offset, text));
                true
            }
            _ => false,
        }
    }

    /// Whether a dump block or compose block is open: the next line may belong to it.
    pub fn is_open(&self) -> bool {
        self.open_dump.is_some() || self.compose.is_open()
    }

    /// End of input: a dump block still open was cut short.
    pub fn finish(&mut self) {
        self.close_dump();
        self.compose.close(&mut self.assignments);
    }

    fn close_dump(&mut self) {
        if let Some(dump) = self.open_dump.take() {
            self.dumps.push(dump);
        }
    }

    fn push(&mut self, name: &str, value: &str, origin: EnvOrigin, scope: Scope, provenance: Provenance) {
        self.assignments.push(EnvAssignment::new(name, Some(value.to_string()), origin, scope, provenance));
    }
}

/// `A=1 python3 -m ...` is a command with a prefix, not a listing line: the
/// word after the value names a program or more assignments follow.
fn looks_like_command(value: &str) -> bool {
    let mut words = value.split_whitespace().skip(1);
    words.next().is_some_and(|w| {
        let program = w.rsplit('/').next().unwrap_or(w);
        words::split_assignment(w).is_some()
            || program.starts_with("python")
            || matches!(program, "bash" | "sh" | "env" | "vllm" | "sglang" | "trtllm-serve" | "numactl" | "srun" | "docker" | "exec" | "nohup")
    })
}

/// Upper-case environment style: `[A-Z_][A-Z0-9_]*`.
pub fn is_env_style(name: &str) -> bool {
    words::is_var_name(name) && !name.chars().any(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::text::lines::lines_of;

    fn scan(text: &str) -> ListingScanner {
        let mut scanner = ListingScanner::new(FileRef { path: "f".into(), artifact: None });
        for line in lines_of(text) {
            scanner.line(&line);
        }
        scanner.finish();
        scanner
    }

    #[test]
    fn dump_block_is_a_scope_of_its_own() {
        let s = scan("=== SGLANG_* env vars at launch ===\nSGLANG_A=1\nSGLANG_B=x y\n===================================\nSGLANG_C=2\n");
        assert_eq!(s.dumps.len(), 1);
        assert_eq!(s.dumps[0].covers_prefix.as_deref(), Some("SGLANG_"));
        assert!(s.dumps[0].complete);
        let a = &s.assignments;
        assert_eq!((a[0].origin, &a[0].scope, a[0].provenance.line), (EnvOrigin::DumpBlock, &Scope::Dump(1), Some(2)));
        assert_eq!(a[1].value.as_deref(), Some("x y"));
        assert_eq!((a[2].origin, &a[2].scope), (EnvOrigin::Listing, &Scope::Listing));
        assert_eq!(a[0].provenance.span, Some((36, 46)));
    }

    #[test]
    fn variant_header_and_truncated_block() {
        let s = scan("=== SGLANG_SIMULATE_ACC_* env vars at launch (empty => real verification) ===\nSGLANG_SIMULATE_ACC_LEN=2.99\n");
        assert_eq!(s.dumps[0].covers_prefix.as_deref(), Some("SGLANG_SIMULATE_ACC_"));
        assert!(!s.dumps[0].complete);
        assert_eq!(s.assignments.len(), 1);
    }

    #[test]
    fn decorated_listings_are_read_and_a_continued_line_is_not_one() {
        let s = scan("sglang-1  | SGLANG_A=1\n2026-10-14T03:12:55.123Z SGLANG_B=2\nSGLANG_C=1 \\\n");
        let got: Vec<_> = s.assignments.iter().map(|a| (a.name.as_str(), a.value.as_deref(), a.provenance.text.as_str())).collect();
        assert_eq!(got, [("SGLANG_A", Some("1"), "SGLANG_A=1"), ("SGLANG_B", Some("2"), "SGLANG_B=2")]);
        assert_eq!(s.assignments[0].provenance.span, Some((12, 22)));
    }

    #[test]
    fn listing_values_are_raw_and_lowercase_or_commands_are_not_listings() {
        let s = scan("SGLANG_X='1'\nserver_args=ServerArgs(a=1)\nA=1 python3 -m x\nB=two words\n");
        let got: Vec<_> = s.assignments.iter().map(|a| (a.name.as_str(), a.value.as_deref())).collect();
        assert_eq!(got, [("SGLANG_X", Some("'1'")), ("B", Some("two words"))]);
    }
}
