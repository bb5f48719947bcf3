//! Bash patterns (`case` arms, `[[ x == pat ]]`, `${x#pat}`), with
//! extended globbing, matched as bash matches them. A pattern becomes an
//! anchored regular expression (the regex crate runs in linear time, so a
//! hostile pattern cannot make matching blow up).

use regex::Regex;

/// One character of a pattern after expansion: quoted characters match
/// themselves only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatChar {
    pub c: char,
    pub quoted: bool,
}

/// Longest pattern compiled (characters).
const MAX_PATTERN: usize = 4096;

/// The anchored regular expression of a pattern, or `None` when it uses a
/// form this reader does not translate (`!(...)`).
pub fn compile(pattern: &[PatChar]) -> Option<Regex> {
    thread_local! {
        static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Option<Regex>>> = Default::default();
    }
    if pattern.len() > MAX_PATTERN {
        return None;
    }
    let mut re = String::from("(?s)^");
    translate(pattern, &mut re)?;
    re.push('$');
    if let Some(hit) = COMPILED.with(|c| c.borrow().get(&re).cloned()) {
        return hit;
    }
    let compiled = regex::RegexBuilder::new(&re).size_limit(1 << 20).build().ok();
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 4096 {
            c.clear();
        }
        c.insert(re, compiled.clone());
    });
    compiled
}

