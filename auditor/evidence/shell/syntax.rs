//! Bash's grammar, through brush-parser (the parser of brush, a
//! bash-compatible shell), under bounds a hostile script cannot break.
//!
//! The parser and the word parser recurse once per nesting level (`{ {`,
//! `$( $(`, `${x:-${y:-`), and a deep enough nest overflows any stack, which
//! aborts the process rather than panicking. So a script is measured first
//! ([`nesting`], an upper bound of how deep anything in it nests) and one
//! nested past [`MAX_NESTING`] is refused with its line; the rest is parsed
//! and evaluated on a thread of its own with a stack sized for that bound
//! ([`on_large_stack`]).

use brush_parser::ast::Program;
use brush_parser::{Parser, ParserOptions};

/// Deepest nesting of brackets, braces and compound commands a script may
/// have. Real scripts nest a dozen deep; this leaves room and keeps the
/// parser's and the interpreter's recursion within [`STACK`].
pub const MAX_NESTING: usize = 200;

/// The stack of the thread that parses and evaluates a script: the parser
/// spends tens of kilobytes of stack per nesting level in a debug build.
pub const STACK: usize = 512 << 20;

/// Why a text could not be parsed as bash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxError {
    /// Nested deeper than [`MAX_NESTING`], first at `line`.
    TooDeep { line: u64 },
    /// Not bash: what the parser said, at `line` when it said where.
    Invalid { line: Option<u64>, message: String },
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SyntaxError::TooDeep { line } => write!(f, "nested more than {MAX_NESTING} deep (from line {line}): not parsed"),
            SyntaxError::Invalid { line: Some(line), message } => write!(f, "not valid bash at line {line}: {message}"),
            SyntaxError::Invalid { line: None, message } => write!(f, "not valid bash: {message}"),
        }
    }
}

/// The options every script is parsed with: bash's defaults for a script
/// (extended globbing on, as bash parses `[[ x == @(a|b) ]]` with it off
/// only in POSIX mode, tilde expansion at the start of a word).
pub fn options() -> ParserOptions {
    ParserOptions::default()
}

/// Texts at least this long are kept parsed ([`parse_shared`]).
const CACHED_TEXT: usize = 2048;
/// Most parsed texts kept.
const CACHED_PROGRAMS: usize = 64;

type Cache = std::collections::HashMap<[u8; 32], std::sync::Arc<Result<Program, SyntaxError>>>;

/// Parse a text, sharing the tree of a long text parsed before: a library
/// sourced by every script of a tree is parsed once.
pub fn parse_shared(text: &str) -> std::sync::Arc<Result<Program, SyntaxError>> {
    static CACHE: std::sync::LazyLock<std::sync::Mutex<Cache>> = std::sync::LazyLock::new(Default::default);
    if text.len() < CACHED_TEXT {
        return std::sync::Arc::new(parse(text));
    }
    let key: [u8; 32] = blake3::hash(text.as_bytes()).into();
    if let Some(hit) = CACHE.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let parsed = std::sync::Arc::new(parse(text));
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHED_PROGRAMS {
            cache.clear();
        }
        cache.insert(key, parsed.clone());
    }
    parsed
}

/// Parse a whole script.
pub fn parse(text: &str) -> Result<Program, SyntaxError> {
    if let Some(line) = too_deep(text) {
        return Err(SyntaxError::TooDeep { line });
    }
    let mut parser = Parser::new(std::io::BufReader::new(text.as_bytes()), &options());
    parser.parse_program().map_err(|e| {
        let message = e.to_string();
        let line = line_of_error(&message);
        SyntaxError::Invalid { line, message: message.lines().next().unwrap_or("").chars().take(200).collect() }
    })
}

