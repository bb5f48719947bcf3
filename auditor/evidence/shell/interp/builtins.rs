//! Bash's builtins, as they change a path: declarations and exports,
//! `read`/`mapfile`/`printf -v`, `source`/`eval`, `set`/`shopt`, `cd`,
//! traps, aliases, and the control builtins (`return`, `exit`, `break`).

use super::args::{Arg, Pending, PendingValue};
use super::state::{Flow, Lookup, Status, Value, World};
use super::value::{Place, Str, Why};
use super::{CallKind, How, Interp};
use std::collections::BTreeMap;

/// The names bash runs as builtins.
pub(super) fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        ":" | "true"
            | "false"
            | "echo"
            | "printf"
            | "export"
            | "declare"
            | "typeset"
            | "local"
            | "readonly"
            | "unset"
            | "set"
            | "shopt"
            | "shift"
            | "source"
            | "."
            | "eval"
            | "exec"
            | "exit"
            | "return"
            | "break"
            | "continue"
            | "cd"
            | "pushd"
            | "popd"
            | "dirs"
            | "pwd"
            | "read"
            | "readarray"
            | "mapfile"
            | "alias"
            | "unalias"
            | "test"
            | "["
            | "let"
            | "command"
            | "builtin"
            | "type"
            | "hash"
            | "wait"
            | "trap"
            | "getopts"
            | "enable"
            | "ulimit"
            | "umask"
            | "kill"
            | "jobs"
            | "disown"
            | "times"
            | "caller"
            | "help"
            | "history"
            | "bind"
            | "complete"
            | "compgen"
            | "compopt"
            | "suspend"
            | "logout"
            | "fc"
            | "fg"
            | "bg"
    )
}

