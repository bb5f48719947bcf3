//! Programs: the launch wrappers taken off (`env` with every option,
//! `sudo`, `nohup`, `numactl`, `taskset`, `timeout`, ...), child shells
//! (`bash -c`, `bash -s`, `bash FILE`) run by the interpreter itself, the
//! programs whose output follows from their input evaluated (`cat`,
//! `base64 -d`, `xxd -r`, `tr`, `grep`, `sed`, `cut`, `xargs`, `dirname`,
//! ...), and every other program recorded with what it receives.

use super::args::{Pending, PendingValue};
use super::jq;
use super::state::{FileState, Status, Value, World};
use super::value::{Piece, Place, Str, Why};
use super::{Assign, CallKind, Exec, How, Interp};
use std::collections::BTreeMap;

/// Variables `sudo` keeps by default (`env_reset`): the rest are dropped.
const SUDO_KEEPS: [&str; 8] = ["PATH", "HOME", "TERM", "SHELL", "USER", "LOGNAME", "LANG", "DISPLAY"];

/// An environment being built for a program: the shell's exported
/// variables with changes on top, computed only where it is looked at (a
/// launch, a child shell), since a script runs many programs.
#[derive(Clone)]
struct Env {
    /// Start from none of the shell's variables (`env -i`, `sudo` without `-E`: those it keeps).
    base: Base,
    /// Changes in order: set, or removed (`None`).
    changes: Vec<(String, Option<Str>)>,
    prefix: Vec<String>,
    inherits: bool,
}

#[derive(Clone, Copy)]
enum Base {
    Shell,
    Empty,
    Keep(&'static [&'static str]),
}

impl Env {
    fn of(w: &World) -> Env {
        Env { base: Base::Shell, changes: Vec::new(), prefix: Vec::new(), inherits: w.open }
    }

    fn set(&mut self, name: &str, value: Str) {
        self.changes.push((name.to_string(), Some(value)));
        self.prefix.push(name.to_string());
    }

    fn remove(&mut self, name: &str) {
        self.changes.push((name.to_string(), None));
    }

    fn clear(&mut self, keep: Option<&'static [&'static str]>) {
        self.base = keep.map_or(Base::Empty, Base::Keep);
        self.changes.clear();
        self.prefix.clear();
        self.inherits = false;
    }

    fn vars(&self, w: &World) -> BTreeMap<String, Str> {
        let mut vars = match self.base {
            Base::Shell => w.exported(),
            Base::Empty => BTreeMap::new(),
            Base::Keep(names) => w.exported().into_iter().filter(|(k, _)| names.contains(&k.as_str())).collect(),
        };
        for (name, value) in &self.changes {
            match value {
                Some(v) => {
                    vars.insert(name.clone(), v.clone());
                }
                None => {
                    vars.remove(name);
                }
            }
        }
        vars
    }
}

