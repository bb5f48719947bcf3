//! The benchmark's own model list (`MODELS.md` of an InferenceX checkout):
//! which draft models are agreed for which target. A draft the list names
//! for its target is the shipped draft, not a substitution — and the list
//! of the tree under audit is the one that counts, not a copy in the
//! binary (an older or newer tree agrees other drafts).
//!
//! The table read is the one whose header has an "Agreed draft" column:
//! `| Model | … | Agreed draft model(s) (PoR) | … |`, model cells like
//! ``Kimi-K3 (`kimik3`)``, draft cells naming Hugging Face repositories in
//! backticks (`` `Inferact/Kimi-K3-DSpark` ``).

use crate::provenance::Provenance;

/// One row of the agreed-drafts table.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRow {
    /// The model's display name (`Kimi-K3`), before the prefix.
    pub model: String,
    /// The model prefix in backticks (`kimik3`), when the cell has one.
    pub prefix: Option<String>,
    /// The agreed draft repositories (`org/name`).
    pub drafts: Vec<String>,
    /// The row in the file.
    pub provenance: Provenance,
}

impl DraftRow {
    /// Whether this row is about the target `model_path` (a Hugging Face id
    /// or local path): its display name appears in the path, letters and
    /// digits compared.
    pub fn names_target(&self, model_path: &str) -> bool {
        let name = squash(&self.model);
        !name.is_empty() && squash(model_path).contains(&name)
    }
}

fn squash(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

/// The agreed-drafts rows of a `MODELS.md` text (`file` names it in evidence).
pub fn agreed_drafts(file: &str, text: &str) -> Vec<DraftRow> {
    let mut rows = Vec::new();
    let mut column: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let line_trim = line.trim();
        if !line_trim.starts_with('|') {
            column = None;
            continue;
        }
        let cells: Vec<&str> = line_trim.trim_matches('|').split('|').map(str::trim).collect();
        if let Some(at) = cells.iter().position(|c| c.to_ascii_lowercase().starts_with("agreed draft")) {
            column = Some(at);
            continue;
        }
        let Some(at) = column else { continue };
        if cells.iter().all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | ' '))) {
            continue;
        }
        let (Some(model_cell), Some(draft_cell)) = (cells.first(), cells.get(at)) else { continue };
        let ticked = |cell: &str| -> Vec<String> { cell.split('`').skip(1).step_by(2).map(str::to_string).collect() };
        let drafts: Vec<String> = ticked(draft_cell).into_iter().filter(|d| d.contains('/')).collect();
        // The name's first word: `DeepSeek-V4-Pro 1.6T (`dsv4`)` is DeepSeek-V4-Pro.
        let model = model_cell.split(['(', ' ']).next().unwrap_or(model_cell).trim().to_string();
        let prefix = ticked(model_cell).into_iter().next();
        if drafts.is_empty() {
            continue;
        }
        let provenance = Provenance::new(file.to_string(), Some(i as u64 + 1), line_trim.chars().take(200).collect::<String>());
        rows.push(DraftRow { model, prefix, drafts, provenance });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_agreed_drafts_and_their_prefixes() {
        let text = "## AgentX\n\n| Model | Engines | Agreed draft model(s) (PoR) | Proposed |\n|---|---|---|---|\n| DeepSeek-V4-Pro 1.6T (`dsv4`) | vLLM | native MTP; DSpark heads `deepseek-ai/DeepSeek-V4-Pro-0813` | None |\n| Kimi-K3 (`kimik3`) | vLLM | `Inferact/Kimi-K3-DSpark` | None |\n| GLM-5.2 (`glm5.2`) | SGLang | native MTP | None |\n\n| Other | Agreed |\n|---|---|\n| x | `a/b` |\n";
        let rows = agreed_drafts("MODELS.md", text);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            (rows[1].model.as_str(), rows[1].prefix.as_deref(), rows[1].drafts.clone()),
            ("Kimi-K3", Some("kimik3"), vec!["Inferact/Kimi-K3-DSpark".to_string()])
        );
        assert_eq!(rows[1].provenance.line, Some(6));
        assert!(rows[1].names_target("moonshotai/Kimi-K3") && !rows[1].names_target("moonshotai/Kimi-K2.5"));
        assert_eq!(rows[0].drafts, ["deepseek-ai/DeepSeek-V4-Pro-0813"]);
        assert!(rows[0].names_target("deepseek-ai/DeepSeek-V4-Pro"));
    }
}
