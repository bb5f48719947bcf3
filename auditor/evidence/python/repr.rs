//! A parser for Python `repr()` text as engines log it: dataclass reprs
//! (`ServerArgs(a=1, ...)`), dicts, lists, tuples, sets, strings in either
//! quote with escapes, numbers (with `inf`/`nan`), `None`/`True`/`False`,
//! enum reprs (`<Kind.X: 'x'>`) and, leniently, bare words such as
//! `torch.bfloat16` or `/data/models/x` (vLLM's engine-config line prints
//! some values unquoted). Truncated input is normal: the fields parsed before
//! the cut are kept and the cut is reported — nothing after it is guessed.

use serde_json::{Map, Number, Value};

/// Deepest nesting accepted; deeper input is reported as an error, not a crash.
const MAX_DEPTH: usize = 64;

/// A parsed Python value.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    None,
    Bool(bool),
    Int(i64),
    /// An integer too large for i64, kept as its digits.
    BigInt(String),
    Float(f64),
    Str(String),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    Set(Vec<Py>),
    Dict(Vec<(Py, Py)>),
    /// `Name(arg, key=value, ...)`: a dataclass, namedtuple or `Namespace` repr.
    Call {
        name: String,
        args: Vec<Py>,
        kwargs: Vec<(String, Py)>,
    },
    /// `<Kind.X: 'x'>`: an enum member with its value.
    Enum {
        name: String,
        value: Box<Py>,
    },
    /// Anything else printed without quotes (`torch.bfloat16`, `<function f>`, `auto`).
    Bare(String),
}

/// Why parsing stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The input ended inside a value: it was cut.
    Truncated,
    /// Not a repr at byte `at`.
    Syntax {
        at: usize,
        expected: &'static str,
    },
    TooDeep {
        at: usize,
    },
}

/// The fields of a top-level record (`Name(k=v, ...)` or `{'k': v, ...}`),
/// possibly cut short.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `ServerArgs`, `Namespace`, ... for a call repr; `None` for a dict.
    pub name: Option<String>,
    pub fields: Vec<(String, Py)>,
    /// Positional arguments of a call repr.
    pub args: Vec<Py>,
    /// How parsing ended, when the record did not close.
    pub stop: Option<Stop>,
    /// Bytes of input consumed (up to and including the closing bracket).
    pub consumed: usize,
}

impl Record {
    pub fn complete(&self) -> bool {
        self.stop.is_none()
    }
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    lenient: bool,
}

type R<T> = Result<T, Stop>;

/// Parse one value at the start of `text` (leading spaces skipped); bare
/// words may contain spaces and slashes.
pub fn parse_value(text: &str) -> R<(Py, usize)> {
    let mut p = Parser { s: text, b: text.as_bytes(), i: 0, lenient: true };
    let v = p.value(0)?;
    Ok((v, p.i))
}

/// Parse a record at the start of `text`: a call repr `Name(...)` or a dict
/// `{...}`, keeping every complete field before a cut or a syntax error.
/// `lenient` admits bare words with spaces and slashes (`auto`, `/data/m`);
/// otherwise a bare value must be a (dotted) identifier such as
/// `torch.bfloat16`, which lets a caller tell a wrapped continuation from
/// an unrelated line.
pub fn parse_record(text: &str, lenient: bool) -> Record {
    let mut p = Parser { s: text, b: text.as_bytes(), i: 0, lenient };
    p.ws();
    let name = if p.peek() == Some(b'{') {
        None
    } else {
        match p.identifier() {
            Some(name) => Some(name),
            None => return Record { name: None, fields: vec![], args: vec![], stop: Some(p.stop("a record")), consumed: 0 },
        }
    };
    let open = p.peek();
    let close = match (name.is_some(), open) {
        (true, Some(b'(')) => b')',
        (false, Some(b'{')) => b'}',
        _ => return Record { name, fields: vec![], args: vec![], stop: Some(p.stop("'(' or '{'")), consumed: 0 },
    };
    p.i += 1;
    let mut record = Record { name, fields: Vec::new(), args: Vec::new(), stop: None, consumed: 0 };
    let result = p.items(close, |p, _| {
        if close == b'}' {
            let key = p.value(1)?;
            p.expect(b':', "':'")?;
            let value = p.value(1)?;
            record.fields.push((key_text(&key), value));
        } else if let Some((key, value)) = p.keyword(1)? {
            record.fields.push((key, value));
        } else if record.fields.is_empty() {
            let value = p.value(1)?;
            record.args.push(value);
        } else {
            return Err(p.stop("key=value (no positional argument follows a keyword one)"));
        }
        Ok(())
    });
    record.stop = result.err();
    record.consumed = p.i;
    record
}

