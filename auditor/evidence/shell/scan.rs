//! Shell statements, from scripts and from logs (traces, commands after a
//! prompt, bare launch lines: which lines those are is [`crate::evidence::shell::log_commands`]): what
//! they put into an environment (`export`, `declare -x`, `unset`, `env
//! NAME=v cmd`, `NAME=v cmd`, `docker run -e`, `srun --export`, shell
//! variables and `set -a`) and which serving engine they launch, with
//! `$VAR` / `${VAR:-default}` resolved from the script's own plain
//! assignments, and bash arrays (`CMD=( ... )`, `CMD+=( ... )`,
//! `"${CMD[@]}"`) expanded where a command uses them, so that a launch
//! written as an array carries all its flags. Comments, `echo` text and heredocs written to files are
//! not statements; Python heredocs go to [`crate::evidence::python::environ`]. Every
//! assignment and command carries the [`Gate`] of the `EVAL_ONLY` tests
//! around it.

use crate::evidence::env::{EnvAssignment, EnvOrigin, Scope};
use crate::evidence::gate::{self, Gate, Gates};
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::python::environ;
use crate::evidence::shell::actions::{self, ActionScanner};
use crate::evidence::shell::branches::{Arg, Branch, Branches, Updates, VarState};
use crate::evidence::shell::command::Command;
use crate::evidence::shell::expand;
use crate::evidence::shell::log_commands::{LogEvent, LogStatements};
use crate::evidence::shell::read_loop;
use crate::evidence::shell::script::{self, BodyLang, Event, ScriptReader, Segment};
use crate::evidence::shell::words::{self, Token, Word, env_prefix};
use crate::evidence::text::lines::Line;
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A whole word that expands an array: `${NAME[@]}`, `${NAME[*]}`.
static ARRAY_REF: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\$\{(?P<n>[A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}$").expect("valid regex"));
/// Most elements kept in one array.
const MAX_ARRAY: usize = 4096;

/// The benchmark library's eval runners (`benchmarks/benchmark_lib.sh`).
const EVAL_RUNNERS: [&str; 3] = ["run_eval", "run_lm_eval", "run_swebench_eval"];

/// Words that may precede the command of a simple statement.
const LEADERS: [&str; 12] = ["if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec", "nohup"];

/// A file a script writes from a data heredoc (`cat > ser.yaml <<EOF`):
/// its lines as bash writes them, for [`crate::evidence::yaml::shown`]
/// to read the engine configs in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenBody {
    /// The line of the statement that opened the heredoc.
    pub opened_at: u64,
    /// Each body line with its text after expansion.
    pub lines: Vec<(Line, String)>,
    /// The lines whose value depends on which arm of an `if`/`case` ran:
    /// line number, key (the text before `:`), the note naming the block.
    pub depends: Vec<(u64, String, String)>,
    /// The file it is written to (`> FILE`, `>> FILE`, `tee FILE`), as far as the script says.
    pub target: Option<String>,
}

impl WrittenBody {
    /// Whether it is the file at `path`.
    pub fn writes(&self, path: &str) -> bool {
        self.target.as_deref() == Some(path)
    }
}

/// The body last written to `path`: what the file holds when it is read.
pub fn last_written<'w>(written: &'w [WrittenBody], path: &str) -> Option<&'w WrittenBody> {
    written.iter().rev().find(|b| b.writes(path))
}

/// Scans shell statements of one file.
pub struct ShellScanner {
    file: FileRef,
    script: ScriptReader,
    /// Plain values of shell variables assigned so far, for `$VAR` references.
    vars: HashMap<String, String>,
    /// The same, as each kind of run sees them: `[EVAL_ONLY=true, throughput]`
    /// (an assignment inside an `EVAL_ONLY` branch is seen by one kind only).
    views: [HashMap<String, String>; 2],
    /// Elements of the arrays assigned so far, expansions resolved, each
    /// with the place of its word, per kind of run.
    arrays: [HashMap<String, Vec<Arg>>; 2],
    /// `set -a` is in effect: assignments are exported.
    allexport: bool,
    /// `for NAME in WORDS`: the words a loop variable takes, in order.
    loops: HashMap<String, Vec<String>>,
    /// `while read NAMES; do ...; done <<EOF` being taken from the lines.
    read_loops: read_loop::Capture,
    /// A read loop whose `done` has been read, waiting for its input (a
    /// heredoc's body follows the `done`), with the `done` line.
    pending_loop: Option<(read_loop::ReadLoop, Line)>,
    /// Names exported so far, per kind of run (as [`Self::views`]): a later
    /// plain `NAME=v` updates the value the child sees in the runs that exported it.
    exported: [std::collections::HashSet<String>; 2],
    /// The here-string (`<<< WORD`) of the simple command being read, for `read`.
    herestring: Option<String>,
    /// How deep `eval` strings and sourced heredocs are being read (bounded).
    eval_depth: usize,
    /// The file the heredoc being opened writes, resolved.
    heredoc_target: Option<String>,
    /// `alias NAME=VALUE` definitions, and whether `shopt -s expand_aliases`
    /// makes bash expand them in a script.
    aliases: HashMap<String, String>,
    expand_aliases: bool,
    /// The `EVAL_ONLY` tests around the statement being read, and its gate.
    gates: Gates,
    gate: Gate,
    pub assignments: Vec<EnvAssignment>,
    pub commands: Vec<Command>,
    /// What the script does to files and packages.
    pub actions: ActionScanner,
    /// The statements of program output, when reading a log.
    log: LogStatements,
    /// The statement that opened the current heredoc: its line and provenance.
    heredoc_at: Option<(u64, Provenance)>,
    /// Lines that looked like statements but did not parse.
    pub problems: Vec<Provenance>,
    /// The bodies of the data heredocs the script writes to files, the
    /// last one possibly still being read.
    pub written: Vec<WrittenBody>,
    /// The script has an eval path: it tests `EVAL_ONLY`/`RUN_EVAL` or
    /// calls the eval runner (`run_eval`); without one an eval-only run of
    /// it runs no eval.
    pub eval_path: bool,
    /// The physical lines of the statement being read (empty for one line).
    segments: Vec<Segment>,
    /// The `if`/`case` blocks around the statement, and the variables whose
    /// value depends on which arm of one runs (with a note saying so).
    branches: Branches,
    branch: HashMap<String, Branch>,
    /// Values of variables with the references the input does not resolve
    /// left in (`${WORKSPACE}/utils/aiperf`): enough to name what a script
    /// installs or edits, never a launch argument.
    partial: HashMap<String, String>,
}

impl ShellScanner {
    pub fn new(file: FileRef) -> Self {
        ShellScanner {
            file,
            script: ScriptReader::default(),
            vars: HashMap::new(),
            views: Default::default(),
            arrays: Default::default(),
            allexport: false,
            loops: HashMap::new(),
            read_loops: read_loop::Capture::default(),
            pending_loop: None,
            exported: Default::default(),
            herestring: None,
            eval_depth: 0,
            heredoc_target: None,
            aliases: HashMap::new(),
            expand_aliases: false,
            gates: Gates::default(),
            gate: Gate::Always,
            assignments: Vec::new(),
            commands: Vec::new(),
            actions: ActionScanner::default(),
            log: LogStatements::default(),
            heredoc_at: None,
            problems: Vec::new(),
            written: Vec::new(),
            eval_path: false,
            segments: Vec::new(),
            branches: Branches::default(),
            branch: HashMap::new(),
            partial: HashMap::new(),
        }
    }

    /// A line of a shell script.
    pub fn script_line(&mut self, line: &Line) {
        if line.text.trim_start().starts_with('#') {
            self.actions.comment(line.number, &line.text);
        }
        let closed = self.read_loops.line(line.number, &line.text);
        for event in self.script.push(line) {
            self.event(event);
        }
        if let Some(closed) = closed {
            self.replay_read_loop();
            self.pending_loop = Some((closed, line.clone()));
        }
    }

    /// End of a script or log.
    pub fn finish(&mut self) {
        for event in self.script.finish() {
            self.event(event);
        }
        self.replay_read_loop();
        for event in self.log.finish() {
            self.log_event(event);
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Statement(s) => {
                if self.pending_loop.as_ref().is_some_and(|(l, _)| s.line.number > l.done_at) {
                    self.replay_read_loop();
                }
                if s.tokens.iter().any(|t| matches!(t, Token::Operator(op, _) if op == "<<")) {
                    let first = s.line.text.lines().next().unwrap_or("");
                    self.heredoc_at = Some((s.line.number, Provenance::at_line(&self.file, s.line.number, s.line.offset, first)));
                    self.heredoc_target = self.written_to(&s.tokens);
                }
                self.segments = s.segments;
                self.statement(&s.tokens, &s.line, 0);
                self.segments.clear();
            }
            Event::Body { lang: BodyLang::Python, opened_at, line, .. } => {
                let scope = Scope::Python(opened_at);
                let gate = self.gates.current();
                let at = match &self.heredoc_at {
                    Some((n, p)) if *n == opened_at => p.clone(),
                    _ => Provenance::at_line(&self.file, line.number, line.offset, &line.text),
                };
                let span = Some((line.offset, line.offset + line.text.len() as u64));
                self.actions.python_line(opened_at, &line.text, span, gate, &at);
                self.assignments.extend(environ::scan_line(&self.file, &line, &scope).into_iter().map(|a| EnvAssignment { gate, ..a }));
            }
            Event::Body { lang: BodyLang::Shell, line, .. } => match words::tokenize(&line.text) {
                Ok(tokens) => self.statement(&tokens, &line, 0),
                Err(_) => self.problem(&line),
            },
            Event::Body { lang: BodyLang::Data, opened_at, line, expands } => self.written_line(opened_at, &line, expands),
            Event::Unparsed(line, _) => self.problem(&line),
        }
    }

