//! Values as the interpreter knows them: text whose every part is either
//! known, with the place it was written, or undetermined, with why.
//!
//! The place travels with the text through variables, function arguments,
//! arrays and command output, so that a setting assembled elsewhere is cited
//! where its text was written: `setenv NAME 1` at the call site, a `.env`
//! line where the file says it.

use std::fmt;
use std::sync::Arc;

/// Most values one "one of" keeps apart.
const MAX_CHOICES: usize = 8;

/// A line of a file the interpreter read: `file` indexes
/// [`super::Evaluation::files`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Place {
    pub file: u32,
    pub line: u32,
}

/// Why part of a value is not known before the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// A variable of the environment the script starts with, which the
    /// inputs do not give.
    Input(String),
    /// What a program prints (or whether it succeeds) when it runs.
    Output(String),
    /// Paths through the script that disagree: one of these values.
    OneOf(Vec<Str>),
    /// A file the script reads that the interpreter does not have.
    File(String),
    /// Something the interpreter does not evaluate (named).
    Unsupported(String),
}

/// An undetermined part of a value: why, where, and the text that stands for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown {
    pub why: Why,
    pub at: Place,
    /// How it reads in the script (`$MODEL`, `$(curl ...)`), for reports.
    pub text: String,
}

/// One part of a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Lit { text: String, at: Place },
    Unknown(Arc<Unknown>),
}

/// A value: known and unknown parts in order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Str {
    pieces: Vec<Piece>,
}

impl Str {
    pub fn new() -> Str {
        Str::default()
    }

    /// Known text written at `at`.
    pub fn lit(text: impl Into<String>, at: Place) -> Str {
        let text = text.into();
        if text.is_empty() {
            return Str::new();
        }
        Str { pieces: vec![Piece::Lit { text, at }] }
    }

    /// An undetermined value.
    pub fn unknown(why: Why, at: Place, text: impl Into<String>) -> Str {
        Str { pieces: vec![Piece::Unknown(Arc::new(Unknown { why, at, text: text.into() }))] }
    }

