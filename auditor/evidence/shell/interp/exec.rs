//! Statements and control flow, over a set of paths: lists, `&&`/`||`,
//! pipelines, subshells, `if`, `case`, loops, functions. Each construct
//! maps the paths that reach it to the paths that leave it; a condition the
//! inputs do not decide sends a path down both arms, each marked.

use super::state::{Flow, Func, Mark, Status, World};
use super::value::{Place, Str, Why};
use super::{Call, CallKind, Interp};
use brush_parser::ast::{
    self, AndOr, CaseItemPostAction, Command, CompoundCommand, CompoundList, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline, SeparatorOperator,
    SourceLocation,
};
use std::rc::Rc;

/// Longest condition text kept in a mark.
const MARK_TEXT: usize = 120;

/// How a path's status decides a condition.
enum Decision {
    Held,
    Failed,
    Unknown,
}

fn decide(status: &Status) -> Decision {
    match status {
        Status::Known(0) => Decision::Held,
        Status::Known(_) => Decision::Failed,
        Status::Unknown(_) => Decision::Unknown,
    }
}

fn cut(text: &str) -> std::sync::Arc<str> {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= MARK_TEXT {
        return one_line.into();
    }
    format!("{}…", one_line.chars().take(MARK_TEXT).collect::<String>()).into()
}