impl Interp<'_> {
    /// Run a program with `argv` and the command's prefix assignments.
    pub(super) fn external(&mut self, w: World, argv: Vec<Str>, assigns: Vec<Pending>) -> Vec<World> {
        let mut w = w;
        let mut env = Env::of(&w);
        for pending in assigns {
            let value = match pending.value {
                PendingValue::Scalar(v) => v,
                PendingValue::Array(items) => items.into_iter().next().map(|(_, v)| v).unwrap_or_default(),
            };
            self.prefix_assign(&w, &pending.name, value.clone(), pending.name_at);
            env.set(&pending.name, value);
        }
        self.program(&mut w, argv, env, Vec::new())
    }

    fn prefix_assign(&mut self, w: &World, name: &str, value: Str, name_at: Place) {
        let ctx = self.ctx(w);
        self.out.assigns.push(Assign { name: name.to_string(), value: Some(value), exported: true, how: How::Prefix, name_at, ctx });
    }

    /// A program with its environment; `wrappers` already taken off.
    fn program(&mut self, w: &mut World, argv: Vec<Str>, mut env: Env, mut wrappers: Vec<Vec<Str>>) -> Vec<World> {
        let at = self.at;
        let Some(name) = argv.first().and_then(Str::known) else {
            return self.record(w, argv, env, wrappers);
        };
        let base = name.rsplit('/').next().unwrap_or(&name).to_string();
        let args: Vec<Option<String>> = argv.iter().map(Str::known).collect();
        let wrapped = |skip: usize| argv[skip.min(argv.len())..].to_vec();
        match base.as_str() {
            "env" => {
                let mut i = 1;
                while i < argv.len() {
                    let Some(a) = args[i].as_deref() else { break };
                    match a {
                        "-i" | "--ignore-environment" | "-" => env.clear(None),
                        "-u" | "--unset" => {
                            if let Some(Some(n)) = args.get(i + 1) {
                                self.env_unset(w, n, &mut env);
                            }
                            i += 1;
                        }
                        "-S" | "--split-string" => {
                            // The string's words take the place of the option.
                            let Some(s) = argv.get(i + 1) else { break };
                            let split = split_env_string(s, &env.vars(w), at);
                            let mut rest = vec![argv[0].clone()];
                            rest.extend(split);
                            rest.extend(argv[i + 2..].iter().cloned());
                            wrappers.push(argv[..i + 2].to_vec());
                            return self.program_env_args(w, rest, env, wrappers);
                        }
                        "-C" | "--chdir" => i += 1,
                        "--" => {
                            i += 1;
                            break;
                        }
                        a if a.starts_with("--unset=") => self.env_unset(w, &a["--unset=".len()..], &mut env),
                        a if a.starts_with("-S") && a.len() > 2 => {
                            let s = argv[i].slice_chars(2, usize::MAX);
                            let split = split_env_string(&s, &env.vars(w), at);
                            let mut rest = vec![argv[0].clone()];
                            rest.extend(split);
                            rest.extend(argv[i + 1..].iter().cloned());
                            wrappers.push(argv[..i + 1].to_vec());
                            return self.program_env_args(w, rest, env, wrappers);
                        }
                        a if a.starts_with('-') && a.len() > 1 && !a.contains('=') => {}
                        _ => break,
                    }
                    i += 1;
                }
                wrappers.push(argv[..i].to_vec());
                self.program_env_args(w, std::iter::once(argv[0].clone()).chain(argv[i..].iter().cloned()).collect(), env, wrappers)
            }
            "sudo" => {
                let mut keep = false;
                let mut i = 1;
                while let Some(Some(a)) = args.get(i) {
                    match a.as_str() {
                        "-E" | "--preserve-env" => keep = true,
                        "-u" | "-g" | "-h" | "-p" | "-C" | "-D" | "-r" | "-t" | "-U" | "-T" => i += 1,
                        "--" => {
                            i += 1;
                            break;
                        }
                        a if a.starts_with("--preserve-env=") => {}
                        a if a.starts_with('-') => {}
                        _ => break,
                    }
                    i += 1;
                }
                if !keep {
                    env.clear(Some(&SUDO_KEEPS));
                }
                wrappers.push(argv[..i.min(argv.len())].to_vec());
                self.program_env_args(w, std::iter::once(argv[0].clone()).chain(argv[i.min(argv.len())..].iter().cloned()).collect(), env, wrappers)
            }
            "mpirun" | "mpiexec" | "orterun" | "prterun" => {
                // Open MPI's launcher: the program is its first operand;
                // `-x NAME=VALUE` sets NAME in the program's environment
                // (`-x NAME` passes the value it has).
                let mut i = 1;
                while let Some(a) = args.get(i) {
                    let Some(a) = a.as_deref() else { break };
                    if a == "--" {
                        i += 1;
                        break;
                    }
                    if !a.starts_with('-') {
                        break;
                    }
                    if a == "-x" {
                        if let Some(Some((name, _))) = args.get(i + 1).map(|v| v.as_deref().and_then(|v| v.split_once('=')))
                            && crate::evidence::shell::words::is_var_name(name)
                        {
                            let value = argv[i + 1].slice_chars(name.chars().count() + 1, usize::MAX);
                            let name_at = argv[i + 1].first_place().unwrap_or(at);
                            self.prefix_assign(w, name, value.clone(), name_at);
                            env.set(name, value);
                        }
                        i += 2;
                        continue;
                    }
                    i += if MPIRUN_TWO_VALUES.contains(&a) {
                        3
                    } else if MPIRUN_VALUE.contains(&a) {
                        2
                    } else {
                        1
                    };
                }
                wrappers.push(argv[..i.min(argv.len())].to_vec());
                if i >= argv.len() {
                    return self.record(w, argv, env, Vec::new());
                }
                self.program(w, wrapped(i), env, wrappers)
            }
            "docker" | "podman" | "nerdctl" if matches!(args.get(1).and_then(|a| a.as_deref()), Some("run" | "create" | "exec")) => {
                self.container(w, argv, &env, wrappers)
            }
            "srun" => {
                // Slurm's launcher: options, then the program; `--export=ALL,NAME=v`
                // sets NAME for it (without ALL, the shell's variables stay behind).
                let mut i = 1;
                while let Some(a) = argv.get(i).map(Str::display) {
                    if ends_options(&a, &mut i) {
                        break;
                    }
                    if let (Some(list), true) = (a.strip_prefix("--export="), args[i].is_some()) {
                        if !list.split(',').any(|item| item == "ALL") {
                            env.clear(None);
                        }
                        let mut offset = "--export=".len();
                        for item in list.split(',') {
                            if let Some((name, _)) = item.split_once('=').filter(|(n, _)| crate::evidence::shell::words::is_var_name(n)) {
                                let value = argv[i].slice_chars(offset + name.chars().count() + 1, offset + item.chars().count());
                                self.prefix_assign(w, name, value.clone(), argv[i].first_place().unwrap_or(at));
                                env.set(name, value);
                            }
                            offset += item.chars().count() + 1;
                        }
                    }
                    let takes_value = !a.contains('=') && (SRUN_VALUE.contains(&a.as_str()) || (a.starts_with("--") && !SRUN_FLAGS.contains(&a.as_str())));
                    i += if takes_value { 2 } else { 1 };
                }
                wrappers.push(argv[..i.min(argv.len())].to_vec());
                if i >= argv.len() {
                    return self.record(w, argv, env, Vec::new());
                }
                let ctx = self.ctx(w);
                self.out.containers.push((argv[..i].to_vec(), ctx));
                self.program(w, wrapped(i), env, wrappers)
            }
            "nohup" | "setsid" | "unbuffer" | "time" | "caffeinate" => {
                wrappers.push(vec![argv[0].clone()]);
                let mut skip = 1;
                while args.get(skip).and_then(|a| a.as_deref()).is_some_and(|a| a.starts_with('-')) {
                    skip += 1;
                }
                self.program(w, wrapped(skip), env, wrappers)
            }
            "nice" | "ionice" | "numactl" | "taskset" | "timeout" | "stdbuf" | "chrt" | "prlimit" => {
                let skip = wrapper_args(&base, &args);
                wrappers.push(argv[..skip.min(argv.len())].to_vec());
                if skip >= argv.len() {
                    return self.record(w, argv, env, Vec::new());
                }
                self.program(w, wrapped(skip), env, wrappers)
            }
            "bash" | "sh" | "dash" | "zsh" | "ksh" => self.child_shell(w, &argv, &args, env, wrappers),
            b if is_python(b) => {
                let worlds = self.python(w, &argv, &args, &env);
                match worlds {
                    Some(worlds) => worlds,
                    None => self.record(w, argv, env, wrappers),
                }
            }
            _ => {
                if let Some(worlds) = self.known_program(w, &base, &argv, &args) {
                    return worlds;
                }
                self.record(w, argv, env, wrappers)
            }
        }
    }

    /// `docker run|create|exec [options] IMAGE|CONTAINER COMMAND...`: the
    /// command runs in the container, with the image's environment (not
    /// known here) and the `-e`/`--env` variables (`-e NAME` passes the
    /// shell's value), not the shell's own.
    fn container(&mut self, w: &mut World, argv: Vec<Str>, env: &Env, mut wrappers: Vec<Vec<Str>>) -> Vec<World> {
        let at = self.at;
        let shell = env.vars(w);
        let mut inner = Env::of(w);
        inner.clear(None);
        inner.inherits = true;
        let mut i = 2;
        while let Some(a) = argv.get(i).map(Str::display) {
            if options_of_unknown_shape(&argv[i..]) {
                i += 1;
                continue;
            }
            if ends_options(&a, &mut i) {
                break;
            }
            let item = match a.as_str() {
                "-e" | "--env" => {
                    i += 1;
                    argv.get(i).cloned()
                }
                _ if a.starts_with("--env=") => Some(argv[i].slice_chars("--env=".len(), usize::MAX)),
                _ if a.contains('=') || CONTAINER_FLAGS.contains(&a.as_str()) || (!a.starts_with("--") && a[1..].chars().all(|c| "dit".contains(c))) => None,
                // Every other option takes a value (`--name n`, `-v a:b`, `--gpus all`).
                _ => {
                    i += 1;
                    None
                }
            };
            i += 1;
            let Some(item) = item else { continue };
            let Some(text) = item.known() else { continue };
            match text.split_once('=') {
                Some((name, _)) if crate::evidence::shell::words::is_var_name(name) => {
                    let value = item.slice_chars(name.chars().count() + 1, usize::MAX);
                    self.prefix_assign(w, name, value.clone(), item.first_place().unwrap_or(at));
                    inner.set(name, value);
                }
                None if crate::evidence::shell::words::is_var_name(&text) => {
                    let value = shell.get(&text).cloned().unwrap_or_else(|| Str::unknown(Why::Input(text.clone()), at, format!("${text}")));
                    inner.set(&text, value);
                }
                _ => {}
            }
        }
        // The image (or container) and the command run in it.
        if i + 1 >= argv.len() {
            return self.record(w, argv, env.clone(), wrappers);
        }
        let ctx = self.ctx(w);
        self.out.containers.push((argv[..=i].to_vec(), ctx));
        wrappers.push(argv[..=i].to_vec());
        self.program(w, argv[i + 1..].to_vec(), inner, wrappers)
    }

    /// After `env`'s options: `NAME=value` words, then the program.
    fn program_env_args(&mut self, w: &mut World, argv: Vec<Str>, mut env: Env, wrappers: Vec<Vec<Str>>) -> Vec<World> {
        let mut i = 1;
        while let Some(word) = argv.get(i) {
            let parts = word.split_char('=');
            let name = parts.first().and_then(Str::known);
            match name {
                Some(n) if parts.len() >= 2 && super::state::is_input_name(&n) => {
                    let mut value = Str::new();
                    for (j, p) in parts[1..].iter().enumerate() {
                        if j > 0 {
                            value.push_str("=", self.at);
                        }
                        value.append(p);
                    }
                    self.prefix_assign(w, &n, value.clone(), parts[0].first_place().unwrap_or(self.at));
                    env.set(&n, value);
                }
                _ => break,
            }
            i += 1;
        }
        if i >= argv.len() {
            // `env` alone prints the environment.
            let text: String = env.vars(w).iter().map(|(k, v)| format!("{k}={}\n", v.display())).collect();
            w.print(&Str::lit(text, self.at));
            w.status = Status::ok();
            return vec![w.clone()];
        }
        self.program(w, argv[i..].to_vec(), env, wrappers)
    }

    fn env_unset(&mut self, w: &World, name: &str, env: &mut Env) {
        env.remove(name);
        let ctx = self.ctx(w);
        self.out.assigns.push(Assign { name: name.to_string(), value: None, exported: false, how: How::Unset, name_at: self.at, ctx });
    }

    /// `bash -c STRING [NAME ARGS]`, `bash -s ARGS`, `bash FILE ARGS`,
    /// `bash` reading its input: a child shell from the exported environment.
    fn child_shell(&mut self, w: &mut World, argv: &[Str], args: &[Option<String>], env: Env, wrappers: Vec<Vec<Str>>) -> Vec<World> {
        let at = self.at;
        let mut i = 1;
        let mut command: Option<Str> = None;
        let mut from_stdin = false;
        while let Some(Some(a)) = args.get(i) {
            match a.as_str() {
                "-c" => {
                    command = argv.get(i + 1).cloned();
                    i += 2;
                    break;
                }
                "-s" => {
                    from_stdin = true;
                    i += 1;
                    break;
                }
                "--" => {
                    i += 1;
                    break;
                }
                "-o" | "+o" | "-O" | "+O" => i += 2,
                a if a.starts_with('-') || a.starts_with('+') => {
                    if a.contains('c') && !a.starts_with("--") {
                        command = argv.get(i + 1).cloned();
                        i += 2;
                        break;
                    }
                    i += 1;
                }
                _ => break,
            }
        }
        let (code, name, rest): (Str, Str, Vec<Str>) = match command {
            Some(c) => (c, argv.get(i).cloned().unwrap_or_else(|| argv[0].clone()), argv.get(i + 1..).map(<[Str]>::to_vec).unwrap_or_default()),
            None if from_stdin || i >= argv.len() => match w.stdin.clone() {
                Some(input) => (input, argv[0].clone(), argv.get(i..).map(<[Str]>::to_vec).unwrap_or_default()),
                None => return self.record(w, argv.to_vec(), env, wrappers),
            },
            None => {
                let file = argv[i].clone();
                let content = self.read_file(w, &file);
                let ctx = self.ctx(w);
                let found = content.is_known();
                self.out.reached.push((file.clone(), found, ctx));
                if !found {
                    return self.record(w, argv.to_vec(), env, wrappers);
                }
                (content, file, argv.get(i + 1..).map(<[Str]>::to_vec).unwrap_or_default())
            }
        };
        // The child: exported variables only, its own positional parameters.
        let vars = env.vars(w);
        let mut child = World::new(w.cwd.clone(), env.inherits);
        for (k, v) in &vars {
            child.assign(k, Value::Scalar(v.clone()), at);
            child.set_attrs(k, false, at, |a| a.exported = true);
        }
        child.funcs = w.funcs.clone();
        child.files = w.files.clone();
        child.out = w.out.as_ref().map(|_| Str::new());
        child.marks = w.marks.clone();
        *child.positional_mut() = rest;
        let saved_sources = std::mem::replace(&mut self.sources, vec![name.display()]);
        // A non-interactive bash first sources `$BASH_ENV`.
        let mut worlds = vec![child];
        if let Some(bash_env) = vars.get("BASH_ENV").cloned() {
            let mut next = Vec::new();
            for c in worlds {
                let content = self.read_file(&c, &bash_env);
                let ctx = self.ctx(&c);
                self.out.reached.push((bash_env.clone(), content.is_known(), ctx));
                next.extend(self.run_value(c, &content, CallKind::Source(bash_env.display())));
            }
            worlds = next;
        }
        let mut done = Vec::new();
        for c in worlds {
            done.extend(self.run_value(c, &code, CallKind::Shell));
        }
        self.sources = saved_sources;
        let outputs: Vec<Str> = done.iter().map(|c| c.out.clone().unwrap_or_default()).collect();
        let statuses: Vec<Status> = done.iter().map(|c| c.status.clone()).collect();
        let files: Vec<imbl::OrdMap<String, FileState>> = done.iter().map(|c| c.files.clone()).collect();
        w.print(&Str::one_of(outputs, at));
        w.status = super::exec::join_status(&statuses);
        if files.len() == 1 {
            w.files = files.into_iter().next().unwrap_or_default();
        }
        self.errexit(w.clone(), &statuses, &name.display())
    }

    /// `python3 -c CODE`, `python3 - <<EOF`, `python3 FILE`: the program
    /// evaluated abstractly ([`crate::evidence::python::eval`]). What it
    /// sets in its environment reaches the engine it runs in-process
    /// (`runpy.run_module`) and the programs it starts; those are recorded
    /// as launches, a shell command it runs is read as bash. `None` when
    /// the program is not one to evaluate (`-m MODULE`: a program like any).
    fn python(&mut self, w: &mut World, argv: &[Str], args: &[Option<String>], env: &Env) -> Option<Vec<World>> {
        use crate::evidence::python::eval::{self as py, EnvWriteKind, LaunchCommand, LaunchEnv, RunKind};
        let at = self.at;
        let mut i = 1;
        let mut code: Option<Str> = None;
        while let Some(a) = args.get(i) {
            match a.as_deref() {
                Some("-c") => {
                    code = argv.get(i + 1).cloned();
                    i += 2;
                    break;
                }
                Some("-m") => return None,
                Some("-") => {
                    code = w.stdin.clone();
                    i += 1;
                    break;
                }
                Some(f) if f.starts_with('-') => i += 1,
                Some(_) => {
                    let file = argv[i].clone();
                    let content = self.read_file(w, &file);
                    let ctx = self.ctx(w);
                    self.out.reached.push((file, content.is_known(), ctx));
                    code = Some(content);
                    i += 1;
                    break;
                }
                None => return None,
            }
        }
        let code = code?;
        let text = code.known()?;
        let first = code.first_place().unwrap_or(at);
        let vars = env.vars(w);
        let inputs = py::PyInputs {
            env: vars.iter().filter_map(|(k, v)| v.known().map(|v| (k.clone(), v))).collect(),
            argv: args[i.saturating_sub(1)..].iter().map(|a| a.clone().unwrap_or_default()).collect(),
            file: None,
        };
        let effects = py::evaluate(&text, first.line as u64, &inputs);
        let place = |line: u64| Place { file: first.file, line: line as u32 };
        // The process's environment as its writes leave it, in order.
        let mut proc_env = vars;
        let saved = self.at;
        for write in &effects.env {
            let Some(name) = write.name.as_str() else { continue };
            // The program's own environment, and its children's: as a prefix is the command's.
            self.at = place(write.line);
            let ctx = self.ctx(w);
            let value = match (write.kind, &write.value) {
                (EnvWriteKind::Set | EnvWriteKind::Putenv | EnvWriteKind::SetDefault, Some(v)) => Some(py_str(v, self.at)),
                _ => None,
            };
            let (exported, how) = if value.is_some() { (true, How::Prefix) } else { (false, How::Unset) };
            self.out.assigns.push(Assign { name: name.to_string(), value, exported, how, name_at: self.at, ctx });
            match (write.kind, &write.value) {
                (EnvWriteKind::Set, Some(v)) | (EnvWriteKind::Putenv, Some(v)) => {
                    proc_env.insert(name.to_string(), py_str(v, place(write.line)));
                }
                (EnvWriteKind::SetDefault, Some(v)) => {
                    proc_env.entry(name.to_string()).or_insert_with(|| py_str(v, place(write.line)));
                }
                _ => {
                    proc_env.remove(name);
                }
            }
        }
        for run in effects.run_modules.iter().filter(|r| r.kind == RunKind::Module) {
            self.at = place(run.line);
            let mut launch = vec![argv[0].clone(), Str::lit("-m", self.at), py_str(&run.target, self.at)];
            if let Some(sys_argv) = &run.argv {
                launch.extend(sys_argv.iter().skip(1).map(|a| py_str(a, self.at)));
            }
            let child = Env {
                base: Base::Empty,
                changes: proc_env.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect(),
                prefix: Vec::new(),
                inherits: env.inherits,
            };
            self.record(w, launch, child, Vec::new());
        }
        for launch in &effects.launches {
            self.at = place(launch.line);
            let child = match &launch.env {
                LaunchEnv::Inherited => Env {
                    base: Base::Empty,
                    changes: proc_env.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect(),
                    prefix: Vec::new(),
                    inherits: env.inherits,
                },
                LaunchEnv::Given { base, vars } => {
                    let mut changes: Vec<(String, Option<Str>)> = match base {
                        py::EnvBase::Environ => proc_env.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect(),
                        _ => Vec::new(),
                    };
                    changes.extend(vars.iter().filter_map(|(k, v)| k.as_str().map(|k| (k.to_string(), Some(py_str(v, self.at))))));
                    Env { base: Base::Empty, changes, prefix: Vec::new(), inherits: matches!(base, py::EnvBase::Unknown(_)) }
                }
            };
            match &launch.command {
                LaunchCommand::Argv(values) => {
                    let words: Vec<Str> = values.iter().map(|v| py_str(v, self.at)).collect();
                    if !words.is_empty() {
                        let mut child_world = w.clone();
                        let _ = self.program(&mut child_world, words, child, Vec::new());
                    }
                }
                LaunchCommand::Shell(command) => {
                    let command = py_str(command, self.at);
                    let mut shell = vec![Str::lit("bash", self.at), Str::lit("-c", self.at), command];
                    shell.truncate(3);
                    let mut child_world = w.clone();
                    let _ = self.program(&mut child_world, shell, child, Vec::new());
                }
            }
        }
        for write in &effects.writes {
            self.at = place(write.line);
            let path = py_str(&write.path, self.at);
            let content = write
                .content
                .as_ref()
                .map(|c| py_str(c, self.at))
                .unwrap_or_else(|| self.undetermined(Why::Output("what the Python program writes".into()), "…"));
            self.write_file(w, &path, content, false);
        }
        for (line, problem) in &effects.problems {
            self.at = place(*line);
            self.note(format!("python: {problem}"));
        }
        self.at = saved;
        // Its own record, for what reads the program's words.
        let _ = self.record(w, argv.to_vec(), env.clone(), Vec::new());
        if effects.prints.iter().all(|p| !p.conditional && p.text.as_str().is_some()) && w.out.is_some() {
            // What it prints, when all of it is known, replaces the undetermined output record() gave.
            let printed: String = effects.prints.iter().filter_map(|p| p.text.as_str()).map(|t| format!("{t}\n")).collect();
            if let Some(out) = w.out.as_mut() {
                let mut pieces = out.pieces().to_vec();
                pieces.pop();
                let mut rebuilt = Str::new();
                for p in pieces {
                    rebuilt.push(p);
                }
                rebuilt.push_str(&printed, at);
                *out = rebuilt;
            }
        }
        Some(vec![w.clone()])
    }

    /// A program not evaluated: recorded with what it receives; its output
    /// and status are the run's.
    fn record(&mut self, w: &mut World, argv: Vec<Str>, env: Env, wrappers: Vec<Vec<Str>>) -> Vec<World> {
        let name = argv.first().map(Str::display).unwrap_or_default();
        let ctx = self.ctx(w);
        // The environment is kept for engine launches, which the checks judge
        // by it, and for installs, whose index it may choose.
        let names: Vec<String> = argv.iter().map(Str::display).collect();
        let env_vars = if crate::evidence::shell::command::launch_of(&names).is_some() || crate::evidence::shell::command::install_word(&names).is_some() {
            env.vars(w)
        } else {
            BTreeMap::new()
        };
        let exec = Exec {
            argv: argv.clone(),
            env: env_vars,
            prefix: env.prefix,
            inherits: env.inherits,
            cwd: w.cwd.clone(),
            stdin: w.stdin.clone(),
            stdout_to: Vec::new(),
            wrappers,
            background: false,
            ctx,
        };
        self.out.execs.push(exec);
        let summary: String = crate::provenance::clip(&argv.iter().map(Str::display).collect::<Vec<_>>().join(" "));
        if w.out.is_some() {
            let printed = self.undetermined(Why::Output(summary.clone()), &format!("$({summary})"));
            w.print(&printed);
        }
        w.status = Status::Unknown(format!("what {name} returns"));
        vec![w.clone()]
    }

    /// Programs whose output follows from their arguments and input.
    fn known_program(&mut self, w: &mut World, base: &str, argv: &[Str], args: &[Option<String>]) -> Option<Vec<World>> {
        let at = self.at;
        // Only with every argument known.
        if args.iter().any(Option::is_none) && !matches!(base, "echo" | "printf" | "dirname" | "basename" | "cat" | "xargs") {
            return None;
        }
        let texts: Vec<String> = args.iter().map(|a| a.clone().unwrap_or_default()).collect();
        let input = w.stdin.clone();
        let out: Str = match base {
            "true" => Str::new(),
            "false" => {
                w.status = Status::Known(1);
                return Some(vec![w.clone()]);
            }
            "echo" => {
                let mut out = Str::new();
                let mut first = 1;
                let mut newline = true;
                if texts.get(1).map(String::as_str) == Some("-n") {
                    newline = false;
                    first = 2;
                }
                for (i, a) in argv[first.min(argv.len())..].iter().enumerate() {
                    if i > 0 {
                        out.push_str(" ", at);
                    }
                    out.append(a);
                }
                if newline {
                    out.push_str("\n", at);
                }
                out
            }
            "printf" => printf_format(argv.get(1)?, &argv[2.min(argv.len())..], at)?,
            "cat" => {
                let files: Vec<&Str> = argv[1..].iter().filter(|a| !a.known().is_some_and(|t| t.starts_with('-') && t.len() > 1)).collect();
                if files.is_empty() {
                    input?
                } else {
                    let mut out = Str::new();
                    for f in files {
                        if f.known().as_deref() == Some("-") {
                            out.append(&input.clone()?);
                        } else {
                            out.append(&self.read_file(w, f));
                        }
                    }
                    out
                }
            }
            "dirname" => {
                let p = argv.get(1)?.known()?;
                Str::derived(format!("{}\n", dirname(&p)), &argv[1], at)
            }
            "basename" => {
                let p = argv.get(1)?.known()?;
                let mut b = p.trim_end_matches('/').rsplit('/').next().unwrap_or("").to_string();
                if let Some(suffix) = texts.get(2)
                    && b.len() > suffix.len()
                {
                    b = b.strip_suffix(suffix.as_str()).map_or(b.clone(), str::to_string);
                }
                Str::derived(format!("{b}\n"), &argv[1], at)
            }
            "realpath" | "readlink" => {
                let p = texts.iter().skip(1).find(|a| !a.starts_with('-'))?;
                let abs = absolute(&w.cwd, p)?;
                Str::lit(format!("{abs}\n"), at)
            }
            "jq" => {
                let text = jq::output(&texts[1..], input.as_ref().and_then(Str::known).as_deref())?;
                match &input {
                    Some(data) => Str::derived(text, data, at),
                    None => Str::lit(text, at),
                }
            }
            "base64" => {
                let decode = texts.iter().any(|a| a == "-d" || a == "--decode" || a == "-D");
                let data = self.input_or_file(w, &texts, input)?;
                let text = data.known()?;
                let out = if decode {
                    use base64::Engine;
                    let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(clean).ok()?).ok()?
                } else {
                    return None;
                };
                Str::derived(out, &data, at)
            }
            "xxd" => {
                let reverse = texts.iter().any(|a| a == "-r" || a == "-rp" || a == "-pr" || a == "-r -p");
                let plain = texts.iter().any(|a| a == "-p" || a == "-ps" || a == "-plain" || a == "-rp" || a == "-pr");
                if !(reverse && plain) {
                    return None;
                }
                let data = input?;
                let text = data.known()?;
                let hex: String = text.chars().filter(char::is_ascii_hexdigit).collect();
                let bytes: Option<Vec<u8>> = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()).collect();
                Str::derived(String::from_utf8(bytes?).ok()?, &data, at)
            }
            "tr" => {
                let data = input?;
                let text = data.known()?;
                let delete = texts.get(1).is_some_and(|a| a == "-d");
                let out: String = if delete {
                    let set = expand_tr_set(texts.get(2)?);
                    text.chars().filter(|c| !set.contains(c)).collect()
                } else {
                    let from = expand_tr_set(texts.get(1)?);
                    let to = expand_tr_set(texts.get(2)?);
                    text.chars()
                        .map(|c| match from.iter().position(|f| *f == c) {
                            Some(i) => *to.get(i).or(to.last()).unwrap_or(&c),
                            None => c,
                        })
                        .collect()
                };
                Str::derived(out, &data, at)
            }
            "grep" | "egrep" => {
                let mut invert = false;
                let mut extended = base == "egrep";
                let mut fixed = false;
                let mut quiet = false;
                let mut pattern: Option<String> = None;
                let mut files = Vec::new();
                let mut i = 1;
                while i < texts.len() {
                    let a = &texts[i];
                    if a.starts_with('-') && a.len() > 1 && pattern.is_none() || (a.starts_with('-') && a.len() > 1 && !files.is_empty()) {
                        match a.as_str() {
                            "-e" => {
                                pattern = texts.get(i + 1).cloned();
                                i += 1;
                            }
                            _ => {
                                for c in a[1..].chars() {
                                    match c {
                                        'v' => invert = true,
                                        'E' => extended = true,
                                        'F' => fixed = true,
                                        'q' => quiet = true,
                                        'i' | 'o' | 'c' | 'n' | 'l' | 'x' | 'w' | 'P' => return None,
                                        _ => {}
                                    }
                                }
                            }
                        }
                    } else if pattern.is_none() {
                        pattern = Some(a.clone());
                    } else {
                        files.push(argv[i].clone());
                    }
                    i += 1;
                }
                let pattern = pattern?;
                let data = if files.is_empty() {
                    input?
                } else {
                    let mut d = Str::new();
                    for f in &files {
                        d.append(&self.read_file(w, f));
                    }
                    d
                };
                let re_text = if fixed {
                    regex::escape(&pattern)
                } else if extended {
                    pattern.clone()
                } else {
                    basic_regex(&pattern)
                };
                let re = regex::RegexBuilder::new(&re_text).size_limit(1 << 20).build().ok()?;
                let mut out = Str::new();
                let mut any = false;
                for line in lines_of(&data) {
                    let text = line.known()?;
                    if re.is_match(text.trim_end_matches('\n')) != invert {
                        any = true;
                        if !quiet {
                            out.append(&line);
                            if !text.ends_with('\n') {
                                out.push_str("\n", at);
                            }
                        }
                    }
                }
                w.print(&out);
                w.status = Status::from_bool(any);
                return Some(vec![w.clone()]);
            }
            "cut" => {
                let data = input?;
                let mut delim = '\t';
                let mut fields: Option<Vec<usize>> = None;
                let mut i = 1;
                while i < texts.len() {
                    let a = &texts[i];
                    if let Some(d) = a.strip_prefix("-d") {
                        let d = if d.is_empty() {
                            i += 1;
                            texts.get(i)?.clone()
                        } else {
                            d.to_string()
                        };
                        delim = d.chars().next()?;
                    } else if let Some(f) = a.strip_prefix("-f") {
                        let f = if f.is_empty() {
                            i += 1;
                            texts.get(i)?.clone()
                        } else {
                            f.to_string()
                        };
                        fields = Some(parse_fields(&f)?);
                    } else {
                        return None;
                    }
                    i += 1;
                }
                let fields = fields?;
                let mut out = Str::new();
                for line in lines_of(&data) {
                    let parts = line.map_known(|t| t.trim_end_matches('\n').to_string()).split_char(delim);
                    let picked: Vec<&Str> = fields.iter().filter_map(|f| parts.get(f - 1)).collect();
                    for (j, p) in picked.iter().enumerate() {
                        if j > 0 {
                            out.push_str(&delim.to_string(), at);
                        }
                        out.append(p);
                    }
                    out.push_str("\n", at);
                }
                out
            }
            "head" | "tail" => {
                let data = input?;
                let mut n: usize = 10;
                let mut i = 1;
                while i < texts.len() {
                    let a = &texts[i];
                    if a == "-n" {
                        n = texts.get(i + 1)?.trim_start_matches('+').parse().ok()?;
                        i += 1;
                    } else if let Some(num) = a.strip_prefix("-n") {
                        n = num.parse().ok()?;
                    } else if let Some(num) = a.strip_prefix('-') {
                        n = num.parse().ok()?;
                    } else {
                        return None;
                    }
                    i += 1;
                }
                let lines = lines_of(&data);
                let picked: Vec<Str> =
                    if base == "head" { lines.into_iter().take(n).collect() } else { lines.iter().skip(lines.len().saturating_sub(n)).cloned().collect() };
                let mut out = Str::new();
                for l in picked {
                    out.append(&l);
                }
                out
            }
            "sort" => {
                let mut flags = String::new();
                let mut files = Vec::new();
                for t in &texts[1..] {
                    match t.strip_prefix('-') {
                        Some(f) if !f.is_empty() => flags.push_str(f),
                        _ => files.push(t.clone()),
                    }
                }
                let data = match files.as_slice() {
                    [] => input?,
                    [f] if f == "-" => input?,
                    [f] => self.read_file(w, &Str::lit(f.clone(), at)),
                    _ => return None,
                };
                sort_numeric(&data, &flags, at)?
            }
            "paste" => paste_serial(&texts[1..], input?, at)?,
            "sed" => {
                let data = input?;
                Str::derived(super::sed::output(&texts[1..], &data.known()?)?, &data, at)
            }
            "xargs" => return self.xargs(w, argv),
            // `awk "BEGIN{print (A-1)/K}"`, `awk -v s=.. 'BEGIN { exit !(s > 0) }'`:
            // arithmetic and tests on the script's values.
            "awk" | "gawk" | "mawk" => {
                let run = super::awk::run(&texts[1..])?;
                let program = argv.iter().rev().find(|a| a.known().is_some_and(|t| t.contains("BEGIN")))?;
                w.print(&Str::derived(run.out, program, at));
                w.status = Status::Known(run.status);
                return Some(vec![w.clone()]);
            }
            "seq" => {
                let nums: Vec<i64> = texts[1..].iter().map(|t| t.parse().ok()).collect::<Option<_>>()?;
                let (first, step, last) = match nums.as_slice() {
                    [l] => (1, 1, *l),
                    [f, l] => (*f, 1, *l),
                    [f, s, l] => (*f, *s, *l),
                    _ => return None,
                };
                if step == 0 || ((last - first) / step) > self.limits.fields as i64 {
                    return None;
                }
                let mut out = String::new();
                let mut x = first;
                while (step > 0 && x <= last) || (step < 0 && x >= last) {
                    out.push_str(&format!("{x}\n"));
                    x += step;
                }
                Str::lit(out, at)
            }
            "mkdir" | "touch" | "chmod" | "sleep" | "ln" => {
                // No output; their effect on the file system is the run's (touch: an empty file).
                return None;
            }
            "tee" => {
                let data = input?;
                let append = texts.iter().any(|a| a == "-a" || a == "--append");
                for f in argv[1..].iter().filter(|a| !a.known().is_some_and(|t| t.starts_with('-'))) {
                    self.write_file(w, f, data.clone(), append);
                }
                data
            }
            _ => return None,
        };
        w.print(&out);
        if !matches!(base, "false") {
            w.status = Status::ok();
        }
        Some(vec![w.clone()])
    }

    /// The data a program reads: its file argument, else its input.
    fn input_or_file(&mut self, w: &World, texts: &[String], input: Option<Str>) -> Option<Str> {
        match texts.iter().skip(1).find(|a| !a.starts_with('-')) {
            Some(file) => Some(self.read_file(w, &Str::lit(file.clone(), self.at))),
            None => input,
        }
    }

    /// `xargs [CMD ARGS]`: the words of the input appended to the command.
    fn xargs(&mut self, w: &mut World, argv: &[Str]) -> Option<Vec<World>> {
        let input = w.stdin.clone()?;
        let mut i = 1;
        while argv.get(i).and_then(Str::known).is_some_and(|a| a.starts_with('-')) {
            let a = argv[i].known().unwrap_or_default();
            if matches!(a.as_str(), "-I" | "-n" | "-d" | "-L" | "-P" | "-a" | "-E" | "-s") || a.starts_with("-I") {
                // Replacement strings, batching: the run's.
                return None;
            }
            i += 1;
        }
        let mut command: Vec<Str> = argv[i..].to_vec();
        if command.is_empty() {
            command.push(Str::lit("echo", self.at));
        }
        // xargs splits on blanks and newlines, honouring quotes.
        let words = split_env_string(&input, &BTreeMap::new(), self.at);
        command.extend(words);
        let env = Env::of(w);
        let mut child = w.clone();
        child.stdin = None;
        let worlds = self.program(&mut child, command, env, vec![argv[..i].to_vec()]);
        Some(worlds)
    }
}

