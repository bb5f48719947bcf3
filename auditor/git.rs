//! A git repository read as data: a commit's tree listed (`git ls-tree`),
//! its blobs streamed (`git cat-file --batch`), and the blob id of a file
//! on disk computed here, so that what changed since a commit is found
//! without git touching the work tree. A submitted checkout is hostile
//! input: git is started with every setting that runs a command turned off
//! (fsmonitor, hooks, pager, external diff, credential and ssh helpers),
//! with no system or global configuration, and only plumbing that reads
//! objects runs, so no clean, smudge or textconv filter and no index
//! refresh ever happens.

use sha2::Digest;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// `git -C dir`, configured so that nothing a repository (or a user's
/// configuration) sets can execute: a submitted checkout is hostile input.
pub fn safe_git(dir: &Path) -> Command {
    let mut git = Command::new("git");
    git.arg("-C").arg(dir);
    for setting in [
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "core.pager=cat",
        "core.sshCommand=false",
        "core.askPass=",
        "credential.helper=",
        "diff.external=",
        "protocol.allow=never",
        "core.untrackedCache=false",
        "safe.directory=*",
    ] {
        git.arg("-c").arg(setting);
    }
    git.arg("--no-pager")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_SSH_COMMAND")
        .env_remove("GIT_ASKPASS")
        .stdin(Stdio::null());
    git
}

/// One blob of the tree: its path below the audited folder and its object id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub path: String,
    pub oid: String,
}

/// The blobs of `rev`'s tree under `prefix` (the audited folder's path in
/// the repository, `""` or ending in `/`, as `git rev-parse --show-prefix`
/// says it), paths relative to it. A symbolic link to a file of the same
/// tree is that file at the link's path (bash runs a linked recipe as its
/// target), as a directory walk reads it; other links and submodules are
/// not files of the tree and are left out.
pub fn blobs(dir: &Path, rev: &str, prefix: &str) -> io::Result<Vec<Blob>> {
    let tree = if prefix.is_empty() { rev.to_string() } else { format!("{rev}:{}", prefix.trim_end_matches('/')) };
    let out = safe_git(dir).args(["ls-tree", "-r", "-z", "--full-tree", "--end-of-options"]).arg(&tree).stderr(Stdio::piped()).output()?;
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("no message").to_string();
        return Err(io::Error::other(format!("git ls-tree {tree}: {message}")));
    }
    let mut blobs = Vec::new();
    let mut links = Vec::new();
    for entry in out.stdout.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        // `<mode> SP <type> SP <oid> TAB <path>`
        let text = String::from_utf8_lossy(entry);
        let Some((meta, path)) = text.split_once('\t') else { continue };
        let mut fields = meta.split(' ');
        let (Some(mode), Some(kind), Some(oid)) = (fields.next(), fields.next(), fields.next()) else { continue };
        if kind == "blob" && (mode == "100644" || mode == "100755") {
            blobs.push(Blob { path: path.to_string(), oid: oid.to_string() });
        } else if kind == "blob" && mode == "120000" {
            links.push(Blob { path: path.to_string(), oid: oid.to_string() });
        }
    }
    if !links.is_empty() {
        blobs.extend(linked_files(dir, &blobs, &links)?);
    }
    Ok(blobs)
}

/// Longest link target read; a longer one names no file of a tree.
const MAX_LINK: u64 = 4096;

/// The links among `links` that lead, through at most a few links, to a
/// file of `files`: each as that file's blob at the link's path.
fn linked_files(dir: &Path, files: &[Blob], links: &[Blob]) -> io::Result<Vec<Blob>> {
    let mut objects = Objects::open(dir)?;
    let mut targets: std::collections::BTreeMap<&str, String> = std::collections::BTreeMap::new();
    for link in links {
        let text = objects.with_blob(&link.oid, |_, reader| {
            let mut text = String::new();
            reader.take(MAX_LINK).read_to_string(&mut text).map(|_| text)
        })??;
        let from = link.path.rsplit_once('/').map_or("", |(d, _)| d);
        if let Some(target) = crate::links::resolve(from, &text) {
            targets.insert(&link.path, target);
        }
    }
    let oid_of: std::collections::BTreeMap<&str, &str> = files.iter().map(|b| (b.path.as_str(), b.oid.as_str())).collect();
    let mut out = Vec::new();
    for link in links {
        let mut at = link.path.as_str();
        for _ in 0..crate::links::MAX_HOPS {
            let Some(next) = targets.get(at) else { break };
            if let Some(oid) = oid_of.get(next.as_str()) {
                out.push(Blob { path: link.path.clone(), oid: oid.to_string() });
                break;
            }
            at = next;
        }
    }
    Ok(out)
}

