//! Bash arithmetic (`$(( ))`, `(( ))`, `let`, array indices, `declare -i`):
//! 64-bit integers that wrap, variables read as arithmetic in their turn,
//! assignments that land in the path's variables.

use super::Interp;
use super::state::{Lookup, Value, World};
use super::value::Str;
use brush_parser::ast::{ArithmeticExpr, ArithmeticTarget, BinaryOperator, UnaryAssignmentOperator, UnaryOperator};

/// Longest arithmetic text evaluated: the parser recurses per operator.
const MAX_TEXT: usize = 4096;
/// Deepest chain of variables whose values are arithmetic themselves.
const MAX_DEPTH: usize = 32;

type Res = Result<i64, String>;

impl Interp<'_> {
    /// Evaluate arithmetic text as written in the script (expansions first).
    pub(super) fn arith_text(&mut self, w: &mut World, text: &str) -> Res {
        let at = self.at;
        let parts = self.word_parts(w, &format!("\"{}\"", text.replace('"', "\\\"")), true, at);
        let expanded = super::expand::join_parts(&parts);
        let Some(expanded) = expanded.known() else { return Err(format!("arithmetic on a value the run decides: {}", crate::provenance::clip(text))) };
        self.arith_eval_text(w, &expanded, 0)
    }

    fn arith_eval_text(&mut self, w: &mut World, text: &str, depth: usize) -> Res {
        if text.len() > MAX_TEXT || depth > MAX_DEPTH || crate::evidence::shell::syntax::too_deep(text).is_some() {
            return Err("arithmetic too large to evaluate".into());
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(0);
        }
        let expr = brush_parser::arithmetic::parse(trimmed).map_err(|_| format!("not arithmetic: {}", crate::provenance::clip(trimmed)))?;
        self.arith_eval(w, &expr, depth)
    }

    fn arith_eval(&mut self, w: &mut World, expr: &ArithmeticExpr, depth: usize) -> Res {
        match expr {
            ArithmeticExpr::Literal(n) => Ok(*n),
            ArithmeticExpr::Reference(target) => self.arith_read(w, target, depth),
            ArithmeticExpr::UnaryOp(op, x) => {
                let x = self.arith_eval(w, x, depth)?;
                Ok(match op {
                    UnaryOperator::UnaryPlus => x,
                    UnaryOperator::UnaryMinus => x.wrapping_neg(),
                    UnaryOperator::BitwiseNot => !x,
                    UnaryOperator::LogicalNot => i64::from(x == 0),
                })
            }
            ArithmeticExpr::BinaryOp(op, x, y) => {
                // `&&` and `||` short-circuit, as bash's do (assignments on the right may not run).
                match op {
                    BinaryOperator::LogicalAnd => {
                        let x = self.arith_eval(w, x, depth)?;
                        return if x == 0 { Ok(0) } else { Ok(i64::from(self.arith_eval(w, y, depth)? != 0)) };
                    }
                    BinaryOperator::LogicalOr => {
                        let x = self.arith_eval(w, x, depth)?;
                        return if x != 0 { Ok(1) } else { Ok(i64::from(self.arith_eval(w, y, depth)? != 0)) };
                    }
                    _ => {}
                }
                let x = self.arith_eval(w, x, depth)?;
                let y = self.arith_eval(w, y, depth)?;
                binary(*op, x, y)
            }
            ArithmeticExpr::Conditional(c, a, b) => {
                if self.arith_eval(w, c, depth)? != 0 {
                    self.arith_eval(w, a, depth)
                } else {
                    self.arith_eval(w, b, depth)
                }
            }
            ArithmeticExpr::Assignment(target, value) => {
                let v = self.arith_eval(w, value, depth)?;
                self.arith_write(w, target, v, depth)?;
                Ok(v)
            }
            ArithmeticExpr::BinaryAssignment(op, target, value) => {
                let old = self.arith_read(w, target, depth)?;
                let v = self.arith_eval(w, value, depth)?;
                let new = binary(*op, old, v)?;
                self.arith_write(w, target, new, depth)?;
                Ok(new)
            }
            ArithmeticExpr::UnaryAssignment(op, target) => {
                let old = self.arith_read(w, target, depth)?;
                let (new, result) = match op {
                    UnaryAssignmentOperator::PrefixIncrement => (old.wrapping_add(1), old.wrapping_add(1)),
                    UnaryAssignmentOperator::PrefixDecrement => (old.wrapping_sub(1), old.wrapping_sub(1)),
                    UnaryAssignmentOperator::PostfixIncrement => (old.wrapping_add(1), old),
                    UnaryAssignmentOperator::PostfixDecrement => (old.wrapping_sub(1), old),
                };
                self.arith_write(w, target, new, depth)?;
                Ok(result)
            }
        }
    }

    /// A variable read in arithmetic: its value is arithmetic in turn; unset is 0.
    fn arith_read(&mut self, w: &mut World, target: &ArithmeticTarget, depth: usize) -> Res {
        let (name, value) = match target {
            ArithmeticTarget::Variable(name) => (
                name.clone(),
                match w.lookup(name) {
                    Lookup::Set(var) => Ok(var.value.as_ref().and_then(Value::scalar).cloned()),
                    Lookup::Unset => Ok(None),
                    Lookup::Input => Err(format!("${name} from the run")),
                },
            ),
            ArithmeticTarget::ArrayElement(name, index) => {
                let i = self.arith_eval(w, index, depth)?;
                (
                    name.clone(),
                    match w.lookup(name) {
                        Lookup::Set(var) => Ok(match &var.value {
                            Some(Value::Indexed(map)) => map.get(&i).cloned(),
                            Some(Value::Assoc(map)) => map.get(&i.to_string()).cloned(),
                            Some(Value::Scalar(s)) if i == 0 => Some(s.clone()),
                            _ => None,
                        }),
                        Lookup::Unset => Ok(None),
                        Lookup::Input => Err(format!("${name} from the run")),
                    },
                )
            }
        };
        let value = value?;
        let Some(value) = value else { return Ok(0) };
        let Some(text) = value.known() else { return Err(format!("${name} is decided by the run")) };
        self.arith_eval_text(w, &text, depth + 1)
    }

    fn arith_write(&mut self, w: &mut World, target: &ArithmeticTarget, v: i64, depth: usize) -> Result<(), String> {
        let at = self.at;
        match target {
            ArithmeticTarget::Variable(name) => {
                self.assign_computed(w, name, Str::lit(v.to_string(), at), at);
            }
            ArithmeticTarget::ArrayElement(name, index) => {
                let i = self.arith_eval(w, index, depth)?;
                self.assign_element(w, name, &i.to_string(), Str::lit(v.to_string(), at), false);
            }
        }
        Ok(())
    }
}

