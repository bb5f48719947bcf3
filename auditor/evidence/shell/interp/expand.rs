//! Word expansion in bash's order: brace expansion, tilde, parameter and
//! arithmetic expansion and command substitution (left to right), word
//! splitting on `IFS`, quote removal. Pathname expansion is left out: what
//! a glob matches is the run's file system, so the word stays as written,
//! which is what bash passes on when nothing matches.

use super::pattern::{self, PatChar};
use super::state::{Lookup, Status, Value, World};
use super::value::{Piece, Place, Str, Why};
use super::{CallKind, Interp};
use brush_parser::ast;
use brush_parser::word::{
    self, BraceExpressionMember, BraceExpressionOrText, Parameter, ParameterExpr, ParameterTestType, SpecialParameter, WordPiece, WordPieceWithSource,
};
use std::rc::Rc;

/// A part of an expansion before word splitting.
#[derive(Clone, Debug)]
pub(super) enum Part {
    /// Text: `quoted` keeps empty fields alive; `split` is subject to `IFS`.
    Seg { s: Str, quoted: bool, split: bool },
    /// A field boundary (`"$@"`, `"${a[@]}"`).
    Break,
}

/// A parameter's value before the operator of its expansion.
enum PVal {
    Unset,
    One(Str),
    /// Several elements: `$@`, `${a[@]}`; `true` when joined (`$*`).
    Many(Vec<Str>, bool),
    /// From the starting environment: undetermined.
    Input(Str),
}