impl Interp<'_> {
    pub(super) fn builtin(&mut self, w: World, name: &str, args: Vec<Arg>) -> Vec<World> {
        let mut w = w;
        let at = self.at;
        let words: Vec<Str> = args[1..].iter().map(Arg::text).collect();
        let texts: Vec<Option<String>> = words.iter().map(Str::known).collect();
        w.status = Status::ok();
        match name {
            ":" | "true" => {}
            "false" => w.status = Status::Known(1),
            "echo" => {
                let mut i = 0;
                let (mut newline, mut escapes) = (true, false);
                while let Some(Some(flag)) = texts.get(i) {
                    if flag.len() < 2 || !flag.starts_with('-') || !flag[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
                        break;
                    }
                    for c in flag[1..].chars() {
                        match c {
                            'n' => newline = false,
                            'e' => escapes = true,
                            _ => escapes = false,
                        }
                    }
                    i += 1;
                }
                let mut out = Str::new();
                for (j, word) in words[i..].iter().enumerate() {
                    if j > 0 {
                        out.push_str(" ", at);
                    }
                    if escapes { out.append(&word.map_known(super::expand::ansi_c)) } else { out.append(word) }
                }
                if newline {
                    out.push_str("\n", at);
                }
                w.print(&out);
            }
            "printf" => self.printf(&mut w, &words, &texts),
            "export" | "declare" | "typeset" | "local" | "readonly" => self.declare(&mut w, name, &args[1..]),
            "unset" => {
                let functions = texts.first().and_then(|t| t.as_deref()) == Some("-f");
                for (word, text) in words.iter().zip(&texts) {
                    match text.as_deref() {
                        Some(flag) if flag.starts_with('-') => {}
                        Some(n) if functions => {
                            w.funcs.remove(n);
                        }
                        Some(n) => {
                            let n = n.split('[').next().unwrap_or(n).to_string();
                            let resolved = w.resolve_name(&n);
                            if w.unset(&n) {
                                let name_at = word.first_place().unwrap_or(at);
                                let ctx = self.ctx(&w);
                                self.out.assigns.push(super::Assign { name: resolved, value: None, exported: false, how: How::Unset, name_at, ctx });
                            } else {
                                w.status = Status::Known(1);
                            }
                        }
                        None => self.note("unset of a name the run decides".into()),
                    }
                }
            }
            "set" => self.set(&mut w, &words, &texts),
            "shopt" => {
                let on = match texts.first().and_then(|t| t.as_deref()) {
                    Some("-s") => Some(true),
                    Some("-u") => Some(false),
                    _ => None,
                };
                if let Some(on) = on {
                    for t in texts.iter().skip(1).flatten() {
                        match t.as_str() {
                            "expand_aliases" => w.opts.expand_aliases = on,
                            "lastpipe" => w.opts.lastpipe = on,
                            _ => {}
                        }
                    }
                }
            }
            "shift" => {
                let n = match texts.first() {
                    Some(Some(t)) => t.parse::<usize>().unwrap_or(1),
                    Some(None) => {
                        self.note("shift by a count the run decides".into());
                        1
                    }
                    None => 1,
                };
                let positional = w.positional_mut();
                if n > positional.len() {
                    w.status = Status::Known(1);
                } else {
                    positional.drain(..n);
                }
            }
            "source" | "." => return self.source(w, &words),
            "eval" => {
                let mut text = Str::new();
                for (i, word) in words.iter().enumerate() {
                    if i > 0 {
                        text.push_str(" ", at);
                    }
                    text.append(word);
                }
                return self.run_value(w, &text, CallKind::Eval);
            }
            "exec" => {
                if words.is_empty() {
                    return vec![w];
                }
                let worlds = self.external(w, words, Vec::new());
                return worlds
                    .into_iter()
                    .map(|mut w| {
                        w.flow = Flow::Exit;
                        w
                    })
                    .collect();
            }
            "exit" | "return" => {
                if let Some(code) = texts.first() {
                    w.status = match code.as_deref().and_then(|c| c.parse::<i64>().ok()) {
                        Some(n) => Status::Known((n & 0xff) as i32),
                        None => Status::Unknown("an exit code the run decides".into()),
                    };
                }
                // `return` leaves a function or a sourced file; elsewhere it is an error and the script goes on.
                w.flow = if name == "exit" { Flow::Exit } else { Flow::Return };
                if name == "return" && self.functions.is_empty() && !self.in_source() {
                    w.flow = Flow::Normal;
                    w.status = Status::Known(1);
                }
            }
            "break" | "continue" => {
                let n = texts.first().and_then(|t| t.as_deref()).and_then(|t| t.parse::<u32>().ok()).unwrap_or(1).max(1);
                w.flow = if name == "break" { Flow::Break(n) } else { Flow::Continue(n) };
            }
            "cd" | "pushd" => {
                let target = match words.iter().zip(&texts).find(|(_, t)| !t.as_deref().is_some_and(|t| t.starts_with('-') && t.len() > 1)) {
                    Some((_, Some(t))) if t == "-" => match w.scalar("OLDPWD", at, "$OLDPWD") {
                        Ok(Some(old)) => old,
                        _ => self.undetermined(Why::Input("OLDPWD".into()), "$OLDPWD"),
                    },
                    Some((word, _)) => word.clone(),
                    None => match w.scalar("HOME", at, "$HOME") {
                        Ok(Some(home)) => home,
                        Ok(None) | Err(_) => self.undetermined(Why::Input("HOME".into()), "$HOME"),
                    },
                };
                let old = w.cwd.clone();
                w.cwd = match target.known() {
                    Some(t) => match super::programs::absolute(&w.cwd, &t) {
                        Some(abs) => Str::derived(abs, &target, at),
                        None => self.undetermined(Why::Unsupported("a directory relative to one the run decides".into()), &t),
                    },
                    None => target,
                };
                w.assign("OLDPWD", Value::Scalar(old), at);
            }
            "popd" => w.cwd = self.undetermined(Why::Unsupported("popd".into()), "popd"),
            "pwd" => {
                let mut out = w.cwd.clone();
                out.push_str("\n", at);
                w.print(&out);
            }
            "read" => self.read(&mut w, &words, &texts),
            "readarray" | "mapfile" => self.mapfile(&mut w, &words, &texts),
            "alias" => {
                for word in &words {
                    let parts = word.split_char('=');
                    if parts.len() >= 2
                        && let Some(name) = parts[0].known()
                    {
                        let mut value = Str::new();
                        for (i, p) in parts[1..].iter().enumerate() {
                            if i > 0 {
                                value.push_str("=", at);
                            }
                            value.append(p);
                        }
                        w.aliases.insert(name, value);
                    }
                }
            }
            "unalias" => {
                for t in texts.iter().flatten() {
                    w.aliases.remove(t);
                }
            }
            "test" => w.status = self.test_command(&mut w, &words),
            "[" => {
                if texts.last().and_then(|t| t.as_deref()) == Some("]") {
                    w.status = self.test_command(&mut w, &words[..words.len() - 1]);
                } else {
                    w.status = Status::Known(2);
                }
            }
            "let" => {
                for t in &texts {
                    w.status = match t {
                        Some(t) => match self.arith_text(&mut w, t) {
                            Ok(n) => Status::from_bool(n != 0),
                            Err(why) => Status::Unknown(why),
                        },
                        None => Status::Unknown("let on a value the run decides".into()),
                    };
                }
            }
            "command" => {
                let mut rest: Vec<Arg> = args[1..].to_vec();
                let mut query = false;
                while let Some(Arg::Word(first)) = rest.first() {
                    match first.known().as_deref() {
                        Some("-p") => {
                            rest.remove(0);
                        }
                        Some("-v") | Some("-V") => {
                            query = true;
                            rest.remove(0);
                        }
                        _ => break,
                    }
                }
                if query {
                    self.which(&mut w, &rest.iter().map(Arg::text).collect::<Vec<_>>(), true);
                    return vec![w];
                }
                if rest.is_empty() {
                    return vec![w];
                }
                let name = rest[0].text().known().unwrap_or_default();
                if is_builtin(&name) {
                    return self.builtin(w, &name, rest);
                }
                return self.external(w, rest.iter().map(Arg::text).collect(), Vec::new());
            }
            "builtin" => {
                if args.len() < 2 {
                    return vec![w];
                }
                let name = args[1].text().known().unwrap_or_default();
                if is_builtin(&name) {
                    return self.builtin(w, &name, args[1..].to_vec());
                }
                w.status = Status::Known(1);
            }
            "type" | "hash" => self.which(&mut w, &words, name == "type"),
            "wait" => w.status = Status::Unknown("what a background job returns".into()),
            "trap" => {
                if let (Some(handler), Some(rest)) = (words.first(), texts.get(1..)) {
                    for signal in rest.iter().flatten() {
                        let signal = signal.trim_start_matches("SIG").to_string();
                        if handler.known().as_deref() == Some("-") {
                            w.traps.remove(&signal);
                        } else if signal == "EXIT" || signal == "0" {
                            w.traps.insert("EXIT".into(), handler.clone());
                        }
                    }
                }
            }
            "getopts" => {
                if let Some(Some(var)) = texts.get(1) {
                    let value = self.undetermined(Why::Input("an option of the script's arguments".into()), "getopts");
                    self.assign_computed(&mut w, var, value, at);
                }
                w.status = Status::Unknown("getopts".into());
            }
            "kill" | "jobs" | "disown" => w.status = Status::Unknown(format!("{name} of a job")),
            _ => {}
        }
        vec![w]
    }

    /// Whether a `source` is being run.
    fn in_source(&self) -> bool {
        self.chain.iter().any(|c| matches!(c.kind, CallKind::Source(_)))
    }

    /// `command -v`, `type`, `hash`: functions and builtins are known;
    /// whether a program is installed is the run's.
    fn which(&mut self, w: &mut World, names: &[Str], print: bool) {
        let at = self.at;
        for name in names {
            match name.known() {
                Some(n) if n.starts_with('-') => {}
                Some(n) if w.funcs.contains_key(&n) || is_builtin(&n) => {
                    if print {
                        w.print(&Str::lit(format!("{n}\n"), at));
                    }
                }
                _ => {
                    if print {
                        // A program found on PATH prints as DIR/NAME: the directory
                        // is the run's, the name the script's (so `"$(command -v
                        // python3)" -m sglang.launch_server` is a python3 launch).
                        let mut out = match name.known().filter(|n| !n.contains('/') && !n.is_empty()) {
                            Some(n) => {
                                let mut dir =
                                    self.undetermined(Why::Output(format!("the directory {n} is installed in")), &format!("$(dirname $(command -v {n}))"));
                                dir.push_str(&format!("/{n}"), at);
                                dir
                            }
                            None => {
                                self.undetermined(Why::Output(format!("where {} is installed", name.display())), &format!("$(command -v {})", name.display()))
                            }
                        };
                        out.push_str("\n", at);
                        w.print(&out);
                    }
                    w.status = Status::Unknown(format!("whether {} is installed", name.display()));
                }
            }
        }
    }

    /// `export`, `declare`, `typeset`, `local`, `readonly`.
    fn declare(&mut self, w: &mut World, builtin: &str, args: &[Arg]) {
        let at = self.at;
        let mut flags: BTreeMap<char, bool> = BTreeMap::new();
        match builtin {
            "export" => {
                flags.insert('x', true);
            }
            "readonly" => {
                flags.insert('r', true);
            }
            _ => {}
        }
        let mut print = false;
        let mut functions = false;
        let mut names: Vec<&Arg> = Vec::new();
        for arg in args {
            if let Arg::Word(s) = arg
                && let Some(t) = s.known()
                && (t.starts_with('-') || t.starts_with('+'))
                && t.len() > 1
                && names.is_empty()
            {
                let on = t.starts_with('-');
                for c in t[1..].chars() {
                    match c {
                        'p' => print = true,
                        'f' | 'F' => functions = true,
                        'n' if builtin == "export" => {
                            flags.insert('x', false);
                        }
                        c => {
                            flags.insert(c, on);
                        }
                    }
                }
                continue;
            }
            names.push(arg);
        }
        if functions || (print && names.is_empty()) {
            return;
        }
        let local = builtin == "local" || (matches!(builtin, "declare" | "typeset") && self.functions_active(w) && flags.get(&'g') != Some(&true));
        let how = if flags.get(&'x') == Some(&true) { How::Export } else { How::Declare };
        for arg in names {
            let pending: Option<Pending> = match arg {
                Arg::Assign(p) => Some(p.clone()),
                Arg::Word(s) => {
                    let parts = s.split_char('=');
                    if parts.len() >= 2 {
                        let name_str = &parts[0];
                        let Some(name) = name_str.known() else {
                            self.note(format!("{builtin} of a name the run decides: {}", s.display()));
                            continue;
                        };
                        let mut value = Str::new();
                        for (i, p) in parts[1..].iter().enumerate() {
                            if i > 0 {
                                value.push_str("=", at);
                            }
                            value.append(p);
                        }
                        let (name, append) = match name.strip_suffix('+') {
                            Some(n) => (n.to_string(), true),
                            None => (name, false),
                        };
                        let (name, index) = match name.split_once('[') {
                            Some((n, rest)) => (n.to_string(), Some(rest.trim_end_matches(']').to_string())),
                            None => (name, None),
                        };
                        // `declare -a A='(x y)'`: bash reads a parenthesised value as the array.
                        let array_text =
                            value.known().filter(|t| t.starts_with('(') && t.ends_with(')') && (flags.contains_key(&'a') || flags.contains_key(&'A')));
                        let value = match array_text {
                            Some(t) => PendingValue::Array(
                                t[1..t.len() - 1].split_whitespace().map(|e| (None, Str::lit(e, value.first_place().unwrap_or(at)))).collect(),
                            ),
                            None => PendingValue::Scalar(value),
                        };
                        Some(Pending { name, index, value, append, name_at: name_str.first_place().unwrap_or(at) })
                    } else {
                        match s.known() {
                            Some(name) => {
                                self.declare_name(w, &name, local, &flags, how, s.first_place().unwrap_or(at));
                                None
                            }
                            None => {
                                self.note(format!("{builtin} of a name the run decides: {}", s.display()));
                                None
                            }
                        }
                    }
                }
            };
            let Some(pending) = pending else { continue };
            if !super::state::is_input_name(&pending.name) {
                w.status = Status::Known(1);
                continue;
            }
            if local {
                w.make_local(&pending.name, at);
            }
            self.apply_flags(w, &pending.name, local, &flags, matches!(pending.value, PendingValue::Array(_)));
            let name = pending.name.clone();
            let name_at = pending.name_at;
            self.make_assignment(w, pending, how);
            if flags.get(&'r') == Some(&true) {
                w.set_attrs(&name, local, at, |a| a.readonly = true);
            }
            let _ = name_at;
        }
    }

    fn functions_active(&self, _w: &World) -> bool {
        !self.functions.is_empty()
    }

    /// `declare -x NAME` (no value): attributes only; an export is recorded
    /// with the value it carries.
    fn declare_name(&mut self, w: &mut World, name: &str, local: bool, flags: &BTreeMap<char, bool>, how: How, name_at: Place) {
        let at = self.at;
        if !super::state::is_input_name(name) {
            w.status = Status::Known(1);
            return;
        }
        if local {
            w.make_local(name, at);
        }
        let input = matches!(w.lookup(name), Lookup::Input);
        self.apply_flags(w, name, local, flags, false);
        if let Some(&on) = flags.get(&'x') {
            let value = match w.lookup(name) {
                Lookup::Set(var) => var.value.as_ref().and_then(Value::scalar).cloned(),
                _ => None,
            };
            let value = match (value, input) {
                (Some(v), _) => Some(v),
                (None, true) => Some(self.undetermined(Why::Input(name.to_string()), &format!("${name}"))),
                (None, false) => None,
            };
            if input && value.is_some() && !matches!(w.lookup(name), Lookup::Set(v) if v.value.is_some()) {
                // `export NAME` of an inherited variable: it stays as the run gave it.
                return;
            }
            let ctx = self.ctx(w);
            self.out.assigns.push(super::Assign { name: w.resolve_name(name), value, exported: on, how: if on { how } else { How::Unset }, name_at, ctx });
        }
    }

    fn apply_flags(&mut self, w: &mut World, name: &str, local: bool, flags: &BTreeMap<char, bool>, array: bool) {
        let at = self.at;
        w.set_attrs(name, local, at, |a| {
            for (&c, &on) in flags {
                match c {
                    'x' => a.exported = on,
                    'i' => a.integer = on,
                    'n' => a.nameref = on,
                    'l' => {
                        a.lower = on;
                        a.upper &= !on;
                    }
                    'u' => {
                        a.upper = on;
                        a.lower &= !on;
                    }
                    _ => {}
                }
            }
        });
        let kind = if flags.get(&'A') == Some(&true) {
            Some(Value::Assoc(BTreeMap::new()))
        } else if flags.get(&'a') == Some(&true) || array {
            Some(Value::Indexed(BTreeMap::new()))
        } else {
            None
        };
        if let Some(empty) = kind {
            let current = match w.lookup(name) {
                Lookup::Set(v) => v.value.clone(),
                _ => None,
            };
            let keep = matches!((&current, &empty), (Some(Value::Assoc(_)), Value::Assoc(_)) | (Some(Value::Indexed(_)), Value::Indexed(_)));
            if !(keep || array && matches!(current, Some(Value::Assoc(_)))) {
                w.assign(name, empty, at);
            }
        }
    }

    /// `set`: options and positional parameters.
    fn set(&mut self, w: &mut World, words: &[Str], texts: &[Option<String>]) {
        let mut i = 0;
        while i < texts.len() {
            let Some(t) = texts[i].as_deref() else { break };
            if t == "--" {
                i += 1;
                *w.positional_mut() = words[i..].to_vec();
                return;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                let on = t.starts_with('-');
                i += 1;
                for c in t[1..].chars() {
                    match c {
                        'a' => w.opts.allexport = on,
                        'e' => w.opts.errexit = on,
                        // `-o NAME`, also inside a cluster (`set -euo pipefail`): the next word names it.
                        'o' => {
                            match texts.get(i).and_then(|o| o.as_deref()) {
                                Some("allexport") => w.opts.allexport = on,
                                Some("pipefail") => w.opts.pipefail = on,
                                Some("errexit") => w.opts.errexit = on,
                                _ => {}
                            }
                            i += 1;
                        }
                        _ => {}
                    }
                }
                continue;
            }
            // `set a b`: positional parameters.
            *w.positional_mut() = words[i..].to_vec();
            return;
        }
    }

    /// `source FILE ARGS`: the file run in this shell.
    fn source(&mut self, w: World, words: &[Str]) -> Vec<World> {
        let Some(path) = words.first() else {
            let mut w = w;
            w.status = Status::Known(2);
            return vec![w];
        };
        let ctx = self.ctx(&w);
        let content = self.read_file(&w, path);
        let found = content.is_known() || !content.unknowns().any(|u| matches!(u.why, Why::File(_)));
        self.out.reached.push((path.clone(), found, ctx));
        if !content.is_known() {
            self.note(format!("sourced file not in the input: {}", path.display()));
            // What the script itself appended to it is still run.
            if !content.pieces().iter().any(|p| matches!(p, super::value::Piece::Lit { .. })) {
                let mut w = w;
                w.status = Status::Unknown(format!("source {}", path.display()));
                return vec![w];
            }
        }
        let mut w = w;
        let saved_args = if words.len() > 1 { Some(std::mem::replace(w.positional_mut(), words[1..].to_vec())) } else { None };
        let name = path.display();
        self.sources.push(name.clone());
        let worlds = self.run_value(w, &content, CallKind::Source(name));
        self.sources.pop();
        worlds
            .into_iter()
            .map(|mut w| {
                if w.flow == Flow::Return {
                    w.flow = Flow::Normal;
                }
                if let Some(saved) = &saved_args {
                    *w.positional_mut() = saved.clone();
                }
                w
            })
            .collect()
    }

    /// Run a value as code (`eval`, `source`, `bash -c`), each line of it
    /// placed where its text was written.
    pub(super) fn run_value(&mut self, w: World, text: &Str, kind: CallKind) -> Vec<World> {
        let map = code_line_places(text, self.at, true);
        let src = super::state::Src { file: map[0].file, first_line: map[0].line, map: Some(std::rc::Rc::new(map)) };
        if let Some(code) = text.known() {
            return self.run_text_with(w, &code, src, kind);
        }
        // Parts only the run knows stand in the code as variables holding
        // them: each is one word whose value is undetermined, as when it
        // was expanded (what bash would make of characters in it is not known).
        let mut w = w;
        let mut code = String::new();
        let mut names = Vec::new();
        for piece in text.pieces() {
            match piece {
                super::value::Piece::Lit { text, .. } => code.push_str(text),
                super::value::Piece::Unknown(u) => {
                    let name = format!("__auditor_undetermined_{}", names.len());
                    code.push_str(&format!("${{{name}}}"));
                    // A file's content the run alone knows (`>>` onto a file
                    // the input lacks) is taken as whole lines: what the
                    // script appended after it is still read as statements.
                    if matches!(u.why, Why::File(_)) {
                        code.push('\n');
                    }
                    w.assign(&name, Value::Scalar(Str::unknown(u.why.clone(), u.at, u.text.clone())), u.at);
                    names.push(name);
                }
            }
        }
        let worlds = self.run_text_with(w, &code, src, kind);
        worlds
            .into_iter()
            .map(|mut w| {
                for name in &names {
                    w.globals.remove(name);
                }
                w
            })
            .collect()
    }

    /// `read`: one line of input into names.
    fn read(&mut self, w: &mut World, _words: &[Str], texts: &[Option<String>]) {
        let at = self.at;
        let mut raw = false;
        let mut array: Option<String> = None;
        let mut delim = '\n';
        let mut names: Vec<String> = Vec::new();
        let mut i = 0;
        while i < texts.len() {
            match texts[i].as_deref() {
                Some("-r") => raw = true,
                Some("-a") => {
                    array = texts.get(i + 1).cloned().flatten();
                    i += 1;
                }
                Some("-d") => {
                    delim = texts.get(i + 1).cloned().flatten().and_then(|d| d.chars().next()).unwrap_or('\0');
                    i += 1;
                }
                Some("-p" | "-t" | "-n" | "-N" | "-u" | "-i") => i += 1,
                Some(f) if f.starts_with('-') && f.len() > 1 => {
                    if f.contains('r') {
                        raw = true;
                    }
                }
                Some(n) => names.push(n.to_string()),
                None => self.note("read into a name the run decides".into()),
            }
            i += 1;
        }
        if names.is_empty() && array.is_none() {
            names.push("REPLY".into());
        }
        let input = w.stdin.take();
        let (line, rest, status) = match input {
            None => (Some(self.undetermined(Why::Output("the script's input".into()), "read")), None, Status::Unknown("input the run gives".into())),
            Some(s) => take_line(&s, delim, self.at),
        };
        w.stdin = rest;
        w.status = status;
        let Some(line) = line else {
            for n in &names {
                self.assign_computed(w, n, Str::new(), at);
            }
            return;
        };
        let line = if raw { line } else { line.map_known(|t| t.replace("\\\n", "").replace('\\', "")) };
        let ifs = match w.lookup("IFS") {
            Lookup::Set(v) => v.value.as_ref().and_then(Value::scalar).and_then(Str::known).unwrap_or_else(|| " \t\n".into()),
            _ => " \t\n".into(),
        };
        if let Some(array) = array {
            let fields = split_ifs(&line, &ifs, usize::MAX);
            let map: BTreeMap<i64, Str> = fields.into_iter().enumerate().map(|(i, f)| (i as i64, f)).collect();
            self.store(w, &array, Value::Indexed(map), How::Computed, at);
            return;
        }
        let fields = split_ifs(&line, &ifs, names.len());
        for (j, name) in names.iter().enumerate() {
            let value = fields.get(j).cloned().unwrap_or_default();
            self.assign_computed(w, name, value, at);
        }
    }

    /// `readarray`/`mapfile`: every line of input into an array.
    fn mapfile(&mut self, w: &mut World, _words: &[Str], texts: &[Option<String>]) {
        let at = self.at;
        let mut trim = false;
        let mut delim = '\n';
        let mut name = "MAPFILE".to_string();
        let mut i = 0;
        while i < texts.len() {
            match texts[i].as_deref() {
                Some("-t") => trim = true,
                Some("-d") => {
                    delim = texts.get(i + 1).cloned().flatten().and_then(|d| d.chars().next()).unwrap_or('\0');
                    i += 1;
                }
                Some("-n" | "-O" | "-s" | "-u" | "-C" | "-c") => i += 1,
                Some(f) if f.starts_with('-') && f.len() > 1 => trim |= f.contains('t'),
                Some(n) => name = n.to_string(),
                None => {}
            }
            i += 1;
        }
        let input = w.stdin.take();
        let mut map = BTreeMap::new();
        match input {
            None => {
                map.insert(0, self.undetermined(Why::Output("the script's input".into()), "readarray"));
            }
            Some(mut s) => {
                let mut k = 0;
                loop {
                    let (line, rest, _) = take_line(&s, delim, at);
                    let Some(mut line) = line else { break };
                    if !line.is_known() {
                        // The input is the run's from here: one element stands for the rest.
                        map.insert(k, line);
                        break;
                    }
                    if !trim && rest.is_some() {
                        line.push_str(&delim.to_string(), at);
                    }
                    map.insert(k, line);
                    k += 1;
                    if k as usize > self.limits.fields {
                        self.trip("fields", format!("readarray of more than {} lines: the rest not examined", self.limits.fields));
                        break;
                    }
                    match rest {
                        Some(r) => s = r,
                        None => break,
                    }
                }
            }
        }
        self.store(w, &name, Value::Indexed(map), How::Computed, at);
        w.status = Status::ok();
    }

    /// `printf [-v NAME] FORMAT ARGS`.
    fn printf(&mut self, w: &mut World, words: &[Str], texts: &[Option<String>]) {
        let at = self.at;
        let (target, rest) = match texts.first().and_then(|t| t.as_deref()) {
            Some("-v") => (texts.get(1).cloned().flatten(), &words[2.min(words.len())..]),
            _ => (None, words),
        };
        let rest = if rest.first().and_then(Str::known).as_deref() == Some("--") { &rest[1..] } else { rest };
        let Some(format) = rest.first() else {
            w.status = Status::Known(2);
            return;
        };
        let out = match super::programs::printf_format(format, &rest[1..], at) {
            Some(out) => out,
            None => self.undetermined(Why::Unsupported("printf of a format or value the run decides".into()), "printf"),
        };
        match target {
            Some(name) => self.assign_computed(w, &name, out, at),
            None => w.print(&out),
        }
    }
}

