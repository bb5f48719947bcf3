//! `while read NAMES; do BODY; done <<EOF` (or `<<< WORD`, `< FILE`): bash
//! runs BODY once per input line, in this shell, with NAMES bound to the
//! line's fields, so `export "$k=$v"` there sets whatever the input names.
//! The loop is taken from the script's lines as written, so that the
//! scanner can replay it once its input is known (a heredoc's body comes
//! after the `done` that opens it). A loop fed by a pipe runs in a subshell
//! and is not captured: what it exports dies with it.

use super::words;

/// Lines a loop body may hold before the capture gives up on it.
const MAX_BODY: usize = 200;

/// A loop whose `done` has been read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadLoop {
    /// The names `read` assigns, in order.
    pub names: Vec<String>,
    /// `IFS=X` before `read`: the characters that split fields (whitespace when unset).
    pub ifs: Option<String>,
    /// The body's statements as written, one per line.
    pub body: Vec<String>,
    /// What feeds the loop.
    pub input: Input,
    /// The line of the `done` (a heredoc's body is opened there).
    pub done_at: u64,
}

/// What a `done` redirects into the loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// `done <<EOF`: the heredoc opened at the `done` line.
    Heredoc,
    /// `done <<< WORD`: the word as written.
    Herestring(String),
    /// `done < FILE`: the path as written.
    File(String),
}

/// The loop being read, from its `while read` to its `done`.
#[derive(Debug, Default)]
pub struct Capture {
    open: Option<Open>,
}

#[derive(Debug)]
struct Open {
    names: Vec<String>,
    ifs: Option<String>,
    body: Vec<String>,
    /// Loops nested inside the body that are still open.
    depth: usize,
}

impl Capture {
    /// One line of the script as written; returns the loop whose `done` it holds.
    pub fn line(&mut self, number: u64, text: &str) -> Option<ReadLoop> {
        let trimmed = text.trim();
        let Some(open) = self.open.as_mut() else {
            // The loop may follow other commands on its line (`a; while read ...`), never a pipe.
            let starts = trimmed.match_indices("while ").map(|(at, _)| at).filter(|at| {
                let before = trimmed[..*at].trim_end();
                before.is_empty() || before.ends_with(';') || before.ends_with("&&")
            });
            let (names, ifs, rest) = starts.into_iter().find_map(|at| header(&trimmed[at..]))?;
            let open = Open { names, ifs, body: Vec::new(), depth: 0 };
            // The whole loop on one line: `while read k v; do BODY; done <<EOF`.
            if let Some((body, tail)) = rest.rsplit_once("done") {
                let body = body.trim().trim_end_matches(';').trim();
                let open = Open { body: vec![body.to_string()], ..open };
                return finish(open, tail, number);
            }
            if !rest.trim().is_empty() {
                self.open = Some(Open { body: vec![rest.trim().to_string()], ..open });
            } else {
                self.open = Some(open);
            }
            return None;
        };
        let first = trimmed.split_whitespace().next().unwrap_or("");
        if first == "done" && open.depth == 0 {
            let open = self.open.take()?;
            return finish(open, &trimmed["done".len()..], number);
        }
        let closes_itself = trimmed.split(|c: char| c.is_whitespace() || c == ';').any(|w| w == "done");
        match first {
            "done" => open.depth -= 1,
            "while" | "until" | "for" | "select" if !closes_itself => open.depth += 1,
            _ => {}
        }
        // A heredoc inside the body cannot be replayed line by line.
        if trimmed.contains("<<") || open.body.len() >= MAX_BODY {
            self.open = None;
            return None;
        }
        if first == "do" {
            open.body.push(trimmed["do".len()..].trim().to_string());
        } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
            open.body.push(trimmed.to_string());
        }
        None
    }
}

/// `while [IFS=X] read [OPTIONS] NAMES; do [REST]`: the names, the IFS and
/// what follows `do`. `do` may also open the next line.
fn header(text: &str) -> Option<(Vec<String>, Option<String>, &str)> {
    let rest = text.strip_prefix("while ")?.trim_start();
    let (ifs, rest) = match rest.strip_prefix("IFS=") {
        Some(after) => {
            let end = after.find(' ')?;
            let raw = &after[..end];
            let value = match raw {
                r if r.starts_with("$'") => r.trim_start_matches("$'").trim_end_matches('\'').replace("\\t", "\t").replace("\\n", "\n"),
                r => r.trim_matches(|c| c == '\'' || c == '"').to_string(),
            };
            (Some(value), after[end..].trim_start())
        }
        None => (None, rest),
    };
    let rest = rest.strip_prefix("read ")?;
    let (head, body) = match rest.split_once(';') {
        Some((head, after)) => (head, after.trim_start().strip_prefix("do").unwrap_or(after)),
        None => (rest, ""),
    };
    let mut names = Vec::new();
    let mut words = head.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "-d" | "-p" | "-t" | "-n" | "-N" | "-u" | "-i" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w if words::is_var_name(w) => names.push(w.to_string()),
            _ => return None,
        }
    }
    (!names.is_empty()).then_some((names, ifs, body))
}