    /// A line of a data heredoc: kept as the file it writes, with `$VAR`
    /// expanded as bash does for an unquoted delimiter. A line whose value
    /// depends on which arm of an `if`/`case` ran takes the value a launch
    /// argument would (the first arm's), and says so.
    fn written_line(&mut self, opened_at: u64, line: &Line, expands: bool) {
        let word = Word { text: line.text.clone(), span: (0, line.text.len()), expands: expands && line.text.contains('$') };
        let branch = self.word_branch(&word);
        let text = match word.expands {
            true => expand::resolve(&word, &self.vars).0,
            false => line.text.clone(),
        };
        if self.written.last().is_none_or(|w| w.opened_at != opened_at) {
            self.written.push(WrittenBody { opened_at, lines: Vec::new(), depends: Vec::new(), target: self.heredoc_target.clone() });
        }
        let Some(body) = self.written.last_mut() else { return };
        if let Some(branch) = branch {
            let key = line.text.split(':').next().unwrap_or("").trim().to_string();
            body.depends.push((line.number, key, branch.note));
        }
        body.lines.push((line.clone(), text));
    }

    fn problem(&mut self, line: &Line) {
        self.problems.push(Provenance::at_line(&self.file, line.number, line.offset, &line.text));
    }

    /// A line of program output: the statements [`LogStatements`] finds
    /// there (traces, commands after a prompt, bare launch lines, literal
    /// `export`s), read as a script's.
    pub fn log_line(&mut self, line: &Line) {
        self.log_read(line, &crate::evidence::text::logline::clean(&line.text));
    }

    /// [`Self::log_line`] for a line already cleaned of its log decorations.
    pub fn log_read(&mut self, line: &Line, clean: &crate::evidence::text::logline::Clean) {
        for event in self.log.push(line, clean) {
            self.log_event(event);
        }
    }

    /// A log statement runs on over lines: the next line belongs to it.
    pub fn log_open(&self) -> bool {
        self.log.is_open()
    }

    fn log_event(&mut self, event: LogEvent) {
        match event {
            LogEvent::Statement(s) => {
                self.segments = s.segments;
                self.statement(&s.tokens, &s.line, 0);
                self.segments.clear();
            }
            LogEvent::Unparsed(line) => self.problem(&line),
        }
    }

    /// One logical line: several simple commands separated by operators,
    /// each under the gate of the `EVAL_ONLY` tests around it.
    fn statement(&mut self, tokens: &[Token], line: &Line, base: usize) {
        let all: Vec<&str> = tokens
            .iter()
            .map(|t| match t {
                Token::Word(w) => w.text.as_str(),
                Token::Operator(op, _) => op.as_str(),
            })
            .collect();
        self.eval_path |= all.iter().any(|w| w.contains("EVAL_ONLY") || w.contains("RUN_EVAL") || EVAL_RUNNERS.contains(w));
        self.actions.enter(&all, line.number);
        self.statement_commands(tokens, line, base);
        self.actions.leave(&all);
        // `echo PAYLOAD | base64 -d | bash`: the decoded script runs in a
        // child shell: what it does to files counts; what it exports dies
        // with it unless it launches the engine itself.
        if let Some(script) = self.piped_payload(tokens) {
            self.run_child(&script, line);
        }
        if let Some(script) = self.sourced_substitution(tokens) {
            self.run_text(&script, line);
        }
    }

    /// A `while read` loop whose input is now known, run as bash runs it:
    /// its body once per input line, the names `read` assigns set to the
    /// line's fields, each pass placed at the input line it reads.
    fn replay_read_loop(&mut self) {
        let Some((read, done)) = self.pending_loop.take() else { return };
        let input: Vec<(Line, String)> = match &read.input {
            read_loop::Input::Heredoc => self.written.iter().rev().find(|b| b.opened_at == read.done_at).map(|b| b.lines.clone()).unwrap_or_default(),
            read_loop::Input::Herestring(word) => {
                let word = words::split_words(word).ok().and_then(|w| w.into_iter().next());
                match word.map(|w| self.resolve(&w)) {
                    Some((text, false)) => text.lines().map(|l| (done.clone(), l.to_string())).collect(),
                    _ => Vec::new(),
                }
            }
            read_loop::Input::File(path) => {
                let path = words::split_words(path).ok().and_then(|w| w.into_iter().next()).map(|w| self.resolve(&w));
                match path {
                    Some((path, false)) => last_written(&self.written, &path).map(|b| b.lines.clone()).unwrap_or_default(),
                    _ => Vec::new(),
                }
            }
        };
        for (line, text) in input.iter().take(1_000) {
            let bound = read_loop::fields(&read.names, read.ifs.as_deref(), text);
            let mut script: Vec<String> = bound.iter().map(|(name, value)| format!("{name}={}", words::quoted(value))).collect();
            script.extend(read.body.iter().cloned());
            self.run_text(&script.join("\n"), line);
        }
    }

    /// `source <(echo PAYLOAD | base64 -d)`: the text the process
    /// substitution prints runs in this shell.
    fn sourced_substitution(&self, tokens: &[Token]) -> Option<String> {
        let [Token::Word(w), Token::Operator(lt, _), Token::Operator(open, _), inner @ .., Token::Operator(close, _)] = tokens else { return None };
        if !(matches!(w.text.as_str(), "source" | ".") && lt == "<" && open == "(" && close == ")") {
            return None;
        }
        self.decoded(&pipeline_stages(inner), inner)
    }

    /// `echo TEXT > FILE`, `printf FORMAT ARGS >> FILE` (and decoded
    /// payloads written the same way): the text the file holds, kept as a
    /// written body at the command's line, so that a later `source FILE`
    /// runs it. `>` starts the file anew, `>>` adds to it.
    fn printed_to_file(&mut self, command: &[&Word], tokens: &[Token], line: &Line) {
        if !command.first().is_some_and(|w| matches!(w.text.as_str(), "echo" | "printf" | "base64" | "xxd")) {
            return;
        }
        if self.written.len() >= 10_000 {
            return;
        }
        let Some(text) = self.decoded(&[command.to_vec()], tokens) else { return };
        let writes: Vec<(bool, String)> = tokens
            .windows(2)
            .filter_map(|pair| match pair {
                [Token::Operator(op, _), Token::Word(w)] if op == ">" || op == ">>" => match self.resolve(w) {
                    (target, false) => Some((op == ">>", target)),
                    (_, true) => None,
                },
                _ => None,
            })
            .collect();
        for (append, target) in writes {
            let lines: Vec<(Line, String)> = text.lines().map(|l| (line.clone(), l.to_string())).collect();
            match self.written.iter_mut().rev().find(|b| b.writes(&target)) {
                Some(body) if append => body.lines.extend(lines),
                _ => self.written.push(WrittenBody { opened_at: line.number, lines, depends: Vec::new(), target: Some(target) }),
            }
        }
    }

    /// A script run by a child shell: what it does to files counts; what it
    /// exports dies with it unless it launches the engine itself.
    fn run_child(&mut self, script: &str, line: &Line) {
        let (assignments, commands) = (self.assignments.len(), self.commands.len());
        self.run_text(script, line);
        if self.commands.len() == commands {
            self.assignments.truncate(assignments);
        }
    }

