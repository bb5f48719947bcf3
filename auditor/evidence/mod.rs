//! Parsers: raw bytes in, typed facts with provenance out. Each file of a
//! bundle is read once, as a stream, by the parsers its kind calls for.

pub mod args;
pub mod engine;
pub mod env;
pub mod gate;
pub mod json;
pub mod knobs;
pub mod log;
pub mod meta;
pub use crate::provenance;
pub mod python;
pub mod records;
pub mod shell;
pub mod stack;
pub mod text;
pub mod waiver;
pub mod yaml;

pub use crate::bundle::kind::{FileKind, classify};
use crate::bundle::{Disposition, Examine, Examined, MemberVisitor, layout};
use crate::signatures::{Engine, Stream};
use env::{EnvAssignment, EnvDump};
use log::env_listing::ListingScanner;
use log::startup::{EngineRecord, RecordScanner};
use meta::Metadata;
use provenance::FileRef;
use serde::Serialize;
use shell::command::Command;
use shell::scan::ShellScanner;
use std::io::{self, BufReader, Read};
use text::lines::LineReader;
use text::prefilter::Prefilter;

/// Largest JSON or YAML document parsed as a whole; larger ones are scanned as text.
pub const MAX_DOCUMENT: u64 = 32 << 20;

/// The file at bundle path `path`, with the artifact folder it lies in.
pub fn file_ref(path: &str) -> FileRef {
    FileRef { path: path.to_string(), artifact: layout::artifact_of(path).map(str::to_string) }
}

/// A reference document an audited tree carries for itself, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeDocument {
    /// A golden-AL table: `golden_al_distribution/<name>.yaml`.
    GoldenTable,
    /// The benchmark's model list: `MODELS.md`.
    ModelList,
}

impl TreeDocument {
    pub fn of(path: &str) -> Option<TreeDocument> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if name == "MODELS.md" {
            return Some(TreeDocument::ModelList);
        }
        let golden = path.split('/').any(|d| d == "golden_al_distribution") && (name.ends_with(".yaml") || name.ends_with(".yml"));
        golden.then_some(TreeDocument::GoldenTable)
    }
}

/// A problem met while parsing a file that did not stop the file being read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub message: String,
}

/// Everything the parsers found in one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileEvidence {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    pub kind: FileKind,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvAssignment>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env_dumps: Vec<EnvDump>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<Command>,
    /// Engine startup records (SGLang server args, vLLM args and config).
    #[serde(skip)]
    pub records: Vec<EngineRecord>,
    /// Boxed: most files have none, and a bundle may hold 200,000 files.
    #[serde(skip)]
    pub metadata: Option<Box<Metadata>>,
    /// The per-role engine configs of an srt-slurm recipe.
    #[serde(skip)]
    pub recipe: Option<yaml::recipe::Recipe>,
    /// The entries of a master config.
    #[serde(skip)]
    pub master: Vec<yaml::master::MasterEntry>,
    /// A script's text, kept to evaluate it again with the files it sources
    /// once every file of the input is read.
    #[serde(skip)]
    pub script: Option<std::sync::Arc<str>>,
    /// A file a script may read or run but is not evaluated as one (a
    /// Python program, a requirements file), kept whole for the scripts'
    /// evaluation.
    #[serde(skip)]
    pub text: Option<std::sync::Arc<str>>,
    /// An eval payload (`meta_env.json`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub eval_payload: bool,
    /// Eval scores (lm-eval results, SWE-bench reports).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub eval_scores: Vec<json::eval_results::EvalScore>,
    /// Eval batches (`meta_env.json` `failed_eval_concs`) that failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_eval_concs: Vec<u64>,
    /// A script with an eval path (see [`ShellScanner::eval_path`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub eval_path: bool,
    /// What a script does to files and packages (parsed commands).
    #[serde(skip)]
    pub actions: Vec<shell::actions::ScriptAction>,
    /// What the signature rules found in the file.
    #[serde(skip)]
    pub signatures: Vec<crate::finding::Finding>,
    /// An engine-patch waiver (`docs/waiver/<PR>.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiver: Option<waiver::Waiver>,
    /// A reference document the audited tree carries for itself (a
    /// golden-AL table, `MODELS.md`), read under the reader's limits like
    /// any file and kept as text for `reference/` to parse; `Err` says why
    /// it could not be read whole.
    #[serde(skip)]
    pub tree_document: Option<Box<(TreeDocument, Result<String, String>)>>,
    /// The only lines that hold commands, where the file's place says only
    /// some do (a workflow's `run:` scripts; none of a changelog): the
    /// signature scan's matches elsewhere are prose.
    #[serde(skip)]
    pub code_lines: Option<Vec<(u64, u64)>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
}

