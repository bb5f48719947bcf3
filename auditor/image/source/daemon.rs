//! Images and containers in a Docker Engine, or anything that speaks its
//! API (podman's service), through bollard (`docker-daemon:NAME:TAG`;
//! `DOCKER_HOST` is honoured). The engine keeps no registry manifest, so
//! the image is described by its ID (the config digest), `inspect`,
//! `history` and `rootfs` diff-ids, and matched to other transports by
//! those. Layers come from the engine's export (`docker save` as a
//! stream): each read walks the export to that layer's tar and verifies
//! it against its diff-id. A container's filesystem changes come from the
//! `changes` endpoint.

use super::bridge::{self, ChunkSender};
use super::config::History;
use super::manifest::DOCKER_LAYER_TAR;
use super::{Image, ImageConfig, ImageError, ImageRef, LayerInfo, LayerSource, OpenOptions, Platform, Transport, progress};
use crate::tarstream::{EntryType, TarReader};
use bollard::Docker;
use futures_util::StreamExt;
use serde::Serialize;
use std::io::{self, Read};

/// Bytes copied per chunk from a layer in the export.
const CHUNK: usize = 256 << 10;

fn connect(reference: &str) -> Result<Docker, ImageError> {
    let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: reference.to_string(), context: "starting".into(), source: e })?;
    let unreachable = |e: bollard::errors::Error| {
        let host = std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into());
        ImageError::Transport { reference: reference.to_string(), detail: format!("cannot reach the Docker engine at {host}: {e}") }
    };
    let docker = Docker::connect_with_defaults().map_err(unreachable)?;
    rt.block_on(docker.negotiate_version()).map_err(unreachable)
}

fn engine_error(reference: &str, what: &str, e: bollard::errors::Error) -> ImageError {
    match e {
        bollard::errors::Error::DockerResponseServerError { status_code: 404, message } => {
            ImageError::NotFound { reference: reference.to_string(), what: format!("{what}: {message}") }
        }
        other => ImageError::Transport { reference: reference.to_string(), detail: format!("{what}: {other}") },
    }
}

pub(super) fn open(reference: &ImageRef, name: &str, options: &OpenOptions) -> Result<Image, ImageError> {
    let r = reference.to_string();
    let docker = connect(&r)?;
    let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: r.clone(), context: "starting".into(), source: e })?;
    let inspect = rt.block_on(docker.inspect_image(name)).map_err(|e| engine_error(&r, "image inspect", e))?;
    let history = rt.block_on(docker.image_history(name)).map_err(|e| engine_error(&r, "image history", e))?;
    let run = inspect.config.unwrap_or_default();
    let diff_ids = inspect.root_fs.and_then(|fs| fs.layers).unwrap_or_default();
    let config = ImageConfig {
        os: inspect.os.unwrap_or_default(),
        architecture: inspect.architecture.unwrap_or_default(),
        variant: inspect.variant.filter(|v| !v.is_empty()),
        env: run.env.unwrap_or_default(),
        entrypoint: run.entrypoint.unwrap_or_default(),
        cmd: run.cmd.unwrap_or_default(),
        working_dir: run.working_dir.unwrap_or_default(),
        user: run.user.unwrap_or_default(),
        labels: run.labels.unwrap_or_default().into_iter().collect(),
        // the engine lists history newest first
        history: history
            .into_iter()
            .rev()
            .map(|h| History { created: None, created_by: h.created_by, comment: Some(h.comment).filter(|c| !c.is_empty()), empty_layer: h.size == 0 })
            .collect(),
        diff_ids: diff_ids.clone(),
    };
    if let Some(wanted) = &options.platform {
        let have = Platform { os: config.os.clone(), architecture: config.architecture.clone(), variant: config.variant.clone() };
        if !wanted.matches(&have) {
            return Err(ImageError::PlatformNotFound { reference: r, wanted: wanted.to_string(), present: vec![have.to_string()] });
        }
    }
    let id = inspect.id.ok_or_else(|| ImageError::Malformed { reference: r.clone(), what: "image inspect".into(), detail: "no Id".into() })?;
    let layers = diff_ids.iter().map(|d| LayerInfo { digest: d.clone(), size: None, media_type: DOCKER_LAYER_TAR.into(), diff_id: Some(d.clone()) }).collect();
    Ok(Image {
        reference: r.clone(),
        transport: Transport::DockerDaemon,
        manifest_digest: None,
        index_digest: None,
        index_platforms: Vec::new(),
        platform: config.platform(),
        manifest: None,
        config_digest: id,
        config,
        layers,
        repo_digests: inspect.repo_digests.unwrap_or_default(),
        source: Box::new(ExportLayers { docker, name: name.to_string(), reference: r }),
        progress: progress::Progress::new(options.progress),
    })
}