/// A dict key as text (`'a'` -> `a`, `1` -> `1`).
fn key_text(key: &Py) -> String {
    match key {
        Py::Str(s) | Py::Bare(s) => s.clone(),
        other => match other.to_json() {
            Value::String(s) => s,
            v => v.to_string(),
        },
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn stop(&self, expected: &'static str) -> Stop {
        if self.i >= self.b.len() { Stop::Truncated } else { Stop::Syntax { at: self.i, expected } }
    }

    fn expect(&mut self, c: u8, what: &'static str) -> R<()> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.stop(what))
        }
    }

    fn identifier(&mut self) -> Option<String> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || (c >= 0x80) {
                self.i += 1;
            } else {
                break;
            }
        }
        (self.i > start && !self.b[start].is_ascii_digit()).then(|| self.s[start..self.i].to_string())
    }

    /// Comma-separated items up to `close`; `item` parses one.
    fn items<F: FnMut(&mut Self, usize) -> R<()>>(&mut self, close: u8, mut item: F) -> R<()> {
        let mut n = 0;
        loop {
            self.ws();
            match self.peek() {
                None => return Err(Stop::Truncated),
                Some(c) if c == close => {
                    self.i += 1;
                    return Ok(());
                }
                _ => {}
            }
            item(self, n)?;
            n += 1;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => return Err(self.stop("',' or a closing bracket")),
            }
        }
    }

    /// `key=value` inside a call repr, or `None` (position restored) if the
    /// next item is positional.
    fn keyword(&mut self, depth: usize) -> R<Option<(String, Py)>> {
        let start = self.i;
        if let Some(key) = self.identifier() {
            self.ws();
            if self.peek() == Some(b'=') && self.b.get(self.i + 1) != Some(&b'=') {
                self.i += 1;
                let value = self.value(depth)?;
                return Ok(Some((key, value)));
            }
            if self.peek().is_none() {
                return Err(Stop::Truncated);
            }
        }
        self.i = start;
        Ok(None)
    }

    fn value(&mut self, depth: usize) -> R<Py> {
        if depth > MAX_DEPTH {
            return Err(Stop::TooDeep { at: self.i });
        }
        self.ws();
        let Some(c) = self.peek() else { return Err(Stop::Truncated) };
        match c {
            b'\'' | b'"' => self.string().map(Py::Str),
            b'b' if matches!(self.b.get(self.i + 1), Some(b'\'' | b'"')) => {
                self.i += 1;
                self.string().map(Py::Str)
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.items(b']', |p, _| p.value(depth + 1).map(|v| items.push(v)))?;
                Ok(Py::List(items))
            }
            b'(' => {
                self.i += 1;
                let mut items = Vec::new();
                self.items(b')', |p, _| p.value(depth + 1).map(|v| items.push(v)))?;
                Ok(Py::Tuple(items))
            }
            b'{' => self.dict_or_set(depth),
            b'<' => self.angle(depth),
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number(),
            _ => self.word(depth),
        }
    }

    fn dict_or_set(&mut self, depth: usize) -> R<Py> {
        self.i += 1;
        let mut pairs = Vec::new();
        let mut set = Vec::new();
        self.items(b'}', |p, n| {
            let key = p.value(depth + 1)?;
            p.ws();
            if p.peek() == Some(b':') && (n == 0 || !pairs.is_empty()) {
                p.i += 1;
                let value = p.value(depth + 1)?;
                pairs.push((key, value));
            } else if pairs.is_empty() {
                set.push(key);
            } else {
                return Err(p.stop("':'"));
            }
            Ok(())
        })?;
        Ok(if set.is_empty() { Py::Dict(pairs) } else { Py::Set(set) })
    }

    /// `<Kind.X: 'x'>` or another `<...>` repr kept as text.
    fn angle(&mut self, depth: usize) -> R<Py> {
        let start = self.i;
        self.i += 1;
        if let Some(name) = self.identifier()
            && self.peek() == Some(b':')
        {
            self.i += 1;
            let value = self.value(depth + 1)?;
            self.expect(b'>', "'>'")?;
            return Ok(Py::Enum { name, value: Box::new(value) });
        }
        let mut level = 1;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'<' => level += 1,
                b'>' => {
                    level -= 1;
                    if level == 0 {
                        return Ok(Py::Bare(self.s[start..self.i].to_string()));
                    }
                }
                b'\'' | b'"' => {
                    self.i -= 1;
                    self.string()?;
                }
                _ => {}
            }
        }
        Err(Stop::Truncated)
    }

    fn number(&mut self) -> R<Py> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_') {
                // A sign only starts the number or follows an exponent.
                if matches!(c, b'-' | b'+') && self.i > start && !matches!(self.b[self.i - 1], b'e' | b'E') {
                    break;
                }
                self.i += 1;
            } else {
                break;
            }
        }
        let text = &self.s[start..self.i];
        if self.i >= self.b.len() {
            // A number at the very end may have been cut mid-digits.
            return Err(Stop::Truncated);
        }
        let lower = text.to_ascii_lowercase();
        if let Ok(n) = text.parse::<i64>() {
            return Ok(Py::Int(n));
        }
        if !lower.contains(['.', 'e']) && lower.trim_start_matches(['-', '+']).chars().all(|c| c.is_ascii_digit()) && !lower.is_empty() {
            return Ok(Py::BigInt(text.to_string()));
        }
        match lower.as_str() {
            "-inf" => Ok(Py::Float(f64::NEG_INFINITY)),
            "+inf" => Ok(Py::Float(f64::INFINITY)),
            _ => match text.parse::<f64>() {
                Ok(f) => Ok(Py::Float(f)),
                Err(_) if self.lenient => Ok(Py::Bare(text.to_string())),
                Err(_) => Err(Stop::Syntax { at: start, expected: "a number" }),
            },
        }
    }

    /// `None`, `True`, `inf`, a call repr `Name(...)`, or a bare word.
    fn word(&mut self, depth: usize) -> R<Py> {
        let start = self.i;
        if let Some(name) = self.identifier() {
            if self.peek() == Some(b'(') {
                self.i += 1;
                let (mut args, mut kwargs) = (Vec::new(), Vec::new());
                self.items(b')', |p, _| {
                    match p.keyword(depth + 1)? {
                        Some(kv) => kwargs.push(kv),
                        None if kwargs.is_empty() => args.push(p.value(depth + 1)?),
                        None => return Err(p.stop("key=value")),
                    }
                    Ok(())
                })?;
                return Ok(Py::Call { name, args, kwargs });
            }
            if self.peek().is_none() {
                return Err(Stop::Truncated);
            }
            match name.as_str() {
                "None" => return Ok(Py::None),
                "True" => return Ok(Py::Bool(true)),
                "False" => return Ok(Py::Bool(false)),
                "inf" => return Ok(Py::Float(f64::INFINITY)),
                "nan" => return Ok(Py::Float(f64::NAN)),
                _ if !self.lenient => return Ok(Py::Bare(name)),
                _ => {}
            }
            self.i = start;
        }
        if !self.lenient {
            return Err(self.stop("a value"));
        }
        // A bare word runs to the next separator at this level.
        while let Some(c) = self.peek() {
            if matches!(c, b',' | b')' | b']' | b'}' | b'(' | b'[' | b'{' | b'\'' | b'"') {
                break;
            }
            self.i += 1;
        }
        if self.i >= self.b.len() {
            return Err(Stop::Truncated);
        }
        let text = self.s[start..self.i].trim_end();
        if text.is_empty() {
            return Err(self.stop("a value"));
        }
        Ok(Py::Bare(text.to_string()))
    }

    /// A quoted string with Python escapes; the cursor is on the opening quote.
    fn string(&mut self) -> R<String> {
        let quote = self.b[self.i];
        self.i += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else { return Err(Stop::Truncated) };
            if c == quote {
                self.i += 1;
                return Ok(out);
            }
            if c != b'\\' {
                let ch = self.s[self.i..].chars().next().unwrap_or('\u{fffd}');
                out.push(ch);
                self.i += ch.len_utf8();
                continue;
            }
            let Some(e) = self.b.get(self.i + 1).copied() else { return Err(Stop::Truncated) };
            self.i += 2;
            match e {
                b'n' => out.push('\n'),
                b't' => out.push('\t'),
                b'r' => out.push('\r'),
                b'0' => out.push('\0'),
                b'a' => out.push('\u{7}'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'v' => out.push('\u{b}'),
                b'x' | b'u' | b'U' => {
                    let n = match e {
                        b'x' => 2,
                        b'u' => 4,
                        _ => 8,
                    };
                    let Some(hex) = self.s.get(self.i..self.i + n) else { return Err(Stop::Truncated) };
                    match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
                        Some(ch) => out.push(ch),
                        None => return Err(Stop::Syntax { at: self.i, expected: "a hex escape" }),
                    }
                    self.i += n;
                }
                b'\\' | b'\'' | b'"' => out.push(e as char),
                other => {
                    out.push('\\');
                    let ch = self.s[self.i - 1..].chars().next().unwrap_or(other as char);
                    out.push(ch);
                    self.i += ch.len_utf8() - 1;
                }
            }
        }
    }
}