/// A Python interpreter's name (`python`, `python3`, `python3.11`).
fn is_python(base: &str) -> bool {
    base == "python" || base.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// A Python value as the shell sees it.
fn py_str(v: &crate::evidence::python::eval::PyValue, at: Place) -> Str {
    use crate::evidence::python::eval::PyValue;
    match v {
        PyValue::Str(_) | PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_) | PyValue::Installed(_) => Str::lit(v.to_string(), at),
        other => Str::unknown(Why::Output("a value of the Python program".into()), at, other.to_string()),
    }
}

/// Options of a wrapper and where its program starts.
/// Options of `mpirun` that take one value (those with none are flags).
const MPIRUN_VALUE: &[&str] = &[
    "-n",
    "-np",
    "-c",
    "-N",
    "-H",
    "--host",
    "-host",
    "--hostfile",
    "-hostfile",
    "--machinefile",
    "-machinefile",
    "--map-by",
    "-map-by",
    "--bind-to",
    "-bind-to",
    "--rank-by",
    "-rank-by",
    "--prefix",
    "-wdir",
    "--wdir",
    "-wd",
    "--npernode",
    "-npernode",
    "--npersocket",
    "--output-filename",
    "-output-filename",
    "--app",
    "--path",
    "-path",
    "--preload-files",
    "--cpus-per-proc",
    "--cpu-set",
];
/// Options of `docker run` (and `podman`, `nerdctl`) that take no value;
/// every other option without `=` takes the next word.
const CONTAINER_FLAGS: &[&str] = &[
    "--rm",
    "--detach",
    "--interactive",
    "--tty",
    "--privileged",
    "--init",
    "--read-only",
    "-P",
    "--publish-all",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--sig-proxy",
    "--replace",
];
/// Short options of `srun` that take the next word (`-N 1`; `-N1` does not).
const SRUN_VALUE: &[&str] = &["-N", "-n", "-c", "-p", "-w", "-t", "-J", "-o", "-e", "-A", "-G", "-x", "-D", "-m", "-C", "-d", "-i", "-r", "-T", "-q", "-S"];
/// Long options of `srun` that take no value (every other one without `=` takes the next word).
const SRUN_FLAGS: &[&str] = &[
    "--exclusive",
    "--overlap",
    "--pty",
    "--label",
    "--unbuffered",
    "--kill-on-bad-exit",
    "--quiet",
    "--verbose",
    "--no-kill",
    "--overcommit",
    "--oversubscribe",
    "--contiguous",
    "--disable-status",
    "--test-only",
    "--wait-all-nodes",
];
/// Options of `mpirun` that take two values (`--mca KEY VALUE`).
const MPIRUN_TWO_VALUES: &[&str] = &["--mca", "-mca", "--gmca", "-gmca"];