struct ExportLayers {
    docker: Docker,
    name: String,
    reference: String,
}

impl LayerSource for ExportLayers {
    fn open_blob(&self, index: usize, layer: &LayerInfo) -> Result<Box<dyn Read + Send>, ImageError> {
        let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: self.reference.clone(), context: "runtime".into(), source: e })?;
        // the export, as a stream of bytes
        let (export_tx, export) = bridge::channel();
        let mut stream = self.docker.export_image(&self.name);
        let reference = self.reference.clone();
        rt.spawn(async move {
            while let Some(item) = stream.next().await {
                let item = item.map_err(|e| engine_error(&reference, "image export", e).into_io());
                let failed = item.is_err();
                if export_tx.send(item).await.is_err() || failed {
                    return;
                }
            }
        });
        // a thread walks its tar and sends on the one layer's bytes
        let (tx, reader) = bridge::channel();
        let hex = layer.digest.split_once(':').map_or(layer.digest.as_str(), |(_, h)| h).to_string();
        std::thread::Builder::new()
            .name(format!("auditor-export-layer-{index}"))
            .spawn(move || {
                if let Err(e) = send_layer(export, &hex, index, &tx) {
                    let _ = tx.blocking_send(Err(e));
                }
            })
            .map_err(|e| ImageError::Io { reference: self.reference.clone(), context: "starting the export walker".into(), source: e })?;
        Ok(Box::new(reader))
    }
}

/// Find layer `index` (whose diff-id hex is `hex`) in an export and send
/// its bytes. Engines name layer tars by diff-id (`<hex>.tar`, podman;
/// `blobs/sha256/<hex>`, Docker 25+); older Docker names them by a legacy
/// ID (`<id>/layer.tar`, in layer order), so the `index`-th of those is
/// taken then. The verifying reader upstream catches a wrong pick.
fn send_layer(export: impl Read, hex: &str, index: usize, tx: &ChunkSender) -> io::Result<()> {
    let by_name = [format!("{hex}.tar"), format!("blobs/sha256/{hex}"), format!("{hex}/layer.tar")];
    let mut legacy = 0usize;
    let mut archive = TarReader::new(export);
    while let Some(header) = archive.next_header()? {
        if header.kind != EntryType::File {
            continue;
        }
        let path = String::from_utf8_lossy(&header.path).trim_start_matches("./").to_string();
        let named = by_name.contains(&path);
        let positional = path.ends_with("/layer.tar") && {
            legacy += 1;
            legacy == index + 1
        };
        if named || positional {
            let mut buf = vec![0u8; CHUNK];
            loop {
                let n = archive.read_data(&mut buf)?;
                if n == 0 {
                    return Ok(());
                }
                if tx.blocking_send(Ok(bytes::Bytes::copy_from_slice(&buf[..n]))).is_err() {
                    return Ok(()); // the reader is gone
                }
            }
        }
    }
    Err(io::Error::new(io::ErrorKind::NotFound, format!("layer {index} (sha256:{hex}) is not in the engine's export")))
}

/// What happened to a path in a container, relative to its image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Modified,
    Added,
    Deleted,
}

impl ChangeKind {
    /// The letter `docker diff` prints for it (C changed, A added, D deleted).
    pub fn letter(self) -> char {
        match self {
            ChangeKind::Added => 'A',
            ChangeKind::Modified => 'C',
            ChangeKind::Deleted => 'D',
        }
    }
}

/// A container's changes as `docker diff` lists them: one `C|A|D path` line each.
pub fn changes_text(changes: &[Change]) -> String {
    changes.iter().map(|c| format!("{} {}\n", c.kind.letter(), c.path)).collect()
}

/// One filesystem change of a container.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
}

/// The filesystem changes of a container (running or stopped), sorted by
/// path, as the engine's `changes` endpoint reports them.
pub fn container_changes(container: &str) -> Result<Vec<Change>, ImageError> {
    let reference = format!("container {container}");
    let docker = connect(&reference)?;
    let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: reference.clone(), context: "starting".into(), source: e })?;
    let changes = rt.block_on(docker.container_changes(container)).map_err(|e| engine_error(&reference, "container changes", e))?;
    let mut out: Vec<Change> = changes
        .unwrap_or_default()
        .into_iter()
        .map(|c| Change {
            path: c.path,
            kind: match c.kind {
                bollard::models::ChangeType::_0 => ChangeKind::Modified,
                bollard::models::ChangeType::_1 => ChangeKind::Added,
                bollard::models::ChangeType::_2 => ChangeKind::Deleted,
            },
        })
        .collect();
    out.sort();
    Ok(out)
}
