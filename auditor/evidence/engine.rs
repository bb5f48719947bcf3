//! The serving engines the auditor knows. Checks match on this enum rather
//! than on engine names, so a misspelt name cannot silently fall through;
//! it serializes as the lowercase name reports have always carried.

use serde::{Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Engine {
    Sglang,
    Vllm,
    Trtllm,
    Atom,
}

impl Engine {
    /// The name used in reports, policy data and `signatures/engine-args.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sglang => "sglang",
            Engine::Vllm => "vllm",
            Engine::Trtllm => "trtllm",
            Engine::Atom => "atom",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Engine::Sglang, Engine::Vllm, Engine::Trtllm, Engine::Atom].into_iter().find(|e| e.as_str() == s).ok_or_else(|| format!("unknown engine {s:?}"))
    }
}

impl Serialize for Engine {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_serialize_as_before() {
        for e in [Engine::Sglang, Engine::Vllm, Engine::Trtllm, Engine::Atom] {
            assert_eq!(e.as_str().parse::<Engine>(), Ok(e));
            assert_eq!(serde_json::to_string(&e).unwrap(), format!("\"{e}\""));
        }
        assert!("SGLang".parse::<Engine>().is_err());
    }
}