impl FileEvidence {
    fn new(file: &FileRef, kind: FileKind) -> Self {
        FileEvidence {
            path: file.path.clone(),
            artifact: file.artifact.clone(),
            kind,
            env: Vec::new(),
            env_dumps: Vec::new(),
            commands: Vec::new(),
            records: Vec::new(),
            metadata: None,
            recipe: None,
            master: Vec::new(),
            script: None,
            text: None,
            eval_payload: false,
            eval_path: false,
            eval_scores: Vec::new(),
            failed_eval_concs: Vec::new(),
            actions: Vec::new(),
            signatures: Vec::new(),
            waiver: None,
            tree_document: None,
            code_lines: None,
            notes: Vec::new(),
        }
    }
}

impl FileEvidence {
    /// This file as one job sees part of it (a recipe role, a script's
    /// throughput or eval-only path, a master-config entry): `env` and
    /// `commands` are the job's share; engine records, recipe and
    /// master-config parts are left for the caller to set. Built without
    /// copying the rest, so that many jobs over one large file stay cheap.
    pub fn part(&self, env: Vec<EnvAssignment>, commands: Vec<Command>) -> FileEvidence {
        FileEvidence {
            path: self.path.clone(),
            artifact: self.artifact.clone(),
            kind: self.kind,
            env,
            env_dumps: self.env_dumps.clone(),
            commands,
            records: Vec::new(),
            metadata: self.metadata.clone(),
            recipe: None,
            master: Vec::new(),
            script: None,
            text: None,
            eval_payload: self.eval_payload,
            eval_path: self.eval_path,
            eval_scores: self.eval_scores.clone(),
            failed_eval_concs: self.failed_eval_concs.clone(),
            actions: self.actions.clone(),
            signatures: self.signatures.clone(),
            waiver: self.waiver.clone(),
            tree_document: None,
            code_lines: None,
            notes: self.notes.clone(),
        }
    }
}

/// The bundle visitor that runs the parsers over every member.
pub struct Extractor<'e> {
    max_line: usize,
    /// Signature rules run over the same bytes the parsers read, when given.
    signatures: Option<&'e Engine>,
    /// Lines of program output that no parser can use are passed unread
    /// ([`prefilter`]); off only in tests that check the filter is exact.
    prefilter: bool,
    /// Scripts are only read here and evaluated by the bash interpreter once
    /// every file is ([`link_scripts`]), with the files they source; else
    /// the line reader reads them here.
    defer_scripts: bool,
    pub files: Vec<FileEvidence>,
}

/// A reader that hands every byte it reads to a signature stream too, so
/// parsers and signatures share one pass over each file.
struct Tee<'r, 's, 'e> {
    inner: &'r mut dyn Read,
    stream: Option<&'s mut Stream<'e>>,
}

impl Read for Tee<'_, '_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(stream) = self.stream.as_deref_mut() {
            stream.feed(&buf[..n]);
        }
        Ok(n)
    }
}

impl<'e> Extractor<'e> {
    pub fn new(max_line: usize) -> Self {
        Extractor { max_line, signatures: None, prefilter: true, defer_scripts: false, files: Vec::new() }
    }

    /// An extractor that also runs the signature rules of `engine`.
    pub fn with_signatures(max_line: usize, engine: &'e Engine) -> Self {
        Extractor { max_line, signatures: Some(engine), prefilter: true, defer_scripts: false, files: Vec::new() }
    }

    /// Leave scripts to the interpreter ([`link_scripts`]), which evaluates
    /// them with the files they source (`--interpret-scripts`).
    pub fn deferring_scripts(self) -> Self {
        Extractor { defer_scripts: true, ..self }
    }

