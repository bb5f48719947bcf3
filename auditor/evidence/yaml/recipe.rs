//! srt-slurm recipes as each worker role's engine sees them. A recipe
//! configures the engine per role under `backend.<engine>_config.<role>`
//! with flag-named keys (`sglang_config.decode: {speculative-num-steps: 3}`,
//! `vllm_config.decode: {speculative-config: '<json>'}`), TensorRT-LLM
//! per-role LLM-API blocks (`trtllm_config.decode.speculative_config:
//! {decoding_type, max_draft_len}`), or, in the newer schema,
//! `roles.<role>.args`. The keys map onto the engine's own field names with
//! the launch-command machinery ([`crate::evidence::args::launch`]), each value with the line
//! that sets it, so a role's K reads like a launch command's. Override-format
//! recipes (`base:` + `zip_override_<name>:`) keep their variant. The role's
//! environment is [`crate::evidence::yaml::env`]'s (scope `recipe:<role>`); this module
//! also says which benchmark the recipe runs.

use crate::evidence::args::launch;
use crate::evidence::engine::Engine;
use crate::evidence::meta::Scenario;
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::yaml::nodes::{LineIndex, entries, normal_role, py_scalar, scalar_text};
use saphyr::{MarkedYaml, YamlData};
use serde_json::{Map, Value};

/// Deepest nesting converted inside one argument value.
const MAX_DEPTH: usize = 32;

/// One argument of a role's engine config.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleArg {
    /// The engine's field name (`speculative_num_steps`).
    pub field: String,
    /// The value as the engine receives it (JSON-valued flags parsed).
    pub value: Value,
    pub provenance: Provenance,
}

/// The engine config of one worker role.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleConfig {
    pub engine: Engine,
    /// `prefill`, `decode` or `aggregated` (`agg` is read as `aggregated`).
    pub role: String,
    /// `base` or `zip_override_<name>` in an override-format recipe.
    pub variant: Option<String>,
    pub args: Vec<RoleArg>,
    /// The line of the role's key.
    pub provenance: Provenance,
}

impl RoleConfig {
    /// The arguments as the engine reads them, with its rewrites applied
    /// (`NEXTN` -> `EAGLE`): (field -> value, field -> where, rewrites).
    pub fn engine_args(&self) -> (Map<String, Value>, launch::Rewritten) {
        let mut args: Map<String, Value> = self.args.iter().map(|a| (a.field.clone(), a.value.clone())).collect();
        let rewritten = launch::rewrite(self.engine.as_str(), &mut args);
        (args, rewritten)
    }
}

/// What a recipe holds for the auditor beyond its environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recipe {
    /// The benchmark it runs: `benchmark.isl`/`osl` mean fixed-seq, an
    /// agentic benchmark (type or command naming `agentic`) AgentX.
    pub scenario: Option<Scenario>,
    pub roles: Vec<RoleConfig>,
}

/// The recipe parts of a YAML document set, if it is a recipe at all
/// (it has a `backend:` mapping).
pub(super) fn read<'y>(file: &FileRef, lines: &LineIndex, docs: &'y [MarkedYaml<'y>]) -> Option<Recipe> {
    let mut recipe = None;
    let mut base_type: Option<String> = None;
    for doc in docs {
        let top = entries(doc, 0);
        let roots: Vec<(Option<String>, &MarkedYaml)> = match top.iter().find(|(k, _)| k == "base") {
            Some((_, base)) => std::iter::once((Some("base".to_string()), *base))
                .chain(top.iter().filter(|(k, _)| k.starts_with("zip_override_")).map(|(k, v)| (Some(k.clone()), *v)))
                .collect(),
            None => vec![(None, doc)],
        };
        for (variant, root) in roots {
            let fields = entries(root, 0);
            let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
            let Some(backend) = get("backend").filter(|b| matches!(b.data, YamlData::Mapping(_))) else { continue };
            let this: &mut Recipe = recipe.get_or_insert_with(Recipe::default);
            let backend_fields = entries(backend, 0);
            // A variant block inherits the base's backend type.
            let backend_type = backend_fields.iter().find(|(k, _)| k == "type").and_then(|(_, v)| scalar_text(v)).or(base_type.clone());
            base_type = base_type.or(backend_type.clone());
            if this.scenario.is_none() {
                this.scenario = scenario_of(get("benchmark"), get("name"));
            }
            for (key, config) in &backend_fields {
                let Some(engine) = engine_of(key.strip_suffix("_config").unwrap_or("")) else { continue };
                for (role, node) in entries(config, 0) {
                    if let Some(role) = normal_role(&role) {
                        this.roles.push(role_config(file, lines, engine, role, variant.clone(), node));
                    }
                }
            }
            // Newer schema: roles.<role>.args, engine from backend.type.
            let (Some(roles), Some(engine)) = (get("roles"), backend_type.as_deref().and_then(engine_of)) else { continue };
            for (role, node) in entries(roles, 0) {
                let args = entries(node, 0).into_iter().find(|(k, _)| k == "args").map(|(_, v)| v);
                if let (Some(role), Some(args)) = (normal_role(&role), args) {
                    this.roles.push(role_config(file, lines, engine, role, variant.clone(), args));
                }
            }
        }
    }
    recipe
}

