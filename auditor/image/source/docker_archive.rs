//! `docker save` tarballs (`docker-archive:FILE[:NAME:TAG]`), in both
//! shapes: the legacy one (`manifest.json` naming a config file and one
//! uncompressed tar per layer, as podman and Docker before 25 write it) and
//! the OCI one Docker 25+ writes (an OCI layout with a `manifest.json`
//! beside it), which is read as an OCI layout. The legacy shape has no
//! registry manifest, so its image has no manifest digest: it is matched
//! to other transports by config digest and diff-ids.

use super::digest::{Expected, sha256_digest, verify_bytes};
use super::manifest::DOCKER_LAYER_TAR;
use super::oci_layout;
use super::resolve::MAX_DOCUMENT;
use super::store::{Store, TarIndex};
use super::{Image, ImageConfig, ImageError, ImageRef, LayerInfo, LayerSource, OpenOptions, Platform, Transport, progress};
use serde::Deserialize;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// One entry of `manifest.json`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Entry {
    config: String,
    #[serde(default)]
    repo_tags: Option<Vec<String>>,
    layers: Vec<String>,
}

pub(super) fn open(reference: &ImageRef, file: &Path, name: Option<&str>, options: &OpenOptions) -> Result<Image, ImageError> {
    let r = reference.to_string();
    let index = TarIndex::build(file).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ImageError::NotFound { reference: r.clone(), what: format!("{}: {e}", file.display()) }
        } else {
            ImageError::Io { reference: r.clone(), context: format!("reading {}", file.display()), source: e }
        }
    })?;
    let store = Store::Tar(index);
    if oci_layout::is_layout(&store) {
        return oci_layout::open_store(reference, Transport::DockerArchive, store, name, options);
    }
    let malformed = |what: &str, detail: String| ImageError::Malformed { reference: r.clone(), what: what.to_string(), detail };
    let bytes = store.read_small("manifest.json", MAX_DOCUMENT).map_err(|e| malformed("docker archive", format!("manifest.json: {e}")))?;
    let entries: Vec<Entry> = serde_json::from_slice(&bytes).map_err(|e| malformed("manifest.json", e.to_string()))?;
    let entry = pick(&r, &entries, name)?;
    let config_bytes = store.read_small(&entry.config, MAX_DOCUMENT).map_err(|e| malformed("docker archive", format!("{}: {e}", entry.config)))?;
    // The config file is named by its digest (`<hex>.json`, or
    // `blobs/sha256/<hex>`); when it is, the bytes must match.
    let config_digest = sha256_digest(&config_bytes);
    if let Some(hex) = named_digest(&entry.config) {
        verify_bytes(&Expected { what: "config".into(), digest: format!("sha256:{hex}"), size: None }, &config_bytes)
            .map_err(|tamper| ImageError::Tamper { reference: r.clone(), tamper })?;
    }
    let config = ImageConfig::parse(&r, &config_bytes)?;
    if config.diff_ids.len() != entry.layers.len() {
        return Err(malformed("image", format!("manifest.json lists {} layers but the config {} diff_ids", entry.layers.len(), config.diff_ids.len())));
    }
    if let Some(wanted) = &options.platform {
        let have = Platform { os: config.os.clone(), architecture: config.architecture.clone(), variant: config.variant.clone() };
        if !wanted.matches(&have) {
            return Err(ImageError::PlatformNotFound { reference: r, wanted: wanted.to_string(), present: vec![have.to_string()] });
        }
    }
    let mut layers = Vec::new();
    let mut paths = Vec::new();
    for (path, diff_id) in entry.layers.iter().zip(&config.diff_ids) {
        let (mut head, size) = store.open(path).map_err(|e| malformed("docker archive", format!("layer {path}: {e}")))?;
        let mut magic = [0u8; 4];
        let n = head.read(&mut magic).unwrap_or(0);
        if magic[..n].starts_with(&[0x1f, 0x8b]) || magic[..n].starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            return Err(ImageError::Unsupported {
                reference: r,
                what: format!("compressed layer {path} in a legacy docker archive (its blob digest is not recorded)"),
            });
        }
        layers.push(LayerInfo { digest: diff_id.clone(), size: Some(size), media_type: DOCKER_LAYER_TAR.into(), diff_id: Some(diff_id.clone()) });
        paths.push(path.clone());
    }
    Ok(Image {
        reference: r.clone(),
        transport: Transport::DockerArchive,
        manifest_digest: None,
        index_digest: None,
        index_platforms: Vec::new(),
        platform: config.platform(),
        manifest: None,
        config_digest,
        config,
        layers,
        repo_digests: Vec::new(),
        source: Box::new(ArchiveLayers { store: Arc::new(store), paths, reference: r }),
        progress: progress::Progress::new(options.progress),
    })
}

/// The image `name` names (by `RepoTags`); without a name, the only one.
fn pick<'a>(reference: &str, entries: &'a [Entry], name: Option<&str>) -> Result<&'a Entry, ImageError> {
    let tags = || entries.iter().flat_map(|e| e.repo_tags.iter().flatten()).cloned().collect::<Vec<_>>().join(", ");
    match name {
        Some(name) => entries
            .iter()
            .find(|e| {
                e.repo_tags.iter().flatten().any(|t| t == name || t.strip_prefix("docker.io/library/").or_else(|| t.strip_prefix("docker.io/")) == Some(name))
            })
            .ok_or_else(|| ImageError::NotFound {
                reference: reference.to_string(),
                what: format!("no image tagged {name:?} in the archive (tags: {})", tags()),
            }),
        None => match entries {
            [only] => Ok(only),
            [] => Err(ImageError::NotFound { reference: reference.to_string(), what: "manifest.json lists no image".into() }),
            _ => Err(ImageError::Reference {
                reference: reference.to_string(),
                reason: format!("the archive holds {} images; name one with :NAME:TAG ({})", entries.len(), tags()),
            }),
        },
    }
}

/// The hex digest a config file's name carries, if it carries one.
fn named_digest(path: &str) -> Option<&str> {
    let stem = path.rsplit('/').next()?;
    let hex = stem.strip_suffix(".json").unwrap_or(stem);
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hex)
}

struct ArchiveLayers {
    store: Arc<Store>,
    paths: Vec<String>,
    reference: String,
}

impl LayerSource for ArchiveLayers {
    fn open_blob(&self, index: usize, _layer: &LayerInfo) -> Result<Box<dyn Read + Send>, ImageError> {
        let path = self.paths.get(index).ok_or_else(|| ImageError::NotFound { reference: self.reference.clone(), what: format!("layer {index}") })?;
        self.store.open(path).map(|(r, _)| r).map_err(|e| ImageError::Io {
            reference: self.reference.clone(),
            context: format!("opening layer {index} ({path})"),
            source: e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_names_carry_digests() {
        let hex = "ab".repeat(32);
        assert_eq!(named_digest(&format!("{hex}.json")), Some(hex.as_str()));
        assert_eq!(named_digest(&format!("blobs/sha256/{hex}")), Some(hex.as_str()));
        assert_eq!(named_digest("config.json"), None);
    }
}
