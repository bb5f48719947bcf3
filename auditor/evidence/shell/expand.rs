//! What bash makes of a word before a command sees it, for the values a
//! script computes statically: `$VAR` and `${VAR}`, `${VAR:-default}`,
//! `${VAR#p}` / `${VAR%p}` trims, and the command substitutions a launch
//! script uses to build flags (`$(printf FORMAT ARGS)`, `$(awk
//! "BEGIN{print EXPR}")`). Anything else is left unresolved and said so.

use crate::evidence::shell::words::{self, Token, Word};
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A variable reference inside a word: `${NAME}`, `${NAME:-default}`, a
/// `${NAME#p}`-style trim, or `$NAME`.
pub static VAR_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{(?P<b>[A-Za-z_][A-Za-z0-9_]*)(?::?-(?P<d>(?:[^{}]|\$\{[^{}]*\})*))?\}|\$\{(?P<t>[A-Za-z_][A-Za-z0-9_]*)(?P<op>##|#|%%|%)(?P<p>[^}]*)\}|\$(?P<n>[A-Za-z_][A-Za-z0-9_]*)")
            .expect("valid regex")
});

/// The parameter expansions bash evaluates without running a program,
/// beyond defaults and trims: `${X:+word}`, `${X/pat/rep}`,
/// `${X//pat/rep}`, `${X:offset[:length]}`, `${X^^}`, `${X,,}`.
static OTHER_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\{(?P<n>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<plus>:\+)(?P<pw>[^{}]*)|(?P<sub>//?)(?P<pat>[^/{}]*)/(?P<rep>[^{}]*)|:(?P<off>\d+)(?::(?P<len>\d+))?|(?P<case>\^\^|,,|\^|,))\}")
        .expect("valid regex")
});

/// `$(( expr ))`: bash integer arithmetic on literal numbers and variables.
static ARITH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\$\(\((?P<e>[^()]*(?:\([^()]*\)[^()]*)*)\)\)").expect("valid regex"));

/// One [`OTHER_REF`] expansion with `value` as the variable's.
fn other(caps: &regex::Captures, value: &str) -> Option<String> {
    if caps.name("plus").is_some() {
        return Some(if value.is_empty() { String::new() } else { caps["pw"].to_string() });
    }
    if let (Some(sub), Some(pat)) = (caps.name("sub"), caps.name("pat")) {
        let pat = pat.as_str();
        if pat.is_empty() || pat.contains(['*', '?', '[', '\\', '$']) {
            return None;
        }
        return Some(if sub.as_str() == "//" { value.replace(pat, &caps["rep"]) } else { value.replacen(pat, &caps["rep"], 1) });
    }
    if let Some(off) = caps.name("off") {
        let chars: Vec<char> = value.chars().collect();
        let start = off.as_str().parse::<usize>().ok()?.min(chars.len());
        let end = match caps.name("len") {
            Some(len) => start.saturating_add(len.as_str().parse::<usize>().ok()?).min(chars.len()),
            None => chars.len(),
        };
        return Some(chars[start..end].iter().collect());
    }
    match caps.name("case").map(|c| c.as_str()) {
        Some("^^") => Some(value.to_uppercase()),
        Some(",,") => Some(value.to_lowercase()),
        Some("^") => Some(value.chars().take(1).flat_map(char::to_uppercase).chain(value.chars().skip(1)).collect()),
        Some(",") => Some(value.chars().take(1).flat_map(char::to_lowercase).chain(value.chars().skip(1)).collect()),
        _ => None,
    }
}

/// `$(( expr ))` with `vars`: names (with or without `$`) replaced by their
/// values, then evaluated; `None` when a name is unknown or it is not plain arithmetic.
fn arithmetic(expr: &str, vars: &HashMap<String, String>) -> Option<String> {
    static NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?").expect("valid regex"));
    let mut unknown = false;
    let plain = NAME.replace_all(expr, |caps: &regex::Captures| match vars.get(&caps[1]) {
        Some(v) => v.clone(),
        None => {
            unknown = true;
            String::new()
        }
    });
    if unknown {
        return None;
    }
    let n = arith(&plain)?;
    (n == n.trunc()).then(|| format!("{}", n as i64))
}

