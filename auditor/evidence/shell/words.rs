//! Bash word splitting and unquoting, as bash itself reads a command line.
//!
//! Command files are written with `printf '%q '`, environment lines with
//! `export`, and traces with `set -x`; all of them quote the way bash does:
//! backslash escapes, `'...'`, `"..."`, ANSI-C `$'...'` and locale `$"..."`.
//! Expansions (`$VAR`, `$(...)`) are kept literally and flagged, never run.

use thiserror::Error;

/// A shell word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word's value as bash would pass it to a program.
    pub text: String,
    /// Byte span `[start, end)` of the raw word in the input line.
    pub span: (usize, usize),
    /// The word contains an unquoted or double-quoted expansion (`$X`,
    /// `${X}`, `$(...)`, backticks) whose value the text does not show.
    pub expands: bool,
}

/// A token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Word(Word),
    /// A control or redirection operator: `;`, `&&`, `||`, `|`, `&`, `(`, `)`, `<`, `>`, `>>`, ...
    Operator(String, usize),
}

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ShellError {
    #[error("unterminated {quote} quote starting at byte {at}")]
    Unterminated { quote: &'static str, at: usize },
}

/// Split one logical command line into tokens. A `#` at the start of a word
/// begins a comment that runs to the end of its line (a statement joined
/// over several lines, such as an array, may have comment lines inside).
pub fn tokenize(input: &str) -> Result<Vec<Token>, ShellError> {
    let bytes = input.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b' ' || c == b'\t' || c == b'\n' || c == b'\r' {
            i += 1;
            continue;
        }
        if c == b'#' {
            match input[i..].find('\n') {
                Some(nl) => {
                    i += nl + 1;
                    continue;
                }
                None => break,
            }
        }
        if let Some(op) = operator_at(input, i) {
            tokens.push(Token::Operator(op.to_string(), i));
            i += op.len();
            continue;
        }
        let (word, end) = read_word(input, i)?;
        tokens.push(Token::Word(word));
        i = end;
    }
    Ok(tokens)
}

/// A value single-quoted for bash: the one word it is, whatever it holds.
pub fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

/// The words of a simple command line (operators end the first command).
pub fn split_words(input: &str) -> Result<Vec<Word>, ShellError> {
    Ok(tokenize(input)?
        .into_iter()
        .map_while(|t| match t {
            Token::Word(w) => Some(w),
            Token::Operator(..) => None,
        })
        .collect())
}

const OPERATORS: [&str; 14] = ["&&", "||", ";;", ">>", "<<", "&>", ">&", "<&", ";", "&", "|", "(", ")", ">"];

fn operator_at(input: &str, i: usize) -> Option<&'static str> {
    let rest = &input[i..];
    if rest.starts_with('<') && !rest.starts_with("<<") && !rest.starts_with("<&") {
        return Some("<");
    }
    OPERATORS.iter().copied().find(|op| rest.starts_with(op))
}

fn is_word_end(input: &str, i: usize) -> bool {
    let c = input.as_bytes()[i];
    c == b' ' || c == b'\t' || c == b'\n' || c == b'\r' || operator_at(input, i).is_some()
}

fn read_word(input: &str, start: usize) -> Result<(Word, usize), ShellError> {
    let bytes = input.as_bytes();
    let mut text = String::new();
    let mut expands = false;
    let mut i = start;
    while i < bytes.len() && !is_word_end(input, i) {
        match bytes[i] {
            b'\\' => match input[i + 1..].chars().next() {
                Some('\n') => i += 2,
                Some(ch) => {
                    text.push(ch);
                    i += 1 + ch.len_utf8();
                }
                None => i += 1,
            },
            b'\'' => {
                let close = input[i + 1..].find('\'').ok_or(ShellError::Unterminated { quote: "single", at: i })?;
                text.push_str(&input[i + 1..i + 1 + close]);
                i += close + 2;
            }
            b'"' => {
                let (part, end, exp) = read_double_quoted(input, i)?;
                text.push_str(&part);
                expands |= exp;
                i = end;
            }
            b'$' if bytes.get(i + 1) == Some(&b'\'') => {
                let (part, end) = read_ansi_c(input, i + 1)?;
                text.push_str(&part);
                i = end;
            }
            b'$' if bytes.get(i + 1) == Some(&b'"') => {
                let (part, end, exp) = read_double_quoted(input, i + 1)?;
                text.push_str(&part);
                expands |= exp;
                i = end;
            }
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                let end = substitution_end(input, i + 1)?;
                text.push_str(&input[i..end]);
                expands = true;
                i = end;
            }
            b'$' | b'`' => {
                expands |= starts_expansion(bytes, i);
                text.push(bytes[i] as char);
                i += 1;
            }
            _ => {
                let ch = input[i..].chars().next().unwrap_or('\u{fffd}');
                text.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    Ok((Word { text, span: (start, i), expands }, i))
}

fn starts_expansion(bytes: &[u8], i: usize) -> bool {
    match bytes[i] {
        b'`' => true,
        _ => bytes.get(i + 1).is_some_and(|&n| n == b'{' || n == b'(' || n == b'_' || n.is_ascii_alphanumeric() || b"@*#?$!-".contains(&n)),
    }
}

/// Most nesting of `(` inside one `$(...)`.
const MAX_NESTING: usize = 64;

/// The index after the `)` that closes the `(` at `open` of a command
/// substitution `$(...)` (or arithmetic `$((...))`): quotes and nested
/// parentheses inside it are skipped as bash does.
fn substitution_end(input: &str, open: usize) -> Result<usize, ShellError> {
    let bytes = input.as_bytes();
    let unterminated = ShellError::Unterminated { quote: "command substitution", at: open.saturating_sub(1) };
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(unterminated);
                }
            }
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            b'\\' => i += 1,
            b'\'' => i += input[i + 1..].find('\'').ok_or(unterminated.clone())? + 1,
            b'"' => i = read_double_quoted(input, i)?.1 - 1,
            _ => {}
        }
        i += 1;
    }
    Err(unterminated)
}

