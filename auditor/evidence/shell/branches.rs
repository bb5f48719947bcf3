//! Values that depend on which arm of an `if`/`case` runs. A script picks
//! its draft length, acceptance length or flags by `CONC`, `TP` or
//! `DP_ATTENTION` in branches the audit cannot choose between; reading them
//! in order ("last assignment wins") would pair one arm's draft length with
//! another arm's acceptance. So each arm starts from the values before the
//! block, and a variable whose value differs between the arms (an arm that
//! does not assign it keeps the value before) is marked as depending on the
//! block: facts read from it are not judged as one value. Tests of
//! `EVAL_ONLY` are not choices here: [`crate::evidence::gate`] splits the runs on them.

use crate::evidence::provenance::Provenance;

/// Most nested blocks followed; deeper ones are read in order.
const MAX_DEPTH: usize = 32;
/// Most variables followed per block.
const MAX_VARS: usize = 256;

/// What a value depends on: the block, said in a note, and for a JSON
/// object the only keys whose values depend on it (`None`: all of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    pub note: String,
    pub keys: Option<Vec<String>>,
}

/// A word as a command receives it: its value, the place of the word that
/// gave it, and the block it depends on, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub text: String,
    pub at: Provenance,
    pub branch: Option<Branch>,
}

/// What a script knows of one variable at a point: its plain value on any
/// path, as each kind of run sees it, its array elements, and the block it
/// depends on.
#[derive(Debug, Clone, Default)]
pub struct VarState {
    pub var: Option<String>,
    pub views: [Option<String>; 2],
    pub arrays: [Option<Vec<Arg>>; 2],
    pub branch: Option<Branch>,
}

impl VarState {
    /// The same value (places aside).
    fn same(&self, other: &VarState) -> bool {
        let texts = |a: &Option<Vec<Arg>>| a.as_ref().map(|v| v.iter().map(|x| x.text.clone()).collect::<Vec<_>>());
        self.views == other.views && (0..2).all(|v| texts(&self.arrays[v]) == texts(&other.arrays[v]))
    }

    /// The value as a note shows it (the throughput run's).
    fn shown(&self) -> String {
        match (&self.arrays[1], &self.views[1]) {
            (Some(a), _) => format!("({})", a.iter().map(|x| x.text.as_str()).collect::<Vec<_>>().join(" ")),
            (None, Some(v)) => v.clone(),
            (None, None) => "unset".to_string(),
        }
    }
}

#[derive(Debug)]
struct Block {
    /// `if [ "$CONC" -le 8 ]` with its line.
    label: String,
    /// A test of `EVAL_ONLY` is not a choice; kept so that `fi` closes the right block.
    choice: bool,
    case: bool,
    /// A `case` between arms, waiting for a pattern.
    expecting_pattern: bool,
    in_arm: bool,
    /// An arm always runs (`else`, `*)`).
    default: bool,
    /// The variables the block assigns, in order, with their state before it.
    before: Vec<(String, VarState)>,
    /// Their states at the end of each finished arm.
    arms: Vec<Vec<VarState>>,
}

/// The blocks around the statement being read.
#[derive(Debug, Default)]
pub struct Branches {
    blocks: Vec<Block>,
    /// Blocks opened beyond [`MAX_DEPTH`], not followed.
    overflow: usize,
}

/// What the scanner must do to its variables.
pub type Updates = Vec<(String, VarState)>;

impl Branches {
    /// Open an `if` (its condition words) or a `case` block at `line`.
    pub fn open(&mut self, words: &[&str], choice: bool, case: bool, line: u64) {
        if self.blocks.len() >= MAX_DEPTH {
            self.overflow += 1;
            return;
        }
        let shown: String = words.join(" ").chars().take(120).collect();
        let label = format!("`{} {shown}` (line {line})", if case { "case" } else { "if" });
        self.blocks.push(Block { label, choice, case, expecting_pattern: case, in_arm: !case, default: false, before: Vec::new(), arms: Vec::new() });
    }

    /// Whether the next simple command is a `case` pattern.
    pub fn expecting_pattern(&self) -> bool {
        self.overflow == 0 && self.blocks.last().is_some_and(|b| b.case && b.expecting_pattern)
    }

    /// A variable is about to be assigned: every choice block around that
    /// has not seen it yet keeps its state before.
    pub fn touch(&mut self, name: &str, current: impl FnOnce() -> VarState) {
        let mut current = Some(current);
        let mut state = None;
        for block in self.blocks.iter_mut().filter(|b| b.choice && b.in_arm) {
            if block.before.len() >= MAX_VARS || block.before.iter().any(|(n, _)| n == name) {
                continue;
            }
            let s = state.get_or_insert_with(|| current.take().map(|f| f()).unwrap_or_default()).clone();
            for arm in &mut block.arms {
                arm.push(s.clone());
            }
            block.before.push((name.to_string(), s));
        }
    }

