//! A script as the interpreter evaluates it ([`super::interp`]), in the
//! evidence's terms: the environment assignments it makes, the engine
//! launches it runs, what it does to files and packages, and the bodies of
//! the files it writes. It is evaluated once for an eval-only job
//! (`EVAL_ONLY=true`) and once for the others, and each item is gated by
//! the runs it appears in.

use crate::evidence::env::{EnvAssignment, EnvOrigin, Scope};
use crate::evidence::gate::Gate;
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::shell::actions::{ActionScanner, ScriptAction};
use crate::evidence::shell::command::{self, Assumed, Command};
use crate::evidence::shell::installer;
use crate::evidence::shell::interp::value::{Piece, Place, Str};
use crate::evidence::shell::interp::{self, CallKind, Evaluation, Files, How, Inputs, Limits};
use crate::evidence::shell::scan::WrittenBody;
use crate::evidence::text::lines::Line;
use std::collections::HashMap;

/// Where the audited tree sits in the run: launch scripts name the
/// repository's files from there (`/workspace/benchmarks/benchmark_lib.sh`)
/// or relative to themselves.
pub use crate::links::MOUNT;

/// The benchmark library's eval runners (`benchmarks/benchmark_lib.sh`).
const EVAL_RUNNERS: [&str; 3] = ["run_eval", "run_lm_eval", "run_swebench_eval"];

/// Everything the evaluation gives, for [`crate::evidence::FileEvidence`].
#[derive(Debug, Default)]
pub struct Evaluated {
    pub env: Vec<EnvAssignment>,
    pub commands: Vec<Command>,
    pub actions: Vec<ScriptAction>,
    pub written: Vec<WrittenBody>,
    /// The script behaves differently for eval-only jobs, or runs evals.
    pub eval_path: bool,
    /// Lines and what was not evaluated there.
    pub notes: Vec<(Option<u64>, String)>,
    /// A work bound tripped or the script did not parse: what was not examined.
    pub unexamined: Option<String>,
    /// Files of the input the script reached (sourced, run), by bundle path.
    pub reached: Vec<String>,
    /// It reached files `files` did not have: evaluated again with the whole tree, it may see more.
    pub missing_files: bool,
}

/// The files of an audited tree by their paths inside it, as the run sees them under [`MOUNT`].
pub struct TreeFiles<'t> {
    texts: HashMap<&'t str, &'t str>,
}

impl<'t> TreeFiles<'t> {
    pub fn new(files: impl IntoIterator<Item = (&'t str, &'t str)>) -> Self {
        TreeFiles { texts: files.into_iter().collect() }
    }
}

impl Files for TreeFiles<'_> {
    fn read(&self, path: &str) -> Option<String> {
        let rel = path.strip_prefix(MOUNT)?.trim_start_matches('/');
        self.texts.get(rel).map(|t| t.to_string())
    }

    fn find_tail(&self, tail: &str) -> Option<(String, String)> {
        let mut found = self.texts.iter().filter(|(p, _)| **p == tail || p.ends_with(&format!("/{tail}")));
        let (path, text) = found.next()?;
        if found.next().is_some() {
            return None;
        }
        Some((format!("{MOUNT}/{path}"), text.to_string()))
    }

    fn modules_in(&self, dir: &str) -> Vec<String> {
        let Some(rel) = dir.strip_prefix(MOUNT).map(|d| d.trim_matches('/')) else { return Vec::new() };
        let prefix = if rel.is_empty() { String::new() } else { format!("{rel}/") };
        let mut found: Vec<String> = self
            .texts
            .keys()
            .filter(|p| {
                p.strip_prefix(prefix.as_str()).is_some_and(|rest| {
                    let parts: Vec<&str> = rest.split('/').collect();
                    matches!(parts.as_slice(), [m] if m.ends_with(".py")) || matches!(parts.as_slice(), [_, "__init__.py"])
                })
            })
            .map(|p| p.to_string())
            .collect();
        found.sort();
        found
    }
}

