//! Where a fact came from. Every fact and every finding carries one of these so
//! that a reviewer can open the exact file and line that proves it.

use serde::Serialize;

/// Longest matched text kept in a provenance record; longer text is cut and
/// marked with an ellipsis so that reports stay readable on megabyte lines.
pub const MAX_TEXT: usize = 240;

/// A location inside the audited input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// Path of the file inside the bundle (forward slashes, as archived).
    pub file: String,
    /// The artifact (top-level folder of a `gh run download` layout), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// 1-based line number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Byte span `[start, end)` of the matched text within the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<(u64, u64)>,
    /// The image layer (blob digest) the file or blob belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// The matched text, with secrets redacted.
    pub text: String,
}

impl Provenance {
    /// A location in `file` (at `line`, when known) showing `text` as given;
    /// no artifact, span or layer ([`Provenance::in_artifact`], [`Provenance::in_layer`] add them).
    pub fn new(file: impl Into<String>, line: Option<u64>, text: impl Into<String>) -> Self {
        Provenance { file: file.into(), artifact: None, line, span: None, layer: None, text: text.into() }
    }

    /// This location inside `artifact`.
    /// Where it is, for people: `file:line`, or the file alone.
    pub fn place(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.clone(),
        }
    }

    pub fn in_artifact(self, artifact: Option<String>) -> Self {
        Provenance { artifact, ..self }
    }

    /// This location inside image layer `layer`.
    pub fn in_layer(self, layer: Option<String>) -> Self {
        Provenance { layer, ..self }
    }

    /// A location at `line` covering `text`, which starts at byte `offset` of the file.
    pub fn at_line(file: &FileRef, line: u64, offset: u64, text: &str) -> Self {
        Provenance {
            file: file.path.clone(),
            artifact: file.artifact.clone(),
            line: Some(line),
            span: Some((offset, offset + text.len() as u64)),
            layer: None,
            text: clip(&redact(text)),
        }
    }
}

/// The file a parser is reading: its path inside the bundle and its artifact.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileRef {
    pub path: String,
    pub artifact: Option<String>,
}

/// Cut `text` to [`MAX_TEXT`] bytes on a character boundary.
pub fn clip(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_string();
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Whether an environment variable or option name usually holds a secret:
/// its last word is TOKEN, SECRET, PASSWORD, AUTH..., or it ends in an
/// API/ACCESS/PRIVATE/SECRET KEY (`HF_TOKEN`, `--api-key`,
/// `AWS_SECRET_ACCESS_KEY`; not `SGLANG_SIMULATE_ACC_TOKEN_MODE`).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper.split(['_', '-']).filter(|w| !w.is_empty()).collect();
    let Some(last) = words.last() else { return false };
    let before = words.len().checked_sub(2).map(|i| words[i]);
    matches!(*last, "TOKEN" | "SECRET" | "PASSWORD" | "PASSWD" | "APIKEY" | "CREDENTIAL" | "CREDENTIALS" | "AUTH" | "AUTHORIZATION")
        || (*last == "KEY" && matches!(before, Some("API" | "ACCESS" | "PRIVATE" | "SECRET")))
        || words.iter().any(|w| matches!(*w, "SECRET" | "PASSWORD"))
}

/// Replace the value of every `NAME=value` whose name looks secret with `<redacted>`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let before = &rest[..eq];
        let name_start = before.char_indices().rev().find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')).map_or(0, |(i, c)| i + c.len_utf8());
        let name = &before[name_start..];
        out.push_str(&rest[..=eq]);
        rest = &rest[eq + 1..];
        if !name.is_empty() && is_secret_name(name) {
            let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
            if end > 0 {
                out.push_str("<redacted>");
            }
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

/// A path inside a root (an archive's members, a layout's blobs): no `./`,
/// no leading `/`, `.` dropped, `..` resolved and stopped at the root — an
/// archive may name a member `../../x`; it is still inside the archive.
pub fn clamped(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_secret_values_only() {
        assert_eq!(redact("HF_TOKEN=hf_abc SGLANG_X=1"), "HF_TOKEN=<redacted> SGLANG_X=1");
        assert_eq!(redact("--api-key=sk-1 --port=8"), "--api-key=<redacted> --port=8");
        assert_eq!(redact("a=b"), "a=b");
        // Fuzz regression: a multi-byte character right before the name.
        assert_eq!(redact("\u{fffd}HF_TOKEN=x"), "\u{fffd}HF_TOKEN=<redacted>");
        assert_eq!(redact("é=1 ü=2"), "é=1 ü=2");
    }

    #[test]
    fn secret_names() {
        for name in ["HF_TOKEN", "api-key", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GITHUB_TOKEN"] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["SGLANG_SIMULATE_ACC_TOKEN_MODE", "MAX_TOKENS", "KEY", "TOKENIZER_PATH"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn clips_on_char_boundary() {
        let long = "é".repeat(MAX_TEXT);
        let clipped = clip(&long);
        assert!(clipped.ends_with('…'));
        assert!(clipped.len() <= MAX_TEXT + '…'.len_utf8());
    }
}
