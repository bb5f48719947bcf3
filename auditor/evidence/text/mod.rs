//! Text as it arrives: bounded numbered lines, the log-line cleaner, and
//! the prefilter that passes lines no parser can use unread.

pub mod lines;
pub mod logline;
pub mod prefilter;
