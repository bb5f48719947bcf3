//! From images to merged filesystem indexes, reading each layer blob at
//! most once: a layer cached by an earlier run comes from the cache; a
//! layer two images share (same blob digest) is walked once, from the
//! first image that has it (the pinned one, so an upstream shared with it
//! is not read again); the rest are walked in parallel, each streaming its
//! index into the cache. Each image's layers are then applied in order,
//! streamed back out of the cache.
//! The counts of what was read, cached and shared go into the report, so
//! a warm run can show it read no upstream layer, and says that a cached
//! layer's blob was verified when it was cached, not in this run
//! (`--verify-cached` reads them again). A layer that goes over a limit
//! of the walk is applied up to the entry where it did and not examined
//! from there (its hostile entries, a decompression bomb among them, are
//! listed), and an image whose merged index passes the entry limit is not
//! applied further, so memory stays bounded.

use super::cache::{Applied, Cache};
use super::file_index::FsIndex;
use super::layerfile::Stopped;
use super::{integrity, walk};
use crate::finding::Finding;
use crate::image::limits::LayerLimits;
use crate::image::{Image, ImageError};
pub use crate::report::LayerCounts;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// An image's merged filesystem and how it was built.
pub(super) struct Indexed {
    pub fs: FsIndex,
    pub counts: LayerCounts,
    /// Layers that could not be applied (read errors, tampering).
    pub missing: Vec<usize>,
}

/// What went wrong while reading layers.
#[derive(Default)]
pub(super) struct Trouble {
    /// `image-integrity` findings for tampered blobs.
    pub findings: Vec<Finding>,
    /// Layers not examined, and why.
    pub not_examined: Vec<String>,
}

/// Index every image (in order, with its role), walking at most `jobs`
/// layers at once; with `verify_cached`, layers the cache holds are walked
/// (and so verified) again rather than taken from it.
pub(super) fn index_images(images: &[(&Image, &str)], cache: &Cache, jobs: usize, limits: &LayerLimits, verify_cached: bool) -> (Vec<Indexed>, Trouble) {
    let mut counts: Vec<LayerCounts> = images
        .iter()
        .map(|(img, role)| LayerCounts { reference: img.reference.clone(), role: role.to_string(), layers: img.layers.len(), ..LayerCounts::default() })
        .collect();
    // who walks what: the first image holding an uncached blob
    let mut to_walk: Vec<(usize, usize)> = Vec::new();
    let mut owner: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (img, _)) in images.iter().enumerate() {
        for (l, layer) in img.layers.iter().enumerate() {
            if !verify_cached && cache.has(&layer.digest) {
                counts[i].cached += 1;
            } else if let Some(&first) = owner.get(layer.digest.as_str()) {
                if first != i {
                    counts[i].shared += 1;
                }
            } else {
                owner.insert(&layer.digest, i);
                to_walk.push((i, l));
                counts[i].read += 1;
            }
        }
    }
    let failures: Mutex<BTreeMap<String, ImageError>> = Mutex::new(BTreeMap::new());
    let run = |&(i, l): &(usize, usize)| {
        if let Err(e) = walk_and_store(images[i].0, l, cache, limits)
            && let Ok(mut f) = failures.lock()
        {
            f.insert(images[i].0.layers[l].digest.clone(), e);
        }
    };
    match rayon::ThreadPoolBuilder::new().num_threads(jobs.max(1)).build() {
        Ok(pool) => pool.install(|| to_walk.par_iter().for_each(run)),
        Err(_) => to_walk.iter().for_each(run),
    }
    let mut failed = failures.into_inner().unwrap_or_default();
    let mut trouble = Trouble::default();
    let mut unreadable = BTreeSet::new();
    let mut out = Vec::new();
    for ((img, _), mut counts) in images.iter().zip(counts) {
        let mut fs = FsIndex::new(limits.max_depth);
        let mut missing = Vec::new();
        for (l, layer) in img.layers.iter().enumerate() {
            let digest = layer.digest.as_str();
            let applied = if let Some(e) = failed.remove(digest) {
                Err(Some(e))
            } else if unreadable.contains(digest) {
                Err(None)
            } else {
                apply_layer(img, l, cache, limits, &mut fs, &mut counts).map_err(Some)
            };
            match applied {
                Ok(Applied::Full(stopped)) => {
                    let last = img.layers.len() - 1;
                    if let Some(why) = stopped {
                        trouble.not_examined.push(format!("{}: layer {l} ({digest}): {why}", img.reference));
                    }
                    trouble.not_examined.push(format!(
                        "{}: layers {l} to {last} not applied: the merged index passes {} paths (--max-layer-entries)",
                        img.reference, limits.max_entries
                    ));
                    missing.extend(l..=last);
                    break;
                }
                Ok(Applied::Stopped(why)) => {
                    // applied up to the limit, its hostile entries (and a bomb) listed
                    missing.push(l);
                    trouble.not_examined.push(format!("{}: layer {l} ({digest}): {why}", img.reference));
                }
                Ok(_) => {}
                Err(e) => {
                    missing.push(l);
                    unreadable.insert(digest.to_string());
                    match e {
                        Some(ImageError::Tamper { reference, tamper }) => trouble.findings.push(integrity::finding(&reference, &tamper)),
                        Some(e) => trouble.not_examined.push(format!("{}: layer {l} ({digest}): {e}", img.reference)),
                        None => trouble.not_examined.push(format!("{}: layer {l} ({digest}) could not be read (see above)", img.reference)),
                    }
                }
            }
        }
        out.push(Indexed { fs, counts, missing });
    }
    (out, trouble)
}