/// Evaluate the script `file` holding `text`, its sourced files read from `files`.
pub fn evaluate(file: &FileRef, text: &str, files: &dyn Files) -> Evaluated {
    let run = |eval_only: &str| {
        let inputs = Inputs {
            script: format!("{MOUNT}/{}", file.path),
            args: Vec::new(),
            env: runner_inputs(&file.path).chain([("EVAL_ONLY".to_string(), eval_only.to_string())]).collect(),
            open: true,
            cwd: MOUNT.to_string(),
        };
        interp::evaluate(text, &inputs, files, Limits::default())
    };
    let eval = run("true");
    let throughput = run("false");
    let mut out = Evaluated::default();
    // A function one run calls and the other does not is that run's only:
    // the other's evaluation of it as uncalled is not what it runs.
    let eval_items = items(file, &eval, &throughput.called, files);
    let throughput_items = items(file, &throughput, &eval.called, files);
    out.eval_path = eval_items != throughput_items || mentions_eval(text) || calls_eval_runner(&eval) || calls_eval_runner(&throughput);
    let mut actions = ActionScanner::default();
    for line in text.lines().enumerate().filter(|(_, l)| l.trim_start().starts_with('#')) {
        actions.comment(line.0 as u64 + 1, line.1);
    }
    for (item, gate) in gated(eval_items, throughput_items) {
        match item {
            Item::Env(mut a) => {
                a.gate = gate;
                out.env.push(a);
            }
            Item::Launch(mut c) => {
                c.gate = gate;
                out.commands.push(c);
            }
            Item::Action { argv, redirects, line, function, provenance } => {
                actions.set_function(function);
                actions.command(&argv, &redirects, line, gate, &provenance);
            }
            Item::Written(body) => out.written.push(body),
        }
    }
    out.actions = actions.finish();
    let mut unexamined = Vec::new();
    for e in [&throughput, &eval] {
        for p in &e.problems {
            let in_script = e.file_of(p.at) == format!("{MOUNT}/{}", file.path);
            let line = in_script.then_some(p.at.line as u64).filter(|l| *l > 0);
            let note = (line, p.what.clone());
            if !out.notes.contains(&note) {
                out.notes.push(note);
            }
            if p.bound {
                let why = match line {
                    Some(l) => format!("line {l}: {}", p.what),
                    None => p.what.clone(),
                };
                if !unexamined.contains(&why) {
                    unexamined.push(why);
                }
            }
        }
        out.missing_files |= e.reached.iter().any(|(_, found, _)| !found);
        for (path, found, _) in &e.reached {
            if let Some(rel) = path.known().and_then(|p| p.strip_prefix(MOUNT).map(|r| r.trim_start_matches('/').to_string()))
                && *found
                && !out.reached.contains(&rel)
            {
                out.reached.push(rel);
            }
        }
    }
    out.unexamined = (!unexamined.is_empty()).then(|| unexamined.join("; "));
    out
}

/// What the runner's choice of a script tells of its environment: the
/// runners (`runners/launch_*.sh`) run `benchmarks/single_node/<...>_mtp.sh`
/// exactly when `SPEC_DECODING` is `mtp`, so a test of it in such a script
/// is decided.
fn runner_inputs(path: &str) -> impl Iterator<Item = (String, String)> {
    let single_node = path.starts_with("benchmarks/single_node/") || path.contains("/benchmarks/single_node/");
    let mtp = single_node && path.ends_with("_mtp.sh");
    mtp.then(|| ("SPEC_DECODING".to_string(), "mtp".to_string())).into_iter()
}

/// Whether the script names the eval switches at all (as the line reader did).
fn mentions_eval(text: &str) -> bool {
    text.contains("EVAL_ONLY") || text.contains("RUN_EVAL")
}

fn calls_eval_runner(e: &Evaluation) -> bool {
    let in_runner = |chain: &[interp::Call]| chain.iter().any(|c| matches!(&c.kind, CallKind::Function(f) if EVAL_RUNNERS.contains(&f.as_str())));
    e.execs.iter().any(|x| in_runner(&x.ctx.chain)) || e.assigns.iter().any(|a| in_runner(&a.ctx.chain))
}

/// One thing the evaluation found, ready for the evidence.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    Env(EnvAssignment),
    Launch(Command),
    Action { argv: Vec<String>, redirects: Vec<String>, line: u64, function: Option<(String, u64)>, provenance: Provenance },
    Written(WrittenBody),
}

