//! When and how long to wait before trying a registry request again:
//! 429 (waiting what `Retry-After` asks, in seconds or as an HTTP date),
//! 408 and 5xx (except 501 and 505, which no retry fixes), and transport
//! failures (timeouts, refused or reset connections), with exponential
//! backoff otherwise. A server that asks for a longer wait than
//! [`RetryPolicy::max_retry_after`] gets a clear error instead of a hang.

use std::time::{Duration, SystemTime};

/// How often and how patiently to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    pub max_attempts: u32,
    /// The first backoff; doubled after each failure.
    pub base_delay: Duration,
    /// The longest backoff between attempts.
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 5, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(30), max_retry_after: Duration::from_secs(120) }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Wait this long, then try again.
    Retry(Duration),
    /// Give up with this reason (appended to the error).
    GiveUp(String),
}

impl RetryPolicy {
    /// Whether an HTTP status is worth retrying.
    pub(crate) fn retryable_status(status: u16) -> bool {
        matches!(status, 408 | 429) || (500..=599).contains(&status) && !matches!(status, 501 | 505)
    }

    /// Decide after failed attempt number `attempt` (1-based), given the
    /// server's `Retry-After` if it sent one.
    pub(crate) fn decide(&self, attempt: u32, retry_after: Option<Duration>) -> Decision {
        if attempt >= self.max_attempts {
            return Decision::GiveUp(format!("gave up after {attempt} attempts"));
        }
        match retry_after {
            Some(wait) if wait > self.max_retry_after => {
                Decision::GiveUp(format!("the registry asks to retry after {} s, more than the {} s allowed", wait.as_secs(), self.max_retry_after.as_secs()))
            }
            Some(wait) => Decision::Retry(wait),
            None => {
                let factor = 1u32.checked_shl(attempt.saturating_sub(1)).unwrap_or(u32::MAX);
                Decision::Retry(self.base_delay.saturating_mul(factor).min(self.max_delay))
            }
        }
    }
}

/// Parse a `Retry-After` value: delay-seconds or an HTTP date.
pub(super) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(RetryPolicy::retryable_status(s), "{s}");
        }
        for s in [200, 400, 401, 403, 404, 501, 505] {
            assert!(!RetryPolicy::retryable_status(s), "{s}");
        }
    }

    #[test]
    fn backoff_doubles_caps_and_honours_retry_after() {
        let p = RetryPolicy { max_attempts: 40, ..RetryPolicy::default() };
        assert_eq!(p.decide(1, None), Decision::Retry(Duration::from_millis(500)));
        assert_eq!(p.decide(3, None), Decision::Retry(Duration::from_secs(2)));
        assert_eq!(p.decide(39, None), Decision::Retry(Duration::from_secs(30)));
        assert_eq!(p.decide(1, Some(Duration::from_secs(2))), Decision::Retry(Duration::from_secs(2)));
        assert!(matches!(p.decide(1, Some(Duration::from_secs(3600))), Decision::GiveUp(m) if m.contains("3600 s")));
        assert!(matches!(RetryPolicy::default().decide(5, None), Decision::GiveUp(_)));
    }

    #[test]
    fn retry_after_forms() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), Some(Duration::from_secs(10)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
