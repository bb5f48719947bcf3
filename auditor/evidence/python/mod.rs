//! Python as engines and scripts write it: `repr()` text and `os.environ` writes.

pub mod environ;
pub mod eval;
pub mod repr;
