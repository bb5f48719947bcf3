//! Resource limits for reading untrusted bundles. Every archive member and
//! every line is bounded; whatever a limit stops is reported as not examined.

/// Limits applied while reading a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most members (files) read from one bundle, nested archives included.
    pub max_members: u64,
    /// Largest single member, in bytes (uncompressed).
    pub max_member_size: u64,
    /// Most bytes (uncompressed) read from one bundle in all.
    pub max_total_size: u64,
    /// Longest line kept, in bytes; the rest of a longer line is not examined.
    pub max_line_length: usize,
    /// Deepest directory or archive nesting followed.
    pub max_depth: u32,
    /// Most bytes one compressed stream (a `.tar.gz`, a `.gz` file, a zip
    /// member) may expand to per compressed byte; a stream may always
    /// expand to [`RATIO_ALLOWANCE`]. Stops decompression bombs that stay
    /// under the size limits' radar by taking their time.
    pub max_ratio: u64,
    /// Seconds an archive's remaining member names are still read, for
    /// names that point outside it, once the member limit stopped the walk.
    pub scan_seconds: u64,
}

/// What any compressed stream may expand to whatever its ratio: small
/// archives of repetitive logs compress far better than large ones.
pub const RATIO_ALLOWANCE: u64 = 1 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_members: 200_000,
            max_member_size: 4 << 30,
            max_total_size: 64 << 30,
            max_line_length: 4 << 20,
            max_depth: 32,
            max_ratio: 1000,
            scan_seconds: 60,
        }
    }
}

impl Limits {
    /// The most bytes a compressed stream of `compressed` bytes may expand to.
    pub fn expansion_cap(&self, compressed: u64) -> u64 {
        compressed.saturating_mul(self.max_ratio).max(RATIO_ALLOWANCE)
    }
}

/// A byte size that could not be read, with the text as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("not a size: {0:?} (use e.g. 512M or 4G)")]
    NotANumber(String),
    #[error("unknown size unit in {0:?} (use K, M, G or T)")]
    UnknownUnit(String),
    #[error("size too large: {0:?}")]
    TooLarge(String),
}

/// Parse a byte size such as `4096`, `64K`, `512M`, `4G` or `1T` (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number: u64 = digits.parse().map_err(|_| SizeError::NotANumber(text.to_string()))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(SizeError::UnknownUnit(text.to_string())),
    };
    number.checked_mul(1 << shift).ok_or_else(|| SizeError::TooLarge(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::{SizeError, parse_size};

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("4g"), Ok(4 << 30));
        assert_eq!(parse_size("4X"), Err(SizeError::UnknownUnit("4X".to_string())));
        assert_eq!(parse_size(""), Err(SizeError::NotANumber(String::new())));
        assert_eq!(parse_size("99999999999T"), Err(SizeError::TooLarge("99999999999T".to_string())));
    }
}
