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

    /// Whether `today` is after the expiry date. An expiry that is not a date (which [`validate`]
    /// refuses when the policy is loaded) counts as expired: it accepts
    /// nothing.
    ///
    /// [`validate`]: Suppression::validate
    pub fn expired(&self, today: jiff::civil::Date) -> bool {
        !matches!(parse_date(&self.expires), Ok(expires) if today <= expires)
    }

    /// The expiry must be a calendar date written `YYYY-MM-DD`.
    pub fn validate(&self) -> Result<(), BadExpiry> {
        parse_date(&self.expires).map(drop).map_err(|e| BadExpiry { rule: self.rule.clone(), expires: self.expires.clone(), why: e.why })
    }
}

/// A suppression whose expiry is not a date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("suppression of {rule}: expires {expires:?} is not a YYYY-MM-DD date ({why})")]
pub struct BadExpiry {
    pub rule: String,
    pub expires: String,
    pub why: String,
}

/// Text that is not a `YYYY-MM-DD` calendar date, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a YYYY-MM-DD date ({why})")]
pub struct BadDate {
    pub text: String,
    pub why: String,
}

/// Parse a calendar date written `YYYY-MM-DD` (ISO 8601 extended, the only
/// form policies and `--today` take): `2026-02-30` and `01/01/2030` are
/// refused. The calendar is jiff's (leap years, month lengths).
pub fn parse_date(text: &str) -> Result<jiff::civil::Date, BadDate> {
    let bad = |why: String| BadDate { text: text.to_string(), why };
    let b = text.as_bytes();
    let shape = b.len() == 10 && b[4] == b'-' && b[7] == b'-' && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape {
        return Err(bad("write it as YYYY-MM-DD, e.g. 2026-12-31".to_string()));
    }
    let number = |range: std::ops::Range<usize>| text[range].parse::<i16>().unwrap_or(0);
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    let (Ok(month), Ok(day)) = (i8::try_from(month), i8::try_from(day)) else { return Err(bad("no such month or day".to_string())) };
    jiff::civil::Date::new(year, month, day).map_err(|_| match jiff::civil::Date::new(year, month, 1) {
        Ok(first) => bad(format!("{year:04}-{month:02} has {} days", first.days_in_month())),
        Err(_) => bad("no such month".to_string()),
    })
}

/// Today's date (UTC).
pub fn today() -> jiff::civil::Date {
    jiff::tz::Offset::UTC.to_datetime(jiff::Timestamp::now()).date()
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
        let day = |text: &str| parse_date(text).unwrap();
        assert!(s("a/b", None, "2026-11-29").expired(day("2026-11-30")));
        assert!(!s("a/b", None, "2026-11-30").expired(day("2026-11-30")));
        assert!(s("a/b", None, "2026-13-01").validate().is_err());
        // a day that does not exist is no expiry
        assert!(s("a/b", None, "2026-02-30").validate().is_err());
        assert!(s("a/b", None, "2026-02-30").expired(day("2026-01-01")), "an expiry that is no date accepts nothing");
        assert!(s("a/b", None, "2024-02-29").validate().is_ok());
        assert!(s("a/b", None, "2024-02-29").expired(day("2024-03-01")));
    }

    #[test]
    fn dates_are_calendar_dates_in_one_form() {
        assert_eq!(parse_date("2026-11-30").unwrap(), jiff::civil::date(2026, 11, 30));
        for bad in [
            "2026-02-30",
            "2025-02-29",
            "01/01/2030",
            "2026-1-01",
            "20260101",
            "2026-13-01",
            "2026-00-10",
            " 2026-01-01",
            "２０２６-01-01",
            "2026-01x01",
            "2026-0é-1",
            "2026-01-011",
            "2026-01-1",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_date(&today().to_string()), Ok(today()), "today() prints in the form it parses");
    }
}
