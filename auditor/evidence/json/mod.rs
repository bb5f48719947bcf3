//! JSON documents: harness metadata, eval results, environment arrays.

pub mod env;
pub mod eval_results;
pub mod metadata;

/// The 1-based line of the key at `path` in the JSON text `raw`: a small
/// scanner that follows objects, arrays and strings (escapes included)
/// and compares each key, unescaped, with the path; `None` when the text
/// does not hold it (or is not the JSON it was parsed from).
pub(crate) fn key_line(raw: &str, path: &[&str]) -> Option<u64> {
    /// An open object (with its current key, and whether a key comes next) or array.
    struct Frame {
        object: bool,
        key: Option<String>,
        expect_key: bool,
    }
    let bytes = raw.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut line = 1u64;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'{' => stack.push(Frame { object: true, key: None, expect_key: true }),
            b'[' => stack.push(Frame { object: false, key: None, expect_key: false }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(top) = stack.last_mut().filter(|f| f.object) {
                    top.expect_key = true;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let Some(top) = stack.last_mut().filter(|f| f.object && f.expect_key) else {
                    i += 1;
                    continue;
                };
                let key: String = serde_json::from_str(raw.get(start..=i.min(bytes.len() - 1))?).ok()?;
                top.expect_key = false;
                top.key = Some(key);
                let here = stack.iter().map(|f| f.key.as_deref());
                if stack.len() == path.len() && here.zip(path).all(|(k, p)| k == Some(*p)) {
                    return Some(line);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}