/// Whether the first of `rest`, a container launcher's word the run
/// decides (`${EXTRA_MOUNTS:-}`, `$(… && echo "-v a:b")`), stands for
/// options rather than the image: each value it may take is empty or an
/// option, or the next word the script spells out is an option (options
/// come before the image, and what follows the image is its command).
fn options_of_unknown_shape(rest: &[Str]) -> bool {
    let Some(word) = rest.first().filter(|w| !w.is_known()) else { return false };
    let optional = |v: &Str| v.known().is_some_and(|t| t.trim().is_empty() || t.trim_start().starts_with('-'));
    if let [Piece::Unknown(u)] = word.pieces()
        && let Why::OneOf(values) = &u.why
        && values.iter().all(optional)
    {
        return true;
    }
    rest[1..].iter().find_map(Str::known).is_some_and(|next| next.starts_with('-') && next != "-")
}

/// Whether word `a` (at `i`) ends a wrapper's options: `--` (stepped over)
/// or its first operand.
fn ends_options(a: &str, i: &mut usize) -> bool {
    if a == "--" {
        *i += 1;
        return true;
    }
    !a.starts_with('-') || a == "-"
}

fn wrapper_args(base: &str, args: &[Option<String>]) -> usize {
    let takes_value: &[&str] = match base {
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-p", "-t"],
        "numactl" => &["-N", "-m", "-C", "-p", "-i", "-P"],
        "taskset" => &[],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e"],
        "chrt" => &[],
        "prlimit" => &["-p"],
        _ => &[],
    };
    let mut i = 1;
    while let Some(Some(a)) = args.get(i) {
        if ends_options(a, &mut i) {
            break;
        }
        if takes_value.contains(&a.as_str()) {
            i += 1;
        }
        i += 1;
    }
    // Positional parameters of the wrapper itself.
    match base {
        "taskset" => {
            // taskset [-c] MASK CMD (or -p PID): one positional before the command.
            i + 1
        }
        "timeout" | "chrt" => i + 1,
        _ => i,
    }
}

