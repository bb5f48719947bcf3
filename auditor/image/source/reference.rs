//! Image references in the transport syntax people know from skopeo:
//! `docker://REGISTRY/REPO:TAG[@sha256:..]` (the prefix is optional),
//! `docker-daemon:NAME:TAG`, `oci:DIR[:TAG]`, `oci-archive:FILE[:TAG]` and
//! `docker-archive:FILE[:NAME:TAG]`. Launch scripts write `#` for `/`
//! (`nvcr.io#nvidia/sglang:tag`, the enroot spelling); it means the same.
//! Registry names are normalised the way Docker does (`lmsysorg/sglang` is
//! `docker.io/lmsysorg/sglang:latest`) by oci-client's parser.

use super::ImageError;
use std::fmt;
use std::path::{Path, PathBuf};

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageRef {
    /// An OCI distribution registry.
    Registry(RegistryRef),
    /// An image in a Docker Engine (or compatible) daemon, by name or ID.
    Daemon { name: String },
    /// An OCI image layout directory, optionally one of its `ref.name`s.
    OciLayout { dir: PathBuf, tag: Option<String> },
    /// A tar of an OCI image layout.
    OciArchive { file: PathBuf, tag: Option<String> },
    /// A `docker save` tarball, optionally one of its `RepoTags`.
    DockerArchive { file: PathBuf, name: Option<String> },
}

/// A registry reference, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryRef {
    /// `host[:port]` as written (`docker.io` for Docker Hub).
    pub registry: String,
    pub repository: String,
    pub tag: Option<String>,
    /// `sha256:<hex>` when pinned.
    pub digest: Option<String>,
}

impl RegistryRef {
    /// The registry host without a port.
    pub(crate) fn host(&self) -> &str {
        self.registry.rsplit_once(':').map_or(self.registry.as_str(), |(h, _)| h)
    }

    /// Loopback registries (127.0.0.0/8, `localhost`) are spoken to over
    /// plain HTTP, as Docker does. (Reference syntax has no IPv6 literals.)
    pub(crate) fn is_loopback(&self) -> bool {
        let host = self.host();
        host == "localhost" || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for RegistryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let with = |f: &mut fmt::Formatter<'_>, prefix: &str, path: &Path, extra: &Option<String>| {
            write!(f, "{prefix}:{}", path.display())?;
            extra.as_ref().map_or(Ok(()), |t| write!(f, ":{t}"))
        };
        match self {
            ImageRef::Registry(r) => write!(f, "docker://{r}"),
            ImageRef::Daemon { name } => write!(f, "docker-daemon:{name}"),
            ImageRef::OciLayout { dir, tag } => with(f, "oci", dir, tag),
            ImageRef::OciArchive { file, tag } => with(f, "oci-archive", file, tag),
            ImageRef::DockerArchive { file, name } => with(f, "docker-archive", file, name),
        }
    }
}

impl std::str::FromStr for ImageRef {
    type Err = ImageError;

    fn from_str(text: &str) -> Result<Self, ImageError> {
        let bad = |reason: &str| ImageError::Reference { reference: text.to_string(), reason: reason.to_string() };
        if text.trim().is_empty() || text.chars().any(char::is_control) {
            return Err(bad("empty, or has control characters"));
        }
        if let Some(rest) = text.strip_prefix("docker://") {
            return parse_registry(text, rest).map(ImageRef::Registry);
        }
        if let Some(name) = text.strip_prefix("docker-daemon:") {
            if name.is_empty() {
                return Err(bad("docker-daemon: needs NAME:TAG or an image ID"));
            }
            return Ok(ImageRef::Daemon { name: name.to_string() });
        }
        if let Some(rest) = text.strip_prefix("oci:") {
            let (dir, tag) = path_and_suffix(rest, |p| p.is_dir(), true);
            return non_empty(&dir, text).map(|dir| ImageRef::OciLayout { dir, tag });
        }
        if let Some(rest) = text.strip_prefix("oci-archive:") {
            let (file, tag) = path_and_suffix(rest, |p| p.is_file(), true);
            return non_empty(&file, text).map(|file| ImageRef::OciArchive { file, tag });
        }
        if let Some(rest) = text.strip_prefix("docker-archive:") {
            let (file, name) = path_and_suffix(rest, |p| p.is_file(), false);
            return non_empty(&file, text).map(|file| ImageRef::DockerArchive { file, name });
        }
        // A path on disk with no transport: the user meant a local image,
        // not a registry repository of that name (which would be retried
        // against docker.io and fail on something else).
        if let Some(meant) = local_transport(Path::new(text)) {
            return Err(bad(&format!("{text} is a path on disk, not a registry reference: did you mean `{meant}:{text}`?")));
        }
        // `transport:...` that is not `host:port/...` nor `name:tag`
        if let Some((transport, rest)) = text.split_once(':')
            && transport.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && rest.contains('/')
            && !rest.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(bad(&format!("unknown transport {transport:?} (docker://, docker-daemon:, oci:, oci-archive:, docker-archive:)")));
        }
        parse_registry(text, text).map(ImageRef::Registry)
    }
}

/// The transport a path on disk would be read with: `oci` for a directory,
/// `docker-archive` for a `.tar` (`docker save`), `oci-archive` for another
/// file; `None` when nothing is there.
fn local_transport(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    Some(if meta.is_dir() {
        "oci"
    } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("tar")) {
        "docker-archive"
    } else {
        "oci-archive"
    })
}