/// `"..."` starting at the opening quote; returns the text, the index after
/// the closing quote, and whether an expansion occurs inside.
fn read_double_quoted(input: &str, open: usize) -> Result<(String, usize, bool), ShellError> {
    let bytes = input.as_bytes();
    let mut text = String::new();
    let mut expands = false;
    let mut i = open + 1;
    loop {
        match bytes.get(i) {
            None => return Err(ShellError::Unterminated { quote: "double", at: open }),
            Some(b'"') => return Ok((text, i + 1, expands)),
            Some(b'\\') => match bytes.get(i + 1) {
                Some(b'\n') => i += 2,
                Some(&n) if b"$`\"\\".contains(&n) => {
                    text.push(n as char);
                    i += 2;
                }
                _ => {
                    text.push('\\');
                    i += 1;
                }
            },
            Some(b'$') if bytes.get(i + 1) == Some(&b'(') => {
                let end = substitution_end(input, i + 1)?;
                text.push_str(&input[i..end]);
                expands = true;
                i = end;
            }
            Some(&c) => {
                if (c == b'$' || c == b'`') && starts_expansion(bytes, i) {
                    expands = true;
                }
                let ch = input[i..].chars().next().unwrap_or('\u{fffd}');
                text.push(ch);
                i += ch.len_utf8();
            }
        }
    }
}

