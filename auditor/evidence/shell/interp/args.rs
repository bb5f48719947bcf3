//! A command's arguments as the command receives them: words, and the
//! assignments a declaration builtin takes (`export A=$X`), expanded and not
//! yet made. Shared by the simple-command runner, the builtins and the
//! programs, which is why they live apart from all three.

use super::value::{Place, Str};

/// A command's argument as the command receives it.
#[derive(Clone, Debug)]
pub(super) enum Arg {
    Word(Str),
    /// `NAME=value` written as an assignment after a declaration builtin
    /// (`export A=$X`: not split).
    Assign(Pending),
}

impl Arg {
    /// The text a program would see.
    pub(super) fn text(&self) -> Str {
        match self {
            Arg::Word(s) => s.clone(),
            Arg::Assign(p) => {
                let mut s = Str::lit(p.name.clone(), p.name_at);
                s.push_str(if p.append { "+=" } else { "=" }, p.name_at);
                match &p.value {
                    PendingValue::Scalar(v) => s.append(v),
                    PendingValue::Array(items) => {
                        s.push_str("(", p.name_at);
                        for (i, (_, v)) in items.iter().enumerate() {
                            if i > 0 {
                                s.push_str(" ", p.name_at);
                            }
                            s.append(v);
                        }
                        s.push_str(")", p.name_at);
                    }
                }
                s
            }
        }
    }
}

/// An assignment expanded and not yet made.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    /// The name, with `[index]` for an element.
    pub name: String,
    pub index: Option<String>,
    pub value: PendingValue,
    pub append: bool,
    pub name_at: Place,
}

#[derive(Clone, Debug)]
pub(super) enum PendingValue {
    Scalar(Str),
    /// `(a b [k]=c)`: each element with its key.
    Array(Vec<(Option<Str>, Str)>),
}
