//! Shell scripts as bash reads them: `\` continuations join lines, a quote
//! left open continues on the next line, comments are not code, and a
//! heredoc body belongs to the command that reads it — Python for
//! `python3 - <<EOF`, shell for `bash <<EOF`, plain data for `cat > f <<EOF`
//! (written, not run here). An array assignment `CMD=(` ... `)` runs over
//! lines until its `)`, with comment lines inside it.

use crate::evidence::shell::words::{self, ShellError, Token};
use crate::evidence::text::lines::Line;

/// The language of a heredoc body, from the command that consumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLang {
    Python,
    Shell,
    /// Written to a file or a pipe: not executed by this script.
    Data,
}

/// A logical statement line: one or more physical lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The text with continuations removed; quoted newlines kept.
    pub line: Line,
    /// The tokens of `line.text`.
    pub tokens: Vec<Token>,
    /// Where each physical line starts in `line.text`, so that a word of a
    /// statement joined over lines is cited at its own line.
    pub segments: Vec<Segment>,
}

/// A physical line inside a joined statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Byte index in the joined text where the physical line starts.
    pub at: usize,
    /// Its line number and the file offset of its first byte.
    pub number: u64,
    pub offset: u64,
}

/// The physical line of byte `pos` of a joined statement: its number and
/// the file offset of `pos`. `None` without segments.
pub fn locate(segments: &[Segment], pos: usize) -> Option<(u64, u64)> {
    let k = segments.partition_point(|s| s.at <= pos).checked_sub(1)?;
    let s = segments[k];
    Some((s.number, s.offset + (pos - s.at) as u64))
}

/// What one physical line turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Statement(Statement),
    /// A line of a heredoc body, with the line of the statement that opened it.
    Body {
        lang: BodyLang,
        opened_at: u64,
        line: Line,
        /// The delimiter is unquoted: bash expands `$VAR` in the body.
        expands: bool,
    },
    /// A statement that could not be tokenized (an unterminated quote at the end of input).
    Unparsed(Line, ShellError),
}

/// Most physical lines joined into one statement while a quote stays open.
const MAX_JOIN: usize = 64;
/// Most physical lines joined into one array assignment.
const MAX_ARRAY_JOIN: usize = 1024;

struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    lang: BodyLang,
    opened_at: u64,
    expands: bool,
}

/// Turns physical lines into [`Event`]s.
#[derive(Default)]
pub struct ScriptReader {
    /// A statement still open: its text so far, its physical line count,
    /// whether it ended in a `\` continuation (joined without a newline),
    /// and where its physical lines start.
    pending: Option<(Line, usize, bool, Vec<Segment>)>,
    heredoc: Option<Heredoc>,
}

impl ScriptReader {
    pub fn push(&mut self, line: &Line) -> Vec<Event> {
        if let Some(doc) = &self.heredoc {
            let text = if doc.strip_tabs { line.text.trim_start_matches('\t') } else { line.text.as_str() };
            if text == doc.delimiter {
                self.heredoc = None;
                return Vec::new();
            }
            return vec![Event::Body { lang: doc.lang, opened_at: doc.opened_at, line: line.clone(), expands: doc.expands }];
        }
        let (mut joined, count, segments) = match self.pending.take() {
            Some((mut start, count, continued, mut segments)) => {
                if !continued {
                    start.text.push('\n');
                }
                segments.push(Segment { at: start.text.len(), number: line.number, offset: line.offset });
                start.text.push_str(&line.text);
                (start, count + 1, segments)
            }
            None => (line.clone(), 1, vec![Segment { at: 0, number: line.number, offset: line.offset }]),
        };
        // A trailing unescaped backslash continues the statement.
        if joined.text.ends_with('\\') && trailing_backslashes(&joined.text) % 2 == 1 && count < MAX_JOIN {
            joined.text.pop();
            self.pending = Some((joined, count, true, segments));
            return Vec::new();
        }
        match words::tokenize(&joined.text) {
            Ok(tokens) if count < MAX_ARRAY_JOIN && array_open(&tokens) => {
                self.pending = Some((joined, count, false, segments));
                Vec::new()
            }
            Ok(tokens) => {
                self.heredoc = heredoc_of(&tokens, &joined.text, joined.number);
                vec![Event::Statement(Statement { line: joined, tokens, segments })]
            }
            Err(_) if count < MAX_JOIN => {
                self.pending = Some((joined, count, false, segments));
                Vec::new()
            }
            Err(e) => vec![Event::Unparsed(joined, e)],
        }
    }

    /// End of input: a statement still open is reported as unparsed.
    pub fn finish(&mut self) -> Vec<Event> {
        match self.pending.take() {
            Some((line, _, _, segments)) => match words::tokenize(&line.text) {
                Ok(tokens) => vec![Event::Statement(Statement { line, tokens, segments })],
                Err(e) => vec![Event::Unparsed(line, e)],
            },
            None => Vec::new(),
        }
    }
}

/// Where an array assignment `NAME=(` / `NAME+=(` starts in `tokens`: the
/// index of its `(`.
pub fn array_start(tokens: &[Token]) -> Option<usize> {
    tokens
        .windows(2)
        .position(|pair| match pair {
            [Token::Word(w), Token::Operator(op, at)] => op == "(" && *at == w.span.1 && array_name(&w.text).is_some(),
            _ => false,
        })
        .map(|k| k + 1)
}