/// `env -S`'s splitting: blanks separate words; single and double quotes,
/// backslash escapes and `${NAME}` as env reads them.
pub(super) fn split_env_string(s: &Str, vars: &BTreeMap<String, Str>, at: Place) -> Vec<Str> {
    let mut words = Vec::new();
    let mut cur = Str::new();
    let mut started = false;
    for piece in s.pieces() {
        match piece {
            Piece::Lit { text, at: p } => {
                let mut chars = text.chars().peekable();
                let mut quote: Option<char> = None;
                while let Some(c) = chars.next() {
                    match (quote, c) {
                        (None, ' ' | '\t' | '\n') => {
                            if started {
                                words.push(std::mem::take(&mut cur));
                                started = false;
                            }
                        }
                        (None, '\'' | '"') => {
                            quote = Some(c);
                            started = true;
                        }
                        (Some(q), c) if c == q => quote = None,
                        (q, '\\') if q != Some('\'') => {
                            if let Some(n) = chars.next() {
                                cur.push_str(&n.to_string(), *p);
                                started = true;
                            }
                        }
                        (q, '$') if q != Some('\'') && chars.peek() == Some(&'{') => {
                            chars.next();
                            let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
                            if let Some(v) = vars.get(&name) {
                                cur.append(v);
                            }
                            started = true;
                        }
                        (_, c) => {
                            cur.push_str(&c.to_string(), *p);
                            started = true;
                        }
                    }
                }
            }
            u => {
                cur.push(u.clone());
                started = true;
            }
        }
    }
    if started {
        words.push(cur);
    }
    let _ = at;
    words
}

