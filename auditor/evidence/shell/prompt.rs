//! Shell prompts at the start of pasted terminal sessions and console
//! captures: `$ `, `# `, `user@host:~/dir$ `, `(venv) user@host:~# `,
//! `root@abc123:/sgl-workspace# `, `[user@host dir]$ `. What follows a
//! prompt is a command someone ran, so a log reader reads it as a shell
//! statement. A prompt copied without its space (`$SGLANG_X=1 sglang serve`)
//! is still a prompt followed by an assignment: `$NAME=` can be nothing
//! else at the start of a line. Python's `>>> ` is not a shell prompt.

use crate::evidence::shell::words;
use regex::Regex;
use std::sync::LazyLock;

/// `user@host:dir$ `, optionally after a `(venv) ` or `(base) ` tag, or
/// the bracketed `[user@host dir]# ` form; the prompt character is in `c`.
static FULL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\([\w.-]+\) )?(?:[\w.-]+@[\w.-]+:[^\s$#]*|\[[\w.-]+@[\w.-]+(?: [^\]]*)?\])(?P<c>[$#])").expect("valid regex"));

/// A prompt found at the start of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prompt {
    /// Byte index where the command starts.
    pub at: usize,
    /// A bare `# `: the same text as a shell comment, so only a command that
    /// starts a server is read after it (a commented-out `export` is not).
    pub bare_hash: bool,
}

/// The shell prompt `text` starts with, if any.
pub fn strip(text: &str) -> Option<Prompt> {
    if let Some(caps) = FULL.captures(text) {
        let end = caps.get(0).map_or(0, |m| m.end());
        return command_after(text, end, false);
    }
    match text.as_bytes().first() {
        Some(b'$') => command_after(text, 1, false),
        Some(b'#') if text[1..].starts_with(' ') && !text[1..].trim_start().starts_with('#') => command_after(text, 1, true),
        _ => None,
    }
}

/// The command after the prompt character at `end`: one or more spaces,
/// or, glued to the prompt, an assignment (`$NAME=value ...`).
fn command_after(text: &str, end: usize, bare_hash: bool) -> Option<Prompt> {
    let rest = &text[end..];
    let spaces = rest.len() - rest.trim_start_matches(' ').len();
    let command = &rest[spaces..];
    if command.is_empty() {
        return None;
    }
    if spaces == 0 {
        let word = command.split_whitespace().next().unwrap_or("");
        return words::split_assignment(word).is_some().then_some(Prompt { at: end, bare_hash });
    }
    Some(Prompt { at: end + spaces, bare_hash })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(text: &str) -> Option<&str> {
        strip(text).map(|p| &text[p.at..])
    }

    #[test]
    fn prompts_of_every_shape() {
        let cases = [
            ("$ vllm serve /m", "vllm serve /m"),
            ("$   export A=1", "export A=1"),
            ("# python3 -m sglang.launch_server", "python3 -m sglang.launch_server"),
            ("user@host:~/dir$ A=1 vllm serve /m", "A=1 vllm serve /m"),
            ("(venv) user@host:~# trtllm-serve /m", "trtllm-serve /m"),
            ("root@abc123:/sgl-workspace# SGLANG_X=1 python3 -m sglang.launch_server", "SGLANG_X=1 python3 -m sglang.launch_server"),
            ("root@6aa49b1572ea:~/llm/c4ai# CUDA_VISIBLE_DEVICES=1,2  vllm serve /m", "CUDA_VISIBLE_DEVICES=1,2  vllm serve /m"),
            ("[ubuntu@gpu-node-01 ~]$ docker run -e A=1 img", "docker run -e A=1 img"),
            ("(base) [root@node sglang]# env", "env"),
        ];
        for (line, command) in cases {
            assert_eq!(after(line), Some(command), "{line}");
        }
        assert!(strip("# python3 -m x").unwrap().bare_hash);
        assert!(!strip("root@h:/# python3 -m x").unwrap().bare_hash);
    }

    #[test]
    fn a_prompt_glued_to_an_assignment_is_a_prompt() {
        assert_eq!(after("$SGLANG_X=1 sglang serve --model-path /m"), Some("SGLANG_X=1 sglang serve --model-path /m"));
        assert_eq!(after("user@host:~$SGLANG_X=1 vllm serve /m"), Some("SGLANG_X=1 vllm serve /m"));
        // A variable reference, not a prompt: nothing is assigned.
        assert_eq!(after("$SGLANG_X is set"), None);
        assert_eq!(after("$HOME/bin/run"), None);
    }

    #[test]
    fn what_is_not_a_prompt() {
        for line in [">>> import os", "#!/bin/bash", "## Launch", "#export A=1", "$", "# ", "cost: $ 5", "INFO root@host: ok", "email a@b.c: hi"] {
            assert_eq!(strip(line), None, "{line}");
        }
    }
}
