//! Suppressions: accepted findings, each with a reason, an owner and an
//! expiry date. A suppression matches by rule id (`check/rule`, or
//! `check/*`) and, when given, by fingerprint (stable across line churn).
//! Expired and never-matched suppressions are reported, so none outlives
//! its purpose silently.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Suppression {
    /// `forbidden-env/enabled`, or `golden-al/*` for every rule of a check.
    pub rule: String,
    /// Only the finding with this fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    pub reason: String,
    pub owner: String,
    /// Last day the suppression applies, `YYYY-MM-DD`.
    pub expires: String,
}

impl Suppression {
    pub fn matches(&self, rule: &str, fingerprint: &str) -> bool {
        let rule_ok = match self.rule.strip_suffix("/*") {
            Some(check) => rule.split('/').next() == Some(check),
            None => self.rule == rule,
        };
        rule_ok && self.fingerprint.as_deref().is_none_or(|f| f == fingerprint)
    }

    /// Whether `today` (`YYYY-MM-DD`) is after the expiry date.
    pub fn expired(&self, today: &str) -> bool {
        today > self.expires.as_str()
    }

    /// The expiry must be a real `YYYY-MM-DD` date.
    pub fn validate(&self) -> Result<(), BadExpiry> {
        let parts: Vec<&str> = self.expires.split('-').collect();
        let ok = parts.len() == 3
            && parts[0].len() == 4
            && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
            && parts[1].parse::<u32>().is_ok_and(|m| (1..=12).contains(&m))
            && parts[2].parse::<u32>().is_ok_and(|d| (1..=31).contains(&d));
        if ok { Ok(()) } else { Err(BadExpiry { rule: self.rule.clone(), expires: self.expires.clone() }) }
    }
}

/// A suppression whose expiry is not a date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("suppression of {rule}: expires {expires:?} is not a YYYY-MM-DD date")]
pub struct BadExpiry {
    pub rule: String,
    pub expires: String,
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

/// Days since 1970-01-01 to `YYYY-MM-DD` (Howard Hinnant's civil_from_days).
fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(rule: &str, fingerprint: Option<&str>, expires: &str) -> Suppression {
        Suppression { rule: rule.into(), fingerprint: fingerprint.map(Into::into), reason: "r".into(), owner: "o".into(), expires: expires.into() }
    }

    #[test]
    fn matching_and_expiry() {
        assert!(s("golden-al/*", None, "2026-12-31").matches("golden-al/mismatch", "f"));
        assert!(!s("golden-al/match", None, "2026-12-31").matches("golden-al/mismatch", "f"));
        assert!(!s("golden-al/mismatch", Some("x"), "2026-12-31").matches("golden-al/mismatch", "f"));
        assert!(s("a/b", None, "2026-11-29").expired("2026-11-30"));
        assert!(!s("a/b", None, "2026-11-30").expired("2026-11-30"));
        assert!(s("a/b", None, "2026-13-01").validate().is_err());
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(20_787), "2026-11-30");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }
}