/// `git cat-file --batch`: blob bytes by object id, one at a time, streamed.
pub struct Objects {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Objects {
    pub fn open(dir: &Path) -> io::Result<Objects> {
        let mut child = safe_git(dir).args(["cat-file", "--batch"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
        let input = child.stdin.take().ok_or_else(|| io::Error::other("git cat-file: no stdin"))?;
        let output = BufReader::with_capacity(64 << 10, child.stdout.take().ok_or_else(|| io::Error::other("git cat-file: no stdout"))?);
        Ok(Objects { child, input, output })
    }

    /// Hand blob `oid` to `read` as a stream of its `size` bytes; what
    /// `read` leaves unread is skipped, so the next object starts clean.
    pub fn with_blob<T>(&mut self, oid: &str, read: impl FnOnce(u64, &mut dyn Read) -> T) -> io::Result<T> {
        writeln!(self.input, "{oid}")?;
        self.input.flush()?;
        let mut header = String::new();
        self.output.read_line(&mut header)?;
        // `<oid> blob <size>` or `<oid> missing`
        let mut fields = header.split_whitespace();
        let size = match (fields.next(), fields.next(), fields.next()) {
            (Some(_), Some("blob"), Some(size)) => size.parse::<u64>().map_err(|_| io::Error::other(format!("git cat-file: bad header {header:?}")))?,
            _ => return Err(io::Error::other(format!("git cat-file: {}", header.trim()))),
        };
        let mut body = (&mut self.output).take(size);
        let out = read(size, &mut body);
        io::copy(&mut body, &mut io::sink())?;
        let mut newline = [0u8; 1];
        self.output.read_exact(&mut newline)?;
        Ok(out)
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a repository names its objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectFormat {
    Sha1,
    Sha256,
}

impl ObjectFormat {
    /// The id git would give the file at `path` as a blob: the hash of
    /// `blob <len>\0` and its bytes, streamed (a work tree may hold files of
    /// any size).
    pub fn blob_id_of(self, path: &Path) -> io::Result<String> {
        fn hash<D: Digest + Write>(mut hasher: D, path: &Path) -> io::Result<String> {
            let mut file = std::fs::File::open(path)?;
            hasher.update(format!("blob {}\0", file.metadata()?.len()));
            io::copy(&mut file, &mut hasher)?;
            Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
        }
        match self {
            ObjectFormat::Sha1 => hash(sha1::Sha1::new(), path),
            ObjectFormat::Sha256 => hash(sha2::Sha256::new(), path),
        }
    }
}

/// `git rev-parse ARGS` in `dir`: its first line of output, or git's first line of complaint.
pub fn rev_parse(dir: &Path, args: &[&str]) -> io::Result<Result<String, String>> {
    let out = safe_git(dir).arg("rev-parse").args(args).stderr(Stdio::piped()).output()?;
    let first = |bytes: &[u8]| String::from_utf8_lossy(bytes).lines().next().unwrap_or("").trim().to_string();
    Ok(if out.status.success() { Ok(first(&out.stdout)) } else { Err(first(&out.stderr)) })
}

/// The repository's object format (`sha1` unless it says `sha256`).
pub fn object_format(dir: &Path) -> io::Result<ObjectFormat> {
    Ok(match rev_parse(dir, &["--show-object-format"])? {
        Ok(format) if format == "sha256" => ObjectFormat::Sha256,
        _ => ObjectFormat::Sha1,
    })
}