    /// Parse one stream as a file at `path`; returns the evidence and what
    /// part of it, if any, could not be examined.
    pub fn extract(&self, path: &str, kind: FileKind, reader: &mut dyn Read) -> (FileEvidence, Option<String>) {
        let file = file_ref(path);
        let mut stream = self.signatures.filter(|_| kind != FileKind::Doc).map(|engine| engine.stream(file.clone(), kind, self.max_line));
        let (mut evidence, incomplete) = self.extract_teed(&file, kind, reader, stream.as_mut());
        if let Some(stream) = stream {
            let scan = stream.finish();
            evidence.signatures = scan.findings;
            if let Some(code) = &evidence.code_lines {
                let in_code = |f: &crate::finding::Finding| f.evidence.iter().any(|e| e.line.is_some_and(|l| code.iter().any(|(a, b)| (*a..=*b).contains(&l))));
                evidence.signatures.retain(in_code);
            }
            for (rule, n) in scan.omitted {
                evidence.notes.push(Note { line: None, message: format!("{rule}: {n} more match(es) not listed") });
            }
        }
        (evidence, incomplete)
    }

    /// Parse one stream as `file` while `stream`, when given, scans the same
    /// bytes: one read serves the parsers and a signature scan the caller
    /// finishes (as `auditor scan` does, to see what the scan says of the file).
    pub fn extract_teed(&self, file: &FileRef, kind: FileKind, reader: &mut dyn Read, stream: Option<&mut Stream<'_>>) -> (FileEvidence, Option<String>) {
        self.parse(file, kind, &mut Tee { inner: reader, stream })
    }

    fn parse(&self, file: &FileRef, kind: FileKind, reader: &mut dyn Read) -> (FileEvidence, Option<String>) {
        let file = file.clone();
        let mut evidence = FileEvidence::new(&file, kind);
        if kind == FileKind::Doc {
            // A model list is read whole (to the document cap); other documents only as far as a waiver goes.
            let reference = TreeDocument::of(&file.path);
            let cap = if reference.is_some() { MAX_DOCUMENT } else { waiver::MAX_WAIVER as u64 };
            let mut text = Vec::new();
            if let Err(e) = reader.take(cap).read_to_end(&mut text) {
                return (evidence, Some(format!("read error: {e}")));
            }
            if waiver::Waiver::is_waiver_path(&file.path) {
                evidence.waiver = Some(waiver::Waiver::parse(&file.path, &String::from_utf8_lossy(&text)));
            }
            if let Some(document) = reference {
                evidence.tree_document = Some(Box::new((document, Ok(String::from_utf8_lossy(&text).into_owned()))));
            }
            // The rest of a document over the cap is prose nobody parses; drain it for the digest.
            return match io::copy(reader, &mut io::sink()) {
                Ok(0) => (evidence, None),
                Ok(_) if reference.is_some() => (evidence, Some(format!("larger than {MAX_DOCUMENT} bytes: read as far as that"))),
                Ok(_) => (evidence, None),
                Err(e) => (evidence, Some(format!("read error: {e}"))),
            };
        }
        if matches!(kind, FileKind::Json | FileKind::Yaml) {
            let head = match read_document(reader) {
                Ok(Document::Whole(bytes)) => match self.structured(&file, kind, &bytes, &mut evidence) {
                    Ok(aside) => return (evidence, aside),
                    // A YAML document that does not load hides what it holds: read as text, and not examined.
                    Err(Unstructured::Unread(why)) => {
                        evidence.notes.push(Note { line: None, message: format!("{why}; scanned as text") });
                        let scanned = self.scan_lines(&file, &mut bytes.as_slice().chain(reader), &mut evidence);
                        let why = format!("{why}: its YAML was not read (the entries it holds are not judged)");
                        return (evidence, Some(scanned.map_or(why.clone(), |s| format!("{why}; {s}"))));
                    }
                    Err(Unstructured::Other(why)) => (bytes, why),
                },
                Ok(Document::TooLarge(bytes)) => {
                    if let Some(document) = TreeDocument::of(&file.path) {
                        evidence.tree_document = Some(Box::new((document, Err(format!("larger than {MAX_DOCUMENT} bytes")))));
                    }
                    (bytes, format!("larger than {MAX_DOCUMENT} bytes"))
                }
                Err(e) => return (evidence, Some(format!("read error: {e}"))),
            };
            evidence.notes.push(Note { line: None, message: format!("{}; scanned as text", head.1) });
            let incomplete = self.scan_lines(&file, &mut head.0.as_slice().chain(reader), &mut evidence);
            return (evidence, incomplete);
        }
        if kind == FileKind::Script && self.defer_scripts {
            let incomplete = self.keep_script(reader, &mut evidence);
            return (evidence, incomplete);
        }
        if self.defer_scripts && read_by_scripts(&file.path, kind) {
            // Kept whole when it fits; scanned as any file of its kind either way.
            let mut head = Vec::new();
            if let Err(e) = reader.take(MAX_KEPT_TEXT + 1).read_to_end(&mut head) {
                return (evidence, Some(format!("read error: {e}")));
            }
            if head.len() as u64 <= MAX_KEPT_TEXT {
                evidence.text = Some(String::from_utf8_lossy(&head).into());
            }
            let incomplete = self.scan_lines(&file, &mut head.as_slice().chain(reader), &mut evidence);
            return (evidence, incomplete);
        }
        let incomplete = self.scan_lines(&file, reader, &mut evidence);
        (evidence, incomplete)
    }