impl Interp<'_> {
    /// The place a word was written.
    pub(super) fn word_place(&self, word: &ast::Word) -> Place {
        word.loc.as_ref().map_or(self.at, |span| self.src.place(span.start.line))
    }

    /// A word as a command's arguments see it: zero or more fields.
    pub(super) fn expand_fields(&mut self, w: &mut World, word: &ast::Word) -> Vec<Str> {
        let at = self.word_place(word);
        let mut fields = Vec::new();
        for text in self.braces(&word.value) {
            let parts = self.word_parts(w, &text, false, at);
            fields.extend(split_fields(&parts, &ifs(w)));
            if fields.len() > self.limits.fields {
                self.trip("fields", format!("a word expanding to more than {} fields: the rest not examined", self.limits.fields));
                fields.truncate(self.limits.fields);
                break;
            }
        }
        fields
    }

    /// A word where bash does not split it (assignments, redirections,
    /// `case` subjects, here-strings): one value.
    pub(super) fn expand_single(&mut self, w: &mut World, word: &ast::Word) -> Str {
        let at = self.word_place(word);
        self.expand_text_single(w, &word.value, at)
    }

    pub(super) fn expand_text_single(&mut self, w: &mut World, text: &str, at: Place) -> Str {
        let parts = self.word_parts(w, text, false, at);
        join_parts(&parts)
    }

    /// A heredoc's body as its command reads it.
    pub(super) fn heredoc_body(&mut self, w: &mut World, doc: &ast::IoHereDocument) -> Str {
        let at = doc.doc.loc.as_ref().map_or(self.at, |span| self.src.place(span.start.line));
        let text = if doc.remove_tabs {
            doc.doc.value.lines().map(|l| format!("{}\n", l.trim_start_matches('\t'))).collect::<String>()
        } else {
            doc.doc.value.clone()
        };
        if !doc.requires_expansion {
            return lines_placed(&text, at);
        }
        match word::parse_heredoc(&text, &crate::evidence::shell::syntax::options()) {
            Ok(pieces) => {
                let mut out = Str::new();
                for piece in pieces {
                    let piece_at = line_offset(at, &text[..piece.start_index.min(text.len())]);
                    for part in self.piece_parts(w, &piece, &text, true, piece_at) {
                        if let Part::Seg { s, .. } = part {
                            out.append(&s);
                        }
                    }
                }
                out
            }
            Err(_) => {
                self.note("a heredoc body whose expansions do not parse: read as written".into());
                lines_placed(&text, at)
            }
        }
    }

    /// The brace expansions of a word's text (the text itself when it has none).
    fn braces(&mut self, text: &str) -> Vec<String> {
        if !text.contains('{') {
            return vec![text.to_string()];
        }
        match word::parse_brace_expansions(text, &crate::evidence::shell::syntax::options()) {
            Ok(Some(items)) => {
                let mut out = vec![String::new()];
                if brace_texts(&items, &mut out, self.limits.fields).is_none() {
                    self.trip("fields", format!("a brace expansion of more than {} words: not examined", self.limits.fields));
                    return vec![text.to_string()];
                }
                out
            }
            _ => vec![text.to_string()],
        }
    }

    /// The parts of a word's text, in `quoted` context.
    pub(super) fn word_parts(&mut self, w: &mut World, text: &str, quoted: bool, at: Place) -> Vec<Part> {
        let pieces = match parse_word(text) {
            Some(p) => p,
            None => {
                // What bash would refuse; kept as written, and said.
                self.note(format!("a word bash would not expand: {}", crate::provenance::clip(text)));
                return vec![Part::Seg { s: Str::lit(text, at), quoted: true, split: false }];
            }
        };
        let mut parts = Vec::new();
        for piece in pieces.iter() {
            let piece_at = line_offset(at, &text[..piece.start_index.min(text.len())]);
            parts.extend(self.piece_parts(w, piece, text, quoted, piece_at));
        }
        parts
    }

    fn piece_parts(&mut self, w: &mut World, piece: &WordPieceWithSource, text: &str, quoted: bool, at: Place) -> Vec<Part> {
        let raw = text.get(piece.start_index..piece.end_index).unwrap_or("");
        match &piece.piece {
            // Source text over several lines (a heredoc's body, a quoted string) keeps each line's place.
            WordPiece::Text(s) => vec![Part::Seg { s: lines_placed(s, at), quoted, split: false }],
            WordPiece::SingleQuotedText(s) => vec![Part::Seg { s: lines_placed(s, at), quoted: true, split: false }],
            WordPiece::AnsiCQuotedText(s) => vec![Part::Seg { s: Str::lit(ansi_c(s), at), quoted: true, split: false }],
            WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                // `""` and `"${R:-}"` are one empty field; `"$@"` (or
                // `"${R:-}${A[@]}"`) with nothing to list is none.
                let mut parts = Vec::new();
                for p in inner {
                    let p_at = line_offset(at, text.get(piece.start_index..p.start_index).unwrap_or(""));
                    parts.extend(self.piece_parts(w, p, text, true, p_at));
                }
                let lists = inner
                    .iter()
                    .any(|p| matches!(p.piece, WordPiece::ParameterExpansion(_)) && lists_fields(text.get(p.start_index..p.end_index).unwrap_or("")));
                if !lists && !parts.iter().any(|p| matches!(p, Part::Seg { .. })) {
                    parts.push(Part::Seg { s: Str::new(), quoted: true, split: false });
                }
                parts
            }
            WordPiece::EscapeSequence(s) => {
                let escaped: String = s.chars().skip(1).collect();
                let value = if escaped == "\n" { String::new() } else { escaped };
                vec![Part::Seg { s: Str::lit(value, at), quoted: true, split: false }]
            }
            WordPiece::TildeExpansion(tilde) => {
                let value = match tilde {
                    word::TildeExpr::Home => match w.scalar("HOME", at, "~") {
                        Ok(Some(home)) => home,
                        Ok(None) => self.undetermined(Why::Input("HOME".into()), "~"),
                        Err(unknown) => unknown,
                    },
                    word::TildeExpr::WorkingDir => w.cwd.clone(),
                    _ => self.undetermined(Why::Unsupported("a tilde form".into()), raw),
                };
                vec![Part::Seg { s: value, quoted: true, split: false }]
            }
            WordPiece::ParameterExpansion(expr) => {
                let saved = self.at;
                self.at = at;
                let parts = self.parameter_parts(w, expr, raw, quoted);
                self.at = saved;
                parts
            }
            WordPiece::CommandSubstitution(code) | WordPiece::BackquotedCommandSubstitution(code) => {
                let code = if matches!(piece.piece, WordPiece::BackquotedCommandSubstitution(_)) { unescape_backquoted(code) } else { code.clone() };
                let saved = self.at;
                self.at = at;
                let (out, status) = self.command_substitution(w, &code);
                self.at = saved;
                w.status = status;
                vec![Part::Seg { s: trim_newlines(out), quoted, split: !quoted }]
            }
            WordPiece::ArithmeticExpression(expr) => {
                let saved = self.at;
                self.at = at;
                let value = match self.arith_text(w, &expr.value) {
                    Ok(n) => Str::lit(n.to_string(), at),
                    Err(why) => self.undetermined(Why::Unsupported(why), raw),
                };
                self.at = saved;
                vec![Part::Seg { s: value, quoted, split: !quoted }]
            }
        }
    }

    /// Run `code` as `$(code)` on a copy of `w`: what it prints and its status.
    pub(super) fn command_substitution(&mut self, w: &World, code: &str) -> (Str, Status) {
        let at = self.at;
        // A program that prints where a package is installed (`python3 -c
        // 'import X; print(X.__file__)'`, `pip show X | grep Location`): the
        // place stands for what it prints.
        if let Some(location) = crate::evidence::shell::actions::module_location(code) {
            let mut child = w.clone();
            child.out = None;
            let _ = self.run_text_in(child, code, CallKind::Subshell);
            return (Str::lit(location, at), Status::ok());
        }
        let mut child = w.clone();
        child.out = Some(Str::new());
        let worlds = self.run_text_in(child, code, CallKind::Subshell);
        let outputs: Vec<Str> = worlds.iter().map(|c| c.out.clone().unwrap_or_default()).collect();
        let statuses: Vec<Status> = worlds.iter().map(|c| c.status.clone()).collect();
        (Str::one_of(outputs, at), super::exec::join_status(&statuses))
    }

    /// What a process substitution or a list run in a child prints.
    pub(super) fn substitute_list(&mut self, w: &World, list: &ast::CompoundList, at: Place) -> Str {
        let mut child = w.clone();
        child.out = Some(Str::new());
        self.chain.push(super::Call { kind: CallKind::Subshell, at, defined: None });
        let worlds = self.run_list(vec![child], list);
        self.chain.pop();
        Str::one_of(worlds.iter().map(|c| c.out.clone().unwrap_or_default()).collect(), at)
    }

    fn param_value(&mut self, w: &mut World, parameter: &Parameter, indirect: bool, raw: &str) -> PVal {
        let at = self.at;
        let value = match parameter {
            Parameter::Positional(0) => PVal::One(self.script_name(w)),
            Parameter::Positional(n) => match w.positional().get(*n as usize - 1) {
                Some(v) => PVal::One(v.clone()),
                None => PVal::Unset,
            },
            Parameter::Special(special) => match special {
                SpecialParameter::AllPositionalParameters { concatenate } => PVal::Many(w.positional().to_vec(), *concatenate),
                SpecialParameter::PositionalParameterCount => PVal::One(Str::lit(w.positional().len().to_string(), at)),
                SpecialParameter::LastExitStatus => match &w.status {
                    Status::Known(n) => PVal::One(Str::lit(n.to_string(), at)),
                    Status::Unknown(why) => PVal::One(self.undetermined(Why::Output(why.clone()), "$?")),
                },
                SpecialParameter::CurrentOptionFlags => PVal::One(Str::lit(if w.opts.allexport { "ahB" } else { "hB" }, at)),
                SpecialParameter::ShellName => PVal::One(self.script_name(w)),
                SpecialParameter::ProcessId | SpecialParameter::LastBackgroundProcessId => {
                    PVal::One(self.undetermined(Why::Output("a process id".into()), raw))
                }
            },
            Parameter::Named(name) => self.named_value(w, name, raw),
            Parameter::NamedWithIndex { name, index } => self.element_value(w, name, index, raw),
            Parameter::NamedWithAllIndices { name, concatenate } => match self.special_array(w, name) {
                Some(items) => PVal::Many(items, *concatenate),
                None => match w.lookup(name) {
                    Lookup::Set(var) => match &var.value {
                        Some(Value::Undetermined(s)) => PVal::Input(s.clone()),
                        Some(v) => PVal::Many(v.elements(), *concatenate),
                        None => PVal::Many(Vec::new(), *concatenate),
                    },
                    Lookup::Unset => PVal::Many(Vec::new(), *concatenate),
                    Lookup::Input => PVal::Input(self.undetermined(Why::Input(name.clone()), raw)),
                },
            },
        };
        if !indirect {
            return value;
        }
        // `${!name}`: the value names the variable to read.
        match value {
            PVal::One(s) => match s.known() {
                Some(target) => match word::parse_parameter(&target, &crate::evidence::shell::syntax::options()) {
                    Ok(p) => self.param_value(w, &p, false, raw),
                    Err(_) => PVal::Unset,
                },
                None => PVal::Input(self.undetermined(Why::Unsupported("an indirect reference to a name the run decides".into()), raw)),
            },
            PVal::Unset => PVal::Unset,
            other => other,
        }
    }

    /// `$0` and `BASH_SOURCE`: the file being run.
    fn script_name(&self, _w: &World) -> Str {
        Str::lit(self.sources.first().cloned().unwrap_or_default(), self.at)
    }

    /// Arrays bash keeps itself.
    fn special_array(&self, _w: &World, name: &str) -> Option<Vec<Str>> {
        let at = self.at;
        match name {
            "BASH_SOURCE" => Some(self.sources.iter().rev().map(|s| Str::lit(s.clone(), at)).collect()),
            "FUNCNAME" => Some(self.functions.iter().rev().map(|s| Str::lit(s.clone(), at)).chain([Str::lit("main", at)]).collect()),
            _ => None,
        }
    }

    fn named_value(&mut self, w: &mut World, name: &str, raw: &str) -> PVal {
        let at = self.at;
        match name {
            "LINENO" => return PVal::One(Str::lit(at.line.to_string(), at)),
            "RANDOM" | "SRANDOM" | "SECONDS" | "EPOCHSECONDS" | "EPOCHREALTIME" | "BASHPID" | "PPID" | "HOSTNAME" | "UID" | "EUID"
                if !matches!(w.lookup(name), Lookup::Set(_)) =>
            {
                return PVal::One(self.undetermined(Why::Output(format!("${name}")), raw));
            }
            "PWD" if !matches!(w.lookup(name), Lookup::Set(_)) => return PVal::One(w.cwd.clone()),
            "BASH_SOURCE" | "FUNCNAME" => return self.special_array(w, name).and_then(|v| v.into_iter().next()).map_or(PVal::Unset, PVal::One),
            "IFS" if !matches!(w.lookup(name), Lookup::Set(_)) => return PVal::One(Str::lit(" \t\n", at)),
            _ => {}
        }
        match w.lookup(name) {
            Lookup::Set(var) => match var.value.as_ref().and_then(Value::scalar) {
                Some(s) => PVal::One(s.clone()),
                None => PVal::Unset,
            },
            Lookup::Unset => PVal::Unset,
            Lookup::Input => PVal::Input(self.undetermined(Why::Input(name.to_string()), raw)),
        }
    }

    fn element_value(&mut self, w: &mut World, name: &str, index: &str, raw: &str) -> PVal {
        if let Some(items) = self.special_array(w, name) {
            return match self.arith_text(w, index) {
                Ok(i) => items.get(i.max(0) as usize).cloned().map_or(PVal::Unset, PVal::One),
                Err(_) => PVal::Input(self.undetermined(Why::Unsupported("an index the run decides".into()), raw)),
            };
        }
        let assoc = matches!(w.lookup(name), Lookup::Set(v) if matches!(v.value, Some(Value::Assoc(_))));
        if assoc {
            let key = self.expand_text_single(w, index, self.at);
            let Some(key) = key.known() else { return PVal::Input(self.undetermined(Why::Unsupported("a key the run decides".into()), raw)) };
            return match w.lookup(name) {
                Lookup::Set(var) => match &var.value {
                    Some(Value::Assoc(map)) => map.get(&key).cloned().map_or(PVal::Unset, PVal::One),
                    _ => PVal::Unset,
                },
                _ => PVal::Unset,
            };
        }
        let i = match self.arith_text(w, index) {
            Ok(i) => i,
            Err(_) => return PVal::Input(self.undetermined(Why::Unsupported("an index the run decides".into()), raw)),
        };
        match w.lookup(name) {
            Lookup::Set(var) => match &var.value {
                Some(Value::Indexed(map)) => {
                    let i = if i < 0 { map.keys().next_back().map_or(i, |last| last + 1 + i) } else { i };
                    map.get(&i).cloned().map_or(PVal::Unset, PVal::One)
                }
                Some(Value::Scalar(s)) if i == 0 => PVal::One(s.clone()),
                _ => PVal::Unset,
            },
            Lookup::Unset => PVal::Unset,
            Lookup::Input => PVal::Input(self.undetermined(Why::Input(name.to_string()), raw)),
        }
    }

    fn parameter_parts(&mut self, w: &mut World, expr: &ParameterExpr, raw: &str, quoted: bool) -> Vec<Part> {
        let at = self.at;
        let whole_unknown = |me: &Self| me.undetermined(Why::Unsupported("an expansion of a value the run decides".into()), raw);
        let value: PVal = match expr {
            ParameterExpr::Parameter { parameter, indirect } => self.param_value(w, parameter, *indirect, raw),
            ParameterExpr::UseDefaultValues { parameter, indirect, test_type, default_value }
            | ParameterExpr::AssignDefaultValues { parameter, indirect, test_type, default_value } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                let assign = matches!(expr, ParameterExpr::AssignDefaultValues { .. });
                match is_missing(&v, test_type) {
                    Some(false) => v,
                    Some(true) => {
                        let text = default_value.clone().unwrap_or_default();
                        let parts = self.word_parts(w, &text, quoted, at);
                        if assign && let Parameter::Named(name) = parameter {
                            let value = join_parts(&parts);
                            self.assign_computed(w, name, value, at);
                        }
                        return parts;
                    }
                    None => {
                        // Set or not, only the run knows: the value itself or the default.
                        let text = default_value.clone().unwrap_or_default();
                        let default = join_parts(&self.word_parts(w, &text, true, at));
                        let input = match v {
                            PVal::Input(s) => s,
                            _ => whole_unknown(self),
                        };
                        // Undetermined, and read as its default (what the job gets
                        // when its inputs leave the variable unset) where it is shown.
                        let shown = if default.is_empty() { raw.to_string() } else { default.display() };
                        let value = Str::unknown(Why::OneOf(vec![input.clone(), default.clone()]), at, shown);
                        if assign && let Parameter::Named(name) = parameter {
                            self.assign_computed(w, name, value.clone(), at);
                        }
                        return vec![Part::Seg { s: value, quoted, split: !quoted }];
                    }
                }
            }
            ParameterExpr::UseAlternativeValue { parameter, indirect, test_type, alternative_value } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                match is_missing(&v, test_type) {
                    Some(true) => PVal::Unset,
                    Some(false) => {
                        let text = alternative_value.clone().unwrap_or_default();
                        return self.word_parts(w, &text, quoted, at);
                    }
                    None => PVal::One(whole_unknown(self)),
                }
            }
            ParameterExpr::IndicateErrorIfNullOrUnset { parameter, indirect, test_type, .. } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                if is_missing(&v, test_type) == Some(true) {
                    // bash prints the message and the (non-interactive) shell exits.
                    w.flow = super::state::Flow::Exit;
                    w.status = Status::Known(1);
                    return Vec::new();
                }
                v
            }
            ParameterExpr::ParameterLength { parameter, indirect } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                let n = match &v {
                    PVal::Unset => Some(0),
                    PVal::One(s) => s.known().map(|s| s.chars().count()),
                    PVal::Many(items, _) => Some(items.len()),
                    PVal::Input(_) => None,
                };
                PVal::One(n.map_or_else(|| whole_unknown(self), |n| Str::lit(n.to_string(), at)))
            }
            ParameterExpr::RemoveSmallestSuffixPattern { parameter, indirect, pattern }
            | ParameterExpr::RemoveLargestSuffixPattern { parameter, indirect, pattern }
            | ParameterExpr::RemoveSmallestPrefixPattern { parameter, indirect, pattern }
            | ParameterExpr::RemoveLargestPrefixPattern { parameter, indirect, pattern } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                let pat = self.pattern_chars(w, pattern.as_deref().unwrap_or(""));
                let (suffix, longest) = match expr {
                    ParameterExpr::RemoveSmallestSuffixPattern { .. } => (true, false),
                    ParameterExpr::RemoveLargestSuffixPattern { .. } => (true, true),
                    ParameterExpr::RemoveSmallestPrefixPattern { .. } => (false, false),
                    _ => (false, true),
                };
                self.map_each(v, raw, |s| {
                    let text = s.known()?;
                    let pat = pat.as_ref()?;
                    if suffix {
                        let start = pattern::suffix_start(pat, &text, longest)?;
                        Some(s.slice_chars(0, text[..start.unwrap_or(text.len())].chars().count()))
                    } else {
                        let len = pattern::prefix_len(pat, &text, longest)?;
                        Some(s.slice_chars(text[..len.unwrap_or(0)].chars().count(), usize::MAX))
                    }
                })
            }
            ParameterExpr::Substring { parameter, indirect, offset, length } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                let off = self.arith_text(w, &offset.value).ok();
                let len = match length {
                    Some(l) => self.arith_text(w, &l.value).ok().map(Some),
                    None => Some(None),
                };
                match (v, off, len) {
                    (PVal::Many(items, c), Some(off), Some(len)) => {
                        let start = if off < 0 { items.len().saturating_sub(off.unsigned_abs() as usize) } else { off as usize };
                        let end = len.map_or(items.len(), |l| {
                            if l < 0 { items.len().saturating_sub(l.unsigned_abs() as usize) } else { start.saturating_add(l as usize) }
                        });
                        PVal::Many(items.get(start..end.min(items.len()).max(start)).map(<[Str]>::to_vec).unwrap_or_default(), c)
                    }
                    (v, Some(off), Some(len)) => self.map_each(v, raw, |s| {
                        let n = s.known()?.chars().count() as i64;
                        let start = if off < 0 { (n + off).max(0) } else { off.min(n) };
                        let end = match len {
                            None => n,
                            Some(l) if l < 0 => n + l,
                            Some(l) => (start + l).min(n),
                        };
                        if end < start {
                            return Some(Str::new());
                        }
                        Some(s.slice_chars(start as usize, end as usize))
                    }),
                    _ => PVal::One(whole_unknown(self)),
                }
            }
            ParameterExpr::Transform { parameter, indirect, op } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                use word::ParameterTransformOp as Op;
                match op {
                    Op::ToUpperCase => self.map_each(v, raw, |s| Some(s.map_known(str::to_uppercase))),
                    Op::ToLowerCase => self.map_each(v, raw, |s| Some(s.map_known(str::to_lowercase))),
                    Op::CapitalizeInitial => self.map_each(v, raw, |s| Some(Str::derived(upper_first(&s.known()?), s, at))),
                    Op::ExpandEscapeSequences => self.map_each(v, raw, |s| Some(Str::derived(ansi_c(&s.known()?), s, at))),
                    Op::Quoted => self.map_each(v, raw, |s| Some(Str::derived(format!("'{}'", s.known()?.replace('\'', r"'\''")), s, at))),
                    _ => PVal::One(whole_unknown(self)),
                }
            }
            ParameterExpr::UppercaseFirstChar { parameter, indirect, .. } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                self.map_each(v, raw, |s| Some(Str::derived(upper_first(&s.known()?), s, at)))
            }
            ParameterExpr::LowercaseFirstChar { parameter, indirect, .. } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                self.map_each(v, raw, |s| {
                    let t = s.known()?;
                    let mut c = t.chars();
                    Some(Str::derived(c.next().map(|f| f.to_lowercase().collect::<String>() + c.as_str()).unwrap_or_default(), s, at))
                })
            }
            ParameterExpr::UppercasePattern { parameter, indirect, .. } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                self.map_each(v, raw, |s| Some(s.map_known(str::to_uppercase)))
            }
            ParameterExpr::LowercasePattern { parameter, indirect, .. } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                self.map_each(v, raw, |s| Some(s.map_known(str::to_lowercase)))
            }
            ParameterExpr::ReplaceSubstring { parameter, indirect, pattern, replacement, match_kind } => {
                let v = self.param_value(w, parameter, *indirect, raw);
                let pat = self.pattern_chars(w, pattern);
                let rep = self.expand_text_single(w, replacement.as_deref().unwrap_or(""), at);
                let (all, anchor) = match match_kind {
                    word::SubstringMatchKind::Anywhere => (true, None),
                    word::SubstringMatchKind::FirstOccurrence => (false, None),
                    word::SubstringMatchKind::Prefix => (false, Some(true)),
                    word::SubstringMatchKind::Suffix => (false, Some(false)),
                };
                self.map_each(v, raw, |s| {
                    let text = s.known()?;
                    let rep_text = rep.known()?;
                    let out = pattern::replace(pat.as_ref()?, &text, &rep_text, all, anchor)?;
                    if out == text {
                        return Some(s.clone());
                    }
                    // The replacement's place when it brought text in, else the value's.
                    let place = if rep_text.is_empty() { s.first_place().unwrap_or(at) } else { rep.first_place().unwrap_or(at) };
                    Some(Str::lit(out, place))
                })
            }
            ParameterExpr::VariableNames { prefix, concatenate } => {
                let names: Vec<Str> = w.visible().keys().filter(|n| n.starts_with(prefix.as_str())).map(|n| Str::lit(n.clone(), at)).collect();
                PVal::Many(names, *concatenate)
            }
            ParameterExpr::MemberKeys { variable_name, concatenate } => match w.lookup(variable_name) {
                Lookup::Set(var) => {
                    let keys: Vec<Str> = match &var.value {
                        Some(Value::Indexed(map)) => map.keys().map(|k| Str::lit(k.to_string(), at)).collect(),
                        Some(Value::Assoc(map)) => map.keys().map(|k| Str::lit(k.clone(), at)).collect(),
                        Some(Value::Scalar(_)) => vec![Str::lit("0", at)],
                        Some(Value::Undetermined(_)) => return pval_parts(PVal::Input(whole_unknown(self)), quoted, &ifs(w), at),
                        None => Vec::new(),
                    };
                    PVal::Many(keys, *concatenate)
                }
                Lookup::Unset => PVal::Many(Vec::new(), *concatenate),
                Lookup::Input => PVal::Input(whole_unknown(self)),
            },
        };
        pval_parts(value, quoted, &ifs(w), at)
    }

    /// Apply `f` to each element of a value; an element it cannot compute
    /// is undetermined.
    fn map_each(&self, v: PVal, raw: &str, f: impl Fn(&Str) -> Option<Str>) -> PVal {
        let unknown = || self.undetermined(Why::Unsupported("an expansion of a value the run decides".into()), raw);
        match v {
            PVal::Unset => match f(&Str::new()) {
                Some(s) if !s.is_empty() => PVal::One(s),
                _ => PVal::Unset,
            },
            PVal::One(s) => PVal::One(f(&s).unwrap_or_else(unknown)),
            PVal::Many(items, c) => PVal::Many(items.iter().map(|s| f(s).unwrap_or_else(unknown)).collect(), c),
            PVal::Input(_) => PVal::One(unknown()),
        }
    }

    /// A pattern's characters after expansion; `None` when part of it is undetermined.
    pub(super) fn pattern_chars(&mut self, w: &mut World, text: &str) -> Option<Vec<PatChar>> {
        let at = self.at;
        let parts = self.word_parts(w, text, false, at);
        let mut out = Vec::new();
        for part in parts {
            if let Part::Seg { s, quoted, split } = part {
                let text = s.known()?;
                // Unquoted text and unquoted expansions keep their pattern characters.
                let literal = quoted && !split;
                out.extend(text.chars().map(|c| PatChar { c, quoted: literal }));
            }
        }
        Some(out)
    }

    /// Whether `subject` matches the pattern `word` (case arms, `[[ == ]]`).
    pub(super) fn pattern_matches(&mut self, w: &mut World, subject: &Str, word: &ast::Word) -> Option<bool> {
        let pat = self.pattern_chars(w, &word.value)?;
        let text = subject.known()?;
        pattern::matches(&pat, &text)
    }
}