    /// `bash -c SCRIPT [NAME ARGS...]`: SCRIPT (a literal, a variable the
    /// input sets, or a decoded `$(...)`) runs in a child shell, `"$@"`
    /// standing for the ARGS as written.
    fn shell_c(&mut self, words: &[&Word], line: &Line) {
        let flag = |w: &&&Word| w.text == "-c" || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.ends_with('c'));
        let Some(k) = words.iter().position(|w| flag(&w)) else { return };
        let Some(script) = words.get(k + 1) else { return };
        let text = match self.decoded_substitution(&script.text) {
            Some(text) => text,
            None => match self.resolve(script) {
                (text, false) => text,
                (_, true) => return,
            },
        };
        let args: Vec<&str> = words.get(k + 3..).unwrap_or(&[]).iter().map(|w| w.text.as_str()).collect();
        let mut text = text.replace("\"$@\"", &args.join(" ")).replace("$@", &args.join(" "));
        // A non-interactive bash first sources the exported `BASH_ENV`.
        let bash_env = self.exported.iter().any(|e| e.contains("BASH_ENV")).then(|| self.vars.get("BASH_ENV")).flatten();
        if let Some(body) = bash_env.and_then(|path| last_written(&self.written, path)) {
            let sourced: String = body.lines.iter().map(|(_, t)| format!("{t}\n")).collect();
            text = format!("{sourced}{text}");
        }
        self.run_child(&text, line);
    }

    /// The script a pipeline decodes and pipes to a shell: a literal (or a
    /// variable the input sets) from `echo`/`printf`/`<<<`, through
    /// `base64 -d`, into `bash`/`sh`.
    fn piped_payload(&self, tokens: &[Token]) -> Option<String> {
        let stages = pipeline_stages(tokens);
        let [rest @ .., last] = stages.as_slice() else { return None };
        let shell = last.first().is_some_and(|w| matches!(w.text.rsplit('/').next(), Some("bash" | "sh" | "dash" | "zsh")));
        if !shell {
            return None;
        }
        self.decoded(rest, tokens)
    }

    /// What `$(echo PAYLOAD | base64 -d)` prints, for `eval`: the decoded
    /// script, when the payload is a literal or a variable the input sets.
    fn decoded_substitution(&self, text: &str) -> Option<String> {
        let inner = text.strip_prefix("$(")?.strip_suffix(')')?;
        let tokens = words::tokenize(inner).ok()?;
        let stages = pipeline_stages(&tokens);
        self.decoded(&stages, &tokens)
    }

    /// The text a pipeline's stages print: `echo` (`-e` escapes read),
    /// `printf` (its escapes, `\xHH` and octal among them) or a `<<<` of a
    /// literal or a variable the input sets, through any number of
    /// decoders (`base64 -d`, `xxd -r -p`).
    fn decoded(&self, stages: &[Vec<&Word>], tokens: &[Token]) -> Option<String> {
        let [first, decoders @ ..] = stages else { return None };
        let herestring = || {
            tokens.windows(3).find_map(|w| match w {
                [Token::Operator(a, _), Token::Operator(b, _), Token::Word(v)] if a == "<<" && b == "<" => Some(v),
                _ => None,
            })
        };
        let mut text = match first.first().map(|w| w.text.as_str())? {
            "echo" => {
                let flags: String = first[1..].iter().take_while(|w| w.text.starts_with('-')).map(|w| w.text.clone()).collect();
                let said: Vec<(String, bool)> = first[1..].iter().skip_while(|w| w.text.starts_with('-')).map(|w| self.resolve(w)).collect();
                if said.iter().any(|(_, open)| *open) {
                    return None;
                }
                let joined = said.into_iter().map(|(t, _)| t).collect::<Vec<_>>().join(" ");
                if flags.contains('e') { expand::printf(&joined.replace('%', "%%"), &[])? } else { joined }
            }
            "printf" => {
                let args: Vec<(String, bool)> = first[1..].iter().map(|w| self.resolve(w)).collect();
                let (format, rest) = args.split_first()?;
                if args.iter().any(|(_, open)| *open) {
                    return None;
                }
                expand::printf(&format.0, &rest.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>())?
            }
            _ if decoder(first).is_some() => {
                let (text, open) = self.resolve(herestring()?);
                if open {
                    return None;
                }
                text
            }
            _ => return None,
        };
        let applied = if decoder(first).is_some() { stages } else { decoders };
        for stage in applied {
            text = decoder(stage)?(&text)?;
        }
        Some(text)
    }

    /// Lines of a script the statement runs (an `eval` string, a decoded
    /// payload) read as its own statements, a few levels deep; places cite
    /// the line that runs them.
    fn run_text(&mut self, text: &str, line: &Line) {
        if self.eval_depth >= 4 {
            self.problem(line);
            return;
        }
        let segments = std::mem::take(&mut self.segments);
        self.eval_depth += 1;
        for part in text.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')) {
            match words::tokenize(part) {
                Ok(tokens) => {
                    let inner = Line { text: part.to_string(), ..line.clone() };
                    self.statement(&tokens, &inner, 0);
                }
                Err(_) => self.problem(line),
            }
        }
        self.eval_depth -= 1;
        self.segments = segments;
    }

    fn statement_commands(&mut self, tokens: &[Token], line: &Line, base: usize) {
        fn separator(t: &Token) -> Option<&str> {
            match t {
                Token::Operator(op, _) if !matches!(op.as_str(), ">" | "<" | ">>" | "&>" | ">&" | "<&" | "<<") => Some(op.as_str()),
                _ => None,
            }
        }
        let mut rest = tokens;
        loop {
            if let Some(after) = self.array_assignment(rest, line, base) {
                match after.first() {
                    None => break,
                    Some(t) if separator(t).is_some() => rest = &after[1..],
                    Some(_) => rest = after,
                }
                continue;
            }
            let end = rest.iter().position(|t| separator(t).is_some()).unwrap_or(rest.len());
            let op = rest.get(end).and_then(separator);
            let words: Vec<&Word> = rest[..end]
                .iter()
                .map_while(|t| match t {
                    Token::Word(w) => Some(w),
                    Token::Operator(..) => None,
                })
                .collect();
            let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            let pattern = self.block_keywords(&texts, op, line.number);
            let taken = self.gates.keywords(&texts);
            if pattern {
                self.gates.pattern(&texts);
            }
            self.gate = self.gates.current();
            let start = taken + words[taken..].iter().position(|w| !LEADERS.contains(&w.text.as_str())).unwrap_or(words.len() - taken);
            if !pattern {
                self.herestring = rest[..end].windows(3).find_map(|w| match w {
                    [Token::Operator(a, _), Token::Operator(b, _), Token::Word(v)] if a == "<<" && b == "<" => Some(self.resolve(v).0),
                    _ => None,
                });
                self.simple_command(&words[start..], line, base);
                self.herestring = None;
            }
            if op == Some(";;") {
                self.blocks(|b, snapshot| b.end_case_arm(snapshot));
            }
            let redirects: Vec<String> = rest[..end]
                .windows(2)
                .filter_map(|pair| match pair {
                    [Token::Operator(op, _), Token::Word(w)] if matches!(op.as_str(), ">" | ">>" | "&>") => Some(self.resolve(w).0),
                    _ => None,
                })
                .collect();
            if !redirects.is_empty() {
                let at = self.at(line, base, &words);
                self.actions.command(&[], &redirects, line.number, self.gate, &at);
                if !pattern {
                    self.printed_to_file(&words[start.min(words.len())..], &rest[..end], line);
                }
            }
            self.gates.after(&texts[taken..], op);
            match rest.get(end + 1..) {
                Some(next) if op.is_some() => rest = next,
                _ => break,
            }
        }
    }

    /// `NAME=( ... )` or `NAME+=( ... )` at the start of `tokens` (after
    /// `local`/`declare -a`): the array is recorded and the tokens after
    /// its `)` returned.
    fn array_assignment<'t>(&mut self, tokens: &'t [Token], line: &Line, base: usize) -> Option<&'t [Token]> {
        let open = script::array_start(tokens)?;
        let leaders_ok = tokens[..open - 1]
            .iter()
            .all(|t| matches!(t, Token::Word(w) if matches!(w.text.as_str(), "local" | "declare" | "typeset" | "readonly" | "-a" | "-g" | "-ga" | "-ag")));
        if !leaders_ok {
            return None;
        }
        let Token::Word(head) = &tokens[open - 1] else { return None };
        let (name, append) = script::array_name(&head.text)?;
        self.touch(name);
        let close = tokens[open..].iter().position(|t| matches!(t, Token::Operator(op, _) if op == ")")).map_or(tokens.len(), |k| open + k);
        let words: Vec<&Word> = tokens[open + 1..close]
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w),
                Token::Operator(..) => None,
            })
            .collect();
        for &view in views_of(self.gates.current()) {
            let mut elements = if append { self.arrays[view].get(name).cloned().unwrap_or_default() } else { Vec::new() };
            elements.extend(self.expand(&words, view, line, base));
            elements.truncate(MAX_ARRAY);
            match elements.first() {
                Some(first) => self.views[view].insert(name.to_string(), first.text.clone()),
                None => self.views[view].remove(name),
            };
            if view == 1 {
                match elements.iter().find_map(|a| a.branch.clone()) {
                    Some(note) => self.branch.insert(name.to_string(), note),
                    None => self.branch.remove(name),
                };
            }
            self.arrays[view].insert(name.to_string(), elements);
        }
        Some(tokens.get(close + 1..).unwrap_or(&[]))
    }

    /// The words of a command or array as bash passes them on in one kind
    /// of run (`view`): `"${A[@]}"` becomes the elements of array `A`,
    /// other words their resolved value; each with the place of its word
    /// (an array's element keeps the line it was written on).
    fn expand(&self, words: &[&Word], view: usize, line: &Line, base: usize) -> Vec<Arg> {
        let mut out = Vec::new();
        for word in words {
            match ARRAY_REF.captures(&word.text).filter(|_| word.expands) {
                Some(caps) => out.extend(self.arrays[view].get(&caps["n"]).into_iter().flatten().cloned()),
                None => out.push(Arg { text: self.resolve_in(word, Some(view)).0, at: self.at(line, base, &[word]), branch: self.word_branch(word) }),
            }
            if out.len() > MAX_ARRAY {
                out.truncate(MAX_ARRAY);
                break;
            }
        }
        out
    }

    /// Record `NAME=value` (the assignment word) as the kinds of run that
    /// execute it see it.
    fn remember(&mut self, name: &str, word: &Word) {
        let raw = words::split_assignment(&word.text).map_or("", |(_, v)| v);
        match self.word_branch(word).map(|b| self.narrow(word, raw, b)) {
            Some(branch) => self.branch.insert(name.to_string(), branch),
            None => self.branch.remove(name),
        };
        // `P=$(python3 -c 'import X; print(X.__file__)')` holds where X is installed.
        let located = words::split_assignment(&word.text).and_then(|(_, v)| v.starts_with("$(").then(|| actions::module_location(v)).flatten());
        if let Some(path) = located {
            self.vars.insert(name.to_string(), path.clone());
            for &view in views_of(self.gate) {
                self.views[view].insert(name.to_string(), path.clone());
            }
            return;
        }
        if !raw.starts_with("$(") && self.partial.len() < 4096 {
            let mut known = self.partial.clone();
            known.extend(self.views[1].iter().map(|(k, v)| (k.clone(), v.clone())));
            let (text, _) = expand::resolve(word, &known);
            self.partial.insert(name.to_string(), text.split_once('=').map_or(String::new(), |(_, v)| v.to_string()));
        }
        for &view in views_of(self.gate) {
            // `SPEC=$(printf '{"k": %d}' "$K")` builds a value from pieces.
            if let Some(value) = self.printf_value(raw, view) {
                self.views[view].insert(name.to_string(), value);
                continue;
            }
            let (resolved, expands) = self.resolve_in(word, Some(view));
            match resolved.split_once('=') {
                Some((_, value)) if !expands => self.views[view].insert(name.to_string(), value.to_string()),
                _ => self.views[view].remove(name),
            };
        }
    }

    /// The block keywords (`if`, `elif`, `else`, `fi`, `case`, `esac`) and
    /// `case` patterns that start a simple command, for [`Branches`];
    /// returns whether the command is a pattern (not run).
    fn block_keywords(&mut self, texts: &[&str], op: Option<&str>, line: u64) -> bool {
        for (k, word) in texts.iter().enumerate() {
            match *word {
                "if" => {
                    let condition = &texts[k + 1..];
                    self.branches.open(condition, gate::test_gate(condition).is_none(), false, line);
                    return false;
                }
                "case" => {
                    let subject = &texts[k + 1..texts.len().saturating_sub(1).max(k + 1)];
                    // A `case` over `EVAL_ONLY` is not a choice: the gates split the runs on it.
                    let choice = !subject.first().is_some_and(|w| gate::is_eval_only(w));
                    self.branches.open(subject, choice, true, line);
                    return false;
                }
                "elif" | "else" => {
                    let default = *word == "else";
                    self.blocks(|b, snapshot| b.next_arm(default, snapshot));
                }
                "fi" | "esac" => {
                    self.blocks(|b, snapshot| b.close(snapshot));
                }
                "then" | "do" => {}
                _ => break,
            }
        }
        if !self.branches.expecting_pattern() {
            return false;
        }
        // `a|b)`: the words before `|` are part of the pattern too.
        match op {
            Some(")") => {
                let first = texts.iter().position(|w| *w != "(").unwrap_or(texts.len());
                self.branches.start_arm(texts[first..] == ["*"]);
                true
            }
            Some("|") => true,
            _ => false,
        }
    }

    /// A value that depends on a block, built as a JSON object (a
    /// speculative config assembled from variables): only the keys whose
    /// values change with the variables the block decides depend on it.
    fn narrow(&self, word: &Word, raw: &str, branch: Branch) -> Branch {
        if branch.keys.is_some() {
            return branch;
        }
        let value_with = |vars: &HashMap<String, String>| {
            expand::command_substitution(raw, vars).or_else(|| {
                let (text, expands) = expand::resolve(word, vars);
                (!expands).then(|| text.split_once('=').map_or(String::new(), |(_, v)| v.to_string()))
            })
        };
        let mut other = self.views[1].clone();
        for caps in expand::VAR_REF.captures_iter(&word.text) {
            let name = caps.name("b").or(caps.name("t")).or(caps.name("n")).map_or("", |m| m.as_str());
            if self.branch.contains_key(name) {
                other.insert(name.to_string(), "__auditor_other_arm__".to_string());
            }
        }
        let object = |v: Option<String>| v.and_then(|v| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&v).ok());
        match (object(value_with(&self.views[1])), object(value_with(&other))) {
            (Some(a), Some(b)) => {
                let keys = a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).cloned().collect::<std::collections::BTreeSet<_>>();
                Branch { keys: Some(keys.into_iter().collect()), ..branch }
            }
            _ => branch,
        }
    }

    /// `$(printf FORMAT ARGS...)` as one kind of run sees it; `None` when
    /// it is not a lone printf, an argument is unresolved, or the format
    /// has conversions [`printf`] does not do.
    fn printf_value(&self, value: &str, view: usize) -> Option<String> {
        expand::command_substitution(value, &self.views[view])
    }

    /// Run a block operation with the variables' states at hand, and apply its updates.
    fn blocks(&mut self, op: impl FnOnce(&mut Branches, &dyn Fn(&str) -> VarState) -> Updates) {
        let mut branches = std::mem::take(&mut self.branches);
        let updates = op(&mut branches, &|n| self.snapshot(n));
        self.branches = branches;
        self.apply(updates);
    }

    /// What the scanner knows of variable `name` now.
    fn snapshot(&self, name: &str) -> VarState {
        VarState {
            var: self.vars.get(name).cloned(),
            views: [0, 1].map(|v| self.views[v].get(name).cloned()),
            arrays: [0, 1].map(|v| self.arrays[v].get(name).cloned()),
            branch: self.branch.get(name).cloned(),
        }
    }

    /// Set variables to the states the blocks decided.
    fn apply(&mut self, updates: Updates) {
        for (name, state) in updates {
            fn put<T>(map: &mut HashMap<String, T>, name: &str, value: Option<T>) {
                match value {
                    Some(v) => map.insert(name.to_string(), v),
                    None => map.remove(name),
                };
            }
            put(&mut self.vars, &name, state.var);
            let [v0, v1] = state.views;
            put(&mut self.views[0], &name, v0);
            put(&mut self.views[1], &name, v1);
            let [a0, a1] = state.arrays;
            put(&mut self.arrays[0], &name, a0);
            put(&mut self.arrays[1], &name, a1);
            put(&mut self.branch, &name, state.branch);
        }
    }

    /// Variable `name` is about to be assigned.
    fn touch(&mut self, name: &str) {
        let state = self.snapshot(name);
        self.branches.touch(name, || state);
    }

    /// The block a word's value depends on: that of a variable it expands.
    fn word_branch(&self, word: &Word) -> Option<Branch> {
        if !word.expands || self.branch.is_empty() {
            return None;
        }
        if let Some(caps) = ARRAY_REF.captures(&word.text) {
            return self.branch.get(&caps["n"]).cloned();
        }
        expand::VAR_REF.captures_iter(&word.text).find_map(|caps| {
            let name = caps.name("b").or(caps.name("t")).or(caps.name("n")).map_or("", |m| m.as_str());
            self.branch.get(name).cloned()
        })
    }

    fn at(&self, line: &Line, base: usize, words: &[&Word]) -> Provenance {
        let (Some(first), Some(last)) = (words.first(), words.last()) else {
            return Provenance::at_line(&self.file, line.number, line.offset, &line.text);
        };
        let (start, end) = (base + first.span.0, base + last.span.1);
        let text = line.text.get(start..end).unwrap_or(&line.text);
        let (number, offset) = script::locate(&self.segments, start).unwrap_or((line.number, line.offset + start as u64));
        Provenance::at_line(&self.file, number, offset, text)
    }

    fn push(&mut self, name: &str, value: Option<String>, origin: EnvOrigin, expands: bool, scope: &Scope, provenance: Provenance) {
        let mut a = EnvAssignment::new(name, value, origin, scope.clone(), provenance);
        a.expands = expands;
        a.gate = self.gate;
        self.assignments.push(a);
    }

    /// The value of a word, with `$VAR` references the script defines resolved.
    fn resolve(&self, word: &Word) -> (String, bool) {
        self.resolve_in(word, None)
    }

    /// The value of a word as one kind of run sees it (`None`: the last
    /// value assigned on any path).
    fn resolve_in(&self, word: &Word, view: Option<usize>) -> (String, bool) {
        if !word.expands {
            return (word.text.clone(), false);
        }
        let vars = match view {
            Some(v) => &self.views[v],
            None => &self.vars,
        };
        expand::resolve(word, vars)
    }

    fn simple_command(&mut self, words: &[&Word], line: &Line, base: usize) {
        let Some(first) = words.first() else { return };
        // An alias bash expands (scripts need `shopt -s expand_aliases`): its words, then the rest.
        if let Some(value) = self.aliases.get(&first.text).filter(|_| self.expand_aliases && self.eval_depth < 4).cloned() {
            let Ok(tokens) = words::tokenize(&value) else { return };
            let head: Vec<Word> = tokens
                .into_iter()
                .filter_map(|t| match t {
                    Token::Word(w) => Some(Word { span: first.span, ..w }),
                    Token::Operator(..) => None,
                })
                .collect();
            let expanded: Vec<&Word> = head.iter().chain(words[1..].iter().copied()).collect();
            self.eval_depth += 1;
            self.simple_command(&expanded, line, base);
            self.eval_depth -= 1;
            return;
        }
        match first.text.as_str() {
            "alias" => {
                for word in &words[1..] {
                    if let Some((name, _)) = words::split_assignment(&word.text) {
                        let (value, _) = self.resolve(word);
                        let value = value.split_once('=').map_or(String::new(), |(_, v)| v.to_string());
                        self.aliases.insert(name.to_string(), value);
                    }
                }
            }
            "shopt" => {
                let set = words.iter().any(|w| w.text == "-s");
                if words.iter().any(|w| w.text == "expand_aliases") {
                    self.expand_aliases = set;
                }
            }
            "export" | "declare" | "typeset" | "readonly" | "local" => self.declaration(words, line, base),
            "unset" => {
                for word in words.iter().skip(1).filter(|w| words::is_var_name(&w.text)) {
                    self.touch(&word.text);
                    self.branch.remove(&word.text);
                    let provenance = self.at(line, base, &[first, word]);
                    self.vars.remove(&word.text);
                    self.exported.iter_mut().for_each(|e| {
                        e.remove(&word.text);
                    });
                    for view in &mut self.views {
                        view.remove(&word.text);
                    }
                    self.push(&word.text, None, EnvOrigin::Unset, false, &Scope::File, provenance);
                }
            }
            "set" => {
                let args: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
                for (k, arg) in args.iter().enumerate() {
                    let allexport_next = args.get(k + 1) == Some(&"allexport");
                    match *arg {
                        "+a" => self.allexport = false,
                        "-o" if allexport_next => self.allexport = true,
                        "+o" if allexport_next => self.allexport = false,
                        f if f.starts_with('-') && !f.starts_with("--") && f != "-o" && f.contains('a') => self.allexport = true,
                        _ => {}
                    }
                }
            }
            // `command export X=1`, `builtin export X=1`: the builtin itself.
            "command" | "builtin" if words.get(1).is_some_and(|w| !w.text.starts_with('-')) => self.simple_command(&words[1..], line, base),
            "eval" => self.eval(words, line),
            "source" | "." => self.source(words),
            // A shell by name or path (`/bin/sh -c ...`, as an image's Entrypoint has it).
            shell if matches!(shell.rsplit('/').next(), Some("bash" | "sh" | "dash" | "zsh")) => {
                self.command(words, line, base);
                self.shell_c(words, line);
            }
            "printf" => self.printf_v(words, line, base),
            "read" => self.read(words, line, base),
            "echo" | "#" => {}
            "for" => self.for_loop(words),
            _ => self.command(words, line, base),
        }
    }

    /// A word whose assignment name comes from an expansion, as bash makes
    /// it (`${PREFIX}_X=1`, `$(printf 'X=%d' 1)`), when the input shows it
    /// whole: the literal word it stands for.
    fn computed_word(&self, word: &Word) -> Option<Word> {
        let text = match self.printf_value(&word.text, 1) {
            Some(v) => v,
            None => {
                let (text, open) = self.resolve(word);
                if open {
                    return None;
                }
                text
            }
        };
        words::split_assignment(&text).is_some().then_some(Word { text, span: word.span, expands: false })
    }

    /// `for NAME in WORDS...`: the values NAME takes in the loop's body,
    /// when every word is known.
    fn for_loop(&mut self, words: &[&Word]) {
        let [_, name, keyword, values @ ..] = words else { return };
        if keyword.text != "in" || !words::is_var_name(&name.text) {
            return;
        }
        let resolved: Vec<(String, bool)> = values.iter().map(|w| self.resolve(w)).collect();
        match resolved.iter().any(|(_, open)| *open) {
            true => self.loops.remove(&name.text),
            false => self.loops.insert(name.text.clone(), resolved.into_iter().map(|(t, _)| t).collect()),
        };
    }

    /// A declaration's word as the words bash gives it: a loop variable
    /// (`export "$kv"` in `for kv in A=1 B=2`) is each of its values, and
    /// `$(cat FILE)` / `$(grep -v '^#' FILE | xargs)` of a file the script
    /// wrote is that file's words (comments and blank lines left out).
    fn spread(&self, word: &Word) -> Vec<Word> {
        let at = |text: &str| Word { text: text.to_string(), span: word.span, expands: false };
        let name = word.text.strip_prefix('$').map(|n| n.trim_start_matches('{').trim_end_matches('}'));
        if let Some(values) = name.and_then(|n| self.loops.get(n)).filter(|_| word.expands) {
            return values.iter().map(|v| at(v)).collect();
        }
        if let Some(text) = self.file_output(&word.text) {
            return text.split_whitespace().map(at).collect();
        }
        vec![word.clone()]
    }

    /// What `$(cat FILE ...)`, `$(grep ... FILE | xargs)` print of a file the
    /// script wrote: its lines that are not comments or blank.
    fn file_output(&self, text: &str) -> Option<String> {
        let inner = text.strip_prefix("$(")?.strip_suffix(')')?;
        let tokens = words::tokenize(inner).ok()?;
        let stages = pipeline_stages(&tokens);
        let first = stages.first()?;
        if !matches!(first.first()?.text.as_str(), "cat" | "grep") {
            return None;
        }
        let (path, open) = self.resolve(first.last()?);
        let body = last_written(&self.written, &path).filter(|_| !open)?;
        let kept: Vec<&str> = body.lines.iter().map(|(_, t)| t.trim()).filter(|t| !t.is_empty() && !t.starts_with('#')).collect();
        Some(kept.join("\n"))
    }

    /// `eval STRING...`: the joined words read as a statement of their own
    /// (places cite the `eval` line), a few levels deep.
    fn eval(&mut self, words: &[&Word], line: &Line) {
        // `eval "$(echo PAYLOAD | base64 -d)"`: the decoded script runs in this shell.
        if let [_, word] = words
            && let Some(script) = self.decoded_substitution(&word.text)
        {
            return self.run_text(&script, line);
        }
        let text = words[1..].iter().map(|w| self.resolve(w).0).collect::<Vec<_>>().join(" ");
        self.run_text(&text, line);
    }

    /// The file a heredoc statement writes: the word after `>`/`>>`, or `tee`'s operand.
    fn written_to(&self, tokens: &[Token]) -> Option<String> {
        let word = tokens.windows(2).find_map(|w| match w {
            [Token::Operator(op, _), Token::Word(file)] if op == ">" || op == ">>" => Some(file),
            _ => None,
        });
        let word = word.or_else(|| {
            let tee = tokens.iter().position(|t| matches!(t, Token::Word(w) if w.text == "tee"))?;
            tokens[tee + 1..].iter().find_map(|t| match t {
                Token::Word(w) if !w.text.starts_with('-') => Some(w),
                _ => None,
            })
        })?;
        let (text, open) = self.resolve(word);
        (!open).then_some(text)
    }

    /// `source FILE` / `. FILE` of a file this script wrote from a heredoc:
    /// its lines run here, as the script they are (places cite the body's lines).
    fn source(&mut self, words: &[&Word]) {
        let Some(arg) = words.get(1) else { return };
        let (path, open) = self.resolve(arg);
        if open || self.eval_depth >= 4 {
            return;
        }
        let Some(body) = last_written(&self.written, &path).cloned() else { return };
        let segments = std::mem::take(&mut self.segments);
        self.eval_depth += 1;
        for (line, text) in &body.lines {
            let Ok(tokens) = words::tokenize(text) else { continue };
            let inner = Line { text: text.clone(), ..line.clone() };
            self.statement(&tokens, &inner, 0);
        }
        self.eval_depth -= 1;
        self.segments = segments;
    }

    /// `printf -v NAME FORMAT ARGS...`: NAME is assigned the formatted text.
    fn printf_v(&mut self, words: &[&Word], line: &Line, base: usize) {
        let Some(k) = words.iter().position(|w| w.text == "-v") else { return };
        let (Some(name), Some(format)) = (words.get(k + 1), words.get(k + 2)) else { return };
        let args: Vec<(String, bool)> = words[k + 2..].iter().map(|w| self.resolve(w)).collect();
        let value = match args.iter().any(|(_, open)| *open) {
            false => expand::printf(&args[0].0, &args[1..].iter().map(|(t, _)| t.clone()).collect::<Vec<_>>()),
            true => None,
        };
        let provenance = self.at(line, base, &[words[0], name, format]);
        self.assign_value(&name.text, value, provenance);
    }

    /// `read [-r] NAME... <<< WORD`: the here-string split over the names,
    /// the last taking the rest.
    fn read(&mut self, words: &[&Word], line: &Line, base: usize) {
        let Some(here) = self.herestring.clone() else { return };
        let names: Vec<&Word> = words[1..].iter().copied().filter(|w| words::is_var_name(&w.text)).collect();
        let mut rest = here.trim();
        for (k, name) in names.iter().enumerate() {
            let value = match k + 1 == names.len() {
                true => std::mem::take(&mut rest).to_string(),
                false => {
                    let (first, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                    rest = tail.trim_start();
                    first.to_string()
                }
            };
            let provenance = self.at(line, base, &[words[0], name]);
            self.assign_value(&name.text, Some(value), provenance);
        }
    }

    /// A variable set by a builtin other than an assignment (`printf -v`,
    /// `read`): exported when the name is, `None` when the value is not known.
    fn assign_value(&mut self, name: &str, value: Option<String>, provenance: Provenance) {
        if !words::is_var_name(name) {
            return;
        }
        self.touch(name);
        match &value {
            Some(v) => {
                self.vars.insert(name.to_string(), v.clone());
                for &view in views_of(self.gate) {
                    self.views[view].insert(name.to_string(), v.clone());
                }
            }
            None => {
                self.vars.remove(name);
            }
        }
        let (origin, gate) = self.export_of(name);
        let saved = std::mem::replace(&mut self.gate, gate);
        let expands = value.is_none();
        self.push(name, Some(value.unwrap_or_else(|| format!("${name}"))), origin, expands, &Scope::File, provenance);
        self.gate = saved;
    }

    /// Whether an assignment to `name` here reaches the environment (it is
    /// exported, or `set -a` is on), and under which gate: the runs of the
    /// current gate in which `name` was exported.
    fn export_of(&self, name: &str) -> (EnvOrigin, Gate) {
        if self.allexport {
            return (EnvOrigin::Export, self.gate);
        }
        let views = views_of(self.gate);
        let exported: Vec<usize> = views.iter().copied().filter(|v| self.exported[*v].contains(name)).collect();
        match exported.as_slice() {
            [] => (EnvOrigin::ShellVariable, self.gate),
            [view] if views.len() == 2 => (EnvOrigin::Export, [Gate::EvalOnly, Gate::NotEval][*view]),
            _ => (EnvOrigin::Export, self.gate),
        }
    }

    /// `export A=1 B`, `declare -x A=1`: exported unless `declare` lacks `-x`.
    fn declaration(&mut self, words: &[&Word], line: &Line, base: usize) {
        let builtin = words[0].text.as_str();
        let flags: String = words.iter().skip(1).filter(|w| w.text.starts_with('-')).map(|w| w.text.as_str()).collect();
        if builtin == "export" && flags.contains('n') {
            return;
        }
        let exported = builtin == "export" || flags.contains('x') || self.allexport;
        let origin = if exported { EnvOrigin::Export } else { EnvOrigin::ShellVariable };
        let spread: Vec<Word> = words.iter().skip(1).flat_map(|w| self.spread(w)).collect();
        for word in spread.iter().filter(|w| !w.text.starts_with('-')) {
            let provenance = self.at(line, base, &[word]);
            // `export ${PREFIX}_X=1`, `export "$(printf 'X=%d' 1)"`: the name is bash's to compute.
            let computed = match words::split_assignment(&word.text) {
                None if word.expands => self.computed_word(word),
                _ => None,
            };
            let word: &Word = match &computed {
                Some(w) => w,
                None => word,
            };
            if exported {
                let name = words::split_assignment(&word.text).map_or(word.text.as_str(), |(n, _)| n);
                for &view in views_of(self.gate) {
                    self.exported[view].insert(name.to_string());
                }
            }
            match words::split_assignment(&word.text) {
                Some((name, _)) => {
                    self.touch(name);
                    let (resolved, expands) = self.resolve(word);
                    let value = resolved.split_once('=').map_or(String::new(), |(_, v)| v.to_string());
                    if !expands {
                        self.vars.insert(name.to_string(), value.clone());
                    }
                    self.remember(name, word);
                    self.push(name, Some(value), origin, expands, &Scope::File, provenance);
                }
                // `export NAME` exports the shell variable's current value.
                None if exported && words::is_var_name(&word.text) => {
                    if let Some(value) = self.vars.get(&word.text).cloned() {
                        self.push(&word.text, Some(value), EnvOrigin::Export, false, &Scope::File, provenance);
                    }
                }
                None => {}
            }
        }
    }

    /// A command with its environment: leading assignments, `env`, and the
    /// container/launcher options that set a child's environment.
    fn command(&mut self, words: &[&Word], line: &Line, base: usize) {
        // `env $(cat .env) cmd`: the file's words, as bash splits them.
        if words.iter().any(|w| self.file_output(&w.text).is_some()) {
            let spread: Vec<Word> = words
                .iter()
                .flat_map(|w| match self.file_output(&w.text) {
                    Some(text) => text.split_whitespace().map(|t| Word { text: t.to_string(), span: w.span, expands: false }).collect(),
                    None => vec![(*w).clone()],
                })
                .collect();
            let spread: Vec<&Word> = spread.iter().collect();
            return self.command(&spread, line, base);
        }
        let scope = Scope::Command(line.number);
        let (prefix, i) = env_prefix(words, 0);
        let is_command = i < words.len();
        self.prefix(&prefix, is_command, &scope, line, base);
        if !is_command {
            return;
        }
        let argv_words = &words[i..];
        self.option_env(argv_words, line, base);
        // A launcher may run `env NAME=v cmd` further in (`srun ... env A=1 python3 ...`).
        for at in 1..argv_words.len() {
            if argv_words[at].text.rsplit('/').next() == Some("env") {
                let (inner, _) = env_prefix(argv_words, at);
                self.prefix(&inner, true, &scope, line, base);
            }
        }
        // A command whose words differ between eval-only and throughput runs
        // (an array or variable set in an `EVAL_ONLY` branch) is two commands.
        let views = views_of(self.gate);
        let argvs: Vec<(usize, Vec<Arg>)> = views.iter().map(|&v| (v, self.expand(argv_words, v, line, base))).collect();
        // `env NAME=v` that an array or variable brings (`CMD=(env A=1 python3 ...)`).
        if !argv_words.iter().any(|w| w.text.rsplit('/').next() == Some("env"))
            && let Some((_, args)) = argvs.last()
            && let Some(at) = args.iter().position(|a| a.text.rsplit('/').next() == Some("env"))
        {
            let pairs: Vec<(String, Provenance)> =
                args[at + 1..].iter().map_while(|a| words::split_assignment(&a.text).map(|_| (a.text.clone(), a.at.clone()))).collect();
            for (item, provenance) in pairs {
                self.push_pair(&item, EnvOrigin::CommandPrefix, false, &scope, provenance);
            }
        }
        let texts = |args: &[Arg]| args.iter().map(|a| a.text.clone()).collect::<Vec<_>>();
        let split = matches!(argvs.as_slice(), [(_, a), (_, b)] if texts(a) != texts(b));
        if let Some((_, args)) = argvs.last() {
            let at = self.at(line, base, argv_words);
            // What an action names, with the references the input leaves open kept.
            let mut known = self.partial.clone();
            known.extend(self.views[1].iter().map(|(k, v)| (k.clone(), v.clone())));
            let named: Vec<String> = match argv_words.iter().any(|w| ARRAY_REF.is_match(&w.text)) {
                true => texts(args),
                false => argv_words.iter().map(|w| expand::resolve(w, &known).0).collect(),
            };
            self.actions.command(&named, &[], line.number, self.gate, &at);
        }
        for (view, args) in argvs.into_iter().take(if split { 2 } else { 1 }) {
            let gate = if split { [Gate::EvalOnly, Gate::NotEval][view] } else { self.gate };
            let argv = texts(&args);
            let branches = args.iter().map(|a| a.branch.clone()).collect();
            let args_at = args.into_iter().map(|a| a.at).collect();
            let command = Command { argv, gate, provenance: self.at(line, base, argv_words), args_at, branches, open: Vec::new(), path: Vec::new() };
            if command.engine().is_some() {
                self.commands.push(command);
            }
        }
    }

    /// Record a command's prefix: assignments and `env -u` removals, in order.
    fn prefix(&mut self, prefix: &[(&Word, Option<&Word>)], is_command: bool, scope: &Scope, line: &Line, base: usize) {
        for (word, unset) in prefix {
            match unset {
                Some(name) => {
                    let provenance = self.at(line, base, &[word, name]);
                    self.push(&name.text, None, EnvOrigin::Unset, false, scope, provenance);
                }
                None if is_command => self.assign_word(word, EnvOrigin::CommandPrefix, scope, line, base),
                // Only assignments: shell variables (exported under `set -a`).
                None => {
                    let name = words::split_assignment(&word.text).map_or("", |(n, _)| n).to_string();
                    // An exported name keeps its export: bash updates the value the child sees,
                    // in the runs that exported it (an export under `EVAL_ONLY`'s test is one run's).
                    let (origin, gate) = self.export_of(&name);
                    let saved = std::mem::replace(&mut self.gate, gate);
                    self.assign_word(word, origin, &Scope::File, line, base);
                    self.gate = saved;
                }
            }
        }
    }

    fn assign_word(&mut self, word: &Word, origin: EnvOrigin, scope: &Scope, line: &Line, base: usize) {
        let Some((name, _)) = words::split_assignment(&word.text) else { return };
        if *scope == Scope::File {
            self.touch(name);
        }
        let (resolved, expands) = self.resolve(word);
        let value = resolved.split_once('=').map_or(String::new(), |(_, v)| v.to_string());
        if *scope == Scope::File && !expands {
            self.vars.insert(name.to_string(), value.clone());
        }
        if *scope == Scope::File {
            self.remember(name, word);
        }
        let provenance = self.at(line, base, &[word]);
        self.push(name, Some(value), origin, expands, scope, provenance);
    }

    /// `docker run -e A=1 --env B=2 --env=C=3 -e D` and `srun --export=ALL,A=1`.
    fn option_env(&mut self, words: &[&Word], line: &Line, base: usize) {
        let program = words[0].text.rsplit('/').next().unwrap_or("");
        let container =
            matches!(program, "docker" | "podman" | "nerdctl") && words.get(1).is_some_and(|w| matches!(w.text.as_str(), "run" | "create" | "exec"));
        let scope = if container { Scope::Container(line.number) } else { Scope::Command(line.number) };
        let mut i = 1;
        while i < words.len() {
            let word = words[i];
            let (value_word, span): (Option<String>, Vec<&Word>) = match word.text.as_str() {
                "-e" | "--env" if container => (words.get(i + 1).map(|w| self.resolve(w).0), words[i..(i + 2).min(words.len())].to_vec()),
                t if container && t.starts_with("--env=") => (Some(self.resolve(word).0["--env=".len()..].to_string()), vec![word]),
                t if !container && t.starts_with("--export=") => {
                    let list = self.resolve(word).0["--export=".len()..].to_string();
                    for item in list.split(',').filter(|i| i.contains('=')) {
                        self.push_pair(item, EnvOrigin::CommandPrefix, false, &scope, self.at(line, base, &[word]));
                    }
                    i += 1;
                    continue;
                }
                _ => (None, vec![]),
            };
            if let Some(item) = value_word {
                let provenance = self.at(line, base, &span);
                let expands = span.iter().any(|w| w.expands);
                match item.split_once('=') {
                    Some(_) => self.push_pair(&item, EnvOrigin::Container, expands, &scope, provenance),
                    // `-e NAME` passes the caller's value through: unknown here.
                    None if words::is_var_name(&item) => self.push(&item, Some(format!("${item}")), EnvOrigin::Container, true, &scope, provenance),
                    None => {}
                }
                i += span.len();
                continue;
            }
            i += 1;
        }
    }

    fn push_pair(&mut self, item: &str, origin: EnvOrigin, expands: bool, scope: &Scope, provenance: Provenance) {
        if let Some((name, value)) = words::split_assignment(item) {
            self.push(name, Some(value.to_string()), origin, expands, scope, provenance);
        }
    }
}