    /// A script read whole and kept for [`link_scripts`], which evaluates it
    /// as bash runs it with the files it sources.
    fn keep_script(&self, reader: &mut dyn Read, evidence: &mut FileEvidence) -> Option<String> {
        let mut bytes = Vec::new();
        if let Err(e) = reader.take(MAX_SCRIPT + 1).read_to_end(&mut bytes) {
            return Some(format!("read error: {e}"));
        }
        if bytes.len() as u64 > MAX_SCRIPT {
            // Drained for the digest and the signature rules; not evaluated.
            let _ = io::copy(reader, &mut io::sink());
            return Some(format!("larger than {MAX_SCRIPT} bytes: not evaluated"));
        }
        evidence.script = Some(String::from_utf8_lossy(&bytes).into());
        None
    }

    /// Run the line parsers the file's kind calls for over every line
    /// (of program output: every line one of them may use, see [`prefilter`]).
    fn scan_lines(&self, file: &FileRef, reader: &mut dyn Read, evidence: &mut FileEvidence) -> Option<String> {
        let mut lines = LineReader::new(BufReader::with_capacity(64 << 10, reader), self.max_line);
        let mut listing = ListingScanner::new(file.clone());
        let mut shell = ShellScanner::new(file.clone());
        let mut records = RecordScanner::new(file.clone());
        let mut long_lines = 0u64;
        let mut first_long = 0u64;
        let mut error = None;
        let output = matches!(evidence.kind, FileKind::Log | FileKind::Json | FileKind::Yaml | FileKind::Doc);
        let prefilter = Prefilter::get();
        loop {
            // Lines only matter to a parser that has nothing open if they hold a literal.
            let filtered = self.prefilter && output && !records.is_open() && !listing.is_open() && !shell.log_open();
            if filtered && let Err(e) = lines.skip_lines(|bytes| prefilter.first_hit(bytes)) {
                error = Some(e);
                break;
            }
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            };
            if line.truncated {
                long_lines += 1;
                if first_long == 0 {
                    first_long = line.number;
                }
            }
            if filtered && !prefilter.hits(line.text.as_bytes()) {
                continue;
            }
            match evidence.kind {
                FileKind::Command | FileKind::Script => shell.script_line(&line),
                FileKind::Python => evidence.env.extend(python::environ::scan_line(file, &line, &env::Scope::File)),
                FileKind::Log | FileKind::Json | FileKind::Yaml | FileKind::Doc => {
                    let clean = text::logline::clean(&line.text);
                    records.read(&line, &clean);
                    // A statement still open (a `\` continuation, a quoted
                    // argument over lines) takes its next line first.
                    if shell.log_open() || !listing.read(&line, &clean) {
                        shell.log_read(&line, &clean);
                    }
                }
            }
        }
        listing.finish();
        shell.finish();
        records.finish();
        evidence.env.extend(listing.assignments);
        evidence.env.extend(shell.assignments);
        evidence.env_dumps = listing.dumps;
        evidence.commands = shell.commands;
        for command in &mut evidence.commands {
            yaml::shown::splice_sglang_config(file, command, &shell.written);
        }
        if evidence.kind == FileKind::Script {
            evidence.actions = shell.actions.finish();
            evidence.eval_path = shell.eval_path;
        }
        evidence.records = records.records;
        evidence.records.extend(shell.written.iter().flat_map(|body| yaml::shown::written(file, body)));
        for p in shell.problems {
            evidence.notes.push(Note { line: p.line, message: format!("shell statement not parsed: {}", p.text) });
        }
        let mut incomplete = Vec::new();
        if long_lines > 0 {
            incomplete.push(format!("{long_lines} line(s) longer than {} bytes were cut (first at line {first_long}; raise --max-line-length)", self.max_line));
        }
        if let Some(e) = error {
            incomplete.push(format!("read error after line {}: {e}", lines.lines_read()));
        }
        (!incomplete.is_empty()).then(|| incomplete.join("; "))
    }
}