impl Item {
    /// What equal items have in common: their kind, line and name.
    fn key(&self) -> (u8, u64, &str) {
        match self {
            Item::Env(a) => (0, a.provenance.line.unwrap_or(0), a.name.as_str()),
            Item::Launch(c) => (1, c.provenance.line.unwrap_or(0), ""),
            Item::Action { line, .. } => (2, *line, ""),
            Item::Written(w) => (3, w.opened_at, ""),
        }
    }
}

/// The bundle path of a file the evaluation read (`/workspace/x` is `x`).
fn bundle_path<'e>(file: &'e FileRef, e: &'e Evaluation, at: Place) -> Option<&'e str> {
    let path = e.file_of(at);
    if path.is_empty() {
        return Some(&file.path);
    }
    path.strip_prefix(MOUNT).map(|p| p.trim_start_matches('/'))
}

/// The provenance of a place: its file in the bundle and its line's text.
pub fn provenance(file: &FileRef, e: &Evaluation, at: Place) -> Provenance {
    let path = bundle_path(file, e, at).unwrap_or(&file.path);
    let text = e.line_text(at).map(str::trim).unwrap_or("");
    let mut p = Provenance::new(path, (at.line > 0).then_some(at.line as u64), crate::evidence::provenance::clip(&crate::evidence::provenance::redact(text)));
    if path == file.path {
        p = p.in_artifact(file.artifact.clone());
    }
    p
}

/// The innermost function an event ran in: its name and the line it is defined at.
fn function_of(ctx: &interp::Ctx) -> Option<(String, u64)> {
    ctx.chain.iter().rev().find_map(|c| match &c.kind {
        CallKind::Function(name) | CallKind::Uncalled(name) => Some((name.clone(), c.defined.map_or(0, |d| d.line as u64))),
        _ => None,
    })
}