/// The value of a word with the references `vars` defines resolved, and
/// whether any part of it stays unresolved.
pub fn resolve(word: &Word, vars: &HashMap<String, String>) -> (String, bool) {
    if !word.expands {
        return (word.text.clone(), false);
    }
    let mut unresolved = false;
    let located = locate_substitutions(&word.text);
    let text = ARITH.replace_all(&located, |caps: &regex::Captures| match arithmetic(&caps["e"], vars) {
        Some(v) => v,
        None => {
            unresolved = true;
            caps[0].to_string()
        }
    });
    let text = OTHER_REF.replace_all(&text, |caps: &regex::Captures| {
        // A variable the input does not set may come from the environment: not known, not empty.
        match vars.get(&caps["n"]).and_then(|v| other(caps, v)) {
            Some(v) => v,
            None => {
                unresolved = true;
                caps[0].to_string()
            }
        }
    });
    let text = VAR_REF.replace_all(&text, |caps: &regex::Captures| {
        if let (Some(name), Some(op), Some(pattern)) = (caps.name("t"), caps.name("op"), caps.name("p")) {
            return match vars.get(name.as_str()).and_then(|v| trim(v, op.as_str(), pattern.as_str())) {
                Some(v) => v,
                None => {
                    unresolved = true;
                    caps[0].to_string()
                }
            };
        }
        let name = caps.name("b").or(caps.name("n")).map_or("", |m| m.as_str());
        match (vars.get(name), caps.name("d")) {
            (Some(v), _) => v.clone(),
            // `${A:-${B}/x}`: the default's own references resolve too.
            (None, Some(default)) if default.as_str().contains('$') => {
                let inner = Word { text: default.as_str().to_string(), span: (0, 0), expands: true };
                let (text, expands) = resolve(&inner, vars);
                unresolved |= expands;
                text
            }
            (None, Some(default)) => default.as_str().to_string(),
            (None, None) => {
                unresolved = true;
                caps[0].to_string()
            }
        }
    });
    // `$1`, `$@`, `$#`, `$?`: a function's or script's arguments and other
    // special parameters, which only the run knows.
    static SPECIAL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\$(?:[0-9@*#?!$-]|\{[0-9@*#?]+\})").expect("valid regex"));
    let leftover = text.contains("$(") || text.contains('`') || text.contains("${") || SPECIAL.is_match(&text);
    (text.into_owned(), unresolved || leftover)
}

/// `$(...)` substitutions that print where a package or the site
/// directory is installed ([`crate::evidence::shell::actions::module_location`]),
/// replaced by that place: `"$(pip show sglang | grep Location | cut -d' ' -f2)/sglang/x.py"`
/// names `site-packages/sglang/x.py`.
fn locate_substitutions(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("$(") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("$(") {
        let inner_start = start + 2;
        if rest[inner_start..].starts_with('(') {
            out.push_str(&rest[..inner_start]);
            rest = &rest[inner_start..];
            continue;
        }
        let mut depth = 1;
        let end = rest[inner_start..].char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(inner_start + i)
        });
        let Some(end) = end else { break };
        out.push_str(&rest[..start]);
        match crate::evidence::shell::actions::module_location(&rest[inner_start..end]) {
            Some(place) => out.push_str(&place),
            None => out.push_str(&rest[start..=end]),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// `$(printf FORMAT ARGS...)` or `$(awk "BEGIN{print EXPR}")` with
/// `vars`; `None` when it is neither, an argument is unresolved, or the
/// format has conversions [`printf`] does not do.
pub fn command_substitution(value: &str, vars: &HashMap<String, String>) -> Option<String> {
    let inner = value.strip_prefix("$(")?.strip_suffix(')')?;
    let tokens = words::tokenize(inner).ok()?;
    let mut words = Vec::new();
    for token in &tokens {
        match token {
            Token::Word(w) => words.push(w),
            Token::Operator(..) => return None,
        }
    }
    let (program, rest) = words.split_first()?;
    // `$(awk "BEGIN{print (A-1)/K}")`: arithmetic on the script's values.
    if program.text == "awk" && rest.len() == 1 {
        let (text, expands) = resolve(rest[0], vars);
        let expr = text.trim().strip_prefix("BEGIN")?.trim().strip_prefix('{')?.strip_suffix('}')?.trim().strip_prefix("print")?;
        return (!expands).then(|| awk_number(arith(expr)?)).flatten();
    }
    if program.text != "printf" || rest.len() > 64 {
        return None;
    }
    let mut args = Vec::new();
    for word in rest {
        let (text, expands) = resolve(word, vars);
        if expands {
            return None;
        }
        args.push(text);
    }
    let (format, args) = args.split_first()?;
    if format.starts_with('-') {
        return None;
    }
    printf(format, args)
}

/// bash `printf FORMAT ARGS` for `%s`, `%d`/`%i`, `%f`/`%.Nf`, `%%` and
/// `\n`/`\t`/`\r`/`\\`/`\xHH`/`\NNN` escapes, with the format used once;
/// `None` otherwise.
pub(crate) fn printf(format: &str, args: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('\\') => out.push('\\'),
                // `\xHH` and `\NNN`: a byte by its hex or octal code (ASCII here).
                Some(radix @ ('x' | '0'..='7')) => {
                    let (base, most, mut digits) = if radix == 'x' { (16, 2, String::new()) } else { (8, 3, radix.to_string()) };
                    while digits.len() < most {
                        let Some(d) = chars.peek().filter(|d| d.is_digit(base)) else { break };
                        digits.push(*d);
                        chars.next();
                    }
                    let code = u8::from_str_radix(&digits, base).ok().filter(u8::is_ascii)?;
                    out.push(char::from(code));
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '%' => {
                let mut precision = None;
                if chars.peek() == Some(&'.') {
                    chars.next();
                    let mut digits = String::new();
                    while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                        digits.push(*d);
                        chars.next();
                    }
                    precision = Some(digits.parse::<usize>().ok().filter(|p| *p <= 32)?);
                }
                let mut arg = || args.next().cloned().unwrap_or_default();
                match chars.next()? {
                    '%' if precision.is_none() => out.push('%'),
                    's' if precision.is_none() => out.push_str(&arg()),
                    'd' | 'i' if precision.is_none() => {
                        let a = arg().trim().to_string();
                        out.push_str(&if a.is_empty() { 0 } else { a.parse::<i64>().ok()? }.to_string());
                    }
                    'f' => {
                        let a = arg().trim().to_string();
                        let n = if a.is_empty() { 0.0 } else { a.parse::<f64>().ok().filter(|n| n.is_finite())? };
                        out.push_str(&format!("{n:.*}", precision.unwrap_or(6)));
                    }
                    _ => return None,
                }
            }
            _ => out.push(c),
        }
    }
    args.next().is_none().then_some(out)
}

/// A number as awk prints it (`%.6g`).
pub(crate) fn awk_number(n: f64) -> Option<String> {
    if !n.is_finite() {
        return None;
    }
    if n == n.trunc() && n.abs() < 1e15 {
        return Some(format!("{}", n as i64));
    }
    let digits = 5i32.saturating_sub(n.abs().log10().floor() as i32).clamp(0, 17) as usize;
    let text = format!("{n:.digits$}");
    Some(if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text })
}