/// A word's pieces, parsed once per text for the whole process (brush's
/// own cache keeps 64 words; a tree's scripts have tens of thousands).
fn parse_word(text: &str) -> Option<Rc<Vec<WordPieceWithSource>>> {
    type Words = std::collections::HashMap<String, Option<Rc<Vec<WordPieceWithSource>>>>;
    // Per thread: the words of a library every script sources recur in
    // each evaluation a thread runs, and no lock is shared between threads.
    thread_local! {
        static WORDS: std::cell::RefCell<Words> = Default::default();
    }
    if let Some(hit) = WORDS.with_borrow(|w| w.get(text).cloned()) {
        return hit;
    }
    let parsed = word::parse(text, &crate::evidence::shell::syntax::options()).ok().map(Rc::new);
    WORDS.with_borrow_mut(|words| {
        if words.len() >= 65_536 {
            words.clear();
        }
        words.insert(text.to_string(), parsed.clone());
    });
    parsed
}

/// Whether a parameter is "missing" for `:-`-style tests: `None` when only the run knows.
fn is_missing(v: &PVal, test: &ParameterTestType) -> Option<bool> {
    match v {
        PVal::Unset => Some(true),
        PVal::One(s) => match test {
            ParameterTestType::Unset => Some(false),
            ParameterTestType::UnsetOrNull => {
                if s.is_empty() {
                    Some(true)
                } else if s.pieces().iter().any(|p| matches!(p, Piece::Lit { text, .. } if !text.is_empty())) {
                    Some(false)
                } else {
                    None
                }
            }
        },
        PVal::Many(items, _) => Some(items.is_empty()),
        PVal::Input(_) => None,
    }
}