/// The items of one evaluation, in the order it ran them, but for those of
/// its uncalled functions that `called_elsewhere` names.
fn items(file: &FileRef, e: &Evaluation, called_elsewhere: &std::collections::BTreeSet<String>, files: &dyn Files) -> Vec<Item> {
    let mut seq: Vec<(usize, Item)> = Vec::new();
    let elsewhere = |ctx: &interp::Ctx| ctx.chain.iter().any(|c| matches!(&c.kind, CallKind::Uncalled(f) if called_elsewhere.contains(f)));
    // A child shell (`| bash`, `bash -c`, `( … )`, `$( … )`) takes its
    // variables with it: what it sets reaches an engine only if it launches
    // one itself, after setting it.
    let launches: Vec<&interp::Ctx> =
        e.execs.iter().filter(|x| command::launch_of(&x.argv.iter().map(Str::display).collect::<Vec<_>>()).is_some()).map(|x| &x.ctx).collect();
    let dies_with_child = |ctx: &interp::Ctx| {
        let k = ctx.chain.iter().position(|c| matches!(c.kind, CallKind::Shell | CallKind::Subshell))?;
        let child = &ctx.chain[..=k];
        let reaches = launches.iter().any(|l| l.order > ctx.order && l.chain.len() > k && l.chain[..=k] == *child);
        (!reaches).then_some(ctx.chain[k].at.line as u64)
    };
    for a in e.assigns.iter().filter(|a| !elsewhere(&a.ctx)) {
        let child = dies_with_child(&a.ctx);
        if child.is_some() && a.how == How::Unset {
            continue;
        }
        let (origin, scope) = match a.how {
            How::Prefix => (EnvOrigin::CommandPrefix, Scope::Command(a.ctx.at.line as u64)),
            How::Unset => (EnvOrigin::Unset, Scope::File),
            _ if a.exported => (EnvOrigin::Export, Scope::File),
            _ => (EnvOrigin::ShellVariable, Scope::File),
        };
        let value = a.value.as_ref().map(Str::display);
        let expands = a.value.as_ref().is_some_and(|v| !v.is_known());
        let at = if a.name_at.line > 0 { a.name_at } else { a.ctx.at };
        let scope = child.map_or(scope, Scope::Command);
        let mut assignment = EnvAssignment::new(&a.name, value, origin, scope, provenance(file, e, at));
        if a.name == "PYTHONPATH"
            && let Some(path) = &a.value
        {
            // The entries the script wrote out (`/workspace/x:$PYTHONPATH`: the first).
            let text: String = path
                .pieces()
                .iter()
                .map(|p| match p {
                    Piece::Lit { text, .. } => text.clone(),
                    Piece::Unknown(_) => "\0".to_string(),
                })
                .collect();
            assignment.on_path = text.split(':').filter(|dir| !dir.contains('\0')).flat_map(|dir| files.modules_in(dir)).collect();
        }
        assignment.expands = expands;
        assignment.client = child.is_some();
        seq.push((a.ctx.order, Item::Env(assignment)));
    }
    for x in e.execs.iter().filter(|x| !elsewhere(&x.ctx)) {
        let argv: Vec<String> = x.argv.iter().map(Str::display).collect();
        let at = provenance(file, e, x.ctx.at);
        let function = function_of(&x.ctx);
        // The directory it runs in, for the paths it names (as the script
        // names it where the run decides it). Where the script starts is not
        // known: there (`cd` alone) and below it the paths stay relative, as
        // the script's own (`git clone URL dir; cd dir`) are.
        let cwd = x.cwd.display();
        let below = cwd.strip_prefix(MOUNT).and_then(|rest| rest.strip_prefix('/'));
        let cds: Vec<Vec<String>> = match below {
            _ if cwd == MOUNT => vec![vec!["cd".into()]],
            Some(rel) => vec![vec!["cd".into()], vec!["cd".into(), rel.to_string()]],
            None => vec![vec!["cd".into(), cwd]],
        };
        for argv in cds {
            let (line, function, provenance) = (x.ctx.at.line as u64, function.clone(), at.clone());
            seq.push((x.ctx.order, Item::Action { argv, redirects: Vec::new(), line, function, provenance }));
        }
        let committed = committed_at(x);
        // Run by `xargs`: the readers see it as written, `xargs CMD`, and
        // give it what the pipeline's `find` found (`find / -name X | xargs sed -i`).
        let by_xargs = x.wrappers.last().and_then(|w| w.first()).and_then(Str::known).is_some_and(|p| p.rsplit('/').next() == Some("xargs"));
        let seen: Vec<String> = match x.wrappers.last() {
            Some(xargs) if by_xargs => xargs.iter().map(Str::display).chain(argv.iter().cloned()).collect(),
            _ => installer::as_read(argv.clone(), x, e, files),
        };
        let action = Item::Action { argv: seen, redirects: Vec::new(), line: committed.line as u64, function, provenance: provenance(file, e, committed) };
        seq.push((x.ctx.order, action));
        if command::launch_of(&argv).is_some() {
            let args_at = x.argv.iter().map(|a| provenance(file, e, a.first_place().filter(|p| p.line > 0).unwrap_or(x.ctx.at))).collect();
            let open = x.argv.iter().enumerate().filter(|(_, a)| a.first_place().is_none() && !a.is_empty()).map(|(i, _)| i).collect();
            let path = x
                .ctx
                .marks
                .iter()
                .map(|m| Assumed {
                    file: bundle_path(file, e, m.at).unwrap_or(&file.path).to_string(),
                    line: m.at.line as u64,
                    condition: m.text.to_string(),
                    held: m.held,
                })
                .collect();
            seq.push((x.ctx.order, Item::Launch(Command { argv, gate: Gate::Always, provenance: at, args_at, branches: Vec::new(), open, path })));
        }
    }
    // A container launcher's own options (`docker run -v …`, `srun
    // --container-mounts`) are what it does to the engine's files.
    for (launcher, ctx) in e.containers.iter().filter(|(_, c)| !elsewhere(c)) {
        let argv = launcher.iter().map(Str::display).collect();
        let (line, function, provenance) = (ctx.at.line as u64, function_of(ctx), provenance(file, e, ctx.at));
        seq.push((ctx.order, Item::Action { argv, redirects: Vec::new(), line, function, provenance }));
    }
    for wr in e.writes.iter().filter(|w| !elsewhere(&w.ctx)) {
        let at = provenance(file, e, wr.ctx.at);
        let target = wr.path.display();
        seq.push((
            wr.ctx.order,
            Item::Action { argv: Vec::new(), redirects: vec![target.clone()], line: wr.ctx.at.line as u64, function: function_of(&wr.ctx), provenance: at },
        ));
        if wr.content.is_empty() {
            continue;
        }
        let places = crate::evidence::shell::interp::line_places(&wr.content, wr.ctx.at);
        let (expanded, undecided) = written_text(&wr.content);
        let mut depends = Vec::new();
        let lines = expanded
            .lines()
            .zip(places.iter().chain(std::iter::repeat(&wr.ctx.at)))
            .enumerate()
            .map(|(i, (text, place))| {
                if let Some(what) = undecided.get(&i) {
                    let key = text.split(':').next().unwrap_or("").trim().to_string();
                    depends.push((place.line as u64, key, format!("{what} is decided by the run")));
                }
                let source = e.line_text(*place).unwrap_or(text).to_string();
                (Line { number: place.line as u64, offset: 0, text: source, truncated: false }, text.to_string())
            })
            .collect();
        seq.push((wr.ctx.order, Item::Written(WrittenBody { opened_at: wr.ctx.at.line as u64, lines, depends, target: wr.path.known() })));
    }
    seq.sort_by_key(|(order, _)| *order);
    seq.into_iter().map(|(_, item)| item).collect()
}

