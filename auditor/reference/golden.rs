//! Golden acceptance-length tables: one YAML per (model, method[, variant]),
//! `<model key>: {thinking_on|thinking_off: {<draft length>: <AL>}}`. The
//! InferenceX tables are embedded as the default set; `--golden DIR` adds
//! tables, replacing embedded ones of the same name.

use crate::provenance::Provenance;
use saphyr::{MarkedYaml, YamlData};
use std::collections::BTreeMap;
use std::path::Path;

/// The embedded tables: (table name, file text).
const EMBEDDED: [(&str, &str); 9] = [
    ("dsv4-pro-0813-dspark", include_str!("../../policies/golden/dsv4-pro-0813-dspark.yaml")),
    ("dsv4_mtp", include_str!("../../policies/golden/dsv4_mtp.yaml")),
    ("glm5.2_mtp", include_str!("../../policies/golden/glm5.2_mtp.yaml")),
    ("kimik2.5_eagle3", include_str!("../../policies/golden/kimik2.5_eagle3.yaml")),
    ("kimik3_dspark", include_str!("../../policies/golden/kimik3_dspark.yaml")),
    (
        "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method",
        include_str!("../../policies/golden/kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml"),
    ),
    ("minimaxm3_eagle3", include_str!("../../policies/golden/minimaxm3_eagle3.yaml")),
    ("minimaxm3_eagle3_gqa", include_str!("../../policies/golden/minimaxm3_eagle3_gqa.yaml")),
    ("qwen3.5_mtp", include_str!("../../policies/golden/qwen3.5_mtp.yaml")),
];

/// One golden value with the place it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub al: f64,
    /// As written in the table (`2.49`).
    pub text: String,
    pub provenance: Provenance,
}

/// One golden table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The file name without `.yaml`: `dsv4_mtp`.
    pub name: String,
    /// Where it came from: `policies/golden/dsv4_mtp.yaml (embedded)` or a path.
    pub source: String,
    /// The single top-level key: `deepseek-v4-pro`.
    pub model: String,
    /// mode (`thinking_on`) -> draft length -> cell.
    pub modes: BTreeMap<String, BTreeMap<u32, Cell>>,
}

impl Table {
    pub fn cell(&self, mode: &str, draft_length: u32) -> Option<&Cell> {
        self.modes.get(mode)?.get(&draft_length)
    }
}

/// Where embedded tables say they come from (the repository's copy).
pub const EMBEDDED_SOURCE: &str = "policies/golden/";

/// A set of golden tables by name.
#[derive(Debug, Clone, Default)]
pub struct GoldenSet {
    pub tables: BTreeMap<String, Table>,
}

impl GoldenSet {
    /// The embedded InferenceX tables.
    pub fn embedded() -> GoldenSet {
        let mut set = GoldenSet::default();
        for (name, text) in EMBEDDED {
            let source = format!("{EMBEDDED_SOURCE}{name}.yaml");
            let table = parse(name, &source, text).expect("embedded golden table is valid");
            set.tables.insert(name.to_string(), table);
        }
        set
    }

    /// Add every `*.yaml` table of `dir`, replacing tables of the same name.
    pub fn add_dir(&mut self, dir: &Path) -> Result<(), GoldenError> {
        let entries = std::fs::read_dir(dir).map_err(|source| GoldenError::Read { path: dir.to_path_buf(), source })?;
        let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.sort();
        let mut added = 0;
        for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml")) {
            let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let text = std::fs::read_to_string(path).map_err(|source| GoldenError::Read { path: path.clone(), source })?;
            let table = parse(&name, &path.display().to_string(), &text)?;
            self.tables.insert(name, table);
            added += 1;
        }
        if added == 0 {
            return Err(GoldenError::NoTables(dir.to_path_buf()));
        }
        Ok(())
    }
}