/// Largest script evaluated; a larger one is scanned by the signature rules only.
pub const MAX_SCRIPT: u64 = 8 << 20;

/// Largest file kept whole for the scripts that read or run it ([`read_by_scripts`]).
const MAX_KEPT_TEXT: u64 = 1 << 20;

/// Files a script may run or read as input of a program it runs, kept for
/// its evaluation: Python programs (`python3 FILE`), and the text files an
/// installer reads (requirements and constraints files, pip
/// configuration). Logs and results are not: a run's output is not input.
fn read_by_scripts(path: &str, kind: FileKind) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    kind == FileKind::Python
        || (kind == FileKind::Log && [".txt", ".in", ".conf", ".cfg", ".ini", ".list"].iter().any(|x| name.ends_with(x)) && !name.contains("log"))
}

/// Put what an evaluation found into a script's evidence; what was not examined.
fn apply_evaluated(file: &FileRef, evidence: &mut FileEvidence, evaluated: shell::evaluated::Evaluated) -> Option<String> {
    evidence.env = evaluated.env;
    evidence.commands = evaluated.commands;
    for command in &mut evidence.commands {
        yaml::shown::splice_sglang_config(file, command, &evaluated.written);
    }
    evidence.actions = evaluated.actions;
    evidence.eval_path = evaluated.eval_path;
    evidence.records = evaluated.written.iter().flat_map(|body| yaml::shown::written(file, body)).collect();
    evidence.notes.retain(|n| !n.message.starts_with(EVALUATION_NOTE));
    for (line, message) in evaluated.notes {
        evidence.notes.push(Note { line, message: format!("{EVALUATION_NOTE}{message}") });
    }
    evaluated.unexamined
}

/// The prefix of the notes an evaluation leaves.
const EVALUATION_NOTE: &str = "evaluation: ";

/// Evaluate the scripts `wanted` names, now that every file is read, with
/// the files they source or run: what those define and export counts where
/// the script runs it. Returns the scripts whose evaluation could not be
/// completed, with why.
pub fn link_scripts(files: &mut [FileEvidence], wanted: &(dyn Fn(&str) -> bool + Sync)) -> Vec<(String, String)> {
    use rayon::prelude::*;
    let texts: Vec<(String, std::sync::Arc<str>)> =
        files.iter().filter_map(|f| f.script.clone().or_else(|| f.text.clone()).map(|t| (f.path.clone(), t))).collect();
    let tree = shell::evaluated::TreeFiles::new(texts.iter().map(|(p, t)| (p.as_str(), &**t)));
    let chosen: Vec<(usize, &FileEvidence)> = files.iter().enumerate().filter(|(_, f)| f.script.is_some() && wanted(&f.path)).collect();
    let evaluate = || -> Vec<(usize, shell::evaluated::Evaluated)> {
        // One script a task: evaluations differ a hundredfold in cost, so
        // halves split once would leave one core idle.
        chosen
            .par_iter()
            .with_max_len(1)
            .filter_map(|(i, f)| {
                let text = f.script.clone()?;
                let file = FileRef { path: f.path.clone(), artifact: f.artifact.clone() };
                Some((*i, shell::evaluated::evaluate(&file, &text, &tree)))
            })
            .collect()
    };
    let evaluated = on_evaluation_pool(evaluate);
    let mut unexamined = Vec::new();
    for (i, e) in evaluated {
        let f = &mut files[i];
        let file = FileRef { path: f.path.clone(), artifact: f.artifact.clone() };
        if let Some(why) = apply_evaluated(&file, f, e) {
            unexamined.push((f.path.clone(), why));
        }
    }
    unexamined
}

