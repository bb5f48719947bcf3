//! Environment arrays in JSON documents: `docker inspect` / OCI image
//! configs (`"Env": ["A=1", ...]`) and similar `env` lists or maps. JSON
//! carries no line numbers, so each entry is located by searching the raw
//! text for its encoded string.

use crate::evidence::env::{EnvAssignment, EnvOrigin, Scope};
use crate::evidence::provenance::{FileRef, Provenance};
use serde_json::Value;

const MAX_DEPTH: usize = 64;

/// The environment entries of a parsed JSON document; `raw` is its text.
pub fn scan(file: &FileRef, value: &Value, raw: &str) -> Vec<EnvAssignment> {
    let mut out = Vec::new();
    walk(file, value, raw, &mut Vec::new(), &mut out, 0);
    out
}

fn walk(file: &FileRef, value: &Value, raw: &str, path: &mut Vec<String>, out: &mut Vec<EnvAssignment>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                path.push(key.clone());
                if matches!(key.as_str(), "Env" | "env" | "environment" | "Environment") {
                    entries(file, child, raw, &path.join("."), out);
                }
                walk(file, child, raw, path, out, depth + 1);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                walk(file, item, raw, path, out, depth + 1);
                path.pop();
            }
        }
        _ => {}
    }
}

fn entries(file: &FileRef, section: &Value, raw: &str, path: &str, out: &mut Vec<EnvAssignment>) {
    let scope = Scope::Json(path.to_string());
    let pairs: Vec<(String, String, String)> = match section {
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|s| s.split_once('=').map(|(k, v)| (k.to_string(), v.to_string(), serde_json::to_string(s).unwrap_or_default())))
            .collect(),
        Value::Object(map) => map
            .iter()
            .filter_map(|(k, v)| {
                let value = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => return None,
                    other => other.to_string(),
                };
                Some((k.clone(), value, serde_json::to_string(k).unwrap_or_default()))
            })
            .collect(),
        _ => Vec::new(),
    };
    for (name, value, needle) in pairs.into_iter().filter(|(n, _, _)| crate::evidence::shell::words::is_var_name(n)) {
        let provenance = locate(file, raw, &needle);
        out.push(EnvAssignment::new(&name, Some(value), EnvOrigin::Config, scope.clone(), provenance));
    }
}

/// The line of the first occurrence of `needle` in `raw`.
fn locate(file: &FileRef, raw: &str, needle: &str) -> Provenance {
    match raw.find(needle) {
        Some(at) => {
            let line = raw[..at].matches('\n').count() as u64 + 1;
            Provenance::at_line(file, line, at as u64, needle)
        }
        None => Provenance::new(file.path.clone(), None, needle.to_string()).in_artifact(file.artifact.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_inspect_env_arrays() {
        let raw = "[{\n  \"Config\": {\n    \"Env\": [\n      \"PATH=/usr/bin\",\n      \"SGLANG_X=1\"\n    ]\n  }\n}]";
        let value: Value = serde_json::from_str(raw).unwrap();
        let got = scan(&FileRef::default(), &value, raw);
        assert_eq!(got.len(), 2);
        assert_eq!((got[1].name.as_str(), got[1].value.as_deref(), got[1].provenance.line), ("SGLANG_X", Some("1"), Some(5)));
        assert_eq!(got[1].scope, Scope::Json("0.Config.Env".into()));
        let map: Value = serde_json::json!({"env": {"A": "x", "B": 2, "C": null}});
        let got = scan(&FileRef::default(), &map, &map.to_string());
        assert_eq!(got.iter().map(|a| a.value.clone().unwrap()).collect::<Vec<_>>(), ["x", "2"]);
    }
}
