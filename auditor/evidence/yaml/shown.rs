//! A TensorRT-LLM LLM-API YAML config (`--extra_llm_api_options FILE` /
//! `--config FILE`) whose contents a log or script shows: the output of
//! `cat FILE.yaml`, or the body of a heredoc `cat > FILE <<EOF` in a
//! captured script or in a script of the input (see [`written`]). Its
//! `speculative_config:` and `kv_cache_config:` blocks are read with the
//! YAML reader used for files ([`crate::evidence::yaml::env`]), so they give the same
//! records as the file itself would; the places are the log's lines. Only
//! blocks that follow such a `cat` count: a block elsewhere in a log is not
//! known to be a config the server read.

use crate::evidence::engine::Engine;
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::python::repr::Py;
use crate::evidence::records::{EngineRecord, RecordKind};
use crate::evidence::shell::command::Command;
use crate::evidence::shell::scan::WrittenBody;
use crate::evidence::text::lines::Line;
use crate::evidence::yaml::{env, nodes};
use regex::Regex;
use std::sync::LazyLock;

/// Lines after a `cat` within which a config block counts.
const WINDOW: usize = 200;
/// Longest block read.
const MAX_BLOCK_LINES: usize = 200;

/// `cat config.yaml`, `+ cat /tmp/extra.yml`.
static CAT_FILE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?:^|[\s;&|(+])cat\s+(?:-\S+\s+)*\S+\.ya?ml['\x22]?\s*$").expect("valid regex"));
/// `cat > x.yaml <<EOF`, `cat <<'EOF' > x.yaml`.
static HEREDOC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"(?:^|[\s;&|(+])cat\b[^<]*<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?"#).expect("valid regex"));
/// `speculative_config:` / `kv_cache_config:` opening a block mapping.
static BLOCK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\s*)(speculative_config|kv_cache_config):\s*(?:#.*)?$").expect("valid regex"));

struct Block {
    line: u64,
    offset: u64,
    indent: usize,
    text: String,
    lines: usize,
}

/// The engine config blocks of a file a script writes from a heredoc, each
/// record marked with the keys whose values an `if`/`case` arm picks.
pub fn written(file: &FileRef, body: &WrittenBody) -> Vec<EngineRecord> {
    let mut shown = ShownYaml { whole: true, ..ShownYaml::new(file.clone()) };
    for (line, text) in &body.lines {
        shown.line(line, text);
    }
    shown.finish();
    for record in &mut shown.records {
        let lines = record.provenance.line.unwrap_or(0)..=record.end_line;
        record.depends = body.depends.iter().filter(|(n, _, _)| lines.contains(n)).map(|(_, key, note)| (key.clone(), note.clone())).collect();
    }
    shown.records
}

/// The command-line words SGLang reads from a `--config FILE` the script
/// writes from a heredoc, as its `ConfigArgumentMerger` makes them: each
/// top-level key becomes `--KEY` as written, a list its items, `true` a
/// bare flag (`false` is dropped), anything else `str(value)`; each word
/// placed at its body line. `None` when the body is not a YAML mapping.
pub fn sglang_config_words(file: &FileRef, body: &WrittenBody) -> Option<Vec<(String, Provenance)>> {
    let text: String = body.lines.iter().map(|(_, t)| format!("{t}\n")).collect();
    let docs = nodes::load(&text, true).ok()?;
    let doc = docs.first()?;
    if !matches!(doc.data, saphyr::YamlData::Mapping(_)) {
        return None;
    }
    let at = |node: &saphyr::MarkedYaml| {
        let (line, written) = body.lines.get(node.span.start.line().checked_sub(1)?)?;
        Some(Provenance::at_line(file, line.number, line.offset, written.trim()))
    };
    let mut words = Vec::new();
    for (key, value) in nodes::entries(doc, 0) {
        let Some(place) = at(value) else { continue };
        let flag = format!("--{key}");
        match &value.data {
            saphyr::YamlData::Sequence(items) => {
                words.push((flag, place.clone()));
                words.extend(items.iter().filter_map(|item| Some((nodes::python_str(item)?.0, at(item).unwrap_or(place.clone())))));
            }
            _ => match nodes::py_scalar(value) {
                Some(Py::Bool(true)) => words.push((flag, place)),
                Some(Py::Bool(false)) | None => {}
                Some(_) => {
                    let Some((text, _)) = nodes::python_str(value) else { continue };
                    words.push((flag, place.clone()));
                    words.push((text, place));
                }
            },
        }
    }
    Some(words)
}

/// SGLang's `--config FILE` where the script wrote FILE from a heredoc:
/// its keys become the launch's first engine arguments, as SGLang inserts
/// them (the command line's own flags follow and win), each at its line of
/// the heredoc.
pub fn splice_sglang_config(file: &FileRef, command: &mut Command, written: &[WrittenBody]) {
    let Some((Engine::Sglang, start)) = command.launch() else { return };
    let Some(k) = command.argv.iter().position(|a| a == "--config" || a.starts_with("--config=")) else { return };
    let (path, taken) = match command.argv[k].strip_prefix("--config=") {
        Some(path) => (path.to_string(), 1),
        None => (command.argv.get(k + 1).cloned().unwrap_or_default(), 2),
    };
    let Some(body) = crate::evidence::shell::scan::last_written(written, &path) else { return };
    let Some(words) = sglang_config_words(file, body) else { return };
    let mut argv = Vec::new();
    let mut args_at = Vec::new();
    let mut branches = Vec::new();
    for i in 0..command.argv.len() {
        if i == start {
            for (word, at) in &words {
                argv.push(word.clone());
                args_at.push(at.clone());
                branches.push(None);
            }
        }
        if (k..k + taken).contains(&i) {
            continue;
        }
        argv.push(command.argv[i].clone());
        args_at.push(command.arg_at(i).clone());
        branches.push(command.branches.get(i).cloned().flatten());
    }
    command.argv = argv;
    command.args_at = args_at;
    command.branches = branches;
}

/// Reads config blocks shown in a log, line by line.
pub struct ShownYaml {
    file: FileRef,
    /// Lines left in which a block counts.
    window: usize,
    /// The heredoc's end word, while inside one.
    terminator: Option<String>,
    /// Every line is the config file's (a heredoc body a script writes).
    whole: bool,
    block: Option<Block>,
    pub records: Vec<EngineRecord>,
}

impl ShownYaml {
    pub fn new(file: FileRef) -> Self {
        ShownYaml { file, window: 0, terminator: None, whole: false, block: None, records: Vec::new() }
    }

    /// One line of the log (decorations such as ANSI and compose prefixes
    /// removed) or of the written body.
    pub fn line(&mut self, line: &Line, body: &str) {
        if let Some(block) = &mut self.block {
            let indent = body.len() - body.trim_start().len();
            let inside = body.trim().is_empty() || indent > block.indent;
            if inside && block.lines < MAX_BLOCK_LINES && self.terminator.as_deref() != Some(body.trim()) {
                block.text.push_str(body.get(block.indent..).unwrap_or(body.trim_start()));
                block.text.push('\n');
                block.lines += 1;
                return;
            }
            self.finish_block();
        }
        if !self.whole && !self.follow(body) {
            return;
        }
        if let Some(c) = BLOCK.captures(body) {
            let indent = c[1].len();
            self.block = Some(Block { line: line.number, offset: line.offset, indent, text: format!("{}:\n", &c[2]), lines: 1 });
        }
    }

    /// A log's line outside a block: whether it may open one (it lies in
    /// the window after a `cat` or inside a heredoc); a `cat` or a heredoc
    /// start opens the window, its end closes it.
    fn follow(&mut self, body: &str) -> bool {
        if self.terminator.as_deref() == Some(body.trim()) {
            self.terminator = None;
            self.window = 0;
            return false;
        }
        if let Some(c) = HEREDOC.captures(body) {
            self.terminator = Some(c[1].to_string());
            self.window = WINDOW;
            return false;
        }
        if CAT_FILE.is_match(body) {
            self.window = WINDOW;
            return false;
        }
        if self.window == 0 {
            return false;
        }
        self.window -= 1;
        true
    }

    /// Whether the next line may continue what was seen: a block, a
    /// heredoc, or the window after a `cat`.
    pub fn is_open(&self) -> bool {
        self.block.is_some() || self.terminator.is_some() || self.window > 0
    }

    pub fn finish(&mut self) {
        self.finish_block();
    }

    fn finish_block(&mut self) {
        let Some(block) = self.block.take() else { return };
        let Ok(yaml) = env::scan(&self.file, &block.text) else { return };
        for mut record in yaml.records {
            if !matches!(record.kind, RecordKind::TrtllmSpeculativeConfig | RecordKind::TrtllmKvCacheConfig) {
                continue;
            }
            // Lines of the block are lines of the log from the block's first.
            let line = block.line + record.provenance.line.unwrap_or(1).saturating_sub(1);
            record.provenance = Provenance::at_line(&self.file, line, block.offset, &record.provenance.text);
            record.provenance.span = None;
            record.end_line = block.line + block.lines as u64 - 1;
            self.records.push(record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::python::repr::Py;
    use crate::evidence::text::lines::lines_of;

    fn scan(text: &str) -> Vec<EngineRecord> {
        let mut shown = ShownYaml::new(FileRef { path: "run.log".into(), artifact: None });
        for line in lines_of(text) {
            shown.line(&line, &line.text);
        }
        shown.finish();
        shown.records
    }

    #[test]
    fn blocks_after_cat_or_in_a_heredoc_are_read() {
        let log = "+ cat /workspace/extra.yaml\nenable_attention_dp: false\nspeculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 3\nkv_cache_config:\n  dtype: fp8\n  free_gpu_memory_fraction: 0.85\n+ trtllm-serve /m --extra_llm_api_options /workspace/extra.yaml\n";
        let r = scan(log);
        assert_eq!(r.iter().map(|r| r.kind).collect::<Vec<_>>(), [RecordKind::TrtllmSpeculativeConfig, RecordKind::TrtllmKvCacheConfig]);
        assert_eq!(r[0].get("num_nextn_predict_layers"), Some(&Py::Int(3)));
        // As for a file: the place is the block's first entry.
        assert_eq!((r[0].provenance.line, r[1].provenance.line), (Some(4), Some(7)));
        assert_eq!(r[1].get("dtype"), Some(&Py::Str("fp8".into())));
        let heredoc = "cat > /tmp/cfg.yml <<'EOF'\n  speculative_config:\n    decoding_type: Eagle\n    max_draft_len: 3\n    speculative_model_dir: /d\nEOF\nspeculative_config:\n  max_draft_len: 9\n";
        let r = scan(heredoc);
        assert_eq!(r.len(), 1, "the block after EOF is not a shown config");
        assert_eq!(r[0].get("max_draft_len"), Some(&Py::Int(3)));
    }

    #[test]
    fn configs_a_script_writes_are_records() {
        use crate::evidence::shell::scan::ShellScanner;
        let file = FileRef { path: "run.sh".into(), artifact: None };
        let mut scanner = ShellScanner::new(file.clone());
        for line in lines_of(crate::evidence::shell::scan::tests::WRITTEN) {
            scanner.script_line(&line);
        }
        scanner.finish();
        let records: Vec<EngineRecord> = scanner.written.iter().flat_map(|b| written(&file, b)).collect();
        let spec: Vec<&EngineRecord> = records.iter().filter(|r| r.kind == RecordKind::TrtllmSpeculativeConfig).collect();
        assert_eq!(spec.len(), 2);
        assert_eq!(spec[0].get("speculative_model"), Some(&Py::Str("/m/Eagle3-GQA".into())));
        assert_eq!(spec[0].get("max_draft_len"), Some(&Py::Int(3)));
        assert_eq!(spec[0].provenance.line, Some(10), "the block's first field");
        assert_eq!(spec[0].depends.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["max_draft_len"]);
        assert_eq!(spec[1].get("speculative_model"), Some(&Py::Str("$DRAFT".into())));
        assert!(records.iter().any(|r| r.kind == RecordKind::TrtllmKvCacheConfig));
    }

    #[test]
    fn a_block_without_a_cat_is_not_read() {
        assert!(scan("speculative_config:\n  max_draft_len: 3\n").is_empty());
    }
}
