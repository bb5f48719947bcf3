//! Launch commands: the argv a serving engine was started with, from
//! command files (`sglang_command.txt`, ... written with bash `printf '%q '`),
//! scripts and `set -x` traces (see [`crate::evidence::shell::scan`]).

use crate::evidence::engine::Engine;
use crate::evidence::gate::Gate;
use crate::evidence::provenance::Provenance;
use serde::Serialize;

/// One launch command: the argv a program received, without the
/// `NAME=value` prefixes (those are environment assignments).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    pub argv: Vec<String>,
    /// The runs it takes part in (a script may launch differently for evals).
    #[serde(skip_serializing_if = "Gate::is_always")]
    pub gate: Gate,
    pub provenance: Provenance,
    /// Where each word of `argv` was written (an array element or a
    /// continued line has its own line); empty when only the command's
    /// line is known.
    #[serde(skip)]
    pub args_at: Vec<Provenance>,
    /// For each word of `argv`, the `if`/`case` block its value depends on
    /// (see [`crate::evidence::shell::branches`]); empty when none is known.
    #[serde(skip)]
    pub branches: Vec<Option<crate::evidence::shell::branches::Branch>>,
    /// Indices of `argv` words the run decides whole (an array that paths
    /// build differently, a program's output): where an option is read,
    /// such a word may hold any number of them.
    #[serde(skip)]
    pub open: Vec<usize>,
    /// The conditions the path that runs it assumed, where only the run
    /// decides them: two launches whose paths took opposite arms of one
    /// condition never run in the same job ([`crate::facts::paths`]).
    #[serde(skip)]
    pub path: Vec<Assumed>,
}

/// A condition a path assumed: where it is written, its text, the arm taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumed {
    pub file: String,
    pub line: u64,
    pub condition: String,
    pub held: bool,
}

impl Assumed {
    /// Whether two paths took opposite arms of this condition.
    pub fn excludes(&self, other: &Assumed) -> bool {
        self.file == other.file && self.line == other.line && self.condition == other.condition && self.held != other.held
    }
}

impl Command {
    /// The serving engine this command launches and the index in `argv`
    /// where the engine's own arguments start (wrappers such as `srun`,
    /// `numactl` or `python3 -m` come before it).
    pub fn launch(&self) -> Option<(Engine, usize)> {
        launch_of(&self.argv)
    }

    /// Where word `i` of `argv` was written: its own place, else the command's.
    pub fn arg_at(&self, i: usize) -> &Provenance {
        self.args_at.get(i).unwrap_or(&self.provenance)
    }

    /// The serving engine this command launches, if it launches one.
    pub fn engine(&self) -> Option<Engine> {
        self.launch().map(|(engine, _)| engine)
    }
}

pub use crate::bundle::kind::is_command_file;

/// The serving engine an argv launches and the index where the engine's
/// own arguments start (wrappers such as `srun`, `numactl` or `python3 -m`
/// come before it).
pub fn launch_of(argv: &[String]) -> Option<(Engine, usize)> {
    let next_is_serve = |i: usize| argv.get(i + 1).is_some_and(|n| n == "serve");
    argv.iter().enumerate().find_map(|(i, word)| {
        let base = word.rsplit('/').next().unwrap_or(word);
        if word.starts_with("sglang.launch_server") {
            Some((Engine::Sglang, i + 1))
        } else if word.starts_with("vllm.entrypoints") {
            Some((Engine::Vllm, i + 1))
        } else if word.starts_with("atom.entrypoints") {
            Some((Engine::Atom, i + 1))
        } else if base == "trtllm-serve" || word.starts_with("tensorrt_llm.commands.serve") {
            Some((Engine::Trtllm, i + 1))
        } else if (base == "sglang" || base == "vllm") && next_is_serve(i) {
            Some((if base == "sglang" { Engine::Sglang } else { Engine::Vllm }, i + 2))
        } else {
            None
        }
    })
}

/// The index of the `install` word of a pip install (`pip`, `pip3`,
/// `pip3.12`, `python -m pip`, `uv pip`): an install whose environment and
/// requirement files decide what it installs
/// ([`crate::evidence::shell::installer`]).
pub fn install_word(argv: &[String]) -> Option<usize> {
    let k = argv.iter().position(|w| w == "install")?;
    let before = argv.get(k.checked_sub(1)?)?;
    is_pip(before.rsplit('/').next().unwrap_or(before)).then_some(k)
}

/// `pip`, `pip3`, `pip3.12`: pip by its program name.
pub fn is_pip(name: &str) -> bool {
    name.strip_prefix("pip").is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::provenance::FileRef;

    #[test]
    fn engines() {
        let cmd = |argv: &[&str]| Command {
            path: Vec::new(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            gate: Gate::Always,
            provenance: Provenance::at_line(&FileRef::default(), 1, 0, ""),
            args_at: Vec::new(),
            branches: Vec::new(),
            open: Vec::new(),
        };
        assert_eq!(cmd(&["python3", "-m", "sglang.launch_server"]).engine(), Some(Engine::Sglang));
        assert_eq!(cmd(&["vllm", "serve", "/m"]).engine(), Some(Engine::Vllm));
        assert_eq!(cmd(&["trtllm-serve", "/m"]).engine(), Some(Engine::Trtllm));
        assert_eq!(cmd(&["python", "-m", "atom.entrypoints.openai_server"]).engine(), Some(Engine::Atom));
        assert_eq!(cmd(&["aiperf", "profile"]).engine(), None);
    }

    #[test]
    fn names() {
        assert!(is_command_file("sglang_command.txt"));
        assert!(!is_command_file("benchmark_command.txt"));
        assert!(!is_command_file("notes.txt"));
    }
}
