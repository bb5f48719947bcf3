//! docker compose `environment:` blocks pasted into program output (a
//! `cat docker-compose.yml` in a CI log, a compose file quoted in a console
//! capture): both the `- NAME=value` list and the `NAME: value` map, read
//! by the YAML reader recipes use ([`crate::evidence::yaml::env`]), so that a value
//! means what it means in the compose file. What compose puts into
//! `environment` is the container's environment: the server's.

use crate::evidence::env::{EnvAssignment, EnvOrigin, Scope};
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::text::lines::Line;
use crate::evidence::yaml::env;
use regex::Regex;
use std::sync::LazyLock;

/// `environment:` alone (a block follows) or with a flow value (`[...]`, `{...}`).
static OPENER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?P<i> *)environment:[ \t]*(?P<flow>[\[{].*)?$").expect("valid regex"));

/// Most lines one block may hold.
const MAX_BLOCK: usize = 512;

/// A physical line of a block: its number, the file offset of `text`, and `text`.
type BlockLine = (u64, u64, String);

struct Block {
    indent: usize,
    lines: Vec<BlockLine>,
}

/// Reads the `environment:` blocks of one file.
pub struct ComposeBlocks {
    file: FileRef,
    open: Option<Block>,
}

impl ComposeBlocks {
    pub fn new(file: FileRef) -> Self {
        ComposeBlocks { file, open: None }
    }

    /// Read one log message (`text`, at file offset `offset` of `line`);
    /// true when it belongs to a block. A closed block's assignments go to `out`.
    pub fn line(&mut self, line: &Line, text: &str, offset: u64, out: &mut Vec<EnvAssignment>) -> bool {
        if let Some(block) = &mut self.open {
            let indent = text.len() - text.trim_start_matches(' ').len();
            if text.trim().is_empty() || (indent > block.indent && block.lines.len() < MAX_BLOCK) {
                block.lines.push((line.number, offset, text.to_string()));
                return true;
            }
            self.close(out);
        }
        let Some(caps) = OPENER.captures(text) else { return false };
        let block = Block { indent: caps["i"].len(), lines: vec![(line.number, offset, text.to_string())] };
        if caps.name("flow").is_some() {
            self.open = Some(block);
            self.close(out);
        } else {
            self.open = Some(block);
        }
        true
    }

    /// Whether a block is open: the next line may belong to it.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// End of input or of the block.
    pub fn close(&mut self, out: &mut Vec<EnvAssignment>) {
        let Some(block) = self.open.take() else { return };
        let text: String = block.lines.iter().map(|(_, _, t)| format!("{}\n", t.get(block.indent..).unwrap_or(t.trim_start()))).collect();
        // Not YAML after all (prose that ends in `environment:`): nothing is assigned.
        let Ok(yaml) = env::scan(&self.file, &text) else { return };
        let scope = Scope::Compose(block.lines[0].0);
        for mut a in yaml.env {
            let Some((number, offset, raw)) = a.provenance.line.and_then(|k| block.lines.get(k as usize - 1)) else { continue };
            let lead = raw.len() - raw.trim_start().len();
            a.provenance = Provenance::at_line(&self.file, *number, offset + lead as u64, raw.trim());
            a.origin = EnvOrigin::Container;
            a.scope.clone_from(&scope);
            a.client = false;
            out.push(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::text::lines::lines_of;

    fn scan(text: &str) -> Vec<(String, Option<String>, u64)> {
        let mut blocks = ComposeBlocks::new(FileRef::default());
        let mut out = Vec::new();
        for line in lines_of(text) {
            blocks.line(&line, &line.text, line.offset, &mut out);
        }
        blocks.close(&mut out);
        assert!(out.iter().all(|a| a.origin == EnvOrigin::Container && matches!(a.scope, Scope::Compose(_))));
        out.into_iter().map(|a| (a.name, a.value, a.provenance.line.unwrap())).collect()
    }

    #[test]
    fn list_and_map_blocks_and_flow_values() {
        let got = scan(concat!(
            "services:\n  sglang:\n    environment:\n      - SGLANG_A=1\n\n      - \"SGLANG_B=two words\"\n    ports:\n      - 30000:30000\n",
            "    environment:\n      SGLANG_C: yes\n      SGLANG_D: \"1\"\n",
            "environment: [\"SGLANG_E=1\"]\n",
        ));
        let expected = [("SGLANG_A", "1", 4), ("SGLANG_B", "two words", 6), ("SGLANG_C", "True", 10), ("SGLANG_D", "1", 11), ("SGLANG_E", "1", 12)];
        let expected: Vec<(String, Option<String>, u64)> = expected.iter().map(|(n, v, l)| (n.to_string(), Some(v.to_string()), *l)).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn prose_ending_in_environment_is_not_a_block() {
        assert!(scan("Check your environment:\n  it matters: a lot [x\n").is_empty());
        assert!(scan("environment:\nSGLANG_A=1\n").is_empty(), "not indented under the key");
    }
}
