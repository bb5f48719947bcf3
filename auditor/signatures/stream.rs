//! Scanning one file as a stream, the way ripgrep's searcher does: read into
//! a large buffer, let the keyword automaton skip everything that cannot
//! match, and find line boundaries (memchr) only around its hits. Newlines
//! are counted once, for line numbers. Memory is the buffer, never the
//! file: a line longer than the cap is examined up to the cap and the rest
//! is skipped (and reported), and a rule's window of following lines is
//! bounded by [`MAX_WINDOW_BYTES`].

use super::engine::Engine;
use super::pack::{Rule, MAX_WINDOW_BYTES};
use super::FileScan;
use crate::evidence::provenance::{clip, redact, FileRef, Provenance};
use crate::evidence::FileKind;
use crate::finding::Finding;
use std::io::{self, Read};
use std::ops::Range;

/// Bytes read at a time; the buffer starts at this size.
const CHUNK: usize = 256 << 10;
/// A NUL byte among the first this many bytes marks a file as binary.
const SNIFF: usize = 8 << 10;
/// Findings kept per rule and file; further matches are only counted.
pub const MAX_FINDINGS_PER_RULE: usize = 100;

/// A scan in progress. Feed it bytes with [`Stream::feed`] (or let it read
/// with [`Stream::read_from`]), then call [`Stream::finish`].
pub struct Stream<'e> {
    engine: &'e Engine,
    file: FileRef,
    kind: FileKind,
    /// Some rule applies to this kind of file at all.
    active: bool,
    max_line: usize,
    max_buffer: usize,
    buf: Vec<u8>,
    /// Valid data is `buf[..end]`.
    end: usize,
    /// First byte not yet examined: a line start, unless `skipping`.
    start: usize,
    /// Newlines are counted up to here; `line` is the number of the line holding it.
    counted: usize,
    line: u64,
    /// Stream offset of `buf[0]`.
    base: u64,
    /// Inside the unexamined rest of an over-long line.
    skipping: bool,
    sniffed: bool,
    binary: bool,
    /// Over-long lines: how many, and the first one's number.
    cut: (u64, u64),
    read_error: Option<String>,
    findings: Vec<Finding>,
    /// Matches per rule so far (findings are kept for the first few).
    per_rule: Vec<u64>,
    /// Per-line scratch: keyword hits `(rule, start)` and rules already confirmed.
    hits: Vec<(usize, usize)>,
}

/// What follows the line being examined.
#[derive(Clone, Copy)]
enum Ahead {
    /// More input may come and the buffer can hold it: a window may wait.
    CanWait,
    /// What is in the buffer is all there will be.
    Final,
    /// The line was cut at the cap: what follows is the rest of it, not lines.
    Cut,
}

/// What examining a line needs next.
enum Step {
    Done,
    /// A window needs lines that are not in the buffer yet.
    NeedMore,
}

impl<'e> Stream<'e> {
    pub(super) fn new(engine: &'e Engine, file: FileRef, kind: FileKind, max_line: usize) -> Self {
        let max_line = max_line.max(1);
        let active = engine.rules.iter().any(|r| r.kinds.contains(kind));
        Stream {
            engine,
            file,
            kind,
            active,
            max_line,
            max_buffer: max_line.saturating_add(MAX_WINDOW_BYTES).max(CHUNK),
            buf: vec![0; CHUNK],
            end: 0,
            start: 0,
            counted: 0,
            line: 1,
            base: 0,
            skipping: false,
            sniffed: false,
            binary: false,
            cut: (0, 0),
            read_error: None,
            findings: Vec::new(),
            per_rule: vec![0; engine.rules.len()],
            hits: Vec::new(),
        }
    }

