//! What one layer may cost. A layer is untrusted input: a few megabytes
//! of gzip can expand to terabytes, a tar can hold millions of entries or
//! paths thousands of directories deep. The walk checks the size, ratio
//! and entry limits before it reads an entry's data (a tar header says
//! how far its data reaches), so a bomb is refused at its first oversized
//! entry instead of being decompressed, and memory stays bounded by the
//! entry count; the merge refuses paths deeper than the depth limit.
//!
//! Going over the size or entry limit leaves the layer not examined from
//! that entry on (the report says which limit and how to raise it); what
//! was found before it stays, and for up to `--max-scan-seconds` the walk
//! goes on reading headers only, listing hostile entries after the limit.
//! Going over the expansion ratio is also a hostile entry, since no image
//! builder writes a layer that expands that much.

use std::fmt;

/// Default `--max-layer-size`: most uncompressed bytes read from one layer.
const DEFAULT_MAX_SIZE: u64 = 64 << 30;
/// Default `--max-layer-ratio`: most uncompressed bytes per compressed
/// byte (gzip of real files stays under 20).
pub const DEFAULT_MAX_RATIO: u64 = 100;
/// Every compressed layer may expand to this much, whatever its ratio: a
/// small layer of empty files and directories is mostly zero-filled tar
/// headers and compresses more than a hundredfold.
const RATIO_FLOOR: u64 = 256 << 20;
/// Default `--max-layer-entries`: most tar entries in one layer, and most
/// paths in one image's merged index (a serving image has a few hundred
/// thousand in all; a merged index costs 200 to 270 bytes a path, so two
/// images at the limit stay far under the 512 MiB memory ceiling).
pub const DEFAULT_MAX_ENTRIES: u64 = 500_000;
/// Default `--max-path-depth`: most directory levels of a path.
pub const DEFAULT_MAX_DEPTH: usize = 256;
/// Default `--max-scan-seconds`: how long the headers of a layer are
/// still read, for hostile entries, after a limit stopped its walk.
pub const DEFAULT_SCAN_SECONDS: u64 = 60;
/// Longest path applied, in bytes (Linux's `PATH_MAX`; no file at a
/// longer path can be opened by its name).
pub(crate) const MAX_PATH: usize = 4096;

/// The limits of a layer walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerLimits {
    pub max_size: u64,
    /// 0: no ratio limit.
    pub max_ratio: u64,
    pub max_entries: u64,
    pub max_depth: usize,
    /// Seconds the walk goes on reading headers only once a limit tripped.
    pub scan_seconds: u64,
}

impl Default for LayerLimits {
    fn default() -> Self {
        LayerLimits {
            max_size: DEFAULT_MAX_SIZE,
            max_ratio: DEFAULT_MAX_RATIO,
            max_entries: DEFAULT_MAX_ENTRIES,
            max_depth: DEFAULT_MAX_DEPTH,
            scan_seconds: DEFAULT_SCAN_SECONDS,
        }
    }
}

impl LayerLimits {
    /// The limits a layer's walk depends on (the path depth is the
    /// merge's): a cached index of a walk they stopped is reused only
    /// under the same ones.
    pub(crate) fn walk_key(&self) -> [u64; 4] {
        [self.max_size, self.max_ratio, self.max_entries, self.scan_seconds]
    }

    /// How far the uncompressed stream of a layer may reach; `compressed`
    /// is the blob size of a compressed blob (`None` for a plain tar or
    /// an unknown size: only the size limit applies).
    pub(crate) fn budget(&self, compressed: Option<u64>) -> Budget {
        let by_ratio = compressed
            .filter(|_| self.max_ratio > 0)
            .map(|c| (c, c.saturating_mul(self.max_ratio).max(RATIO_FLOOR)))
            .filter(|&(_, bytes)| bytes < self.max_size);
        match by_ratio {
            Some((compressed, bytes)) => Budget { bytes, ratio: Some((compressed, self.max_ratio)) },
            None => Budget { bytes: self.max_size, ratio: None },
        }
    }
}

/// The most uncompressed bytes one layer may have, and which limit says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub bytes: u64,
    /// (compressed size, ratio) when the ratio is the tighter limit.
    ratio: Option<(u64, u64)>,
}

impl Budget {
    /// Whether the stream may reach `end` bytes; `path` names the entry
    /// that would take it there (asked for only when it may not).
    pub(crate) fn check(&self, end: u64, path: impl FnOnce() -> String) -> Result<(), Overrun> {
        if end <= self.bytes {
            return Ok(());
        }
        let path = path();
        Err(match self.ratio {
            Some((compressed, ratio)) => Overrun::Ratio { path, end, compressed, ratio },
            None => Overrun::Size { path, end, max: self.bytes },
        })
    }
}

/// Why a layer was not read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overrun {
    /// The uncompressed layer would pass `--max-layer-size`.
    Size { path: String, end: u64, max: u64 },
    /// A compressed layer would expand more than `--max-layer-ratio`: a
    /// decompression bomb.
    Ratio { path: String, end: u64, compressed: u64, ratio: u64 },
    /// More entries than `--max-layer-entries`.
    Entries { max: u64 },
}

impl Overrun {
    /// The entry a decompression bomb was found at, for its hostile-entry finding.
    pub(crate) fn bomb(&self) -> Option<&str> {
        match self {
            Overrun::Ratio { path, .. } => Some(path),
            _ => None,
        }
    }
}

impl fmt::Display for Overrun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Overrun::Size { path, end, max } => {
                write!(f, "entry {path} takes the uncompressed layer to {end} bytes, over --max-layer-size ({max}): not read further")
            }
            Overrun::Ratio { path, end, compressed, ratio } => write!(
                f,
                "decompression bomb: entry {path} takes the layer to {end} bytes uncompressed from a {compressed}-byte blob, over --max-layer-ratio ({ratio}x, at least {RATIO_FLOOR} bytes): not read further"
            ),
            Overrun::Entries { max } => write!(f, "more than {max} entries, over --max-layer-entries: not read further"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tighter_limit_binds() {
        let limits = LayerLimits::default();
        // a 10 MB gzip blob: the floor (256 MiB) is more than 100x; at most that
        let small = limits.budget(Some(1 << 20));
        assert_eq!(small.bytes, RATIO_FLOOR);
        assert!(small.check(RATIO_FLOOR, || "/a".into()).is_ok());
        let bomb = small.check(RATIO_FLOOR + 1, || "/a".into()).unwrap_err();
        assert_eq!(bomb.bomb(), Some("/a"));
        assert!(
            bomb.to_string().starts_with("decompression bomb: entry /a takes the layer to 268435457 bytes uncompressed from a 1048576-byte blob"),
            "{bomb}"
        );
        // a 1 GiB blob: 100 GiB by ratio, so the size limit binds
        let big = limits.budget(Some(1 << 30));
        assert_eq!(big.bytes, DEFAULT_MAX_SIZE);
        let over = big.check(DEFAULT_MAX_SIZE + 1, || "/w".into()).unwrap_err();
        assert_eq!((over.bomb(), matches!(over, Overrun::Size { .. })), (None, true));
        // a plain tar, or no ratio limit: the size limit
        assert_eq!(limits.budget(None).bytes, DEFAULT_MAX_SIZE);
        assert_eq!(LayerLimits { max_ratio: 0, ..limits }.budget(Some(1)).bytes, DEFAULT_MAX_SIZE);
        // a huge compressed size does not overflow
        assert_eq!(limits.budget(Some(u64::MAX)).bytes, DEFAULT_MAX_SIZE);
    }
}
