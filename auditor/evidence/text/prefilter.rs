//! Which lines of program output the line parsers can skip unread. A server
//! log is mostly batch and access lines that no parser reads; running the
//! parsers (decoration stripping, record markers, shell starts, listings)
//! on each of them is most of an audit's time. One aho-corasick automaton
//! over [`LITERALS`] finds the lines that may matter, as the signature
//! engine's keyword automaton does for its rules.
//!
//! The filter is exact, not a heuristic: every way a line can *start*
//! something in a parser needs one of the literals in the line (each entry
//! says which condition it stands for), and a line without any is one on
//! which every parser, while none has anything open, does nothing. A parser
//! with open state (a record or statement continuing over lines, a dump or
//! `environment:` block, the window after a `cat x.yaml`) reads every line
//! until it closes: the caller asks [`Prefilter`] only while all are closed.
//! The literals are ASCII and hold no line break, so a hit in a line's raw
//! bytes is a hit in its text (invalid UTF-8 replaced) and in no other line;
//! log decorations are only ever removed from a line, except that removing
//! colour codes can join text, so a line with an escape byte is always read.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::sync::LazyLock;

/// The literals, each with the parser condition that needs it. A word is
/// given by a part of it (`ython` for `python`, `':` for `': `): what the
/// line must hold still holds it, and the parts were chosen so that fewer
/// ordinary lines look like a hit to the automaton (measured on
/// `benches/gen-sglang-logs.py` output).
pub const LITERALS: &[(&str, &str)] = &[
    // Colour codes: stripping them may join text into a marker.
    ("\x1b", "ANSI escape (logline::strip_ansi)"),
    // Assignments: `env` listings and dump lines, `NAME=v cmd`, a prompt
    // glued to an assignment, `server_args=`, call-style fragments.
    ("=", "NAME=value (env listing, dump block, command prefix, $NAME= prompt), server_args=, k=v fragments"),
    ("\\", "a line of assignments continued with `\\`"),
    ("':", "dict-style fragments ('key': value)"),
    ("+ ", "set -x trace (`+ cmd`)"),
    ("$ ", "shell prompt (`$ cmd`, `user@host:~$ cmd`)"),
    ("# ", "root prompt (`# cmd`, `root@host:/# cmd`)"),
    ("<<", "a heredoc `cat > x.yaml <<EOF` that shows a TensorRT-LLM config"),
    ("gs: ", "vLLM `non-default args: {` and `args: Namespace(`"),
    ("h config: ", "vLLM `Initializing a V1 LLM engine ... with config:`"),
    ("xport", "export statement"),
    ("unse", "unset statement"),
    ("eclar", "declare statement"),
    ("ypeset", "typeset statement"),
    ("ython", "bare launch: python, python3, python3.12"),
    ("env", "bare launch: env; the `=== X env vars at launch ===` dump header; a compose `environment:` block"),
    ("llm", "bare launch: vllm serve, trtllm-serve"),
    ("glang", "bare launch: sglang serve"),
    ("ocker", "bare launch: docker run"),
    ("odman", "bare launch: podman run"),
    ("erdctl", "bare launch: nerdctl run"),
    ("ohup", "launch wrapper: nohup"),
    ("umactl", "launch wrapper: numactl"),
    ("askset", "launch wrapper: taskset"),
    ("time", "launch wrapper: time, timeout"),
    ("xec", "launch wrapper: exec"),
    ("sudo", "launch wrapper: sudo"),
    ("tdbuf", "launch wrapper: stdbuf"),
    ("srun", "launch wrapper: srun"),
    ("pirun", "launch wrapper: mpirun"),
    ("hrt", "launch wrapper: chrt"),
    ("nice", "launch wrapper: nice"),
    (".yaml", "`cat x.yaml` that shows a TensorRT-LLM config"),
    (".yml", "`cat x.yml` that shows a TensorRT-LLM config"),
];

/// The literals alone, in [`LITERALS`] order.
pub fn literals() -> impl Iterator<Item = &'static str> {
    LITERALS.iter().map(|(literal, _)| *literal)
}

/// The compiled literal set: one automaton per literal length class (single
/// bytes, pairs, longer words), since one automaton over all of them would
/// have to take every common letter pair for a possible hit (measured: 0.2
/// GB/s together, 1.5 to 4 GB/s apart).
pub struct Prefilter {
    automata: [AhoCorasick; 3],
}

static PREFILTER: LazyLock<Prefilter> = LazyLock::new(|| {
    let class = |keep: fn(usize) -> bool| {
        // Leftmost-first: only where the first hit is matters, and this
        // semantics lets the automaton use its SIMD (Teddy, memchr) search.
        AhoCorasickBuilder::new().match_kind(MatchKind::LeftmostFirst).build(literals().filter(|l| keep(l.len()))).expect("the literals compile")
    };
    Prefilter { automata: [class(|n| n == 1), class(|n| n == 2), class(|n| n > 2)] }
});