    /// Hand the scan the next bytes of the file.
    pub fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let spare = self.spare();
            let n = spare.len().min(data.len());
            spare[..n].copy_from_slice(&data[..n]);
            data = &data[n..];
            self.end += n;
            self.process(false);
        }
    }

    /// Read `reader` to its end straight into the scan buffer. A read error
    /// ends the scan there and is reported by [`Stream::finish`].
    pub fn read_from(&mut self, reader: &mut dyn Read) {
        loop {
            let spare = self.spare();
            match reader.read(spare) {
                Ok(0) => return,
                Ok(n) => {
                    self.end += n;
                    self.process(false);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.read_error = Some(format!("read error after {} bytes: {e}", self.base + self.end as u64));
                    return;
                }
            }
        }
    }

    /// End of input: examine what is left and return the result.
    pub fn finish(mut self) -> FileScan {
        self.process(true);
        let mut incomplete = Vec::new();
        let (cut, first) = self.cut;
        if cut > 0 {
            incomplete.push(format!(
                "{cut} line(s) longer than {} bytes were examined only up to that length (first at line {first}; raise --max-line-length)",
                self.max_line
            ));
        }
        incomplete.extend(self.read_error);
        let cap = MAX_FINDINGS_PER_RULE as u64;
        let omitted = (self.per_rule.iter().enumerate())
            .filter(|(_, n)| **n > cap)
            .map(|(rule, n)| (self.engine.rules[rule].spec.id.clone(), n - cap))
            .collect();
        FileScan {
            findings: self.findings,
            omitted,
            incomplete: (!incomplete.is_empty()).then(|| incomplete.join("; ")),
            binary: self.binary,
        }
    }

    /// Room to read into: move unexamined bytes to the front, and grow the
    /// buffer (up to its cap) when they fill more than half of it.
    fn spare(&mut self) -> &mut [u8] {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.base += self.start as u64;
            self.end -= self.start;
            self.counted -= self.start;
            self.start = 0;
        }
        if self.end > self.buf.len() / 2 && self.buf.len() < self.max_buffer {
            let size = self.buf.len().saturating_mul(2).min(self.max_buffer);
            self.buf.resize(size, 0);
        }
        &mut self.buf[self.end..]
    }

    /// Examine every line that is complete in the buffer (all of it at the end of input).
    fn process(&mut self, eof: bool) {
        if !self.sniffed {
            if self.end < SNIFF && !eof {
                return;
            }
            self.sniffed = true;
            self.binary = memchr::memchr(0, &self.buf[..self.end.min(SNIFF)]).is_some();
        }
        if self.binary || !self.active {
            self.start = self.end;
            self.counted = self.end;
            return;
        }
        loop {
            if self.skipping {
                match memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                    Some(i) => {
                        self.start += i + 1;
                        self.counted = self.start;
                        self.line += 1;
                        self.skipping = false;
                    }
                    None => {
                        self.start = self.end;
                        self.counted = self.end;
                        return;
                    }
                }
            }
            let complete = match (eof, memchr::memrchr(b'\n', &self.buf[self.start..self.end])) {
                (true, _) => self.end,
                (false, Some(i)) => self.start + i + 1,
                (false, None) => self.start,
            };
            if complete > self.start {
                if !self.search(complete, eof) {
                    return;
                }
                self.line += count_newlines(&self.buf[self.counted..complete]);
                self.counted = complete;
                self.start = complete;
            }
            if eof || self.end - self.start < self.max_line {
                return;
            }
            // The line in the buffer has no end within the cap: examine its
            // first `max_line` bytes and skip the rest.
            self.cut = (self.cut.0 + 1, if self.cut.0 == 0 { self.line } else { self.cut.1 });
            let ls = self.start;
            self.examine(ls..ls + self.max_line, Ahead::Cut);
            self.start = ls + self.max_line;
            self.counted = self.start;
            self.skipping = true;
        }
    }

    /// Search `buf[start..complete]` for keyword hits and examine their
    /// lines. Returns false when a line needs more input first; `start`
    /// then points at that line and nothing of it was reported.
    fn search(&mut self, complete: usize, eof: bool) -> bool {
        let mut at = self.start;
        while at < complete {
            let input = aho_corasick::Input::new(&self.buf[..complete]).range(at..complete);
            let Some(hit) = self.engine.automaton.find(input) else { break };
            let ls = memchr::memrchr(b'\n', &self.buf[at..hit.start()]).map_or(at, |i| at + i + 1);
            let le = memchr::memchr(b'\n', &self.buf[hit.start()..complete]).map_or(complete, |i| hit.start() + i);
            self.line += count_newlines(&self.buf[self.counted..ls]);
            self.counted = ls;
            // The window may still grow if the buffer can hold more than it does.
            let ahead = if !eof && self.end - ls < self.max_buffer { Ahead::CanWait } else { Ahead::Final };
            if let Step::NeedMore = self.examine(ls..le, ahead) {
                self.start = ls;
                return false;
            }
            at = le + 1;
        }
        true
    }

    /// Run the candidate rules over one line, `buf[range]` without its newline.
    fn examine(&mut self, range: Range<usize>, ahead: Ahead) -> Step {
        let mut line = &self.buf[range.clone()];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        self.hits.clear();
        for m in self.engine.automaton.find_overlapping_iter(line) {
            for &rule in &self.engine.pattern_rules[m.pattern().as_usize()] {
                let r = &self.engine.rules[rule];
                let exact = !self.engine.folds_case || !r.spec.case_sensitive || r.spec.keywords.iter().any(|k| k.as_bytes() == &line[m.range()]);
                if exact && r.kinds.contains(self.kind) {
                    self.hits.push((rule, m.start()));
                }
            }
        }
        if self.hits.is_empty() {
            return Step::Done;
        }
        let comment = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'#');
        let mut confirmed: Vec<(usize, Range<usize>)> = Vec::new();
        for &(rule, _) in &self.hits {
            let r = &self.engine.rules[rule];
            if (comment && r.spec.skip_comments) || confirmed.iter().any(|(c, _)| *c == rule) {
                continue;
            }
            if let Some(span) = confirm(r, line, &self.hits, rule) {
                confirmed.push((rule, span));
            }
        }
        // The lines after this one, for windows; none after a cut line.
        let after = match ahead {
            Ahead::Cut => range.end..range.end,
            _ => (range.end + 1).min(self.end)..self.end,
        };
        let lacking = confirmed.iter().any(|(rule, _)| {
            self.engine.rules[*rule].window.as_ref().is_some_and(|w| !window_end(&self.buf[after.clone()], w.lines).1)
        });
        if lacking && matches!(ahead, Ahead::CanWait) {
            return Step::NeedMore;
        }
        let mut found = Vec::with_capacity(confirmed.len());
        for (rule, span) in confirmed {
            let mut evidence = vec![self.provenance(self.line, range.start + span.start, &line[span])];
            if let Some(w) = &self.engine.rules[rule].window {
                // The window is this line and the next `lines` lines.
                let text = &self.buf[range.start..after.start + window_end(&self.buf[after.clone()], w.lines).0];
                let Some(m) = w.regex.find(text) else { continue };
                // Also point at the line where the window match ends (e.g. the write).
                let last = text[..m.end().max(1) - 1].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                if last > 0 {
                    let end = memchr::memchr(b'\n', &text[last..]).map_or(text.len(), |i| last + i);
                    let lead = text[last..end].iter().take_while(|b| b.is_ascii_whitespace()).count();
                    let number = self.line + count_newlines(&text[..last]);
                    evidence.push(self.provenance(number, range.start + last + lead, trim_end(&text[last + lead..end])));
                }
            }
            found.push((rule, evidence));
        }
        for (rule, evidence) in found {
            self.emit(rule, evidence);
        }
        Step::Done
    }

    fn provenance(&self, line: u64, at: usize, text: &[u8]) -> Provenance {
        let start = self.base + at as u64;
        Provenance {
            file: self.file.path.clone(),
            artifact: self.file.artifact.clone(),
            line: Some(line),
            span: Some((start, start + text.len() as u64)),
            text: clip(&redact(&String::from_utf8_lossy(text))),
        }
    }

    fn emit(&mut self, rule: usize, evidence: Vec<Provenance>) {
        self.per_rule[rule] += 1;
        if self.per_rule[rule] > MAX_FINDINGS_PER_RULE as u64 {
            return;
        }
        let r = &self.engine.rules[rule];
        self.findings.push(Finding::new(&r.spec.id, r.spec.severity, r.spec.title.clone(), None, evidence));
    }
}

