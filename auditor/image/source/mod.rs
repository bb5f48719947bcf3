//! Image sources: turn any image reference — a registry, a Docker Engine,
//! an OCI layout or archive, a `docker save` tarball — into one [`Image`]:
//! the resolved manifest digest, the platform, the config, and the ordered
//! layers, each readable as a stream whose digest and size are verified
//! while it is read.
//!
//! The API is synchronous so the forensics layer can walk layers with
//! `tar` and `rayon`; the async clients (oci-client, reqwest, bollard) run
//! on a runtime this module owns, behind bounded channels, so no blob is
//! ever held whole in memory and nothing from an image touches the disk.
//!
//! Kept apart from [`super::forensics`] because obtaining an image and
//! judging it change for different reasons: this folder knows transports,
//! protocols and blob formats and emits no findings; a new transport is
//! a file here and touches nothing that judges.

mod auth;
mod bridge;
mod config;
mod daemon;
pub(crate) mod decompress;
pub(crate) mod digest;
mod docker_archive;
mod error;
mod manifest;
mod oci_layout;
mod progress;
mod redirect;
mod reference;
mod registry;
mod resolve;
mod retry;
mod store;

pub use config::{History, ImageConfig};
pub use daemon::{Change, ChangeKind, changes_text, container_changes};
pub use error::{ImageError, Tamper, TamperKind, tamper_of};
pub use manifest::{NotAPlatform, Platform, fuzz_documents};
pub use reference::{ImageRef, RegistryRef};
pub use retry::RetryPolicy;

pub use crate::report::Transport;
use digest::{Expected, VerifyingReader};
use serde::Serialize;
use std::io::{self, Read};

/// How an image is opened.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// The platform to pick from a multi-platform index (default
    /// linux/amd64). When set explicitly, a single-platform image must be
    /// this platform.
    pub platform: Option<Platform>,
    /// Registries (`host[:port]`) spoken to over plain HTTP besides loopback.
    pub insecure_registries: Vec<String>,
    /// Retries for 429, 5xx and timeouts.
    pub retry: RetryPolicy,
    /// Most layer blobs fetched from a registry at once; `open_layer`
    /// blocks while this many layer streams are alive.
    pub max_concurrent_fetches: usize,
    /// Draw progress bars on stderr for layer reads.
    pub progress: bool,
    /// The longest silence while reading a registry response before it
    /// counts as a timeout (and is retried, or resumed with `Range`).
    pub read_timeout: std::time::Duration,
    /// Hosts a registry may redirect to besides itself and the known blob
    /// stores of well-known registries (the rule is in `redirect.rs`).
    pub allowed_redirects: Vec<String>,
    /// Largest manifest, index or config read from a registry.
    pub max_document: u64,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            platform: None,
            insecure_registries: Vec::new(),
            retry: RetryPolicy::default(),
            max_concurrent_fetches: 4,
            progress: false,
            read_timeout: std::time::Duration::from_secs(60),
            allowed_redirects: Vec::new(),
            max_document: resolve::MAX_DOCUMENT,
        }
    }
}

/// One layer, in order from the base up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerInfo {
    /// The digest of the blob as the source stores it (compressed for a
    /// registry; the uncompressed tar, so equal to the diff-id, for
    /// `docker save` and the Engine's export).
    pub digest: String,
    /// The blob size the manifest promises; `None` where the source
    /// promises none (an Engine's export).
    pub size: Option<u64>,
    pub media_type: String,
    /// The digest of the uncompressed tar (`rootfs.diff_ids`).
    pub diff_id: Option<String>,
}

/// The manifest document as the source had it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawManifest {
    pub media_type: String,
    pub bytes: Vec<u8>,
}

/// An opened image. Metadata is read and verified at open; layers are read
/// on demand with [`Image::open_layer`].
pub struct Image {
    /// The reference in canonical transport form.
    pub reference: String,
    pub transport: Transport,
    /// The digest of the image manifest, where the source has one (an
    /// Engine's image or a legacy `docker save` tarball has none).
    pub manifest_digest: Option<String>,
    /// The digest of the index the manifest was picked from, if any.
    pub index_digest: Option<String>,
    /// Every platform of that index with its manifest digest, the picked one
    /// included (empty when the reference named a manifest).
    pub index_platforms: Vec<(String, String)>,
    /// `os/architecture[/variant]` of the image.
    pub platform: String,
    pub manifest: Option<RawManifest>,
    /// The config digest (the image ID, for Docker).
    pub config_digest: String,
    pub config: ImageConfig,
    pub layers: Vec<LayerInfo>,
    /// `repo@sha256:..` digests an engine recorded for the image (the
    /// manifests or indexes it was pulled or loaded by); empty elsewhere.
    pub repo_digests: Vec<String>,
    source: Box<dyn LayerSource>,
    progress: progress::Progress,
}

