//! Registry credentials where Docker, podman and skopeo keep them
//! (oci-client reads none of these): `REGISTRY_AUTH_FILE`, then
//! `$DOCKER_CONFIG/config.json` or `~/.docker/config.json`. In each file,
//! a `credHelpers` entry for the registry wins, then an `auths` entry
//! (`auth` as base64 `user:password`, or `username`/`password`), then the
//! `credsStore` helper. Helpers are run as `docker-credential-<name> get`
//! with the server URL on stdin, as Docker does. Nothing is cached or
//! written anywhere.

use base64::Engine as _;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A user name and password (or token) for one registry.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Credentials {
    pub username: String,
    pub password: String,
    /// Where they came from, for messages (never the secret itself).
    pub source: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({} from {})", self.username, self.source)
    }
}

/// The auth files to consult, in order, and where helpers are looked up.
#[derive(Debug, Clone, Default)]
pub(super) struct AuthFiles {
    pub files: Vec<PathBuf>,
}

impl AuthFiles {
    /// The files the environment names.
    pub(super) fn from_env() -> AuthFiles {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let mut files = Vec::new();
        files.extend(var("REGISTRY_AUTH_FILE"));
        match var("DOCKER_CONFIG") {
            Some(dir) => files.push(dir.join("config.json")),
            None => files.extend(var("HOME").map(|h| h.join(".docker/config.json"))),
        }
        AuthFiles { files }
    }

    /// Credentials for `registry` (`host[:port]`), or why there are none
    /// when a file promised some (a helper that failed, a bad entry).
    pub(super) fn lookup(&self, registry: &str) -> Result<Option<Credentials>, String> {
        for file in &self.files {
            let Ok(bytes) = std::fs::read(file) else { continue };
            let config: ConfigFile = serde_json::from_slice(&bytes).map_err(|e| format!("{}: not a valid auth file: {e}", file.display()))?;
            if let Some(found) = config.lookup(file, registry)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ConfigFile {
    auths: BTreeMap<String, AuthEntry>,
    cred_helpers: BTreeMap<String, String>,
    creds_store: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AuthEntry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

impl ConfigFile {
    fn lookup(&self, file: &Path, registry: &str) -> Result<Option<Credentials>, String> {
        let wanted = aliases(registry);
        if let Some(helper) = self.cred_helpers.iter().find(|(k, _)| wanted.contains(&normalise(k))).map(|(_, v)| v) {
            return run_helper(helper, registry).map(Some);
        }
        let entry = self.auths.iter().find(|(k, _)| wanted.contains(&normalise(k))).map(|(_, v)| v);
        if let Some(entry) = entry {
            let where_ = format!("{} (auths)", file.display());
            if let Some(auth) = entry.auth.as_deref().filter(|a| !a.is_empty()) {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(auth.trim())
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .ok_or_else(|| format!("{where_}: the auth entry for {registry} is not base64 of user:password"))?;
                let (username, password) = decoded.split_once(':').ok_or_else(|| format!("{where_}: the auth entry for {registry} has no ':'"))?;
                return Ok(Some(Credentials { username: username.into(), password: password.into(), source: where_ }));
            }
            if let (Some(u), Some(p)) = (&entry.username, &entry.password) {
                return Ok(Some(Credentials { username: u.clone(), password: p.clone(), source: where_ }));
            }
        }
        match &self.creds_store {
            Some(store) if !store.is_empty() => run_helper(store, registry).map(Some).or_else(|e| if entry.is_some() { Err(e) } else { Ok(None) }),
            _ => Ok(None),
        }
    }
}

/// The names a registry goes by in auth files (Docker Hub has several).
fn aliases(registry: &str) -> Vec<String> {
    let r = normalise(registry);
    if matches!(r.as_str(), "docker.io" | "index.docker.io" | "registry-1.docker.io") {
        return vec!["docker.io".into(), "index.docker.io".into(), "registry-1.docker.io".into()];
    }
    vec![r]
}

/// `https://host:port/v1/` -> `host:port`.
fn normalise(key: &str) -> String {
    let key = key.trim();
    let key = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    key.split('/').next().unwrap_or(key).to_ascii_lowercase()
}

/// The server URL helpers are asked about (Docker Hub's is historical).
fn server_url(registry: &str) -> String {
    if aliases(registry).len() > 1 { "https://index.docker.io/v1/".into() } else { registry.to_string() }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct HelperAnswer {
    username: String,
    secret: String,
}

fn run_helper(name: &str, registry: &str) -> Result<Credentials, String> {
    if name.is_empty() || name.contains(['/', '\\']) {
        return Err(format!("credential helper name {name:?} is not a plain name"));
    }
    let program = format!("docker-credential-{name}");
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run credential helper {program}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(server_url(registry).as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| format!("credential helper {program}: {e}"))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stdout).trim().to_string() + String::from_utf8_lossy(&out.stderr).trim();
        return Err(format!("credential helper {program} found no credentials for {registry}: {msg}"));
    }
    let answer: HelperAnswer = serde_json::from_slice(&out.stdout).map_err(|e| format!("credential helper {program}: unreadable answer: {e}"))?;
    Ok(Credentials { username: answer.username, password: answer.secret, source: format!("credential helper {program}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path, json: &str) -> AuthFiles {
        let path = dir.join("config.json");
        std::fs::write(&path, json).unwrap();
        AuthFiles { files: vec![dir.join("missing.json"), path] }
    }

    #[test]
    fn auths_in_every_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode("auditor:auditor-test");
        let f = files(
            dir.path(),
            &format!(
                r#"{{"auths":{{"http://127.0.0.1:5001/v2/":{{"auth":"{b64}"}},
            "https://index.docker.io/v1/":{{"username":"hub","password":"pw"}}}}}}"#
            ),
        );
        let c = f.lookup("127.0.0.1:5001").unwrap().unwrap();
        assert_eq!((c.username.as_str(), c.password.as_str()), ("auditor", "auditor-test"));
        assert!(c.source.ends_with("config.json (auths)"));
        assert_eq!(f.lookup("docker.io").unwrap().unwrap().username, "hub");
        assert_eq!(f.lookup("127.0.0.1:5000").unwrap(), None);
        assert!(!format!("{c:?}").contains("auditor-test"), "Debug never shows the secret");
    }

    #[test]
    fn bad_entries_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = files(dir.path(), r#"{"auths":{"r.io":{"auth":"!!!"}}}"#);
        assert!(f.lookup("r.io").unwrap_err().contains("not base64"));
        let f = files(dir.path(), "{not json");
        assert!(f.lookup("r.io").unwrap_err().contains("not a valid auth file"));
        let f = files(dir.path(), r#"{"credHelpers":{"r.io":"auditor-no-such-helper"}}"#);
        assert!(f.lookup("r.io").unwrap_err().contains("docker-credential-auditor-no-such-helper"));
        let f = files(dir.path(), r#"{"credHelpers":{"r.io":"../evil"}}"#);
        assert!(f.lookup("r.io").unwrap_err().contains("not a plain name"));
    }
}
