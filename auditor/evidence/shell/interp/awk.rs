//! `awk` programs that read no input: `BEGIN { ... }` alone, over `-v`
//! values and constants. Scripts use them as a calculator and as a test
//! (`awk -v s="$SIZE" -v cap=270 'BEGIN { exit !(s > cap) }'`), so their
//! output and status follow from the script's values. Anything beyond
//! `print`, `exit` and expressions (a main rule, `getline`, functions,
//! loops, a field) is the run's: `None`.

use std::collections::HashMap;

/// What the program prints and the status it exits with.
pub struct Run {
    pub out: String,
    pub status: i32,
}

/// `awk` with these arguments (after the program name), run.
pub fn run(args: &[String]) -> Option<Run> {
    let mut vars: HashMap<String, Val> = HashMap::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-v" => {
                let (name, value) = args.get(i + 1)?.split_once('=')?;
                vars.insert(name.to_string(), Val::input(value)?);
                i += 2;
            }
            _ if a.starts_with("-v") => {
                let (name, value) = a[2..].split_once('=')?;
                vars.insert(name.to_string(), Val::input(value)?);
                i += 1;
            }
            _ => break,
        }
    }
    // The program and nothing after it: files or assignments would be read.
    let [program] = &args[i..] else { return None };
    let body = program.trim().strip_prefix("BEGIN")?.trim().strip_prefix('{')?.strip_suffix('}')?;
    let tokens = tokens(body)?;
    let mut p = Parser { t: &tokens, i: 0, vars: &vars, depth: 0 };
    let mut out = String::new();
    loop {
        while p.eat(&Tok::End) {}
        let Some(tok) = p.t.get(p.i) else { break };
        match tok {
            Tok::Word(w) if w == "print" => {
                p.i += 1;
                if p.redirects() {
                    return None;
                }
                let mut items = Vec::new();
                if !p.at_end() {
                    items.push(p.expr()?);
                    while p.eat(&Tok::Op(",")) {
                        items.push(p.expr()?);
                    }
                }
                let texts: Vec<String> = items.iter().map(Val::output).collect::<Option<_>>()?;
                out.push_str(&texts.join(" "));
                out.push('\n');
            }
            Tok::Word(w) if w == "exit" => {
                p.i += 1;
                let status = if p.at_end() { 0 } else { p.expr()?.number() as i64 };
                return Some(Run { out, status: (status & 0xff) as i32 });
            }
            _ => return None,
        }
        if !p.at_end() {
            return None;
        }
    }
    Some(Run { out, status: 0 })
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Word(String),
    Op(&'static str),
    /// `;` or a newline.
    End,
}

fn tokens(text: &str) -> Option<Vec<Tok>> {
    const OPS: [&str; 17] = ["&&", "||", "<=", ">=", "==", "!=", "<", ">", "!", "+", "-", "*", "/", "%", "(", ")", ","];
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c == ' ' || c == '\t' {
            i += 1;
        } else if c == ';' || c == '\n' {
            out.push(Tok::End);
            i += 1;
        } else if c.is_ascii_digit() || (c == '.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Num(text[start..i].parse().ok()?));
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                match *b.get(i)? {
                    b'"' => break,
                    b'\\' => {
                        s.push(match *b.get(i + 1)? {
                            b'n' => '\n',
                            b't' => '\t',
                            b'"' => '"',
                            b'\\' => '\\',
                            _ => return None,
                        });
                        i += 2;
                    }
                    _ => {
                        let ch = text[i..].chars().next()?;
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            out.push(Tok::Str(s));
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Word(text[start..i].to_string()));
        } else {
            let op = OPS.iter().find(|op| text[i..].starts_with(**op))?;
            out.push(Tok::Op(op));
            i += op.len();
        }
        if out.len() > 512 {
            return None;
        }
    }
    Some(out)
}

/// An awk value: a number, a string, or a string from the input that looks
/// like a number ("strnum"), which compares as a number.
#[derive(Clone, Debug)]
enum Val {
    Num(f64),
    Str(String),
    StrNum(String, f64),
}

impl Val {
    /// A `-v` value; `None` where awks differ (escapes, `+5`, `inf`, hex).
    fn input(text: &str) -> Option<Val> {
        let t = text.trim();
        if text.contains('\\')
            || t.starts_with('+')
            || t.to_ascii_lowercase().trim_start_matches('-').starts_with(['i', 'n', '0']) && t.contains(['x', 'X', 'n', 'N', 'i', 'I'])
        {
            return None;
        }
        Some(match t.parse::<f64>() {
            Ok(n) if n.is_finite() && !t.is_empty() => Val::StrNum(text.to_string(), n),
            _ => Val::Str(text.to_string()),
        })
    }

