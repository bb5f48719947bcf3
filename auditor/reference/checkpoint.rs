//! The shipped precision of a checkpoint's draft (MTP / NextN / EAGLE)
//! tensors, read from safetensors headers alone: an 8-byte little-endian
//! header length, then a JSON header naming each tensor's dtype and shape —
//! the weights themselves are never read. Draft tensors are those named
//! `mtp`/`nextn`/`eagle`/`draft`, or layers past `num_hidden_layers` in
//! `config.json` (where DeepSeek-style checkpoints append their MTP layers).

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest safetensors header read (the format's own reference limit is 100 MB).
const MAX_HEADER: u64 = 100 << 20;

/// What the checkpoint ships.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Shipped {
    pub dir: String,
    /// `config.json` `quantization_config.quant_method`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quant_method: Option<String>,
    /// dtype -> number of draft tensors.
    pub draft_dtypes: BTreeMap<String, usize>,
    /// dtype -> number of other tensors.
    pub target_dtypes: BTreeMap<String, usize>,
    /// Shards whose header could not be read, with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

impl Shipped {
    /// `BF16` or `BF16 x120, F8_E4M3 x30`.
    pub fn draft_summary(&self) -> String {
        summary(&self.draft_dtypes)
    }
}

fn summary(dtypes: &BTreeMap<String, usize>) -> String {
    match dtypes.len() {
        0 => "none".to_string(),
        1 => dtypes.keys().next().cloned().unwrap_or_default(),
        _ => dtypes.iter().map(|(d, n)| format!("{d} x{n}")).collect::<Vec<_>>().join(", "),
    }
}

/// Why a checkpoint directory (`--checkpoint DIR`) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not JSON: {source}")]
    NotJson { path: PathBuf, source: serde_json::Error },
    #[error("{0}: no weight_map")]
    NoWeightMap(PathBuf),
    #[error("{0}: no safetensors shards")]
    NoShards(PathBuf),
}

/// Read a checkpoint directory's config and safetensors headers.
pub fn read(dir: &Path) -> Result<Shipped, CheckpointError> {
    let config: Value = read_json(&dir.join("config.json"))?;
    let hidden = config.get("num_hidden_layers").or_else(|| config.get("text_config").and_then(|t| t.get("num_hidden_layers"))).and_then(Value::as_u64);
    let quant_method = config.get("quantization_config").and_then(|q| q.get("quant_method")).and_then(Value::as_str).map(str::to_string);
    let shards = shard_files(dir)?;
    let mut shipped = Shipped { dir: dir.display().to_string(), quant_method, ..Shipped::default() };
    for shard in shards {
        match header(&shard) {
            Ok(tensors) => {
                for (name, dtype) in tensors {
                    let map = if is_draft(&name, hidden) { &mut shipped.draft_dtypes } else { &mut shipped.target_dtypes };
                    *map.entry(dtype).or_default() += 1;
                }
            }
            Err(e) => shipped.unreadable.push(format!("{}: {e}", shard.display())),
        }
    }
    Ok(shipped)
}

fn read_json(path: &Path) -> Result<Value, CheckpointError> {
    let io = |source| CheckpointError::Io { path: path.to_path_buf(), source };
    let file = File::open(path).map_err(io)?;
    let mut text = Vec::new();
    file.take(MAX_HEADER).read_to_end(&mut text).map_err(io)?;
    serde_json::from_slice(&text).map_err(|source| CheckpointError::NotJson { path: path.to_path_buf(), source })
}

/// The shards named by `model.safetensors.index.json`, else every `*.safetensors`.
fn shard_files(dir: &Path) -> Result<Vec<PathBuf>, CheckpointError> {
    let index = dir.join("model.safetensors.index.json");
    let mut files: Vec<PathBuf> = if index.exists() {
        let value = read_json(&index)?;
        let map = value.get("weight_map").and_then(Value::as_object).ok_or_else(|| CheckpointError::NoWeightMap(index.clone()))?;
        let mut names: Vec<&str> = map.values().filter_map(Value::as_str).collect();
        names.sort_unstable();
        names.dedup();
        // Shard names come from the file: keep them inside the directory.
        names.into_iter().filter(|n| !n.contains('/') && !n.contains('\\') && *n != "..").map(|n| dir.join(n)).collect()
    } else {
        let entries = std::fs::read_dir(dir).map_err(|source| CheckpointError::Io { path: dir.to_path_buf(), source })?;
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "safetensors")).collect()
    };
    files.sort();
    if files.is_empty() {
        return Err(CheckpointError::NoShards(dir.to_path_buf()));
    }
    Ok(files)
}

