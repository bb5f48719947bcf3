//! OCI distribution registries (`docker://`). oci-client does the part of
//! the protocol that is easy to get wrong: the `WWW-Authenticate` challenge
//! on `/v2/` and the bearer-token exchange (anonymous, or with the user's
//! credentials from [`super::auth`]). The two GETs that move the bytes —
//! manifests and blobs — go through reqwest (the HTTP stack oci-client is
//! built on) with that token, because oci-client hides response headers
//! and this module needs them: `Retry-After` on 429/503 to wait as asked,
//! `Content-Length` to catch a size lie before reading, and
//! `Docker-Content-Digest` to check a manifest fetched by tag. Every
//! request is retried as [`RetryPolicy`] says; a blob stream that breaks
//! mid-way resumes with a `Range` request, so one reset does not cost a
//! multi-gigabyte layer. Plain HTTP is used only for loopback registries
//! and those named with `--insecure-registry`, and never reached through a
//! redirect from HTTPS; a redirect to another host is followed only as
//! [`super::redirect`] allows.

use super::auth::{AuthFiles, Credentials};
use super::bridge::{self, ChunkSender};
use super::digest::{Expected, sha256_digest, verify_bytes};
use super::manifest::ACCEPTED;
use super::redirect;
use super::resolve::{self, Fetch, Fetched};
use super::retry::{Decision, RetryPolicy, parse_retry_after};
use super::{Image, ImageError, ImageRef, LayerInfo, LayerSource, OpenOptions, RawManifest, RegistryRef, Tamper, TamperKind, Transport, progress};
use base64::Engine as _;
use oci_client::RegistryOperation;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue, RANGE};
use reqwest::{Response, StatusCode};
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{RwLock, Semaphore};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes of an error body kept for a message.
const ERROR_BODY: usize = 2048;

pub(super) fn open(reference: &ImageRef, r: &RegistryRef, options: &OpenOptions) -> Result<Image, ImageError> {
    let name = reference.to_string();
    let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: name.clone(), context: "starting".into(), source: e })?;
    let creds =
        AuthFiles::from_env().lookup(&r.registry).map_err(|detail| ImageError::Auth { reference: name.clone(), registry: r.registry.clone(), detail })?;
    let registry = Arc::new(Registry::new(&name, r, creds, options)?);
    rt.block_on(registry.authenticate())?;
    let wanted = r.digest.clone().or_else(|| r.tag.clone()).unwrap_or_else(|| "latest".into());
    let answer = rt.block_on(registry.manifest(&wanted))?;
    let tamper = |tamper| ImageError::Tamper { reference: name.clone(), tamper };
    // A pinned reference is checked against its digest; a tag against the
    // digest the registry announces for it.
    let top_digest = match (&r.digest, &answer.digest_header) {
        (Some(pinned), _) => {
            verify_bytes(&Expected { what: "manifest".into(), digest: pinned.clone(), size: None }, &answer.fetched.bytes).map_err(tamper)?;
            pinned.clone()
        }
        (None, Some(announced)) if announced.starts_with("sha256:") => {
            verify_bytes(&Expected { what: "manifest (Docker-Content-Digest)".into(), digest: announced.clone(), size: None }, &answer.fetched.bytes)
                .map_err(tamper)?;
            announced.clone()
        }
        (None, _) => sha256_digest(&answer.fetched.bytes),
    };
    let mut fetch = RegistryFetch { registry: &registry };
    let resolved = resolve::resolve(&name, answer.fetched, top_digest, options.platform.as_ref(), &mut fetch)?;
    Ok(Image {
        reference: name,
        transport: Transport::Registry,
        manifest_digest: Some(resolved.manifest_digest),
        index_digest: resolved.index_digest,
        index_platforms: resolved.index_platforms,
        platform: resolved.config.platform(),
        manifest: Some(RawManifest { media_type: resolved.media_type, bytes: resolved.manifest_bytes }),
        config_digest: resolved.config_digest,
        config: resolved.config,
        layers: resolved.layers,
        repo_digests: Vec::new(),
        source: Box::new(RegistryLayers { registry, fetches: Arc::new(Semaphore::new(options.max_concurrent_fetches.max(1))) }),
        progress: progress::Progress::new(options.progress),
    })
}

