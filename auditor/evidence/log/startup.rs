//! Engine startup records in server logs: SGLang's `server_args=ServerArgs(...)`
//! (dataclass repr, up to mid-2026) and `server_args={...}` (dict repr,
//! 0.5.2x), vLLM's `non-default args: {...}`, `args: Namespace(...)` and
//! `Initializing a V1 LLM engine ... with config: k=v, ...`. Records survive
//! ANSI codes, log prefixes, hard wrapping (a break anywhere, even inside a
//! key), other ranks' lines interleaved with the pieces, a start mid-line,
//! and truncation (fields before the cut are kept, nothing is guessed).
//! A record that lost its head (an excerpt that starts mid-line, a terminal
//! copy) is read as a fragment (see [`fragment`]).

use crate::evidence::log::fragment;
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::python::repr::{self, Record, Stop};
pub use crate::evidence::records::{EngineRecord, RecordKind};
use crate::evidence::text::lines::Line;
use crate::evidence::text::logline;
use crate::evidence::yaml::shown::ShownYaml;

/// Markers, and where the record's own text starts relative to the marker.
const MARKERS: [(&str, RecordKind); 5] = [
    ("server_args=ServerArgs(", RecordKind::SglangServerArgs),
    ("server_args={", RecordKind::SglangServerArgs),
    ("non-default args: {", RecordKind::VllmNonDefaultArgs),
    ("args: Namespace(", RecordKind::VllmNamespace),
    (" with config: ", RecordKind::VllmEngineConfig),
];

/// Most lines scanned past a record's start for its continuation.
const MAX_LOOKAHEAD: usize = 256;
/// Largest record text assembled from wrapped lines.
const MAX_RECORD: usize = 4 << 20;

struct Pending {
    kind: RecordKind,
    /// A fragment: its engine and kind are decided from the keys it shows.
    fragment: Option<fragment::Style>,
    text: String,
    provenance: Provenance,
    end_line: u64,
    waited: usize,
}

/// Collects engine records line by line.
pub struct RecordScanner {
    file: FileRef,
    pending: Option<Pending>,
    shown: ShownYaml,
    pub records: Vec<EngineRecord>,
}

impl RecordScanner {
    pub fn new(file: FileRef) -> Self {
        RecordScanner { shown: ShownYaml::new(file.clone()), file, pending: None, records: Vec::new() }
    }

    pub fn line(&mut self, line: &Line) {
        self.read(line, &logline::clean(&line.text));
    }

    /// Read a line already cleaned of its log decorations.
    pub fn read(&mut self, line: &Line, clean: &logline::Clean) {
        self.shown.line(line, &clean.body);
        if let Some(mut pending) = self.pending.take() {
            if clean.is_record() || find_marker(&clean.body).is_some() {
                pending.waited += 1;
                if pending.waited > MAX_LOOKAHEAD || find_marker(&clean.body).is_some() {
                    self.finish_pending(pending);
                } else {
                    self.pending = Some(pending);
                    return;
                }
            } else {
                let mut candidate = pending.text.clone();
                candidate.push_str(&clean.body);
                let parsed = parse(pending.kind, &candidate);
                match &parsed.stop {
                    None => {
                        pending.end_line = line.number;
                        return self.push(pending.kind, pending.fragment, parsed, pending.provenance, line.number);
                    }
                    Some(Stop::Truncated) if candidate.len() <= MAX_RECORD => {
                        pending.text = candidate;
                        pending.end_line = line.number;
                        pending.waited = 0;
                        self.pending = Some(pending);
                        return;
                    }
                    // The line does not continue the record: another process's output.
                    Some(Stop::Syntax { .. }) if pending.waited < MAX_LOOKAHEAD => {
                        pending.waited += 1;
                        self.pending = Some(pending);
                        return;
                    }
                    _ => return self.finish_pending(pending),
                }
            }
        }
        let (at, kind, text, style) = match find_marker(&clean.body) {
            Some((at, kind, body_start)) => (at, kind, clean.body[body_start..].to_string(), None),
            None => match fragment::find(&clean.body) {
                Some((at, style, text)) => (at, RecordKind::SglangServerArgs, text, Some(style)),
                None => return,
            },
        };
        let raw_at = line.text.find(&clean.body[at..at + 10.min(clean.body.len() - at)]).unwrap_or(0);
        let shown = &line.text[raw_at..];
        let provenance = Provenance::at_line(&self.file, line.number, line.offset + raw_at as u64, shown);
        let parsed = parse(kind, &text);
        if parsed.stop == Some(Stop::Truncated) {
            self.pending = Some(Pending { kind, fragment: style, text, provenance, end_line: line.number, waited: 0 });
        } else {
            self.push(kind, style, parsed, provenance, line.number);
        }
    }