/// The engine a `<name>_config` section or `backend.type` names.
fn engine_of(name: &str) -> Option<Engine> {
    match name {
        "sglang" | "dynamo-sglang" => Some(Engine::Sglang),
        "vllm" | "dynamo-vllm" => Some(Engine::Vllm),
        "trtllm" | "trt" | "dynamo-trtllm" | "dynamo-trt" => Some(Engine::Trtllm),
        _ => None,
    }
}

fn role_config(file: &FileRef, lines: &LineIndex, engine: Engine, role: String, variant: Option<String>, node: &MarkedYaml) -> RoleConfig {
    let at = |node: &MarkedYaml| {
        let line = node.span.start.line();
        let (offset, text) = lines.line(line);
        Provenance::at_line(file, line as u64, offset, text.trim())
    };
    let mut keyed = entries(node, 0);
    // srt-slurm (`_config_to_cli_args`) emits SGLang and vLLM flags in the
    // sorted order of their keys as written, `_` turned into `-`; argparse
    // keeps the last of one flag, so `speculative_num_steps` (sorted after
    // `speculative-num-steps`) is the one the engine runs.
    if engine != Engine::Trtllm {
        keyed.sort_by(|(a, _), (b, _)| a.cmp(b));
    }
    let mut args: Vec<RoleArg> = keyed
        .into_iter()
        .filter_map(|(key, written)| {
            let value = match json(written, 0)? {
                // A flag value goes to the engine as a string: JSON-valued flags parse.
                Value::String(s) => launch::typed(&s),
                other => other,
            };
            Some(RoleArg { field: launch::field_name(engine.as_str(), &key), value, provenance: at(written) })
        })
        .collect();
    let last: std::collections::HashMap<String, usize> = args.iter().enumerate().map(|(i, a)| (a.field.clone(), i)).collect();
    let mut i = 0;
    args.retain(|a| {
        i += 1;
        last.get(&a.field) == Some(&(i - 1))
    });
    RoleConfig { engine, role, variant, args, provenance: at(node) }
}

/// A YAML value as JSON, scalars resolved as PyYAML does.
fn json(node: &MarkedYaml, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    match &node.data {
        YamlData::Mapping(_) => Some(Value::Object(entries(node, 0).into_iter().filter_map(|(k, v)| Some((k, json(v, depth + 1)?))).collect())),
        YamlData::Sequence(items) => Some(Value::Array(items.iter().filter_map(|i| json(i, depth + 1)).collect())),
        _ => py_scalar(node).map(|py| py.to_json()),
    }
}

/// The benchmark a recipe runs, from its `benchmark:` section and `name:`.
fn scenario_of(benchmark: Option<&MarkedYaml>, name: Option<&MarkedYaml>) -> Option<Scenario> {
    let section = benchmark.and_then(|b| json(b, 0)).unwrap_or(Value::Null);
    if let Value::Object(map) = &section
        && (map.contains_key("isl") || map.contains_key("osl"))
    {
        return Some(Scenario::FixedSeqLen);
    }
    let mentions_agentic =
        section.to_string().to_ascii_lowercase().contains("agentic") || name.and_then(scalar_text).is_some_and(|n| n.to_ascii_lowercase().contains("agentic"));
    mentions_agentic.then_some(Scenario::AgenticCoding)
}

#[cfg(test)]
mod tests {
    use crate::evidence::engine::Engine;
    use crate::evidence::provenance::FileRef;
    use crate::evidence::yaml::env::scan;
    use serde_json::json;

    fn roles(text: &str) -> super::Recipe {
        scan(&FileRef { path: "r.yaml".into(), artifact: None }, text).unwrap().recipe.unwrap()
    }

