//! Which runs a shell statement belongs to. One InferenceX launch script
//! serves throughput jobs and eval-only jobs and branches on `EVAL_ONLY`
//! (`if [ "$EVAL_ONLY" != true ]; then export SGLANG_SIMULATE_ACC_LEN=...; fi`,
//! `[[ ${EVAL_ONLY:-false} == "true" ]] && ...`), so what a script puts into
//! the server's environment depends on the kind of job running it. This
//! module reads those tests and follows them through `if`/`elif`/`else`
//! blocks and `&&`/`||` lists, so that every statement knows whether it
//! runs always, only for eval-only jobs, or only for the others. A test of
//! anything else does not split the runs: both sides of it count for both.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// The runs a statement takes part in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    #[default]
    Always,
    /// Only when `EVAL_ONLY` is `true`: eval-only jobs.
    EvalOnly,
    /// Only when `EVAL_ONLY` is not `true`: throughput jobs.
    NotEval,
    /// Under contradicting conditions: never.
    Never,
}

/// The two kinds of run a script is a job for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    Throughput,
    EvalOnly,
}

impl Gate {
    pub fn is_always(&self) -> bool {
        *self == Gate::Always
    }

    /// Both conditions hold.
    pub fn and(self, other: Gate) -> Gate {
        match (self, other) {
            (Gate::Always, g) | (g, Gate::Always) => g,
            (a, b) if a == b => a,
            _ => Gate::Never,
        }
    }

    /// The condition fails. Only a test of `EVAL_ONLY` has a known opposite;
    /// the others stay what they are.
    pub fn negate(self) -> Gate {
        match self {
            Gate::EvalOnly => Gate::NotEval,
            Gate::NotEval => Gate::EvalOnly,
            other => other,
        }
    }

    /// Whether a statement under this gate runs in `run`.
    pub fn runs_in(self, run: Run) -> bool {
        matches!((self, run), (Gate::Always, _) | (Gate::EvalOnly, Run::EvalOnly) | (Gate::NotEval, Run::Throughput))
    }
}

/// `$EVAL_ONLY`, `${EVAL_ONLY}`, `${EVAL_ONLY:-false}`, `${EVAL_ONLY,,}` as a word's text.
static EVAL_ONLY_REF: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\$(?:EVAL_ONLY|\{EVAL_ONLY(?P<lower>,,)?(?::?-[^}]*)?\})$").expect("valid regex"));

/// A word that is `EVAL_ONLY`'s value (`$EVAL_ONLY`, `${EVAL_ONLY:-false}`).
pub fn is_eval_only(word: &str) -> bool {
    EVAL_ONLY_REF.is_match(word)
}

/// The gate under which a test command succeeds: `[ "$EVAL_ONLY" != true ]`
/// succeeds exactly on throughput runs. `None` when it tests something else.
pub fn test_gate(words: &[&str]) -> Option<Gate> {
    let negations = words.iter().take_while(|w| **w == "!").count();
    // `if "${EVAL_ONLY:-false}"`: the value run as a command, `true` or `false`.
    if let [reference] = &words[negations..] {
        let gate = EVAL_ONLY_REF.is_match(reference).then_some(Gate::EvalOnly)?;
        return Some(if negations % 2 == 1 { gate.negate() } else { gate });
    }
    let inner = match &words[negations..] {
        ["[", inner @ .., "]"] | ["[[", inner @ .., "]]"] | ["test", inner @ ..] => inner,
        _ => return None,
    };
    let [lhs, op, rhs] = inner else { return None };
    let (reference, literal) = if EVAL_ONLY_REF.is_match(lhs) { (*lhs, *rhs) } else { (*rhs, *lhs) };
    let caps = EVAL_ONLY_REF.captures(reference)?;
    let literal = if caps.name("lower").is_some() { literal.to_ascii_lowercase() } else { literal.to_string() };
    let equal = match *op {
        "=" | "==" => true,
        "!=" => false,
        _ => return None,
    };
    let gate = match (literal.as_str(), equal) {
        ("true", true) | ("false", false) => Gate::EvalOnly,
        ("true", false) | ("false", true) => Gate::NotEval,
        _ => return None,
    };
    Some(if negations % 2 == 1 { gate.negate() } else { gate })
}