/// One repository on one registry, with the authorization to read it.
struct Registry {
    name: String,
    registry: String,
    /// `{scheme}://{host}/v2/{repository}`
    base: String,
    reference: oci_client::Reference,
    oci: oci_client::Client,
    http: reqwest::Client,
    creds: Option<Credentials>,
    authorization: RwLock<Option<HeaderValue>>,
    retry: RetryPolicy,
    /// Largest manifest or config accepted.
    max_document: u64,
    read_timeout: Duration,
}

/// A manifest as the registry answered it.
struct ManifestAnswer {
    fetched: Fetched,
    digest_header: Option<String>,
}

/// reqwest and oci-client use the process's default rustls crypto provider,
/// which must be installed before their first client: ring, the one this
/// build carries (Cargo.toml says why).
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when a provider is installed already, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Registry {
    fn new(name: &str, r: &RegistryRef, creds: Option<Credentials>, options: &OpenOptions) -> Result<Registry, ImageError> {
        install_tls_provider();
        let transport = |detail: String| ImageError::Transport { reference: name.to_string(), detail };
        let reference: oci_client::Reference = format!("{}/{}:{}", r.registry, r.repository, r.tag.as_deref().unwrap_or("latest"))
            .parse()
            .map_err(|e: oci_client::ParseError| ImageError::Reference { reference: name.to_string(), reason: e.to_string() })?;
        let host = reference.resolve_registry().to_string();
        let plain = r.is_loopback() || options.insecure_registries.iter().any(|h| h == &r.registry || h == r.host());
        let protocol = if plain { ClientProtocol::HttpsExcept(vec![host.clone()]) } else { ClientProtocol::Https };
        let oci = oci_client::Client::try_from(ClientConfig {
            protocol,
            connect_timeout: Some(CONNECT_TIMEOUT),
            read_timeout: Some(options.read_timeout),
            ..ClientConfig::default()
        })
        .map_err(|e| transport(format!("cannot set up the registry client: {e}")))?;
        let scheme = if plain { "http" } else { "https" };
        let origin = reqwest::Url::parse(&format!("{scheme}://{host}/")).map_err(|e| transport(format!("not a registry host: {host}: {e}")))?;
        let (registry, allowed) = (r.registry.clone(), options.allowed_redirects.clone());
        /// Redirects followed for one request (reqwest's own default).
        const MAX_REDIRECTS: usize = 10;
        let redirect = reqwest::redirect::Policy::custom(move |attempt| {
            // `previous` holds the first request and each redirect followed
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if attempt.url().scheme() != "https" && !plain {
                attempt.error("refusing a redirect from HTTPS to plain HTTP")
            } else if let Some(why) = redirect::refusal(&origin, &registry, attempt.url(), &allowed) {
                attempt.error(why)
            } else {
                attempt.follow()
            }
        });
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(options.read_timeout)
            .redirect(redirect)
            .user_agent(concat!("auditor/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| transport(format!("cannot set up HTTP: {e}")))?;
        Ok(Registry {
            name: name.to_string(),
            registry: r.registry.clone(),
            base: format!("{scheme}://{host}/v2/{}", r.repository),
            reference,
            oci,
            http,
            creds,
            authorization: RwLock::new(None),
            retry: options.retry.clone(),
            max_document: options.max_document,
            read_timeout: options.read_timeout,
        })
    }

    fn auth_error(&self, detail: &str) -> ImageError {
        let whose = match &self.creds {
            Some(c) => format!("with the credentials of {} from {}", c.username, c.source),
            None => "without credentials (none for this registry in REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json or ~/.docker/config.json)".into(),
        };
        ImageError::Auth { reference: self.name.clone(), registry: self.registry.clone(), detail: format!("{detail} {whose}") }
    }

    /// Follow the registry's challenge to an `Authorization` header.
    async fn authenticate(&self) -> Result<(), ImageError> {
        let auth = match &self.creds {
            Some(c) => RegistryAuth::Basic(c.username.clone(), c.password.clone()),
            None => RegistryAuth::Anonymous,
        };
        let mut attempt = 0;
        let token = loop {
            attempt += 1;
            match self.oci.auth(&self.reference, &auth, RegistryOperation::Pull).await {
                Ok(token) => break token,
                Err(OciDistributionError::AuthenticationFailure(body)) => return Err(self.auth_error(&format!("the token service refused: {}", clip(&body)))),
                Err(OciDistributionError::RequestError(e)) if is_transient(&e) => match self.retry.decide(attempt, None) {
                    Decision::Retry(wait) => tokio::time::sleep(wait).await,
                    Decision::GiveUp(why) => {
                        return Err(ImageError::Transport { reference: self.name.clone(), detail: format!("cannot reach {}: {e}; {why}", self.registry) });
                    }
                },
                Err(e) => return Err(ImageError::Transport { reference: self.name.clone(), detail: format!("authenticating to {}: {e}", self.registry) }),
            }
        };
        let header = match (token, &self.creds) {
            (Some(token), _) => Some(format!("Bearer {token}")),
            (None, Some(c)) => Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", c.username, c.password)))),
            (None, None) => None,
        };
        let header = header.map(|h| HeaderValue::from_str(&h).map_err(|_| self.auth_error("the credentials are not a valid HTTP header"))).transpose()?;
        *self.authorization.write().await = header.map(|mut h| {
            h.set_sensitive(true);
            h
        });
        Ok(())
    }

    /// GET `url`, retrying as the policy says; `from` asks for the bytes
    /// from that offset on.
    async fn get(&self, url: &str, accept: Option<&str>, from: Option<u64>) -> Result<Response, ImageError> {
        let mut attempt = 0;
        let mut reauthenticated = false;
        loop {
            attempt += 1;
            let mut request = self.http.get(url);
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some(h) = self.authorization.read().await.clone() {
                request = request.header(AUTHORIZATION, h);
            }
            if let Some(offset) = from {
                request = request.header(RANGE, format!("bytes={offset}-"));
            }
            let (retry_after, failure) = match request.send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) if response.status() == StatusCode::UNAUTHORIZED => {
                    // a bearer token may have expired during a long pull: one fresh one
                    let bearer = self.authorization.read().await.as_ref().is_some_and(|h| h.as_bytes().starts_with(b"Bearer "));
                    if bearer && !reauthenticated {
                        reauthenticated = true;
                        attempt -= 1;
                        self.authenticate().await?;
                        continue;
                    }
                    return Err(self.auth_error(&format!("{url} answered 401 Unauthorized")));
                }
                Ok(response) if response.status() == StatusCode::FORBIDDEN => return Err(self.auth_error(&format!("{url} answered 403 Forbidden"))),
                Ok(response) if response.status() == StatusCode::NOT_FOUND => {
                    let body = error_body(response).await;
                    return Err(ImageError::NotFound { reference: self.name.clone(), what: format!("{url}: {body}") });
                }
                Ok(response) if RetryPolicy::retryable_status(response.status().as_u16()) => {
                    let wait = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| parse_retry_after(v, SystemTime::now()));
                    let status = response.status();
                    (wait, format!("HTTP {status}: {}", error_body(response).await))
                }
                Ok(response) => {
                    let status = response.status();
                    return Err(ImageError::Transport {
                        reference: self.name.clone(),
                        detail: format!("{url}: HTTP {status}: {}", error_body(response).await),
                    });
                }
                Err(e) if is_transient(&e) => (None, with_causes(&e)),
                Err(e) => return Err(ImageError::Transport { reference: self.name.clone(), detail: format!("{url}: {}", with_causes(&e)) }),
            };
            match self.retry.decide(attempt, retry_after) {
                Decision::Retry(wait) => tokio::time::sleep(wait).await,
                Decision::GiveUp(why) => return Err(ImageError::Transport { reference: self.name.clone(), detail: format!("{url}: {failure}; {why}") }),
            }
        }
    }

    async fn manifest(&self, reference: &str) -> Result<ManifestAnswer, ImageError> {
        let url = format!("{}/manifests/{reference}", self.base);
        let response = self.get(&url, Some(&ACCEPTED.join(", ")), None).await?;
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
        let media_type = header(CONTENT_TYPE.as_str());
        let digest_header = header("docker-content-digest");
        let bytes = self.read_document(response, "manifest").await?;
        Ok(ManifestAnswer { fetched: Fetched { bytes, media_type }, digest_header })
    }

    fn blob_url(&self, digest: &str) -> String {
        format!("{}/blobs/{digest}", self.base)
    }

    /// A small body whole, refusing more than `max_document` bytes (before
    /// reading any when `Content-Length` says so).
    async fn read_document(&self, mut response: Response, what: &str) -> Result<Vec<u8>, ImageError> {
        let too_large = |size: Option<u64>| ImageError::Malformed {
            reference: self.name.clone(),
            what: what.into(),
            detail: format!(
                "{}over the limit of {} bytes (raise --max-manifest-size)",
                size.map_or(String::new(), |n| format!("{n} bytes, ")),
                self.max_document
            ),
        };
        if let Some(size) = response.content_length().filter(|&n| n > self.max_document) {
            return Err(too_large(Some(size)));
        }
        let mut out = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if (out.len() + chunk.len()) as u64 > self.max_document {
                        return Err(too_large(None));
                    }
                    out.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok(out),
                Err(e) => return Err(ImageError::Transport { reference: self.name.clone(), detail: format!("reading the {what}: {e}") }),
            }
        }
    }

    /// Send a blob's body into `tx`, resuming with `Range` after a break.
    async fn pump(&self, mut response: Response, digest: &str, tx: ChunkSender) {
        let mut offset = 0u64;
        let mut skip = 0u64;
        let mut attempt = 0;
        let mut window = Window::new();
        loop {
            let failure = match response.chunk().await {
                Ok(Some(mut chunk)) => {
                    if skip > 0 {
                        let n = skip.min(chunk.len() as u64);
                        skip -= n;
                        let _ = chunk.split_to(n as usize);
                    }
                    offset += chunk.len() as u64;
                    let stalled = window.stalled(chunk.len() as u64, self.read_timeout);
                    if !chunk.is_empty() && tx.send(Ok(chunk)).await.is_err() {
                        return; // the reader is gone
                    }
                    match stalled {
                        Some(why) => why,
                        None => continue,
                    }
                }
                Ok(None) => return,
                Err(e) => with_causes(&e),
            };
            attempt += 1;
            if let Decision::GiveUp(why) = self.retry.decide(attempt, None) {
                let err =
                    ImageError::Transport { reference: self.name.clone(), detail: format!("{digest}: the stream broke at byte {offset}: {failure}; {why}") };
                let _ = tx.send(Err(err.into_io())).await;
                return;
            }
            match self.get(&self.blob_url(digest), None, Some(offset)).await {
                Ok(next) => {
                    // a server that ignores Range starts over: skip what was sent
                    skip = if next.status() == StatusCode::PARTIAL_CONTENT { 0 } else { offset };
                    response = next;
                    window = Window::new();
                }
                Err(err) => {
                    let _ = tx.send(Err(err.into_io())).await;
                    return;
                }
            }
        }
    }
}

