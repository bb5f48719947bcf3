//! Launch commands mapped onto the engine's own argument names: `--flag
//! value` and `--flag=value`, aliases (`--tp` = `--tp-size` =
//! `--tensor-parallel-size` -> `tp_size`), JSON-valued flags
//! (`--speculative-config '{...}'`, `--hf-overrides`), positional models
//! (`vllm serve MODEL`), and the rewrites an engine applies before logging
//! (`NEXTN` -> `EAGLE`). Option words are read as the engine's parser reads
//! them ([`crate::evidence::args::flags`]): `--mem-frac` is `--mem-fraction-static` to
//! argparse, and an ambiguous prefix is reported, not guessed. The alias
//! tables and option lists are data: `signatures/engine-args.toml`.

use crate::evidence::args::flags::{Flag, Options};
use crate::evidence::engine::Engine;
use crate::evidence::provenance::Provenance;
use crate::evidence::shell::command::Command;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// The alias tables shipped with the binary.
pub const EMBEDDED: &str = include_str!("../../../signatures/engine-args.toml");

#[derive(Debug, Clone, Default, Deserialize)]
struct EngineArgs {
    #[serde(default)]
    aliases: BTreeMap<String, String>,
    #[serde(default)]
    rewrites: Vec<Rewrite>,
    #[serde(default)]
    positional: Vec<String>,
    /// Every option string the engine's parser registers.
    #[serde(default)]
    flags: Vec<String>,
    /// The parser reads a unique prefix of a long option as that option.
    #[serde(default)]
    abbrev: bool,
    /// `--json-arg.key value` sets one key of a JSON-valued argument (vLLM).
    #[serde(default)]
    dotted: bool,
    #[serde(skip)]
    options: Options,
    /// The fields the options set (the names the engine logs).
    #[serde(skip)]
    fields: BTreeSet<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Rewrite {
    field: String,
    from: String,
    to: String,
}

static TABLES: LazyLock<BTreeMap<String, EngineArgs>> = LazyLock::new(|| {
    let mut tables: BTreeMap<String, EngineArgs> = toml::from_str(EMBEDDED).expect("embedded signatures/engine-args.toml is valid");
    for table in tables.values_mut() {
        table.options = Options::new(&table.flags, table.abbrev);
        let fields = table.flags.iter().map(|f| field_of(table, f.trim_start_matches('-'))).chain(table.positional.iter().cloned()).collect();
        table.fields = fields;
    }
    tables
});

/// Values an engine rewrites before logging: (field, as given, as logged).
pub type Rewritten = Vec<(String, String, String)>;

/// A launch command's arguments in the engine's field names.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchArgs {
    pub engine: Engine,
    pub args: Map<String, Value>,
    /// Values the engine rewrites before logging: (field, as given, as logged).
    pub rewritten: Vec<(String, String, String)>,
    /// Where each field was given: its flag (with the value when that is
    /// on the same line), not the line that runs the command.
    pub at: BTreeMap<String, Provenance>,
    /// Fields whose flag or value depends on which arm of an `if`/`case`
    /// runs, with the note that says so (see [`crate::evidence::shell::branches`]).
    pub depends: BTreeMap<String, crate::evidence::shell::branches::Branch>,
    /// How option words were read where that is not plain: an abbreviation
    /// the engine expands, an ambiguous prefix it refuses (that argument is
    /// not read). Each with the word's place.
    pub notes: Vec<(Provenance, String)>,
    /// A word the run decides where an option is read (see
    /// [`Command::open`]): the arguments may hold more than `args` shows.
    pub open: Option<(Provenance, String)>,
}