/// ANSI-C `$'...'` starting at the quote after `$`.
fn read_ansi_c(input: &str, open: usize) -> Result<(String, usize), ShellError> {
    let bytes = input.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    let mut i = open + 1;
    loop {
        match bytes.get(i) {
            None => return Err(ShellError::Unterminated { quote: "ANSI-C", at: open - 1 }),
            Some(b'\'') => return Ok((String::from_utf8_lossy(&out).into_owned(), i + 1)),
            Some(b'\\') => {
                let (decoded, used) = ansi_c_escape(&bytes[i + 1..]);
                out.extend_from_slice(&decoded);
                i += 1 + used;
            }
            Some(&c) => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// Decode one escape after a backslash inside `$'...'`; returns the bytes and
/// how many input bytes the escape used.
fn ansi_c_escape(rest: &[u8]) -> (Vec<u8>, usize) {
    let Some(&c) = rest.first() else { return (b"\\".to_vec(), 0) };
    let simple = |b: u8| (vec![b], 1);
    match c {
        b'a' => simple(0x07),
        b'b' => simple(0x08),
        b'e' | b'E' => simple(0x1b),
        b'f' => simple(0x0c),
        b'n' => simple(b'\n'),
        b'r' => simple(b'\r'),
        b't' => simple(b'\t'),
        b'v' => simple(0x0b),
        b'\\' | b'\'' | b'"' | b'?' => simple(c),
        b'0'..=b'7' => {
            let digits = rest.iter().take(3).take_while(|d| (b'0'..=b'7').contains(d)).count();
            let value = rest[..digits].iter().fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
            (vec![(value & 0xff) as u8], digits)
        }
        b'x' => hex_escape(rest, 2, false),
        b'u' => hex_escape(rest, 4, true),
        b'U' => hex_escape(rest, 8, true),
        b'c' => match rest.get(1) {
            Some(&k) => (vec![k.to_ascii_uppercase() ^ 0x40], 2),
            None => (b"\\c".to_vec(), 1),
        },
        _ => (vec![b'\\', c], 1),
    }
}

fn hex_escape(rest: &[u8], max: usize, unicode: bool) -> (Vec<u8>, usize) {
    let digits = rest[1..].iter().take(max).take_while(|d| d.is_ascii_hexdigit()).count();
    if digits == 0 {
        return (vec![b'\\', rest[0]], 1);
    }
    let hex = std::str::from_utf8(&rest[1..=digits]).unwrap_or("0");
    let value = u32::from_str_radix(hex, 16).unwrap_or(0);
    let bytes = if unicode { char::from_u32(value).unwrap_or('\u{fffd}').to_string().into_bytes() } else { vec![value as u8] };
    (bytes, 1 + digits)
}

/// Split `NAME=value` when NAME is a valid shell variable name.
pub fn split_assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    is_var_name(name).then_some((name, value))
}

/// `[A-Za-z_][A-Za-z0-9_]*`
pub fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Leading `NAME=v` words and `env [-i] [-u NAME] NAME=v ...` from `start`:
/// the prefix items in order (an assignment, or `-u` with its name) and the
/// index of the command word.
pub(super) fn env_prefix<'w>(words: &[&'w Word], start: usize) -> (Vec<(&'w Word, Option<&'w Word>)>, usize) {
    let mut prefix = Vec::new();
    let mut i = start;
    loop {
        while i < words.len() && split_assignment(&words[i].text).is_some() {
            prefix.push((words[i], None));
            i += 1;
        }
        if words.get(i).is_some_and(|w| w.text.rsplit('/').next() == Some("env")) {
            i += 1;
            while let Some(w) = words.get(i).filter(|w| w.text.starts_with('-')) {
                if (w.text == "-u" || w.text == "--unset") && i + 1 < words.len() {
                    prefix.push((w, Some(words[i + 1])));
                    i += 1;
                }
                i += 1;
            }
            continue;
        }
        return (prefix, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<String> {
        split_words(line).unwrap().into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn printf_q_output_round_trips() {
        // What `printf '%q ' vllm serve ... --speculative-config '{"method": "mtp", ...}'` writes.
        let line = r#"vllm serve /data/models/X --speculative-config \{\"method\":\ \"mtp\",\ \"num_speculative_tokens\":\ 3\} --kv-cache-dtype fp8 "#;
        assert_eq!(
            texts(line),
            ["vllm", "serve", "/data/models/X", "--speculative-config", r#"{"method": "mtp", "num_speculative_tokens": 3}"#, "--kv-cache-dtype", "fp8"]
        );
    }

    #[test]
    fn ansi_c_quoting() {
        assert_eq!(texts(r"$'a\nb' $'\x41\101\u00e9' $'it\'s' $'\cA'"), ["a\nb", "AAé", "it's", "\u{1}"]);
    }

    #[test]
    fn single_double_and_mixed_quotes() {
        assert_eq!(texts(r#"'a b'"c \"d\" \x" e\ f $"g""#), [r#"a bc "d" \x"#, "e f", "g"]);
    }

    #[test]
    fn expansions_are_flagged_not_expanded() {
        let words = split_words(r#"A=$X B="${Y}" C='$Z' D=\$W"#).unwrap();
        let flags: Vec<_> = words.iter().map(|w| (w.text.as_str(), w.expands)).collect();
        assert_eq!(flags, [("A=$X", true), ("B=${Y}", true), ("C=$Z", false), ("D=$W", false)]);
    }

    #[test]
    fn operators_split_commands_and_comments_end_them() {
        let tokens = tokenize("export A=1; B=2 cmd && x # c").unwrap();
        let ops: Vec<_> = tokens
            .iter()
            .filter_map(|t| match t {
                Token::Operator(o, _) => Some(o.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ops, [";", "&&"]);
        assert_eq!(tokens.len(), 7);
        assert_eq!(texts("a#b c"), ["a#b", "c"]);
    }

    #[test]
    fn command_substitutions_are_one_word() {
        let words = split_words(r#"P=$(python3 -c "import x; print(x.__file__)") "a$(echo ")" b)c" $((1 + (2)))"#).unwrap();
        let got: Vec<_> = words.iter().map(|w| (w.text.as_str(), w.expands)).collect();
        assert_eq!(got, [(r#"P=$(python3 -c "import x; print(x.__file__)")"#, true), (r#"a$(echo ")" b)c"#, true), ("$((1 + (2)))", true)]);
        assert!(split_words("a $(b").is_err());
    }

    #[test]
    fn comments_end_at_the_line_end() {
        assert_eq!(texts("a # b )\nc"), ["a", "c"]);
    }

    #[test]
    fn unterminated_quotes_are_errors() {
        assert_eq!(split_words("a 'b"), Err(ShellError::Unterminated { quote: "single", at: 2 }));
        assert!(split_words("a \"b").is_err());
        assert!(split_words("$'b").is_err());
    }

    #[test]
    fn spans_point_at_raw_words() {
        let words = split_words("  ab 'c d'").unwrap();
        assert_eq!(words[0].span, (2, 4));
        assert_eq!(words[1].span, (5, 10));
    }

    #[test]
    fn assignments() {
        assert_eq!(split_assignment("SGLANG_X=1"), Some(("SGLANG_X", "1")));
        assert_eq!(split_assignment("--tp=4"), None);
        assert_eq!(split_assignment("1A=2"), None);
    }
}