    /// One of `values`, as paths that disagree leave it: the value itself
    /// when they all agree. Nested choices are flattened and put in a
    /// canonical order, so that joining the same values again gives the
    /// same value (the interpreter's loops stop when states repeat).
    pub fn one_of(values: Vec<Str>, at: Place) -> Str {
        let mut distinct: Vec<Str> = Vec::new();
        for v in values {
            let alternatives = match v.pieces.as_slice() {
                [Piece::Unknown(u)] => match &u.why {
                    Why::OneOf(inner) => inner.clone(),
                    _ => vec![v],
                },
                _ => vec![v],
            };
            for a in alternatives {
                // Values that read the same are the same value, wherever each was written.
                if !distinct.iter().any(|d| d.display() == a.display()) {
                    distinct.push(a);
                }
            }
        }
        if distinct.len() == 1 {
            return distinct.pop().unwrap_or_default();
        }
        distinct.sort_by_cached_key(Str::display);
        if distinct.len() > MAX_CHOICES {
            return Str::unknown(Why::Unsupported(format!("one of {} values", distinct.len())), at, "one of many values");
        }
        let text = distinct.iter().map(Str::display).collect::<Vec<_>>().join(" | ");
        Str::unknown(Why::OneOf(distinct), at, format!("one of: {text}"))
    }

    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The whole text, when every part is known.
    pub fn known(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit { text, .. } => out.push_str(text),
                Piece::Unknown(_) => return None,
            }
        }
        Some(out)
    }

    pub fn is_known(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Lit { .. }))
    }

    /// The known text before the first unknown part.
    pub fn known_prefix(&self) -> String {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit { text, .. } => out.push_str(text),
                Piece::Unknown(_) => break,
            }
        }
        out
    }

    /// The value for people: unknown parts as they read in the script.
    pub fn display(&self) -> String {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit { text, .. } => out.push_str(text),
                Piece::Unknown(u) => out.push_str(&u.text),
            }
        }
        out
    }

    /// The unknown parts.
    pub fn unknowns(&self) -> impl Iterator<Item = &Unknown> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Unknown(u) => Some(u.as_ref()),
            Piece::Lit { .. } => None,
        })
    }

    /// Where the known text was written, in order, without repeats.
    pub fn places(&self) -> Vec<Place> {
        let mut out: Vec<Place> = Vec::new();
        for p in &self.pieces {
            let at = match p {
                Piece::Lit { at, .. } => *at,
                Piece::Unknown(u) => u.at,
            };
            if out.last() != Some(&at) {
                out.push(at);
            }
        }
        out
    }

    pub fn push(&mut self, piece: Piece) {
        if let Piece::Lit { text, .. } = &piece
            && text.is_empty()
        {
            return;
        }
        if let (Some(Piece::Lit { text: last, at: last_at }), Piece::Lit { text, at }) = (self.pieces.last_mut(), &piece)
            && last_at == at
        {
            last.push_str(text);
            return;
        }
        self.pieces.push(piece);
    }

    pub fn push_str(&mut self, text: &str, at: Place) {
        self.push(Piece::Lit { text: text.to_string(), at });
    }

    pub fn append(&mut self, other: &Str) {
        for p in &other.pieces {
            self.push(p.clone());
        }
    }

    pub fn concat(mut self, other: &Str) -> Str {
        self.append(other);
        self
    }

    /// The text with every known character mapped by `f` (case changes);
    /// unknown parts stay.
    pub fn map_known(&self, f: impl Fn(&str) -> String) -> Str {
        let mut out = Str::new();
        for p in &self.pieces {
            match p {
                Piece::Lit { text, at } => out.push_str(&f(text), *at),
                u => out.push(u.clone()),
            }
        }
        out
    }

    /// Characters `[start, end)` of a fully known value, keeping each
    /// character's place.
    pub fn slice_chars(&self, start: usize, end: usize) -> Str {
        let mut out = Str::new();
        let mut i = 0;
        for p in &self.pieces {
            match p {
                Piece::Lit { text, at } => {
                    let n = text.chars().count();
                    let (s, e) = (start.max(i), end.min(i + n));
                    if s < e {
                        out.push_str(&text.chars().skip(s - i).take(e - s).collect::<String>(), *at);
                    }
                    i += n;
                }
                Piece::Unknown(_) => return Str::new(),
            }
        }
        out
    }

    /// The value split at `sep` (a known character), each part with its places.
    pub fn split_char(&self, sep: char) -> Vec<Str> {
        let mut out = vec![Str::new()];
        for p in &self.pieces {
            match p {
                Piece::Lit { text, at } => {
                    let mut parts = text.split(sep);
                    if let Some(first) = parts.next() {
                        out.last_mut().expect("one part").push_str(first, *at);
                    }
                    for part in parts {
                        out.push(Str::lit(part, *at));
                    }
                }
                u => out.last_mut().expect("one part").push(u.clone()),
            }
        }
        out
    }

    /// The first place of the value's known text, else of its first part.
    pub fn first_place(&self) -> Option<Place> {
        self.pieces.iter().find_map(|p| match p {
            Piece::Lit { at, .. } => Some(*at),
            Piece::Unknown(_) => None,
        })
    }

    /// Rebuild the value from known text, keeping the place of the first
    /// known part (for text a program computed from the value).
    pub fn derived(text: impl Into<String>, from: &Str, at: Place) -> Str {
        Str::lit(text, from.first_place().unwrap_or(at))
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32) -> Place {
        Place { file: 0, line }
    }

    #[test]
    fn pieces_keep_their_places_through_concatenation() {
        let mut v = Str::lit("SGLANG_", at(2));
        v.append(&Str::lit("X", at(5)));
        v.push_str("=1", at(5));
        assert_eq!(v.known().as_deref(), Some("SGLANG_X=1"));
        assert_eq!(v.places(), vec![at(2), at(5)]);
        let parts = v.split_char('=');
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].known().as_deref(), Some("SGLANG_X"));
        assert_eq!(parts[1].places(), vec![at(5)]);
    }

    #[test]
    fn unknown_parts_make_a_value_undetermined() {
        let mut v = Str::lit("--tp ", at(1));
        v.append(&Str::unknown(Why::Input("TP".into()), at(1), "$TP"));
        assert_eq!(v.known(), None);
        assert_eq!(v.display(), "--tp $TP");
        assert_eq!(v.known_prefix(), "--tp ");
        assert_eq!(Str::one_of(vec![Str::lit("1", at(1)), Str::lit("1", at(1))], at(1)).known().as_deref(), Some("1"));
        assert!(Str::one_of(vec![Str::lit("1", at(1)), Str::lit("0", at(2))], at(3)).known().is_none());
    }

    #[test]
    fn slices_keep_places() {
        let v = Str::lit("ab", at(1)).concat(&Str::lit("cd", at(2)));
        let s = v.slice_chars(1, 3);
        assert_eq!(s.known().as_deref(), Some("bc"));
        assert_eq!(s.places(), vec![at(1), at(2)]);
    }
}