/// An `if` block being walked.
#[derive(Debug, Clone, Copy)]
struct Frame {
    /// The gate around the block.
    outer: Gate,
    /// What the branches still to come know: every earlier condition failed.
    rest: Gate,
    /// The gate of the branch being walked.
    branch: Gate,
    /// A `case` block: over `EVAL_ONLY`, or over something else.
    case: Option<bool>,
}

/// An `if`/`elif` condition being read, up to its `then`.
#[derive(Debug, Clone, Default)]
struct Condition {
    elif: bool,
    /// Each test with the operator after it.
    parts: Vec<(Option<Gate>, Option<String>)>,
}

impl Condition {
    /// The gates of the branch taken and of the branches after it.
    fn gates(&self) -> (Gate, Gate) {
        let joiners: Vec<&str> = self.parts.iter().rev().skip(1).filter_map(|(_, op)| op.as_deref()).collect();
        let known = self.parts.iter().filter_map(|(g, _)| *g);
        match self.parts.as_slice() {
            [(Some(g), _)] => (*g, g.negate()),
            [_, _, ..] if joiners.iter().all(|j| *j == "&&") => (known.fold(Gate::Always, Gate::and), Gate::Always),
            [_, _, ..] if joiners.iter().all(|j| *j == "||") => (Gate::Always, known.map(Gate::negate).fold(Gate::Always, Gate::and)),
            _ => (Gate::Always, Gate::Always),
        }
    }
}

/// Follows the gates of a script's statements, one simple command at a time.
#[derive(Debug, Default)]
pub struct Gates {
    frames: Vec<Frame>,
    reading: Option<Condition>,
    /// The gate the current `&&`/`||` list adds.
    list: Gate,
}

/// Most nested `if` blocks followed; deeper ones count as their parent.
const MAX_FRAMES: usize = 64;

impl Gates {
    /// The gate of the statement about to run.
    pub fn current(&self) -> Gate {
        self.frames.last().map_or(Gate::Always, |f| f.branch).and(self.list)
    }

    /// Take the block keywords (`if`, `elif`, `then`, `else`, `fi`) that
    /// start a simple command; returns how many words they were.
    pub fn keywords(&mut self, words: &[&str]) -> usize {
        let mut taken = 0;
        for word in words {
            match *word {
                "if" | "elif" => self.reading = Some(Condition { elif: *word == "elif", parts: Vec::new() }),
                "then" => self.then(),
                "else" => {
                    if let Some(top) = self.frames.last_mut() {
                        top.branch = top.outer.and(top.rest);
                    }
                }
                "fi" | "esac" => {
                    self.frames.pop();
                }
                // `case WORD in`: its arms are patterns over WORD.
                "case" => {
                    let over_eval_only = words.get(taken + 1).is_some_and(|w| EVAL_ONLY_REF.is_match(w));
                    let outer = self.current();
                    let copy = self.frames.last().copied();
                    match copy {
                        Some(top) if self.frames.len() >= MAX_FRAMES => self.frames.push(top),
                        _ => self.frames.push(Frame { outer, rest: Gate::Always, branch: outer, case: Some(over_eval_only) }),
                    }
                    return words.len();
                }
                _ => break,
            }
            taken += 1;
        }
        taken
    }

    /// A `case` pattern (`true)`, `false)`, `*)`) starts an arm: over
    /// `EVAL_ONLY`, `true` is the eval-only runs and `*` whatever the
    /// patterns before it left; any other pattern may match on either run.
    pub fn pattern(&mut self, words: &[&str]) {
        let Some(top) = self.frames.last_mut() else { return };
        let Some(over_eval_only) = top.case else { return };
        let (arm, rest) = match (over_eval_only, words) {
            (true, ["true"] | ["\"true\""]) => (Gate::EvalOnly, Gate::NotEval),
            (true, ["false"]) => (Gate::NotEval, Gate::Always),
            (true, ["*"]) => (Gate::Always, Gate::Always),
            _ => (Gate::Always, Gate::Always),
        };
        top.branch = top.outer.and(top.rest).and(arm);
        top.rest = top.rest.and(rest);
    }