    /// As a number: a string's leading number, else 0.
    fn number(&self) -> f64 {
        match self {
            Val::Num(n) | Val::StrNum(_, n) => *n,
            Val::Str(s) => {
                let s = s.trim_start();
                let end = s.char_indices().take_while(|(i, c)| c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+'))).count();
                (0..=end).rev().find_map(|k| s[..k].parse().ok()).unwrap_or(0.0)
            }
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Val::Num(n) | Val::StrNum(_, n) => *n != 0.0,
            Val::Str(s) => !s.is_empty(),
        }
    }

    /// As `print` writes it (`OFMT`, `%.6g`, for a number that is not whole).
    fn output(&self) -> Option<String> {
        match self {
            Val::Num(n) => crate::evidence::shell::expand::awk_number(*n),
            Val::Str(s) | Val::StrNum(s, _) => Some(s.clone()),
        }
    }

    fn text(&self) -> Option<String> {
        self.output()
    }
}

struct Parser<'t> {
    t: &'t [Tok],
    i: usize,
    vars: &'t HashMap<String, Val>,
    depth: usize,
}

impl Parser<'_> {
    fn eat(&mut self, tok: &Tok) -> bool {
        let hit = self.t.get(self.i) == Some(tok);
        self.i += usize::from(hit);
        hit
    }

    /// The statement from here has a `>` outside parentheses: in `print`
    /// that writes to a file.
    fn redirects(&self) -> bool {
        let mut depth = 0i32;
        for t in &self.t[self.i..] {
            match t {
                Tok::End => break,
                Tok::Op("(") => depth += 1,
                Tok::Op(")") => depth -= 1,
                Tok::Op(">") if depth == 0 => return true,
                _ => {}
            }
        }
        false
    }

    fn at_end(&self) -> bool {
        matches!(self.t.get(self.i), None | Some(Tok::End))
    }

    fn expr(&mut self) -> Option<Val> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let v = self.or();
        self.depth -= 1;
        v
    }

    fn or(&mut self) -> Option<Val> {
        let mut v = self.and()?;
        while self.eat(&Tok::Op("||")) {
            let r = self.and()?;
            v = Val::Num(f64::from(u8::from(v.truthy() || r.truthy())));
        }
        Some(v)
    }

    fn and(&mut self) -> Option<Val> {
        let mut v = self.compare()?;
        while self.eat(&Tok::Op("&&")) {
            let r = self.compare()?;
            v = Val::Num(f64::from(u8::from(v.truthy() && r.truthy())));
        }
        Some(v)
    }

    fn compare(&mut self) -> Option<Val> {
        let l = self.concat()?;
        let Some(Tok::Op(op)) = self.t.get(self.i).cloned() else { return Some(l) };
        if !matches!(op, "<" | "<=" | ">" | ">=" | "==" | "!=") {
            return Some(l);
        }
        self.i += 1;
        let r = self.concat()?;
        // Numbers compare as numbers; a string on either side as strings.
        let ord = match (&l, &r) {
            (Val::Str(_), _) | (_, Val::Str(_)) => l.text()?.cmp(&r.text()?),
            _ => l.number().partial_cmp(&r.number())?,
        };
        let held = match op {
            "<" => ord.is_lt(),
            "<=" => ord.is_le(),
            ">" => ord.is_gt(),
            ">=" => ord.is_ge(),
            "==" => ord.is_eq(),
            _ => ord.is_ne(),
        };
        Some(Val::Num(f64::from(u8::from(held))))
    }

    /// Juxtaposed values are joined as strings (`print "x=" x`).
    fn concat(&mut self) -> Option<Val> {
        let mut v = self.sum()?;
        while matches!(self.t.get(self.i), Some(Tok::Num(_) | Tok::Str(_) | Tok::Word(_) | Tok::Op("("))) {
            let r = self.sum()?;
            v = Val::Str(v.text()? + &r.text()?);
        }
        Some(v)
    }

    fn sum(&mut self) -> Option<Val> {
        let mut v = self.product()?;
        loop {
            let sign = if self.eat(&Tok::Op("+")) {
                1.0
            } else if self.eat(&Tok::Op("-")) {
                -1.0
            } else {
                return Some(v);
            };
            let r = self.product()?;
            v = Val::Num(v.number() + sign * r.number());
        }
    }

    fn product(&mut self) -> Option<Val> {
        let mut v = self.unary()?;
        loop {
            let op = match self.t.get(self.i) {
                Some(Tok::Op(op @ ("*" | "/" | "%"))) => *op,
                _ => return Some(v),
            };
            self.i += 1;
            let (a, b) = (v.number(), self.unary()?.number());
            // Division by zero stops awk with an error: the run's to say.
            v = Val::Num(match op {
                "*" => a * b,
                "/" if b != 0.0 => a / b,
                "%" if b != 0.0 => a % b,
                _ => return None,
            });
        }
    }

    fn unary(&mut self) -> Option<Val> {
        if self.eat(&Tok::Op("!")) {
            return Some(Val::Num(f64::from(u8::from(!self.unary()?.truthy()))));
        }
        if self.eat(&Tok::Op("-")) {
            return Some(Val::Num(-self.unary()?.number()));
        }
        if self.eat(&Tok::Op("+")) {
            return Some(Val::Num(self.unary()?.number()));
        }
        match self.t.get(self.i)?.clone() {
            Tok::Num(n) => {
                self.i += 1;
                Some(Val::Num(n))
            }
            Tok::Str(s) => {
                self.i += 1;
                Some(Val::Str(s))
            }
            // A variable; keywords and builtin functions are not modelled.
            Tok::Word(w) if !is_reserved(&w) => {
                self.i += 1;
                if self.t.get(self.i) == Some(&Tok::Op("(")) {
                    return None;
                }
                Some(self.vars.get(&w).cloned().unwrap_or(Val::StrNum(String::new(), 0.0)))
            }
            Tok::Op("(") => {
                self.i += 1;
                let v = self.expr()?;
                self.eat(&Tok::Op(")")).then_some(v)
            }
            _ => None,
        }
    }
}

