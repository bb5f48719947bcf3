//! Server-argument records that lost their head: an excerpt pasted into an
//! issue or a log that starts mid-line (`...eculative_algorithm='EAGLE',
//! speculative_num_steps=3, ...`), or a terminal copy that broke the
//! `ServerArgs(` line. What can be read with certainty is read: pairs from
//! the first one that starts after a separator (a key cut at the front is
//! never taken for a shorter key), and only runs of at least [`MIN_RUN`]
//! consecutive pairs whose keys are the engine's own field names
//! (`signatures/engine-args.toml`), so prose with `key=value` words is
//! never read as arguments. Wrapping, interleaved lines and a cut at the
//! end are handled as for whole records (see [`crate::evidence::log::startup`]).

use crate::evidence::args::launch;
use crate::evidence::python::repr::Py;
use crate::evidence::records::RecordKind;

/// How the pairs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `key=value, ...`: a dataclass (`ServerArgs`) or `Namespace` repr.
    Call,
    /// `'key': value, ...`: a dict repr (SGLang 0.5.2x, vLLM non-default args).
    Dict,
}

/// Fewest consecutive pairs with the engine's own field names that count.
pub const MIN_RUN: usize = 3;

/// The engines whose argument records have these shapes.
const ENGINES: [&str; 2] = ["sglang", "vllm"];

/// The first whole pair of a possible fragment in `body`: where it starts,
/// its style, and the text to parse (a stand-in head and the rest of the line).
pub fn find(body: &str) -> Option<(usize, Style, String)> {
    if body.matches('=').count() < MIN_RUN && body.matches("': ").count() < MIN_RUN {
        return None;
    }
    let b = body.as_bytes();
    (0..b.len()).find_map(|i| {
        // Keys start with an ASCII byte, so `i` is then a character boundary.
        if !(b[i] == b'\'' || b[i] == b'_' || b[i].is_ascii_alphabetic()) {
            return None;
        }
        let before = body[..i].trim_end().as_bytes().last().copied();
        let (style, key) = match b[i] {
            b'\'' if matches!(before, Some(b',' | b'{')) => {
                let key = identifier(&body[i + 1..])?;
                body[i + 1 + key.len()..].starts_with("':").then_some((Style::Dict, key))?
            }
            c if (c.is_ascii_alphabetic() || c == b'_') && matches!(before, Some(b',' | b'(')) => {
                let key = identifier(&body[i..])?;
                let rest = &body[i + key.len()..];
                (rest.starts_with('=') && !rest.starts_with("==")).then_some((Style::Call, key))?
            }
            _ => return None,
        };
        if !ENGINES.iter().any(|e| launch::is_field(e, key)) {
            return None;
        }
        let head = match style {
            Style::Call => "Fragment(",
            Style::Dict => "{",
        };
        Some((i, style, format!("{head}{}", &body[i..])))
    })
}

fn identifier(text: &str) -> Option<&str> {
    let end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    (end > 0).then(|| &text[..end])
}

/// The engine a fragment's pairs belong to and the pairs that count: the
/// runs of that engine's field names. `None` when no run is long enough or
/// the keys do not tell the engines apart.
pub fn fields(style: Style, pairs: Vec<(String, Py)>) -> Option<(RecordKind, Vec<(String, Py)>)> {
    let runs = |engine: &str| -> Vec<usize> {
        let mut kept = Vec::new();
        let mut run = Vec::new();
        for (i, (key, _)) in pairs.iter().enumerate() {
            if launch::is_field(engine, key) {
                run.push(i);
                continue;
            }
            if run.len() >= MIN_RUN {
                kept.append(&mut run);
            }
            run.clear();
        }
        if run.len() >= MIN_RUN {
            kept.append(&mut run);
        }
        kept
    };
    let [sglang, vllm] = ENGINES.map(runs);
    // The engine whose runs are longer, if one of its keys is not the other's.
    let only = |keep: &[usize], other: &str| keep.iter().any(|&i| !launch::is_field(other, &pairs[i].0));
    let (engine, keep) = match sglang.len().cmp(&vllm.len()) {
        std::cmp::Ordering::Greater if only(&sglang, "vllm") => ("sglang", sglang),
        std::cmp::Ordering::Less if only(&vllm, "sglang") => ("vllm", vllm),
        std::cmp::Ordering::Equal if only(&sglang, "vllm") && !only(&vllm, "sglang") => ("sglang", sglang),
        std::cmp::Ordering::Equal if only(&vllm, "sglang") && !only(&sglang, "vllm") => ("vllm", vllm),
        _ => return None,
    };
    if keep.is_empty() {
        return None;
    }
    let kind = match (engine, style) {
        ("sglang", _) => RecordKind::SglangServerArgs,
        (_, Style::Call) => RecordKind::VllmNamespace,
        (_, Style::Dict) => RecordKind::VllmNonDefaultArgs,
    };
    let mut pairs: Vec<Option<(String, Py)>> = pairs.into_iter().map(Some).collect();
    Some((kind, keep.into_iter().filter_map(|i| pairs[i].take()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pair_is_one_after_a_separator() {
        let (at, style, text) = find("eculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1, tp_size=8)").unwrap();
        assert_eq!((at, style), (29, Style::Call));
        assert!(text.starts_with("Fragment(speculative_num_steps=3"));
        let (_, style, text) = find("_path': '/m', 'tp_size': 8, 'dp_size': 1, 'speculative_algorithm': 'EAGLE'}").unwrap();
        assert_eq!(style, Style::Dict);
        assert!(text.starts_with("{'tp_size': 8"));
        assert!(find("no pairs here").is_none());
        assert!(find("é=1, ü=2, tp_size=8, é, dp_size=1, ep_size=8").is_some(), "multibyte text around the pairs");
        assert!(find("a=1, b=2, c=3, d=4").is_none(), "no key is an engine field");
    }

    fn pairs(keys: &[&str]) -> Vec<(String, Py)> {
        keys.iter().map(|k| (k.to_string(), Py::Int(1))).collect()
    }

    #[test]
    fn only_runs_of_engine_fields_count_and_the_keys_must_tell_the_engine() {
        let (kind, kept) =
            fields(Style::Call, pairs(&["tp_size", "speculative_num_steps", "speculative_algorithm", "not_a_field", "dp_size", "ep_size"])).unwrap();
        assert_eq!(kind, RecordKind::SglangServerArgs);
        assert_eq!(kept.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["tp_size", "speculative_num_steps", "speculative_algorithm"]);
        let (kind, _) = fields(Style::Dict, pairs(&["tensor_parallel_size", "speculative_config", "enable_expert_parallel"])).unwrap();
        assert_eq!(kind, RecordKind::VllmNonDefaultArgs);
        assert!(fields(Style::Call, pairs(&["tp_size", "dp_size"])).is_none(), "two pairs are not a run");
        assert!(fields(Style::Call, pairs(&["quantization", "kv_cache_dtype", "trust_remote_code"])).is_none(), "shared names do not tell the engine");
    }
}
