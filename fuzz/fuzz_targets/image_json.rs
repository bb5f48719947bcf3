//! The image documents a registry, OCI layout or archive hands over —
//! manifests, indexes (OCI and Docker), image configs — and image
//! references, on arbitrary bytes: never panics; an index always yields a
//! platform entry or an error that lists the platforms present.
#![no_main]

use auditor::image::manifest::{self, Parsed, Platform};
use auditor::image::{ImageConfig, ImageRef};
use libfuzzer_sys::fuzz_target;

/// The media type a source may announce alongside the bytes.
const ANNOUNCED: [Option<&str>; 5] =
    [None, Some(manifest::OCI_MANIFEST), Some(manifest::OCI_INDEX), Some(manifest::DOCKER_LIST), Some("text/plain")];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else { return };
    match manifest::parse("fuzz", ANNOUNCED[usize::from(selector) % ANNOUNCED.len()], bytes) {
        Ok(Parsed::Index(index)) => {
            for wanted in ["linux/amd64", "linux/arm64/v8", "windows/amd64"] {
                let _ = manifest::select("fuzz", &index, &Platform::parse(wanted).expect("a valid platform"));
            }
        }
        Ok(Parsed::Image(m)) => assert_eq!(m.schema_version, 2),
        Err(_) => {}
    }
    if let Ok(config) = ImageConfig::parse("fuzz", bytes) {
        let _ = config.platform();
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = text.parse::<ImageRef>().map(|r| r.to_string());
        let _ = Platform::parse(text).map(|p| p.to_string());
    }
});
