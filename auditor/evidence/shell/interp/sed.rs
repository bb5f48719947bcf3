//! `sed` where its output follows from its input: scripts of `s` commands
//! only (`s/RE/REPL/FLAGS`, any delimiter, `;`- or `-e`-separated), basic
//! or extended regular expressions, over a known input. The runners name
//! the image's squash file so (`echo "$IMAGE" | sed 's/[\/:@#]/_/g'`), and
//! a value the run computes the same way every time is a value the audit
//! can judge. Anything else (addresses, `-n`, `-i`, other commands, back
//! references in the pattern, case conversion) is left to the run.

use regex::Regex;

/// One `s` command.
struct Substitution {
    pattern: Regex,
    replacement: Vec<Part>,
    /// `g`: every match; else the `nth` (1-based) only.
    global: bool,
    nth: usize,
}

/// A piece of a replacement.
enum Part {
    Text(String),
    Group(usize),
}

/// What `sed` prints for `args` (its arguments, without `sed`) over `input`;
/// `None` when only the run knows (or a file argument, which the caller reads).
pub fn output(args: &[String], input: &str) -> Option<String> {
    let (commands, extended, files) = parse_args(args)?;
    if !files.is_empty() {
        return None;
    }
    let script: Vec<Substitution> = commands.iter().map(|c| parse_script(c, extended)).collect::<Option<Vec<_>>>()?.into_iter().flatten().collect();
    let mut out = String::new();
    let ends_with_newline = input.ends_with('\n');
    let body = input.strip_suffix('\n').unwrap_or(input);
    if input.is_empty() {
        return Some(String::new());
    }
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut space = line.to_string();
        for s in &script {
            space = s.apply(&space);
        }
        out.push_str(&space);
    }
    if ends_with_newline {
        out.push('\n');
    }
    Some(out)
}

/// The script texts, whether the expressions are extended, and the file arguments.
fn parse_args(args: &[String]) -> Option<(Vec<String>, bool, Vec<String>)> {
    let (mut scripts, mut extended, mut rest) = (Vec::new(), false, Vec::new());
    let mut i = 0;
    let mut options = true;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--" if options => options = false,
            "-e" | "--expression" if options => {
                scripts.push(args.get(i + 1)?.clone());
                i += 1;
            }
            "-E" | "-r" | "--regexp-extended" if options => extended = true,
            "--posix" if options => {}
            _ if options && a.starts_with("--expression=") => scripts.push(a["--expression=".len()..].to_string()),
            _ if options && a.starts_with("-e") && a.len() > 2 => scripts.push(a[2..].to_string()),
            // -n, -i, -s, -z, -f and any other option change what it prints or writes.
            _ if options && a.starts_with('-') && a.len() > 1 => return None,
            _ => rest.push(a.to_string()),
        }
        i += 1;
    }
    if scripts.is_empty() {
        if rest.is_empty() {
            return None;
        }
        scripts.push(rest.remove(0));
    }
    Some((scripts, extended, rest))
}

/// A script's `s` commands; `None` when it holds anything else.
fn parse_script(text: &str, extended: bool) -> Option<Vec<Substitution>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ';') {
            i += 1;
        }
        if i >= chars.len() {
            return Some(out);
        }
        if chars[i] != 's' {
            return None;
        }
        let delim = *chars.get(i + 1)?;
        if delim == '\\' || delim == '\n' {
            return None;
        }
        i += 2;
        let pattern = field(&chars, &mut i, delim)?;
        let replacement = field(&chars, &mut i, delim)?;
        let (mut global, mut nth, mut insensitive) = (false, 1, false);
        let mut number = String::new();
        while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
            match chars[i] {
                'g' => global = true,
                'I' | 'i' => insensitive = true,
                c if c.is_ascii_digit() => number.push(c),
                c if c.is_whitespace() => {}
                _ => return None,
            }
            i += 1;
        }
        if !number.is_empty() {
            nth = number.parse().ok().filter(|n| *n > 0)?;
        }
        if pattern.is_empty() || (global && !number.is_empty()) {
            return None;
        }
        let translated = translate(&pattern, extended)?;
        let pattern = regex::RegexBuilder::new(&translated).case_insensitive(insensitive).build().ok()?;
        out.push(Substitution { pattern, replacement: parse_replacement(&replacement)?, global, nth });
    }
}

/// The text up to the next unescaped `delim`, with `\delim` turned into
/// `delim` (as GNU sed does before compiling) and other escapes kept.
fn field(chars: &[char], i: &mut usize, delim: char) -> Option<String> {
    let mut out = String::new();
    while *i < chars.len() {
        let c = chars[*i];
        if c == '\\' {
            let next = *chars.get(*i + 1)?;
            if next == delim {
                out.push(delim);
            } else {
                out.push('\\');
                out.push(next);
            }
            *i += 2;
            continue;
        }
        *i += 1;
        if c == delim {
            return Some(out);
        }
        out.push(c);
    }
    None
}