/// The parts of a parameter's value in its quoting context.
fn pval_parts(v: PVal, quoted: bool, ifs: &str, at: Place) -> Vec<Part> {
    match v {
        PVal::Unset => vec![Part::Seg { s: Str::new(), quoted, split: false }],
        PVal::One(s) | PVal::Input(s) => vec![Part::Seg { s, quoted, split: !quoted }],
        PVal::Many(items, true) => {
            let sep = if quoted { ifs.chars().next().map(String::from).unwrap_or_default() } else { " ".to_string() };
            let mut joined = Str::new();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    joined.push_str(&sep, at);
                }
                joined.append(item);
            }
            vec![Part::Seg { s: joined, quoted, split: !quoted }]
        }
        PVal::Many(items, false) => {
            let mut parts = Vec::new();
            for (i, item) in items.into_iter().enumerate() {
                if i > 0 {
                    parts.push(Part::Break);
                }
                parts.push(Part::Seg { s: item, quoted, split: !quoted });
            }
            parts
        }
    }
}

/// The value of `IFS` on this path.
fn ifs(w: &World) -> String {
    match w.lookup("IFS") {
        Lookup::Set(var) => var.value.as_ref().and_then(Value::scalar).and_then(Str::known).unwrap_or_else(|| " \t\n".into()),
        Lookup::Unset | Lookup::Input => " \t\n".into(),
    }
}

