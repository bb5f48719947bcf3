//! Conditions: `[[ ... ]]`, `test` and `[`, evaluated to held, failed, or
//! undetermined when they test a value or a file only the run knows.

use super::Interp;
use super::state::{Lookup, Status, World};
use super::value::Str;
use brush_parser::ast::{BinaryPredicate, ExtendedTestExpr, TestExpr, UnaryPredicate};

/// Three-valued truth.
type Tri = Option<bool>;

fn status(t: Tri, what: &str) -> Status {
    match t {
        Some(b) => Status::from_bool(b),
        None => Status::Unknown(what.to_string()),
    }
}

fn and(a: Tri, b: impl FnOnce() -> Tri) -> Tri {
    match a {
        Some(false) => Some(false),
        Some(true) => b(),
        None => match b() {
            Some(false) => Some(false),
            _ => None,
        },
    }
}

fn or(a: Tri, b: impl FnOnce() -> Tri) -> Tri {
    match a {
        Some(true) => Some(true),
        Some(false) => b(),
        None => match b() {
            Some(true) => Some(true),
            _ => None,
        },
    }
}

impl Interp<'_> {
    pub(super) fn extended_test(&mut self, w: &mut World, expr: &ExtendedTestExpr) -> Status {
        let t = self.ext(w, expr);
        status(t, "a [[ ]] test of what the run decides")
    }

    fn ext(&mut self, w: &mut World, expr: &ExtendedTestExpr) -> Tri {
        match expr {
            ExtendedTestExpr::And(a, b) => {
                let a = self.ext(w, a);
                if a == Some(false) {
                    return Some(false);
                }
                let b = self.ext(w, b);
                and(a, || b)
            }
            ExtendedTestExpr::Or(a, b) => {
                let a = self.ext(w, a);
                if a == Some(true) {
                    return Some(true);
                }
                let b = self.ext(w, b);
                or(a, || b)
            }
            ExtendedTestExpr::Not(a) => self.ext(w, a).map(|b| !b),
            ExtendedTestExpr::Parenthesized(a) => self.ext(w, a),
            ExtendedTestExpr::UnaryTest(pred, word) => {
                let value = self.expand_single(w, word);
                self.unary(w, pred, &value)
            }
            ExtendedTestExpr::BinaryTest(pred, left, right) => {
                let l = self.expand_single(w, left);
                match pred {
                    BinaryPredicate::StringExactlyMatchesPattern | BinaryPredicate::StringDoesNotExactlyMatchPattern => {
                        let m = self.pattern_matches(w, &l, right);
                        if matches!(pred, BinaryPredicate::StringDoesNotExactlyMatchPattern) { m.map(|b| !b) } else { m }
                    }
                    BinaryPredicate::StringMatchesRegex => {
                        let r = self.expand_single(w, right);
                        let (l, r) = (l.known()?, r.known()?);
                        let re = regex::RegexBuilder::new(&r).size_limit(1 << 20).build().ok()?;
                        let caps = re.captures(&l);
                        self.set_rematch(w, caps.as_ref());
                        Some(caps.is_some())
                    }
                    _ => {
                        let r = self.expand_single(w, right);
                        self.binary(w, pred, &l, &r)
                    }
                }
            }
        }
    }

    /// `BASH_REMATCH` after `=~`.
    fn set_rematch(&mut self, w: &mut World, caps: Option<&regex::Captures>) {
        let at = self.at;
        let items: std::collections::BTreeMap<i64, Str> =
            caps.map(|c| c.iter().enumerate().map(|(i, m)| (i as i64, Str::lit(m.map_or("", |m| m.as_str()), at))).collect()).unwrap_or_default();
        w.assign("BASH_REMATCH", super::state::Value::Indexed(items), at);
    }

    /// `test ARGS` / `[ ARGS ]`, the arguments expanded.
    pub(super) fn test_command(&mut self, w: &mut World, args: &[Str]) -> Status {
        let mut texts = Vec::new();
        for a in args {
            match a.known() {
                Some(t) => texts.push(t),
                // An operand the run decides: keep a stand-in so the form parses, and decide nothing.
                None => texts.push("\u{1}unknown\u{1}".to_string()),
            }
        }
        let unknown = texts.iter().any(|t| t == "\u{1}unknown\u{1}");
        let expr = match brush_parser::test_command::parse(&texts) {
            Ok(e) => e,
            Err(_) => return Status::Known(2),
        };
        let t = self.test_expr(w, &expr, args);
        match t {
            Some(b) if !unknown || self.decided_without_unknowns(&expr) => Status::from_bool(b),
            Some(_) | None => status(None, "a test of what the run decides"),
        }
    }

    /// A `test` whose stand-ins were never compared (an `||` decided first) is decided.
    fn decided_without_unknowns(&self, _expr: &TestExpr) -> bool {
        false
    }

    fn test_expr(&mut self, w: &mut World, expr: &TestExpr, args: &[Str]) -> Tri {
        let value = |s: &str| -> Option<Str> {
            if s == "\u{1}unknown\u{1}" {
                return None;
            }
            Some(args.iter().find(|a| a.known().as_deref() == Some(s)).cloned().unwrap_or_else(|| Str::lit(s, self.at)))
        };
        match expr {
            TestExpr::False => Some(false),
            TestExpr::Literal(s) => Some(value(s)?.known().is_some_and(|t| !t.is_empty())),
            TestExpr::And(a, b) => {
                let a = self.test_expr(w, a, args);
                let b = self.test_expr(w, b, args);
                and(a, || b)
            }
            TestExpr::Or(a, b) => {
                let a = self.test_expr(w, a, args);
                let b = self.test_expr(w, b, args);
                or(a, || b)
            }
            TestExpr::Not(a) => self.test_expr(w, a, args).map(|b| !b),
            TestExpr::Parenthesized(a) => self.test_expr(w, a, args),
            TestExpr::UnaryTest(pred, s) => {
                let v = value(s)?;
                self.unary(w, pred, &v)
            }
            TestExpr::BinaryTest(pred, l, r) => {
                let (l, r) = (value(l)?, value(r)?);
                match pred {
                    // `test` compares strings, not patterns.
                    BinaryPredicate::StringExactlyMatchesPattern => Some(l.known()? == r.known()?),
                    BinaryPredicate::StringDoesNotExactlyMatchPattern => Some(l.known()? != r.known()?),
                    _ => self.binary(w, pred, &l, &r),
                }
            }
        }
    }

    fn unary(&mut self, w: &mut World, pred: &UnaryPredicate, value: &Str) -> Tri {
        match pred {
            UnaryPredicate::StringHasZeroLength => Some(known_len(value)? == 0),
            UnaryPredicate::StringHasNonZeroLength => Some(known_len(value)? != 0),
            UnaryPredicate::ShellVariableIsSetAndAssigned | UnaryPredicate::ShellVariableIsSetAndNameRef => {
                let name = value.known()?;
                match w.lookup(&name) {
                    Lookup::Set(var) => Some(var.value.is_some()),
                    Lookup::Unset => Some(false),
                    Lookup::Input => None,
                }
            }
            UnaryPredicate::ShellOptionEnabled => None,
            UnaryPredicate::FdIsOpenTerminal => Some(false),
            _ => {
                // A file test: known only for files this path wrote or removed.
                let path = value.known()?;
                let path = super::programs::absolute(&w.cwd, &path)?;
                match w.files.get(&path) {
                    Some(super::state::FileState::Written(_)) => match pred {
                        UnaryPredicate::FileExistsAndIsDir => Some(false),
                        _ => Some(true),
                    },
                    Some(super::state::FileState::Removed) => Some(false),
                    None => None,
                }
            }
        }
    }

    fn binary(&mut self, w: &mut World, pred: &BinaryPredicate, l: &Str, r: &Str) -> Tri {
        let int = |me: &mut Self, w: &mut World, s: &Str| -> Option<i64> {
            let t = s.known()?;
            me.arith_text(w, &t).ok()
        };
        match pred {
            BinaryPredicate::StringExactlyMatchesString | BinaryPredicate::StringExactlyMatchesPattern => Some(l.known()? == r.known()?),
            BinaryPredicate::StringDoesNotExactlyMatchString | BinaryPredicate::StringDoesNotExactlyMatchPattern => Some(l.known()? != r.known()?),
            BinaryPredicate::StringContainsSubstring => Some(l.known()?.contains(&r.known()?)),
            BinaryPredicate::LeftSortsBeforeRight => Some(l.known()? < r.known()?),
            BinaryPredicate::LeftSortsAfterRight => Some(l.known()? > r.known()?),
            BinaryPredicate::ArithmeticEqualTo => Some(int(self, w, l)? == int(self, w, r)?),
            BinaryPredicate::ArithmeticNotEqualTo => Some(int(self, w, l)? != int(self, w, r)?),
            BinaryPredicate::ArithmeticLessThan => Some(int(self, w, l)? < int(self, w, r)?),
            BinaryPredicate::ArithmeticLessThanOrEqualTo => Some(int(self, w, l)? <= int(self, w, r)?),
            BinaryPredicate::ArithmeticGreaterThan => Some(int(self, w, l)? > int(self, w, r)?),
            BinaryPredicate::ArithmeticGreaterThanOrEqualTo => Some(int(self, w, l)? >= int(self, w, r)?),
            BinaryPredicate::StringMatchesRegex => None,
            _ => None,
        }
    }
}

/// The length of a value when it is known to be empty or not.
fn known_len(value: &Str) -> Option<usize> {
    if let Some(t) = value.known() {
        return Some(t.len());
    }
    // Known text around an unknown part: not empty, whatever the part is.
    let has_text = value.pieces().iter().any(|p| matches!(p, super::value::Piece::Lit { text, .. } if !text.is_empty()));
    has_text.then_some(1)
}