/// Apply layer `l` of `img` from the cache, walking it first when it is
/// not there (any more: evicted or damaged since it was counted).
fn apply_layer(img: &Image, l: usize, cache: &Cache, limits: &LayerLimits, fs: &mut FsIndex, counts: &mut LayerCounts) -> Result<Applied, ImageError> {
    let digest = &img.layers[l].digest;
    let cache_err = |source| ImageError::Io { reference: img.reference.clone(), context: format!("layer {l}: cache {}", cache.dir().display()), source };
    let mut apply = || cache.apply(digest, l as u16, fs, limits.max_entries, limits.walk_key()).map_err(cache_err);
    match apply()? {
        Applied::Missing => {
            counts.read += 1;
            counts.cached = counts.cached.saturating_sub(1);
            walk_and_store(img, l, cache, limits)?;
            match apply()? {
                Applied::Missing => Err(cache_err(std::io::Error::other("the layer's index could not be read back"))),
                done_or_full => Ok(done_or_full),
            }
        }
        done_or_full => Ok(done_or_full),
    }
}

/// A layer that fails to decompress or parse may be a corrupted blob: the
/// decoder stops before the digest check at EOF could. Read the raw blob
/// once more to tell tampering (an `image-integrity` finding) from a layer
/// that is intact but unreadable (not examined).
fn tampered_instead(image: &Image, l: usize, error: ImageError) -> ImageError {
    if matches!(error, ImageError::Tamper { .. }) {
        return error;
    }
    let raw = image
        .open_layer(l)
        .and_then(|mut r| std::io::copy(&mut r, &mut std::io::sink()).map_err(|e| ImageError::from_io(&image.reference, &format!("layer {l}"), e)));
    match raw {
        Err(tamper @ ImageError::Tamper { .. }) => tamper,
        _ => error,
    }
}

/// Walk a layer into the cache.
fn walk_and_store(image: &Image, l: usize, cache: &Cache, limits: &LayerLimits) -> Result<(), ImageError> {
    let layer = &image.layers[l];
    let cache_err = |e| ImageError::Io { reference: image.reference.clone(), context: format!("layer {l}: cache {}", cache.dir().display()), source: e };
    let mut out = cache.begin(&layer.digest, layer.diff_id.as_deref().unwrap_or_default()).map_err(cache_err)?;
    let walked = walk::walk(image, l, &mut out, limits).map_err(|e| tampered_instead(image, l, e))?;
    let stopped = walked.stopped.map(|text| Stopped { limits: limits.walk_key(), text });
    cache.store(out, walked.unlisted, stopped.as_ref()).map_err(cache_err)
}
