//! The nesting pre-bound: a source whose syntax tree would be deeper than
//! the evaluator (or the tree's own drop) can walk on a thread's stack is
//! refused on its tokens, before it is parsed. The parser is table-driven
//! and does not recurse, but its tree does: `((((...))))` ten thousand deep,
//! `a+a+...+a` as one long chain, or `not not ... x` are each one path of
//! that length through the tree.

use rustpython_parser::lexer::{LexResult, lex};
use rustpython_parser::{Mode, StringKind, Tok};

/// Most brackets open at once.
const MAX_BRACKETS: usize = 100;
/// Most indentation levels.
const MAX_INDENT: usize = 100;
/// Most tokens on one path down the tree: the tokens of the open segments
/// (a segment ends at a comma, colon, semicolon or newline of its own
/// bracket level) plus the open brackets and indentation.
const MAX_CHAIN: usize = 1_000;

/// The source's tokens, or the byte offset and reason it is refused. A
/// lexical error ends the tokens early; the parser reports it.
pub(super) fn tokens(source: &str, mode: Mode) -> Result<Vec<LexResult>, (u32, String)> {
    let mut out = Vec::new();
    // One open-segment token count per bracket level (the outermost is the statement).
    let mut segments: Vec<usize> = vec![0];
    let mut chain = 0usize;
    let mut indent = 0usize;
    for token in lex(source, mode) {
        let Ok((tok, range)) = &token else {
            out.push(token);
            break;
        };
        let at = u32::from(range.start());
        match tok {
            Tok::Lpar | Tok::Lsqb | Tok::Lbrace => {
                if segments.len() > MAX_BRACKETS {
                    return Err((at, format!("brackets nested deeper than {MAX_BRACKETS}")));
                }
                if let Some(top) = segments.last_mut() {
                    *top += 1;
                    chain += 1;
                }
                segments.push(0);
            }
            Tok::Rpar | Tok::Rsqb | Tok::Rbrace => {
                if segments.len() > 1 {
                    chain -= segments.pop().unwrap_or(0);
                }
            }
            Tok::Comma | Tok::Colon | Tok::Semi | Tok::Newline => {
                if let Some(top) = segments.last_mut() {
                    chain -= *top;
                    *top = 0;
                }
            }
            Tok::Indent => {
                indent += 1;
                if indent > MAX_INDENT {
                    return Err((at, format!("blocks nested deeper than {MAX_INDENT}")));
                }
            }
            Tok::Dedent => indent = indent.saturating_sub(1),
            Tok::String { value, kind: StringKind::FString | StringKind::RawFString, .. } => {
                // An f-string's fields are parsed later, from the token's text.
                let mut depth = 0usize;
                let mut operators = 0usize;
                for c in value.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth = depth.saturating_sub(1),
                        c if depth > 0 && "+-*/%&|^~<>.([!@".contains(c) => operators += 1,
                        _ => {}
                    }
                }
                if depth > MAX_BRACKETS || operators > MAX_CHAIN {
                    return Err((at, format!("an f-string's fields nested or chained deeper than {MAX_CHAIN}")));
                }
                bump(&mut segments, &mut chain);
            }
            _ => bump(&mut segments, &mut chain),
        }
        if chain + segments.len() + indent > MAX_CHAIN {
            return Err((at, format!("an expression chained or nested deeper than {MAX_CHAIN}")));
        }
        out.push(token);
    }
    Ok(out)
}

fn bump(segments: &mut [usize], chain: &mut usize) {
    if let Some(top) = segments.last_mut() {
        *top += 1;
        *chain += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_sources_are_refused_and_ordinary_ones_pass() {
        assert!(tokens(&format!("x = {}1{}", "(".repeat(200), ")".repeat(200)), Mode::Module).is_err());
        assert!(tokens(&format!("x = {}1", "a + ".repeat(2000)), Mode::Module).is_err());
        assert!(tokens(&format!("x = {}1", "not ".repeat(2000)), Mode::Module).is_err());
        assert!(tokens(&format!("x = f'{{{}1}}'", "a+".repeat(2000)), Mode::Module).is_err());
        // A long literal is wide, not deep.
        let wide: String = (0..5000).map(|i| format!("'k{i}': {i}, ")).collect();
        assert!(tokens(&format!("d = {{{wide}}}\nprint(d)\n"), Mode::Module).is_ok());
        assert!(tokens("def f(x):\n    if x:\n        return (x + 1) * 2\n", Mode::Module).is_ok());
    }
}
