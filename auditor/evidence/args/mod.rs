//! Engine argument vectors mapped onto the engine's own field names.

pub mod flags;
pub mod launch;