    fn then(&mut self) {
        let Some(condition) = self.reading.take() else { return };
        let (taken, after) = condition.gates();
        let depth = self.frames.len();
        match self.frames.last_mut() {
            Some(top) if condition.elif => {
                top.branch = top.outer.and(top.rest).and(taken);
                top.rest = top.rest.and(after);
            }
            _ if depth < MAX_FRAMES => {
                let outer = self.current();
                self.frames.push(Frame { outer, rest: after, branch: outer.and(taken), case: None });
            }
            // Too deep: the branch keeps its parent's gate, and `fi` pops the parent's copy.
            _ => {
                let copy = self.frames.last().copied().unwrap_or(Frame { outer: Gate::Always, rest: Gate::Always, branch: Gate::Always, case: None });
                self.frames.push(copy);
            }
        }
    }

    /// After a simple command (without its leading block keywords), with the
    /// operator that follows it: a test read as part of an `if` condition,
    /// or a test that gates the rest of its `&&`/`||` list.
    pub fn after(&mut self, words: &[&str], op: Option<&str>) {
        if let Some(condition) = &mut self.reading {
            if !words.is_empty() {
                condition.parts.push((test_gate(words), op.map(str::to_string)));
            }
            return;
        }
        match (test_gate(words), op) {
            (Some(g), Some("&&")) => self.list = self.list.and(g),
            (Some(g), Some("||")) => self.list = self.list.and(g.negate()),
            // `test && A || B`: B runs when the test failed.
            (None, Some("||")) => self.list = self.list.negate(),
            (_, Some("&&" | "|")) => {}
            // A list left open at the end of a line continues on the next.
            (_, None) if words.is_empty() => {}
            _ => self.list = Gate::Always,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_of_eval_only_in_every_spelling() {
        let cases: [(&[&str], Option<Gate>); 14] = [
            // The value run as the `true`/`false` builtin.
            (&["${EVAL_ONLY:-false}"], Some(Gate::EvalOnly)),
            (&["!", "${EVAL_ONLY:-false}"], Some(Gate::NotEval)),
            (&["$CONC"], None),
            (&["[", "$EVAL_ONLY", "!=", "true", "]"], Some(Gate::NotEval)),
            (&["[[", "${EVAL_ONLY:-false}", "==", "true", "]]"], Some(Gate::EvalOnly)),
            (&["[", "${EVAL_ONLY}", "=", "false", "]"], Some(Gate::NotEval)),
            (&["test", "$EVAL_ONLY", "!=", "false"], Some(Gate::EvalOnly)),
            (&["[", "true", "=", "$EVAL_ONLY", "]"], Some(Gate::EvalOnly)),
            (&["!", "[", "$EVAL_ONLY", "=", "true", "]"], Some(Gate::NotEval)),
            (&["[[", "${EVAL_ONLY,,}", "==", "TRUE", "]]"], Some(Gate::EvalOnly)),
            (&["[", "$EVAL_ONLY", "=", "TRUE", "]"], None),
            (&["[", "$CONC", "-gt", "16", "]"], None),
            (&["[", "$EVAL_ONLYX", "=", "true", "]"], None),
            (&["[", "-n", "$EVAL_ONLY", "]"], None),
        ];
        for (words, gate) in cases {
            assert_eq!(test_gate(words), gate, "{words:?}");
        }
    }

    #[test]
    fn algebra_and_runs() {
        assert_eq!(Gate::EvalOnly.and(Gate::NotEval), Gate::Never);
        assert_eq!(Gate::Always.and(Gate::NotEval), Gate::NotEval);
        assert!(Gate::Always.runs_in(Run::EvalOnly) && Gate::Always.runs_in(Run::Throughput));
        assert!(!Gate::NotEval.runs_in(Run::EvalOnly) && !Gate::Never.runs_in(Run::Throughput));
    }

    /// Walk simple commands given as (words, operator after) and collect the gate of each.
    fn walk(commands: &[(&[&str], Option<&str>)]) -> Vec<Gate> {
        let mut gates = Gates::default();
        commands
            .iter()
            .map(|(words, op)| {
                let taken = gates.keywords(words);
                let gate = gates.current();
                gates.after(&words[taken..], *op);
                gate
            })
            .collect()
    }

    #[test]
    fn if_elif_else_blocks() {
        let got = walk(&[
            (&["if", "[", "$EVAL_ONLY", "!=", "true", "]"], Some(";")),
            (&["then", "export", "A=1"], None),
            (&["if", "[", "$CONC", "-gt", "8", "]"], Some(";")),
            (&["then", "export", "B=1"], None),
            (&["else", "export", "C=1"], None),
            (&["fi"], None),
            (&["else"], None),
            (&["export", "D=1"], None),
            (&["fi"], None),
            (&["export", "E=1"], None),
        ]);
        let expected = [
            Gate::Always,
            Gate::NotEval,
            Gate::NotEval,
            Gate::NotEval,
            Gate::NotEval,
            Gate::NotEval,
            Gate::EvalOnly,
            Gate::EvalOnly,
            Gate::Always,
            Gate::Always,
        ];
        assert_eq!(got, expected);
        let got = walk(&[
            (&["if", "[", "$CONC", "=", "1", "]"], Some(";")),
            (&["then", "export", "A=1"], None),
            (&["elif", "[", "$EVAL_ONLY", "=", "true", "]"], Some(";")),
            (&["then", "export", "B=1"], None),
            (&["else", "export", "C=1"], None),
            (&["fi"], None),
        ]);
        assert_eq!(&got[1..5], [Gate::Always, Gate::Always, Gate::EvalOnly, Gate::NotEval]);
    }

    #[test]
    fn compound_conditions() {
        let and = walk(&[
            (&["if", "[", "$EVAL_ONLY", "!=", "true", "]"], Some("&&")),
            (&["[", "$CONC", "-gt", "1", "]"], Some(";")),
            (&["then", "export", "A=1"], None),
            (&["else", "export", "B=1"], None),
            (&["fi"], None),
        ]);
        assert_eq!(&and[2..4], [Gate::NotEval, Gate::Always]);
        let or = walk(&[
            (&["if", "[", "$EVAL_ONLY", "=", "true", "]"], Some("||")),
            (&["[", "$X", "=", "1", "]"], Some(";")),
            (&["then", "export", "A=1"], None),
            (&["else", "export", "B=1"], None),
            (&["fi"], None),
        ]);
        assert_eq!(&or[2..4], [Gate::Always, Gate::NotEval]);
    }

    #[test]
    fn and_or_lists() {
        let got = walk(&[
            (&["[", "$EVAL_ONLY", "=", "true", "]"], Some("&&")),
            (&["export", "A=1"], Some(";")),
            (&["export", "B=1"], None),
            (&["[[", "$EVAL_ONLY", "==", "true", "]]"], Some("||")),
            (&["export", "C=1"], None),
            (&["[", "$EVAL_ONLY", "!=", "true", "]"], Some("&&")),
            (&["export", "D=1"], Some("||")),
            (&["export", "E=1"], None),
            (&["[", "$EVAL_ONLY", "!=", "true", "]"], Some("&&")),
            (&[], None),
            (&["export", "F=1"], None),
        ]);
        assert_eq!(
            got,
            [
                Gate::Always,
                Gate::EvalOnly,
                Gate::Always,
                Gate::Always,
                Gate::NotEval,
                Gate::Always,
                Gate::NotEval,
                Gate::EvalOnly,
                Gate::Always,
                Gate::NotEval,
                Gate::NotEval
            ]
        );
    }

    #[test]
    fn stray_keywords_and_deep_nesting_do_not_panic() {
        let mut gates = Gates::default();
        for words in [&["fi"][..], &["else"], &["then"], &["elif"]] {
            gates.keywords(words);
        }
        for _ in 0..200 {
            gates.keywords(&["if"]);
            gates.after(&["[", "$EVAL_ONLY", "=", "true", "]"], Some(";"));
            gates.keywords(&["then"]);
        }
        assert_eq!(gates.current(), Gate::EvalOnly);
        for _ in 0..200 {
            gates.keywords(&["fi"]);
        }
        assert_eq!(gates.current(), Gate::Always);
    }
}