/// A stream that trickles (a byte now and then, never silent long enough
/// for the read timeout) is as stuck as a silent one: fewer than
/// [`Window::MIN_BYTES`] in a whole read-timeout window counts as a stall.
struct Window {
    start: tokio::time::Instant,
    bytes: u64,
}

impl Window {
    const MIN_BYTES: u64 = 1024;

    fn new() -> Window {
        Window { start: tokio::time::Instant::now(), bytes: 0 }
    }

    /// Count `n` more bytes; why the stream is stalled, if it is.
    fn stalled(&mut self, n: u64, timeout: Duration) -> Option<String> {
        self.bytes += n;
        if self.start.elapsed() < timeout {
            return None;
        }
        let slow = self.bytes < Window::MIN_BYTES;
        let why = format!("{} bytes in {:.1} s, a stalled stream", self.bytes, self.start.elapsed().as_secs_f64());
        *self = Window::new();
        slow.then_some(why)
    }
}

/// An error and its causes (reqwest keeps what a redirect policy said in one).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

fn is_transient(e: &reqwest::Error) -> bool {
    e.is_timeout() || e.is_connect() || e.is_request() || e.is_body()
}

/// At most [`ERROR_BODY`] bytes of an error response, for a message.
async fn error_body(mut response: Response) -> String {
    let mut out = Vec::new();
    while out.len() < ERROR_BODY {
        match response.chunk().await {
            Ok(Some(chunk)) => out.extend_from_slice(&chunk),
            _ => break,
        }
    }
    clip(&String::from_utf8_lossy(&out))
}