/// Map a command's argv onto engine fields; `None` if it launches no engine.
pub fn parse(command: &Command) -> Option<LaunchArgs> {
    let (engine, start) = command.launch()?;
    let none = EngineArgs::default();
    let table = TABLES.get(engine.as_str()).unwrap_or(&none);
    let mut args = Map::new();
    let mut at = BTreeMap::new();
    let mut depends = BTreeMap::new();
    let mut notes = Vec::new();
    let mut open = None;
    let mut dotted: BTreeMap<String, Value> = BTreeMap::new();
    let mut dotted_at: BTreeMap<String, Provenance> = BTreeMap::new();
    let branch = |i: usize| command.branches.get(i).cloned().flatten();
    let mut positional = table.positional.iter();
    let start = start.min(command.argv.len());
    let argv = &command.argv[start..];
    let mut i = 0;
    while i < argv.len() {
        let word = &argv[i];
        let flag_at = start + i;
        i += 1;
        let Some(flag) = word.strip_prefix("--").or_else(|| word.strip_prefix('-').filter(|f| !f.is_empty() && !is_number(word))) else {
            if let Some(name) = positional.next() {
                args.insert(name.clone(), Value::String(word.clone()));
                at.insert(name.clone(), command.arg_at(flag_at).clone());
            } else if open.is_none() && command.open.contains(&flag_at) {
                open = Some((command.arg_at(flag_at).clone(), word.clone()));
            }
            continue;
        };
        let dashes = if word.starts_with("--") { "--" } else { "-" };
        let (word, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        // vLLM: `--json-arg.key value` sets one key of a JSON-valued argument.
        let (word, path) = match word.split_once('.').filter(|_| table.dotted) {
            Some((base, path)) => (base, Some(path)),
            None => (word, None),
        };
        let (name, glued, reading) = read_option(table, dashes, word);
        let value = match inline.or(glued) {
            Some(v) => Some(v),
            None if path.is_some() && i < argv.len() => {
                i += 1;
                Some(argv[i - 1].clone())
            }
            None => match argv.get(i) {
                Some(next) if !next.starts_with('-') || is_number(next) => {
                    i += 1;
                    Some(next.clone())
                }
                _ => None,
            },
        };
        let given = match start + i - 1 {
            v if v > flag_at => joined(command.arg_at(flag_at), command.arg_at(v)),
            _ => command.arg_at(flag_at).clone(),
        };
        match reading {
            Reading::Plain => {}
            Reading::Abbreviated(option) => notes.push((given.clone(), format!("{engine} reads {dashes}{word} as {option} (a unique prefix)"))),
            Reading::Ambiguous(options) => {
                let note =
                    format!("{dashes}{word} is ambiguous to {engine}'s argument parser (could be {}): the engine refuses it; not read", options.join(", "));
                notes.push((given, note));
                continue;
            }
        }
        let field = field_of(table, &name);
        if let Some(path) = path {
            let value = dotted_value(path, value.as_deref().unwrap_or_default());
            merge(dotted.entry(field.clone()).or_insert_with(|| Value::Object(Map::new())), value);
            dotted_at.entry(field).or_insert(given);
            continue;
        }
        at.insert(field.clone(), given);
        match (flag_at..start + i).find_map(branch) {
            Some(note) => depends.insert(field.clone(), note),
            None => depends.remove(&field),
        };
        args.insert(field, value.map_or(Value::Bool(true), |v| typed(&v)));
    }
    // The parser passes the keys set one by one after every other word, as
    // one JSON value: it replaces a JSON value given whole.
    for (field, value) in dotted {
        args.insert(field.clone(), value);
        depends.remove(&field);
        at.extend(dotted_at.remove(&field).map(|given| (field, given)));
    }
    let rewritten = apply_rewrites(table, &mut args);
    Some(LaunchArgs { engine, args, rewritten, at, depends, notes, open })
}

/// `key.sub` and its value as the nested object vLLM makes of them: the
/// value parsed as JSON, else kept as text; `key+ a,b` is a list.
fn dotted_value(path: &str, text: &str) -> Value {
    let (path, list) = match path.strip_suffix('+') {
        Some(p) => (p, true),
        None => (path, false),
    };
    let mut value = match list {
        true => Value::Array(text.split(',').map(|s| Value::String(s.to_string())).collect()),
        false => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())),
    };
    for key in path.rsplit('.') {
        value = Value::Object(Map::from_iter([(key.to_string(), value)]));
    }
    value
}

/// Merge `update` into `into` as vLLM does: objects key by key, lists appended, anything else replaced.
fn merge(into: &mut Value, update: Value) {
    match (into, update) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) if existing.is_object() || existing.is_array() => merge(existing, v),
                    _ => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => a.extend(b),
        (slot, v) => *slot = v,
    }
}

/// How an option word was read.
enum Reading {
    Plain,
    /// The word abbreviates this option.
    Abbreviated(String),
    /// The word could be any of these options.
    Ambiguous(Vec<String>),
}

/// The option name (dashes stripped) `word` stands for to the engine, a
/// value joined to a short option, and how it was read. Engines without an
/// option list, and words the list does not know, keep their own name.
fn read_option(table: &EngineArgs, dashes: &str, word: &str) -> (String, Option<String>, Reading) {
    if table.options.is_empty() {
        return (word.to_string(), None, Reading::Plain);
    }
    match table.options.resolve(&format!("{dashes}{word}")) {
        Flag::Known { option, abbreviated, joined } => {
            let name = option.trim_start_matches('-').to_string();
            (name, joined, if abbreviated { Reading::Abbreviated(option) } else { Reading::Plain })
        }
        Flag::Ambiguous(options) => (word.to_string(), None, Reading::Ambiguous(options)),
        Flag::Unknown => (word.to_string(), None, Reading::Plain),
    }
}

