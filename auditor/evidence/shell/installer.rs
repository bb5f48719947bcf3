//! A pip or uv install as the installer reads it. What a command installs
//! is not only its command line: the requirement files it names (`-r
//! FILE`) hold packages, URLs and options of their own, and the index
//! variables of its environment (`PIP_INDEX_URL`, `UV_INDEX_URL`, ...) and
//! a `pip.conf` the script wrote choose where every package comes from.
//! [`as_read`] spells both out on the command line, so the action reader
//! judges what is installed and from where, however it was spelled.

use crate::evidence::shell::interp::{Evaluation, Exec, Files};
use crate::evidence::shell::{actions, command};

/// Variables pip reads as its options (pip: every long option as
/// `PIP_<NAME>`; "Configuration", pip.pypa.io) and uv reads as its own
/// (uv's "Environment variables" reference), with the option each stands for.
const PIP_VARIABLES: [(&str, &str); 3] = [("PIP_INDEX_URL", "--index-url"), ("PIP_EXTRA_INDEX_URL", "--extra-index-url"), ("PIP_FIND_LINKS", "--find-links")];
const UV_VARIABLES: [(&str, &str); 5] = [
    ("UV_INDEX_URL", "--index-url"),
    ("UV_DEFAULT_INDEX", "--index-url"),
    ("UV_EXTRA_INDEX_URL", "--extra-index-url"),
    ("UV_INDEX", "--extra-index-url"),
    ("UV_FIND_LINKS", "--find-links"),
];

/// The keys of a pip configuration file that choose an index, and their options.
const PIP_CONF_KEYS: [(&str, &str); 3] = [("index-url", "--index-url"), ("extra-index-url", "--extra-index-url"), ("find-links", "--find-links")];

/// Requirement files read inside one another (`-r` in a requirements file).
const MAX_NESTED: usize = 4;

/// `argv` as the installer reads it, when it is a `pip install` (`pip`,
/// `pip3`, `python -m pip`, `uv pip`): each `-r FILE` the input or the
/// script's own writes hold replaced by what the file says, then the index
/// options the environment and a written `pip.conf` give (after the
/// command's own, which take precedence). Any other command is returned as
/// it is.
pub fn as_read(argv: Vec<String>, x: &Exec, e: &Evaluation, files: &dyn Files) -> Vec<String> {
    let Some(install) = command::install_word(&argv) else { return argv };
    let uv = argv[..install].iter().any(|w| w.rsplit('/').next() == Some("uv"));
    let cwd = x.cwd.known();
    let read = |path: &str| written_before(e, x, path).or_else(|| files.read(path));
    let mut out: Vec<String> = argv[..=install].to_vec();
    out.extend(expand_requirements(&argv[install + 1..], cwd.as_deref(), &read, 0));
    let variables: &[(&str, &str)] = if uv { &UV_VARIABLES } else { &PIP_VARIABLES };
    for (name, option) in variables {
        if let Some(value) = x.env.get(*name).map(|v| v.known().unwrap_or_else(|| v.display())).filter(|v| !v.trim().is_empty()) {
            out.extend([option.to_string(), value]);
        }
    }
    if !uv {
        let conf = x.env.get("PIP_CONFIG_FILE").and_then(|v| v.known());
        for (option, value) in pip_conf(e, x, conf.as_deref(), files) {
            out.extend([option.to_string(), value]);
        }
    }
    out
}

/// The arguments with each readable `-r FILE` replaced by the file's own.
fn expand_requirements(args: &[String], dir: Option<&str>, read: &dyn Fn(&str) -> Option<String>, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let file = match a.as_str() {
            "-r" | "--requirement" => {
                i += 1;
                args.get(i).cloned()
            }
            _ => a.strip_prefix("--requirement=").or_else(|| a.strip_prefix("-r").filter(|f| !f.is_empty())).map(str::to_string),
        };
        i += 1;
        let Some(file) = file else {
            out.push(a.clone());
            continue;
        };
        let path = actions::join(dir, &file);
        match read(&path).filter(|_| depth < MAX_NESTED) {
            Some(text) => {
                let here = path.rsplit_once('/').map(|(d, _)| d.to_string());
                out.extend(expand_requirements(&requirement_words(&text), here.as_deref(), read, depth + 1));
            }
            // Not in the input, nor written by the script: left as written.
            None => out.extend(["-r".to_string(), file]),
        }
    }
    out
}

