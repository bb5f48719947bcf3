//! One image as the forensics see it ([`Side`]: its config and layers,
//! merged files, installed distributions and captured texts) and the
//! policy's image lists ([`Rules`]): what classifying changes, verifying
//! RECORDs and working out what Python imports all read.

use super::dist::{Distribution, Owners, TextSource};
use super::file_index::FsIndex;
use super::node::Node;
use crate::image::Image;
use crate::policy::pattern;
use crate::policy::sections::EnginePatch;
use crate::provenance::{Provenance, clip};

/// The policy's image lists.
pub(super) struct Rules<'a> {
    policy: &'a EnginePatch,
}

impl<'a> Rules<'a> {
    pub(super) fn new(policy: &'a EnginePatch) -> Self {
        Rules { policy }
    }

    /// A serving-engine distribution (PEP 503 name against the patterns).
    pub(super) fn engine_name(&self, name: &str) -> bool {
        pattern::lists_package(&self.policy.engine_packages, name)
    }

    pub(super) fn engine_tree(&self, path: &str) -> bool {
        self.policy.engine_paths.is_match(path)
    }

    pub(super) fn volatile(&self, path: &str) -> bool {
        self.policy.volatile_paths.is_match(path)
    }

    pub(super) fn injection(&self, name: &str) -> bool {
        self.policy.injection_env.iter().any(|n| n == name)
    }
}

/// One image as the classifier sees it.
pub(super) struct Side<'a> {
    pub image: &'a Image,
    pub fs: &'a FsIndex,
    pub dists: &'a [Distribution],
    pub owners: Owners<'a>,
    pub texts: &'a dyn TextSource,
}

impl<'a> Side<'a> {
    pub(super) fn new(image: &'a Image, fs: &'a FsIndex, dists: &'a [Distribution], texts: &'a dyn TextSource) -> Self {
        Side { image, fs, dists, owners: Owners::new(dists), texts }
    }

    /// The evidence for an entry of this image: its path, the layer blob
    /// that wrote it, and `text`.
    pub(super) fn evidence(&self, path: &str, node: Option<&Node>, text: String) -> Provenance {
        let layer = node.and_then(|n| self.image.layers.get(usize::from(n.layer))).map(|l| l.digest.clone());
        Provenance::new(path, None, clip(&text)).in_layer(layer)
    }

    /// `layer 3 (RUN pip install …)`: the layer that wrote an entry, with
    /// its build step.
    pub(super) fn written_by(&self, node: &Node) -> String {
        let step = self.image.config.layer_step(usize::from(node.layer));
        match step {
            Some(s) if !s.is_empty() => format!("layer {} ({})", node.layer, clip(s)),
            _ => format!("layer {}", node.layer),
        }
    }

    /// The distribution a path belongs to.
    pub(super) fn owner(&self, path: &str) -> Option<&'a Distribution> {
        self.owners.owner(path)
    }

    /// Whether `path` is inside a distribution's metadata directory.
    pub(super) fn in_meta_dir(&self, path: &str) -> bool {
        self.dists.iter().any(|d| path.strip_prefix(d.meta_dir.as_str()).is_some_and(|r| r.is_empty() || r.starts_with('/')))
    }
}

/// Short description of an entry for evidence text.
pub(super) fn describe(node: &Node) -> String {
    let digest = node.digest.map(|d| format!(" {}", d.short())).unwrap_or_default();
    let link = node.link.as_deref().map(|l| format!(" -> {l}")).unwrap_or_default();
    format!("{} {:o} {}:{} {} B{digest}{link}", node.kind.as_str(), node.mode, node.uid, node.gid, node.size)
}
