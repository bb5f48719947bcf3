//! Which lines of program output are shell statements, and how far each
//! runs. A log holds commands in several shapes: `set -x` traces (`+ cmd`),
//! literal `export`/`declare` lines, commands after a shell prompt in a
//! pasted terminal session ([`crate::evidence::shell::prompt`]), and bare launch lines of
//! console captures (`NAME=v python3 -m sglang.launch_server ...`). Such a
//! command may run over several lines: `\` continuations (a pasted
//! terminal shows bash's `> ` on each), or a quoted argument that spans
//! lines (`--speculative-config '{` ... `}'`). The statements found go to
//! [`crate::evidence::shell::scan`], the same parser scripts use.
//!
//! A bare line is read only when its command word (after `NAME=value`
//! words and wrappers such as `env`, `nohup`, `numactl`) starts a serving
//! engine, runs a container, or is `export`: prose that happens to contain
//! a command is not one.

use crate::evidence::shell::command::launch_of;
use crate::evidence::shell::prompt;
use crate::evidence::shell::script::{Segment, Statement, trailing_backslashes};
use crate::evidence::shell::words::env_prefix;
use crate::evidence::shell::words::{self, Token, Word};
use crate::evidence::text::lines::Line;
use crate::evidence::text::logline::Clean;
use regex::Regex;
use std::sync::LazyLock;

/// A `set -x` trace prefix: one or more `+` and a space.
static XTRACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\++ ").expect("valid regex"));

/// Most physical lines, and bytes, joined into one statement of a log.
const MAX_JOIN: usize = 64;
const MAX_JOIN_BYTES: usize = 256 << 10;

/// Programs that run the command after them (with their own options first).
const WRAPPERS: [&str; 12] = ["nohup", "numactl", "taskset", "time", "exec", "sudo", "stdbuf", "timeout", "srun", "mpirun", "chrt", "nice"];

/// How a statement started, which decides what of it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// A `set -x` trace, a literal `export`/`declare`/`unset`, or a command
    /// after a shell prompt: a statement whatever it runs.
    Statement,
    /// After a bare `# `, which is also how a comment looks: read only
    /// when it starts a serving engine (a commented-out `export` or
    /// `docker run ... was dropped` is a comment).
    HashPrompt,
    /// A bare line: read only when it starts a server or a container, or exports.
    Bare,
}

/// A statement still open over lines.
struct Pending {
    line: Line,
    segments: Vec<Segment>,
    start: Start,
    count: usize,
    /// The last line ended in a `\` continuation (else a quote is open).
    continued: bool,
    /// The first line had a record prefix (a CI collector's timestamp):
    /// its continuation lines carry one too.
    prefixed: bool,
}

/// What a log line turned out to be.
#[derive(Debug)]
pub enum LogEvent {
    /// A statement to read: its text is the command alone (trace marker
    /// or prompt removed); its segments place every word in the file.
    Statement(Statement),
    /// A line that started a statement but did not parse.
    Unparsed(Line),
}

/// Finds the shell statements in the lines of a log.
#[derive(Default)]
pub struct LogStatements {
    pending: Option<Pending>,
}

impl LogStatements {
    /// Whether a statement is open: the next line continues it.
    pub fn is_open(&self) -> bool {
        self.pending.is_some()
    }

    /// Read a line (and `clean`, the line without its log decorations).
    pub fn push(&mut self, line: &Line, clean: &Clean) -> Vec<LogEvent> {
        let message = clean.message();
        // Where the message starts in the raw line (approximate when ANSI codes were removed).
        let base = if line.text.ends_with(message) { line.text.len() - message.len() } else { 0 };
        let mut events = Vec::new();
        if let Some(mut p) = self.pending.take() {
            let mut text = message.trim_end();
            let mut at = base;
            // A quote left open by prose: a new log record or prompt ends it.
            if !p.continued && ((clean.is_record() && !p.prefixed) || prompt::strip(text).is_some()) {
                events.extend(abandon(p));
            } else {
                if p.start != Start::Bare
                    && let Some(rest) = text.strip_prefix("> ")
                {
                    text = rest;
                    at += 2;
                }
                if !p.continued {
                    p.line.text.push('\n');
                }
                p.segments.push(Segment { at: p.line.text.len(), number: line.number, offset: line.offset + at as u64 });
                p.line.text.push_str(text);
                p.count += 1;
                events.extend(self.settle(p));
                return events;
            }
        }
        if let Some((start, at)) = start_of(message) {
            let body = message[at..].trim_end();
            let offset = line.offset + (base + at) as u64;
            let first = Line { number: line.number, offset, text: body.to_string(), truncated: line.truncated };
            let segments = vec![Segment { at: 0, number: line.number, offset }];
            let p = Pending { segments, line: first, start, count: 1, continued: false, prefixed: clean.is_record() };
            events.extend(self.settle(p));
        }
        events
    }