fn translate(p: &[PatChar], re: &mut String) -> Option<()> {
    let mut i = 0;
    while i < p.len() {
        let PatChar { c, quoted } = p[i];
        if quoted {
            re.push_str(&regex::escape(&c.to_string()));
            i += 1;
            continue;
        }
        // Extended globs: @(a|b) ?(a) *(a) +(a) !(a).
        if matches!(c, '@' | '?' | '*' | '+' | '!') && p.get(i + 1).is_some_and(|n| n.c == '(' && !n.quoted) {
            let close = matching_paren(p, i + 1)?;
            if c == '!' {
                return None;
            }
            let mut alts = Vec::new();
            for alt in split_alternatives(&p[i + 2..close]) {
                let mut sub = String::new();
                translate(alt, &mut sub)?;
                alts.push(sub);
            }
            let group = format!("(?:{})", alts.join("|"));
            re.push_str(&group);
            re.push_str(match c {
                '@' => "",
                '?' => "?",
                '*' => "*",
                _ => "+",
            });
            i = close + 1;
            continue;
        }
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '\\' => {
                if let Some(next) = p.get(i + 1) {
                    re.push_str(&regex::escape(&next.c.to_string()));
                    i += 1;
                } else {
                    re.push_str(r"\\");
                }
            }
            '[' => match bracket(p, i) {
                Some((class, end)) => {
                    re.push_str(&class);
                    i = end;
                }
                None => re.push_str(r"\["),
            },
            c => re.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    Some(())
}

fn matching_paren(p: &[PatChar], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, pc) in p.iter().enumerate().skip(open) {
        if pc.quoted {
            continue;
        }
        match pc.c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_alternatives(p: &[PatChar]) -> Vec<&[PatChar]> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, pc) in p.iter().enumerate() {
        if pc.quoted {
            continue;
        }
        match pc.c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '|' if depth == 0 => {
                out.push(&p[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&p[start..]);
    out
}

/// A bracket expression from `[` at `start`: the regex class and the index
/// of its closing `]`.
fn bracket(p: &[PatChar], start: usize) -> Option<(String, usize)> {
    let mut i = start + 1;
    let mut class = String::from("[");
    if p.get(i).is_some_and(|c| !c.quoted && (c.c == '!' || c.c == '^')) {
        class.push('^');
        i += 1;
    }
    let first = i;
    while i < p.len() {
        let pc = p[i];
        if pc.c == ']' && !pc.quoted && i > first {
            class.push(']');
            return Some((class, i));
        }
        if pc.c == '[' && !pc.quoted && p.get(i + 1).is_some_and(|c| c.c == ':') {
            // [:alpha:] and friends.
            let rest: String = p[i..].iter().map(|c| c.c).take(12).collect();
            if let Some(end) = rest.find(":]") {
                class.push_str(&rest[..end + 2]);
                i += end + 2;
                continue;
            }
        }
        match pc.c {
            '-' if !pc.quoted && i > first && p.get(i + 1).is_some_and(|c| c.c != ']') => class.push('-'),
            '\\' | '[' | ']' | '^' | '-' | '&' | '~' => {
                class.push('\\');
                class.push(pc.c);
            }
            c => class.push(c),
        }
        i += 1;
    }
    None
}

/// A pattern written entirely of unquoted characters (`case` arm text).
pub fn unquoted(text: &str) -> Vec<PatChar> {
    text.chars().map(|c| PatChar { c, quoted: false }).collect()
}

/// Whether the pattern has any character that matches more than itself.
pub fn has_magic(p: &[PatChar]) -> bool {
    p.iter().any(|c| !c.quoted && matches!(c.c, '*' | '?' | '['))
}

/// `s` matches `pattern` whole.
pub fn matches(pattern: &[PatChar], s: &str) -> Option<bool> {
    Some(compile(pattern)?.is_match(s))
}

/// The longest or shortest prefix of `s` the pattern matches, as a byte length.
pub fn prefix_len(pattern: &[PatChar], s: &str, longest: bool) -> Option<Option<usize>> {
    let re = compile(pattern)?;
    let mut ends: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    if longest {
        ends.reverse();
    }
    Some(ends.into_iter().find(|&e| re.is_match(&s[..e])))
}

/// The longest or shortest suffix of `s` the pattern matches: its start.
pub fn suffix_start(pattern: &[PatChar], s: &str, longest: bool) -> Option<Option<usize>> {
    let re = compile(pattern)?;
    let mut starts: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    if !longest {
        starts.reverse();
    }
    Some(starts.into_iter().find(|&b| re.is_match(&s[b..])))
}

/// `${s/pattern/rep}`: the first (or every) longest match replaced.
pub fn replace(pattern: &[PatChar], s: &str, rep: &str, all: bool, anchor: Option<bool>) -> Option<String> {
    let re = compile(pattern)?;
    let starts: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    match anchor {
        Some(true) => {
            let end = starts.iter().rev().find(|&&e| re.is_match(&s[..e]));
            return Some(match end {
                Some(&e) => format!("{rep}{}", &s[e..]),
                None => s.to_string(),
            });
        }
        Some(false) => {
            let start = starts.iter().find(|&&b| re.is_match(&s[b..]));
            return Some(match start {
                Some(&b) => format!("{}{rep}", &s[..b]),
                None => s.to_string(),
            });
        }
        None => {}
    }
    if pattern.is_empty() {
        return Some(s.to_string());
    }
    let mut out = String::new();
    let mut i = 0;
    let mut replaced = false;
    while i < s.len() {
        let found = if replaced && !all { None } else { starts.iter().rev().filter(|&&e| e > i).find(|&&e| re.is_match(&s[i..e])).copied() };
        match found {
            Some(e) => {
                out.push_str(rep);
                i = e;
                replaced = true;
            }
            None => {
                let c = s[i..].chars().next().expect("in bounds");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<PatChar> {
        unquoted(s)
    }

    #[test]
    fn globs_classes_and_extglobs() {
        assert_eq!(matches(&p("*.sh"), "a.sh"), Some(true));
        assert_eq!(matches(&p("*.sh"), "a.shx"), Some(false));
        assert_eq!(matches(&p("[a-c]?"), "bz"), Some(true));
        assert_eq!(matches(&p("[!a-c]?"), "bz"), Some(false));
        assert_eq!(matches(&p("@(true|1|yes)"), "yes"), Some(true));
        assert_eq!(matches(&p("@(true|1|yes)"), "no"), Some(false));
        assert_eq!(matches(&p("+(ab)"), "abab"), Some(true));
        assert_eq!(matches(&p("!(x)"), "y"), None);
        assert_eq!(matches(&p("a\\*"), "a*"), Some(true));
        assert_eq!(matches(&p("a\\*"), "ab"), Some(false));
        let quoted: Vec<PatChar> = "*".chars().map(|c| PatChar { c, quoted: true }).collect();
        assert_eq!(matches(&quoted, "x"), Some(false));
        assert_eq!(matches(&p("[[:digit:]]*"), "9a"), Some(true));
    }

    #[test]
    fn trims_and_replacements() {
        assert_eq!(prefix_len(&p("*/"), "/a/b/c", false), Some(Some(1)));
        assert_eq!(prefix_len(&p("*/"), "/a/b/c", true), Some(Some(5)));
        assert_eq!(suffix_start(&p("/*"), "/a/b/c", false), Some(Some(4)));
        assert_eq!(suffix_start(&p("/*"), "/a/b/c", true), Some(Some(0)));
        assert_eq!(replace(&p("0"), "100", "1", false, None).as_deref(), Some("110"));
        assert_eq!(replace(&p("0"), "100", "1", true, None).as_deref(), Some("111"));
        assert_eq!(replace(&p("a*"), "xaaay", "-", false, None).as_deref(), Some("x-"));
        assert_eq!(replace(&p("x"), "xax", "-", false, Some(true)).as_deref(), Some("-ax"));
        assert_eq!(replace(&p("x"), "xax", "-", false, Some(false)).as_deref(), Some("xa-"));
    }
}
