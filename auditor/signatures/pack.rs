//! Rule packs as data: the TOML format, its validation and where packs are
//! loaded from. A pack is kept apart from other TOML under `signatures/`
//! (such as the engine env catalog) by two things: it lives in
//! `signatures/packs/`, and it must open with a `[pack]` table, so a file
//! that is not a pack is rejected with a message that says so instead of
//! being half-read.
//!
//! Regexes may use `{{name}}` macros: the pack's own `[macros]` table, and
//! the built-in `{{cmd}}` (a shell command position, see [`CMD`]); macros
//! may use macros.

use crate::bundle::kind::FileKind;
use crate::finding::CHECK_IDS;
use crate::finding::Severity;
use regex::bytes::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// The packs embedded in the binary: the defaults that `--signatures DIR` replaces.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("signatures/packs/engine-patch.toml", include_str!("../../signatures/packs/engine-patch.toml")),
    ("signatures/packs/arch-override.toml", include_str!("../../signatures/packs/arch-override.toml")),
];

/// Where a word begins a shell command: the start of a line (after a `set -x`
/// trace marker `+`, a YAML list dash, a Dockerfile `RUN` or a workflow
/// `run:`), or after `;`, `&&`, `||`, `|`, `(`, `{`, `` ` ``, `$(` or
/// `sh -c '`; then any wrappers (`sudo`, `env`, `then`, ...) and `VAR=value`
/// prefixes. Text inside a comment or an `echo "..."` argument is not at a
/// command position, which is how rules tell a command from talk about one.
pub const CMD: &str = r#"(?:^\s*(?:\++\s+|-\s+|RUN\s+|run:\s*)?|[;&|({`]\s*|\$\(\s*|\s-c\s+['"])(?:(?:sudo|exec|nohup|time|env|command|xargs|stdbuf|eval|then|do|else|if|!)\s+(?:-\S+\s+)*)*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*"#;

#[derive(Debug, Error)]
pub enum PackError {
    #[error("{path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: not a rule pack: {message}")]
    NotAPack { path: String, message: String },
    #[error("{path}: rule {rule}: {message}")]
    Rule { path: String, rule: String, message: String },
    #[error("{path}: no rule packs (*.toml) in this directory")]
    Empty { path: String },
}

/// One pack file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pack {
    pub pack: PackHeader,
    #[serde(default)]
    pub macros: BTreeMap<String, String>,
    #[serde(default)]
    pub rule: Vec<RuleSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackHeader {
    /// The check id every rule of the pack feeds (a DESIGN check id).
    pub check: String,
    /// The check's title, used when no policy gives one.
    pub title: String,
    #[serde(default)]
    pub description: String,
}

/// A rule as written in a pack.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// `<check-id>/<name>`, stable forever.
    pub id: String,
    pub title: String,
    pub severity: Severity,
    /// File kinds it applies to (`script`, `command`, `log`, `json`, `yaml`, `python`, or `any`).
    pub kinds: Vec<String>,
    /// Literals for the prefilter; a line must hold one of them to be looked at.
    pub keywords: Vec<String>,
    #[serde(default = "yes")]
    pub case_sensitive: bool,
    /// Must match on the line that holds a keyword.
    #[serde(default)]
    pub regex: Option<String>,
    /// Lines whose first non-blank character is `#` are not looked at.
    #[serde(default = "yes")]
    pub skip_comments: bool,
    #[serde(default)]
    pub window: Option<WindowSpec>,
    pub remediation: String,
    pub examples: Examples,
}

/// A second regex that must match within the lines after the keyword line.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowSpec {
    /// How many following lines are looked at (at most [`MAX_WINDOW_LINES`]).
    pub lines: usize,
    pub regex: String,
}