/// The words of a requirements file as pip reads them: continuation lines
/// joined, comments and environment markers dropped, `NAME @ URL` as the
/// URL it installs.
pub fn requirement_words(text: &str) -> Vec<String> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        // A comment starts a line or follows whitespace.
        let line = match line.find(" #").or_else(|| line.find("\t#")) {
            Some(at) => &line[..at],
            None if line.trim_start().starts_with('#') => "",
            None => line,
        };
        // An environment marker follows `;` (after whitespace when the line is a URL).
        let line = if line.contains("://") { line.split(" ;").next().unwrap_or(line) } else { line.split(';').next().unwrap_or(line) };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.iter().position(|w| *w == "@") {
            Some(at) if at + 1 < words.len() => out.push(words[at + 1].to_string()),
            _ => out.extend(words.iter().map(|w| match w.split_once('@') {
                Some((name, url)) if url.contains("://") && !name.contains("://") => url.to_string(),
                _ => w.to_string(),
            })),
        }
    }
    out
}

/// The text the script left at `path` before `x` ran, when it wrote it.
fn written_before(e: &Evaluation, x: &Exec, path: &str) -> Option<String> {
    let mut text: Option<String> = None;
    for w in e.writes.iter().filter(|w| w.ctx.order < x.ctx.order && w.path.known().as_deref() == Some(path)) {
        let content = w.content.known().unwrap_or_else(|| w.content.display());
        text = Some(if w.append { text.unwrap_or_default() + &content } else { content });
    }
    text
}

/// The index options of a pip configuration the script wrote before `x`
/// (`/etc/pip.conf`, `~/.config/pip/pip.conf`, `~/.pip/pip.conf`) or that
/// `PIP_CONFIG_FILE` names.
fn pip_conf(e: &Evaluation, x: &Exec, named: Option<&str>, files: &dyn Files) -> Vec<(&'static str, String)> {
    let mut texts: Vec<String> = Vec::new();
    for w in e.writes.iter().filter(|w| w.ctx.order < x.ctx.order) {
        let Some(path) = w.path.known() else { continue };
        if path.ends_with("/pip.conf") || path.ends_with("/pip.ini") || named == Some(path.as_str()) {
            texts.push(w.content.known().unwrap_or_else(|| w.content.display()));
        }
    }
    if let Some(text) = named.filter(|_| texts.is_empty()).and_then(|p| files.read(p)) {
        texts.push(text);
    }
    let mut out = Vec::new();
    for line in texts.iter().flat_map(|t| t.lines()) {
        let Some((key, value)) = line.split_once('=') else { continue };
        if let Some((_, option)) = PIP_CONF_KEYS.iter().find(|(k, _)| *k == key.trim()) {
            let value = value.trim();
            if !value.is_empty() {
                out.push((*option, value.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirement_files_are_read_as_pip_reads_them() {
        let text = "# pinned\nnumpy>=1.24  # math\nsglang @ git+https://github.com/someone/sglang@fast#subdirectory=python\n\
                    vllm@https://example.com/vllm.whl\n--index-url https://pypi.example.com/simple\n\
                    requests ; python_version < \"3.8\"\n-e \\\n  ./local\n";
        assert_eq!(
            requirement_words(text),
            [
                "numpy>=1.24",
                "git+https://github.com/someone/sglang@fast#subdirectory=python",
                "https://example.com/vllm.whl",
                "--index-url",
                "https://pypi.example.com/simple",
                "requests",
                "-e",
                "./local"
            ]
        );
    }

    #[test]
    fn nested_requirement_files_are_followed_from_their_own_directory() {
        let read = |path: &str| match path {
            "/w/reqs/a.txt" => Some("-r more/b.txt\nx==1\n".to_string()),
            "/w/reqs/more/b.txt" => Some("git+https://github.com/o/r@v\n".to_string()),
            "/w/loop.txt" => Some("-r loop.txt\n".to_string()),
            _ => None,
        };
        let args: Vec<String> = ["-r", "reqs/a.txt", "--requirement=missing.txt", "-U"].iter().map(|s| s.to_string()).collect();
        assert_eq!(expand_requirements(&args, Some("/w"), &read, 0), ["git+https://github.com/o/r@v", "x==1", "-r", "missing.txt", "-U"]);
        // A file that names itself ends at the bound, kept as written.
        let looped = expand_requirements(&["-r".to_string(), "loop.txt".to_string()], Some("/w"), &read, 0);
        assert_eq!(looped, ["-r", "loop.txt"]);
    }
}
