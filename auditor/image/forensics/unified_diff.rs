//! Unified diffs of changed text files, for findings a reviewer reads
//! without pulling two images. Bounded: each diff is cut at
//! [`MAX_DIFF`] bytes and a report spends at most [`BUDGET`] bytes on
//! diffs in all; binary content (a NUL byte) gets none. Line diffing is
//! the `similar` crate's Myers; its cost grows with lines times changed
//! lines, so a change spanning more than [`MAX_EXACT`] lines (a hostile
//! image can hold thousands of rewritten 1 MiB sources) is shown as one
//! replaced block. No clock is involved: the output is deterministic.

use similar::TextDiff;
use std::time::Duration;

/// Longest single diff kept.
const MAX_DIFF: usize = 64 << 10;
/// Most diff text in one report.
pub(super) const BUDGET: usize = 4 << 20;
/// Most lines, both sides, between the common head and tail of a change
/// diffed line by line.
const MAX_EXACT: usize = 4_000;

/// Lines of `old` and `new` between their common first and last lines.
fn changed_span(old: &str, new: &str) -> usize {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.split_inclusive('\n').collect(), new.split_inclusive('\n').collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    a.len() + b.len() - 2 * (head + tail)
}

/// The unified diff of `old` -> `new` at `path` (`old` empty for an added
/// file), charged to `budget`; `None` for binary content or an exhausted
/// budget.
pub(super) fn unified(path: &str, old: &[u8], new: &[u8], budget: &mut usize) -> Option<String> {
    if *budget == 0 || old.contains(&0) || new.contains(&0) {
        return None;
    }
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let mut config = TextDiff::configure();
    if changed_span(&old, &new) > MAX_EXACT {
        // a deadline already passed: Myers keeps the common head and tail and replaces the rest
        config.timeout(Duration::ZERO);
    }
    let diff = config.diff_lines(old.as_ref(), new.as_ref());
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

    #[test]
    fn a_small_change_in_a_large_file_is_exact_and_a_large_one_is_one_block() {
        let old: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 15000\n", "line 15000 patched\n");
        let d = unified("/big.py", old.as_bytes(), new.as_bytes(), &mut BUDGET.clone()).unwrap();
        assert!(d.contains("@@ -14998,7 +14998,7 @@\n line 14997\n line 14998\n line 14999\n-line 15000\n+line 15000 patched\n"), "{d}");
        // every other line rewritten: Myers would cost 30,000 x 30,000 steps; one block instead
        let hostile: String = (0..30_000).map(|i| if i % 2 == 0 { format!("other {i}\n") } else { format!("line {i}\n") }).collect();
        let d = unified("/big.py", old.as_bytes(), hostile.as_bytes(), &mut BUDGET.clone()).unwrap();
        assert!(d.contains("@@ -1,30000 +1,30000 @@\n-line 0\n-line 1\n"), "{}", &d[..200]);
        assert_eq!(d, unified("/big.py", old.as_bytes(), hostile.as_bytes(), &mut BUDGET.clone()).unwrap());
        assert_eq!(changed_span("a\nb\nc\n", "a\nX\nc\n"), 2);
        assert_eq!(changed_span("a\n", "a\n"), 0);
        assert_eq!(changed_span("", "a\nb\n"), 2);
    }
}