/// `+ - * /` and parentheses over decimal numbers; `None` for anything else.
pub(crate) fn arith(expr: &str) -> Option<f64> {
    fn sum(t: &[u8], i: &mut usize, depth: usize) -> Option<f64> {
        let mut v = product(t, i, depth)?;
        while let Some(&op) = t.get(*i).filter(|c| **c == b'+' || **c == b'-') {
            *i += 1;
            let r = product(t, i, depth)?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Some(v)
    }
    fn product(t: &[u8], i: &mut usize, depth: usize) -> Option<f64> {
        let mut v = atom(t, i, depth)?;
        while let Some(&op) = t.get(*i).filter(|c| **c == b'*' || **c == b'/') {
            *i += 1;
            let r = atom(t, i, depth)?;
            v = if op == b'*' { v * r } else { v / r };
        }
        Some(v)
    }
    fn atom(t: &[u8], i: &mut usize, depth: usize) -> Option<f64> {
        match t.get(*i)? {
            b'(' if depth < 32 => {
                *i += 1;
                let v = sum(t, i, depth + 1)?;
                (t.get(*i) == Some(&b')')).then(|| *i += 1)?;
                Some(v)
            }
            b'-' => {
                *i += 1;
                atom(t, i, depth + 1).map(|v| -v)
            }
            _ => {
                let start = *i;
                while t.get(*i).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
                    *i += 1;
                }
                std::str::from_utf8(&t[start..*i]).ok()?.parse().ok()
            }
        }
    }
    let compact: Vec<u8> = expr.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    if compact.len() > 256 {
        return None;
    }
    let mut i = 0;
    let v = sum(&compact, &mut i, 0)?;
    (i == compact.len()).then_some(v)
}

