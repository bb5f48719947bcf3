//! An option word as the engine's own argument parser reads it. SGLang and
//! vLLM parse with Python's argparse, whose `allow_abbrev` (left on by both)
//! reads a unique prefix of a long option as that option (`--mem-frac` is
//! `--mem-fraction-static`) and refuses an ambiguous one; TensorRT-LLM's
//! `trtllm-serve` uses click, which has no abbreviations. The rules mirror
//! CPython's `ArgumentParser._parse_optional` / `_get_option_tuples`
//! (3.10-3.13 agree); the option lists are data in
//! `signatures/engine-args.toml`.

use std::collections::BTreeMap;

/// What the parser makes of one option word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flag {
    /// A registered option, or the only option the word is a prefix of.
    Known {
        /// The option as registered (`--mem-fraction-static`).
        option: String,
        /// The word was a prefix of `option`, not `option` itself.
        abbreviated: bool,
        /// A value joined to a short option (`-O3`, `-qfp8`).
        joined: Option<String>,
    },
    /// A prefix of several options: argparse exits with "ambiguous option".
    Ambiguous(Vec<String>),
    /// Not an option of the list (another version's flag, or a typo).
    Unknown,
}

/// One engine's registered options and whether it reads abbreviations.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Normalised spelling (`_` read as `-`) -> the option as registered.
    by_name: BTreeMap<String, String>,
    abbrev: bool,
}

/// `--tp_size` and `--tp-size` are one option here: vLLM's parser turns
/// `_` into `-` before argparse sees the word, TensorRT-LLM registers the
/// underscore spelling, and reading SGLang's the same way loses nothing.
fn normal(word: &str) -> String {
    word.replace('_', "-")
}

impl Options {
    pub fn new<'a>(flags: impl IntoIterator<Item = &'a String>, abbrev: bool) -> Self {
        Options { by_name: flags.into_iter().map(|f| (normal(f), f.clone())).collect(), abbrev }
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Read `word`, an option without any `=value` (`--mem-frac`, `-tp`, `-O3`).
    pub fn resolve(&self, word: &str) -> Flag {
        let word = normal(word);
        if let Some(option) = self.by_name.get(&word) {
            return Flag::Known { option: option.clone(), abbreviated: false, joined: None };
        }
        if word.len() < 2 || !word.starts_with('-') {
            return Flag::Unknown;
        }
        let long = word.starts_with("--");
        if long && !self.abbrev {
            return Flag::Unknown;
        }
        // argparse collects every reading and refuses more than one.
        let mut readings: Vec<(String, Option<String>)> = Vec::new();
        if !long {
            // A one-letter short option with its value joined (`-O3`).
            if let Some(option) = word.get(..2).and_then(|short| self.by_name.get(short)) {
                readings.push((option.clone(), Some(word[2..].to_string())));
            }
        }
        if long || self.abbrev {
            readings.extend(self.by_name.range(word.clone()..).take_while(|(name, _)| name.starts_with(&word)).map(|(_, option)| (option.clone(), None)));
        }
        match readings.len() {
            0 => Flag::Unknown,
            1 => {
                let (option, joined) = readings.remove(0);
                Flag::Known { abbreviated: joined.is_none(), option, joined }
            }
            _ => Flag::Ambiguous(readings.into_iter().map(|(o, _)| o).collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(flags: &[&str], abbrev: bool) -> Options {
        let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        Options::new(&flags, abbrev)
    }

    fn known(option: &str, abbreviated: bool) -> Flag {
        Flag::Known { option: option.into(), abbreviated, joined: None }
    }

    const SGLANG: &[&str] = &[
        "--mem-fraction-static",
        "--speculative-draft-model",
        "--speculative-draft-model-path",
        "--speculative-draft-model-revision",
        "--speculative-draft-attention-backend",
        "--speculative-num-draft-tokens",
        "--speculative-num-steps",
        "--tp-size",
        "--pp-size",
        "--pp-max-micro-batch-size",
    ];

    #[test]
    fn exact_options_win_over_longer_ones_they_prefix() {
        let o = options(SGLANG, true);
        assert_eq!(o.resolve("--speculative-draft-model"), known("--speculative-draft-model", false));
        assert_eq!(o.resolve("--tp_size"), known("--tp-size", false));
    }

    #[test]
    fn a_unique_prefix_is_that_option() {
        let o = options(SGLANG, true);
        assert_eq!(o.resolve("--mem-frac"), known("--mem-fraction-static", true));
        assert_eq!(o.resolve("--speculative-num-draft"), known("--speculative-num-draft-tokens", true));
        assert_eq!(o.resolve("--tp"), known("--tp-size", true));
        assert_eq!(o.resolve("--speculative-num-s"), known("--speculative-num-steps", true));
    }

    #[test]
    fn an_ambiguous_prefix_names_every_reading_and_is_never_guessed() {
        let o = options(SGLANG, true);
        let Flag::Ambiguous(all) = o.resolve("--speculative-draft") else { panic!() };
        assert_eq!(all.len(), 4, "{all:?}");
        assert!(matches!(o.resolve("--speculative-draft-model-"), Flag::Ambiguous(v) if v.len() == 2));
        assert!(matches!(o.resolve("--pp"), Flag::Ambiguous(v) if v.len() == 2));
        assert!(matches!(o.resolve("--speculative-num"), Flag::Ambiguous(_)));
    }

    #[test]
    fn unknown_words_and_parsers_without_abbreviations() {
        let o = options(SGLANG, true);
        assert_eq!(o.resolve("--enable-foo"), Flag::Unknown);
        assert_eq!(o.resolve("-x"), Flag::Unknown);
        // click (trtllm-serve): a prefix is not the option.
        let click = options(&["--max_batch_size", "--max_num_tokens", "--tp_size"], false);
        assert_eq!(click.resolve("--max_batch"), Flag::Unknown);
        assert_eq!(click.resolve("--tp_size"), known("--tp_size", false));
    }

    #[test]
    fn short_options_join_their_value_and_prefix_only_short_spellings() {
        let o = options(&["-O", "-tp", "-q", "--quantization", "-dp", "-dpa", "--tensor-parallel-size"], true);
        assert_eq!(o.resolve("-O3"), Flag::Known { option: "-O".into(), abbreviated: false, joined: Some("3".into()) });
        assert_eq!(o.resolve("-tp"), known("-tp", false));
        // `-t` is no option and `-tp` is the only one it starts.
        assert_eq!(o.resolve("-t"), known("-tp", true));
        // `-dp` is exact; `-dpx` reads as nothing.
        assert_eq!(o.resolve("-dpx"), Flag::Unknown);
        // `-qfp8`: `-q` with `fp8` joined.
        assert_eq!(o.resolve("-qfp8"), Flag::Known { option: "-q".into(), abbreviated: false, joined: Some("fp8".into()) });
    }
}