/// The lines of a value without their newlines (a last line without one too).
fn bare_lines(data: &Str) -> Vec<Str> {
    let mut lines = data.split_char('\n');
    if lines.last().is_some_and(Str::is_empty) {
        lines.pop();
    }
    lines
}

/// `sort -n` (with `-u`, `-r`) over lines that are all decimal numbers:
/// by value, ties in byte order, `-u` keeping the first line of each value
/// (GNU sort). Other keys and orders depend on the locale and options: `None`.
fn sort_numeric(data: &Str, flags: &str, at: Place) -> Option<Str> {
    if !flags.contains('n') || !flags.chars().all(|c| matches!(c, 'n' | 'u' | 'r')) {
        return None;
    }
    let number = |t: &str| -> Option<f64> {
        let t = t.trim_start_matches([' ', '\t']);
        let digits = t.strip_prefix('-').unwrap_or(t);
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        (!int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) && frac.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok()).flatten()
    };
    let mut lines: Vec<(f64, String, Str)> = bare_lines(data)
        .into_iter()
        .map(|l| {
            let text = l.known()?;
            Some((number(&text)?, text, l))
        })
        .collect::<Option<_>>()?;
    let reverse = flags.contains('r');
    let unique = flags.contains('u');
    lines.sort_by(|a, b| {
        let by_value = a.0.total_cmp(&b.0);
        // `-u` turns off the last-resort byte comparison (the sort is stable).
        let ord = if unique { by_value } else { by_value.then_with(|| a.1.cmp(&b.1)) };
        if reverse { ord.reverse() } else { ord }
    });
    if unique {
        lines.dedup_by(|later, first| later.0 == first.0);
    }
    let mut out = Str::new();
    for (_, _, line) in lines {
        let place = line.first_place().unwrap_or(at);
        out.append(&line);
        out.push_str("\n", place);
    }
    Some(out)
}