/// Parts joined as one value (no splitting).
pub(super) fn join_parts(parts: &[Part]) -> Str {
    let mut out = Str::new();
    let mut first = true;
    for part in parts {
        match part {
            Part::Seg { s, .. } => out.append(s),
            Part::Break => {
                if !first {
                    out.push_str(" ", Place::default());
                }
            }
        }
        first = false;
    }
    out
}

/// Word splitting: the fields of a word's parts.
/// A parameter expansion that lists fields and may list none, inside
/// double quotes too: `$@`, `${@:2}`, `${A[@]}`, `${!A[@]}` (not
/// `${A[@]:-x}`, which gives its word when there is nothing).
fn lists_fields(raw: &str) -> bool {
    if raw == "$@" {
        return true;
    }
    let Some(body) = raw.strip_prefix("${").and_then(|b| b.strip_suffix('}')) else { return false };
    let rest = match body.strip_prefix('@') {
        Some(rest) => rest,
        None => match body.find("[@]") {
            Some(i) => &body[i + 3..],
            None => return false,
        },
    };
    let defaulting = rest.starts_with([':', '-', '+', '=', '?'])
        && !rest.strip_prefix(':').is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == ' ' || c == '$' || c == '('));
    rest.is_empty() || !defaulting
}

pub(super) fn split_fields(parts: &[Part], ifs: &str) -> Vec<Str> {
    let mut fields = Vec::new();
    let mut cur = Str::new();
    let mut alive = false;
    let is_ws = |c: char| c == ' ' || c == '\t' || c == '\n';
    for part in parts {
        match part {
            Part::Break => {
                if alive || !cur.is_empty() {
                    fields.push(std::mem::take(&mut cur));
                }
                alive = false;
            }
            Part::Seg { s, quoted, split } => {
                if *quoted {
                    alive = true;
                }
                if !split {
                    cur.append(s);
                    continue;
                }
                for piece in s.pieces() {
                    match piece {
                        Piece::Lit { text, at } => {
                            let mut word = String::new();
                            for c in text.chars() {
                                if ifs.contains(c) {
                                    if !word.is_empty() {
                                        cur.push_str(&word, *at);
                                        word.clear();
                                    }
                                    if alive || !cur.is_empty() || !is_ws(c) {
                                        fields.push(std::mem::take(&mut cur));
                                    }
                                    alive = false;
                                } else {
                                    word.push(c);
                                }
                            }
                            if !word.is_empty() {
                                cur.push_str(&word, *at);
                            }
                        }
                        unknown => cur.push(unknown.clone()),
                    }
                }
            }
        }
    }
    if alive || !cur.is_empty() {
        fields.push(cur);
    }
    fields
}