impl Interp<'_> {
    /// The place of a node of the text being run.
    pub(super) fn place_of(&self, node: &impl SourceLocation) -> Place {
        node.location().map_or(self.at, |span| self.src.place(span.start.line))
    }

    pub(super) fn run_program(&mut self, worlds: Vec<World>, program: &ast::Program) -> Vec<World> {
        let mut worlds = worlds;
        for list in &program.complete_commands {
            worlds = self.run_list(worlds, list);
        }
        worlds
    }

    pub(super) fn run_list(&mut self, worlds: Vec<World>, list: &CompoundList) -> Vec<World> {
        let mut worlds = worlds;
        for item in &list.0 {
            let (running, mut next): (Vec<World>, Vec<World>) = worlds.into_iter().partition(World::running);
            if running.is_empty() {
                return next;
            }
            match item.1 {
                SeparatorOperator::Async => {
                    for w in running {
                        next.push(self.background(w, &item.0));
                    }
                }
                SeparatorOperator::Sequence => next.extend(self.run_and_or(running, &item.0)),
            }
            worlds = self.merge(next);
        }
        worlds
    }

    /// `cmd &`: run in a child; the shell goes on with status 0.
    fn background(&mut self, w: World, list: &ast::AndOrList) -> World {
        let mut child = w.clone();
        child.out = None;
        self.chain.push(Call { kind: CallKind::Subshell, at: self.place_of(list), defined: None });
        let _ = self.run_and_or(vec![child], list);
        self.chain.pop();
        let mut w = w;
        w.status = Status::ok();
        w
    }

    fn run_and_or(&mut self, worlds: Vec<World>, list: &ast::AndOrList) -> Vec<World> {
        // `set -e` ignores a failure of every operand but the last (bash(1), `-e`).
        let operands = list.additional.len() + 1;
        let checked = |k: usize| usize::from(k + 1 < operands);
        self.checking += checked(0);
        let mut worlds: Vec<World> = self.run_pipelines(worlds, &list.first);
        self.checking -= checked(0);
        let mut previous = &list.first;
        for (k, next) in list.additional.iter().enumerate() {
            let (and, pipeline) = match next {
                AndOr::And(p) => (true, p),
                AndOr::Or(p) => (false, p),
            };
            self.checking += checked(k + 1);
            worlds = self.run_operand(worlds, and, pipeline, previous);
            self.checking -= checked(k + 1);
            previous = pipeline;
        }
        worlds
    }

    /// `set -e` after a child shell (`bash FILE`, `bash -c`) outside a
    /// condition: a failure stops the script. Where only the run knows the
    /// status and some path of the child failed, both happen: the path
    /// that goes on assumed the child succeeded.
    pub(super) fn errexit(&mut self, w: World, statuses: &[Status], what: &str) -> Vec<World> {
        if !w.opts.errexit || self.checking > 0 {
            return vec![w];
        }
        let mut w = w;
        match decide(&w.status) {
            Decision::Held => vec![w],
            Decision::Failed => {
                w.flow = Flow::Exit;
                vec![w]
            }
            Decision::Unknown if statuses.iter().any(|s| matches!(decide(s), Decision::Failed)) => {
                let (at, text) = (self.at, cut(&format!("set -e: {what} succeeds")));
                let mut stopped = w.clone();
                stopped.flow = Flow::Exit;
                stopped.marks.push(Mark { at, text: text.clone(), held: false });
                w.status = Status::ok();
                w.marks.push(Mark { at, text, held: true });
                vec![w, stopped]
            }
            Decision::Unknown => vec![w],
        }
    }

    /// The worlds after `&& pipeline` (`and`) or `|| pipeline`, run where the
    /// status so far calls for it; a status only the run knows runs both.
    fn run_operand(&mut self, worlds: Vec<World>, and: bool, pipeline: &ast::Pipeline, previous: &ast::Pipeline) -> Vec<World> {
        let mut out = Vec::new();
        for w in worlds {
            if !w.running() {
                out.push(w);
                continue;
            }
            let runs = |held: bool| held == and;
            match decide(&w.status) {
                Decision::Held if runs(true) => out.extend(self.run_pipeline(w, pipeline)),
                Decision::Failed if runs(false) => out.extend(self.run_pipeline(w, pipeline)),
                Decision::Held | Decision::Failed => out.push(w),
                Decision::Unknown => {
                    let at = self.place_of(previous);
                    let text = cut(&previous.to_string());
                    for held in [true, false] {
                        let mut arm = w.clone();
                        arm.status = Status::from_bool(held);
                        arm.marks.push(Mark { at, text: text.clone(), held });
                        arm.learn(held, at);
                        if runs(held) {
                            out.extend(self.run_pipeline(arm, pipeline));
                        } else {
                            out.push(arm);
                        }
                    }
                }
            }
        }
        out
    }

    /// A pipeline on several paths. Paths that call the same function here
    /// are joined first and the function run once: calls nested in calls
    /// would otherwise multiply the paths at every level.
    fn run_pipelines(&mut self, worlds: Vec<World>, pipeline: &Pipeline) -> Vec<World> {
        if worlds.len() > 1 && self.calls_one_function(&worlds, pipeline) {
            let at = self.place_of(pipeline);
            let (running, mut out): (Vec<World>, Vec<World>) = worlds.into_iter().partition(World::running);
            if !running.is_empty() {
                let joined = self.join_all(running, at);
                out.extend(self.run_pipeline(joined, pipeline));
            }
            return out;
        }
        // A compound command (if, case, loops, braces) runs over all paths at
        // once, so the commands inside it see them together too.
        if let ([Command::Compound(compound, None)], false) = (pipeline.seq.as_slice(), pipeline.bang)
            && worlds.len() > 1
            && !matches!(compound, CompoundCommand::Subshell(_) | CompoundCommand::Arithmetic(_) | CompoundCommand::Coprocess(_))
        {
            let (mut running, mut out): (Vec<World>, Vec<World>) = worlds.into_iter().partition(World::running);
            running.iter_mut().for_each(|w| w.assumed = None);
            out.extend(self.run_compound_set(running, compound));
            return out;
        }
        worlds.into_iter().flat_map(|w| self.run_pipeline(w, pipeline)).collect()
    }

    /// Whether every path runs `pipeline` as a call of one and the same function.
    fn calls_one_function(&self, worlds: &[World], pipeline: &Pipeline) -> bool {
        let [Command::Simple(simple)] = pipeline.seq.as_slice() else { return false };
        let Some(name) = &simple.word_or_name else { return false };
        if !name.value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.')) {
            return false;
        }
        let Some(first) = worlds[0].funcs.get(&name.value) else { return false };
        // Small functions run on each path, which keeps what distinguishes the
        // paths; a large one called from several would multiply the work.
        first.weight.saturating_mul(worlds.len()) > JOIN_CALLS_ABOVE && worlds.iter().all(|w| w.funcs.get(&name.value).is_some_and(|f| f == first))
    }

    fn run_pipeline(&mut self, w: World, pipeline: &Pipeline) -> Vec<World> {
        if !w.running() {
            return vec![w];
        }
        // What a test's outcome tells holds only for the status it set.
        let mut w = w;
        w.assumed = None;
        // `set -e` ignores a failure of a negated pipeline; a pipeline's
        // stages are judged by their status alone (not modelled: left to the run).
        let checked = usize::from(pipeline.bang || pipeline.seq.len() > 1);
        self.checking += checked;
        let worlds = if pipeline.seq.len() == 1 {
            self.run_command(w, &pipeline.seq[0])
        } else {
            let mut last = self.run_stages(w, pipeline);
            last.assumed = None;
            vec![last]
        };
        self.checking -= checked;
        if !pipeline.bang {
            return worlds;
        }
        worlds
            .into_iter()
            .map(|mut w| {
                w.negate_assumed();
                w.status = match w.status {
                    Status::Known(0) => Status::Known(1),
                    Status::Known(_) => Status::Known(0),
                    unknown => unknown,
                };
                w
            })
            .collect()
    }

    /// A pipeline of several commands: each runs in a child shell (the last
    /// too, unless `lastpipe`), the output of one the input of the next.
    fn run_stages(&mut self, w: World, pipeline: &Pipeline) -> World {
        let at = self.place_of(pipeline);
        let mut input = w.stdin.clone();
        let mut status = Status::ok();
        let mut last_world = None;
        let n = pipeline.seq.len();
        for (i, command) in pipeline.seq.iter().enumerate() {
            let last = i + 1 == n;
            let mut stage = w.clone();
            stage.stdin = input.take();
            stage.out = Some(Str::new());
            if last && w.opts.lastpipe {
                let worlds = self.run_command(stage, command);
                let joined = self.join_all(worlds, at);
                last_world = Some(joined);
                break;
            }
            self.chain.push(Call { kind: CallKind::Subshell, at, defined: None });
            let worlds = self.run_command(stage, command);
            self.chain.pop();
            let outputs: Vec<Str> = worlds.iter().map(|s| s.out.clone().unwrap_or_default()).collect();
            let statuses: Vec<Status> = worlds.iter().map(|s| s.status.clone()).collect();
            input = Some(Str::one_of(outputs, at));
            status = join_status(&statuses);
        }
        match last_world {
            Some(mut lw) => {
                let printed = lw.out.take().unwrap_or_default();
                lw.out = w.out.clone();
                lw.stdin = w.stdin.clone();
                lw.print(&printed);
                lw
            }
            None => {
                let mut w = w;
                if let Some(printed) = input {
                    w.print(&printed);
                }
                w.status = status;
                w
            }
        }
    }

    pub(super) fn run_command(&mut self, w: World, command: &Command) -> Vec<World> {
        match command {
            Command::Simple(simple) => self.run_simple(w, simple),
            Command::Compound(compound, redirects) => {
                let redirects: &[IoRedirect] = redirects.as_ref().map_or(&[], |r| r.0.as_slice());
                self.with_redirects(w, redirects, |me, w| me.run_compound(w, compound))
            }
            Command::Function(def) => {
                let mut w = w;
                let at = self.place_of(def);
                self.at = at;
                let name = def.fname.value.clone();
                let weight = def.body.location().map_or(0, |span| span.end.index.saturating_sub(span.start.index));
                w.funcs.insert(name.clone(), Rc::new(Func { name, body: def.body.clone(), src: self.src.clone(), at, weight }));
                w.status = Status::ok();
                vec![w]
            }
            Command::ExtendedTest(test, redirects) => {
                let redirects: &[IoRedirect] = redirects.as_ref().map_or(&[], |r| r.0.as_slice());
                self.at = self.place_of(test);
                self.with_redirects(w, redirects, |me, mut w| {
                    w.status = me.extended_test(&mut w, &test.expr);
                    vec![w]
                })
            }
        }
    }

    /// Run `f` with a compound command's redirections applied: input from
    /// a heredoc, here-string or file; output captured and written to a file.
    pub(super) fn with_redirects(&mut self, w: World, redirects: &[IoRedirect], f: impl FnOnce(&mut Self, World) -> Vec<World>) -> Vec<World> {
        if redirects.is_empty() {
            return f(self, w);
        }
        let mut w = w;
        let saved_in = w.stdin.clone();
        let saved_out = w.out.clone();
        let mut targets = Vec::new();
        for redirect in redirects {
            match redirect {
                IoRedirect::HereDocument(fd, doc) if fd.is_none_or(|fd| fd == 0) => w.stdin = Some(self.heredoc_body(&mut w, doc)),
                IoRedirect::HereString(fd, word) if fd.is_none_or(|fd| fd == 0) => {
                    let mut s = self.expand_single(&mut w, word);
                    s.push_str("\n", self.at);
                    w.stdin = Some(s);
                }
                IoRedirect::File(fd, kind, IoFileRedirectTarget::Filename(word)) => {
                    let path = self.expand_single(&mut w, word);
                    match kind {
                        IoFileRedirectKind::Read if fd.is_none_or(|fd| fd == 0) => w.stdin = Some(self.read_file(&w, &path)),
                        IoFileRedirectKind::Write | IoFileRedirectKind::Append | IoFileRedirectKind::Clobber if fd.is_none_or(|fd| fd == 1) => {
                            targets.push((path, matches!(kind, IoFileRedirectKind::Append)));
                        }
                        _ => {}
                    }
                }
                IoRedirect::File(fd, IoFileRedirectKind::Read, IoFileRedirectTarget::ProcessSubstitution(_, sub)) if fd.is_none_or(|fd| fd == 0) => {
                    let out = self.substitute_list(&w, &sub.list, self.place_of(sub));
                    w.stdin = Some(out);
                }
                IoRedirect::OutputAndError(word, append) => {
                    let path = self.expand_single(&mut w, word);
                    targets.push((path, *append));
                }
                _ => {}
            }
        }
        if targets.is_empty() {
            let worlds = f(self, w);
            return worlds
                .into_iter()
                .map(|mut w| {
                    w.stdin = saved_in.clone();
                    w
                })
                .collect();
        }
        w.out = Some(Str::new());
        let worlds = f(self, w);
        worlds
            .into_iter()
            .map(|mut w| {
                let printed = w.out.take().unwrap_or_default();
                w.out = saved_out.clone();
                w.stdin = saved_in.clone();
                for (path, append) in &targets {
                    self.write_file(&mut w, path, printed.clone(), *append);
                }
                w
            })
            .collect()
    }

    /// A compound command over several paths.
    fn run_compound_set(&mut self, worlds: Vec<World>, compound: &CompoundCommand) -> Vec<World> {
        if worlds.is_empty() {
            return worlds;
        }
        self.at = self.place_of(compound);
        match compound {
            CompoundCommand::BraceGroup(group) => self.run_list(worlds, &group.list),
            CompoundCommand::IfClause(clause) => self.run_if(worlds, clause),
            CompoundCommand::CaseClause(clause) => self.run_case(worlds, clause),
            CompoundCommand::ForClause(clause) => self.run_for(worlds, clause),
            CompoundCommand::WhileClause(clause) => self.run_while(worlds, clause, true),
            CompoundCommand::UntilClause(clause) => self.run_while(worlds, clause, false),
            _ => worlds.into_iter().flat_map(|w| self.run_compound(w, compound)).collect(),
        }
    }

    fn run_compound(&mut self, w: World, compound: &CompoundCommand) -> Vec<World> {
        self.at = self.place_of(compound);
        match compound {
            CompoundCommand::BraceGroup(group) => self.run_list(vec![w], &group.list),
            CompoundCommand::Subshell(sub) => {
                let at = self.place_of(sub);
                vec![self.subshell(w, at, |me, child| me.run_list(vec![child], &sub.list))]
            }
            CompoundCommand::IfClause(clause) => self.run_if(vec![w], clause),
            CompoundCommand::CaseClause(clause) => self.run_case(vec![w], clause),
            CompoundCommand::ForClause(clause) => self.run_for(vec![w], clause),
            CompoundCommand::WhileClause(clause) => self.run_while(vec![w], clause, true),
            CompoundCommand::UntilClause(clause) => self.run_while(vec![w], clause, false),
            CompoundCommand::Arithmetic(arith) => {
                let mut w = w;
                w.status = match self.arith_text(&mut w, &arith.expr.value) {
                    Ok(n) => Status::from_bool(n != 0),
                    Err(why) => Status::Unknown(why),
                };
                vec![w]
            }
            CompoundCommand::ArithmeticForClause(clause) => self.run_arith_for(w, clause),
            CompoundCommand::Coprocess(co) => {
                let at = self.place_of(co);
                let child = w.clone();
                self.chain.push(Call { kind: CallKind::Subshell, at, defined: None });
                let _ = self.run_command(child, &co.body);
                self.chain.pop();
                let mut w = w;
                w.status = Status::ok();
                vec![w]
            }
        }
    }

    /// Run `f` in a child shell of `w`: its changes are its own; its output
    /// and status come back.
    pub(super) fn subshell(&mut self, w: World, at: Place, f: impl FnOnce(&mut Self, World) -> Vec<World>) -> World {
        let mut child = w.clone();
        child.out = Some(Str::new());
        self.chain.push(Call { kind: CallKind::Subshell, at, defined: None });
        let worlds = f(self, child);
        self.chain.pop();
        let outputs: Vec<Str> = worlds.iter().map(|c| c.out.clone().unwrap_or_default()).collect();
        let statuses: Vec<Status> = worlds.iter().map(|c| c.status.clone()).collect();
        let mut w = w;
        w.print(&Str::one_of(outputs, at));
        w.status = join_status(&statuses);
        w
    }

    /// Run a condition list and split the paths by how it ended: (held,
    /// failed), each undecided path in both, marked.
    fn condition(&mut self, worlds: Vec<World>, list: &CompoundList) -> (Vec<World>, Vec<World>, Vec<World>) {
        let at = self.place_of(list);
        // Written out only if a path cannot decide it.
        let mut text: Option<std::sync::Arc<str>> = None;
        self.checking += 1;
        let worlds = self.run_list(worlds, list);
        self.checking -= 1;
        let (mut held, mut failed, mut stopped) = (Vec::new(), Vec::new(), Vec::new());
        for mut w in worlds {
            if !w.running() {
                stopped.push(w);
                continue;
            }
            match decide(&w.status) {
                Decision::Held => held.push(w),
                Decision::Failed => failed.push(w),
                Decision::Unknown => {
                    let text = text.get_or_insert_with(|| cut(&list.to_string()));
                    let mut other = w.clone();
                    w.marks.push(Mark { at, text: text.clone(), held: true });
                    other.marks.push(Mark { at, text: text.clone(), held: false });
                    w.learn(true, at);
                    other.learn(false, at);
                    held.push(w);
                    failed.push(other);
                }
            }
        }
        (held, failed, stopped)
    }

    fn run_if(&mut self, worlds: Vec<World>, clause: &ast::IfClauseCommand) -> Vec<World> {
        let (held, mut failed, mut out) = self.condition(worlds, &clause.condition);
        out.extend(self.run_list(held, &clause.then));
        for branch in clause.elses.iter().flatten() {
            let pending = std::mem::take(&mut failed);
            if pending.is_empty() {
                break;
            }
            match &branch.condition {
                Some(condition) => {
                    let (held, f, stopped) = self.condition(pending, condition);
                    out.extend(stopped);
                    out.extend(self.run_list(held, &branch.body));
                    failed.extend(f);
                }
                None => out.extend(self.run_list(pending, &branch.body)),
            }
        }
        // No arm ran: the status is 0.
        out.extend(failed.into_iter().map(|mut w| {
            w.status = Status::ok();
            w
        }));
        self.merge(out)
    }

    fn run_case(&mut self, worlds: Vec<World>, clause: &ast::CaseClauseCommand) -> Vec<World> {
        let at = self.place_of(clause);
        // Each path with the subject as it expands there.
        let mut pending: Vec<(World, Str)> = Vec::new();
        for mut w in worlds {
            let subject = self.expand_single(&mut w, &clause.value);
            pending.push((w, subject));
        }
        let mut out = Vec::new();
        // Paths that fell through into the next arm (`;&`).
        let mut falling: Vec<World> = Vec::new();
        for item in &clause.cases {
            let mut entering = std::mem::take(&mut falling);
            let mut next_pending = Vec::new();
            let mut text: Option<std::sync::Arc<str>> = None;
            for (mut w, subject) in pending {
                let mut decided = Some(false);
                for pattern in &item.patterns {
                    match self.pattern_matches(&mut w, &subject, pattern) {
                        Some(true) => {
                            decided = Some(true);
                            break;
                        }
                        Some(false) => {}
                        None => decided = None,
                    }
                }
                match decided {
                    Some(true) => entering.push(w),
                    Some(false) => next_pending.push((w, subject)),
                    None => {
                        let text = text.get_or_insert_with(|| {
                            cut(&format!("case {} in {}", clause.value, item.patterns.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join("|")))
                        });
                        let mut other = w.clone();
                        w.marks.push(Mark { at, text: text.clone(), held: true });
                        other.marks.push(Mark { at, text: text.clone(), held: false });
                        entering.push(w);
                        next_pending.push((other, subject));
                    }
                }
            }
            let ran = match &item.cmd {
                Some(list) => self.run_list(entering, list),
                None => entering
                    .into_iter()
                    .map(|mut w| {
                        w.status = Status::ok();
                        w
                    })
                    .collect(),
            };
            match item.post_action {
                CaseItemPostAction::ExitCase => out.extend(ran),
                CaseItemPostAction::UnconditionallyExecuteNextCaseItem => {
                    let (running, stopped): (Vec<World>, Vec<World>) = ran.into_iter().partition(World::running);
                    falling = running;
                    out.extend(stopped);
                }
                CaseItemPostAction::ContinueEvaluatingCases => {
                    for mut w in ran {
                        let subject = self.expand_single(&mut w, &clause.value);
                        next_pending.push((w, subject));
                    }
                }
            }
            pending = next_pending;
        }
        out.extend(falling);
        out.extend(pending.into_iter().map(|(mut w, _)| {
            w.status = Status::ok();
            w
        }));
        self.merge(out)
    }

    fn run_for(&mut self, worlds: Vec<World>, clause: &ast::ForClauseCommand) -> Vec<World> {
        // Paths whose words expand alike loop together.
        let mut groups: Vec<(Vec<Str>, Vec<World>)> = Vec::new();
        for mut w in worlds {
            let values: Vec<Str> = match &clause.values {
                Some(words) => {
                    let mut all = Vec::new();
                    for word in words {
                        all.extend(self.expand_fields(&mut w, word));
                    }
                    all
                }
                None => w.positional().to_vec(),
            };
            match groups.iter_mut().find(|(v, _)| *v == values) {
                Some((_, ws)) => ws.push(w),
                None => groups.push((values, vec![w])),
            }
        }
        let mut out = Vec::new();
        for (values, worlds) in groups {
            out.extend(self.run_for_values(worlds, clause, &values));
        }
        self.merge(out)
    }

    fn run_for_values(&mut self, worlds: Vec<World>, clause: &ast::ForClauseCommand, values: &[Str]) -> Vec<World> {
        let at = self.place_of(clause);
        let mut active = worlds;
        let mut done = Vec::new();
        let mut head: Option<World> = None;
        for (i, value) in values.iter().enumerate() {
            if i >= self.limits.iterations {
                self.trip("iterations", format!("a for loop over more than {} words: the rest not examined", self.limits.iterations));
                break;
            }
            // A long list: past the first passes, the paths are joined and what
            // the body keeps changing widened, until a pass changes nothing.
            if i >= WIDEN_FOR_AFTER && !active.is_empty() {
                let mut joined = self.join_all(active, at);
                if let Some(previous) = &head {
                    widen(&mut joined, previous, at);
                    if without(&joined, &clause.variable_name).same_state(&without(previous, &clause.variable_name)) {
                        // The passes leave the same state whatever the word: one
                        // more pass stands for every remaining word, the variable
                        // "one of" them, and the loop ends at the last.
                        self.assign_computed(&mut joined, &clause.variable_name, Str::one_of(values[i..].to_vec(), at), at);
                        let after = self.run_list(vec![joined], &clause.body.list);
                        for w in after {
                            let (LoopStep::Next(mut w) | LoopStep::Leave(mut w)) = loop_flow(w);
                            if w.running() {
                                let last = values[values.len() - 1].clone();
                                self.assign_computed(&mut w, &clause.variable_name, last, at);
                            }
                            done.push(w);
                        }
                        active = Vec::new();
                        break;
                    }
                }
                head = Some(joined.clone());
                active = vec![joined];
            }
            let mut next = Vec::new();
            for mut w in active {
                self.assign_computed(&mut w, &clause.variable_name, value.clone(), at);
                next.push(w);
            }
            let after = self.run_list(next, &clause.body.list);
            active = Vec::new();
            for w in after {
                match loop_flow(w) {
                    LoopStep::Next(w) => active.push(w),
                    LoopStep::Leave(w) => done.push(w),
                }
            }
            active = self.merge(active);
            if active.is_empty() {
                break;
            }
        }
        done.extend(active);
        done.into_iter()
            .map(|mut w| {
                if w.running() && values.is_empty() {
                    w.status = Status::ok();
                }
                w
            })
            .collect()
    }

    fn run_while(&mut self, worlds: Vec<World>, clause: &ast::WhileOrUntilClauseCommand, while_: bool) -> Vec<World> {
        let at = self.place_of(clause);
        let mut active = worlds;
        let mut done = Vec::new();
        let mut seen: Vec<World> = Vec::new();
        let mut head: Option<World> = None;
        let mut iterations = 0;
        while !active.is_empty() {
            // A path back at the loop's head in a state already explored adds nothing.
            active.retain(|w| !seen.iter().any(|s| s.same_state(w)));
            if active.is_empty() {
                break;
            }
            if iterations >= self.limits.iterations {
                self.trip("iterations", format!("a while loop past {} iterations: the rest not examined", self.limits.iterations));
                done.extend(active);
                break;
            }
            iterations += 1;
            // Past the first passes of a loop the inputs do not bound, the
            // paths are joined at its head and what the body keeps changing
            // is widened to "changed by the loop", so the loop reaches a
            // state it has seen.
            // A loop reading input the script gave in full (`while read`
            // over a heredoc, a file it wrote, `<(env)`) runs pass by pass:
            // the input bounds it.
            let reading_known_input = iterations <= KNOWN_INPUT_PASSES && active.iter().all(|w| w.stdin.as_ref().is_some_and(Str::is_known));
            if iterations > WIDEN_AFTER && !reading_known_input {
                let mut joined = self.join_all(active, at);
                if let Some(previous) = &head {
                    widen(&mut joined, previous, at);
                    if joined.same_state(previous) {
                        break;
                    }
                }
                head = Some(joined.clone());
                active = vec![joined];
            }
            if seen.len() < 64 {
                seen.extend(active.iter().cloned());
            }
            let (held, failed, stopped) = self.condition(active, &clause.0);
            done.extend(stopped);
            let (body, stop) = if while_ { (held, failed) } else { (failed, held) };
            done.extend(stop.into_iter().map(|mut w| {
                w.status = Status::ok();
                w
            }));
            let after = self.run_list(body, &clause.1.list);
            active = Vec::new();
            for w in after {
                match loop_flow(w) {
                    LoopStep::Next(w) => active.push(w),
                    LoopStep::Leave(w) => done.push(w),
                }
            }
            active = self.merge(active);
        }
        self.merge(done)
    }

    fn run_arith_for(&mut self, w: World, clause: &ast::ArithmeticForClauseCommand) -> Vec<World> {
        let mut w = w;
        if let Some(init) = &clause.initializer {
            let _ = self.arith_text(&mut w, &init.value);
        }
        let mut active = vec![w];
        let mut done = Vec::new();
        let mut iterations = 0;
        let mut head: Option<World> = None;
        let at = self.place_of(clause);
        let (started, programs) = (self.steps, self.out.execs.len());
        let mut costly = false;
        while !active.is_empty() {
            if iterations >= self.limits.iterations {
                self.trip("iterations", format!("an arithmetic for loop past {} iterations: the rest not examined", self.limits.iterations));
                done.extend(active);
                break;
            }
            iterations += 1;
            // Past its first passes a counted loop whose passes cost more
            // than a few commands is widened as a while loop is: the
            // counter and what the body keeps changing become "changed by
            // the loop", the bound undetermined, and the body runs once
            // more for the passes left (a retry loop of ten attempts is not
            // run ten times). A cheap loop runs to its bound.
            if iterations == WIDEN_ARITH_AFTER + 1 {
                costly = self.out.execs.len() > programs || (self.steps - started) / WIDEN_ARITH_AFTER > CHEAP_PASS_STEPS;
            }
            if costly && iterations > WIDEN_ARITH_AFTER {
                // Paths whose bound is reached leave as they are.
                let (stopped, continuing): (Vec<World>, Vec<World>) = active.into_iter().partition(|w| {
                    let mut probe = w.clone();
                    clause.condition.as_ref().is_some_and(|c| self.arith_text(&mut probe, &c.value) == Ok(0))
                });
                done.extend(stopped);
                if continuing.is_empty() {
                    break;
                }
                let mut joined = self.join_all(continuing, at);
                if let Some(previous) = &head {
                    widen(&mut joined, previous, at);
                }
                head = Some(joined.clone());
                active = vec![joined];
            } else if iterations == WIDEN_ARITH_AFTER {
                head = Some(self.join_all(active.clone(), at));
            }
            let mut body = Vec::new();
            for mut w in active {
                let go = match &clause.condition {
                    Some(c) => self.arith_text(&mut w, &c.value).map(|n| n != 0),
                    None => Ok(true),
                };
                match go {
                    Ok(true) => body.push(w),
                    Ok(false) => done.push(w),
                    Err(_) => {
                        // Unknown bound: the body once, and the loop left.
                        let mut other = w.clone();
                        let text = cut(&clause.to_string());
                        w.marks.push(Mark { at, text: text.clone(), held: true });
                        other.marks.push(Mark { at, text, held: false });
                        done.push(other);
                        let after = self.run_list(vec![w], &clause.body.list);
                        done.extend(after.into_iter().map(|w| match loop_flow(w) {
                            LoopStep::Next(w) | LoopStep::Leave(w) => w,
                        }));
                    }
                }
            }
            let after = self.run_list(body, &clause.body.list);
            active = Vec::new();
            for w in after {
                match loop_flow(w) {
                    LoopStep::Next(mut w) => {
                        if let Some(update) = &clause.updater {
                            let _ = self.arith_text(&mut w, &update.value);
                        }
                        active.push(w);
                    }
                    LoopStep::Leave(w) => done.push(w),
                }
            }
            active = self.merge(active);
        }
        self.merge(done)
    }

    /// Call function `func` with `args`.
    pub(super) fn call_function(&mut self, w: World, func: &Rc<Func>, args: Vec<Str>) -> Vec<World> {
        // A function calling itself with arguments the run decides does what
        // its outer call does: that call is examined, the recursion not followed.
        let depth = self.functions.iter().filter(|f| **f == func.name).count();
        if depth >= 2 && args.iter().any(|a| !a.is_known()) {
            let mut w = w;
            w.status = Status::Unknown(format!("what {} returns", func.name));
            let printed = self.undetermined(Why::Output(format!("what {} prints", func.name)), &format!("$({})", func.name));
            w.print(&printed);
            return vec![w];
        }
        if self.functions.len() >= self.limits.calls {
            self.trip("calls", format!("function calls nested deeper than {}: {} not examined", self.limits.calls, func.name));
            let mut w = w;
            w.status = Status::Unknown(format!("{} (not examined)", func.name));
            return vec![w];
        }
        self.called.insert((func.name.clone(), func.at));
        let mut w = w;
        w.frames.push(super::state::Frame { locals: imbl::OrdMap::new(), positional: args });
        let saved_src = std::mem::replace(&mut self.src, func.src.clone());
        let saved_at = self.at;
        self.chain.push(Call { kind: CallKind::Function(func.name.clone()), at: self.at, defined: Some(func.at) });
        self.functions.push(func.name.clone());
        let redirects: &[IoRedirect] = func.body.1.as_ref().map_or(&[], |r| r.0.as_slice());
        let worlds = self.with_redirects(w, redirects, |me, w| me.run_compound(w, &func.body.0));
        self.src = saved_src;
        self.functions.pop();
        self.chain.pop();
        self.at = saved_at;
        worlds
            .into_iter()
            .map(|mut w| {
                w.frames.pop();
                if w.flow == Flow::Return {
                    w.flow = Flow::Normal;
                }
                w
            })
            .collect()
    }

    /// Parse and run `text` (an `eval` string, a sourced file, a trap) in
    /// path `w` as if written at the current statement, lines counted from it.
    pub(super) fn run_text_in(&mut self, w: World, text: &str, kind: CallKind) -> Vec<World> {
        let src = super::state::Src { file: self.at.file, first_line: self.at.line.max(1), map: None };
        self.run_text_with(w, text, src, kind)
    }

    pub(super) fn run_text_with(&mut self, w: World, text: &str, src: super::state::Src, kind: CallKind) -> Vec<World> {
        if self.nesting >= self.limits.nesting {
            self.trip("nesting", format!("eval, source and child shells nested deeper than {}: not examined", self.limits.nesting));
            let mut w = w;
            w.status = Status::Unknown("not examined".into());
            return vec![w];
        }
        let parsed = crate::evidence::shell::syntax::parse_shared(text);
        let program = match parsed.as_ref() {
            Ok(p) => p,
            Err(e) => {
                let file = src.file;
                let saved = std::mem::replace(&mut self.src, src);
                self.syntax_problem(e, file);
                self.src = saved;
                let mut w = w;
                w.status = Status::Unknown("a text that does not parse".into());
                return vec![w];
            }
        };
        let saved_src = std::mem::replace(&mut self.src, src);
        let saved_at = self.at;
        self.nesting += 1;
        self.chain.push(Call { kind, at: self.at, defined: None });
        let worlds = self.run_program(vec![w], program);
        self.src = saved_src;
        self.chain.pop();
        self.nesting -= 1;
        self.at = saved_at;
        worlds
    }

    /// Paths in the same state become one (the conditions they share kept);
    /// past the bound, the running ones are joined.
    pub(super) fn merge(&mut self, worlds: Vec<World>) -> Vec<World> {
        let mut out: Vec<World> = Vec::with_capacity(worlds.len());
        for w in worlds {
            match out.iter_mut().find(|o| o.same_state(&w)) {
                // The conditions both assumed stay (an arm and its complement cancel).
                Some(o) => o.marks.retain(|m| w.marks.contains(m)),
                None => out.push(w),
            }
        }
        if out.len() <= self.limits.paths {
            return out;
        }
        // Join paths that will run the same statements next (same flow).
        let at = self.at;
        let mut groups: Vec<Vec<World>> = Vec::new();
        for w in out {
            match groups.iter_mut().find(|g| g[0].flow == w.flow && g[0].frames.len() == w.frames.len()) {
                Some(g) => g.push(w),
                None => groups.push(vec![w]),
            }
        }
        groups.into_iter().map(|g| self.join_all(g, at)).collect()
    }

    /// One path standing for several: values that differ become "one of".
    pub(super) fn join_all(&mut self, worlds: Vec<World>, at: Place) -> World {
        let mut iter = worlds.into_iter();
        let mut first = iter.next().expect("at least one path");
        let rest: Vec<World> = iter.collect();
        if rest.is_empty() {
            return first;
        }
        let all: Vec<&World> = std::iter::once(&first).chain(rest.iter()).collect();
        self.joins += 1;
        let mut join = Join { id: self.joins, at, marks: Rc::new(all.iter().map(|w| w.marks.clone()).collect()), names: Vec::new() };
        let globals = join_vars(all.iter().map(|w| &w.globals).collect(), first.open, &mut join);
        // Paths at one statement are at one call depth: each frame's locals join too.
        let mut frames = first.frames.clone();
        if all.iter().all(|w| w.frames.len() == frames.len()) {
            for (i, frame) in frames.iter_mut().enumerate() {
                let locals: Vec<imbl::OrdMap<String, super::state::Var>> =
                    all.iter().map(|w| w.frames[i].locals.iter().filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v))).collect()).collect();
                let unset: std::collections::BTreeSet<&String> =
                    all.iter().flat_map(|w| w.frames[i].locals.iter().filter(|(_, v)| v.is_none()).map(|(k, _)| k)).collect();
                let joined = join_vars(locals.iter().collect(), false, &mut join);
                let mut merged: imbl::OrdMap<String, Option<super::state::Var>> = joined.into_iter().map(|(k, v)| (k, Some(v))).collect();
                for name in unset {
                    merged.entry(name.clone()).or_insert(None);
                }
                frame.locals = merged;
            }
        }
        let cwds: Vec<Str> = all.iter().map(|w| w.cwd.clone()).collect();
        let outs: Vec<Option<Str>> = all.iter().map(|w| w.out.clone()).collect();
        let statuses: Vec<Status> = all.iter().map(|w| w.status.clone()).collect();
        // The conditions every path assumed (an arm and its complement cancel).
        let common: Vec<Mark> = first.marks.iter().filter(|m| rest.iter().all(|w| w.marks.contains(m))).cloned().collect();
        for w in &rest {
            for (path, state) in w.files.iter() {
                first.files.entry(path.clone()).or_insert_with(|| state.clone());
            }
        }
        first.globals = globals;
        first.frames = frames;
        // Older alternatives of the joined paths no longer say which path is which.
        first.alternatives = join.names;
        first.cwd = Str::one_of(cwds, at);
        first.status = join_status(&statuses);
        if outs.iter().all(Option::is_some) {
            first.out = Some(Str::one_of(outs.into_iter().flatten().collect(), at));
        }
        first.marks = common;
        first.excluded = first
            .excluded
            .iter()
            .filter_map(|(name, texts)| {
                let kept: Vec<String> = texts.iter().filter(|t| rest.iter().all(|w| w.excluded.get(name).is_some_and(|o| o.contains(t)))).cloned().collect();
                (!kept.is_empty()).then(|| (name.clone(), kept))
            })
            .collect();
        first.assumed = None;
        first
    }

    /// `at` with a value the run decides.
    pub(super) fn undetermined(&self, why: Why, text: &str) -> Str {
        Str::unknown(why, self.at, text)
    }
}

