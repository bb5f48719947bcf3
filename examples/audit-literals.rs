//! Prints, one per line, every literal `auditor audit` searches a log's
//! bytes for: the line parsers' prefilter (`evidence::text::prefilter::LITERALS`)
//! and the keywords of the embedded signature rules. It is the literal set
//! `benches/audit-vs-ripgrep.sh` gives `rg -F -f`, so that ripgrep searches
//! for what the audit searches for.
//!
//!     cargo run --release --example audit-literals > literals.txt

use auditor::evidence::text::prefilter;
use auditor::signatures::Engine;
use std::collections::BTreeSet;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let engine = Engine::embedded()?;
    let mut all: BTreeSet<&str> = prefilter::literals().collect();
    all.extend(engine.rules().iter().flat_map(|r| r.spec.keywords.iter().map(String::as_str)));
    for literal in all {
        println!("{literal}");
    }
    Ok(())
}
