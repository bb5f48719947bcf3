//! Every line parser the evidence layer runs (env dumps and listings, shell
//! statements and heredocs, engine startup records, Python env writes, YAML
//! and JSON documents) on arbitrary bytes: never panics, memory bounded.
#![no_main]

use auditor::evidence::{Extractor, FileKind};
use libfuzzer_sys::fuzz_target;

const KINDS: [(FileKind, &str); 6] = [
    (FileKind::Log, "server.log"),
    (FileKind::Script, "run.sh"),
    (FileKind::Command, "sglang_command.txt"),
    (FileKind::Python, "sitecustomize.py"),
    (FileKind::Yaml, "config.yaml"),
    (FileKind::Json, "meta_env.json"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let (kind, path) = KINDS[usize::from(selector) % KINDS.len()];
    let extractor = Extractor::new(4096);
    let (evidence, _) = extractor.extract(path, kind, &mut &rest[..]);
    let _ = auditor::facts::derive(&[evidence], auditor::evidence::knobs::Catalog::embedded());
});