    #[test]
    fn sglang_roles_map_flag_keys_to_engine_fields() {
        let text = "name: dsv4-agentic\nbackend:\n  type: sglang\n  sglang_config:\n    prefill: &common\n      tp: 4\n      speculative-algorithm: NEXTN\n      speculative-num-steps: 2\n    decode:\n      <<: *common\n      tp: 8\n      speculative-num-steps: 3\n      trust-remote-code: true\n";
        let r = roles(text);
        assert_eq!(r.scenario, Some(crate::evidence::meta::Scenario::AgenticCoding));
        let decode = r.roles.iter().find(|c| c.role == "decode").unwrap();
        let (args, rewritten) = decode.engine_args();
        assert_eq!((args["tp_size"].clone(), args["speculative_num_steps"].clone()), (json!(8), json!(3)));
        assert_eq!(args["speculative_algorithm"], json!("EAGLE"));
        assert_eq!(args["trust_remote_code"], json!(true));
        assert_eq!(rewritten.len(), 1);
        let steps = decode.args.iter().find(|a| a.field == "speculative_num_steps").unwrap();
        assert_eq!((steps.provenance.line, steps.provenance.text.as_str()), (Some(12), "speculative-num-steps: 3"));
        let prefill = r.roles.iter().find(|c| c.role == "prefill").unwrap();
        assert_eq!(prefill.engine_args().0["speculative_num_steps"], json!(2));
    }

    /// Both spellings of one flag: srt-slurm emits them in sorted key order,
    /// argparse keeps the last, whichever comes first in the file.
    #[test]
    fn dash_and_underscore_spellings_merge_as_srt_slurm_and_argparse_merge_them() {
        for body in ["      speculative-num-steps: 3\n      speculative_num_steps: 2\n", "      speculative_num_steps: 2\n      speculative-num-steps: 3\n"] {
            let text = format!("backend:\n  type: sglang\n  sglang_config:\n    decode:\n{body}");
            let decode = roles(&text).roles.into_iter().find(|c| c.role == "decode").unwrap();
            let steps: Vec<_> = decode.args.iter().filter(|a| a.field == "speculative_num_steps").collect();
            assert_eq!(steps.len(), 1, "{body}");
            assert_eq!((steps[0].value.clone(), steps[0].provenance.text.as_str()), (json!(2), "speculative_num_steps: 2"), "{body}");
        }
    }

    #[test]
    fn vllm_json_flags_trt_blocks_agg_and_variants() {
        let vllm = "backend:\n  type: vllm\n  vllm_config:\n    agg:\n      speculative-config: '{\"method\":\"mtp\",\"num_speculative_tokens\":3}'\nbenchmark:\n  isl: 8192\n  osl: 1024\n";
        let r = roles(vllm);
        assert_eq!((r.roles[0].role.as_str(), r.scenario), ("aggregated", Some(crate::evidence::meta::Scenario::FixedSeqLen)));
        assert_eq!(r.roles[0].engine_args().0["speculative_config"]["num_speculative_tokens"], json!(3));
        let trt = "backend:\n  type: trtllm\n  trtllm_config:\n    decode:\n      speculative_config:\n        decoding_type: MTP\n        max_draft_len: 3\n";
        let r = roles(trt);
        assert_eq!(r.roles[0].engine, Engine::Trtllm);
        assert_eq!(r.roles[0].engine_args().0["speculative_config"], json!({"decoding_type": "MTP", "max_draft_len": 3}));
        let variants = "base:\n  backend:\n    type: sglang\n    sglang_config:\n      decode: {speculative-num-steps: 3}\nzip_override_k:\n  backend:\n    sglang_config:\n      decode: {speculative-num-steps: [1, 2]}\n";
        let r = roles(variants);
        let got: Vec<_> = r.roles.iter().map(|c| (c.variant.clone().unwrap(), c.args[0].value.clone())).collect();
        assert_eq!(got, [("base".into(), json!(3)), ("zip_override_k".into(), json!([1, 2]))]);
        let newer = "backend:\n  type: sglang\nroles:\n  decode:\n    args: {speculative-num-steps: 2}\n    env: {A: '1'}\n";
        assert_eq!(roles(newer).roles[0].engine_args().0["speculative_num_steps"], json!(2));
        assert!(scan(&FileRef::default(), "a: 1\n").unwrap().recipe.is_none());
    }
}