/// The line a parser message names (`... at line 3 ...`, `3:14`).
fn line_of_error(message: &str) -> Option<u64> {
    let at = message.find("line ")?;
    message[at + 5..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
}

/// The first line at which `text` nests deeper than [`MAX_NESTING`], by an
/// upper bound: every `(`, `{`, `[` and opening keyword counts, whether
/// quoted or not, and closers only bring the count back down.
pub fn too_deep(text: &str) -> Option<u64> {
    let (depth, line) = nesting(text);
    (depth > MAX_NESTING).then_some(line)
}

/// How deep `text` nests at most (an upper bound of what the parser
/// recurses into), and the line where that depth is first reached.
pub fn nesting(text: &str) -> (usize, u64) {
    let mut depth: usize = 0;
    let mut max = 0;
    let mut max_line = 1;
    let mut line: u64 = 1;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => line += 1,
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            b'a'..=b'z' if i == 0 || !is_word_byte(bytes[i - 1]) => {
                let end = bytes[i..].iter().position(|b| !is_word_byte(*b)).map_or(bytes.len(), |n| i + n);
                match &text[i..end] {
                    "if" | "while" | "until" | "for" | "case" | "select" | "do" | "then" => depth += 1,
                    "fi" | "done" | "esac" => depth = depth.saturating_sub(2),
                    _ => {}
                }
                i = end;
                continue;
            }
            _ => {}
        }
        if depth > max {
            max = depth;
            max_line = line;
        }
        i += 1;
    }
    (max, max_line)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `text` holds `name` as a whole word, not inside a longer name
/// (`run_eval` in `x=$(run_eval)`, not in `run_eval_helper`).
pub fn names_word(text: &str, name: &str) -> bool {
    !name.is_empty()
        && text.match_indices(name).any(|(i, _)| {
            let before = i.checked_sub(1).map(|j| text.as_bytes()[j]);
            let after = text.as_bytes().get(i + name.len()).copied();
            !before.is_some_and(is_word_byte) && !after.is_some_and(is_word_byte)
        })
}

/// Run `f` on a thread with a [`STACK`]-sized stack (reserved, not
/// committed: only what the recursion touches is used). `None` if the
/// thread could not be started or `f` panicked.
pub fn on_large_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    crate::evidence::stack::with_room("bash", STACK, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_parse_and_syntax_errors_say_where() {
        assert!(parse("export A=1\nif true; then echo; fi\n").is_ok());
        match parse("echo ok\nif then fi fi\n") {
            Err(SyntaxError::Invalid { .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_deep_nest_is_refused_before_the_parser_sees_it() {
        let deep = format!("{}echo{}\n", "{ ".repeat(5000), "; }".repeat(5000));
        assert_eq!(parse(&format!("echo a\n{deep}")).err(), Some(SyntaxError::TooDeep { line: 2 }));
        let subst = format!("echo {}x{}\n", "$(".repeat(5000), ")".repeat(5000));
        assert!(matches!(parse(&subst), Err(SyntaxError::TooDeep { .. })));
        let words = format!("echo \"{}x{}\"\n", "${x:-".repeat(5000), "}".repeat(5000));
        assert!(matches!(parse(&words), Err(SyntaxError::TooDeep { .. })));
        let ifs = format!("{}echo; {}\n", "if true; then ".repeat(3000), "fi; ".repeat(3000));
        assert!(matches!(parse(&ifs), Err(SyntaxError::TooDeep { .. })));
    }

    #[test]
    fn the_deepest_allowed_nest_parses_on_the_large_stack() {
        let n = MAX_NESTING / 2 - 1;
        let script = format!("{}echo hi{}\n", "{ ".repeat(n), "; }".repeat(n));
        assert!(nesting(&script).0 <= MAX_NESTING);
        assert!(on_large_stack(|| parse(&script).is_ok()).unwrap());
        let ifs = format!("{}echo; {}\n", "if true; then ".repeat(n / 2), "fi; ".repeat(n / 2));
        assert!(on_large_stack(|| parse(&ifs).is_ok()).unwrap());
    }

    #[test]
    fn keywords_inside_words_do_not_count() {
        assert_eq!(nesting("echo diff done fifo\n").0, 0);
        assert_eq!(nesting("if a; then b; fi\n").0, 2);
    }
}