    /// End of input: a statement still open is read as far as it goes.
    pub fn finish(&mut self) -> Vec<LogEvent> {
        self.pending.take().map(abandon).into_iter().flatten().collect()
    }

    /// Keep `p` open when it continues, else decide what it is.
    fn settle(&mut self, mut p: Pending) -> Option<LogEvent> {
        let text = &p.line.text;
        let room = p.count < MAX_JOIN && text.len() < MAX_JOIN_BYTES;
        if trailing_backslashes(text) % 2 == 1 && room {
            p.line.text.pop();
            p.continued = true;
            self.pending = Some(p);
            return None;
        }
        match words::tokenize(&p.line.text) {
            Ok(tokens) => statement(p, tokens),
            Err(_) if room => {
                p.continued = false;
                self.pending = Some(p);
                None
            }
            Err(_) => abandon(p),
        }
    }
}

/// A statement cut short: one that must be a statement is a problem; a
/// bare line that never closed its quote was prose.
fn abandon(p: Pending) -> Option<LogEvent> {
    if p.continued
        && let Ok(tokens) = words::tokenize(&p.line.text)
    {
        return statement(p, tokens);
    }
    (p.start == Start::Statement).then(|| LogEvent::Unparsed(Line { text: p.line.text.lines().next().unwrap_or("").to_string(), ..p.line }))
}

fn statement(p: Pending, tokens: Vec<Token>) -> Option<LogEvent> {
    let read = match p.start {
        Start::Statement => true,
        Start::HashPrompt => starts_server(&tokens, false, false),
        Start::Bare => starts_server(&tokens, true, true),
    };
    read.then_some(LogEvent::Statement(Statement { line: p.line, tokens, segments: p.segments }))
}

/// How a log message starts a statement, and where its command begins.
fn start_of(message: &str) -> Option<(Start, usize)> {
    if let Some(m) = XTRACE.find(message) {
        return Some((Start::Statement, m.end()));
    }
    if let Some(p) = prompt::strip(message) {
        return Some((if p.bare_hash { Start::HashPrompt } else { Start::Statement }, p.at));
    }
    let first = message.split_whitespace().next().unwrap_or("");
    if matches!(first, "export" | "unset" | "declare" | "typeset") {
        return Some((Start::Statement, message.len() - message.trim_start().len()));
    }
    bare_candidate(message).then_some((Start::Bare, message.len() - message.trim_start().len()))
}

/// A cheap look at a bare line before joining it: its first word after
/// `NAME=value` words names a program that may start a server, or the
/// line holds only assignments and continues on the next.
fn bare_candidate(message: &str) -> bool {
    let mut words = message.split_whitespace().skip_while(|w| w.split_once('=').is_some_and(|(n, _)| words::is_var_name(n)));
    match words.next() {
        None => false,
        Some("\\") => message.trim_end().ends_with('\\'),
        Some(word) => {
            let program = word.rsplit('/').next().unwrap_or(word);
            is_python(program) || WRAPPERS.contains(&program) || matches!(program, "env" | "vllm" | "sglang" | "trtllm-serve" | "docker" | "podman" | "nerdctl")
        }
    }
}

