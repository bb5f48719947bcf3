//! Simple commands: words expanded, assignments made, the command found
//! (function, builtin, program) and run, its redirections applied; and the
//! records of what a path assigned and wrote.

use super::args::{Arg, Pending, PendingValue};
use super::state::{FileState, Lookup, Status, Value, World};
use super::value::{Place, Str, Why};
use super::{Assign, How, Interp, Write};
use brush_parser::ast::{self, AssignmentName, AssignmentValue, CommandPrefixOrSuffixItem, IoRedirect};
use std::collections::BTreeMap;

/// Builtins whose `NAME=value` arguments are assignments.
fn is_declaration(name: &str) -> bool {
    matches!(name, "export" | "declare" | "typeset" | "local" | "readonly")
}

impl Interp<'_> {
    /// An assignment naming arrays a join kept each path's value of
    /// ([`super::state::Alternatives`]), made once per path and kept in
    /// one: what it assigns is joined, each path's value kept under the
    /// same join. `None` when it names none, or a path of it forks.
    fn assign_per_alternative(&mut self, w: &World, cmd: &ast::SimpleCommand, text: &str) -> Option<World> {
        let group = w.named_alternatives(text)?;
        let (join, paths, marks) = (group[0].1.join, group[0].1.options.len(), std::rc::Rc::clone(&group[0].1.marks));
        let mut results: Vec<World> = Vec::with_capacity(paths);
        for k in 0..paths {
            let path = w.with_values(&group, super::state::Alternatives::of_path(&group, k));
            self.steps -= 1;
            let mut out = self.run_simple(path, cmd);
            if out.len() != 1 {
                return None;
            }
            results.push(out.pop().expect("one path"));
        }
        let assigned: Vec<String> = cmd
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .filter_map(|item| match item {
                CommandPrefixOrSuffixItem::AssignmentWord(a, _) => Some(match &a.name {
                    AssignmentName::VariableName(n) | AssignmentName::ArrayElementName(n, _) => n.clone(),
                }),
                _ => None,
            })
            .collect();
        let mut out = results[0].clone();
        out.alternatives = w.alternatives.iter().filter(|(n, _)| !assigned.contains(n)).cloned().collect();
        for (name, alts) in &group {
            out.set_value(name, alts.joined.clone());
        }
        for name in assigned {
            let values: Vec<Option<Value>> = results.iter().map(|r| r.get_raw(&name).and_then(|v| v.value.clone())).collect();
            let refs: Vec<Option<&Value>> = values.iter().map(Option::as_ref).collect();
            let joined = super::exec::join_values(&refs, &name, self.at);
            out.set_value(&name, Some(joined.clone()));
            let alternatives = super::state::Alternatives { join, joined: Some(joined), options: values, marks: std::rc::Rc::clone(&marks) };
            out.alternatives.push((name, std::rc::Rc::new(alternatives)));
        }
        Some(out)
    }

    pub(super) fn run_simple(&mut self, w: World, cmd: &ast::SimpleCommand) -> Vec<World> {
        self.at = self.place_of(cmd);
        self.steps += 1;
        if self.steps > self.limits.steps {
            self.trip("steps", format!("more than {} commands evaluated: the rest of the script not examined", self.limits.steps));
            let mut w = w;
            w.flow = super::state::Flow::Exit;
            return vec![w];
        }
        // A command of the script itself that uses an array joined paths
        // disagree on runs once per path again; an assignment keeps the
        // path joined, the array it makes holding each path's value (a
        // library's helpers, with their retry loops, keep the joined value:
        // splitting there would multiply the paths at every pass).
        if !w.alternatives.is_empty() && self.at.file == 0 {
            let text = cmd.to_string();
            if cmd.word_or_name.is_none()
                && let Some(w) = self.assign_per_alternative(&w, cmd, &text)
            {
                return vec![w];
            }
            if let Some(worlds) = w.split_alternatives(&text) {
                self.steps -= 1;
                return worlds.into_iter().flat_map(|w| self.run_simple(w, cmd)).collect();
            }
        }
        let mut w = w;
        // Alias expansion of the command word. Bash expands aliases as it
        // reads a line, so one defined on this line applies from the next.
        let at = self.at;
        let read_after = |alias: &Str| alias.first_place().is_none_or(|p| p.file != at.file || p.line < at.line);
        if w.opts.expand_aliases
            && let Some(name) = &cmd.word_or_name
            && let Some(alias) = w.aliases.get(&name.value).filter(|a| read_after(a)).and_then(Str::known)
        {
            let rest = cmd.suffix.as_ref().map(|s| s.to_string()).unwrap_or_default();
            let prefix = cmd.prefix.as_ref().map(|p| p.to_string()).unwrap_or_default();
            let text = format!("{prefix} {alias} {rest}\n");
            let mut aliases = w.aliases.clone();
            // An alias is not expanded again inside its own expansion.
            w.aliases.remove(&name.value);
            let worlds = self.run_text_in(w, &text, super::CallKind::Eval);
            return worlds
                .into_iter()
                .map(|mut w| {
                    std::mem::swap(&mut w.aliases, &mut aliases);
                    w.aliases.extend(aliases.iter().map(|(k, v)| (k.clone(), v.clone())));
                    w
                })
                .collect();
        }
        let mut assigns: Vec<Pending> = Vec::new();
        let mut redirects: Vec<IoRedirect> = Vec::new();
        let mut args: Vec<Arg> = Vec::new();
        let mut subst_status = None;
        for item in cmd.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                    let pending = self.pending(&mut w, a);
                    subst_status = Some(w.status.clone());
                    assigns.push(pending);
                }
                CommandPrefixOrSuffixItem::IoRedirect(r) => redirects.push(r.clone()),
                CommandPrefixOrSuffixItem::Word(word) => args.extend(self.expand_fields(&mut w, word).into_iter().map(Arg::Word)),
                CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => args.push(Arg::Word(self.process_substitution(&mut w, kind, sub))),
            }
        }
        if let Some(name) = &cmd.word_or_name {
            args.extend(self.expand_fields(&mut w, name).into_iter().map(Arg::Word));
        }
        let declaration = args.first().and_then(|a| match a {
            Arg::Word(s) => s.known(),
            Arg::Assign(_) => None,
        });
        let declaration = declaration.as_deref().is_some_and(is_declaration) || self.declaration_via_wrapper(&args);
        for item in cmd.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                CommandPrefixOrSuffixItem::Word(word) => args.extend(self.expand_fields(&mut w, word).into_iter().map(Arg::Word)),
                CommandPrefixOrSuffixItem::AssignmentWord(a, word) => {
                    if declaration {
                        let pending = self.pending(&mut w, a);
                        args.push(Arg::Assign(pending));
                    } else {
                        args.extend(self.expand_fields(&mut w, word).into_iter().map(Arg::Word));
                    }
                }
                CommandPrefixOrSuffixItem::IoRedirect(r) => redirects.push(r.clone()),
                CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => args.push(Arg::Word(self.process_substitution(&mut w, kind, sub))),
            }
        }
        if args.is_empty() {
            // Assignments alone: they are the shell's.
            for pending in assigns {
                self.make_assignment(&mut w, pending, How::Plain);
            }
            w.status = subst_status.unwrap_or(Status::ok());
            return self.with_redirects(w, &redirects, |_, w| vec![w]);
        }
        self.with_redirects(w, &redirects, |me, w| me.dispatch(w, args, assigns))
    }

    /// `command export`, `builtin declare`: still a declaration.
    fn declaration_via_wrapper(&self, args: &[Arg]) -> bool {
        let words: Vec<Option<String>> = args.iter().map(|a| if let Arg::Word(s) = a { s.known() } else { None }).collect();
        matches!(words.as_slice(), [Some(first), Some(second), ..] if (first == "command" || first == "builtin") && is_declaration(second))
    }

    /// Find and run a command: a function, a builtin, or a program.
    pub(super) fn dispatch(&mut self, w: World, args: Vec<Arg>, assigns: Vec<Pending>) -> Vec<World> {
        let name = args[0].text();
        let Some(name_text) = name.known() else {
            // A command whose name the run decides: recorded as a program.
            return self.external(w, args.iter().map(Arg::text).collect(), assigns);
        };
        if let Some(func) = w.funcs.get(&name_text).cloned() {
            let call_args: Vec<Str> = args[1..].iter().map(Arg::text).collect();
            let (w, saved) = self.temporary(w, &assigns);
            let worlds = self.call_function(w, &func, call_args);
            return worlds.into_iter().map(|w| self.restore(w, &saved)).collect();
        }
        if super::builtins::is_builtin(&name_text) {
            let (w, saved) = self.temporary(w, &assigns);
            let worlds = self.builtin(w, &name_text, args);
            return worlds.into_iter().map(|w| self.restore(w, &saved)).collect();
        }
        self.external(w, args.iter().map(Arg::text).collect(), assigns)
    }

    /// Prefix assignments for the duration of a builtin or function: made
    /// (and exported, as bash exports them to that command), then undone.
    fn temporary(&mut self, mut w: World, assigns: &[Pending]) -> (World, Vec<(String, Option<super::state::Var>)>) {
        let mut saved = Vec::new();
        for pending in assigns {
            let name = w.resolve_name(&pending.name);
            saved.push((name.clone(), w.get_raw(&name).cloned()));
            self.make_assignment(&mut w, pending.clone(), How::Prefix);
            w.set_attrs(&name, false, self.at, |a| a.exported = true);
        }
        (w, saved)
    }

    fn restore(&mut self, mut w: World, saved: &[(String, Option<super::state::Var>)]) -> World {
        for (name, var) in saved.iter().rev() {
            match var {
                Some(var) => {
                    if let Some(i) = w.frames.iter().rposition(|f| f.locals.contains_key(name)) {
                        w.frames[i].locals.insert(name.clone(), Some(var.clone()));
                    } else {
                        w.globals.insert(name.clone(), var.clone());
                    }
                }
                None => {
                    w.globals.remove(name);
                }
            }
        }
        w
    }

    /// Expand an assignment word.
    pub(super) fn pending(&mut self, w: &mut World, a: &ast::Assignment) -> Pending {
        let name_at = self.src.place(a.loc.start.line);
        let (name, index) = match &a.name {
            AssignmentName::VariableName(n) => (n.clone(), None),
            AssignmentName::ArrayElementName(n, i) => (n.clone(), Some(i.clone())),
        };
        let value = match &a.value {
            AssignmentValue::Scalar(word) => {
                let at = word.loc.as_ref().map_or(name_at, |s| self.src.place(s.start.line));
                PendingValue::Scalar(self.expand_text_single(w, &word.value, at))
            }
            AssignmentValue::Array(items) => {
                let lines = self.element_lines(a, items.len(), name_at);
                let mut out = Vec::new();
                for (i, (key, word)) in items.iter().enumerate() {
                    let saved = self.at;
                    self.at = lines.get(i).copied().unwrap_or(name_at);
                    let word = ast::Word { value: word.value.clone(), loc: None };
                    let key = key.as_ref().map(|k| self.expand_text_single(w, &k.value, self.at));
                    for field in self.expand_fields(w, &word) {
                        out.push((key.clone(), field));
                    }
                    self.at = saved;
                }
                PendingValue::Array(out)
            }
        };
        Pending { name, index, value, append: a.append, name_at }
    }

    /// The line of each element of an array assignment written over several
    /// lines (the parser keeps the assignment's span, not its elements').
    fn element_lines(&self, a: &ast::Assignment, count: usize, start: Place) -> Vec<Place> {
        if a.loc.start.line == a.loc.end.line {
            return vec![start; count];
        }
        let Some(text) = self.current_text() else { return vec![start; count] };
        let slice = text.get(a.loc.start.index..a.loc.end.index.min(text.len())).unwrap_or("");
        let open = slice.find('(').map_or(0, |i| i + 1);
        let mut lines = Vec::new();
        let mut line = start.line + slice[..open].matches('\n').count() as u32;
        let body = &slice[open..];
        let Ok(tokens) = brush_parser::tokenize_str(body) else { return vec![start; count] };
        for token in tokens {
            if let brush_parser::Token::Word(w, loc) = token
                && w != ")"
                && !w.starts_with('#')
            {
                line = start.line + slice[..open].matches('\n').count() as u32 + loc.start.line.saturating_sub(1) as u32;
                lines.push(Place { file: start.file, line });
            }
        }
        let _ = line;
        if lines.len() == count { lines } else { vec![start; count] }
    }

    /// The text of the file being run, when it is a whole file.
    fn current_text(&self) -> Option<&str> {
        self.out.texts.get(&self.src.file).map(|t| t.text.as_str()).filter(|_| self.src.first_line == 1)
    }

    /// Make an assignment on path `w` and record it.
    pub(super) fn make_assignment(&mut self, w: &mut World, pending: Pending, how: How) {
        let at = self.at;
        match (&pending.index, pending.value) {
            (Some(index), PendingValue::Scalar(v)) => {
                self.assign_element(w, &pending.name, index, v, pending.append);
            }
            (None, PendingValue::Scalar(v)) => {
                let value = if pending.append {
                    match w.lookup(&pending.name) {
                        Lookup::Set(var) => match &var.value {
                            Some(Value::Indexed(map)) => {
                                let mut map = map.clone();
                                let old = map.get(&0).cloned().unwrap_or_default();
                                map.insert(0, old.concat(&v));
                                self.store(w, &pending.name, Value::Indexed(map), how, pending.name_at);
                                return;
                            }
                            other => other.as_ref().and_then(Value::scalar).cloned().unwrap_or_default().concat(&v),
                        },
                        Lookup::Unset => v,
                        Lookup::Input => Str::unknown(Why::Input(pending.name.clone()), at, format!("${}", pending.name)).concat(&v),
                    }
                } else {
                    v
                };
                let value = if self.is_integer(w, &pending.name) { self.integer_value(w, value) } else { value };
                self.store(w, &pending.name, Value::Scalar(value), how, pending.name_at);
            }
            (_, PendingValue::Array(items)) => {
                let assoc = matches!(w.lookup(&pending.name), Lookup::Set(v) if matches!(v.value, Some(Value::Assoc(_))));
                let value = if assoc {
                    let mut map = match (pending.append, w.lookup(&pending.name)) {
                        (true, Lookup::Set(v)) => match &v.value {
                            Some(Value::Assoc(m)) => m.clone(),
                            _ => BTreeMap::new(),
                        },
                        _ => BTreeMap::new(),
                    };
                    for (key, v) in items {
                        if let Some(k) = key.and_then(|k| k.known()) {
                            map.insert(k, v);
                        }
                    }
                    Value::Assoc(map)
                } else {
                    let mut map = match (pending.append, w.lookup(&pending.name)) {
                        (true, Lookup::Set(v)) => match &v.value {
                            Some(Value::Indexed(m)) => m.clone(),
                            Some(Value::Scalar(s)) => BTreeMap::from([(0, s.clone())]),
                            _ => BTreeMap::new(),
                        },
                        _ => BTreeMap::new(),
                    };
                    let mut next = map.keys().next_back().map_or(0, |k| k + 1);
                    for (key, v) in items {
                        let i = match key.and_then(|k| k.known()).and_then(|k| k.trim().parse::<i64>().ok()) {
                            Some(i) => i,
                            None => next,
                        };
                        map.insert(i, v);
                        next = i + 1;
                    }
                    Value::Indexed(map)
                };
                self.store(w, &pending.name, value, how, pending.name_at);
            }
        }
    }

    fn is_integer(&self, w: &World, name: &str) -> bool {
        matches!(w.lookup(name), Lookup::Set(v) if v.attrs.integer)
    }

    /// A value assigned to a `declare -i` variable: evaluated as arithmetic.
    fn integer_value(&mut self, w: &mut World, value: Str) -> Str {
        let at = self.at;
        match value.known() {
            Some(text) => match self.arith_text(w, &text) {
                Ok(n) => Str::derived(n.to_string(), &value, at),
                Err(_) => self.undetermined(Why::Unsupported("arithmetic the run decides".into()), &text),
            },
            None => value,
        }
    }

    /// Store a value and record the assignment.
    pub(super) fn store(&mut self, w: &mut World, name: &str, value: Value, how: How, name_at: Place) {
        let at = self.at;
        let recorded = value.scalar().cloned();
        match w.assign(name, value, at) {
            Some((resolved, exported)) => {
                let how = if exported && how == How::Plain { How::Export } else { how };
                let ctx = self.ctx(w);
                self.out.assigns.push(Assign { name: resolved, value: recorded, exported, how, name_at, ctx });
            }
            None => {
                w.status = Status::Known(1);
            }
        }
    }

    /// An assignment the shell computes (`read`, `for`, arithmetic, `${X:=v}`).
    pub(super) fn assign_computed(&mut self, w: &mut World, name: &str, value: Str, at: Place) {
        let name_at = value.first_place().unwrap_or(at);
        let value = if self.is_integer(w, name) { self.integer_value(w, value) } else { value };
        self.store(w, name, Value::Scalar(value), How::Computed, name_at);
    }

    /// `NAME[index]=value`.
    pub(super) fn assign_element(&mut self, w: &mut World, name: &str, index: &str, value: Str, append: bool) {
        let at = self.at;
        let mut current = match w.lookup(name) {
            Lookup::Set(var) => var.value.clone(),
            _ => None,
        };
        let new = match current.take() {
            Some(Value::Assoc(mut map)) => {
                let key = self.expand_text_single(w, index, at);
                let Some(key) = key.known() else { return };
                let v = if append { map.get(&key).cloned().unwrap_or_default().concat(&value) } else { value };
                map.insert(key, v);
                Value::Assoc(map)
            }
            other => {
                let mut map = match other {
                    Some(Value::Indexed(m)) => m,
                    Some(Value::Scalar(s)) => BTreeMap::from([(0, s)]),
                    _ => BTreeMap::new(),
                };
                let Ok(i) = self.arith_text(w, index) else { return };
                let v = if append { map.get(&i).cloned().unwrap_or_default().concat(&value) } else { value };
                map.insert(i, v);
                Value::Indexed(map)
            }
        };
        self.store(w, name, new, How::Computed, at);
    }

    /// `<(list)` or `>(list)`: a `/dev/fd/N` holding what `<(list)` prints.
    fn process_substitution(&mut self, w: &mut World, kind: &ast::ProcessSubstitutionKind, sub: &ast::SubshellCommand) -> Str {
        let at = self.place_of(sub);
        let path = format!("/dev/fd/{}", self.next_fd);
        self.next_fd += 1;
        if matches!(kind, ast::ProcessSubstitutionKind::Read) {
            let out = self.substitute_list(w, &sub.list, at);
            w.files.insert(path.clone(), FileState::Written(out));
        } else {
            let mut child = w.clone();
            child.stdin = Some(self.undetermined(Why::Output("what the command writes into it".into()), "&gt;(...)"));
            self.chain.push(super::Call { kind: super::CallKind::Subshell, at, defined: None });
            let _ = self.run_list(vec![child], &sub.list);
            self.chain.pop();
        }
        Str::lit(path, at)
    }

    /// A file's content as this path would read it: what the path wrote,
    /// else the audited tree's file, else undetermined.
    pub(super) fn read_file(&mut self, w: &World, path: &Str) -> Str {
        let Some(text) = path.known() else { return self.read_by_tail(path) };
        let Some(abs) = super::programs::absolute(&w.cwd, &text) else { return self.read_by_tail(path) };
        match w.files.get(&abs) {
            Some(FileState::Written(content)) => return content.clone(),
            Some(FileState::Removed) => return Str::new(),
            None => {}
        }
        if abs == "/dev/null" {
            return Str::new();
        }
        match self.files.read(&abs) {
            Some(content) => self.placed_file(&abs, content),
            None => self.undetermined(Why::File(abs.clone()), &abs),
        }
    }

    /// A file's text, each line placed at its line of that file.
    fn placed_file(&mut self, path: &str, content: String) -> Str {
        let file = self.file_id(path);
        let mut s = Str::new();
        for (i, line) in content.split_inclusive('\n').enumerate() {
            s.push_str(line, Place { file, line: i as u32 + 1 });
        }
        self.out.texts.entry(file).or_insert_with(|| super::Text::new(content));
        s
    }

    /// A file named by a path the run decides in part
    /// (`$WORKSPACE/benchmarks/benchmark_lib.sh`): the one file of the input
    /// whose path ends with the known tail, said as an assumption; else undetermined.
    fn read_by_tail(&mut self, path: &Str) -> Str {
        let shown = path.display();
        let tail: String = match path.pieces().last() {
            Some(super::value::Piece::Lit { .. }) => {
                let mut tail = String::new();
                for piece in path.pieces().iter().rev() {
                    match piece {
                        super::value::Piece::Lit { text, .. } => tail.insert_str(0, text),
                        super::value::Piece::Unknown(_) => break,
                    }
                }
                tail
            }
            _ => String::new(),
        };
        let tail = tail.trim_start_matches('/');
        if tail.split('/').filter(|p| !p.is_empty() && *p != "." && *p != "..").count() >= 2
            && !tail.split('/').any(|p| p == "..")
            && let Some((found, content)) = self.files.find_tail(tail)
        {
            self.note(format!("{shown} read as {found}: the input's only file at that path, the rest of the path being the run's"));
            return self.placed_file(&found, content);
        }
        self.undetermined(Why::File(shown.clone()), &shown)
    }

    /// The path writes `content` to `path` (`>`/`>>`, `tee`, ...).
    pub(super) fn write_file(&mut self, w: &mut World, path: &Str, content: Str, append: bool) {
        let ctx = self.ctx(w);
        self.out.writes.push(Write { path: path.clone(), content: content.clone(), append, ctx });
        let Some(text) = path.known() else { return };
        let Some(abs) = super::programs::absolute(&w.cwd, &text) else { return };
        if abs == "/dev/null" || abs == "/dev/stdout" || abs == "/dev/stderr" {
            if abs == "/dev/stdout" {
                w.print(&content);
            }
            return;
        }
        let new = match (append, w.files.get(&abs)) {
            (true, Some(FileState::Written(old))) => old.clone().concat(&content),
            (true, None) => match self.files.read(&abs) {
                Some(old) => Str::lit(old, self.at).concat(&content),
                None => self.undetermined(Why::File(abs.clone()), &abs).concat(&content),
            },
            _ => content,
        };
        if new.known().is_some_and(|t| t.len() > self.limits.value_bytes) {
            self.trip("bytes", format!("a file written past {} bytes: its content not kept", self.limits.value_bytes));
            w.files.insert(abs.clone(), FileState::Written(self.undetermined(Why::File(abs.clone()), &abs)));
            return;
        }
        w.files.insert(abs, FileState::Written(new));
    }
}