/// Why golden tables could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    #[error("{path}: {source}")]
    Read { path: std::path::PathBuf, source: std::io::Error },
    #[error("{0}: no golden tables (*.yaml) in this directory")]
    NoTables(std::path::PathBuf),
    #[error("{origin}: invalid golden table: {message}")]
    Invalid { origin: String, message: String },
}

/// Parse one table file.
pub fn parse(name: &str, source: &str, text: &str) -> Result<Table, GoldenError> {
    let err = |message: String| GoldenError::Invalid { origin: source.to_string(), message };
    let docs = crate::evidence::yaml::nodes::load(text, false).map_err(|e| err(e.to_string()))?;
    let Some(YamlData::Mapping(top)) = docs.first().map(|d| &d.data) else { return Err(err("not a mapping".into())) };
    let mut models = top.iter();
    let (Some((key, modes)), None) = (models.next(), models.next()) else {
        return Err(err("expected exactly one top-level model key".into()));
    };
    let model = scalar(key).ok_or_else(|| err("model key is not a scalar".into()))?;
    let YamlData::Mapping(modes) = &modes.data else { return Err(err(format!("{model}: expected thinking modes"))) };
    let lines: Vec<&str> = text.lines().collect();
    let mut table = Table { name: name.to_string(), source: source.to_string(), model, modes: BTreeMap::new() };
    for (mode, cells) in modes {
        let mode = scalar(mode).ok_or_else(|| err("thinking mode is not a scalar".into()))?;
        let YamlData::Mapping(cells) = &cells.data else { return Err(err(format!("{mode}: expected draft length -> AL"))) };
        let mut row = BTreeMap::new();
        for (k, v) in cells {
            let k_text = scalar(k).unwrap_or_default();
            let draft: u32 = k_text.parse().map_err(|_| err(format!("{mode}: draft length {k_text:?} is not a whole number")))?;
            let text = scalar(v).unwrap_or_default();
            let al: f64 = text.parse().map_err(|_| err(format!("{mode}.{draft}: AL {text:?} is not a number")))?;
            if !(1.0..=f64::from(draft) + 1.0).contains(&al) {
                return Err(err(format!("{mode}.{draft}: AL {al} is outside [1, {}]", draft + 1)));
            }
            let line = v.span.start.line();
            let shown = lines.get(line.saturating_sub(1)).map_or("", |l| l.trim());
            let provenance = Provenance::new(source.to_string(), Some(line as u64), shown.to_string());
            row.insert(draft, Cell { al, text, provenance });
        }
        table.modes.insert(mode, row);
    }
    Ok(table)
}

fn scalar(node: &MarkedYaml) -> Option<String> {
    match &node.data {
        YamlData::Representation(text, _, _) => Some(text.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_tables_load_with_lines() {
        let set = GoldenSet::embedded();
        assert_eq!(set.tables.len(), 9);
        let dsv4 = &set.tables["dsv4_mtp"];
        assert_eq!(dsv4.model, "deepseek-v4-pro");
        let cell = dsv4.cell("thinking_on", 3).unwrap();
        assert_eq!((cell.al, cell.text.as_str()), (2.49, "2.49"));
        assert_eq!(cell.provenance.text, "3: 2.49");
        assert_eq!(dsv4.cell("thinking_off", 3).unwrap().al, 2.97);
        assert!(set.tables["kimik3_dspark"].cell("thinking_off", 3).is_none());
    }

    #[test]
    fn invalid_tables_are_errors_naming_the_file() {
        assert!(parse("x", "x.yaml", "a: {thinking_on: {3: 9.9}}").unwrap_err().to_string().contains("outside [1, 4]"));
        assert!(parse("x", "x.yaml", "a: {thinking_on: {k: 2}}").unwrap_err().to_string().contains("x.yaml"));
        assert!(parse("x", "x.yaml", "a: 1\nb: 2\n").is_err());
        assert!(parse("x", "x.yaml", "[").is_err());
    }
}