    /// Whether a record (or a shown config) is open: the next line may continue it.
    pub fn is_open(&self) -> bool {
        self.pending.is_some() || self.shown.is_open()
    }

    /// End of input: a record still open was cut short.
    pub fn finish(&mut self) {
        if let Some(pending) = self.pending.take() {
            self.finish_pending(pending);
        }
        self.shown.finish();
        self.records.append(&mut self.shown.records);
    }

    fn finish_pending(&mut self, pending: Pending) {
        let parsed = parse(pending.kind, &pending.text);
        self.push(pending.kind, pending.fragment, parsed, pending.provenance, pending.end_line);
    }

    fn push(&mut self, kind: RecordKind, fragment: Option<fragment::Style>, record: Record, provenance: Provenance, end_line: u64) {
        let stop = record.stop.as_ref().map(|s| describe(s, record.fields.last().map(|(k, _)| k.as_str())));
        let Some(style) = fragment else {
            self.records.push(EngineRecord { kind, fields: record.fields, stop, provenance, end_line, fragment: false, depends: Vec::new() });
            return;
        };
        // Text that stops being a repr where no line break explains it is
        // prose, not a record; a fragment counts only for the runs of the
        // engine's own field names it shows.
        if matches!(record.stop, Some(Stop::Syntax { .. } | Stop::TooDeep { .. })) {
            return;
        }
        let Some((kind, fields)) = fragment::fields(style, record.fields) else { return };
        let first = fields.first().map_or("", |(k, _)| k.as_str());
        let mut said = format!("a fragment without the record's head: the fields before {first} and between the runs of known fields are unknown");
        if let Some(stop) = stop {
            said = format!("{said}; {stop}");
        }
        self.records.push(EngineRecord { kind, fields, stop: Some(said), provenance, end_line, fragment: true, depends: Vec::new() });
    }
}

fn describe(stop: &Stop, last: Option<&str>) -> String {
    let after = last.map(|k| format!(" after field {k}")).unwrap_or_default();
    match stop {
        Stop::Truncated => format!("cut short{after}: the fields that follow are unknown"),
        Stop::Syntax { expected, .. } => format!("unreadable{after} (expected {expected}): the fields that follow are unknown"),
        Stop::TooDeep { .. } => format!("nested too deeply{after}: the fields that follow are unknown"),
    }
}

/// The first marker in a line: (marker position, kind, where the record text starts).
fn find_marker(text: &str) -> Option<(usize, RecordKind, usize)> {
    MARKERS
        .iter()
        .filter_map(|(marker, kind)| {
            let at = text.find(marker)?;
            if *kind == RecordKind::VllmEngineConfig && !text[..at].contains("LLM engine") {
                return None;
            }
            let start = match kind {
                RecordKind::SglangServerArgs => at + "server_args=".len(),
                RecordKind::VllmNonDefaultArgs => at + "non-default args: ".len(),
                RecordKind::VllmNamespace => at + "args: ".len(),
                RecordKind::VllmEngineConfig | RecordKind::TrtllmSpeculativeConfig | RecordKind::TrtllmKvCacheConfig => at + marker.len(),
            };
            Some((at, *kind, start))
        })
        .min_by_key(|(at, _, _)| *at)
}