/// The first line of `s` up to `delim`: (line, the rest, status). `None`
/// line at end of input.
fn take_line(s: &Str, delim: char, at: Place) -> (Option<Str>, Option<Str>, Status) {
    if s.is_empty() {
        return (None, Some(Str::new()), Status::Known(1));
    }
    let mut line = Str::new();
    let mut rest = Str::new();
    let mut found = false;
    for piece in s.pieces() {
        if found {
            rest.push(piece.clone());
            continue;
        }
        match piece {
            super::value::Piece::Lit { text, at } => match text.find(delim) {
                Some(i) => {
                    line.push_str(&text[..i], *at);
                    rest.push_str(&text[i + delim.len_utf8()..], *at);
                    found = true;
                }
                None => line.push_str(text, *at),
            },
            u => {
                // The input is undetermined from here: the line may end anywhere in it.
                line.push(u.clone());
                return (Some(line), Some(Str::unknown(Why::Output("the rest of the input".into()), at, "…")), Status::Unknown("input the run gives".into()));
            }
        }
    }
    if found {
        (Some(line), Some(rest), Status::ok())
    } else {
        // A last line without its delimiter: read, and `read` says end of input.
        (Some(line), None, Status::Known(1))
    }
}

/// Split `line` at `IFS` into at most `n` fields, the last taking the rest.
fn split_ifs(line: &Str, ifs: &str, n: usize) -> Vec<Str> {
    let ws: String = ifs.chars().filter(|c| matches!(c, ' ' | '\t' | '\n')).collect();
    let mut fields: Vec<Str> = Vec::new();
    let mut cur = Str::new();
    let mut started = false;
    for piece in line.pieces() {
        match piece {
            super::value::Piece::Lit { text, at } => {
                let mut word = String::new();
                for c in text.chars() {
                    let last = fields.len() + 1 >= n;
                    if ifs.contains(c) && !last {
                        if !word.is_empty() {
                            cur.push_str(&word, *at);
                            word.clear();
                            started = true;
                        }
                        if started || !ws.contains(c) {
                            fields.push(std::mem::take(&mut cur));
                            started = false;
                        }
                    } else if !(ws.contains(c) && !started && word.is_empty()) {
                        word.push(c);
                    }
                }
                if !word.is_empty() {
                    cur.push_str(&word, *at);
                    started = true;
                }
            }
            u => {
                cur.push(u.clone());
                started = true;
            }
        }
    }
    if started {
        // The last field loses trailing IFS whitespace.
        let trimmed = cur.map_known(|t| t.to_string());
        fields.push(trim_end_ws(trimmed, &ws));
    }
    fields
}

