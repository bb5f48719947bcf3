//! The tar layer walker and the merge behind `image verify`, on arbitrary
//! bytes as the layers of an OCI layout (the first byte says where the
//! bytes split into two layers, so whiteouts, links and opaque directories
//! meet entries of an earlier layer): never panics, writes only into its
//! own directory, and a second run, which reads the layers back from the
//! cache the first one filled, reports the same.
#![no_main]

use auditor::image::forensics::{self, Options};
use auditor::image::limits::LayerLimits;
use auditor::image::{ImageRef, OpenOptions};
use auditor::policy::Policy;
use auditor::report::Format;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::OnceLock;

const TAR: &str = "application/vnd.oci.image.layer.v1.tar";

/// Store `data` as a blob of the layout; its descriptor.
fn blob(layout: &Path, data: &[u8], media_type: &str) -> Value {
    let hex = format!("{:x}", Sha256::digest(data));
    std::fs::write(layout.join("blobs/sha256").join(&hex), data).unwrap();
    json!({ "mediaType": media_type, "digest": format!("sha256:{hex}"), "size": data.len() })
}

fn report(reference: &ImageRef, options: &Options, policy: &Policy) -> String {
    match forensics::verify(reference, options, policy) {
        Ok(mut report) => {
            // the one part of a report that depends on the cache's state
            report.layer_cache = None;
            report.render(Format::Json, false)
        }
        Err(e) => format!("error: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, tar)) = data.split_first() else { return };
    let at = (tar.len() * usize::from(split) / 255) / 512 * 512;
    let layers: Vec<&[u8]> = if at == 0 || at >= tar.len() { vec![tar] } else { vec![&tar[..at], &tar[at..]] };

    let root = std::env::temp_dir().join(format!("auditor-fuzz-layer-walk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let layout = root.join("layout");
    std::fs::create_dir_all(layout.join("blobs/sha256")).unwrap();
    std::fs::write(layout.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    let descriptors: Vec<Value> = layers.iter().map(|l| blob(&layout, l, TAR)).collect();
    let config = json!({
        "architecture": "amd64", "os": "linux",
        "config": { "Env": ["PATH=/usr/bin:/bin"] },
        "rootfs": { "type": "layers", "diff_ids": descriptors.iter().map(|d| d["digest"].clone()).collect::<Vec<_>>() },
        "history": layers.iter().map(|_| json!({ "created_by": "fuzz" })).collect::<Vec<_>>(),
    });
    let config = blob(&layout, &serde_json::to_vec(&config).unwrap(), "application/vnd.oci.image.config.v1+json");
    let manifest = json!({ "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": config, "layers": descriptors });
    let mut entry = blob(&layout, &serde_json::to_vec(&manifest).unwrap(), "application/vnd.oci.image.manifest.v1+json");
    entry["annotations"] = json!({ "org.opencontainers.image.ref.name": "t" });
    std::fs::write(layout.join("index.json"), serde_json::to_vec(&json!({ "schemaVersion": 2, "manifests": [entry] })).unwrap()).unwrap();

    let reference: ImageRef = format!("oci:{}:t", layout.display()).parse().unwrap();
    let limits = LayerLimits { max_size: 64 << 20, max_entries: 20_000, ..LayerLimits::default() };
    let options = Options {
        open: OpenOptions::default(),
        cache_dir: root.join("cache"),
        cache_max_bytes: 256 << 20,
        jobs: 1,
        limits,
        today: jiff::civil::date(2026, 11, 30),
        verify_cached: false,
    };
    static POLICY: OnceLock<Policy> = OnceLock::new();
    let policy = POLICY.get_or_init(Policy::embedded);
    let walked = report(&reference, &options, policy);
    let cached = report(&reference, &options, policy);
    assert_eq!(walked, cached, "a layer read back from the cache reports differently");
    std::fs::remove_dir_all(&root).unwrap();
});