/// A flag and its value as one place when they are on one line; the flag's
/// place otherwise.
fn joined(flag: &Provenance, value: &Provenance) -> Provenance {
    match (flag.span, value.span) {
        (Some((a, _)), Some((_, b))) if flag.line == value.line && flag.file == value.file && flag.line.is_some() && b >= a && flag != value => {
            Provenance { span: Some((a, b)), text: crate::evidence::provenance::clip(&format!("{} {}", flag.text, value.text)), ..flag.clone() }
        }
        _ => flag.clone(),
    }
}

/// The engine field a flag sets: `speculative-num-steps` ->
/// `speculative_num_steps`, `tp` -> `tp_size`. Recipes name engine flags
/// as YAML keys, so they map the same way.
pub fn field_name(engine: &str, flag: &str) -> String {
    TABLES.get(engine).map_or_else(|| flag.replace('-', "_"), |table| field_of(table, &read_option(table, "--", flag).0))
}

/// Whether `name` is a field `engine`'s options set (`tp_size` for SGLang,
/// `tensor_parallel_size` for vLLM): the names its logged argument records use.
pub fn is_field(engine: &str, name: &str) -> bool {
    TABLES.get(engine).is_some_and(|t| t.fields.contains(name))
}

fn field_of(table: &EngineArgs, flag: &str) -> String {
    let field = flag.replace('-', "_");
    table.aliases.get(&field).cloned().unwrap_or(field)
}

/// Apply `engine`'s rewrites (SGLang `NEXTN` -> `EAGLE`) to arguments in
/// field names; returns (field, as given, as logged) for each.
pub fn rewrite(engine: &str, args: &mut Map<String, Value>) -> Rewritten {
    TABLES.get(engine).map(|table| apply_rewrites(table, args)).unwrap_or_default()
}

fn apply_rewrites(table: &EngineArgs, args: &mut Map<String, Value>) -> Rewritten {
    let mut rewritten = Vec::new();
    for rule in &table.rewrites {
        if let Some(Value::String(v)) = args.get_mut(&rule.field)
            && v.eq_ignore_ascii_case(&rule.from)
        {
            rewritten.push((rule.field.clone(), v.clone(), rule.to.clone()));
            *v = rule.to.clone();
        }
    }
    rewritten
}

fn is_number(word: &str) -> bool {
    word.parse::<f64>().is_ok()
}

