//! From the document a reference names to one image: an index is narrowed
//! to the wanted platform, each manifest fetched by digest is checked
//! against its descriptor, the config is checked against the manifest, and
//! the layers are listed with their diff-ids. Sources differ only in how
//! they fetch a descriptor, so this is the one place that decides.

use super::config::ImageConfig;
use super::digest::{Expected, verify_bytes};
use super::manifest::{self, Descriptor, Parsed, Platform};
use super::{ImageError, LayerInfo};

/// Largest manifest, index or config read (they are held in memory): the
/// size the distribution spec asks registries to accept at least.
pub(super) const MAX_DOCUMENT: u64 = 4 << 20;

/// A document as a source returned it.
pub(super) struct Fetched {
    pub bytes: Vec<u8>,
    /// The type the source announced (Content-Type, descriptor).
    pub media_type: Option<String>,
}

/// The image a reference resolved to.
pub(super) struct Resolved {
    pub manifest_digest: String,
    pub index_digest: Option<String>,
    /// Every platform of the index and its manifest digest (empty for a manifest).
    pub index_platforms: Vec<(String, String)>,
    pub media_type: String,
    pub manifest_bytes: Vec<u8>,
    pub config_digest: String,
    pub config: ImageConfig,
    pub layers: Vec<LayerInfo>,
}

/// How to get documents by descriptor from one source.
pub(super) trait Fetch {
    fn manifest(&mut self, descriptor: &Descriptor) -> Result<Fetched, ImageError>;
    fn config(&mut self, descriptor: &Descriptor) -> Result<Vec<u8>, ImageError>;
}

/// Resolve `top` (already verified against `top_digest` by the caller).
pub(super) fn resolve(reference: &str, top: Fetched, top_digest: String, platform: Option<&Platform>, fetch: &mut dyn Fetch) -> Result<Resolved, ImageError> {
    let tamper = |tamper| ImageError::Tamper { reference: reference.to_string(), tamper };
    let mut index_platforms = Vec::new();
    let (manifest_digest, index_digest, fetched, manifest) = match manifest::parse(reference, top.media_type.as_deref(), &top.bytes)? {
        Parsed::Image(m) => (top_digest, None, top, m),
        Parsed::Index(index) => {
            index_platforms = manifest::platforms(&index);
            let wanted = platform.cloned().unwrap_or_default();
            let entry = manifest::select(reference, &index, &wanted)?.clone();
            let fetched = fetch.manifest(&entry)?;
            verify_bytes(&Expected { what: format!("manifest for {wanted}"), digest: entry.digest.clone(), size: Some(entry.size) }, &fetched.bytes)
                .map_err(tamper)?;
            match manifest::parse(reference, Some(&entry.media_type).filter(|t| !t.is_empty()).map(String::as_str), &fetched.bytes)? {
                Parsed::Image(m) => (entry.digest, Some(top_digest), fetched, m),
                Parsed::Index(_) => return Err(ImageError::Unsupported { reference: reference.to_string(), what: "an index nested in an index".into() }),
            }
        }
    };
    let config_bytes = fetch.config(&manifest.config)?;
    verify_bytes(&Expected { what: "config".into(), digest: manifest.config.digest.clone(), size: Some(manifest.config.size) }, &config_bytes)
        .map_err(tamper)?;
    let config = ImageConfig::parse(reference, &config_bytes)?;
    if let (None, Some(wanted)) = (&index_digest, platform) {
        check_platform(reference, wanted, &config)?;
    }
    if config.diff_ids.len() != manifest.layers.len() {
        return Err(ImageError::Malformed {
            reference: reference.to_string(),
            what: "image".into(),
            detail: format!("the manifest lists {} layers but the config {} diff_ids", manifest.layers.len(), config.diff_ids.len()),
        });
    }
    let layers = manifest
        .layers
        .iter()
        .zip(&config.diff_ids)
        .map(|(d, diff_id)| LayerInfo { digest: d.digest.clone(), size: Some(d.size), media_type: d.media_type.clone(), diff_id: Some(diff_id.clone()) })
        .collect();
    let media_type = manifest.media_type.clone().or(fetched.media_type).unwrap_or_else(|| manifest::OCI_MANIFEST.to_string());
    Ok(Resolved {
        manifest_digest,
        index_digest,
        index_platforms,
        media_type,
        manifest_bytes: fetched.bytes,
        config_digest: manifest.config.digest.clone(),
        config,
        layers,
    })
}

/// A single-platform image asked for by an explicit platform must be that
/// platform (its config says which).
fn check_platform(reference: &str, wanted: &Platform, config: &ImageConfig) -> Result<(), ImageError> {
    let have = Platform { os: config.os.clone(), architecture: config.architecture.clone(), variant: config.variant.clone() };
    if wanted.matches(&have) {
        Ok(())
    } else {
        Err(ImageError::PlatformNotFound { reference: reference.to_string(), wanted: wanted.to_string(), present: vec![have.to_string()] })
    }
}