fn trim_end_ws(s: Str, ws: &str) -> Str {
    let mut pieces = s.pieces().to_vec();
    if let Some(super::value::Piece::Lit { text, .. }) = pieces.last_mut() {
        let t = text.trim_end_matches(|c| ws.contains(c)).len();
        text.truncate(t);
    }
    let mut out = Str::new();
    for p in pieces {
        out.push(p);
    }
    out
}

/// The place of each line of a value's text (its first piece on that line).
pub fn line_places(text: &Str, fallback: Place) -> Vec<Place> {
    code_line_places(text, fallback, false)
}

/// [`line_places`] of the code [`Interp::run_value`] makes of `text`: with
/// `files_as_lines`, a file's undetermined content ends its line.
fn code_line_places(text: &Str, fallback: Place, files_as_lines: bool) -> Vec<Place> {
    let mut out = Vec::new();
    let mut at_line_start = true;
    for piece in text.pieces() {
        match piece {
            super::value::Piece::Lit { text, at } => {
                for c in text.chars() {
                    if at_line_start {
                        out.push(*at);
                        at_line_start = false;
                    }
                    if c == '\n' {
                        at_line_start = true;
                    }
                }
            }
            super::value::Piece::Unknown(u) => {
                if at_line_start {
                    out.push(u.at);
                    at_line_start = false;
                }
                if files_as_lines && matches!(u.why, Why::File(_)) {
                    at_line_start = true;
                }
            }
        }
    }
    if out.is_empty() {
        out.push(fallback);
    }
    out
}
