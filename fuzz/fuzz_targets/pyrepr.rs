//! The Python repr parser on arbitrary text: never panics, and a record's
//! fields are a prefix of what a longer input would give.
#![no_main]

use auditor::evidence::python::repr;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for lenient in [false, true] {
        let record = repr::parse_record(text, lenient);
        assert!(record.consumed <= text.len());
        for (_, value) in &record.fields {
            let _ = value.to_json();
        }
    }
    if let Ok((value, used)) = repr::parse_value(text) {
        assert!(used <= text.len());
        let _ = value.to_json();
        let _ = value.as_text();
    }
    // A record cut anywhere keeps only fields it had before the cut.
    let full = repr::parse_record(text, false);
    if let Some(cut) = (1..text.len()).rev().find(|&i| text.is_char_boundary(i)).filter(|_| full.complete()) {
        let part = repr::parse_record(&text[..cut], false);
        assert!(part.fields.len() <= full.fields.len());
    }
});
