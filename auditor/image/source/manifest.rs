//! Manifests and indexes, OCI and Docker v2 schema 2 alike (the two differ
//! only in media type strings), and picking one platform out of an index.
//! Every source hands raw bytes here, so a manifest is parsed the same way
//! whether it came from a registry, a layout or an archive.

use super::ImageError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

pub(super) const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub(super) const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// Layers as `docker save` and the Engine's export store them.
pub(super) const DOCKER_LAYER_TAR: &str = "application/vnd.docker.image.rootfs.diff.tar";
/// Every manifest type we parse, for `Accept` headers.
pub(super) const ACCEPTED: [&str; 4] = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST];

/// A content descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Descriptor {
    #[serde(default)]
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default)]
    pub platform: Option<Platform>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// `os/architecture[/variant]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    #[serde(default)]
    pub variant: Option<String>,
}

/// A `--platform` value that is not `OS/ARCH[/VARIANT]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a platform: {0:?} (use OS/ARCH[/VARIANT], e.g. linux/amd64)")]
pub struct NotAPlatform(pub String);

impl Platform {
    /// Parse `os/arch[/variant]`.
    pub fn parse(text: &str) -> Result<Platform, NotAPlatform> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts.as_slice() {
            [os, arch] | [os, arch, _] if !os.is_empty() && !arch.is_empty() => {
                Ok(Platform { os: os.to_string(), architecture: arch.to_string(), variant: parts.get(2).filter(|v| !v.is_empty()).map(|v| v.to_string()) })
            }
            _ => Err(NotAPlatform(text.to_string())),
        }
    }

    /// Whether an index entry for `other` serves a request for `self`: a
    /// request without a variant takes any variant, and arm64's default
    /// variant is v8.
    pub(crate) fn matches(&self, other: &Platform) -> bool {
        let norm = |p: &Platform| match (p.architecture.as_str(), p.variant.as_deref()) {
            ("arm64", Some("v8")) => None,
            (_, v) => v.map(str::to_string),
        };
        self.os == other.os && self.architecture == other.architecture && (self.variant.is_none() || norm(self) == norm(other))
    }
}

impl Default for Platform {
    fn default() -> Self {
        Platform { os: "linux".into(), architecture: "amd64".into(), variant: None }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        self.variant.as_ref().map_or(Ok(()), |v| write!(f, "/{v}"))
    }
}

/// An image manifest (one platform).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ImageManifest {
    pub schema_version: u32,
    #[serde(default)]
    pub media_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
}

/// An image index or Docker manifest list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Index {
    pub schema_version: u32,
    #[serde(default)]
    pub media_type: Option<String>,
    pub manifests: Vec<Descriptor>,
}

/// What a manifest document turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Parsed {
    Image(ImageManifest),
    Index(Index),
}

/// Parse a manifest or index. `media_type` is the type the source announced
/// (Content-Type, a descriptor), if any; the document's own `mediaType`
/// and shape decide otherwise.
pub(super) fn parse(reference: &str, media_type: Option<&str>, bytes: &[u8]) -> Result<Parsed, ImageError> {
    let malformed = |detail: String| ImageError::Malformed { reference: reference.to_string(), what: "manifest".into(), detail };
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| malformed(e.to_string()))?;
    let declared = value.get("mediaType").and_then(|v| v.as_str()).or(media_type.filter(|t| ACCEPTED.contains(t)));
    if value.get("schemaVersion").and_then(|v| v.as_u64()) != Some(2) {
        return Err(ImageError::Unsupported {
            reference: reference.to_string(),
            what: format!("manifest schemaVersion {} (only schema 2: OCI and Docker v2s2)", value.get("schemaVersion").unwrap_or(&serde_json::Value::Null)),
        });
    }
    let is_index = match declared {
        Some(OCI_INDEX | DOCKER_LIST) => true,
        Some(OCI_MANIFEST | DOCKER_MANIFEST) => false,
        Some(other) => return Err(ImageError::Unsupported { reference: reference.to_string(), what: format!("manifest media type {other}") }),
        None => value.get("manifests").is_some(),
    };
    if is_index {
        serde_json::from_value(value).map(Parsed::Index).map_err(|e| malformed(e.to_string()))
    } else {
        serde_json::from_value(value).map(Parsed::Image).map_err(|e| malformed(e.to_string()))
    }
}

/// The entry of `index` for `wanted`, or an error that lists the platforms
/// present. Entries without a platform (attestations) are never picked.
pub(super) fn select<'a>(reference: &str, index: &'a Index, wanted: &Platform) -> Result<&'a Descriptor, ImageError> {
    index.manifests.iter().find(|d| d.platform.as_ref().is_some_and(|p| wanted.matches(p)) && !is_attestation(d)).ok_or_else(|| ImageError::PlatformNotFound {
        reference: reference.to_string(),
        wanted: wanted.to_string(),
        present: index.manifests.iter().filter(|d| !is_attestation(d)).filter_map(|d| d.platform.as_ref().map(Platform::to_string)).collect(),
    })
}