fn binary(op: BinaryOperator, x: i64, y: i64) -> Res {
    Ok(match op {
        BinaryOperator::Power => {
            if y < 0 {
                return Err("exponent less than 0".into());
            }
            x.wrapping_pow(y.min(u32::MAX as i64) as u32)
        }
        BinaryOperator::Multiply => x.wrapping_mul(y),
        BinaryOperator::Divide => {
            if y == 0 {
                return Err("division by 0".into());
            }
            x.wrapping_div(y)
        }
        BinaryOperator::Modulo => {
            if y == 0 {
                return Err("division by 0".into());
            }
            x.wrapping_rem(y)
        }
        BinaryOperator::Comma => y,
        BinaryOperator::Add => x.wrapping_add(y),
        BinaryOperator::Subtract => x.wrapping_sub(y),
        BinaryOperator::ShiftLeft => x.wrapping_shl(y as u32),
        BinaryOperator::ShiftRight => x.wrapping_shr(y as u32),
        BinaryOperator::LessThan => i64::from(x < y),
        BinaryOperator::LessThanOrEqualTo => i64::from(x <= y),
        BinaryOperator::GreaterThan => i64::from(x > y),
        BinaryOperator::GreaterThanOrEqualTo => i64::from(x >= y),
        BinaryOperator::Equals => i64::from(x == y),
        BinaryOperator::NotEquals => i64::from(x != y),
        BinaryOperator::BitwiseAnd => x & y,
        BinaryOperator::BitwiseXor => x ^ y,
        BinaryOperator::BitwiseOr => x | y,
        BinaryOperator::LogicalAnd => i64::from(x != 0 && y != 0),
        BinaryOperator::LogicalOr => i64::from(x != 0 || y != 0),
    })
}
