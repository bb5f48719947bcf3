//! Format noise: what differs between two builds of the same content and
//! must not read as a change. A `.pyc` starts with a 16-byte header (magic,
//! flags, and the source's mtime and size or its hash) that every rebuild
//! rewrites; its body is the compiled code, compared on its own so a
//! changed body under an unchanged `.py` (a bytecode patch) still shows.
//! Volatile files (linker caches, machine ids, package-manager logs) change
//! on every build: the policy lists them as path patterns
//! ([`crate::policy::pattern`]).

/// Bytes of a `.pyc` header (PEP 552, Python 3.7+).
pub(crate) const PYC_HEADER: u64 = 16;

/// Whether content normalisation applies: a compiled Python module.
pub(crate) fn is_pyc(path: &str) -> bool {
    path.ends_with(".pyc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_modules() {
        assert!(is_pyc("/a/__pycache__/m.cpython-312.pyc") && !is_pyc("/a/m.py"));
    }
}