/// Every image platform of an index with its manifest digest (attestations left out).
pub(super) fn platforms(index: &Index) -> Vec<(String, String)> {
    index.manifests.iter().filter(|d| !is_attestation(d)).filter_map(|d| Some((d.platform.as_ref()?.to_string(), d.digest.clone()))).collect()
}

/// BuildKit records provenance as index entries with platform unknown/unknown.
fn is_attestation(d: &Descriptor) -> bool {
    d.annotations.contains_key("vnd.docker.reference.type") || d.platform.as_ref().is_some_and(|p| p.os == "unknown")
}

/// What the fuzz target `image_json` runs on arbitrary bytes: the
/// documents a source hands over (a manifest or index, announced with the
/// media type `selector` picks, then platform selection from an index),
/// an image config, an image reference and a platform, parsed as the
/// sources parse them. Panics only when a property breaks: a parsed
/// manifest has schema version 2.
#[doc(hidden)]
pub fn fuzz_documents(selector: u8, bytes: &[u8]) {
    const ANNOUNCED: [Option<&str>; 5] = [None, Some(OCI_MANIFEST), Some(OCI_INDEX), Some(DOCKER_LIST), Some("text/plain")];
    match parse("fuzz", ANNOUNCED[usize::from(selector) % ANNOUNCED.len()], bytes) {
        Ok(Parsed::Index(index)) => {
            for wanted in ["linux/amd64", "linux/arm64/v8", "windows/amd64"] {
                let _ = select("fuzz", &index, &Platform::parse(wanted).expect("a valid platform"));
            }
        }
        Ok(Parsed::Image(m)) => assert_eq!(m.schema_version, 2),
        Err(_) => {}
    }
    if let Ok(config) = super::config::ImageConfig::parse("fuzz", bytes) {
        let _ = config.platform();
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = text.parse::<super::ImageRef>().map(|r| r.to_string());
        let _ = Platform::parse(text).map(|p| p.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[
        {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:a","size":1,"platform":{"architecture":"amd64","os":"linux"}},
        {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:b","size":1,"platform":{"architecture":"arm64","os":"linux","variant":"v8"}},
        {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:c","size":1,"platform":{"architecture":"unknown","os":"unknown"},
         "annotations":{"vnd.docker.reference.type":"attestation-manifest"}}]}"#;

    fn index() -> Index {
        match parse("r", None, INDEX.as_bytes()) {
            Ok(Parsed::Index(i)) => i,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn selects_platforms_and_lists_the_present_ones() {
        let i = index();
        assert_eq!(select("r", &i, &Platform::default()).map(|d| d.digest.as_str()).ok(), Some("sha256:a"));
        for arm in ["linux/arm64", "linux/arm64/v8"] {
            assert_eq!(select("r", &i, &Platform::parse(arm).unwrap()).map(|d| d.digest.as_str()).ok(), Some("sha256:b"), "{arm}");
        }
        match select("r", &i, &Platform::parse("linux/s390x").unwrap()) {
            Err(ImageError::PlatformNotFound { present, .. }) => assert_eq!(present, ["linux/amd64", "linux/arm64/v8"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn docker_and_oci_manifests_parse_alike() {
        let docker = r#"{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
            "config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:c","size":5},
            "layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar.gzip","digest":"sha256:l","size":7}]}"#;
        match parse("r", None, docker.as_bytes()) {
            Ok(Parsed::Image(m)) => assert_eq!((m.config.size, m.layers[0].size), (5, 7)),
            other => panic!("{other:?}"),
        }
        let untyped = r#"{"schemaVersion":2,"config":{"digest":"sha256:c","size":5},"layers":[]}"#;
        assert!(matches!(parse("r", None, untyped.as_bytes()), Ok(Parsed::Image(_))));
    }

    #[test]
    fn rejects_schema1_unknown_types_and_garbage() {
        assert!(matches!(parse("r", None, br#"{"schemaVersion":1,"fsLayers":[]}"#), Err(ImageError::Unsupported { .. })));
        assert!(matches!(parse("r", None, br#"{"schemaVersion":2,"mediaType":"text/plain"}"#), Err(ImageError::Unsupported { .. })));
        assert!(matches!(parse("r", None, b"\xff{"), Err(ImageError::Malformed { .. })));
        assert!(matches!(parse("r", None, br#"{"schemaVersion":2,"config":{"digest":"x","size":-1},"layers":[]}"#), Err(ImageError::Malformed { .. })));
        assert!(Platform::parse("linux").is_err() && Platform::parse("/amd64").is_err() && Platform::parse("a/b/c/d").is_err());
    }
}