/// The array a word `NAME=` or `NAME+=` assigns, and whether it appends.
pub fn array_name(word: &str) -> Option<(&str, bool)> {
    let name = word.strip_suffix('=')?;
    match name.strip_suffix('+') {
        Some(base) if words::is_var_name(base) => Some((base, true)),
        _ if words::is_var_name(name) => Some((name, false)),
        _ => None,
    }
}

/// An array assignment whose `)` has not come yet.
fn array_open(tokens: &[Token]) -> bool {
    array_start(tokens).is_some_and(|open| !tokens[open..].iter().any(|t| matches!(t, Token::Operator(op, _) if op == ")")))
}

/// How many `\` end `text`: an odd count continues the line.
pub(super) fn trailing_backslashes(text: &str) -> usize {
    text.bytes().rev().take_while(|&b| b == b'\\').count()
}

/// The heredoc a statement opens, if any: `<<EOF`, `<<'EOF'`, `<<-EOF`.
/// Any quoting of the delimiter (`'EOF'`, `"EOF"`, `\EOF`) keeps the body literal.
fn heredoc_of(tokens: &[Token], text: &str, opened_at: u64) -> Option<Heredoc> {
    let at = tokens.iter().position(|t| matches!(t, Token::Operator(op, _) if op == "<<"))?;
    let Some(Token::Word(word)) = tokens.get(at + 1) else { return None };
    let (strip_tabs, delimiter) = match word.text.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (false, word.text.clone()),
    };
    let quoted = text.get(word.span.0..word.span.1).is_some_and(|raw| raw.contains(['\'', '"', '\\']));
    let command: Vec<&str> = tokens[..at]
        .iter()
        .rev()
        .take_while(|t| !matches!(t, Token::Operator(op, _) if op != ">" && op != ">>"))
        .filter_map(|t| match t {
            Token::Word(w) => Some(w.text.as_str()),
            Token::Operator(..) => None,
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .skip_while(|w| words::split_assignment(w).is_some())
        .collect();
    let program = command.first().map(|p| p.rsplit('/').next().unwrap_or(p)).unwrap_or("");
    let lang = if program.starts_with("python") {
        BodyLang::Python
    } else if matches!(program, "bash" | "sh" | "zsh" | "dash") {
        BodyLang::Shell
    } else {
        BodyLang::Data
    };
    Some(Heredoc { delimiter, strip_tabs, lang, opened_at, expands: !quoted })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::text::lines::lines_of;

    fn events(text: &str) -> Vec<Event> {
        let mut reader = ScriptReader::default();
        let mut out = Vec::new();
        for line in lines_of(text) {
            out.extend(reader.push(&line));
        }
        out.extend(reader.finish());
        out
    }

    fn statements(text: &str) -> Vec<(u64, String)> {
        events(text)
            .into_iter()
            .filter_map(|e| match e {
                Event::Statement(s) => Some((s.line.number, s.line.text)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn continuations_and_open_quotes_join_lines() {
        let got = statements("python3 -m sglang.launch_server \\\n  --tp 8 \\\n  --port 1\necho 'a\nb'\nx=1\n");
        assert_eq!(got, [(1, "python3 -m sglang.launch_server   --tp 8   --port 1".into()), (4, "echo 'a\nb'".into()), (6, "x=1".into())]);
    }

    #[test]
    fn heredoc_bodies_carry_their_language() {
        let text =
            "python3 - <<'PY'\nimport os\nos.environ['A'] = '1'\nPY\ncat > /tmp/x.sh <<-EOF\n\texport B=1\n\tEOF\nbash <<EOF\nexport C=1\nEOF\nexport D=1\n";
        let langs: Vec<(BodyLang, String)> = events(text)
            .into_iter()
            .filter_map(|e| match e {
                Event::Body { lang, line, .. } => Some((lang, line.text)),
                _ => None,
            })
            .collect();
        assert_eq!(
            langs,
            [
                (BodyLang::Python, "import os".into()),
                (BodyLang::Python, "os.environ['A'] = '1'".into()),
                (BodyLang::Data, "\texport B=1".into()),
                (BodyLang::Shell, "export C=1".into()),
            ]
        );
        assert_eq!(statements(text).last().unwrap().1, "export D=1");
    }

    #[test]
    fn arrays_run_to_their_closing_paren_with_comments_inside() {
        let got = statements("CMD=(\n  python3 -m sglang.launch_server\n  # --tp 8 (off)\n  --tp 4\n)\nCMD+=( --port 1 )\nx=1\n");
        assert_eq!(got[0], (1, "CMD=(\n  python3 -m sglang.launch_server\n  # --tp 8 (off)\n  --tp 4\n)".into()));
        assert_eq!(got[1..], [(6, "CMD+=( --port 1 )".into()), (7, "x=1".into())]);
        let open = events("A=(\n".repeat(3).as_str());
        assert!(open.len() <= 1, "an unclosed array is one statement at the end");
    }

    #[test]
    fn an_unterminated_quote_at_the_end_is_reported() {
        let got = events("export A='x\n");
        assert!(matches!(got.as_slice(), [Event::Unparsed(..)]));
    }
}