impl Py {
    /// Python -> JSON as docs/GUIDE.md's `evidence` JSON says: None -> null, bools, numbers,
    /// strings, dict/list/tuple -> object/array, call reprs -> objects of
    /// their keyword fields, enums -> their value; `inf`/`nan` -> strings.
    pub fn to_json(&self) -> Value {
        match self {
            Py::None => Value::Null,
            Py::Bool(b) => Value::Bool(*b),
            Py::Int(n) => Value::from(*n),
            Py::BigInt(s) | Py::Bare(s) | Py::Str(s) => Value::String(s.clone()),
            Py::Float(f) => Number::from_f64(*f).map_or_else(|| Value::String(float_text(*f)), Value::Number),
            Py::List(items) | Py::Tuple(items) | Py::Set(items) => Value::Array(items.iter().map(Py::to_json).collect()),
            Py::Dict(pairs) => Value::Object(pairs.iter().map(|(k, v)| (key_text(k), v.to_json())).collect()),
            Py::Call { kwargs, args, .. } => {
                let mut map: Map<String, Value> = kwargs.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
                if !args.is_empty() {
                    if kwargs.is_empty() && args.len() == 1 {
                        return args[0].to_json();
                    }
                    map.insert("args".to_string(), Value::Array(args.iter().map(Py::to_json).collect()));
                }
                Value::Object(map)
            }
            Py::Enum { value, .. } => value.to_json(),
        }
    }

