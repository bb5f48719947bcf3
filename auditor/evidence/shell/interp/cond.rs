//! Conditions: `[[ ... ]]`, `test` and `[`, evaluated to held, failed, or
//! undetermined when they test a value or a file only the run knows.

use super::Interp;
use super::state::{Fact, Lookup, Status, World};
use super::value::{Piece, Str, Why};
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
        w.assumed = None;
        let t = self.ext(w, expr);
        keep_assumption_of_one_comparison(w, ext_comparison(expr));
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
                        let mut m = self.pattern_matches(w, &l, right);
                        if m.is_none() {
                            // A pattern without glob characters is a string comparison.
                            let r = self.expand_single(w, right);
                            if r.known().is_some_and(|t| !t.contains(['*', '?', '[', ']', '(', ')', '|', '+', '@', '!', '\\'])) {
                                m = equal(w, &l, &r);
                            }
                        }
                        if matches!(pred, BinaryPredicate::StringDoesNotExactlyMatchPattern) { negate(w, m) } else { m }
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
        w.assumed = None;
        // An operand the run decides stands in as a text of its own, so the
        // form parses; the comparisons take the operand itself.
        let texts: Vec<String> = args.iter().enumerate().map(|(i, a)| a.known().unwrap_or_else(|| stand_in(i))).collect();
        let expr = match brush_parser::test_command::parse(&texts) {
            Ok(e) => e,
            Err(_) => return Status::Known(2),
        };
        let t = self.test_expr(w, &expr, args, &texts);
        keep_assumption_of_one_comparison(w, test_comparison(&expr));
        status(t, "a test of what the run decides")
    }

    fn test_expr(&mut self, w: &mut World, expr: &TestExpr, args: &[Str], texts: &[String]) -> Tri {
        let value = |s: &str| -> Str {
            match texts.iter().position(|t| t == s) {
                Some(i) => args[i].clone(),
                None => Str::lit(s, self.at),
            }
        };
        match expr {
            TestExpr::False => Some(false),
            TestExpr::Literal(s) => known_len(&value(s)).map(|n| n > 0),
            TestExpr::And(a, b) => {
                let a = self.test_expr(w, a, args, texts);
                let b = self.test_expr(w, b, args, texts);
                and(a, || b)
            }
            TestExpr::Or(a, b) => {
                let a = self.test_expr(w, a, args, texts);
                let b = self.test_expr(w, b, args, texts);
                or(a, || b)
            }
            TestExpr::Not(a) => self.test_expr(w, a, args, texts).map(|b| !b),
            TestExpr::Parenthesized(a) => self.test_expr(w, a, args, texts),
            TestExpr::UnaryTest(pred, s) => {
                let v = value(s);
                self.unary(w, pred, &v)
            }
            TestExpr::BinaryTest(pred, l, r) => {
                let (l, r) = (value(l), value(r));
                match pred {
                    // `test` compares strings, not patterns.
                    BinaryPredicate::StringExactlyMatchesPattern => equal(w, &l, &r),
                    BinaryPredicate::StringDoesNotExactlyMatchPattern => {
                        let t = equal(w, &l, &r);
                        negate(w, t)
                    }
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
            BinaryPredicate::StringExactlyMatchesString | BinaryPredicate::StringExactlyMatchesPattern => equal(w, l, r),
            BinaryPredicate::StringDoesNotExactlyMatchString | BinaryPredicate::StringDoesNotExactlyMatchPattern => {
                let t = equal(w, l, r);
                negate(w, t)
            }
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

/// The text an undetermined operand of `test` stands in as: one of its own
/// per argument (control characters no script's literal holds).
fn stand_in(i: usize) -> String {
    format!("\u{1}unknown {i}\u{1}")
}

/// Whether two values are equal. An input variable compared with known
/// text is decided by what this path learnt of it; else what each outcome
/// tells of it is noted for the fork that follows (`World::learn`).
fn equal(w: &mut World, l: &Str, r: &Str) -> Tri {
    if let (Some(l), Some(r)) = (l.known(), r.known()) {
        return Some(l == r);
    }
    let (name, text) = match (input_name(l), r.known(), input_name(r), l.known()) {
        (Some(name), Some(text), _, _) | (_, _, Some(name), Some(text)) => (name, text),
        _ => return None,
    };
    if w.excluded.get(&name).is_some_and(|texts| texts.contains(&text)) {
        return Some(false);
    }
    w.assumed = Some(Box::new((Fact::Is(name.clone(), text.clone()), Fact::IsNot(name, text))));
    None
}

/// The opposite outcome, and the facts of its arms swapped.
fn negate(w: &mut World, t: Tri) -> Tri {
    w.negate_assumed();
    t.map(|b| !b)
}

/// The input variable a value is, whole: `$X` of a variable the inputs do not give.
fn input_name(s: &Str) -> Option<String> {
    match s.pieces() {
        [Piece::Unknown(u)] => match &u.why {
            Why::Input(name) => Some(name.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a test is one comparison (maybe negated): only then does what
/// its outcome tells hold for the arm taken.
enum Comparison {
    One,
    Negated,
    Other,
}

impl Comparison {
    fn negated(self) -> Comparison {
        match self {
            Comparison::One => Comparison::Negated,
            Comparison::Negated => Comparison::One,
            Comparison::Other => Comparison::Other,
        }
    }
}

fn test_comparison(expr: &TestExpr) -> Comparison {
    match expr {
        TestExpr::BinaryTest(..) => Comparison::One,
        TestExpr::Parenthesized(e) => test_comparison(e),
        TestExpr::Not(e) => test_comparison(e).negated(),
        _ => Comparison::Other,
    }
}

fn ext_comparison(expr: &ExtendedTestExpr) -> Comparison {
    match expr {
        ExtendedTestExpr::BinaryTest(..) => Comparison::One,
        ExtendedTestExpr::Parenthesized(e) => ext_comparison(e),
        ExtendedTestExpr::Not(e) => ext_comparison(e).negated(),
        _ => Comparison::Other,
    }
}

/// Keep the facts of a test's outcomes only when it is one comparison;
/// negated, its arms swap.
fn keep_assumption_of_one_comparison(w: &mut World, c: Comparison) {
    match c {
        Comparison::One => {}
        Comparison::Negated => w.negate_assumed(),
        Comparison::Other => w.assumed = None,
    }
}