/// One join of paths: what the variables they disagree on as arrays keep.
struct Join {
    id: u32,
    at: Place,
    /// Each path's conditions.
    marks: Rc<Vec<Vec<Mark>>>,
    /// The arrays given [`super::state::Alternatives`].
    names: Vec<(String, Rc<super::state::Alternatives>)>,
}

/// Most paths a join keeps each one's arrays of ([`super::state::Alternatives`]),
/// and most distinct values of one array it keeps.
const MAX_JOINED: usize = 64;
const MAX_ALTERNATIVES: usize = 8;

/// Variables of several paths as one: where they differ, "one of" their
/// values (an undetermined array where one of them is an array), and each
/// path's value of the arrays they disagree on kept in `join`.
fn join_vars(maps: Vec<&imbl::OrdMap<String, super::state::Var>>, open: bool, join: &mut Join) -> imbl::OrdMap<String, super::state::Var> {
    let at = join.at;
    use imbl::ordmap::DiffItem;
    let first = maps[0];
    // Paths share most of their variables (and the map's nodes): only the
    // names some path changed are joined, the rest stay as they are.
    let mut names: std::collections::BTreeSet<&String> = std::collections::BTreeSet::new();
    for m in &maps[1..] {
        names.extend(first.diff(m).map(|d| match d {
            DiffItem::Add(k, _) | DiffItem::Remove(k, _) => k,
            DiffItem::Update { new: (k, _), .. } => k,
        }));
    }
    let mut out = first.clone();
    for name in names {
        let vars: Vec<Option<&super::state::Var>> = maps.iter().map(|m| m.get(name)).collect();
        let mut var = vars.iter().flatten().next().map(|v| (*v).clone()).expect("a path has it");
        var.attrs.exported = vars.iter().any(|v| v.is_some_and(|v| v.attrs.exported));
        // Absent on a path: what the starting environment holds there (open), else unset.
        let absent = open.then(|| super::state::Value::Scalar(Str::unknown(Why::Input(name.clone()), at, format!("${name}"))));
        let values: Vec<Option<&super::state::Value>> = vars.iter().map(|v| v.map_or(absent.as_ref(), |v| v.value.as_ref())).collect();
        var.value = Some(join_values(&values, name, at));
        // An array the paths disagree on: each path's value kept, for the command that uses it.
        let array = values.iter().any(|v| matches!(v, Some(super::state::Value::Indexed(_) | super::state::Value::Assoc(_))));
        let undetermined = values.iter().any(|v| matches!(v, Some(super::state::Value::Undetermined(_))));
        let mut distinct: Vec<&Option<&super::state::Value>> = Vec::new();
        for v in &values {
            if !distinct.contains(&v) {
                distinct.push(v);
            }
        }
        if array && !undetermined && values.len() <= MAX_JOINED && distinct.len() <= MAX_ALTERNATIVES {
            let options = values.iter().map(|v| v.cloned()).collect();
            let alternatives = super::state::Alternatives { join: join.id, joined: var.value.clone(), options, marks: Rc::clone(&join.marks) };
            join.names.push((name.clone(), Rc::new(alternatives)));
        }
        out.insert(name.clone(), var);
    }
    out
}