/// Stack a pool thread keeps beyond an evaluation's room, for the frames
/// of the pool and the reader below it.
const POOL_MARGIN: usize = 16 << 20;

/// Run `work` on threads with the interpreter's room, so that each
/// evaluation it makes runs in place (on this thread when no pool starts).
pub fn on_evaluation_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match stack::pool(shell::syntax::STACK + POOL_MARGIN) {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// Why a JSON or YAML file was not read as a document.
enum Unstructured {
    /// A YAML document that does not load (past the alias budget, nested
    /// past the parser's limit, broken): what it holds is not examined.
    Unread(String),
    /// Not a document of its kind (or not UTF-8): read as text.
    Other(String),
}

enum Document {
    Whole(Vec<u8>),
    /// Over the size limit: the bytes read so far.
    TooLarge(Vec<u8>),
}

fn read_document(reader: &mut dyn Read) -> io::Result<Document> {
    let mut head = Vec::new();
    reader.take(MAX_DOCUMENT + 1).read_to_end(&mut head)?;
    Ok(if head.len() as u64 > MAX_DOCUMENT { Document::TooLarge(head) } else { Document::Whole(head) })
}

impl Extractor<'_> {
    /// Parse a whole JSON or YAML document; `Err` says why it must be read
    /// as text, `Ok(Some(why))` which parts were set aside unread.
    fn structured(&self, file: &FileRef, kind: FileKind, bytes: &[u8], evidence: &mut FileEvidence) -> Result<Option<String>, Unstructured> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 ({e})"));
        if let Some(document) = TreeDocument::of(&file.path) {
            evidence.tree_document = Some(Box::new((document, text.clone().map(str::to_string))));
        }
        let text = text.map_err(Unstructured::Other)?;
        // The runner-label table, for the evaluation of the runners a master-config entry runs on.
        if self.defer_scripts && yaml::runners::is_runner_labels(&file.path) {
            evidence.text = Some(text.into());
        }
        if kind == FileKind::Yaml {
            evidence.code_lines = yaml::workflow::code_lines(&file.path, text);
            // Whether past the alias budget, nested past the parser's limit or
            // broken: what the document holds is not known, so it is not examined.
            let (yaml, aside) = yaml::env::scan_around(file, text).map_err(|e| Unstructured::Unread(e.to_string()))?;
            evidence.env = yaml.env;
            evidence.records = yaml.records;
            evidence.recipe = yaml.recipe;
            evidence.master = yaml.master;
            evidence.actions = yaml.mounts;
            let unread: Vec<String> = aside.iter().map(|a| format!("lines {}-{} ({})", a.first, a.last, a.why)).collect();
            for a in &aside {
                evidence.notes.push(Note { line: Some(a.first as u64), message: format!("lines {}-{} set aside unread: {}", a.first, a.last, a.why) });
            }
            return Ok((!unread.is_empty()).then(|| format!("{}: not read (what they hold is not judged); the rest of the file was", unread.join("; "))));
        }
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| Unstructured::Other(format!("not valid JSON ({e})")))?;
        evidence.metadata = json::metadata::from_json(file, &value, text).map(Box::new);
        evidence.eval_payload = file.path.rsplit('/').next() == Some("meta_env.json");
        evidence.env = json::env::scan(file, &value, text);
        evidence.eval_scores = json::eval_results::scores(file, &value, text);
        evidence.failed_eval_concs = json::eval_results::failed_concurrencies(&value);
        Ok(None)
    }
}