/// How a source streams one layer blob (raw: verification is added here).
trait LayerSource: Send + Sync {
    fn open_blob(&self, index: usize, layer: &LayerInfo) -> Result<Box<dyn Read + Send>, ImageError>;
}

/// Open the image `reference` names.
pub fn open(reference: &ImageRef, options: &OpenOptions) -> Result<Image, ImageError> {
    match reference {
        ImageRef::Registry(r) => registry::open(reference, r, options),
        ImageRef::Daemon { name } => daemon::open(reference, name, options),
        ImageRef::OciLayout { dir, tag } => oci_layout::open_dir(reference, dir, tag.as_deref(), options),
        ImageRef::OciArchive { file, tag } => oci_layout::open_archive(reference, file, tag.as_deref(), options),
        ImageRef::DockerArchive { file, name } => docker_archive::open(reference, file, name.as_deref(), options),
    }
}

impl Image {
    /// The blob of layer `index` as the source stores it (compressed for
    /// registry layers), verified for digest and size while it is read: the
    /// stream fails with a [`Tamper`] (see [`tamper_of`]) on the first byte
    /// past the promised size, or at the end when the size or digest is
    /// wrong. Read it to EOF before trusting anything read from it.
    pub(crate) fn open_layer(&self, index: usize) -> Result<Box<dyn Read + Send>, ImageError> {
        let layer = self
            .layers
            .get(index)
            .ok_or_else(|| ImageError::NotFound { reference: self.reference.clone(), what: format!("layer {index} (the image has {})", self.layers.len()) })?;
        let blob = self.source.open_blob(index, layer)?;
        let expected = Expected { what: format!("layer {index}"), digest: layer.digest.clone(), size: layer.size };
        let verified = VerifyingReader::new(blob, expected).map_err(|e| ImageError::from_io(&self.reference, &format!("layer {index}"), e))?;
        Ok(self.progress.wrap(&format!("layer {index} {}", short(&layer.digest)), layer.size, Box::new(verified)))
    }

    /// Layer `index` as its uncompressed tar stream: [`Image::open_layer`]
    /// decompressed by media type. The blob digest, checked at the blob's
    /// EOF, authenticates what the stream holds; the config's diff-id is
    /// not checked here (a second SHA-256 pass over the larger bytes, for a
    /// claim the forensic walk trusts for nothing — [`Image::verify_layer`]
    /// checks it). A tar walker stops at the end-of-archive marker: drain
    /// the rest (`io::copy` to `io::sink()`) so the blob check runs.
    pub fn open_layer_tar(&self, index: usize) -> Result<Box<dyn Read + Send>, ImageError> {
        let blob = self.open_layer(index)?;
        decompress::tar_stream(&self.reference, &self.layers[index].media_type, blob)
    }

    /// Read layer `index` to its end: its blob's digest and size, and, when
    /// the config names a diff-id and the media type can be decompressed,
    /// its uncompressed stream against that diff-id (a runtime refuses a
    /// layer whose diff-id lies). A blob that fails its own check is
    /// reported as such, even when it also fails to decompress.
    pub(crate) fn verify_layer(&self, index: usize) -> Result<(), ImageError> {
        let io_err = |e: io::Error| ImageError::from_io(&self.reference, &format!("layer {index}"), e);
        let mut blob = self.open_layer(index)?;
        let layer = &self.layers[index];
        let uncompressed = match &layer.diff_id {
            Some(diff_id) if diff_id != &layer.digest && decompress::Compression::of_media_type(&layer.media_type).is_some() => {
                let tar = decompress::tar_stream(&self.reference, &layer.media_type, Box::new(&mut blob))?;
                let expected = Expected { what: format!("layer {index} (uncompressed)"), digest: diff_id.clone(), size: None };
                VerifyingReader::new(tar, expected).and_then(|mut r| io::copy(&mut r, &mut io::sink())).map(drop).map_err(io_err)
            }
            _ => Ok(()),
        };
        // the blob's own verdict first; else the first failure (a broken
        // stream fails the decompressor before the drain sees it again)
        match (io::copy(&mut blob, &mut io::sink()).map_err(io_err), uncompressed) {
            (Err(tamper @ ImageError::Tamper { .. }), _) => Err(tamper),
            (_, Err(first)) | (Err(first), Ok(())) => Err(first),
            (Ok(_), Ok(())) => Ok(()),
        }
    }

    /// The uncompressed layer digests, in order (from the config).
    pub fn diff_ids(&self) -> Vec<String> {
        self.layers.iter().filter_map(|l| l.diff_id.clone()).collect()
    }
}

/// `sha256:0123456789ab` — the first 12 hex digits.
pub(crate) fn short(digest: &str) -> &str {
    let end = digest.find(':').map_or(12, |i| i + 13).min(digest.len());
    digest.get(..end).unwrap_or(digest)
}