fn is_python(program: &str) -> bool {
    program.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Whether the first command of a statement starts a serving engine (or,
/// when asked, a container, or is `export`): its command word, after
/// `NAME=value` words, `env` and wrappers with their options, is the
/// launcher itself.
fn starts_server(tokens: &[Token], container_too: bool, export_too: bool) -> bool {
    let words: Vec<&Word> = tokens
        .iter()
        .map_while(|t| match t {
            Token::Word(w) => Some(w),
            Token::Operator(..) => None,
        })
        .collect();
    let (_, mut i) = env_prefix(&words, 0);
    while words.get(i).is_some_and(|w| WRAPPERS.contains(&w.text.rsplit('/').next().unwrap_or(""))) {
        i += 1;
        // The wrapper's options and their values: `-N 0`, `--membind=0`, `-c 0-7`, `3600`.
        while words.get(i).is_some_and(|w| w.text.starts_with('-') || is_option_value(&w.text)) {
            i += 1;
        }
        i = env_prefix(&words, i).1;
    }
    let rest: Vec<String> = words[i.min(words.len())..].iter().map(|w| w.text.clone()).collect();
    let Some(program) = rest.first().map(|w| w.rsplit('/').next().unwrap_or(w)) else { return false };
    if export_too && program == "export" {
        return true;
    }
    if matches!(program, "docker" | "podman" | "nerdctl") {
        return container_too && rest.get(1).is_some_and(|w| matches!(w.as_str(), "run" | "create"));
    }
    let Some((_, args)) = launch_of(&rest) else { return false };
    // The engine word: `vllm serve` / `sglang serve` take two words.
    let engine_word = if rest.get(args - 1).is_some_and(|w| w == "serve") { args - 2 } else { args - 1 };
    engine_word == 0 || (is_python(program) && rest[1..engine_word].iter().all(|w| w.starts_with('-')))
}

/// A wrapper option's value: digits, CPU lists and ranges, durations, masks.
fn is_option_value(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit()) && word.chars().all(|c| c.is_ascii_hexdigit() || matches!(c, ',' | '-' | ':' | '.' | 'x' | 's' | 'm' | 'h'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::text::lines::lines_of;
    use crate::evidence::text::logline;

    fn statements(text: &str) -> Vec<(u64, String)> {
        let mut log = LogStatements::default();
        let mut out = Vec::new();
        let mut take = |events: Vec<LogEvent>| {
            for e in events {
                if let LogEvent::Statement(s) = e {
                    out.push((s.line.number, s.line.text));
                }
            }
        };
        for line in lines_of(text) {
            take(log.push(&line, &logline::clean(&line.text)));
        }
        take(log.finish());
        out
    }

    #[test]
    fn bare_lines_are_read_only_when_they_start_a_server() {
        let got = statements(concat!(
            "SGLANG_X=1 python3 -m sglang.launch_server --tp 8\n",
            "The server was started with python3 -m sglang.launch_server --tp 8\n",
            "python3 -m pip install vllm\n",
            "nohup numactl --cpunodebind=0 -m 0 env A=1 vllm serve /m > log 2>&1 &\n",
            "python -u -m vllm.entrypoints.openai.api_server --model /m\n",
            "python3 bench.py --backend sglang.launch_server\n",
            "echo SGLANG_X=1 python3 -m sglang.launch_server\n",
            "time to run: 3s\n",
            "nohup bash -c 'python3 -m sglang.launch_server'\n",
            "timeout 3600 taskset -c 0-7 trtllm-serve /m\n",
            "docker run --rm -e A=1 img\n",
            "docker ps\n",
        ));
        let lines: Vec<u64> = got.iter().map(|(n, _)| *n).collect();
        assert_eq!(lines, [1, 4, 5, 10, 11], "{got:?}");
    }

    #[test]
    fn continuations_join_and_drop_the_backslash_and_ps2_prompt() {
        let got = statements("$ docker run --gpus all \\\n>   -e A=\"1\" \\  \n>   img\nout\nSGLANG_X=1 \\\n  vllm serve /m \\\n  --tp 8\n");
        assert_eq!(got[0], (1, "docker run --gpus all   -e A=\"1\"   img".to_string()));
        assert_eq!(got[1], (5, "SGLANG_X=1   vllm serve /m   --tp 8".to_string()));
    }

    #[test]
    fn a_quoted_argument_spans_lines_and_prose_quotes_do_not_swallow_the_log() {
        let got = statements("vllm serve /m --speculative-config '{\n  \"method\": \"mtp\"\n}' --tp 8\nnext\n");
        assert_eq!(got, [(1, "vllm serve /m --speculative-config '{\n  \"method\": \"mtp\"\n}' --tp 8".to_string())]);
        let got = statements("python3 -m sglang.launch_server didn't start\n[2026-07-01 15:18:36] x\n$ export A=1\n");
        assert_eq!(got, [(3, "export A=1".to_string())]);
        // A CI collector stamps every physical line, the quoted argument's too.
        let got = statements("2026-09-02T14:39:02Z + vllm serve /m --c '{\n2026-09-02T14:39:02Z   \"a\": 1\n2026-09-02T14:39:03Z }' --tp 8\n");
        assert_eq!(got, [(1, "vllm serve /m --c '{\n  \"a\": 1\n}' --tp 8".to_string())]);
    }

    #[test]
    fn a_bare_hash_prompt_reads_launches_not_commented_exports() {
        let got = statements("# export SGLANG_X=1\n# SGLANG_X=1 python3 -m sglang.launch_server --tp 8\n# vllm cli\n# docker run -e A=1 img was dropped\n");
        assert_eq!(got, [(2, "SGLANG_X=1 python3 -m sglang.launch_server --tp 8".to_string())]);
    }
}