/// Reading a file needs nothing from other files: a bundle's files can be
/// read on several threads, their evidence kept in walk order.
impl Examine for Extractor<'_> {
    fn examine(&self, path: &str, reader: &mut dyn Read) -> (io::Result<Disposition>, Examined) {
        let kind = match classify(path) {
            Ok(kind) => kind,
            Err(reason) => return (Ok(Disposition::Skipped(reason.to_string())), Box::new(None::<FileEvidence>)),
        };
        let (evidence, incomplete) = self.extract(path, kind, reader);
        let disposition = match incomplete {
            Some(reason) => Disposition::Partial(reason),
            None => Disposition::Read,
        };
        (Ok(disposition), Box::new(Some(evidence)))
    }
}

impl MemberVisitor for Extractor<'_> {
    fn visit(&mut self, path: &str, reader: &mut dyn Read) -> io::Result<Disposition> {
        let (disposition, examined) = self.examine(path, reader);
        self.accept(examined);
        disposition
    }

    fn examiner(&self) -> Option<&dyn Examine> {
        Some(self)
    }

    fn accept(&mut self, examined: Examined) {
        if let Ok(evidence) = examined.downcast::<Option<FileEvidence>>() {
            self.files.extend(*evidence);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert_eq!(classify("a/results/server.log"), Ok(FileKind::Log));
        assert_eq!(classify("a/results/sglang_command.txt"), Ok(FileKind::Command));
        assert_eq!(classify("a/results/benchmark_command.txt"), Ok(FileKind::Log));
        assert_eq!(classify("a/env.sh"), Ok(FileKind::Script));
        assert_eq!(classify("a/meta_env.json"), Ok(FileKind::Json));
        assert_eq!(classify("a/server.log.gz"), Ok(FileKind::Log));
        assert_eq!(classify("recipes/dsv4-mtp.yml"), Ok(FileKind::Yaml));
        assert_eq!(classify("configs/sitecustomize.py"), Ok(FileKind::Python));
        assert!(FileKind::ALL.iter().all(|k| serde_json::to_value(k).unwrap() == k.name()));
        assert!(classify("a/gpu_metrics.csv").is_err());
        assert!(classify("a/samples_gsm8k.jsonl").is_err());
    }

    #[test]
    fn extracts_command_env_and_notes() {
        let ex = Extractor::new(1 << 20);
        let text = "SGLANG_X=1 python3 -m sglang.launch_server --tp 4 \nbad 'quote\n";
        let (ev, incomplete) = ex.extract("agentic_R/results/sglang_command.txt", FileKind::Command, &mut text.as_bytes());
        assert_eq!(incomplete, None);
        assert_eq!(ev.artifact.as_deref(), Some("agentic_R"));
        assert_eq!(ev.commands.len(), 1);
        assert_eq!(ev.commands[0].argv[0], "python3");
        assert_eq!(ev.env.len(), 1);
        assert_eq!(ev.notes.len(), 1);
    }

    #[test]
    fn long_lines_make_a_file_partial() {
        let ex = Extractor::new(8);
        let (_, incomplete) = ex.extract("x.log", FileKind::Log, &mut "0123456789abcdef\nA=1\n".as_bytes());
        assert!(incomplete.unwrap().contains("longer than 8 bytes"));
    }

    #[test]
    fn json_metadata_and_fallback() {
        let ex = Extractor::new(1 << 20);
        let (ev, _) = ex.extract("eval_x/meta_env.json", FileKind::Json, &mut r#"{"tp": 8}"#.as_bytes());
        assert!(ev.eval_payload);
        assert_eq!(ev.metadata.unwrap().meta.tp, Some(8));
        let (ev, incomplete) = ex.extract("x.json", FileKind::Json, &mut "{\"a\": NaN}\nexport A=1\n".as_bytes());
        assert_eq!(incomplete, None);
        assert_eq!(ev.env.len(), 1);
        assert!(ev.notes[0].message.contains("not valid JSON"));
    }
}
