//! The YAML environment extractor (srt-slurm recipes, master configs,
//! anchors, merge keys, PyYAML scalar rules) on arbitrary text: never
//! panics, and every assignment's line and byte span lie inside the text.
//! (`evidence_text` reaches this parser too, but only through a selector
//! byte and valid UTF-8; this target spends all its time here.)
#![no_main]

use auditor::evidence::provenance::FileRef;
use auditor::evidence::yaml::env;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = FileRef { path: "recipes/fuzz.yaml".into(), artifact: None };
    if let Ok(yaml) = env::scan(&file, text) {
        // YAML breaks lines at \n, \r\n and a lone \r.
        let lines = 1 + text.replace("\r\n", "\n").bytes().filter(|&b| b == b'\n' || b == b'\r').count() as u64;
        for a in &yaml.env {
            let p = &a.provenance;
            assert!(p.line.is_none_or(|l| l >= 1 && l <= lines), "line {:?} of {lines}", p.line);
            assert!(p.span.is_none_or(|(s, e)| s <= e && e <= text.len() as u64), "span {:?} of {}", p.span, text.len());
        }
    }
});
