//! Unified diffs of changed text files, for findings a reviewer reads
//! without pulling two images. Bounded: each diff is cut at
//! [`MAX_DIFF`] bytes and a report spends at most [`BUDGET`] bytes on
//! diffs in all; binary content (a NUL byte) gets none. Line diffing is
//! the `similar` crate's (Myers with a deadline-free, deterministic output).

use similar::TextDiff;

/// Longest single diff kept.
pub const MAX_DIFF: usize = 64 << 10;
/// Most diff text in one report.
pub const BUDGET: usize = 4 << 20;

/// The unified diff of `old` -> `new` at `path` (`old` empty for an added
/// file), charged to `budget`; `None` for binary content or an exhausted
/// budget.
pub fn unified(path: &str, old: &[u8], new: &[u8], budget: &mut usize) -> Option<String> {
    if *budget == 0 || old.contains(&0) || new.contains(&0) {
        return None;
    }
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
    let from = if old.is_empty() { "/dev/null".to_string() } else { format!("upstream{path}") };
    let mut text = diff.unified_diff().context_radius(3).header(&from, &format!("pinned{path}")).to_string();
    let limit = MAX_DIFF.min(*budget);
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n… (diff cut)\n");
    }
    *budget = budget.saturating_sub(text.len());
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_are_unified_bounded_and_text_only() {
        let mut budget = BUDGET;
        let d = unified("/s/six.py", b"a\nb\nc\n", b"a\nB\nc\n", &mut budget).unwrap();
        assert!(d.starts_with("--- upstream/s/six.py\n+++ pinned/s/six.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), "{d}");
        assert_eq!(budget, BUDGET - d.len());
        assert!(unified("/x", b"\0bin", b"other", &mut budget).is_none());
        let added = unified("/n.py", b"", b"import os\n", &mut budget).unwrap();
        assert!(added.starts_with("--- /dev/null\n"));
        let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let cut = unified("/b", b"", big.as_bytes(), &mut budget).unwrap();
        assert!(cut.len() <= MAX_DIFF + 20 && cut.ends_with("(diff cut)\n"));
        let mut empty = 0;
        assert!(unified("/s", b"a", b"b", &mut empty).is_none());
    }
}