/// Numbers as numbers, JSON objects and arrays parsed, everything else a string.
pub fn typed(value: &str) -> Value {
    if let Ok(n) = value.parse::<i64>() {
        return Value::from(n);
    }
    if let Some(n) = value.parse::<f64>().ok().filter(|f| f.is_finite()).and_then(serde_json::Number::from_f64) {
        return Value::Number(n);
    }
    let trimmed = value.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(json) = serde_json::from_str(value)
    {
        return json;
    }
    Value::String(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::provenance::{FileRef, Provenance};
    use serde_json::json;

    fn launch(argv: &[&str]) -> LaunchArgs {
        let command = Command {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            gate: crate::evidence::gate::Gate::Always,
            provenance: Provenance::at_line(&FileRef::default(), 1, 0, ""),
            args_at: Vec::new(),
            branches: Vec::new(),
            open: Vec::new(),
            path: Vec::new(),
        };
        parse(&command).unwrap()
    }

    #[test]
    fn sglang_aliases_rewrites_and_forms() {
        let l = launch(&[
            "python3",
            "-m",
            "sglang.launch_server",
            "--model",
            "/m",
            "--tp",
            "8",
            "--ep-size=8",
            "--trust-remote-code",
            "--speculative-algo",
            "NEXTN",
            "--speculative-draft-model",
            "/d",
            "--mem-fraction-static",
            "0.85",
            "--json-model-override-args",
            r#"{"a": 1}"#,
            "--x",
            "-1",
        ]);
        assert_eq!(l.engine, Engine::Sglang);
        assert_eq!(l.args["model_path"], json!("/m"));
        assert_eq!(l.args["tp_size"], json!(8));
        assert_eq!(l.args["ep_size"], json!(8));
        assert_eq!(l.args["trust_remote_code"], json!(true));
        assert_eq!(l.args["speculative_algorithm"], json!("EAGLE"));
        assert_eq!(l.rewritten, [("speculative_algorithm".into(), "NEXTN".into(), "EAGLE".into())]);
        assert_eq!(l.args["speculative_draft_model_path"], json!("/d"));
        assert_eq!(l.args["mem_fraction_static"], json!(0.85));
        assert_eq!(l.args["json_model_override_args"], json!({"a": 1}));
        assert_eq!(l.args["x"], json!(-1));
        assert_eq!(launch(&["python3", "-m", "sglang.launch_server", "--tensor-parallel-size", "4"]).args["tp_size"], json!(4));
    }

    #[test]
    fn vllm_positional_model_and_json_flags() {
        let l = launch(&[
            "vllm",
            "serve",
            "/m",
            "-tp",
            "4",
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 3}"#,
            "--hf-overrides",
            r#"{"text_config": {"index_topk_freq": 4}}"#,
        ]);
        assert_eq!(l.args["model"], json!("/m"));
        assert_eq!(l.args["tensor_parallel_size"], json!(4));
        assert_eq!(l.args["speculative_config"]["num_speculative_tokens"], json!(3));
        assert_eq!(l.args["hf_overrides"]["text_config"]["index_topk_freq"], json!(4));
    }

    #[test]
    fn abbreviations_read_as_the_engine_reads_them() {
        let l = launch(&[
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "/m",
            "--speculative-algo",
            "EAGLE",
            "--speculative-num-draft",
            "4",
            "--speculative-num-s",
            "3",
            "--mem-frac=0.9",
            "--json-model-override",
            r#"{"index_topk_freq": 4}"#,
            "--speculative-draft",
            "/d",
            "--tp",
            "8",
        ]);
        assert_eq!(l.args["speculative_num_draft_tokens"], json!(4));
        assert_eq!(l.args["speculative_num_steps"], json!(3));
        assert_eq!(l.args["mem_fraction_static"], json!(0.9));
        assert_eq!(l.args["json_model_override_args"]["index_topk_freq"], json!(4));
        assert_eq!(l.args["tp_size"], json!(8));
        // Ambiguous: neither the field nor a made-up one is set; its value is not read as a positional.
        assert!(!l.args.contains_key("speculative_draft_model_path") && !l.args.contains_key("speculative_draft"), "{:?}", l.args);
        let ambiguous: Vec<&String> = l.notes.iter().map(|(_, n)| n).filter(|n| n.contains("ambiguous")).collect();
        assert_eq!(ambiguous.len(), 1, "{:?}", l.notes);
        assert!(ambiguous[0].starts_with("--speculative-draft is ambiguous") && ambiguous[0].contains("--speculative-draft-model-path"));
        assert!(l.notes.iter().any(|(_, n)| n == "sglang reads --mem-frac as --mem-fraction-static (a unique prefix)"));
        let v = launch(&["vllm", "serve", "/m", "--hf-over", r#"{"a": 1}"#, "--speculative_conf", r#"{"method": "mtp"}"#, "-O3"]);
        assert_eq!(v.args["hf_overrides"], json!({"a": 1}));
        assert_eq!(v.args["speculative_config"]["method"], json!("mtp"));
        assert_eq!(v.args["compilation_config"], json!(3));
        // vLLM's dotted keys, merged, after (and over) a JSON given whole.
        let v = launch(&[
            "vllm",
            "serve",
            "/m",
            "--speculative-config.method",
            "mtp",
            "--speculative-config",
            r#"{"method": "eagle", "num_speculative_tokens": 1}"#,
            "--speculative_config.num_speculative_tokens=3",
            "--compilation-config.cudagraph_capture_sizes+",
            "1,2",
        ]);
        assert_eq!(v.args["speculative_config"], json!({"method": "mtp", "num_speculative_tokens": 3}));
        assert_eq!(v.args["compilation_config"], json!({"cudagraph_capture_sizes": ["1", "2"]}));
        // trtllm-serve (click) has no abbreviations: a prefix stays its own name.
        let t = launch(&["trtllm-serve", "/m", "--max_batch", "8", "--extra_llm_api_options", "x.yaml"]);
        assert_eq!((t.args.get("max_batch"), t.args.get("config")), (Some(&json!(8)), Some(&json!("x.yaml"))));
        assert!(t.notes.is_empty());
    }

    #[test]
    fn atom_flags() {
        let l = launch(&[
            "python",
            "-m",
            "atom.entrypoints.openai_server",
            "--model",
            "m",
            "--method",
            "mtp",
            "--num-speculative-tokens",
            "3",
            "--spec-decode-acceptance-rate",
            "0.663333",
            "--kv_cache_dtype",
            "fp8",
        ]);
        assert_eq!(l.args["num_speculative_tokens"], json!(3));
        assert_eq!(l.args["spec_decode_acceptance_rate"], json!(0.663333));
        assert_eq!(l.args["kv_cache_dtype"], json!("fp8"));
    }
}
