//! The serving engines the auditor knows. Checks match on this enum rather
//! than on engine names, so a misspelt name cannot silently fall through;
//! it serializes as the lowercase name reports have always carried.

use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "lowercase", parse_err_fn = unknown_engine, parse_err_ty = String)]
pub enum Engine {
    Sglang,
    Vllm,
    Trtllm,
    Atom,
}

fn unknown_engine(s: &str) -> String {
    format!("unknown engine {s:?}")
}

impl Engine {
    /// The name used in reports, policy data and `signatures/engine-args.toml`.
    pub fn as_str(self) -> &'static str {
        self.into()
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
        for e in <Engine as strum::VariantArray>::VARIANTS.iter().copied() {
            assert_eq!(e.as_str().parse::<Engine>(), Ok(e));
            assert_eq!(serde_json::to_string(&e).unwrap(), format!("\"{e}\""));
        }
        assert!("SGLang".parse::<Engine>().is_err());
    }
}