fn clip(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

struct RegistryFetch<'a> {
    registry: &'a Registry,
}

impl Fetch for RegistryFetch<'_> {
    fn manifest(&mut self, d: &super::manifest::Descriptor) -> Result<Fetched, ImageError> {
        let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: self.registry.name.clone(), context: "runtime".into(), source: e })?;
        rt.block_on(self.registry.manifest(&d.digest)).map(|a| a.fetched)
    }

    fn config(&mut self, d: &super::manifest::Descriptor) -> Result<Vec<u8>, ImageError> {
        let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: self.registry.name.clone(), context: "runtime".into(), source: e })?;
        rt.block_on(async {
            let response = self.registry.get(&self.registry.blob_url(&d.digest), None, None).await?;
            self.registry.read_document(response, "config").await
        })
    }
}

struct RegistryLayers {
    registry: Arc<Registry>,
    fetches: Arc<Semaphore>,
}

impl LayerSource for RegistryLayers {
    fn open_blob(&self, index: usize, layer: &LayerInfo) -> Result<Box<dyn Read + Send>, ImageError> {
        let name = &self.registry.name;
        let rt = bridge::runtime().map_err(|e| ImageError::Io { reference: name.clone(), context: "runtime".into(), source: e })?;
        let permit = rt
            .block_on(self.fetches.clone().acquire_owned())
            .map_err(|e| ImageError::Transport { reference: name.clone(), detail: format!("layer {index}: {e}") })?;
        let response = rt.block_on(self.registry.get(&self.registry.blob_url(&layer.digest), None, None))?;
        if let (Some(announced), Some(size)) = (response.content_length(), layer.size)
            && announced != size
        {
            let tamper = Tamper {
                kind: TamperKind::SizeMismatch,
                what: format!("layer {index}"),
                digest: layer.digest.clone(),
                expected_size: Some(size),
                actual_digest: None,
                actual_size: announced,
                note: Some("the registry's Content-Length".into()),
            };
            return Err(ImageError::Tamper { reference: name.clone(), tamper: Box::new(tamper) });
        }
        let (tx, reader) = bridge::channel();
        let registry = self.registry.clone();
        let digest = layer.digest.clone();
        rt.spawn(async move {
            let _permit = permit;
            registry.pump(response, &digest, tx).await;
        });
        Ok(Box::new(reader))
    }
}