/// The loop closed by `done TAIL`, when TAIL feeds it from a heredoc,
/// here-string or file in this shell.
fn finish(open: Open, tail: &str, done_at: u64) -> Option<ReadLoop> {
    let tail = tail.trim();
    let input = if let Some(word) = tail.strip_prefix("<<<") {
        Input::Herestring(word.trim().to_string())
    } else if tail.starts_with("<<") {
        Input::Heredoc
    } else if let Some(path) = tail.strip_prefix('<') {
        Input::File(path.split_whitespace().next()?.to_string())
    } else {
        return None;
    };
    let body = open.body.into_iter().filter(|s| !s.is_empty()).collect();
    Some(ReadLoop { names: open.names, ifs: open.ifs, body, input, done_at })
}

/// What `read NAMES` assigns from one line: fields split at IFS
/// characters (whitespace when IFS is unset), the last name taking the
/// rest of the line; names past the fields get the empty string.
pub fn fields(names: &[String], ifs: Option<&str>, line: &str) -> Vec<(String, String)> {
    let is_sep = |c: char| match ifs {
        Some(set) => set.contains(c),
        None => c == ' ' || c == '\t' || c == '\n',
    };
    let mut rest = line.trim_matches(|c: char| is_sep(c) && c.is_whitespace());
    let mut out = Vec::new();
    for (k, name) in names.iter().enumerate() {
        if k + 1 == names.len() {
            out.push((name.clone(), rest.to_string()));
            break;
        }
        let (field, after) = match rest.find(is_sep) {
            Some(at) => (&rest[..at], &rest[at + rest[at..].chars().next().map_or(1, char::len_utf8)..]),
            None => (rest, ""),
        };
        out.push((name.clone(), field.to_string()));
        rest = after.trim_start_matches(|c: char| is_sep(c) && c.is_whitespace());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(text: &str) -> Option<ReadLoop> {
        let mut c = Capture::default();
        text.lines().enumerate().find_map(|(k, l)| c.line(k as u64 + 1, l))
    }

    #[test]
    fn loops_on_one_line_and_over_several() {
        let one = capture("while read -r k v; do export \"$k=$v\"; done <<EOF").unwrap();
        assert_eq!(
            (one.names.clone(), one.body.clone(), one.input.clone(), one.done_at),
            (vec!["k".into(), "v".into()], vec!["export \"$k=$v\"".into()], Input::Heredoc, 1)
        );
        let many = capture("while IFS== read -r name value\ndo\n  # set it\n  export \"$name=$value\"\ndone < /tmp/env.list").unwrap();
        assert_eq!(
            (many.ifs.as_deref(), many.body, many.input, many.done_at),
            (Some("="), vec!["export \"$name=$value\"".to_string()], Input::File("/tmp/env.list".into()), 5)
        );
        let here = capture("while read line; do\n  for x in a; do :; done\n  export \"$line\"\ndone <<< \"$LIST\"").unwrap();
        assert_eq!((here.body.len(), here.input), (2, Input::Herestring("\"$LIST\"".into())));
        // Fed by a pipe: a subshell, not captured.
        assert_eq!(capture("cat f | while read k; do export \"$k\"; done"), None);
        assert_eq!(capture("while read -r k v; do export \"$k=$v\"; done"), None);
        assert_eq!(capture("while true; do sleep 1; done <<EOF"), None);
        assert_eq!(capture("printf 'A=1' > /tmp/l; while read -r kv; do export \"$kv\"; done < /tmp/l").map(|l| l.input), Some(Input::File("/tmp/l".into())));
    }

    #[test]
    fn fields_split_as_read_splits_them() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(fields(&names(&["k", "v"]), None, "  A   1 2 "), [("k".into(), "A".into()), ("v".into(), "1 2".into())]);
        assert_eq!(fields(&names(&["k", "v"]), Some("="), "A=b=c"), [("k".into(), "A".into()), ("v".into(), "b=c".into())]);
        assert_eq!(fields(&names(&["a", "b", "c"]), None, "x"), [("a".into(), "x".into()), ("b".into(), "".into()), ("c".into(), "".into())]);
    }
}