/// (tensor name, dtype) of one shard, from its header only.
fn header(path: &Path) -> Result<Vec<(String, String)>, String> {
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    let mut len = [0u8; 8];
    file.read_exact(&mut len).map_err(|e| format!("no header length: {e}"))?;
    let len = u64::from_le_bytes(len);
    if len > MAX_HEADER {
        return Err(format!("header of {len} bytes is over the {MAX_HEADER}-byte limit"));
    }
    let mut json = Vec::with_capacity(len as usize);
    (&mut file).take(len).read_to_end(&mut json).map_err(|e| e.to_string())?;
    if json.len() as u64 != len {
        return Err(format!("header cut short: {} of {len} bytes", json.len()));
    }
    let value: Value = serde_json::from_slice(&json).map_err(|e| format!("header is not JSON: {e}"))?;
    let map = value.as_object().ok_or("header is not a JSON object")?;
    Ok(map
        .iter()
        .filter(|(name, _)| *name != "__metadata__")
        .filter_map(|(name, t)| t.get("dtype").and_then(Value::as_str).map(|d| (name.clone(), d.to_string())))
        .collect())
}

/// Whether a tensor belongs to the draft head.
fn is_draft(name: &str, hidden_layers: Option<u64>) -> bool {
    let lower = name.to_ascii_lowercase();
    if ["mtp", "nextn", "eagle", "draft"].iter().any(|k| lower.split(['.', '_']).any(|part| part == *k) || lower.starts_with(k)) {
        return true;
    }
    let Some(hidden) = hidden_layers else { return false };
    let mut parts = lower.split('.');
    while let Some(part) = parts.next() {
        if part == "layers" {
            return parts.next().and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n >= hidden);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Write a safetensors file with the given (name, dtype) tensors and no data.
    pub fn write_shard(path: &Path, tensors: &[(&str, &str)]) {
        let mut header = serde_json::Map::new();
        for (name, dtype) in tensors {
            header.insert(name.to_string(), serde_json::json!({"dtype": dtype, "shape": [0], "data_offsets": [0, 0]}));
        }
        let json = serde_json::to_vec(&header).unwrap();
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend(json);
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn draft_tensors_by_name_and_layer_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), r#"{"num_hidden_layers": 61, "quantization_config": {"quant_method": "modelopt"}}"#).unwrap();
        write_shard(&dir.path().join("a.safetensors"), &[("model.layers.0.mlp.experts.0.w1.weight", "U8"), ("model.layers.60.mlp.gate.weight", "BF16")]);
        write_shard(&dir.path().join("b.safetensors"), &[("model.layers.61.mlp.experts.0.w1.weight", "BF16"), ("model.layers.61.eh_proj.weight", "BF16")]);
        std::fs::write(
            dir.path().join("model.safetensors.index.json"),
            r#"{"weight_map": {"x": "a.safetensors", "y": "b.safetensors", "z": "../../etc/passwd"}}"#,
        )
        .unwrap();
        let s = read(dir.path()).unwrap();
        assert_eq!(s.draft_summary(), "BF16");
        assert_eq!(s.draft_dtypes["BF16"], 2);
        assert_eq!(s.target_dtypes.len(), 2);
        assert_eq!(s.quant_method.as_deref(), Some("modelopt"));
        assert!(is_draft("mtp.0.weight", None) && is_draft("model.eagle_fc.weight", None) && !is_draft("model.layers.3.x", Some(61)));
    }

    #[test]
    fn hostile_headers_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), "{}").unwrap();
        std::fs::write(dir.path().join("huge.safetensors"), u64::MAX.to_le_bytes()).unwrap();
        std::fs::write(dir.path().join("short.safetensors"), [1u8, 2]).unwrap();
        let s = read(dir.path()).unwrap();
        assert_eq!(s.unreadable.len(), 2);
        assert!(read(&dir.path().join("missing")).is_err());
    }
}
