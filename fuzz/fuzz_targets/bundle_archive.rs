//! The bundle readers — zip (central directory, and the local-header
//! fallback when it is unreadable), tar, tar.gz with nested tar.gz
//! members, single .gz files — on arbitrary bytes, with small limits:
//! never panics, every member is accounted for, and the limits hold
//! whatever the headers claim.
#![no_main]

use auditor::bundle::{FileStatus, Limits, read_bundle_with};
use auditor::evidence::Extractor;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The name decides the format when the first bytes do not (as for a user's file).
const NAMES: [&str; 5] = ["bundle.zip", "bundle.tar.gz", "bundle.tar", "server.log.gz", "server.log"];

const LIMITS: Limits =
    Limits { max_members: 64, max_member_size: 1 << 20, max_total_size: 4 << 20, max_line_length: 4096, max_depth: 4, max_ratio: 100, scan_seconds: 0 };

/// One scratch directory per fuzzing process; the readers take a path.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("auditor-fuzz-bundle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else { return };
    let path = scratch().join(NAMES[usize::from(selector) % NAMES.len()]);
    std::fs::write(&path, bytes).expect("write the input");
    let mut extractor = Extractor::new(LIMITS.max_line_length);
    let hash = selector & 0x80 != 0;
    if let Ok(bundle) = read_bundle_with(&path, &LIMITS, hash, &mut extractor) {
        assert!(bundle.files.len() as u64 <= LIMITS.max_members, "{} files", bundle.files.len());
        for file in &bundle.files {
            if matches!(file.status, FileStatus::Read) {
                assert!(file.size.unwrap_or(0) <= LIMITS.max_member_size, "{file:?}");
            }
        }
    }
    let _ = std::fs::remove_file(&path);
});
