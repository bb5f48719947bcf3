//! Symbolic links inside an audited tree. Bash runs a linked recipe as the
//! file it leads to, so a link to a file of the same tree is that file at
//! the link's path: a recipe that is a link into a directory the policy
//! skips is still judged where a job runs it. A link out of the tree (or
//! one that climbs above its root) leads nowhere the input holds.

/// Where the audited tree sits in the run: launch scripts name the
/// repository's files from there (`/workspace/benchmarks/benchmark_lib.sh`),
/// and a link may too.
pub const MOUNT: &str = "/workspace";

/// Links followed one after another before a chain is given up.
pub const MAX_HOPS: usize = 8;

/// The tree path a link in directory `from` (a tree path, `""` at the
/// root) leads to when its target is `target`: relative to the link's
/// directory, or absolute under [`MOUNT`], where the run mounts the tree.
/// `None` when it leaves the tree.
pub fn resolve(from: &str, target: &str) -> Option<String> {
    let (start, rest) = match target.strip_prefix('/') {
        Some(_) => ("", target.strip_prefix(MOUNT)?.strip_prefix('/')?),
        None => (from, target),
    };
    let mut parts: Vec<&str> = start.split('/').filter(|p| !p.is_empty()).collect();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn links_resolve_inside_the_tree_only() {
        assert_eq!(resolve("benchmarks/single_node", "../../experimental/r/real.sh").as_deref(), Some("experimental/r/real.sh"));
        assert_eq!(resolve("a", "./b/../c.sh").as_deref(), Some("a/c.sh"));
        assert_eq!(resolve("a", "/workspace/experimental/x.sh").as_deref(), Some("experimental/x.sh"));
        assert_eq!(resolve("a", "/etc/shadow"), None);
        assert_eq!(resolve("a", "../../outside.sh"), None);
        assert_eq!(resolve("", "."), None);
    }
}
