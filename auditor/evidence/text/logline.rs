//! Log lines as they arrive from the wild: ANSI colour codes, docker-compose
//! service prefixes, ISO timestamps from CI log collectors, SGLang's
//! `[2026-07-01 15:18:36 DP1 TP3]` and vLLM's `(APIServer pid=12) INFO
//! 08-20 10:08:10 [utils.py:233]` prefixes. This module strips them and tells
//! a new log record from the continuation of a hard-wrapped one.

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

static ANSI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])").expect("valid regex"));

/// Prefixes that start a log record, tried in order and repeatedly.
static RECORD_PREFIXES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // ISO timestamp of CI and container log collectors.
        r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})? ",
        // SGLang: [2026-07-01 15:18:36(.123)? TP0 EP0 DP1 ...]
        r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?: [A-Z]{1,4}\d+)*\] ?",
        // Rank tags alone: [TP0] [DP1 TP3]
        r"^\[(?:[A-Z]{1,4}\d+ ?)+\] ?",
        // vLLM process tags: (APIServer pid=12) (EngineCore_DP0 pid=15)
        r"^\([\w.-]+ pid=\d+\) ?",
        // vLLM: INFO 08-20 10:08:10 [utils.py:233]
        r"^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \[[^\]]*\] ?",
        // INFO engine.py:177: / WARNING:root:
        r"^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ :] ?[\w./-]+:(?:\d+:)? ?",
        // Python logging default: 2026-07-01 15:18:36,123 - name - INFO -
        r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)? - [\w.-]+ - [A-Z]+ - ",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("valid regex"))
    .collect()
});

/// docker compose: `sglang-1  | `, `sglang_decode_1 | `.
static COMPOSE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][\w.-]*\s+\| ?").expect("valid regex"));

/// A log line with decorations removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clean<'a> {
    /// The line without ANSI codes and the compose prefix (what a wrapped
    /// continuation contributes).
    pub body: Cow<'a, str>,
    /// Byte length of the record prefixes at the start of `body`.
    pub prefix_len: usize,
}

impl Clean<'_> {
    /// The message after all prefixes.
    pub fn message(&self) -> &str {
        &self.body[self.prefix_len..]
    }

    /// Whether the line starts a new log record (rather than continuing one).
    pub fn is_record(&self) -> bool {
        self.prefix_len > 0
    }
}

/// Remove ANSI escape sequences.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if line.contains('\x1b') { ANSI.replace_all(line, "") } else { Cow::Borrowed(line) }
}

/// Strip ANSI codes and a compose prefix, and measure the record prefixes.
pub fn clean(line: &str) -> Clean<'_> {
    let plain = strip_ansi(line);
    let body: Cow<'_, str> = match COMPOSE.find(&plain) {
        // A compose prefix is only taken when what follows is a record or
        // the line would otherwise be unreadable; `a | b` in a message stays.
        Some(m) if m.start() == 0 && looks_like_compose(&plain[..m.end()]) => Cow::Owned(plain[m.end()..].to_string()),
        _ => plain,
    };
    let mut prefix_len = 0;
    'outer: loop {
        for re in RECORD_PREFIXES.iter() {
            if let Some(m) = re.find(&body[prefix_len..])
                && m.end() > 0
            {
                prefix_len += m.end();
                continue 'outer;
            }
        }
        break;
    }
    Clean { body, prefix_len }
}

/// `name-1  |` or `name_1 |`: compose pads service names and numbers replicas.
fn looks_like_compose(prefix: &str) -> bool {
    let name = prefix.split_whitespace().next().unwrap_or("");
    name.rsplit(['-', '_']).next().is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_ansi_and_prefixes() {
        let c = clean("\x1b[32m[2026-07-01 15:18:36 DP1 TP3 EP3]\x1b[0m server_args=ServerArgs(");
        assert_eq!(c.message(), "server_args=ServerArgs(");
        assert!(c.is_record());
        let c = clean("sglang-1  | [2026-07-01 15:18:36] hello");
        assert_eq!(c.message(), "hello");
        let c = clean("(EngineCore_DP0 pid=15) INFO 08-20 10:08:39 [core.py:93] Initializing a V1 LLM engine");
        assert_eq!(c.message(), "Initializing a V1 LLM engine");
        let c = clean("INFO engine.py:177: server_args={'a': 1}");
        assert_eq!(c.message(), "server_args={'a': 1}");
        let c = clean("2026-10-14T03:12:55.1234567Z [TP0] x");
        assert_eq!(c.message(), "x");
        let c = clean("2026-07-01 15:18:36,123 - sglang.srt - INFO - y");
        assert_eq!(c.message(), "y");
    }

    #[test]
    fn continuations_are_not_records() {
        for line in ["aft_model_path=None, tp_size=4)", "  'tp_size': 8}", "a | b", "x=1"] {
            let c = clean(line);
            assert!(!c.is_record(), "{line}");
            assert_eq!(c.body, line);
        }
    }
}
