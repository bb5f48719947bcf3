//! OCI image layouts: a directory (`oci:DIR[:TAG]`) or a tarball of one
//! (`oci-archive:FILE[:TAG]`, and the OCI form of `docker save` archives
//! that Docker 25+ writes). `index.json` names the images by
//! `org.opencontainers.image.ref.name`; blobs live under
//! `blobs/<algorithm>/<hex>` and are read in place.

use super::digest::{Expected, is_valid_digest, verify_bytes};
use super::manifest::{self, Descriptor, Index};
use super::resolve::{self, Fetch, Fetched, MAX_DOCUMENT};
use super::store::{Store, TarIndex};
use super::{Image, ImageError, ImageRef, LayerInfo, LayerSource, OpenOptions, Transport, progress};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

const REF_NAME: &str = "org.opencontainers.image.ref.name";
/// containerd and Docker 25+ also record the full image name.
const IMAGE_NAME: &str = "io.containerd.image.name";

pub(super) fn open_dir(reference: &ImageRef, dir: &Path, tag: Option<&str>, options: &OpenOptions) -> Result<Image, ImageError> {
    if !dir.join("index.json").is_file() {
        return Err(ImageError::NotFound { reference: reference.to_string(), what: format!("{}/index.json (not an OCI image layout)", dir.display()) });
    }
    open_store(reference, Transport::OciLayout, Store::Dir(dir.to_path_buf()), tag, options)
}

pub(super) fn open_archive(reference: &ImageRef, file: &Path, tag: Option<&str>, options: &OpenOptions) -> Result<Image, ImageError> {
    let index = TarIndex::build(file).map_err(|e| io_error(reference, &format!("reading {}", file.display()), e))?;
    open_store(reference, Transport::OciArchive, Store::Tar(index), tag, options)
}

fn io_error(reference: &ImageRef, context: &str, e: std::io::Error) -> ImageError {
    if e.kind() == std::io::ErrorKind::NotFound {
        return ImageError::NotFound { reference: reference.to_string(), what: format!("{context}: {e}") };
    }
    ImageError::Io { reference: reference.to_string(), context: context.to_string(), source: e }
}

/// Whether a store holds an OCI layout (used for `docker save` archives).
pub(super) fn is_layout(store: &Store) -> bool {
    store.contains("index.json") && store.contains("oci-layout")
}

/// Open the image `tag` names in a layout held by `store`.
pub(super) fn open_store(reference: &ImageRef, transport: Transport, store: Store, tag: Option<&str>, options: &OpenOptions) -> Result<Image, ImageError> {
    let name = reference.to_string();
    let store = Arc::new(store);
    let index_bytes = store.read_small("index.json", MAX_DOCUMENT).map_err(|e| io_error(reference, "reading index.json", e))?;
    let index = match manifest::parse(&name, Some(manifest::OCI_INDEX), &index_bytes)? {
        manifest::Parsed::Index(index) => index,
        manifest::Parsed::Image(_) => return Err(ImageError::Malformed { reference: name, what: "index.json".into(), detail: "not an image index".into() }),
    };
    let top = pick(&name, &index, tag)?.clone();
    let mut fetch = BlobFetch { store: &store, reference };
    let top_bytes = fetch.manifest(&top)?;
    verify_bytes(&Expected { what: "manifest".into(), digest: top.digest.clone(), size: Some(top.size) }, &top_bytes.bytes)
        .map_err(|tamper| ImageError::Tamper { reference: name.clone(), tamper })?;
    let resolved = resolve::resolve(&name, top_bytes, top.digest.clone(), options.platform.as_ref(), &mut fetch)?;
    Ok(Image {
        reference: name,
        transport,
        manifest_digest: Some(resolved.manifest_digest),
        index_digest: resolved.index_digest,
        index_platforms: resolved.index_platforms,
        platform: resolved.config.platform(),
        manifest: Some(super::RawManifest { media_type: resolved.media_type, bytes: resolved.manifest_bytes }),
        config_digest: resolved.config_digest,
        config: resolved.config,
        layers: resolved.layers,
        repo_digests: Vec::new(),
        source: Box::new(LayoutLayers { store, reference: reference.to_string() }),
        progress: progress::Progress::new(options.progress),
    })
}

/// The `index.json` entry for `tag`: by ref name (or full image name);
/// without a tag, the only entry.
fn pick<'a>(reference: &str, index: &'a Index, tag: Option<&str>) -> Result<&'a Descriptor, ImageError> {
    let names = || index.manifests.iter().filter_map(|d| d.annotations.get(REF_NAME)).cloned().collect::<Vec<_>>().join(", ");
    match tag {
        Some(tag) => index
            .manifests
            .iter()
            .find(|d| {
                d.annotations.get(REF_NAME).map(String::as_str) == Some(tag)
                    || d.annotations.get(IMAGE_NAME).is_some_and(|n| n == tag || n.ends_with(&format!("/{tag}")))
            })
            .ok_or_else(|| ImageError::NotFound {
                reference: reference.to_string(),
                what: format!("no image named {tag:?} in index.json (names: {})", names()),
            }),
        None => match index.manifests.as_slice() {
            [only] => Ok(only),
            [] => Err(ImageError::NotFound { reference: reference.to_string(), what: "index.json lists no image".into() }),
            _ => Err(ImageError::Reference {
                reference: reference.to_string(),
                reason: format!("the layout holds {} images; name one with :TAG ({})", index.manifests.len(), names()),
            }),
        },
    }
}

/// The path of a blob in a layout, for a digest we can verify (which also
/// keeps a hostile digest from naming a path outside `blobs/`).
fn blob_path(reference: &str, digest: &str) -> Result<String, ImageError> {
    if !is_valid_digest(digest) {
        return Err(ImageError::Malformed {
            reference: reference.to_string(),
            what: "descriptor".into(),
            detail: format!("digest {digest:?} is not sha256/sha512 hex"),
        });
    }
    Ok(format!("blobs/{}", digest.replacen(':', "/", 1)))
}

struct BlobFetch<'a> {
    store: &'a Store,
    reference: &'a ImageRef,
}

impl BlobFetch<'_> {
    fn read(&self, digest: &str) -> Result<Vec<u8>, ImageError> {
        let path = blob_path(&self.reference.to_string(), digest)?;
        self.store.read_small(&path, MAX_DOCUMENT).map_err(|e| io_error(self.reference, &format!("reading blob {digest}"), e))
    }
}

impl Fetch for BlobFetch<'_> {
    fn manifest(&mut self, d: &Descriptor) -> Result<Fetched, ImageError> {
        Ok(Fetched { bytes: self.read(&d.digest)?, media_type: Some(d.media_type.clone()).filter(|t| !t.is_empty()) })
    }
    fn config(&mut self, d: &Descriptor) -> Result<Vec<u8>, ImageError> {
        self.read(&d.digest)
    }
}

struct LayoutLayers {
    store: Arc<Store>,
    reference: String,
}

impl LayerSource for LayoutLayers {
    fn open_blob(&self, index: usize, layer: &LayerInfo) -> Result<Box<dyn Read + Send>, ImageError> {
        let path = blob_path(&self.reference, &layer.digest)?;
        self.store.open(&path).map(|(r, _)| r).map_err(|e| ImageError::Io {
            reference: self.reference.clone(),
            context: format!("opening layer {index} ({path})"),
            source: e,
        })
    }
}