impl Prefilter {
    pub fn get() -> &'static Prefilter {
        &PREFILTER
    }

    /// Whether `bytes` (a line, or several) hold a literal.
    pub fn hits(&self, bytes: &[u8]) -> bool {
        self.automata.iter().any(|a| a.is_match(bytes))
    }

    /// Where the first literal in `bytes` starts.
    pub fn first_hit(&self, bytes: &[u8]) -> Option<usize> {
        let longest = literals().map(str::len).max().unwrap_or(0);
        let mut first: Option<usize> = None;
        for automaton in &self.automata {
            // Each looks only for a hit starting before the first found so far.
            let end = first.map_or(bytes.len(), |at| (at + longest).min(bytes.len()));
            if let Some(m) = automaton.find(&bytes[..end]).filter(|m| first.is_none_or(|at| m.start() < at)) {
                first = Some(m.start());
            }
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Extractor, FileKind, classify};
    use std::path::Path;

    /// What the parsers make of `text` read as `kind`, with and without the filter.
    fn both_ways(path: &str, kind: FileKind, text: &[u8]) -> (String, String) {
        let mut filtered = Extractor::new(1 << 20);
        let read = |ex: &Extractor| format!("{:?}", ex.extract(path, kind, &mut &text[..]));
        let with = read(&filtered);
        filtered.prefilter = false;
        (with, read(&filtered))
    }

    fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() { files_under(&path, out) } else { out.push(path) }
        }
    }

    #[test]
    fn samples_and_fixtures_read_the_same_with_and_without_the_filter() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        files_under(&root.join("samples"), &mut files);
        files_under(&root.join("tests/fixtures"), &mut files);
        files.sort();
        let mut compared = 0;
        for path in files {
            let name = path.to_string_lossy().into_owned();
            if [".zip", ".gz", ".tgz", ".tar"].iter().any(|ext| name.ends_with(ext)) {
                continue;
            }
            let text = std::fs::read(&path).unwrap();
            // As its name says, and as program output whatever it is (a script cat'ed into a log).
            for kind in [classify(&name).unwrap_or(FileKind::Log), FileKind::Log] {
                if kind == FileKind::Doc {
                    continue;
                }
                let (with, without) = both_ways(&name, kind, &text);
                assert_eq!(with, without, "{name} read as {kind:?}");
                compared += 1;
            }
        }
        assert!(compared > 200, "only {compared} files compared");
    }

    /// Logs made of pieces of every shape the parsers read, decorated and
    /// cut in random places, read the same with and without the filter.
    #[test]
    fn generated_logs_read_the_same_with_and_without_the_filter() {
        const PIECES: &[&str] = &[
            "[2026-07-01 15:18:36 TP0] ",
            "sglang-1  | ",
            "\x1b[32m",
            "server_ar\x1b[0mgs=ServerArgs(",
            "ex\x1b[0mport ",
            "\x1b[0m",
            "2026-10-14T03:12:55Z ",
            "(APIServer pid=12) INFO 08-20 10:08:10 [utils.py:233] ",
            "INFO:root:",
            "+ ",
            "++ ",
            "$ ",
            "# ",
            "#",
            "root@h:/# ",
            "user@host:~$",
            "(venv) u@h:~# ",
            "> ",
            "export ",
            "unset ",
            "declare -x ",
            "SGLANG_X=1 ",
            "A='two words' ",
            "python3 -m sglang.launch_server ",
            "--tp 8 ",
            "vllm serve /m ",
            "trtllm-serve /m ",
            "docker run -e B=2 img ",
            "nohup ",
            "env ",
            "numactl -N 0 ",
            "timeout 3600 ",
            "--speculative-config '{",
            "\"method\": \"mtp\"",
            "}' ",
            "\\",
            " \\",
            "server_args=ServerArgs(",
            "model_path='/m', ",
            "tp_size=8, ",
            "dp_size=1, ",
            "ep_size=1, ",
            "speculative_num_steps=3, ",
            "speculative_dr",
            "aft_model_path=None, ",
            "'tp_size': 8, ",
            "'dp_size': 1, ",
            "'speculative_algorithm': 'EAGLE', ",
            ")",
            "})",
            "}",
            "non-default args: {",
            "args: Namespace(",
            "Initializing a V1 LLM engine (v0.11.0) with config: ",
            "model='/m', ",
            "environment:",
            "    environment:",
            "  - SGLANG_A=1",
            "      SGLANG_B: yes",
            "cat /w/extra.yaml",
            "+ cat > c.yml <<'EOF'",
            "cat > /tmp/cfg <<EOF",
            "EOF",
            "nohup echo 'a",
            "b' x",
            "speculative_config:",
            "kv_cache_config:",
            "  max_draft_len: 3",
            "  decoding_type: MTP",
            "=== SGLANG_* env vars at launch ===",
            "===========",
            "Decode batch. #running-req: 1, #token: 5, ",
            "Prefill batch. #new-seq: 1, ",
            "hello world ",
            "it's ",
            "\"",
            "'",
            "  ",
            "\t",
            "\r",
            "é",
        ];
        const BLOCKS: &[&[&str]] = &[
            &["+ cat /w/extra.yaml", "speculative_config:", "  decoding_type: MTP", "  max_draft_len: 3", "kv_cache_config:", "  dtype: fp8"],
            &["cat extra.yml", "kv_cache_config:", "  free_gpu_memory_fraction: 0.8"],
            &["cat > /tmp/cfg <<EOF", "speculative_config:", "  max_draft_len: 3", "EOF", "speculative_config:", "  max_draft_len: 9"],
            &["services:", "  sglang:", "    environment:", "      - SGLANG_A=1", "      SGLANG_B: yes", "    ports:"],
            &["environment:", "  SGLANG_C: \"1\"", "  SGLANG_D: two words"],
            &["=== SGLANG_* env vars at launch ===", "SGLANG_A=1", "a value's second line", "=================="],
            &["nohup numactl -N 0 \\", "  python3 -m sglang.launch_server --tp 8"],
            &["time python3 -c 'import os", "print(1)' --tp 8", "SGLANG_X=1 sglang serve --tp 8"],
            &["$ docker run --gpus all \\", ">   -e A=1 \\", ">   img"],
            &["server_args=ServerArgs(model_path='/m', tp_size=8, speculative_dr", "aft_model_path=None, dp_size=1)"],
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for case in 0..400 {
            let mut log = String::new();
            for _ in 0..60 {
                match next(10) {
                    // Batch lines no parser reads, as most of a real log.
                    0..3 => log.push_str("[2026-07-01 15:18:37 TP1] Decode batch. #running-req: 12, #token: 5000, token usage: 0.31, cuda graph: True"),
                    // One piece alone (a block key, a heredoc's end), perhaps decorated.
                    3..7 => {
                        log.push_str(["", "", "[2026-07-01 15:18:36 TP0] ", "sglang-1  | ", "2026-10-14T03:12:55Z "][next(5)]);
                        log.push_str(PIECES[next(PIECES.len())]);
                    }
                    // A block as a whole, each line decorated alike.
                    7 => {
                        let lead = ["", "sglang-1  | ", "2026-10-14T03:12:55Z "][next(3)];
                        let block = BLOCKS[next(BLOCKS.len())];
                        for line in &block[..block.len() - next(2)] {
                            log.push_str(lead);
                            log.push_str(line);
                            log.push('\n');
                        }
                        continue;
                    }
                    _ => (0..next(6)).for_each(|_| log.push_str(PIECES[next(PIECES.len())])),
                }
                log.push('\n');
            }
            let (with, without) = both_ways(&format!("case{case}.log"), FileKind::Log, log.as_bytes());
            assert_eq!(with, without, "case {case}:\n{log}");
        }
    }

    #[test]
    fn literals_are_ascii_without_line_breaks_and_distinct() {
        let all: Vec<&str> = literals().collect();
        for literal in &all {
            assert!(!literal.is_empty() && literal.is_ascii() && !literal.contains(['\n', '\r']), "{literal:?}");
        }
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
    }

    #[test]
    fn batch_and_access_lines_are_skipped_launch_lines_are_not() {
        let p = Prefilter::get();
        for skipped in [
            "[2026-07-01 15:18:36 TP0] Decode batch. #running-req: 12, #token: 5000, token usage: 0.31, cuda graph: True, gen throughput (token/s): 812.40, #queue-req: 0, ",
            "[2026-07-01 15:18:36] INFO:     127.0.0.1:40412 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
        ] {
            assert!(!p.hits(skipped.as_bytes()), "{skipped}");
        }
        for read in [
            "[2026-07-01 15:18:36] server_args=ServerArgs(model_path='/m')",
            "+ git apply x.patch",
            "$ vllm serve /m",
            "root@h:/# trtllm-serve /m",
            "\x1b[32mserver_ar\x1b[0mgs",
            "environment:",
            "(APIServer pid=1) INFO 08-20 10:08:10 [utils.py:233] non-default args: {'model': '/m'}",
        ] {
            assert!(p.hits(read.as_bytes()), "{read}");
        }
        assert_eq!(p.first_hit(b"abc\nx=1"), Some(5));
        assert_eq!(p.first_hit(b"a vllm b = c"), Some(3), "the first of hits in several classes");
        assert_eq!(p.first_hit(b"a $ b = nohup"), Some(2));
    }
}
