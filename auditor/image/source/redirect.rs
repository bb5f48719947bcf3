//! Where a registry may send us. The auditor talks only to the registries
//! named in the user's references (and the token service a registry's
//! challenge names); a redirect is followed only when it stays there:
//!
//! - to the same host and port: always (e.g. a registry's own `/v2/` paths);
//! - to the blob store of a well-known registry ([`BLOB_STORES`], e.g.
//!   Docker Hub's CDN): always, since pulling from that registry needs it;
//! - to any other host: only when the user allowed it with
//!   `--allow-redirect HOST` (`HOST`, `HOST:PORT`, or `.DOMAIN` for a
//!   domain and its subdomains); otherwise the request fails and says which
//!   flag would allow it.

use reqwest::Url;

/// The hosts well-known registries keep their blobs on.
const BLOB_STORES: &[(&[&str], &[&str])] = &[
    (&["docker.io", "index.docker.io", "registry-1.docker.io"], &["production.cloudflare.docker.com"]),
    (&["ghcr.io"], &["pkg-containers.githubusercontent.com"]),
    (&["quay.io"], &["cdn01.quay.io", "cdn02.quay.io", "cdn03.quay.io"]),
];

/// Why a redirect from the registry at `origin` to `to` is refused, or
/// `None` when it may be followed. `registry` is the registry as the
/// reference names it (`docker.io`), `allowed` the user's `--allow-redirect`s.
pub(super) fn refusal(origin: &Url, registry: &str, to: &Url, allowed: &[String]) -> Option<String> {
    let host = to.host_str().unwrap_or_default();
    let same = host == origin.host_str().unwrap_or_default() && to.port_or_known_default() == origin.port_or_known_default();
    let known = BLOB_STORES.iter().any(|(registries, stores)| registries.contains(&registry) && stores.contains(&host));
    let authority = match to.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let user = allowed.iter().any(|a| match a.strip_prefix('.') {
        Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
        None => a == host || *a == authority,
    });
    (!(same || known || user)).then(|| format!("the registry redirected to {authority}, another host; refused (allow it with --allow-redirect {authority})"))
}

#[cfg(test)]
mod tests {
    use super::refusal;
    use reqwest::Url;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn same_host_known_blob_stores_and_allowed_hosts_only() {
        let hub = url("https://registry-1.docker.io/v2/x/blobs/sha256:a");
        assert_eq!(refusal(&hub, "docker.io", &url("https://registry-1.docker.io/v2/y"), &[]), None);
        assert_eq!(refusal(&hub, "docker.io", &url("https://production.cloudflare.docker.com/b"), &[]), None);
        let why = refusal(&hub, "docker.io", &url("https://evil.example/b"), &[]).unwrap();
        assert!(why.contains("--allow-redirect evil.example"), "{why}");
        assert_eq!(refusal(&hub, "docker.io", &url("https://evil.example/b"), &["evil.example".into()]), None);
        assert_eq!(refusal(&hub, "docker.io", &url("https://cdn.evil.example/b"), &[".evil.example".into()]), None);
        assert!(refusal(&hub, "docker.io", &url("https://notevil.example/b"), &[".evil.example".into()]).is_some());
        // Another registry's blob store is another host.
        assert!(refusal(&url("https://ghcr.io/v2/x"), "ghcr.io", &url("https://production.cloudflare.docker.com/b"), &[]).is_some());
        // Same host, other port: another service.
        let local = url("http://127.0.0.1:5000/v2/x");
        assert!(refusal(&local, "127.0.0.1:5000", &url("http://127.0.0.1:5001/v2/x"), &[]).unwrap().contains("--allow-redirect 127.0.0.1:5001"));
        assert_eq!(refusal(&local, "127.0.0.1:5000", &url("http://127.0.0.1:5001/v2/x"), &["127.0.0.1:5001".into()]), None);
    }
}