/// Arrays of several paths with the same keys, element by element "one of".
fn join_elements<K: Ord + Clone>(maps: &[&std::collections::BTreeMap<K, Str>], at: Place) -> Option<std::collections::BTreeMap<K, Str>> {
    maps.iter()
        .all(|m| m.keys().eq(maps[0].keys()))
        .then(|| maps[0].keys().map(|k| (k.clone(), Str::one_of(maps.iter().map(|m| m[k].clone()).collect(), at))).collect())
}

/// Values of several paths as one: arrays with the same indices element by
/// element, scalars "one of", anything else an undetermined array.
pub(super) fn join_values(values: &[Option<&super::state::Value>], name: &str, at: Place) -> super::state::Value {
    use super::state::Value;
    let indexed: Option<Vec<&std::collections::BTreeMap<i64, Str>>> = values
        .iter()
        .map(|v| match v {
            Some(Value::Indexed(m)) => Some(m),
            _ => None,
        })
        .collect();
    if let Some(joined) = indexed.and_then(|maps| join_elements(&maps, at)) {
        return Value::Indexed(joined);
    }
    let assoc: Option<Vec<&std::collections::BTreeMap<String, Str>>> = values
        .iter()
        .map(|v| match v {
            Some(Value::Assoc(m)) => Some(m),
            _ => None,
        })
        .collect();
    if let Some(joined) = assoc.and_then(|maps| join_elements(&maps, at)) {
        return Value::Assoc(joined);
    }
    let scalars: Option<Vec<Str>> = values
        .iter()
        .map(|v| match v {
            Some(Value::Scalar(s)) => Some(s.clone()),
            None => Some(Str::new()),
            _ => None,
        })
        .collect();
    match scalars {
        Some(scalars) => Value::Scalar(Str::one_of(scalars, at)),
        None => Value::Undetermined(Str::unknown(Why::Unsupported(format!("${{{name}[@]}}, an array paths disagree on")), at, format!("${{{name}[@]}}"))),
    }
}

