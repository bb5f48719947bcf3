//! `auditor image inspect`: open an image, optionally stream every layer
//! to verify it, and report what it is (digest, platform, config, layers)
//! with the `image-integrity` check. A tampered blob is a failing finding;
//! a layer that could not be read leaves the report incomplete.

use super::integrity;
use crate::finding::Finding;
use crate::image::{Image, ImageError, ImageRef, OpenOptions, open, short};
use crate::report::{ImageInput, Input, Report};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What inspecting produced: the report, and the image when it opened.
pub struct Inspection {
    pub report: Report,
    pub image: Option<Image>,
}

/// Inspect `reference`; with `verify_layers`, read every layer to its end
/// (up to `options.max_concurrent_fetches` at once).
pub fn inspect(reference: &ImageRef, options: &OpenOptions, verify_layers: bool) -> Result<Inspection, ImageError> {
    let image = match open(reference, options) {
        Ok(image) => image,
        Err(ImageError::Tamper { reference: r, tamper }) => {
            let input = Input::Image(ImageInput::unresolved(&r));
            let check = integrity::result(vec![integrity::finding(&r, &tamper)], 0, 0, 0);
            return Ok(Inspection { report: Report::new("none".into(), vec![input], vec![check], Vec::new(), Vec::new(), Vec::new()), image: None });
        }
        Err(e) => return Err(e),
    };
    let documents = usize::from(image.manifest.is_some()) + 1;
    let (findings, verified, not_examined) = if verify_layers { verify_all(&image, options.max_concurrent_fetches) } else { (Vec::new(), 0, Vec::new()) };
    let mut check = integrity::result(findings, documents + verified, not_examined.len(), 0);
    if !verify_layers {
        check.summary = format!("{documents} blob(s) verified (manifest and config); layers not read (--verify-layers reads them)");
    }
    let report = Report::new("none".into(), vec![Input::Image(ImageInput::of(&image))], vec![check], Vec::new(), Vec::new(), not_examined);
    Ok(Inspection { report, image: Some(image) })
}

/// Read every layer to EOF through its verifying readers (blob digest and
/// size, and the diff-id of the uncompressed stream). Returns the
/// tamper findings, how many layers verified, and the layers not examined.
fn verify_all(image: &Image, workers: usize) -> (Vec<Finding>, usize, Vec<String>) {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, image.layers.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= image.layers.len() {
                        return;
                    }
                    let outcome = image.verify_layer(index);
                    if let Ok(mut all) = results.lock() {
                        all.push((index, outcome));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    let (mut findings, mut verified, mut not_examined) = (Vec::new(), 0, Vec::new());
    for (index, outcome) in results {
        match outcome {
            Ok(()) => verified += 1,
            Err(ImageError::Tamper { tamper, .. }) => findings.push(integrity::finding(&image.reference, &tamper)),
            Err(e) => not_examined.push(format!("layer {index} ({}): {e}", image.layers[index].digest)),
        }
    }
    (findings, verified, not_examined)
}

impl ImageInput {
    /// The report input for an opened image.
    pub(crate) fn of(image: &Image) -> ImageInput {
        ImageInput {
            reference: image.reference.clone(),
            transport: Some(image.transport),
            digest: image.manifest_digest.clone(),
            config: Some(image.config_digest.clone()),
            platform: Some(image.platform.clone()),
            layers: image.layers.iter().map(|l| l.digest.clone()).collect(),
            diff_ids: image.diff_ids(),
            steps: (0..image.layers.len()).map(|i| image.config.layer_step(i).unwrap_or_default().to_string()).collect(),
        }
    }

    /// The input for an image that could not be resolved.
    pub(crate) fn unresolved(reference: &str) -> ImageInput {
        ImageInput {
            reference: reference.to_string(),
            transport: None,
            digest: None,
            config: None,
            platform: None,
            layers: Vec::new(),
            diff_ids: Vec::new(),
            steps: Vec::new(),
        }
    }
}

/// The image for people: identity, config summary, history, layers.
pub fn render_text(image: &Image) -> String {
    let mut out = String::new();
    let c = &image.config;
    let list = |v: &[String]| if v.is_empty() { "-".to_string() } else { format!("{v:?}") };
    let _ = writeln!(out, "image:      {}", image.reference);
    if let Some(d) = &image.manifest_digest {
        let _ = writeln!(out, "digest:     {d}");
    }
    if let Some(d) = &image.index_digest {
        let _ = writeln!(out, "index:      {d}");
    }
    let _ = writeln!(out, "config:     {}", image.config_digest);
    let _ = writeln!(out, "platform:   {}", image.platform);
    if let Some(m) = &image.manifest {
        let _ = writeln!(out, "manifest:   {} ({} bytes)", m.media_type, m.bytes.len());
    }
    let _ = writeln!(out, "entrypoint: {}", list(&c.entrypoint));
    let _ = writeln!(out, "cmd:        {}", list(&c.cmd));
    let _ = writeln!(out, "workdir:    {}", if c.working_dir.is_empty() { "-" } else { &c.working_dir });
    let _ = writeln!(out, "user:       {}", if c.user.is_empty() { "- (root)" } else { &c.user });
    for e in &c.env {
        let _ = writeln!(out, "env:        {}", crate::provenance::redact(e));
    }
    for (k, v) in &c.labels {
        let _ = writeln!(out, "label:      {k}={v}");
    }
    let _ = writeln!(out, "history:    {} step(s)", c.history.len());
    for (i, h) in c.history.iter().enumerate() {
        let empty = if h.empty_layer { " (no layer)" } else { "" };
        let _ = writeln!(out, "  {i:>3}  {}{empty}", crate::provenance::clip(&h.created_by));
    }
    let _ = writeln!(out, "layers:     {}", image.layers.len());
    for (i, l) in image.layers.iter().enumerate() {
        let size = l.size.map_or("?".to_string(), |s| s.to_string());
        let diff = l.diff_id.as_deref().map(|d| format!("  diff {}", short(d))).unwrap_or_default();
        let _ = writeln!(out, "  {i:>3}  {}  {size:>12} B  {}{diff}", short(&l.digest), l.media_type);
    }
    out.push('\n');
    out
}
