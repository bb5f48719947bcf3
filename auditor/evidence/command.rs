//! Launch command files (`sglang_command.txt`, `vllm_command.txt`, ...), which
//! InferenceX writes with bash `printf '%q '`: one shell-quoted argv per line.

use super::lines::Line;
use super::provenance::{FileRef, Provenance};
use super::shell::{self, ShellError};
use serde::Serialize;

/// One launch command: the argv a program received, without the
/// `NAME=value` prefixes (those are environment assignments).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    pub argv: Vec<String>,
    pub provenance: Provenance,
}

impl Command {
    /// The serving engine this command launches, if it launches one.
    pub fn engine(&self) -> Option<&'static str> {
        let words: Vec<&str> = self.argv.iter().take(4).map(String::as_str).collect();
        let has = |needle: &str| words.iter().any(|w| w.contains(needle));
        if has("sglang.launch_server") || (has("sglang") && has("serve")) {
            Some("sglang")
        } else if has("vllm.entrypoints") || (words.first().is_some_and(|w| w.ends_with("vllm")) && has("serve")) {
            Some("vllm")
        } else if has("trtllm-serve") || has("tensorrt_llm") {
            Some("trtllm")
        } else if has("atom.entrypoints") {
            Some("atom")
        } else {
            None
        }
    }
}

/// Parse one line of a command file; `Ok(None)` for a blank line.
pub fn parse_line(file: &FileRef, line: &Line) -> Result<Option<Command>, ShellError> {
    let words = shell::split_words(&line.text)?;
    let mut argv = words.into_iter().map(|w| w.text).skip_while(|w| shell::split_assignment(w).is_some());
    let Some(program) = argv.next() else { return Ok(None) };
    let argv = std::iter::once(program).chain(argv).collect();
    Ok(Some(Command { argv, provenance: Provenance::at_line(file, line.number, line.offset, line.text.trim_end()) }))
}

/// Whether a file name is a `%q` command file. `benchmark_command.txt` is
/// written with plain `echo`, so it is not one.
pub fn is_command_file(name: &str) -> bool {
    name.ends_with("_command.txt") && name != "benchmark_command.txt"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_without_env_prefix() {
        let line = Line { number: 1, offset: 0, text: r"A=1 python3 -m sglang.launch_server --x \{\}\ a ".into(), truncated: false };
        let cmd = parse_line(&FileRef::default(), &line).unwrap().unwrap();
        assert_eq!(cmd.argv, ["python3", "-m", "sglang.launch_server", "--x", "{} a"]);
        let blank = Line { number: 2, offset: 0, text: "  ".into(), truncated: false };
        assert_eq!(parse_line(&FileRef::default(), &blank).unwrap(), None);
    }

    #[test]
    fn engines() {
        let cmd = |argv: &[&str]| Command { argv: argv.iter().map(|s| s.to_string()).collect(), provenance: Provenance::at_line(&FileRef::default(), 1, 0, "") };
        assert_eq!(cmd(&["python3", "-m", "sglang.launch_server"]).engine(), Some("sglang"));
        assert_eq!(cmd(&["vllm", "serve", "/m"]).engine(), Some("vllm"));
        assert_eq!(cmd(&["trtllm-serve", "/m"]).engine(), Some("trtllm"));
        assert_eq!(cmd(&["python", "-m", "atom.entrypoints.openai_server"]).engine(), Some("atom"));
        assert_eq!(cmd(&["aiperf", "profile"]).engine(), None);
    }

    #[test]
    fn names() {
        assert!(is_command_file("sglang_command.txt"));
        assert!(!is_command_file("benchmark_command.txt"));
        assert!(!is_command_file("notes.txt"));
    }
}