/// `paste -s -d D [-]`: the input's lines joined by one delimiter character.
fn paste_serial(args: &[String], input: Str, at: Place) -> Option<Str> {
    let mut serial = false;
    let mut delim = "\t".to_string();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-" => {}
            "-s" | "--serial" => serial = true,
            "-d" => {
                delim = args.get(i + 1)?.clone();
                i += 1;
            }
            _ if a.starts_with("-sd") => {
                serial = true;
                delim = a[3..].to_string();
                if delim.is_empty() {
                    delim = args.get(i + 1)?.clone();
                    i += 1;
                }
            }
            _ if a.starts_with("-d") => delim = a[2..].to_string(),
            _ => return None,
        }
        i += 1;
    }
    if !serial || delim.chars().count() != 1 || delim == "\\" {
        return None;
    }
    let mut out = Str::new();
    for (k, line) in bare_lines(&input).iter().enumerate() {
        if k > 0 {
            out.push_str(&delim, at);
        }
        out.append(line);
    }
    out.push_str("\n", at);
    Some(out)
}

/// The lines of a value, each with its newline.
fn lines_of(data: &Str) -> Vec<Str> {
    let mut lines = Vec::new();
    let mut cur = Str::new();
    for piece in data.pieces() {
        match piece {
            Piece::Lit { text, at } => {
                for part in text.split_inclusive('\n') {
                    cur.push_str(part, *at);
                    if part.ends_with('\n') {
                        lines.push(std::mem::take(&mut cur));
                    }
                }
            }
            u => cur.push(u.clone()),
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

fn parse_fields(spec: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.parse().ok()?;
                let b: usize = if b.is_empty() { a + 64 } else { b.parse().ok()? };
                if b < a || b - a > 1024 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    out.iter().all(|f| *f > 0).then_some(out)
}

fn expand_tr_set(set: &str) -> Vec<char> {
    let chars: Vec<char> = super::expand::ansi_c(set).chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 2 < chars.len() && chars[i + 1] == '-' && chars[i] <= chars[i + 2] && (chars[i + 2] as u32 - chars[i] as u32) < 1024 {
            out.extend(chars[i]..=chars[i + 2]);
            i += 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// A POSIX basic regular expression as the regex crate reads it.
fn basic_regex(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ ('(' | ')' | '{' | '}' | '|' | '+' | '?')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push_str(r"\\"),
            },
            '(' | ')' | '{' | '}' | '|' | '+' | '?' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `dirname` of a path.
pub(super) fn dirname(p: &str) -> String {
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return if p.starts_with('/') { "/".into() } else { ".".into() };
    }
    match trimmed.rfind('/') {
        Some(0) => "/".into(),
        Some(i) => {
            let d = trimmed[..i].trim_end_matches('/');
            if d.is_empty() { "/".into() } else { d.to_string() }
        }
        None => ".".into(),
    }
}

/// A path made absolute against the working directory and normalised
/// (`.` and `..` folded); `None` when the directory is undetermined.
pub(super) fn absolute(cwd: &Str, path: &str) -> Option<String> {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        let cwd = cwd.known()?;
        format!("{}/{path}", cwd.trim_end_matches('/'))
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// `printf FORMAT ARGS`: the output, the format reused while arguments remain.
pub(super) fn printf_format(format: &Str, args: &[Str], at: Place) -> Option<Str> {
    let fmt = format.known()?;
    let place = format.first_place().unwrap_or(at);
    let mut out = Str::new();
    let mut next = 0;
    loop {
        let start = next;
        let chars: Vec<char> = fmt.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' {
                let len = escape_len(&chars[i + 1..]);
                let esc: String = chars[i..(i + 1 + len).min(chars.len())].iter().collect();
                i += 1 + len;
                out.push_str(&super::expand::ansi_c(&esc), place);
                continue;
            }
            if c != '%' {
                out.push_str(&c.to_string(), place);
                i += 1;
                continue;
            }
            i += 1;
            let mut spec = String::new();
            while i < chars.len() && "-+ #0123456789.*".contains(chars[i]) {
                spec.push(chars[i]);
                i += 1;
            }
            let Some(&conv) = chars.get(i) else { break };
            i += 1;
            if conv == '%' {
                out.push_str("%", place);
                continue;
            }
            let arg = args.get(next).cloned();
            next += 1;
            match conv {
                's' => {
                    let v = arg.unwrap_or_default();
                    if spec.is_empty() {
                        out.append(&v);
                    } else {
                        let t = v.known()?;
                        out.append(&Str::derived(pad(&t, &spec), &v, place));
                    }
                }
                'b' => {
                    let v = arg.unwrap_or_default();
                    out.append(&v.map_known(super::expand::ansi_c));
                }
                'q' => {
                    let v = arg.unwrap_or_default();
                    let t = v.known()?;
                    out.append(&Str::derived(shell_quote(&t), &v, place));
                }
                'd' | 'i' | 'u' => {
                    let t = arg.map(|a| a.known()).unwrap_or(Some("0".into()))?;
                    let n: i64 = if t.is_empty() { 0 } else { t.trim().parse().ok()? };
                    out.push_str(&pad(&n.to_string(), &spec), place);
                }
                'x' | 'X' | 'o' => {
                    let t = arg.map(|a| a.known()).unwrap_or(Some("0".into()))?;
                    let n: i64 = t.trim().parse().ok()?;
                    let s = match conv {
                        'x' => format!("{n:x}"),
                        'X' => format!("{n:X}"),
                        _ => format!("{n:o}"),
                    };
                    out.push_str(&pad(&s, &spec), place);
                }
                'f' | 'g' | 'e' => {
                    let t = arg.map(|a| a.known()).unwrap_or(Some("0".into()))?;
                    let n: f64 = t.trim().parse().ok()?;
                    let precision = spec.split('.').nth(1).and_then(|p| p.parse::<usize>().ok()).unwrap_or(6);
                    let s = if conv == 'f' { format!("{n:.precision$}") } else { format!("{n}") };
                    out.push_str(&s, place);
                }
                'c' => {
                    let t = arg.map(|a| a.known()).unwrap_or(Some(String::new()))?;
                    out.push_str(&t.chars().take(1).collect::<String>(), place);
                }
                _ => return None,
            }
        }
        if next <= start || next >= args.len() {
            break;
        }
    }
    Some(out)
}

/// How many characters after a backslash belong to its escape: `\xHH`,
/// `\uHHHH`, `\UHHHHHHHH`, octal `\NNN`, or one character.
fn escape_len(rest: &[char]) -> usize {
    let Some(&first) = rest.first() else { return 0 };
    let (max, digit): (usize, fn(&char) -> bool) = match first {
        'x' => (2, char::is_ascii_hexdigit),
        'u' => (4, char::is_ascii_hexdigit),
        'U' => (8, char::is_ascii_hexdigit),
        '0'..='7' => return 1 + rest[1..].iter().take(2).take_while(|c| ('0'..='7').contains(*c)).count(),
        _ => return 1,
    };
    1 + rest[1..].iter().take(max).take_while(|c| digit(c)).count()
}

fn pad(s: &str, spec: &str) -> String {
    let left = spec.contains('-');
    let zero = spec.starts_with('0');
    let width: usize = spec.trim_start_matches(['-', '0', '+', ' ', '#']).split('.').next().and_then(|w| w.parse().ok()).unwrap_or(0);
    let precision: Option<usize> = spec.split('.').nth(1).and_then(|p| p.parse().ok());
    let s: String = match precision {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    };
    let n = s.chars().count();
    if n >= width {
        return s;
    }
    let fill = if zero && !left { "0" } else { " " }.repeat(width - n);
    if left { format!("{s}{fill}") } else { format!("{fill}{s}") }
}

/// `printf %q`: quoted so bash reads it back as the same word.
fn shell_quote(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c) {
            out.push(c);
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out
}