/// The text with each line placed at its own line, from `at`.
fn lines_placed(text: &str, at: Place) -> Str {
    let mut out = Str::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        out.push_str(line, Place { line: at.line + i as u32, ..at });
    }
    out
}

/// `at` moved down by the newlines of `before`.
fn line_offset(at: Place, before: &str) -> Place {
    let n = before.bytes().filter(|b| *b == b'\n').count() as u32;
    Place { line: at.line + n, ..at }
}

/// Trailing newlines removed, as command substitution removes them.
pub(super) fn trim_newlines(s: Str) -> Str {
    let mut pieces: Vec<Piece> = s.pieces().to_vec();
    while let Some(Piece::Lit { text, .. }) = pieces.last_mut() {
        let trimmed = text.trim_end_matches('\n').len();
        if trimmed == 0 {
            pieces.pop();
            continue;
        }
        text.truncate(trimmed);
        break;
    }
    let mut out = Str::new();
    for p in pieces {
        out.push(p);
    }
    out
}

/// The texts of a brace expansion, appended to each of `out`; `None` past `limit`.
fn brace_texts(items: &[BraceExpressionOrText], out: &mut Vec<String>, limit: usize) -> Option<()> {
    for item in items {
        match item {
            BraceExpressionOrText::Text(t) => out.iter_mut().for_each(|o| o.push_str(t)),
            BraceExpressionOrText::Expr(members) => {
                let mut alternatives: Vec<String> = Vec::new();
                for member in members {
                    match member {
                        BraceExpressionMember::NumberSequence { start, end, increment } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = ((*start).min(*end), (*start).max(*end));
                            if (hi - lo) as u128 / step as u128 > limit as u128 {
                                return None;
                            }
                            let mut nums: Vec<i64> = (lo..=hi).step_by(step).collect();
                            if start > end {
                                nums.reverse();
                            }
                            alternatives.extend(nums.iter().map(i64::to_string));
                        }
                        BraceExpressionMember::CharSequence { start, end, increment } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = ((*start).min(*end), (*start).max(*end));
                            let mut chars: Vec<char> = (lo..=hi).step_by(step).collect();
                            if start > end {
                                chars.reverse();
                            }
                            alternatives.extend(chars.iter().map(char::to_string));
                        }
                        BraceExpressionMember::Child(children) => {
                            let mut sub = vec![String::new()];
                            brace_texts(children, &mut sub, limit)?;
                            alternatives.extend(sub);
                        }
                    }
                }
                if out.len().saturating_mul(alternatives.len()) > limit {
                    return None;
                }
                *out = out.iter().flat_map(|o| alternatives.iter().map(move |a| format!("{o}{a}"))).collect();
            }
        }
    }
    Some(())
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

/// A backquoted substitution's text as bash runs it: `\$`, `` \` `` and `\\` unescaped.
fn unescape_backquoted(code: &str) -> String {
    let mut out = String::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && matches!(n, '$' | '`' | '\\')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// `$'...'` text decoded as bash decodes it.
pub(super) fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut hex = String::new();
                while hex.len() < max && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    hex.push(chars.next().expect("peeked"));
                }
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if !hex.is_empty() => out.push(ch),
                    _ => {
                        out.push('\\');
                        out.push(e);
                        out.push_str(&hex);
                    }
                }
            }
            '0'..='7' => {
                let mut oct = e.to_string();
                while oct.len() < 3 && chars.peek().is_some_and(|c| ('0'..='7').contains(c)) {
                    oct.push(chars.next().expect("peeked"));
                }
                if let Some(ch) = u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            'c' => {
                if let Some(n) = chars.next() {
                    out.push(char::from((n as u8) & 0x1f));
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}