fn non_empty(path: &Path, text: &str) -> Result<PathBuf, ImageError> {
    if path.as_os_str().is_empty() {
        return Err(ImageError::Reference { reference: text.to_string(), reason: "the path is empty".into() });
    }
    Ok(path.to_path_buf())
}

/// Split `PATH[:SUFFIX]`. A path that exists as a whole wins; otherwise the
/// suffix starts at the last colon (`last`, for a tag) or the first one
/// (for `NAME:TAG`), and must not contain `/` when it is a tag.
fn path_and_suffix(rest: &str, exists: impl Fn(&Path) -> bool, last: bool) -> (PathBuf, Option<String>) {
    if exists(Path::new(rest)) {
        return (PathBuf::from(rest), None);
    }
    let split = if last { rest.rsplit_once(':') } else { rest.split_once(':') };
    match split {
        Some((path, suffix)) if !suffix.is_empty() && (!last || !suffix.contains('/')) => (PathBuf::from(path), Some(suffix.to_string())),
        _ => (PathBuf::from(rest), None),
    }
}

fn parse_registry(text: &str, rest: &str) -> Result<RegistryRef, ImageError> {
    let spelled = rest.replace('#', "/");
    let parsed: oci_client::Reference =
        spelled.parse().map_err(|e: oci_client::ParseError| ImageError::Reference { reference: text.to_string(), reason: e.to_string() })?;
    Ok(RegistryRef {
        registry: parsed.registry().to_string(),
        repository: parsed.repository().to_string(),
        tag: parsed.tag().map(str::to_string),
        digest: parsed.digest().map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(text: &str) -> RegistryRef {
        match text.parse::<ImageRef>() {
            Ok(ImageRef::Registry(r)) => r,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn registry_references_normalise_like_docker() {
        let r = reg("lmsysorg/sglang:v0.5.16-cu130");
        assert_eq!((r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()), ("docker.io", "lmsysorg/sglang", Some("v0.5.16-cu130")));
        assert_eq!(reg("ubuntu").repository, "library/ubuntu");
        assert_eq!(reg("ubuntu").tag.as_deref(), Some("latest"));
        let pinned = format!("vllm/vllm-openai:v0.20.1@sha256:{}", "a".repeat(64));
        assert_eq!(reg(&pinned).digest.as_deref(), Some(format!("sha256:{}", "a".repeat(64)).as_str()));
        let local = reg("docker://127.0.0.1:5000/auditor/test:v1");
        assert_eq!((local.registry.as_str(), local.host(), local.is_loopback()), ("127.0.0.1:5000", "127.0.0.1", true));
        assert_eq!(local.to_string(), "127.0.0.1:5000/auditor/test:v1");
        assert!(!reg("nvcr.io/nvidia/sglang:x").is_loopback());
        assert!(reg("localhost:5000/a:b").is_loopback());
        assert!(reg("127.3.0.1/a:b").is_loopback());
    }

    #[test]
    fn hash_is_a_slash() {
        assert_eq!(reg("nvcr.io#nvidia/sglang:25.01"), reg("nvcr.io/nvidia/sglang:25.01"));
        assert_eq!(reg("docker://nvcr.io#nvidia/sglang:25.01").registry, "nvcr.io");
    }

    #[test]
    fn local_transports() {
        assert_eq!("oci:/tmp/lay:v1".parse::<ImageRef>().ok(), Some(ImageRef::OciLayout { dir: "/tmp/lay".into(), tag: Some("v1".into()) }));
        assert_eq!("oci:/tmp/lay".parse::<ImageRef>().ok(), Some(ImageRef::OciLayout { dir: "/tmp/lay".into(), tag: None }));
        assert_eq!("oci:./a/b".parse::<ImageRef>().ok(), Some(ImageRef::OciLayout { dir: "./a/b".into(), tag: None }));
        assert_eq!(
            "docker-archive:/x/t.tar:localhost/auditor/test:v1".parse::<ImageRef>().ok(),
            Some(ImageRef::DockerArchive { file: "/x/t.tar".into(), name: Some("localhost/auditor/test:v1".into()) })
        );
        assert_eq!("docker-daemon:localhost/a:b".parse::<ImageRef>().ok(), Some(ImageRef::Daemon { name: "localhost/a:b".into() }));
        assert_eq!("oci-archive:/x/t.tar:v1".parse::<ImageRef>().map(|r| r.to_string()).ok().as_deref(), Some("oci-archive:/x/t.tar:v1"));
    }

    #[test]
    fn bad_references_are_errors_not_panics() {
        for text in ["", "docker-daemon:", "oci:", "docker://", "UPPER/Case:x", "a:b:c:d", "foo://bar/baz", "docker://a/b@sha256:zz", "[::1]:5000/a:b", "\u{0}"]
        {
            assert!(text.parse::<ImageRef>().is_err(), "{text:?} should not parse");
        }
    }

    #[test]
    fn a_path_on_disk_is_not_a_registry_name() {
        let dir = tempfile::tempdir().unwrap();
        let tar = dir.path().join("image.tar");
        std::fs::write(&tar, b"").unwrap();
        for (path, meant) in [(dir.path().to_path_buf(), "oci"), (tar, "docker-archive")] {
            let text = path.to_str().unwrap();
            let err = text.parse::<ImageRef>().unwrap_err().to_string();
            assert!(err.contains(&format!("did you mean `{meant}:{text}`?")), "{err}");
            assert!(format!("{meant}:{text}").parse::<ImageRef>().is_ok());
        }
    }
}