/// `${V#p}`, `${V##p}`, `${V%p}`, `${V%%p}` for patterns that are a
/// literal with at most a `*` on the side away from the anchor (`*/`,
/// `/*`, `.sh`); `None` for other patterns.
fn trim(value: &str, op: &str, pattern: &str) -> Option<String> {
    let plain = |p: &str| !p.contains(['*', '?', '[', '$', '\\']);
    let prefix = op.starts_with('#');
    let longest = op.len() == 2;
    let out = match (prefix, pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (true, Some(lit), _) if plain(lit) && !lit.is_empty() => match if longest { value.rfind(lit) } else { value.find(lit) } {
            Some(i) => &value[i + lit.len()..],
            None => value,
        },
        (false, _, Some(lit)) if plain(lit) && !lit.is_empty() => match if longest { value.find(lit) } else { value.rfind(lit) } {
            Some(i) => &value[..i],
            None => value,
        },
        _ if plain(pattern) && prefix => value.strip_prefix(pattern).unwrap_or(value),
        _ if plain(pattern) => value.strip_suffix(pattern).unwrap_or(value),
        _ => return None,
    };
    Some(out.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_bash_evaluates_without_running_a_program() {
        let vars: HashMap<String, String> = [("Z", "0"), ("W", "10"), ("M", "dsv4"), ("K", "3")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let r = |text: &str| resolve(&Word { text: text.into(), span: (0, 0), expands: true }, &vars);
        assert_eq!(r("$((0+1))"), ("1".into(), false));
        assert_eq!(r("$((K + 1))"), ("4".into(), false));
        assert_eq!(r("${M:+1}"), ("1".into(), false));
        assert_eq!(r("${Z/0/1}"), ("1".into(), false));
        assert_eq!(r("${W//0/1}"), ("11".into(), false));
        assert_eq!(r("${W:0:1}"), ("1".into(), false));
        assert_eq!(r("${M^^}"), ("DSV4".into(), false));
        // A variable the input does not set is not known to be empty.
        assert!(r("${MODEL:+1}").1 && r("$((N+1))").1 && r("${X:0:1}").1);
        // Positional and special parameters are the run's.
        assert!(r("$1").1 && r("${2}").1 && r("x$@").1 && r("$#").1);
        // `${X:-1}` is a default, not an offset.
        assert_eq!(r("${X:-1}"), ("1".into(), false));
    }
}