/// A POSIX basic (or extended) expression in the `regex` crate's syntax.
fn translate(pattern: &str, extended: bool) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Where a `*` is literal in a basic expression: at the start, after `\(` or `^`.
    let mut at_start = true;
    while i < chars.len() {
        let c = chars[i];
        let start = at_start;
        at_start = false;
        match c {
            '\\' => {
                let next = *chars.get(i + 1)?;
                i += 2;
                match next {
                    '(' | ')' | '{' | '}' | '+' | '?' | '|' if !extended => {
                        out.push(next);
                        at_start = next == '(' || next == '|';
                    }
                    'n' => out.push_str("\\n"),
                    't' => out.push_str("\\t"),
                    'w' | 'W' | 's' | 'S' => {
                        out.push('\\');
                        out.push(next);
                    }
                    d if d.is_ascii_digit() => return None,
                    d if d.is_ascii_alphanumeric() || d == '<' || d == '>' || d == '`' || d == '\'' => return None,
                    other => out.push_str(&regex::escape(&other.to_string())),
                }
                continue;
            }
            '[' => {
                let (class, end) = bracket(&chars, i)?;
                out.push_str(&class);
                i = end;
                continue;
            }
            '(' | ')' | '{' | '}' | '+' | '?' | '|' if !extended => out.push_str(&regex::escape(&c.to_string())),
            '*' if start && !extended => out.push_str("\\*"),
            '^' if !start && !extended => out.push_str("\\^"),
            '^' => {
                out.push('^');
                at_start = true;
            }
            '$' if !extended && i + 1 < chars.len() && !(chars[i + 1] == '\\' && chars.get(i + 2) == Some(&')')) => out.push_str("\\$"),
            '(' | '|' => {
                out.push(c);
                at_start = true;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Some(out)
}

/// A bracket expression starting at `chars[start]` (`[`), POSIX rules (a
/// backslash is itself, `]` first is a member, `[:class:]` kept): the
/// `regex` crate's class and the index past it.
fn bracket(chars: &[char], start: usize) -> Option<(String, usize)> {
    let mut out = String::from("[");
    let mut i = start + 1;
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            out.push(']');
            return Some((out, i + 1));
        }
        first = false;
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '=' | '.')) {
            let kind = chars[i + 1];
            let close = (i + 2..chars.len().saturating_sub(1)).find(|&j| chars[j] == kind && chars[j + 1] == ']')?;
            if kind != ':' {
                return None;
            }
            out.extend(&chars[i..close + 2]);
            i = close + 2;
            continue;
        }
        match c {
            '\\' | '[' | '&' | '~' | '^' => {
                out.push('\\');
                out.push(c);
            }
            '-' if chars.get(i + 1) == Some(&'-') => return None,
            _ => out.push(c),
        }
        i += 1;
    }
}

/// `&` the match, `\N` group N, `\n` a newline, `\&` and `\\` themselves.
fn parse_replacement(text: &str) -> Option<Vec<Part>> {
    let mut out = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '&' => {
                out.push(Part::Text(std::mem::take(&mut literal)));
                out.push(Part::Group(0));
            }
            '\\' => match chars.next()? {
                d if d.is_ascii_digit() => {
                    out.push(Part::Text(std::mem::take(&mut literal)));
                    out.push(Part::Group(d.to_digit(10)? as usize));
                }
                'n' => literal.push('\n'),
                't' => literal.push('\t'),
                // Case conversion and other GNU escapes.
                c if c.is_ascii_alphabetic() => return None,
                other => literal.push(other),
            },
            '\n' => literal.push('\n'),
            _ => literal.push(c),
        }
    }
    out.push(Part::Text(literal));
    Some(out)
}

impl Substitution {
    fn apply(&self, line: &str) -> String {
        let mut out = String::new();
        let mut last = 0;
        for (n, caps) in self.pattern.captures_iter(line).enumerate() {
            let Some(whole) = caps.get(0) else { continue };
            if !self.global && n + 1 != self.nth {
                continue;
            }
            out.push_str(&line[last..whole.start()]);
            for part in &self.replacement {
                match part {
                    Part::Text(t) => out.push_str(t),
                    Part::Group(g) => out.push_str(caps.get(*g).map_or("", |m| m.as_str())),
                }
            }
            last = whole.end();
            if !self.global {
                break;
            }
        }
        out.push_str(&line[last..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::output;

    fn sed(script: &[&str], input: &str) -> Option<String> {
        output(&script.iter().map(|s| s.to_string()).collect::<Vec<_>>(), input)
    }

    #[test]
    fn substitutions_as_gnu_sed_prints_them() {
        assert_eq!(sed(&["s/[\\/:@#]/_/g"], "lmsysorg/sglang:v0.5@sha256:ab\n").as_deref(), Some("lmsysorg_sglang_v0.5_sha256_ab\n"));
        assert_eq!(sed(&["s|nvcr.io/|nvcr.io#|"], "nvcr.io/nvidia/x:1").as_deref(), Some("nvcr.io#nvidia/x:1"));
        assert_eq!(sed(&["-e", "s/a/b/", "-e", "s/b/c/2"], "aab\n").as_deref(), Some("bac\n"));
        assert_eq!(sed(&["s/\\(x\\)\\(y\\)/\\2\\1&/"], "xy").as_deref(), Some("yxxy"));
        assert_eq!(sed(&["-E", "s/(a+)b?/[\\1]/g"], "aab ab").as_deref(), Some("[aa] [a]"));
        assert_eq!(sed(&["s/a+/X/"], "a+a").as_deref(), Some("Xa"));
        assert_eq!(sed(&["s/^/> /;s/$/ </"], "l1\nl2\n").as_deref(), Some("> l1 <\n> l2 <\n"));
    }

    #[test]
    fn what_only_the_run_knows_is_left_to_it() {
        assert_eq!(sed(&["-i", "s/a/b/", "f"], "a"), None);
        assert_eq!(sed(&["-n", "s/a/b/p"], "a"), None);
        assert_eq!(sed(&["/x/d"], "a"), None);
        assert_eq!(sed(&["s/\\(a\\)\\1/b/"], "aa"), None);
        assert_eq!(sed(&["s/a/\\U&/"], "a"), None);
        assert_eq!(sed(&["s/a/b/", "file"], "a"), None);
    }
}