/// Most lines a window may span; with [`MAX_WINDOW_BYTES`] this bounds the
/// look-ahead a scan ever buffers.
pub const MAX_WINDOW_LINES: usize = 200;
/// Most bytes of the following lines a window looks at.
pub const MAX_WINDOW_BYTES: usize = 64 << 10;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Examples {
    #[serde(rename = "match")]
    pub matches: Vec<String>,
    pub no_match: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A bitset of [`FileKind`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds(u16);

impl Kinds {
    pub fn contains(self, kind: FileKind) -> bool {
        self.0 & (1 << kind as u16) != 0
    }

    /// The first kind in the set, the one examples are tested as.
    pub fn first(self) -> FileKind {
        FileKind::ALL.into_iter().find(|k| self.contains(*k)).unwrap_or(FileKind::Log)
    }

    /// The names of the kinds in the set, or `any`.
    pub fn names(self) -> Vec<&'static str> {
        if FileKind::ALL.iter().all(|k| self.contains(*k)) {
            return vec!["any"];
        }
        FileKind::ALL.into_iter().filter(|k| self.contains(*k)).map(FileKind::name).collect()
    }

    fn parse(names: &[String]) -> Result<Kinds, String> {
        let mut bits = 0u16;
        for name in names {
            bits |= match name.as_str() {
                "any" => FileKind::ALL.iter().fold(0, |acc, k| acc | 1 << *k as u16),
                other => match FileKind::ALL.into_iter().find(|k| k.name() == other) {
                    Some(kind) => 1 << kind as u16,
                    None => {
                        let known: Vec<&str> = FileKind::ALL.iter().map(|k| k.name()).collect();
                        return Err(format!("unknown file kind {other:?} (known: any, {})", known.join(", ")));
                    }
                },
            };
        }
        if bits == 0 {
            return Err("kinds is empty".to_string());
        }
        Ok(Kinds(bits))
    }
}

/// A rule after validation: regexes expanded and compiled. What the engine runs.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written (id, title, remediation, examples, regex source).
    pub spec: RuleSpec,
    /// The check id its findings feed (the part of the id before `/`).
    pub check: String,
    pub kinds: Kinds,
    pub regex: Option<Regex>,
    pub window: Option<Window>,
}

/// A compiled [`WindowSpec`].
#[derive(Debug, Clone)]
pub struct Window {
    pub lines: usize,
    pub regex: Regex,
}

/// Parse and validate one pack; `path` names it in errors.
pub fn parse(text: &str, path: &str) -> Result<(PackHeader, Vec<Rule>), PackError> {
    let not_a_pack = |message: String| PackError::NotAPack { path: path.to_string(), message };
    let value: toml::Table = toml::from_str(text).map_err(|e| not_a_pack(e.to_string()))?;
    if !value.contains_key("pack") {
        return Err(not_a_pack("it has no [pack] table (rule packs live in signatures/packs/)".to_string()));
    }
    let pack: Pack = toml::from_str(text).map_err(|e| not_a_pack(e.to_string()))?;
    if !CHECK_IDS.contains(&pack.pack.check.as_str()) {
        return Err(not_a_pack(format!("[pack] check {:?} is not a check id (known: {})", pack.pack.check, CHECK_IDS.join(", "))));
    }
    let mut rules = Vec::with_capacity(pack.rule.len());
    for spec in pack.rule {
        match compile(&pack.pack.check, &pack.macros, &spec) {
            Ok((kinds, regex, window)) => rules.push(Rule { spec, check: pack.pack.check.clone(), kinds, regex, window }),
            Err(message) => return Err(PackError::Rule { path: path.to_string(), rule: spec.id, message }),
        }
    }
    Ok((pack.pack, rules))
}

type Compiled = (Kinds, Option<Regex>, Option<Window>);

fn compile(check: &str, macros: &BTreeMap<String, String>, spec: &RuleSpec) -> Result<Compiled, String> {
    let name = spec.id.strip_prefix(check).and_then(|rest| rest.strip_prefix('/'));
    if !name.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')) {
        return Err(format!("id must be \"{check}/<name>\" with a lower-case kebab-case name"));
    }
    if spec.keywords.is_empty() || spec.keywords.iter().any(|k| k.trim().is_empty()) {
        return Err("keywords must be a non-empty list of non-blank literals".to_string());
    }
    if spec.examples.matches.is_empty() || spec.examples.no_match.is_empty() {
        return Err("needs at least one example in examples.match and one in examples.no_match".to_string());
    }
    let kinds = Kinds::parse(&spec.kinds)?;
    let regex = spec.regex.as_deref().map(|r| build(r, macros)).transpose()?;
    let window = match &spec.window {
        Some(w) if w.lines == 0 || w.lines > MAX_WINDOW_LINES => {
            return Err(format!("window.lines must be 1..={MAX_WINDOW_LINES}"));
        }
        Some(w) => Some(Window { lines: w.lines, regex: build(&w.regex, macros)? }),
        None => None,
    };
    Ok((kinds, regex, window))
}

fn build(source: &str, macros: &BTreeMap<String, String>) -> Result<Regex, String> {
    let expanded = expand(source, macros)?;
    Regex::new(&expanded).map_err(|e| format!("invalid regex: {e}"))
}

