//! What kind of file a path names, decided by its name alone, before any
//! byte is read: it picks the parser for the file and the signature rules
//! that apply to it, or says why the file holds no launch evidence.

use serde::Serialize;

/// How a file is read, decided by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum FileKind {
    /// A `printf '%q '` launch command file.
    Command,
    /// Shell source (`.sh`, `.env`): shell quoting applies to assignments.
    Script,
    /// Python source (`sitecustomize.py`, wrappers).
    Python,
    /// Prose (Markdown): read for waivers, never matched by signature rules.
    Doc,
    /// JSON metadata, results or configs.
    Json,
    /// YAML recipes and configs.
    Yaml,
    /// Anything else is read as program output.
    Log,
}

impl FileKind {
    pub const ALL: [FileKind; 7] = [FileKind::Command, FileKind::Script, FileKind::Json, FileKind::Yaml, FileKind::Python, FileKind::Log, FileKind::Doc];

    /// The kind's name as rule packs and JSON spell it.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// Decide how to read `path`, or why not to read it at all.
pub fn classify(path: &str) -> Result<FileKind, &'static str> {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "csv" | "tsv" => Err("tabular metrics (CSV): no launch evidence"),
        "jsonl" | "parquet" | "arrow" | "traj" => Err("per-request or trajectory records: no launch evidence"),
        "png" | "jpg" | "jpeg" | "gif" | "svg" | "pdf" | "html" => Err("plot or rendered page: no launch evidence"),
        "pt" | "bin" | "safetensors" | "npy" | "npz" | "sqsh" => Err("binary data: no launch evidence"),
        "json" => Ok(FileKind::Json),
        "yaml" | "yml" => Ok(FileKind::Yaml),
        "sh" | "bash" | "env" | "slurm" | "sbatch" => Ok(FileKind::Script),
        "py" => Ok(FileKind::Python),
        "md" | "markdown" | "rst" => Ok(FileKind::Doc),
        _ if is_command_file(name) => Ok(FileKind::Command),
        _ => Ok(FileKind::Log),
    }
}

/// Whether a file name is a `%q` command file. `benchmark_command.txt` is
/// written with plain `echo`, so it is not one.
pub fn is_command_file(name: &str) -> bool {
    name.ends_with("_command.txt") && name != "benchmark_command.txt"
}

/// The container format of a bundle or nested member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Zip,
    TarGz,
    Tar,
    /// A single gzip-compressed file (e.g. `server.log.gz`).
    Gz,
    Plain,
}

pub(crate) fn format_by_name(name: &str) -> Format {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".zip") {
        Format::Zip
    } else if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
        Format::TarGz
    } else if lower.ends_with(".tar") {
        Format::Tar
    } else if lower.ends_with(".gz") {
        Format::Gz
    } else {
        Format::Plain
    }
}

/// Whether a member of this name is read as it is (not an archive, not gzip).
pub(crate) fn is_plain(name: &str) -> bool {
    format_by_name(name) == Format::Plain
}
