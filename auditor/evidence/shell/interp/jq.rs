//! `jq` where its output follows from literal input: `jq -n` (or over a
//! known input) with a literal filter and `--arg`/`--argjson` values, run by
//! jaq, a jq clone in Rust, so a config built with `jq -nc '{…}'` is the
//! value jq prints. Anything else (a file argument, an option it does not
//! know, a filter that fails) is left to the run.

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::Val;

/// What `jq` prints for `args` (its arguments, without `jq`) and `input`
/// (its standard input, when the run gives it in full); `None` when only
/// the run knows.
pub fn output(args: &[String], input: Option<&str>) -> Option<String> {
    let (mut null_input, mut compact, mut raw, mut join) = (false, false, false, false);
    let mut vars: Vec<(String, Val)> = Vec::new();
    let mut filter: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-n" | "--null-input" => null_input = true,
            "-c" | "--compact-output" => compact = true,
            "-r" | "--raw-output" => raw = true,
            "-j" | "--join-output" => (raw, join) = (true, true),
            "--arg" | "--argjson" => {
                let (name, value) = (args.get(i + 1)?, args.get(i + 2)?);
                let value = if a == "--arg" { Val::from(value.clone()) } else { jaq_json::read::parse_single(value.as_bytes()).ok()? };
                vars.push((format!("${name}"), value));
                i += 2;
            }
            // Combined short flags: -nc, -rn, …
            s if s.starts_with('-') && s.len() > 2 && !s.starts_with("--") && s[1..].chars().all(|c| "ncrj".contains(c)) => {
                for c in s[1..].chars() {
                    match c {
                        'n' => null_input = true,
                        'c' => compact = true,
                        'r' => raw = true,
                        _ => (raw, join) = (true, true),
                    }
                }
            }
            s if s.starts_with('-') && s != "-" => return None,
            s if filter.is_none() => filter = Some(s),
            // A file to read: what it holds is the run's.
            _ => return None,
        }
        i += 1;
    }
    let inputs: Vec<Val> = if null_input { vec![Val::Null] } else { jaq_json::read::parse_many(input?.as_bytes()).collect::<Result<_, _>>().ok()? };
    let program = File { code: filter.unwrap_or("."), path: () };
    let loader = Loader::new(jaq_core::defs().chain(jaq_std::defs()).chain(jaq_json::defs()));
    let arena = Arena::default();
    let modules = loader.load(&arena, program).ok()?;
    let names: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
    let filter =
        Compiler::default().with_funs(jaq_core::funs().chain(jaq_std::funs()).chain(jaq_json::funs())).with_global_vars(names).compile(modules).ok()?;
    let pp = jaq_json::write::Pp { indent: (!compact).then(|| "  ".to_string()), sep_space: !compact, ..Default::default() };
    let mut out = Vec::new();
    for value in inputs {
        let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new(vars.iter().map(|(_, v)| v.clone())));
        for v in filter.id.run((ctx, value)).map(unwrap_valr) {
            match v.ok()? {
                Val::TStr(text) if raw => out.extend_from_slice(&text),
                v => jaq_json::write::write(&mut out, &pp, 0, &v).ok()?,
            }
            if !join {
                out.push(b'\n');
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jq(args: &[&str], input: Option<&str>) -> Option<String> {
        output(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), input)
    }

    #[test]
    fn a_config_built_with_null_input_is_what_jq_prints() {
        let filter = "{method: \"mtp\", num_speculative_tokens: $n, rejection_sample_method: $m}";
        assert_eq!(
            jq(&["-nc", "--argjson", "n", "3", "--arg", "m", "synthetic", filter], None).as_deref(),
            Some("{\"method\":\"mtp\",\"num_speculative_tokens\":3,\"rejection_sample_method\":\"synthetic\"}\n")
        );
        assert_eq!(jq(&["-n", "{a: [1, 2]}"], None).as_deref(), Some("{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"));
        assert_eq!(jq(&["-r", ".name"], Some("{\"name\": \"x\"}")).as_deref(), Some("x\n"));
    }

    #[test]
    fn what_only_the_run_knows_is_none() {
        assert_eq!(jq(&[".a", "/models/x/config.json"], None), None, "a file");
        assert_eq!(jq(&[".a"], None), None, "an unknown input");
        assert_eq!(jq(&["-n", "--slurp", "1"], None), None, "an option it does not model");
        assert_eq!(jq(&["-n", "error(\"x\")"], None), None, "a failing filter");
        assert_eq!(jq(&["-n", "{"], None), None, "a filter that does not parse");
    }
}