fn is_reserved(word: &str) -> bool {
    matches!(
        word,
        "print"
            | "printf"
            | "exit"
            | "if"
            | "else"
            | "while"
            | "for"
            | "do"
            | "getline"
            | "next"
            | "in"
            | "delete"
            | "function"
            | "return"
            | "NR"
            | "NF"
            | "FS"
            | "OFS"
            | "ORS"
            | "RS"
            | "OFMT"
            | "CONVFMT"
            | "ENVIRON"
            | "ARGV"
            | "ARGC"
            | "FILENAME"
            | "SUBSEP"
            | "RSTART"
            | "RLENGTH"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn awk(args: &[&str]) -> Option<(String, i32)> {
        run(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>()).map(|r| (r.out, r.status))
    }

    /// Each case as `awk` itself answers it (checked against the system's awk when it has one).
    #[test]
    fn begin_programs_give_what_awk_gives() {
        let cases: &[&[&str]] = &[
            &["-v", "s=270", "-v", "cap=270", "BEGIN { exit !(s > cap) }"],
            &["-v", "s=0", "BEGIN { exit !(s > 0) }"],
            &["-v", "r=0.75", "-v", "cap=0.75", "BEGIN { exit !(r > cap) }"],
            &["-v", "s=10", "-v", "cap=9", "BEGIN { exit !(s <= 0 || s > cap) }"],
            &["-v", "a=10", "-v", "b=9", "BEGIN { exit !(a > b) }"],
            &["-v", "a=abc", "-v", "b=abd", "BEGIN { exit !(a < b) }"],
            &["BEGIN{print (7-1)/4}"],
            &["BEGIN { print 2*3, 10%4; print \"x=\" 1.5 }"],
            &["-v", "x=", "BEGIN { exit x == 0 }"],
            &["-vn=3", "BEGIN { print n * 1.5 }"],
            &["BEGIN { print 1/3 }"],
        ];
        let system = std::process::Command::new("awk").arg("BEGIN{}").status().is_ok_and(|s| s.success());
        for args in cases {
            let got = awk(args).unwrap_or_else(|| panic!("not modelled: {args:?}"));
            if system {
                let real = std::process::Command::new("awk").args(*args).output().expect("awk runs");
                assert_eq!(got, (String::from_utf8_lossy(&real.stdout).into_owned(), real.status.code().unwrap_or(-1)), "{args:?}");
            }
        }
        assert_eq!(awk(&["-v", "s=300", "-v", "cap=270", "BEGIN { exit !(s > cap) }"]), Some((String::new(), 0)));
    }

    #[test]
    fn what_reads_input_or_calls_functions_is_the_runs() {
        for args in [
            &["{ print $1 }"][..],
            &["BEGIN { print length(\"x\") }"],
            &["BEGIN { print 1/0 }"],
            &["BEGIN { x = 1 }"],
            &["BEGIN { exit }", "file"],
            &["BEGIN { print 1 > 2 }"],
            &["-v", "x=+5", "BEGIN { exit x > 1 }"],
        ] {
            assert!(awk(args).is_none(), "{args:?}");
        }
    }
}
