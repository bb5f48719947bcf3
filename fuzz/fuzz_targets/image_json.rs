//! The image documents a registry, OCI layout or archive hands over —
//! manifests, indexes (OCI and Docker), image configs — and image
//! references, on arbitrary bytes: never panics; an index always yields a
//! platform entry or an error that lists the platforms present.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else { return };
    auditor::image::fuzz_documents(selector, bytes);
});
