//! Bash word splitting and unquoting on arbitrary text: never panics, spans
//! stay inside the input and on character boundaries.
#![no_main]

use auditor::evidence::shell::words::{self, Token};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(tokens) = words::tokenize(text) {
        for token in tokens {
            if let Token::Word(w) = token {
                assert!(w.span.0 <= w.span.1 && w.span.1 <= text.len());
                assert!(text.is_char_boundary(w.span.0) && text.is_char_boundary(w.span.1));
            }
        }
    }
});