/// Bytes of function body times paths above which the paths calling it are joined first.
const JOIN_CALLS_ABOVE: usize = 8192;

/// Passes of a loop the inputs do not bound before its paths are widened.
const WIDEN_AFTER: usize = 2;
/// Passes of a loop reading known input run exactly before it is widened.
const KNOWN_INPUT_PASSES: usize = 1024;
/// Passes of an arithmetic `for` loop run exactly before it is widened.
const WIDEN_ARITH_AFTER: usize = 4;
/// Commands a pass of an arithmetic `for` loop may run (over its paths),
/// none of them a program, and still be run exactly to its bound: a loop
/// building a list (`L+=("$((n * T))")`) is cheap and its result is what
/// the launch gets; a retry loop (`sleep`, `curl`, the library) is widened.
const CHEAP_PASS_STEPS: usize = 16;
/// Words of a `for` loop taken one by one before its paths are widened.
const WIDEN_FOR_AFTER: usize = 16;

/// A path without one variable (to compare loop heads whatever the loop variable holds).
fn without(w: &World, name: &str) -> World {
    let mut w = w.clone();
    w.globals.remove(name);
    for frame in &mut w.frames {
        frame.locals.remove(name);
    }
    w
}

/// What changed since the loop's previous head becomes "changed by the loop".
fn widen(w: &mut World, previous: &World, at: Place) {
    let changed = |name: &str| Str::unknown(Why::Unsupported(format!("${name} as the loop at line {} leaves it", at.line)), at, format!("${name}"));
    let changed_names: Vec<String> = w.globals.iter().filter(|(name, var)| previous.globals.get(*name) != Some(var)).map(|(name, _)| name.clone()).collect();
    for name in changed_names {
        if let Some(var) = w.globals.get_mut(&name) {
            let array = matches!(var.value, Some(super::state::Value::Indexed(_) | super::state::Value::Assoc(_) | super::state::Value::Undetermined(_)));
            var.value = Some(if array { super::state::Value::Undetermined(changed(&name)) } else { super::state::Value::Scalar(changed(&name)) });
            if let Some(p) = previous.globals.get(&name) {
                var.attrs.exported |= p.attrs.exported;
            }
        }
    }
    for (frame, prev) in w.frames.iter_mut().zip(&previous.frames) {
        if frame.locals == prev.locals {
            continue;
        }
        let changed_names: Vec<String> = frame.locals.iter().filter(|(name, var)| prev.locals.get(*name) != Some(var)).map(|(name, _)| name.clone()).collect();
        for name in changed_names {
            let old = frame.locals.get(&name).and_then(|v| v.as_ref());
            let attrs = old.map(|v| v.attrs).unwrap_or_default();
            let array = old.is_some_and(|v| {
                matches!(v.value, Some(super::state::Value::Indexed(_) | super::state::Value::Assoc(_) | super::state::Value::Undetermined(_)))
            });
            let value = if array { super::state::Value::Undetermined(changed(&name)) } else { super::state::Value::Scalar(changed(&name)) };
            frame.locals.insert(name.clone(), Some(super::state::Var { value: Some(value), attrs, at }));
        }
    }
    if w.cwd != previous.cwd {
        w.cwd = changed("PWD");
    }
    if w.status != previous.status {
        w.status = Status::Unknown("as the loop leaves it".into());
    }
    if w.stdin != previous.stdin {
        w.stdin = Some(Str::unknown(Why::Output("the rest of the input".into()), at, "…"));
    }
    if w.out != previous.out && w.out.is_some() {
        w.out = Some(Str::unknown(Why::Output("what the loop prints".into()), at, "$(loop output)"));
    }
    let changed_paths: Vec<String> = w.files.iter().filter(|(path, state)| previous.files.get(*path) != Some(state)).map(|(path, _)| path.clone()).collect();
    for path in changed_paths {
        w.files.insert(path.clone(), super::state::FileState::Written(Str::unknown(Why::File(path.clone()), at, path)));
    }
}

/// Paths joined: the status they agree on, else undetermined.
pub(super) fn join_status(statuses: &[Status]) -> Status {
    match statuses.first() {
        Some(first) if statuses.iter().all(|s| s == first) => first.clone(),
        Some(_) => Status::Unknown("paths disagree".into()),
        None => Status::ok(),
    }
}

enum LoopStep {
    Next(World),
    Leave(World),
}

/// Where a path goes after one pass of a loop body.
fn loop_flow(mut w: World) -> LoopStep {
    match w.flow {
        Flow::Normal => LoopStep::Next(w),
        Flow::Continue(1) => {
            w.flow = Flow::Normal;
            LoopStep::Next(w)
        }
        Flow::Continue(n) => {
            w.flow = Flow::Continue(n - 1);
            LoopStep::Leave(w)
        }
        Flow::Break(1) => {
            w.flow = Flow::Normal;
            w.status = Status::ok();
            LoopStep::Leave(w)
        }
        Flow::Break(n) => {
            w.flow = Flow::Break(n - 1);
            LoopStep::Leave(w)
        }
        Flow::Return | Flow::Exit => LoopStep::Leave(w),
    }
}