/// A written file's text for the readers of its format (a heredoc'd YAML
/// config), each part the run decides as the script writes it, with what
/// would end a YAML plain scalar there (`: `, ` #`) blanked: `one of: a | b`
/// must not break the document it sits in. With the lines (0-based) that
/// hold such a part, and how the first reads.
fn written_text(content: &Str) -> (String, std::collections::BTreeMap<usize, String>) {
    let mut text = String::new();
    let mut undecided = std::collections::BTreeMap::new();
    for piece in content.pieces() {
        match piece {
            Piece::Lit { text: lit, .. } => text.push_str(lit),
            Piece::Unknown(u) => {
                undecided.entry(text.matches('\n').count()).or_insert_with(|| u.text.clone());
                text.push_str(&u.text.replace(": ", " ").replace(" #", " "));
            }
        }
    }
    (text, undecided)
}

/// Where a program run is committed: its statement, or, when that sits in
/// a file the script sources (a library helper) and words of it were
/// written in the script (the arguments of the call), the first of those:
/// the script that passes a package to a helper's `pip install "$@"` is
/// where the install is decided.
fn committed_at(x: &interp::Exec) -> Place {
    if x.ctx.at.file == 0 {
        return x.ctx.at;
    }
    x.argv.iter().filter_map(Str::first_place).find(|p| p.file == 0 && p.line > 0).unwrap_or(x.ctx.at)
}