/// Parse a record's text. The engine-config line is a bare `k=v, ...` list
/// that runs to the end of the line: it is read as the body of a call repr.
fn parse(kind: RecordKind, text: &str) -> Record {
    match kind {
        RecordKind::VllmEngineConfig => {
            let mut record = repr::parse_record(&format!("EngineConfig({})", text.trim_end()), true);
            if record.stop == Some(Stop::Truncated) {
                record.stop = None;
            }
            record
        }
        _ => repr::parse_record(text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::python::repr::Py;
    use crate::evidence::text::lines::lines_of;

    fn scan(text: &str) -> Vec<EngineRecord> {
        let mut scanner = RecordScanner::new(FileRef { path: "server.log".into(), artifact: None });
        for line in lines_of(text) {
            scanner.line(&line);
        }
        scanner.finish();
        scanner.records
    }

    fn keys(r: &EngineRecord) -> Vec<&str> {
        r.fields.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn one_line_dataclass_and_dict_shapes() {
        let r = scan("[2026-07-01 15:18:36] server_args=ServerArgs(model_path='/m', speculative_draft_model_path='/d', tp_size=4)\n");
        assert_eq!(r.len(), 1);
        assert!(r[0].complete());
        assert_eq!(keys(&r[0]), ["model_path", "speculative_draft_model_path", "tp_size"]);
        assert_eq!(r[0].get("model_path"), Some(&Py::Str("/m".into())));
        assert_eq!(r[0].provenance.line, Some(1));
        assert_eq!(r[0].provenance.span.unwrap().0, 22);
        let r = scan("INFO engine.py:177: server_args={'model_path': '/m', 'tp_size': 8}\n");
        assert_eq!(r[0].kind, RecordKind::SglangServerArgs);
        assert_eq!(r[0].get("tp_size"), Some(&Py::Int(8)));
    }

    #[test]
    fn wrapped_coloured_interleaved_and_cut() {
        let log = concat!(
            "\x1b[36m[2026-07-01 15:18:36 TP0]\x1b[0m noise server_args=ServerArgs(model_path='/m', speculative_dr\n",
            "aft_model_path=None, tp_size=4, quant\n",
            "[2026-07-01 15:18:36 TP1] Init torch distributed begin.\n",
            "Loading safetensors checkpoint shards:  50% Completed | 1/2\n",
            "ization='fp8', kv_cache_dtype='fp8_e4m3', cuda_graph_config=CudaGraphConfig(decode=Phase\n",
            "Config(bs=[1, 2])))\n",
            "[2026-07-01 15:18:40 TP0] Load weight begin.\n",
        );
        let r = scan(log);
        assert_eq!(r.len(), 1);
        assert!(r[0].complete(), "{:?}", r[0].stop);
        assert_eq!(keys(&r[0]), ["model_path", "speculative_draft_model_path", "tp_size", "quantization", "kv_cache_dtype", "cuda_graph_config"]);
        assert_eq!(r[0].get("quantization"), Some(&Py::Str("fp8".into())));
        assert_eq!(r[0].end_line, 6);
    }

    #[test]
    fn truncated_record_keeps_fields_before_the_cut() {
        let r = scan("[2026-07-01 15:18:36] server_args=ServerArgs(model_path='/m', tp_size=4, speculative_num_st\n[2026-07-01 15:18:37] next record\n");
        assert_eq!(keys(&r[0]), ["model_path", "tp_size"]);
        assert!(r[0].stop.as_deref().unwrap().contains("cut short after field tp_size"));
    }

    #[test]
    fn compose_prefixed_wrapped_lines() {
        let log = "sglang-1  | [2026-07-01 15:18:36] server_args={'model_path': '/m', 'tp_\nsglang-1  | size': 2}\n";
        let r = scan(log);
        assert!(r[0].complete());
        assert_eq!(r[0].get("tp_size"), Some(&Py::Int(2)));
    }

    #[test]
    fn vllm_records() {
        let log = concat!(
            "(APIServer pid=12) INFO 08-20 10:08:10 [utils.py:233] non-default args: {'model_tag': '/m', 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}\n",
            "(EngineCore_DP0 pid=15) INFO 08-20 10:08:39 [core.py:93] Initializing a V1 LLM engine (v0.11.0) with config: model='/m', served_model_name=/m, quantization=fp8, speculative_config=SpeculativeConfig(method='mtp', model='/m', num_spec_tokens=3), seed=0\n",
            "INFO 08-20 10:08:10 api_server.py:1 args: Namespace(model='/m', tensor_parallel_size=8, speculative_model=None)\n",
        );
        let r = scan(log);
        assert_eq!(r.iter().map(|r| r.kind).collect::<Vec<_>>(), [RecordKind::VllmNonDefaultArgs, RecordKind::VllmEngineConfig, RecordKind::VllmNamespace]);
        assert!(r.iter().all(EngineRecord::complete));
        assert_eq!(r[1].get("served_model_name"), Some(&Py::Bare("/m".into())));
        assert_eq!(r[1].get("quantization"), Some(&Py::Bare("fp8".into())));
        assert_eq!(r[2].get("tensor_parallel_size"), Some(&Py::Int(8)));
    }
}
