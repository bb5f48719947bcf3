//! Scanning one file as a stream, the way ripgrep's searcher does: read into
//! a large buffer, let the keyword automaton skip everything that cannot
//! match, and find line boundaries (memchr) only around its hits. Newlines
//! are counted once, for line numbers. Memory is the buffer, never the
//! file: a line longer than the cap is examined up to the cap and the rest
//! is skipped (and reported), and a rule's window of following lines is
//! bounded by [`MAX_WINDOW_BYTES`].

use super::FileScan;
use super::engine::Engine;
use super::pack::{MAX_WINDOW_BYTES, Rule};
use crate::bundle::kind::FileKind;
use crate::finding::Finding;
use crate::provenance::{FileRef, Provenance, clip, redact};
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
    /// How many rules apply to this kind of file (none: nothing to do).
    applicable: usize,
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
    /// Per-line scratch: each candidate rule with its first keyword's start.
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
        let applicable = engine.rules.iter().filter(|r| r.kinds.contains(kind)).count();
        Stream {
            engine,
            file,
            kind,
            applicable,
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
        let omitted =
            (self.per_rule.iter().enumerate()).filter(|(_, n)| **n > cap).map(|(rule, n)| (self.engine.rules[rule].spec.id.clone(), n - cap)).collect();
        FileScan { findings: self.findings, omitted, incomplete: (!incomplete.is_empty()).then(|| incomplete.join("; ")), binary: self.binary }
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
        if self.binary || self.applicable == 0 {
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
        let mut from = 0;
        while let Some(m) = self.engine.automaton.find(aho_corasick::Input::new(line).range(from..)) {
            for &rule in &self.engine.pattern_rules[m.pattern().as_usize()] {
                let r = &self.engine.rules[rule];
                let exact = !self.engine.folds_case || !r.spec.case_sensitive || r.spec.keywords.iter().any(|k| line[m.start()..].starts_with(k.as_bytes()));
                if exact && r.kinds.contains(self.kind) && !self.hits.iter().any(|(h, _)| *h == rule) {
                    self.hits.push((rule, m.start()));
                }
            }
            if self.hits.len() == self.applicable {
                break;
            }
            from = m.start() + 1;
        }
        if self.hits.is_empty() {
            return Step::Done;
        }
        let comment = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'#');
        let mut confirmed: Vec<(usize, Range<usize>)> = Vec::new();
        for &(rule, first) in &self.hits {
            let r = &self.engine.rules[rule];
            if comment && r.spec.skip_comments {
                continue;
            }
            if let Some(span) = confirm(r, line, first) {
                confirmed.push((rule, span));
            }
        }
        // The lines after this one, for windows; none after a cut line.
        let after = match ahead {
            Ahead::Cut => range.end..range.end,
            _ => (range.end + 1).min(self.end)..self.end,
        };
        let lacking =
            confirmed.iter().any(|(rule, _)| self.engine.rules[*rule].window.as_ref().is_some_and(|w| !window_end(&self.buf[after.clone()], w.lines).1));
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
            layer: None,
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
/// from the rule's first keyword (at `first`) to the end of the line for a
/// rule without a regex.
fn confirm(rule: &Rule, line: &[u8], first: usize) -> Option<Range<usize>> {
    let span = match &rule.regex {
        Some(regex) => regex.find(line)?.range(),
        None => first..line.len(),
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

/// Scans start from the engine; they live here so the engine (rules and
/// automaton) does not depend on the scanning that uses it.
impl Engine {
    /// Start a push-style scan of one file: feed it bytes as they are read
    /// (e.g. by another parser reading the same stream), then finish it.
    /// Lines longer than `max_line` bytes are examined up to the cap only.
    pub fn stream(&self, file: FileRef, kind: FileKind, max_line: usize) -> Stream<'_> {
        Stream::new(self, file, kind, max_line)
    }

    /// Scan a whole reader as the file `file` of kind `kind`.
    pub fn scan_reader(&self, file: FileRef, kind: FileKind, max_line: usize, reader: &mut dyn Read) -> FileScan {
        let mut stream = self.stream(file, kind, max_line);
        stream.read_from(reader);
        stream.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signatures::pack;

    const PACK: &str = r##"
[pack]
check = "engine-patch"
title = "t"
[[rule]]
id = "engine-patch/apply"
title = "apply"
severity = "error"
kinds = ["any"]
keywords = ["git apply"]
regex = '{{cmd}}git apply\s+\S+'
remediation = "r"
examples.match = ["git apply x"]
examples.no_match = ["# git apply x"]
[[rule]]
id = "engine-patch/shout"
title = "shout"
severity = "warning"
kinds = ["log"]
keywords = ["PATCHED"]
case_sensitive = false
remediation = "r"
examples.match = ["patched"]
examples.no_match = ["x"]
[[rule]]
id = "engine-patch/heredoc"
title = "heredoc"
severity = "error"
kinds = ["log"]
keywords = ["<<EOF"]
regex = 'cat <<EOF'
window.lines = 3
window.regex = 'WRITE\S*'
remediation = "r"
examples.match = ["cat <<EOF\nWRITE\n"]
examples.no_match = ["cat <<EOF\n\n\n\nWRITE\n"]
"##;

    fn engine() -> Engine {
        Engine::new(vec![pack::parse(PACK, "test.toml").unwrap()], "test".to_string()).unwrap()
    }

    fn file() -> FileRef {
        FileRef { path: "x.log".to_string(), artifact: None }
    }

    /// A finding's location: rule, line, text, span.
    type Row = (String, u64, String, (u64, u64));

    /// Scan `input` fed in pieces of `piece` bytes; a row per evidence.
    fn scan(engine: &Engine, input: &[u8], piece: usize, max_line: usize) -> (Vec<Row>, FileScan) {
        let mut stream = engine.stream(file(), FileKind::Log, max_line);
        for chunk in input.chunks(piece) {
            stream.feed(chunk);
        }
        let result = stream.finish();
        let rows = result.findings.iter().flat_map(|f| f.evidence.iter().map(|e| (f.rule.clone(), e.line.unwrap(), e.text.clone(), e.span.unwrap()))).collect();
        (rows, result)
    }

    #[test]
    fn finds_the_same_lines_and_spans_however_the_input_is_cut() {
        let engine = engine();
        let mut input = b"intro\r\n# git apply no.patch\n".to_vec();
        input.extend(b"filler line\n".repeat(30_000));
        input.extend(b"x; git apply /tmp/fix.patch\r\nthe Patched build\ncat <<EOF\none\nWRITE_IT\nEOF\nlast; git apply y");
        let (whole, _) = scan(&engine, &input, input.len(), 1 << 20);
        let expected = [
            ("engine-patch/apply", 30_003, "git apply /tmp/fix.patch"),
            ("engine-patch/shout", 30_004, "Patched build"),
            ("engine-patch/heredoc", 30_005, "cat <<EOF"),
            ("engine-patch/heredoc", 30_007, "WRITE_IT"),
            ("engine-patch/apply", 30_009, "git apply y"),
        ];
        let got: Vec<(&str, u64, &str)> = whole.iter().map(|(r, l, t, _)| (r.as_str(), *l, t.as_str())).collect();
        assert_eq!(got, expected);
        for (_, _, text, (start, end)) in &whole {
            assert_eq!(&input[*start as usize..*end as usize], text.as_bytes(), "span points at the text");
        }
        for piece in [1, 7, 4096, 300_001] {
            assert_eq!(scan(&engine, &input, piece, 1 << 20).0, whole, "fed in pieces of {piece}");
        }
        let mut reader = input.as_slice();
        let read = engine.scan_reader(file(), FileKind::Log, 1 << 20, &mut reader);
        assert_eq!(read.findings.len(), 4, "four findings; the heredoc's carries two locations");
    }

    #[test]
    fn kinds_and_case_sensitivity_hold() {
        let engine = engine();
        let mut stream = engine.stream(file(), FileKind::Script, 1 << 20);
        stream.feed(b"GIT APPLY x\ngit apply y\nPATCHED\n");
        let found = stream.finish().findings;
        assert_eq!(found.len(), 1, "shout is for logs only; apply is case-sensitive");
        assert_eq!(found[0].evidence[0].text, "git apply y");
    }

    #[test]
    fn a_window_waits_for_lines_that_have_not_arrived_and_is_bounded() {
        let engine = engine();
        let mut stream = engine.stream(file(), FileKind::Log, 1 << 20);
        stream.feed(b"cat <<EOF\n");
        stream.feed(b"a\n");
        stream.feed(b"WRITE\n");
        assert_eq!(stream.finish().findings.len(), 1);
        let (rows, _) = scan(&engine, b"cat <<EOF\na\nb\nc\nWRITE\n", 1, 1 << 20);
        assert!(rows.is_empty(), "WRITE is past the 3-line window: {rows:?}");
        let mut far = b"cat <<EOF\n".to_vec();
        far.extend(vec![b'x'; MAX_WINDOW_BYTES + 10]);
        far.extend(b"\nWRITE\n");
        assert!(scan(&engine, &far, 1000, 1 << 20).0.is_empty(), "past the window's byte cap");
    }

    #[test]
    fn long_lines_are_cut_without_being_held_and_reported() {
        let engine = engine();
        let max_line = 64 << 10;
        let mut stream = engine.stream(file(), FileKind::Log, max_line);
        stream.feed(b"git apply early ");
        let block = vec![b'a'; 1 << 20];
        for _ in 0..5 {
            stream.feed(&block);
            assert!(stream.buf.len() <= stream.max_buffer, "buffer stays bounded");
        }
        stream.feed(b" git apply late\nx; git apply next\n");
        let result = stream.finish();
        let lines: Vec<(u64, &str)> = result.findings.iter().map(|f| (f.evidence[0].line.unwrap(), f.evidence[0].text.as_str())).collect();
        assert_eq!(lines, [(1, "git apply early"), (2, "git apply next")], "the cut part is not examined");
        let why = result.incomplete.unwrap();
        assert!(why.contains("1 line(s) longer than 65536 bytes") && why.contains("first at line 1"), "{why}");
    }

    #[test]
    fn a_line_full_of_keywords_costs_one_regex_run_per_rule() {
        let engine = engine();
        // `GIT APPLY` holds no keyword; `git apply;` holds one whose regex never confirms.
        let line = b"x git apply; ".repeat(300_000);
        let start = std::time::Instant::now();
        let (rows, _) = scan(&engine, &line, 1 << 16, 8 << 20);
        assert!(rows.is_empty());
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "linear, not quadratic: {:?}", start.elapsed());
    }

    #[test]
    fn binary_files_are_not_examined() {
        let engine = engine();
        let (rows, result) = scan(&engine, b"\x7fELF\0\0git apply x\n", 3, 1 << 20);
        assert!(rows.is_empty() && result.binary);
        let (_, text) = scan(&engine, b"git apply x\n", 3, 1 << 20);
        assert!(!text.binary);
    }

    #[test]
    fn findings_per_rule_are_capped_and_the_rest_counted() {
        let engine = engine();
        let input = b"git apply x\n".repeat(MAX_FINDINGS_PER_RULE + 50);
        let (rows, result) = scan(&engine, &input, 1 << 16, 1 << 20);
        assert_eq!(rows.len(), MAX_FINDINGS_PER_RULE);
        assert_eq!(result.omitted, [("engine-patch/apply".to_string(), 50)]);
    }

    #[test]
    fn read_errors_are_reported() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk gone"))
            }
        }
        let result = engine().scan_reader(file(), FileKind::Log, 1 << 20, &mut Failing);
        assert!(result.incomplete.unwrap().contains("disk gone"));
    }
}