    /// The current arm ends (`elif`, `else`, `;;`): its states are kept and
    /// the variables go back to their values before the block.
    pub fn end_arm(&mut self, snapshot: impl Fn(&str) -> VarState) -> Updates {
        if self.overflow > 0 {
            return Vec::new();
        }
        let Some(block) = self.blocks.last_mut() else { return Vec::new() };
        if !block.in_arm {
            return Vec::new();
        }
        block.in_arm = false;
        if !block.choice {
            return Vec::new();
        }
        block.arms.push(block.before.iter().map(|(n, _)| snapshot(n)).collect());
        block.before.clone()
    }

    /// The next arm starts (`elif`, `else`, a `case` pattern).
    pub fn start_arm(&mut self, default: bool) {
        if self.overflow > 0 {
            return;
        }
        if let Some(block) = self.blocks.last_mut() {
            block.in_arm = true;
            block.expecting_pattern = false;
            block.default |= default;
        }
    }

    /// `elif` / `else`: end the arm, start the next.
    pub fn next_arm(&mut self, default: bool, snapshot: impl Fn(&str) -> VarState) -> Updates {
        let updates = self.end_arm(snapshot);
        self.start_arm(default);
        updates
    }

    /// `;;`: the `case` waits for its next pattern.
    pub fn end_case_arm(&mut self, snapshot: impl Fn(&str) -> VarState) -> Updates {
        let updates = if self.blocks.last().is_some_and(|b| b.case) { self.end_arm(snapshot) } else { Vec::new() };
        if let Some(block) = self.blocks.last_mut().filter(|b| b.case) {
            block.expecting_pattern = true;
        }
        updates
    }

    /// `fi` / `esac`: each variable the block assigns takes the first arm's
    /// value; one that differs between the arms is marked with the block.
    pub fn close(&mut self, snapshot: impl Fn(&str) -> VarState) -> Updates {
        if self.overflow > 0 {
            self.overflow -= 1;
            return Vec::new();
        }
        self.end_arm(snapshot);
        let Some(block) = self.blocks.pop() else { return Vec::new() };
        if !block.choice {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (k, (name, before)) in block.before.iter().enumerate() {
            let mut states: Vec<&VarState> = block.arms.iter().filter_map(|arm| arm.get(k)).collect();
            if !block.default {
                states.push(before);
            }
            let Some(first) = states.first() else { continue };
            let mut value = (*first).clone();
            if states.iter().all(|s| s.same(first)) {
                value.branch = states.iter().find_map(|s| s.branch.clone());
            } else {
                let mut shown: Vec<String> = Vec::new();
                for s in &states {
                    let v = s.shown();
                    if !shown.contains(&v) {
                        shown.push(v);
                    }
                }
                let note = format!("{name} differs between the arms of {}: {}", block.label, shown.join(" | "));
                let branch = Branch { note: note.chars().take(400).collect(), keys: None };
                for (view, array) in value.arrays.iter_mut().enumerate() {
                    if let Some(array) = array {
                        mark_unstable(array, &states, view, &branch);
                    }
                }
                value.branch = Some(branch);
            }
            out.push((name.clone(), value));
        }
        out
    }
}

/// Mark the elements of an array that not every arm has in the same place:
/// an element is stable when every arm has it after the same word, or
/// every arm has it before the same word (a flag and its value agree).
fn mark_unstable(array: &mut [Arg], arms: &[&VarState], view: usize, branch: &Branch) {
    let texts: Vec<String> = array.iter().map(|a| a.text.clone()).collect();
    for (j, arg) in array.iter_mut().enumerate() {
        let left = j.checked_sub(1).map(|k| texts[k].as_str());
        let right = texts.get(j + 1).map(String::as_str);
        let has = |s: &VarState, after: bool| {
            let Some(other) = &s.arrays[view] else { return false };
            other.iter().enumerate().any(|(k, a)| {
                a.text == texts[j]
                    && if after { k.checked_sub(1).map(|i| other[i].text.as_str()) == left } else { other.get(k + 1).map(|x| x.text.as_str()) == right }
            })
        };
        if !(arms.iter().all(|s| has(s, true)) || arms.iter().all(|s| has(s, false))) {
            arg.branch = Some(branch.clone());
        }
    }
}