    /// The value as text, for fields read as strings (`'EAGLE'`, `EAGLE`, `<Alg.EAGLE: 'eagle'>`).
    pub fn as_text(&self) -> Option<String> {
        match self {
            Py::Str(s) | Py::Bare(s) => Some(s.clone()),
            Py::Enum { value, name } => value.as_text().or_else(|| name.rsplit('.').next().map(str::to_string)),
            Py::Int(n) => Some(n.to_string()),
            Py::Float(f) => Some(float_text(*f)),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Py::Int(n) => Some(*n as f64),
            Py::Float(f) => Some(*f),
            Py::Str(s) | Py::Bare(s) => s.trim().parse().ok(),
            Py::Enum { value, .. } => value.as_f64(),
            _ => None,
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, Py::None)
    }
}

fn float_text(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json_of(text: &str) -> Value {
        parse_value(text).unwrap().0.to_json()
    }

    #[test]
    fn scalars_and_strings() {
        assert_eq!(json_of("None "), Value::Null);
        assert_eq!(json_of("True,"), json!(true));
        assert_eq!(json_of("-12 "), json!(-12));
        assert_eq!(json_of("0.85 "), json!(0.85));
        assert_eq!(json_of("1e-05 "), json!(1e-05));
        assert_eq!(json_of("inf "), json!("inf"));
        assert_eq!(json_of("-inf "), json!("-inf"));
        assert_eq!(json_of("nan "), json!("nan"));
        assert_eq!(json_of("123456789012345678901234567890 "), json!("123456789012345678901234567890"));
        assert_eq!(json_of(r#"'it\'s \\ \n \x41é'"#), json!("it's \\ \n Aé"));
        assert_eq!(json_of(r#""say 'hi'""#), json!("say 'hi'"));
        assert_eq!(json_of(r#"'{"enable_multithread_load": true}'"#), json!(r#"{"enable_multithread_load": true}"#));
        assert_eq!(json_of("b'raw'"), json!("raw"));
    }

    #[test]
    fn containers_enums_and_bare_words() {
        assert_eq!(json_of("[1, 2, [3]]"), json!([1, 2, [3]]));
        assert_eq!(json_of("(1,)"), json!([1]));
        assert_eq!(json_of("()"), json!([]));
        assert_eq!(json_of("{'a': {'b': None}, 1: 'x'}"), json!({"a": {"b": null}, "1": "x"}));
        assert_eq!(json_of("{1, 2}"), json!([1, 2]));
        assert_eq!(json_of("<Kind.EAGLE: 'eagle'>"), json!("eagle"));
        assert_eq!(json_of("<function f at 0x7f>,"), json!("<function f at 0x7f>"));
        assert_eq!(json_of("torch.bfloat16,"), json!("torch.bfloat16"));
        assert_eq!(json_of("/data/models/X,"), json!("/data/models/X"));
        assert_eq!(json_of("PosixPath('/x')"), json!("/x"));
        assert_eq!(
            json_of("CudaGraphConfig(decode=PhaseConfig(backend='disabled', bs=[1, 2]), prefill=None)"),
            json!({"decode": {"backend": "disabled", "bs": [1, 2]}, "prefill": null})
        );
    }

    #[test]
    fn records_keep_fields_before_a_cut() {
        let r = parse_record("ServerArgs(model_path='/m', speculative_draft_model_path=None, tp_size=4, quantiz", false);
        assert_eq!(r.name.as_deref(), Some("ServerArgs"));
        assert_eq!(r.stop, Some(Stop::Truncated));
        let keys: Vec<&str> = r.fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["model_path", "speculative_draft_model_path", "tp_size"]);
        // A cut inside a nested value drops that field only.
        let r = parse_record("ServerArgs(a=1, b=Conf(x=[1, 2", false);
        assert_eq!((r.fields.len(), r.stop.clone()), (1, Some(Stop::Truncated)));
        // A cut inside a number never yields a shorter number.
        let r = parse_record("ServerArgs(a=1, mem_fraction_static=0.8", false);
        assert_eq!(r.fields.len(), 1);
        let r = parse_record("{'model_path': '/m', 'tp_size': 8} trailing", false);
        assert!(r.complete());
        assert_eq!(r.fields[1], ("tp_size".to_string(), Py::Int(8)));
        assert_eq!(&"{'model_path': '/m', 'tp_size': 8} trailing"[r.consumed..], " trailing");
    }

    #[test]
    fn syntax_errors_and_depth_are_reported() {
        let r = parse_record("ServerArgs(a=1 b=2)", false);
        assert!(matches!(r.stop, Some(Stop::Syntax { .. })));
        assert_eq!(r.fields.len(), 1);
        let deep = format!("X(a={}1{})", "[".repeat(200), "]".repeat(200));
        assert!(matches!(parse_record(&deep, false).stop, Some(Stop::TooDeep { .. })));
        assert!(parse_record("not a repr", false).stop.is_some());
        // Strict mode: a bare value is one identifier; positional after keyword is an error.
        assert_eq!(parse_record("X(a=torch.bfloat16, b=auto)", false).fields[0].1, Py::Bare("torch.bfloat16".into()));
        assert!(matches!(parse_record("X(a=1, quantLoading shards: 50%", false).stop, Some(Stop::Syntax { .. })));
        assert!(matches!(parse_record("X(a=Loading weights took 3s", false).stop, Some(Stop::Syntax { .. })));
        assert!(parse_record("X(a=/data/m, b=auto)", true).complete());
    }
}