/// Deepest macro nesting followed (a macro may use `{{cmd}}` or another macro).
const MAX_MACRO_DEPTH: usize = 4;

/// Replace `{{name}}` with the pack macro or built-in of that name.
fn expand(regex: &str, macros: &BTreeMap<String, String>) -> Result<String, String> {
    expand_at(regex, macros, 0)
}

fn expand_at(regex: &str, macros: &BTreeMap<String, String>, depth: usize) -> Result<String, String> {
    if depth > MAX_MACRO_DEPTH {
        return Err(format!("macros nest deeper than {MAX_MACRO_DEPTH} levels (a macro that uses itself?)"));
    }
    let mut out = String::with_capacity(regex.len());
    let mut rest = regex;
    while let Some(open) = rest.find("{{") {
        let close = rest[open..].find("}}").ok_or_else(|| format!("unclosed {{{{ in regex {regex:?}"))?;
        let name = &rest[open + 2..open + close];
        let body = match (name, macros.get(name)) {
            (_, Some(body)) => expand_at(body, macros, depth + 1)?,
            ("cmd", None) => CMD.to_string(),
            _ => return Err(format!("unknown macro {{{{{name}}}}} (define it under [macros])")),
        };
        out.push_str(&rest[..open]);
        out.push_str(&body);
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The embedded packs, parsed.
pub fn embedded() -> Result<Vec<(PackHeader, Vec<Rule>)>, PackError> {
    EMBEDDED.iter().map(|(path, text)| parse(text, path)).collect()
}

/// Every `*.toml` pack directly in `dir`, in name order.
pub fn load_dir(dir: &Path) -> Result<Vec<(PackHeader, Vec<Rule>)>, PackError> {
    let label = dir.display().to_string();
    let read_err = |source| PackError::Read { path: label.clone(), source };
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(PackError::Empty { path: label });
    }
    paths
        .iter()
        .map(|p| {
            let path = p.display().to_string();
            let text = std::fs::read_to_string(p).map_err(|source| PackError::Read { path: path.clone(), source })?;
            parse(&text, &path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r##"
[pack]
check = "engine-patch"
title = "t"
[macros]
where = 'site-packages'
[[rule]]
id = "engine-patch/x"
title = "x"
severity = "error"
kinds = ["script", "yaml"]
keywords = ["sed -i"]
regex = '{{cmd}}sed -i .*{{where}}'
remediation = "r"
examples.match = ["sed -i s/a/b/ site-packages/x.py"]
examples.no_match = ["# sed -i"]
"##;

    #[test]
    fn parses_and_expands_macros() {
        let (header, rules) = parse(MINIMAL, "p.toml").unwrap();
        assert_eq!(header.check, "engine-patch");
        let regex = rules[0].regex.as_ref().unwrap().as_str();
        assert!(regex.starts_with(CMD) && regex.ends_with("sed -i .*site-packages"), "{regex}");
        assert!(rules[0].kinds.contains(FileKind::Yaml) && !rules[0].kinds.contains(FileKind::Log));
        assert_eq!(rules[0].kinds.names(), ["script", "yaml"]);
    }

    #[test]
    fn rejects_what_is_not_a_pack_or_a_bad_rule() {
        let catalog = "[[engine]]\nname = \"sglang\"\n";
        assert!(parse(catalog, "engine-env.toml").unwrap_err().to_string().contains("no [pack] table"));
        let bad = |from: &str, to: &str| parse(&MINIMAL.replace(from, to), "p.toml").unwrap_err().to_string();
        assert!(bad("\"engine-patch/x\"", "\"arch-override/x\"").contains("id must be"));
        assert!(bad("check = \"engine-patch\"", "check = \"made-up\"").contains("not a check id"));
        assert!(bad("{{where}}", "{{nowhere}}").contains("unknown macro"));
        assert!(bad("{{where}}", "(").contains("invalid regex"));
        assert!(bad("where = 'site-packages'", "where = 'x{{where}}'").contains("nest deeper"));
        assert!(bad("\"yaml\"", "\"yml\"").contains("unknown file kind"));
        assert!(bad("examples.no_match = [\"# sed -i\"]", "examples.no_match = []").contains("at least one example"));
        assert!(bad("keywords = [\"sed -i\"]", "keywords = [\" \"]").contains("keywords"));
    }

    #[test]
    fn any_means_every_kind() {
        let kinds = Kinds::parse(&["any".to_string()]).unwrap();
        assert!(FileKind::ALL.iter().all(|k| kinds.contains(*k)));
        assert_eq!(kinds.names(), ["any"]);
    }
}