/// The items of both runs in one order, each gated by the runs it appears in.
fn gated(eval: Vec<Item>, throughput: Vec<Item>) -> Vec<(Item, Gate)> {
    // Where each throughput item sits, by a key equal items share: an eval
    // item is looked for among the few of its key, not along the whole run.
    let mut at: HashMap<(u8, u64, &str), Vec<usize>> = HashMap::new();
    for (k, t) in throughput.iter().enumerate() {
        at.entry(t.key()).or_default().push(k);
    }
    let mut out = Vec::new();
    let mut i = 0;
    for item in eval {
        let found = at.get(&item.key()).and_then(|ks| ks.iter().copied().find(|&k| k >= i && throughput[k] == item));
        match found {
            Some(k) => {
                out.extend(throughput[i..k].iter().cloned().map(|t| (t, Gate::NotEval)));
                out.push((item, Gate::Always));
                i = k + 1;
            }
            None => out.push((item, Gate::EvalOnly)),
        }
    }
    out.extend(throughput[i..].iter().cloned().map(|t| (t, Gate::NotEval)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::shell::interp::NoFiles;

    fn file() -> FileRef {
        FileRef { path: "benchmarks/single_node/x.sh".into(), artifact: None }
    }

    #[test]
    fn items_are_gated_by_the_runs_they_appear_in() {
        let script = "export A=1\nif [ \"$EVAL_ONLY\" != true ]; then export SGLANG_SIMULATE_ACC_LEN=2.49; fi\npython3 -m sglang.launch_server --tp 8\n";
        let e = evaluate(&file(), script, &NoFiles);
        let gate = |name: &str| e.env.iter().find(|a| a.name == name).map(|a| a.gate);
        assert_eq!(gate("A"), Some(Gate::Always));
        assert_eq!(gate("SGLANG_SIMULATE_ACC_LEN"), Some(Gate::NotEval));
        assert_eq!(e.commands.len(), 1);
        assert_eq!(e.commands[0].gate, Gate::Always);
        assert!(e.eval_path);
        let a = e.env.iter().find(|a| a.name == "SGLANG_SIMULATE_ACC_LEN").unwrap();
        assert_eq!((a.provenance.file.as_str(), a.provenance.line), ("benchmarks/single_node/x.sh", Some(2)));
    }

    #[test]
    fn a_heredoc_config_with_a_value_the_run_decides_still_parses_and_says_which_key() {
        // Past the path bound the arms are joined: the draft is `one of: … | …`.
        let forks: String = ["A", "B", "C", "E"].iter().map(|v| format!("if [ -n \"${v}\" ]; then V{v}=1; fi\n")).collect();
        let script = format!(
            "if [ \"$X\" = a ]; then D=/data/models/d; else D=org/d; fi\n{forks}cat << EOF > ser.yaml\nspeculative_config:\n    decoding_type: Eagle3\n    max_draft_len: 3\n    speculative_model: $D\nEOF\ntrtllm-serve /models/m --config ser.yaml\n"
        );
        let script = script.as_str();
        let e = evaluate(&file(), script, &NoFiles);
        let body = e.written.iter().find(|w| w.target.as_deref() == Some("ser.yaml")).expect("the heredoc");
        assert_eq!(
            body.depends.iter().map(|(n, k, _)| (*n, k.as_str())).collect::<Vec<_>>(),
            [(body.lines[3].0.number, "speculative_model")],
            "{:?}",
            body.lines
        );
        let records = crate::evidence::yaml::shown::written(&file(), body);
        let spec = records.iter().find(|r| r.get("decoding_type").is_some()).unwrap_or_else(|| panic!("not parsed: {:?}", body.lines));
        assert_eq!(spec.get("max_draft_len").map(|v| v.to_json()), Some(serde_json::json!(3)));
    }

    #[test]
    fn sourced_files_come_from_the_tree_and_are_cited_there() {
        let lib = "setenv() { export \"$1=$2\"; }\n";
        let script = "source \"$(dirname \"$0\")/lib.sh\"\nsetenv SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE 1\npython3 -m sglang.launch_server\n";
        let tree = TreeFiles::new([("benchmarks/single_node/lib.sh", lib), ("benchmarks/single_node/x.sh", script)]);
        let e = evaluate(&file(), script, &tree);
        let a = e.env.iter().find(|a| a.name == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE").expect("exported through the library");
        assert_eq!(a.value.as_deref(), Some("1"));
        assert_eq!(a.provenance.line, Some(2), "the call site wrote the name");
        assert_eq!(e.reached, vec!["benchmarks/single_node/lib.sh".to_string()]);
        let alone = evaluate(&file(), script, &NoFiles);
        assert!(alone.env.iter().all(|a| a.name != "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"));
        assert!(alone.missing_files);
    }

    #[test]
    fn actions_see_the_directory_and_the_function() {
        let script = "patch_it() {\n  sed -i s/a/b/ /sgl-workspace/sglang/python/sglang/srt/x.py\n}\ncd /opt && patch_it\n";
        let e = evaluate(&file(), script, &NoFiles);
        let a = e.actions.iter().find(|a| a.tool.starts_with("sed")).expect("the edit");
        assert_eq!(a.target.as_deref(), Some("/sgl-workspace/sglang/python/sglang/srt/x.py"));
        assert_eq!(a.function.as_ref().map(|f| (f.0.as_str(), f.1)), Some(("patch_it", 1)));
    }
}