/// The words of each stage of a pipeline (`a | b | c`).
/// A pipeline stage that decodes its input: `base64 -d` or `xxd -r -p`.
fn decoder(stage: &[&Word]) -> Option<fn(&str) -> Option<String>> {
    let program = stage.first()?.text.as_str();
    let has = |flags: &[&str]| stage.iter().any(|w| flags.contains(&w.text.as_str()));
    match program {
        "base64" if has(&["-d", "--decode", "-D", "-di"]) => Some(|text| {
            use base64::Engine as _;
            let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            String::from_utf8(base64::engine::general_purpose::STANDARD.decode(clean).ok()?).ok()
        }),
        "xxd" if has(&["-r"]) && has(&["-p", "-ps", "-plain"]) => Some(|text| {
            let clean: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
            let bytes: Option<Vec<u8>> = clean.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()).collect();
            String::from_utf8(bytes?).ok()
        }),
        _ => None,
    }
}

fn pipeline_stages(tokens: &[Token]) -> Vec<Vec<&Word>> {
    tokens
        .split(|t| matches!(t, Token::Operator(op, _) if op == "|"))
        .map(|stage| stage.iter().filter_map(|t| if let Token::Word(w) = t { Some(w) } else { None }).collect())
        .collect()
}

/// The kinds of run a gate's statements run in, as indexes of
/// [`ShellScanner::views`]: 0 eval-only, 1 throughput.
fn views_of(gate: Gate) -> &'static [usize] {
    match gate {
        Gate::Always => &[0, 1],
        Gate::EvalOnly => &[0],
        Gate::NotEval => &[1],
        // Never runs; read as the throughput run would, for its arguments.
        Gate::Never => &[1],
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::evidence::text::lines::lines_of;

    fn scan_script(text: &str) -> ShellScanner {
        let mut s = ShellScanner::new(FileRef { path: "run.sh".into(), artifact: None });
        for line in lines_of(text) {
            s.script_line(&line);
        }
        s.finish();
        s
    }

    fn scan_log(text: &str) -> ShellScanner {
        let mut s = ShellScanner::new(FileRef { path: "ci.log".into(), artifact: None });
        for line in lines_of(text) {
            s.log_line(&line);
        }
        s
    }

    fn triples(s: &ShellScanner) -> Vec<(String, Option<String>, EnvOrigin)> {
        s.assignments.iter().map(|a| (a.name.clone(), a.value.clone(), a.origin)).collect()
    }

    fn t(name: &str, value: Option<&str>, origin: EnvOrigin) -> (String, Option<String>, EnvOrigin) {
        (name.to_string(), value.map(str::to_string), origin)
    }

    /// Bash expands aliases in a script only under `shopt -s expand_aliases`.
    #[test]
    fn aliases_are_expanded_only_where_bash_expands_them() {
        let off = scan_script("alias ex=export\nex SGLANG_X=1\n");
        assert!(off.assignments.is_empty(), "{:?}", triples(&off));
        let on = scan_script("shopt -s expand_aliases\nalias ex='export'\nex SGLANG_X=1\n");
        assert_eq!(triples(&on), [t("SGLANG_X", Some("1"), EnvOrigin::Export)]);
        assert_eq!(on.assignments[0].provenance.line, Some(3));
    }

    #[test]
    fn exports_declare_unset_and_shell_variables() {
        let s = scan_script("A=1\nexport A\ndeclare -x B=\"two\"\ndeclare -- C=3\nunset B\nexport -n D=4\n");
        assert_eq!(
            triples(&s),
            [
                t("A", Some("1"), EnvOrigin::ShellVariable),
                t("A", Some("1"), EnvOrigin::Export),
                t("B", Some("two"), EnvOrigin::Export),
                t("C", Some("3"), EnvOrigin::ShellVariable),
                t("B", None, EnvOrigin::Unset),
            ]
        );
    }

    #[test]
    fn set_a_exports_plain_assignments() {
        let s = scan_script("set -a\nX=1\nset +a\nY=2\n");
        assert_eq!(triples(&s), [t("X", Some("1"), EnvOrigin::Export), t("Y", Some("2"), EnvOrigin::ShellVariable)]);
    }

    #[test]
    fn prefixes_env_docker_and_srun() {
        let s = scan_script(concat!(
            "A=1 env -u Z B=2 python3 -m sglang.launch_server --tp 8\n",
            "docker run --rm -e C=3 --env D=4 --env=E=5 -e HF_TOKEN img bash -c 'x'\n",
            "srun --export=ALL,F=6 python3 -m sglang.launch_server\n",
            "srun --nodes=1 env G=7 python3 -m sglang.launch_server\n",
        ));
        assert_eq!(
            triples(&s),
            [
                t("A", Some("1"), EnvOrigin::CommandPrefix),
                t("Z", None, EnvOrigin::Unset),
                t("B", Some("2"), EnvOrigin::CommandPrefix),
                t("C", Some("3"), EnvOrigin::Container),
                t("D", Some("4"), EnvOrigin::Container),
                t("E", Some("5"), EnvOrigin::Container),
                t("HF_TOKEN", Some("$HF_TOKEN"), EnvOrigin::Container),
                t("F", Some("6"), EnvOrigin::CommandPrefix),
                t("G", Some("7"), EnvOrigin::CommandPrefix),
            ]
        );
        assert_eq!(s.assignments[0].scope, Scope::Command(1));
        assert_eq!(s.assignments[3].scope, Scope::Container(2));
        assert!(s.assignments[6].expands);
        assert_eq!(s.commands.len(), 3);
        assert_eq!(s.commands[0].argv, ["python3", "-m", "sglang.launch_server", "--tp", "8"]);
    }

    #[test]
    fn comments_echo_and_data_heredocs_are_not_statements() {
        let s = scan_script(concat!(
            "# export SGLANG_X=1\n",
            "echo \"export SGLANG_X=1\"\n",
            "cat > /tmp/env.sh <<'EOF'\nexport SGLANG_X=1\nEOF\n",
            "if [ \"$EVAL_ONLY\" != true ]; then export SIM=1; fi\n",
        ));
        assert_eq!(triples(&s), [t("SIM", Some("1"), EnvOrigin::Export)]);
    }

    #[test]
    fn launches_in_comments_echo_and_data_heredocs_are_not_commands() {
        let s = scan_script(concat!(
            "# python3 -m sglang.launch_server --tp 8\n",
            "echo python3 -m sglang.launch_server --tp 8\n",
            "cat > run.sh <<'EOF'\npython3 -m sglang.launch_server --tp 8\nEOF\n",
            "printf '%q ' python3 -m sglang.launch_server --tp 4 > cmd.txt\n",
            "exec python3 -m sglang.launch_server --tp 2\n",
        ));
        assert_eq!(s.commands.len(), 1);
        assert_eq!(s.commands[0].argv.last().map(String::as_str), Some("2"));
    }

    #[test]
    fn variables_resolve_in_commands_and_values() {
        let s =
            scan_script("MODEL=/data/m\nTP=${TP:-8}\nexport V=\"$MODEL/x\"\npython3 -m sglang.launch_server --model-path \"$MODEL\" --tp ${TP} --x $UNKNOWN\n");
        assert_eq!(s.commands[0].argv[4..], ["/data/m", "--tp", "8", "--x", "$UNKNOWN"]);
        let v = s.assignments.iter().find(|a| a.name == "V").unwrap();
        assert_eq!((v.value.as_deref(), v.expands), (Some("/data/m/x"), false));
    }

    #[test]
    fn heredoc_bodies_written_to_files_are_kept_expanded() {
        let s = scan_script(WRITTEN);
        assert_eq!(s.written.len(), 2);
        let text = |b: &WrittenBody| b.lines.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join("\n");
        // Unquoted delimiter: bash expands the body; the value an arm picks is marked.
        assert!(text(&s.written[0]).contains("max_draft_len: 3\n    speculative_model: /m/Eagle3-GQA"), "{}", text(&s.written[0]));
        assert_eq!(s.written[0].depends.iter().map(|(n, k, _)| (*n, k.as_str())).collect::<Vec<_>>(), [(11, "max_draft_len")]);
        assert!(s.written[0].depends[0].2.contains("K differs between the arms"), "{:?}", s.written[0].depends);
        // A quoted delimiter keeps the body literal.
        assert_eq!(text(&s.written[1]), "speculative_config:\n    speculative_model: $DRAFT");
        // A heredoc is data, not statements: nothing in it is a command.
        assert!(s.commands.is_empty());
    }

    /// A script that writes two configs from heredocs.
    pub const WRITTEN: &str = "DRAFT=/m/Eagle3-GQA\nif [ -n \"$P\" ]; then\n  K=3\nelse\n  K=2\nfi\n\
cat << EOF > ser.yaml\nmax_batch_size: 8\nspeculative_config:\n    decoding_type: Eagle3\n    max_draft_len: $K\n    speculative_model: $DRAFT\nkv_cache_config:\n    dtype: fp8\nEOF\n\
cat <<'EOF' > lit.yaml\nspeculative_config:\n    speculative_model: $DRAFT\nEOF\n";

    #[test]
    fn python_heredoc_env_writes() {
        let s = scan_script("python3 - <<'PY'\nimport os\nos.environ['SGLANG_X'] = '1'\nPY\n");
        assert_eq!(triples(&s), [t("SGLANG_X", Some("1"), EnvOrigin::Python)]);
        assert_eq!(s.assignments[0].scope, Scope::Python(1));
    }

    #[test]
    fn traces_in_logs() {
        let s = scan_log(
            "+ export SGLANG_X='1' B=\"2 3\"\nexport C=1\nplain text A=1\n++ FOO=bar\n+ python3 -m sglang.launch_server --tp 4\npython3 -m sglang.launch_server --tp 2\n",
        );
        assert_eq!(
            triples(&s),
            [
                t("SGLANG_X", Some("1"), EnvOrigin::Export),
                t("B", Some("2 3"), EnvOrigin::Export),
                t("C", Some("1"), EnvOrigin::Export),
                t("FOO", Some("bar"), EnvOrigin::ShellVariable),
            ]
        );
        assert_eq!(s.assignments[0].provenance.text, "SGLANG_X='1'");
        assert_eq!(s.assignments[0].provenance.span, Some((9, 21)));
        // A bare launch line is a console capture of the command: it counts too ([`crate::evidence::shell::log_commands`]).
        assert_eq!(s.commands.len(), 2);
        assert_eq!(s.commands[1].provenance.line, Some(6));
    }

    #[test]
    fn prompts_and_continuations_in_logs_keep_each_word_at_its_line() {
        let s =
            scan_log("root@abc123:/sgl-workspace# SGLANG_X=1 \\\n>   python3 -m sglang.launch_server --tp 8\n>>> SGLANG_Y=1 python3 -m sglang.launch_server\n");
        assert_eq!(triples(&s), [t("SGLANG_X", Some("1"), EnvOrigin::CommandPrefix)]);
        let a = &s.assignments[0].provenance;
        assert_eq!((a.line, a.span, a.text.as_str()), (Some(1), Some((28, 38)), "SGLANG_X=1"));
        assert_eq!(s.commands.len(), 1);
        assert_eq!((s.commands[0].provenance.line, s.commands[0].argv.len()), (Some(2), 5));
    }

    #[test]
    fn eval_only_gates_on_assignments_and_commands() {
        let s = scan_script(concat!(
            "if [ \"$EVAL_ONLY\" != true ]; then\n",
            "  export SGLANG_SIMULATE_ACC_LEN=2.49\n",
            "else\n",
            "  python3 - <<'PY'\nimport os\nos.environ['P'] = '1'\nPY\n",
            "fi\n",
            "[[ \"${EVAL_ONLY:-false}\" == \"true\" ]] && export B=1 || export C=1\n",
            "export D=1\n",
            "if [ \"$EVAL_ONLY\" = true ]; then python3 -m sglang.launch_server --tp 2; fi\n",
        ));
        let gates: Vec<(&str, Gate)> = s.assignments.iter().map(|a| (a.name.as_str(), a.gate)).collect();
        assert_eq!(
            gates,
            [("SGLANG_SIMULATE_ACC_LEN", Gate::NotEval), ("P", Gate::EvalOnly), ("B", Gate::EvalOnly), ("C", Gate::NotEval), ("D", Gate::Always)]
        );
        assert_eq!(s.commands.len(), 1);
        assert_eq!(s.commands[0].gate, Gate::EvalOnly);
    }

    #[test]
    fn array_launches_carry_every_element() {
        let s = scan_script(concat!(
            "STEPS=3\n",
            "SPEC_ARGS=(\n    --speculative-algorithm EAGLE\n    # --speculative-num-steps 9\n    --speculative-num-steps \"$STEPS\"\n)\n",
            "EMPTY=()\n",
            "CMD=(\n    python3 -m sglang.launch_server\n    --model-path=/m  # trailing comment\n    \"${SPEC_ARGS[@]}\"\n    \"${EMPTY[@]}\"\n)\n",
            "CMD+=(--port 30000)\n",
            "printf '%q ' \"${CMD[@]}\" | tee cmd.txt\n",
            "\"${CMD[@]}\" > \"$LOG\" 2>&1 &\n",
        ));
        assert_eq!(s.commands.len(), 1);
        let c = &s.commands[0];
        assert_eq!(
            c.argv,
            ["python3", "-m", "sglang.launch_server", "--model-path=/m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--port", "30000"]
        );
        assert_eq!(c.provenance.line, Some(16), "the line that runs it");
        assert!(s.problems.is_empty());
    }

    #[test]
    fn arrays_set_in_eval_only_branches_split_the_launch() {
        let s = scan_script(concat!(
            "if [ \"${EVAL_ONLY}\" = \"true\" ]; then\n    SPEC=(--k 2)\n    AL=\nelse\n    SPEC=(\n        --k 2\n        --al \"$AL_T\"\n    )\nfi\n",
            "CMD=(python -m atom.entrypoints.openai_server \"${SPEC[@]}\")\n",
            "\"${CMD[@]}\" &\n",
        ));
        let got: Vec<(Gate, Vec<String>)> = s.commands.iter().map(|c| (c.gate, c.argv[3..].to_vec())).collect();
        assert_eq!(
            got,
            [(Gate::EvalOnly, vec!["--k".to_string(), "2".into()]), (Gate::NotEval, vec!["--k".into(), "2".into(), "--al".into(), "$AL_T".into()])]
        );
    }

    #[test]
    fn script_actions_resolve_targets_clones_and_functions() {
        use crate::evidence::shell::actions::ActionKind;
        let s = scan_script(concat!(
            "F=/sgl-workspace/sglang/python/sglang/srt/x.py\n",
            "sed -n '/a/,/b/p' \"$F\" | grep -q x\n",
            "sed -i '/a/,/b/ {\n  /c/a\\\n    d\n}' \"$F\"\n",
            "setup() {\n  local p\n  p=$(python3 -c \"import rixl._api; print(rixl._api.__file__)\" 2>/dev/null)\n  sed -i 's/a/b/' \"$p\"\n}\n",
            "git clone https://github.com/LMCache/LMCache.git\ncd LMCache\n# https://github.com/LMCache/LMCache/pull/1\ngit checkout abc123\npip install -e . --no-build-isolation\ncd ..\n",
            "python3 - <<'PY'\np = '/sgl-workspace/sglang/y.py'\ns = open(p).read()\nopen(p, 'w').write(s)\nPY\n",
        ));
        let got: Vec<(ActionKind, u64, Option<&str>)> = s.actions.actions.iter().map(|a| (a.kind, a.provenance.line.unwrap(), a.target.as_deref())).collect();
        assert_eq!(
            got,
            [
                (ActionKind::InPlaceEdit, 3, Some("/sgl-workspace/sglang/python/sglang/srt/x.py")),
                (ActionKind::InPlaceEdit, 10, Some("site-packages/rixl/_api")),
                (ActionKind::Install, 16, Some("LMCache")),
                (ActionKind::PythonWrite, 18, Some("/sgl-workspace/sglang/y.py")),
            ]
        );
        assert_eq!(s.actions.actions[1].function, Some(("setup".to_string(), 7)));
        let clone = s.actions.actions[2].clone.as_ref().unwrap();
        assert_eq!(
            (clone.repo(), clone.rev.as_deref(), clone.rev_note.as_deref()),
            ("LMCache", Some("abc123"), Some("https://github.com/LMCache/LMCache/pull/1"))
        );
    }

    #[test]
    fn actions_after_the_last_top_level_launch_are_marked() {
        let s = scan_script(concat!(
            "start() {\n  python3 -m sglang.launch_server --tp 8 &\n}\n",
            "pip install -q --upgrade transformers\n",
            "python3 -m sglang.launch_server --tp 8 > log 2>&1 &\n",
            "pip install -q --upgrade transformers\n",
            "fix() {\n  pip install -q --upgrade transformers\n}\n",
        ));
        let marks: Vec<(u64, bool)> = s.actions.finish().iter().map(|a| (a.provenance.line.unwrap(), a.after_launch)).collect();
        // A launch inside a function does not count (it may run later); an action in a function is never marked.
        assert_eq!(marks, [(4, false), (5, false), (6, true), (8, false)], "line 5: the launch's own > log");
    }

    #[test]
    fn huge_and_self_referencing_arrays_are_bounded() {
        let mut text = String::from("A=(x)\n");
        for _ in 0..20 {
            text.push_str("A+=(\"${A[@]}\" \"${A[@]}\")\n");
        }
        text.push_str("python3 -m sglang.launch_server \"${A[@]}\"\n");
        let s = scan_script(&text);
        assert_eq!(s.commands[0].argv.len(), MAX_ARRAY);
    }

    #[test]
    fn printf_awk_and_trims_are_evaluated() {
        let s = scan_script(concat!(
            "D=org/Draft-Head\nK=3\nAL=2.789\n",
            "P=/m/${D##*/}\nQ=${D%/*}\n",
            "C=$(printf '{\"m\":\"%s\",\"k\":%d,\"al\":%.2f}' \"$P\" \"$K\" \"$AL\")\n",
            "R=$(awk \"BEGIN{print ($AL-1)/$K}\")\n",
            "vllm serve \"$Q\" --a \"$C\" --b \"$R\" --c \"$(printf '%x' 1)\"\n",
        ));
        assert_eq!(s.commands[0].argv[2..], ["org", "--a", r#"{"m":"/m/Draft-Head","k":3,"al":2.79}"#, "--b", "0.596333", "--c", "$(printf '%x' 1)"]);
        assert_eq!(expand::arith("((1+2)*3-1)/-2"), Some(-4.0));
        assert_eq!(expand::arith("1+"), None);
        assert_eq!(expand::arith(&"(".repeat(100)), None);
        assert_eq!(expand::printf("%s-%s", &["a".into()]), Some("a-".into()));
        assert_eq!(expand::printf("%d", &["x".into()]), None);
    }

    #[test]
    fn find_exec_edits_the_files_found_and_fallbacks_are_one_action() {
        use crate::evidence::shell::actions::ActionKind;
        let s = scan_script(concat!(
            "D=recipes/x\n",
            "find \"$D\" -name \"*.yaml\" \\\n    -exec sed -i '/FORCE/d' {} +\n",
            "W=${WS:-${ROOT}/utils/aiperf}\n",
            "( cd /src/wrapper && { pip install --no-deps . || pip install --no-deps --break-system-packages . ; } )\n",
            "uv pip install -e \"$W\"\n",
        ));
        let got: Vec<(ActionKind, u64, Option<&str>)> = s.actions.actions.iter().map(|a| (a.kind, a.provenance.line.unwrap(), a.target.as_deref())).collect();
        assert_eq!(got[0], (ActionKind::InPlaceEdit, 2, Some("recipes/x/**/*.yaml")));
        assert_eq!(got.iter().filter(|(k, l, _)| *k == ActionKind::Install && *l == 5).count(), 1, "{got:?}");
        assert!(got.iter().any(|(k, l, t)| *k == ActionKind::Install && *l == 6 && t.is_some_and(|t| t.ends_with("/utils/aiperf"))), "{got:?}");
    }

    #[test]
    fn unparsed_lines_are_problems() {
        let s = scan_script("export Z='unterminated\n");
        assert_eq!(s.problems.len(), 1);
    }
}
