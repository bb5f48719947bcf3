//! Bash as bash reads it: words and statements, branches, launch commands
//! (in scripts, command files and logs), prompts, and what a script does to
//! files and packages.

pub mod actions;
pub mod branches;
pub mod command;
pub mod evaluated;
pub mod expand;
pub mod installer;
pub mod interp;
pub mod library;
pub mod log_commands;
pub mod prompt;
pub mod read_loop;
pub mod scan;
pub mod script;
pub mod syntax;
pub mod words;