/// Whether `rule` holds on `line`, and the span to report: the regex
/// match without the command separators or trace marker it starts with, or
/// from the rule's first keyword to the end of the line for a rule without
/// a regex.
fn confirm(rule: &Rule, line: &[u8], hits: &[(usize, usize)], index: usize) -> Option<Range<usize>> {
    let span = match &rule.regex {
        Some(regex) => regex.find(line)?.range(),
        None => hits.iter().filter(|(r, _)| *r == index).map(|h| h.1).min()?..line.len(),
    };
    let text = &line[span.clone()];
    let lead = text.iter().take_while(|b| b" \t;&|({`+$".contains(b)).count();
    let tail = text.iter().rev().take_while(|b| b.is_ascii_whitespace()).count();
    Some(span.start + lead..(span.end - tail).max(span.start + lead))
}

/// How many bytes of `after` a window of `lines` lines covers, and whether
/// that is final (the lines are there, or the byte cap is reached).
fn window_end(after: &[u8], lines: usize) -> (usize, bool) {
    let capped = &after[..after.len().min(MAX_WINDOW_BYTES)];
    match memchr::memchr_iter(b'\n', capped).nth(lines.saturating_sub(1)) {
        Some(i) => (i, true),
        None => (capped.len(), capped.len() == MAX_WINDOW_BYTES),
    }
}

fn trim_end(text: &[u8]) -> &[u8] {
    &text[..text.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1)]
}

fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}
