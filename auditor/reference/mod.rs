//! What the checks compare a run against, beyond the policy: the golden
//! acceptance-length tables, the eval thresholds, the agreed drafts of the
//! benchmark's model list, the served checkpoint's shipped precision and
//! engine-patch waivers. Defaults are embedded; flags add their own; an
//! audited checkout's own tables and model list, read through the bundle
//! reader under its limits like every other file, replace the embedded ones.

pub mod checkpoint;
pub mod golden;
pub mod models;
pub mod thresholds;

use crate::evidence::TreeDocument;
use crate::evidence::waiver::Waiver;
use checkpoint::Shipped;
use golden::{GoldenSet, Table};
use models::DraftRow;
use thresholds::Thresholds;

/// Reference data the checks compare against, beyond the policy.
#[derive(Debug, Clone)]
pub struct References {
    pub golden: GoldenSet,
    pub thresholds: Thresholds,
    /// The served checkpoint's shipped draft precision (`--checkpoint DIR`).
    pub checkpoint: Option<Shipped>,
    /// The date suppressions are judged at.
    pub today: jiff::civil::Date,
    /// Engine-patch waivers given with `--waivers DIR` (those inside the input are found there).
    pub waivers: Vec<Waiver>,
    /// Agreed drafts per target, from the audited tree's own model list (`MODELS.md`).
    pub known_drafts: Vec<models::DraftRow>,
}

impl Default for References {
    fn default() -> Self {
        References {
            golden: GoldenSet::embedded(),
            thresholds: Thresholds::embedded(),
            checkpoint: None,
            today: crate::policy::suppressions::today(),
            waivers: Vec::new(),
            known_drafts: Vec::new(),
        }
    }
}

/// A reference an audited tree carries for itself, as the bundle reader found it.
#[derive(Debug, Clone)]
pub enum TreeReference {
    /// A golden-AL table (`golden_al_distribution/<name>.yaml`), or why it does not parse.
    Golden(Result<Table, String>),
    /// The agreed drafts of the tree's model list (`MODELS.md`).
    Drafts(Vec<DraftRow>),
}

impl TreeReference {
    /// What a reference document of the tree holds, parsed from the text the
    /// reader kept (or why it could not be read whole).
    pub fn read(path: &str, document: &TreeDocument, text: &Result<String, String>) -> TreeReference {
        match (document, text) {
            (TreeDocument::ModelList, Ok(text)) => TreeReference::Drafts(models::agreed_drafts(path, text)),
            (TreeDocument::ModelList, Err(_)) => TreeReference::Drafts(Vec::new()),
            (TreeDocument::GoldenTable, Ok(text)) => {
                let name = path.rsplit('/').next().unwrap_or(path);
                let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
                TreeReference::Golden(golden::parse(stem, path, text).map_err(|e| e.to_string()))
            }
            (TreeDocument::GoldenTable, Err(why)) => TreeReference::Golden(Err(format!("{path}: {why}"))),
        }
    }
}

impl References {
    /// These references with a tree's own: its golden tables replace the
    /// embedded set (tables given with `--golden` still apply on top), its
    /// model list adds agreed drafts. A table that does not parse is left
    /// out (the caller lists it as not examined).
    pub fn with_tree<'a>(&self, found: impl IntoIterator<Item = &'a TreeReference>) -> References {
        let mut out = self.clone();
        let mut tree = GoldenSet::default();
        for reference in found {
            match reference {
                TreeReference::Drafts(rows) => out.known_drafts.extend(rows.iter().cloned()),
                TreeReference::Golden(Ok(table)) => {
                    tree.tables.insert(table.name.clone(), table.clone());
                }
                TreeReference::Golden(Err(_)) => {}
            }
        }
        if !tree.tables.is_empty() {
            for (name, table) in self.golden.tables.iter().filter(|(_, t)| !t.source.starts_with(golden::EMBEDDED_SOURCE)) {
                tree.tables.insert(name.clone(), table.clone());
            }
            out.golden = tree;
        }
        out
    }
}
