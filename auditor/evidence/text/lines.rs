//! Bounded line reading. Logs in the wild are huge, may lack newlines, carry
//! CRLF, NUL bytes and invalid UTF-8; this reader turns any byte stream into
//! numbered lines without ever holding more than one capped line in memory.

use std::io::{self, BufRead};

/// One line of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: u64,
    /// Byte offset of the first byte of the line within the stream.
    pub offset: u64,
    /// The line without its terminator (`\n`, `\r\n`), invalid UTF-8 replaced.
    pub text: String,
    /// The line was longer than the cap; `text` holds only its beginning.
    pub truncated: bool,
}

/// Splits a reader into [`Line`]s, cutting lines at `max_len` bytes.
pub struct LineReader<R> {
    inner: R,
    max_len: usize,
    number: u64,
    offset: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, max_len: usize) -> Self {
        LineReader { inner, max_len: max_len.max(1), number: 0, offset: 0, buf: Vec::new() }
    }

    /// How many lines have been returned so far.
    pub fn lines_read(&self) -> u64 {
        self.number
    }

    /// Pass over whole lines that `keep` finds nothing in, counting them,
    /// so that the next [`Self::next_line`] is the first line that may
    /// matter (or one this cannot judge without reading it: a line that
    /// runs past the buffered bytes). `keep` gives where its first hit in
    /// some bytes starts; it must never match across a line break. Lines
    /// are never passed when they might be longer than the cap, so a
    /// passed line is one `next_line` would have returned whole.
    pub fn skip_lines(&mut self, keep: impl Fn(&[u8]) -> Option<usize>) -> io::Result<()> {
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // The whole lines in the buffer, if none of them can be over the cap.
            let Some(last) = memchr::memrchr(b'\n', chunk).filter(|&i| i < self.max_len) else { return Ok(()) };
            let whole = &chunk[..=last];
            let (passed, done) = match keep(whole) {
                Some(hit) => (memchr::memrchr(b'\n', &whole[..hit]).map_or(0, |i| i + 1), true),
                None => (whole.len(), false),
            };
            self.number += memchr::memchr_iter(b'\n', &whole[..passed]).count() as u64;
            self.offset += passed as u64;
            self.inner.consume(passed);
            if done {
                return Ok(());
            }
        }
    }

    /// The next line, `Ok(None)` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        self.buf.clear();
        let start = self.offset;
        let mut consumed_any = false;
        let mut truncated = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            consumed_any = true;
            let newline = memchr::memchr(b'\n', chunk);
            let take = newline.map_or(chunk.len(), |i| i + 1);
            let room = self.max_len.saturating_sub(self.buf.len());
            let content_len = newline.unwrap_or(chunk.len());
            if content_len > room {
                truncated = true;
            }
            self.buf.extend_from_slice(&chunk[..content_len.min(room)]);
            self.inner.consume(take);
            self.offset += take as u64;
            if newline.is_some() {
                break;
            }
        }
        if !consumed_any {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        self.number += 1;
        Ok(Some(Line { number: self.number, offset: start, text: String::from_utf8_lossy(&self.buf).into_owned(), truncated }))
    }
}

/// The lines of a text, for tests of the line parsers.
#[cfg(test)]
pub(crate) fn lines_of(text: &str) -> Vec<Line> {
    let mut reader = LineReader::new(text.as_bytes(), 1 << 20);
    std::iter::from_fn(|| reader.next_line().expect("reading a string cannot fail")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(input, max);
        std::iter::from_fn(|| reader.next_line().unwrap()).collect()
    }

    #[test]
    fn numbers_offsets_and_crlf() {
        let got = lines(b"a=1\r\nbb\nlast", 100);
        assert_eq!(got.len(), 3);
        assert_eq!((got[0].number, got[0].offset, got[0].text.as_str()), (1, 0, "a=1"));
        assert_eq!((got[1].number, got[1].offset, got[1].text.as_str()), (2, 5, "bb"));
        assert_eq!((got[2].offset, got[2].text.as_str(), got[2].truncated), (8, "last", false));
    }

    #[test]
    fn caps_long_lines_and_keeps_counting() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\nnext\n");
        let got = lines(&input, 16);
        assert_eq!(got[0].text.len(), 16);
        assert!(got[0].truncated);
        assert_eq!((got[1].text.as_str(), got[1].offset, got[1].truncated), ("next", 10_001, false));
    }

    #[test]
    fn skipped_lines_are_counted_and_the_next_line_is_the_hit() {
        let input = b"a\nb\nxx hit\nc\nhit\r\nlast";
        let mut reader = LineReader::new(std::io::BufReader::with_capacity(8, &input[..]), 100);
        let find = |b: &[u8]| b.windows(3).position(|w| w == b"hit");
        let (mut got, mut returned) = (Vec::new(), 0);
        loop {
            reader.skip_lines(find).unwrap();
            let Some(line) = reader.next_line().unwrap() else { break };
            returned += 1;
            // A line the skip could not judge (past the buffer) is judged whole.
            if find(line.text.as_bytes()).is_some() {
                got.push((line.number, line.offset, line.text));
            }
        }
        assert!(returned < 6, "whole lines in the buffer were passed");
        let want = [(3, 4, "xx hit"), (5, 13, "hit")];
        assert_eq!(got, want.map(|(n, o, t)| (n, o, t.to_string())));
        // Lines that may be over the cap are left to `next_line`, which cuts them.
        let mut reader = LineReader::new(&b"0123456789\nhit\n"[..], 4);
        reader.skip_lines(find).unwrap();
        assert!(reader.next_line().unwrap().unwrap().truncated);
    }

    #[test]
    fn invalid_utf8_and_nul_survive() {
        let got = lines(b"A=\xff\x00b\n", 100);
        assert_eq!(got[0].text, "A=\u{fffd}\u{0}b");
    }
}
