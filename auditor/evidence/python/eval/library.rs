//! What library objects do, as far as the audit cares: `os.environ`,
//! `subprocess` and the `os.exec*`/`spawn*` family, `runpy` and
//! `importlib`, `open`/`pathlib`/`shutil`/`os` file operations, where
//! installed modules are (`find_spec`, `__file__`, `site`, `sysconfig`,
//! `inspect`), and the string, list and dict methods constant propagation
//! needs. Anything else called returns an unknown value.

use super::interp::{Args, Evaluator, dict_set, index};
use super::value::{self, Base, Val, join, unknown, unknown_as};
use super::{EnvBase, EnvWriteKind, LaunchCommand, LaunchEnv, PyLaunch, RunKind, WriteKind};

/// `os.O_*` flags (Linux values).
const OPEN_FLAGS: &[(&str, i64)] =
    &[("O_RDONLY", 0), ("O_WRONLY", 1), ("O_RDWR", 2), ("O_CREAT", 0o100), ("O_TRUNC", 0o1000), ("O_APPEND", 0o2000), ("O_EXCL", 0o200)];
const WRITING_FLAGS: i64 = 1 | 2 | 0o100 | 0o1000 | 0o2000;

impl Evaluator<'_> {
    /// `obj.attr`.
    pub(super) fn attribute(&mut self, obj: Val, attr: &str) -> Val {
        match obj {
            Val::Object(name) => self.object_attr(&name, attr),
            Val::Spec(name) => match attr {
                "origin" | "path" => value::module_file(&name),
                "submodule_search_locations" => Val::List(vec![value::module_dir(&name)].into()),
                "name" => Val::Str(name),
                "parent" => Val::Str(name.rsplit_once('.').map_or(String::new(), |(p, _)| p.to_string())),
                "loader" => Val::Spec(name),
                "has_location" => Val::Bool(true),
                _ => Val::Method(Box::new(Val::Spec(name)), attr.to_string()),
            },
            Val::Instance(i) => {
                if let Some(v) = i.0.attrs.borrow().get(attr) {
                    return v.clone();
                }
                match i.0.class.0.attrs.borrow().get(attr) {
                    Some(Val::Func(_)) => Val::Method(Box::new(Val::Instance(i.clone())), attr.to_string()),
                    Some(v) => v.clone(),
                    None => unknown(),
                }
            }
            Val::Class(c) => c.0.attrs.borrow().get(attr).cloned().unwrap_or_else(unknown),
            Val::Str(_) | Val::Installed(_) => match attr {
                "parent" => value::dirname(&obj).unwrap_or_else(unknown),
                "name" => value::basename(&obj).unwrap_or_else(unknown),
                "stem" | "suffix" => {
                    let Some(Val::Str(name)) = value::basename(&obj) else { return unknown() };
                    let (stem, suffix) = match name.rfind('.') {
                        Some(i) if i > 0 => (name[..i].to_string(), name[i..].to_string()),
                        _ => (name.clone(), String::new()),
                    };
                    Val::Str(if attr == "stem" { stem } else { suffix })
                }
                "parents" => {
                    let mut out = Vec::new();
                    let mut at = obj;
                    while let Some(up) = value::dirname(&at) {
                        if up == at || up.is_unknown() || out.len() >= 64 || matches!(&up, Val::Str(s) if s.is_empty()) {
                            break;
                        }
                        out.push(up.clone());
                        at = up;
                    }
                    Val::List(out.into())
                }
                _ => Val::Method(Box::new(obj), attr.to_string()),
            },
            Val::List(_) | Val::Dict(..) | Val::File(_) | Val::Code(_) => Val::Method(Box::new(obj), attr.to_string()),
            Val::OneOf(alts) => {
                let vals = alts.into_iter().map(|a| self.attribute(a, attr)).collect();
                join(vals)
            }
            _ => unknown(),
        }
    }

    fn object_attr(&mut self, name: &str, attr: &str) -> Val {
        match (name, attr) {
            (_, "__file__") => value::module_file(name),
            (_, "__path__") => Val::List(vec![value::module_dir(name)].into()),
            (_, "__spec__") => Val::Spec(name.to_string()),
            (_, "__name__") => Val::Str(name.to_string()),
            (_, "__version__" | "__doc__") => unknown(),
            ("sys", "argv") => self.current_argv(),
            ("sys", "executable") => Val::Str("python3".into()),
            ("sys", "path" | "version" | "platform" | "prefix") => unknown(),
            ("os", "sep") | ("os.path", "sep") => Val::Str("/".into()),
            ("os", "pathsep") => Val::Str(":".into()),
            ("os", "name") => Val::Str("posix".into()),
            ("os", "linesep") => Val::Str("\n".into()),
            ("os", "curdir") => Val::Str(".".into()),
            ("os", "pardir") => Val::Str("..".into()),
            ("os", "devnull") => Val::Str("/dev/null".into()),
            ("os", flag) if flag.starts_with("O_") => OPEN_FLAGS.iter().find(|(n, _)| *n == flag).map_or_else(unknown, |(_, v)| Val::Int(*v)),
            ("<dist>", "location") => Val::Installed(String::new()),
            _ => Val::Object(format!("{name}.{attr}")),
        }
    }

    /// `v[key]`.
    pub(super) fn subscript(&mut self, v: Val, key: Val) -> Val {
        match v {
            Val::Dict(items, base) => match items.iter().find(|(k, _)| value::equal(k, &key) == Some(true)) {
                Some((_, v)) => v.clone(),
                None if items.iter().any(|(k, _)| value::equal(k, &key).is_none()) => unknown(),
                None => match base {
                    Base::Environ => self.env_read(&key, None),
                    _ => unknown(),
                },
            },
            Val::List(items) => key.as_int().and_then(|i| index(i, items.len())).map_or_else(unknown, |i| items[i].clone()),
            Val::Str(s) => {
                let chars: Vec<char> = s.chars().collect();
                key.as_int().and_then(|i| index(i, chars.len())).map_or_else(unknown, |i| Val::Str(chars[i].to_string()))
            }
            Val::Object(name) if name == "os.environ" => self.env_read(&key, None),
            // `sys.modules["os"]`, `os.__dict__["environ"]`: the object by another spelling.
            Val::Object(name) if name == "sys.modules" => key.as_str().map_or_else(unknown, |m| Val::Object(m.to_string())),
            Val::Object(name) if name.ends_with(".__dict__") => match key.as_str() {
                Some(attr) => self.object_attr(name.trim_end_matches(".__dict__"), attr),
                None => unknown(),
            },
            Val::OneOf(alts) => {
                let vals = alts.into_iter().map(|a| self.subscript(a, key.clone())).collect();
                join(vals)
            }
            _ => unknown(),
        }
    }

    /// Call a library object by its dotted name.
    pub(super) fn call_object(&mut self, name: &str, args: Args, line: u64) -> Val {
        let name = canonical(name);
        let arg = |i: usize, kw: &str| args.get(i, kw).cloned();
        match name.as_str() {
            // ---- environment ----
            "os.environ.get" | "os.getenv" | "os.environ.__getitem__" => {
                let key = arg(0, "key").unwrap_or_else(unknown);
                let default = if name == "os.environ.__getitem__" { None } else { Some(arg(1, "default").unwrap_or(Val::None)) };
                self.env_read(&key, default)
            }
            "os.environ.setdefault" => {
                let key = arg(0, "key").unwrap_or_else(unknown);
                let v = arg(1, "default").unwrap_or(Val::None);
                self.env_write(key.clone(), Some(v), EnvWriteKind::SetDefault, line);
                self.env_read(&key, None)
            }
            "os.environ.__setitem__" => {
                self.env_write(arg(0, "key").unwrap_or_else(unknown), Some(arg(1, "value").unwrap_or_else(unknown)), EnvWriteKind::Set, line);
                Val::None
            }
            "os.environ.update" => {
                if let Some(first) = args.pos.first().cloned() {
                    self.environ_update(first, line);
                }
                for (k, v) in args.kw.clone() {
                    self.env_write(Val::Str(k), Some(v), EnvWriteKind::Set, line);
                }
                if args.open {
                    self.env_write(unknown_as("os.environ.update(**...)"), Some(unknown_as("values not known here")), EnvWriteKind::Set, line);
                }
                Val::None
            }
            "os.environ.pop" | "os.environ.__delitem__" => {
                let key = arg(0, "key").unwrap_or_else(unknown);
                let before = self.env_read(&key, arg(1, "default"));
                self.env_write(key, None, EnvWriteKind::Unset, line);
                before
            }
            "os.environ.clear" => {
                self.env_write(unknown_as("every variable (os.environ.clear())"), None, EnvWriteKind::Unset, line);
                Val::None
            }
            "os.environ.copy" => Val::Dict(Vec::new().into(), Base::Environ),
            "os.putenv" => {
                self.env_write(arg(0, "key").unwrap_or_else(unknown), Some(arg(1, "value").unwrap_or_else(unknown)), EnvWriteKind::Putenv, line);
                Val::None
            }
            "os.unsetenv" => {
                self.env_write(arg(0, "key").unwrap_or_else(unknown), None, EnvWriteKind::Unsetenv, line);
                Val::None
            }
            // ---- processes ----
            "subprocess.run" | "subprocess.Popen" | "subprocess.call" | "subprocess.check_call" | "subprocess.check_output" => {
                let cmd = arg(0, "args").unwrap_or_else(unknown);
                let shell = args.kw("shell").map(Val::truth);
                let command = match (cmd, shell) {
                    (Val::List(items), Some(Some(true))) => Command::Shell(items.first().cloned().unwrap_or_else(|| unknown_as("an empty command"))),
                    (Val::List(items), _) => Command::Argv(items.into_vec()),
                    (v, None | Some(Some(false))) => Command::Argv(vec![v]),
                    // shell=True, or shell= something unknown: a string is a command line.
                    (v, _) => Command::Shell(v),
                };
                let output = match (&command, name.as_str()) {
                    (Command::Argv(argv), "subprocess.check_output") => python_code(argv),
                    _ => None,
                };
                self.record_launch(command, args.kw("env").cloned(), args.kw("cwd").cloned(), &name, line);
                output.map_or_else(unknown, |code| self.python_output(&code, line))
            }
            "subprocess.getoutput" | "subprocess.getstatusoutput" | "os.system" | "os.popen" | "asyncio.create_subprocess_shell" => {
                let cmd = arg(0, "cmd").unwrap_or_else(unknown);
                let code = match (&cmd, name.as_str()) {
                    (Val::Str(line), "subprocess.getoutput") => {
                        value::shlex_split(line).and_then(|words| python_code(&words.into_iter().map(Val::Str).collect::<Vec<_>>()))
                    }
                    _ => None,
                };
                self.record_launch(Command::Shell(cmd), args.kw("env").cloned(), args.kw("cwd").cloned(), &name, line);
                match code {
                    Some(code) => {
                        let out = self.python_output(&code, line);
                        // getoutput strips the trailing newline.
                        value::map_text(&out, |s| Some(s.strip_suffix('\n').unwrap_or(s).to_string())).unwrap_or(out)
                    }
                    None => unknown(),
                }
            }
            "builtins.print" | "sys.stdout.write" => {
                let to_stdout = match args.kw("file") {
                    None | Some(Val::None) => true,
                    Some(Val::Object(f)) => f == "sys.stdout",
                    Some(_) => false,
                };
                if to_stdout {
                    let sep = match args.kw("sep") {
                        None | Some(Val::None) => Some(Val::Str(" ".into())),
                        Some(v @ Val::Str(_)) => Some(v.clone()),
                        Some(_) => None,
                    };
                    let mut text: Option<Val> = if args.open { None } else { Some(Val::Str(String::new())) };
                    for (i, a) in args.pos.iter().enumerate() {
                        let shown = match a {
                            Val::Str(_) | Val::Installed(_) => Some(a.clone()),
                            other => value::text(other).map(Val::Str),
                        };
                        text = match (text, shown, &sep) {
                            (Some(t), Some(v), Some(sep)) if i > 0 => value::concat(&t, sep).and_then(|t| value::concat(&t, &v)),
                            (Some(t), Some(v), _) if i == 0 => value::concat(&t, &v),
                            _ => None,
                        };
                    }
                    let text = text.unwrap_or_else(|| unknown_as("printed values not known here"));
                    self.print(text, line);
                }
                Val::None
            }
            "asyncio.create_subprocess_exec" => {
                self.record_launch(Command::Argv(args.pos.clone()), args.kw("env").cloned(), args.kw("cwd").cloned(), &name, line);
                unknown()
            }
            "pty.spawn" => {
                let argv = match arg(0, "argv") {
                    Some(Val::List(items)) => items.into_vec(),
                    Some(v) => vec![v],
                    None => vec![],
                };
                self.record_launch(Command::Argv(argv), None, None, &name, line);
                unknown()
            }
            n if n.starts_with("os.exec") || n.starts_with("os.spawn") || n.starts_with("os.posix_spawn") => {
                self.exec_family(n, &args, line);
                unknown()
            }
            // ---- code run here ----
            "runpy.run_module" => {
                self.run_record(RunKind::Module, arg(0, "mod_name").unwrap_or_else(unknown), line);
                unknown()
            }
            "runpy.run_path" => {
                self.run_record(RunKind::Path, arg(0, "path_name").unwrap_or_else(unknown), line);
                unknown()
            }
            "importlib.import_module" => {
                let target = arg(0, "name").unwrap_or_else(unknown);
                self.run_record(RunKind::Import, target.clone(), line);
                match target {
                    Val::Str(m) => Val::Object(m),
                    _ => unknown(),
                }
            }
            "importlib.util.spec_from_file_location" => {
                self.run_record(RunKind::Path, arg(1, "location").unwrap_or_else(unknown), line);
                unknown()
            }
            "builtins.__import__" => match arg(0, "name") {
                Some(Val::Str(m)) => Val::Object(m.split('.').next().unwrap_or("").to_string()),
                _ => unknown(),
            },
            "builtins.exec" => {
                let code = arg(0, "source").unwrap_or_else(unknown);
                self.exec_source(&code, line, false)
            }
            "builtins.eval" => {
                let code = arg(0, "source").unwrap_or_else(unknown);
                self.exec_source(&code, line, true)
            }
            "builtins.compile" => match arg(0, "source") {
                Some(Val::Str(s)) => Val::Code(s.into()),
                _ => unknown(),
            },
            // ---- files ----
            "builtins.open" => {
                let path = arg(0, "file").unwrap_or_else(unknown);
                self.open(path, arg(1, "mode"), line)
            }
            "os.open" => {
                let path = arg(0, "path").unwrap_or_else(unknown);
                match arg(1, "flags").as_ref().and_then(Val::as_int) {
                    Some(flags) if flags & WRITING_FLAGS == 0 => {}
                    Some(_) => {
                        self.file_write(path, WriteKind::Open("os.open".into()), None, None, line);
                    }
                    None => {
                        self.cond += 1;
                        self.file_write(path, WriteKind::Open("os.open".into()), None, None, line);
                        self.cond = self.cond.saturating_sub(1);
                    }
                }
                unknown()
            }
            "os.truncate" => {
                self.file_write(arg(0, "path").unwrap_or_else(unknown), WriteKind::Write, None, None, line);
                Val::None
            }
            "os.rename" | "os.replace" | "os.renames" | "shutil.move" => {
                let (src, dst) = (arg(0, "src").unwrap_or_else(unknown), arg(1, "dst").unwrap_or_else(unknown));
                self.file_write(dst.clone(), WriteKind::Move, Some(src), None, line);
                dst
            }
            "shutil.copy" | "shutil.copy2" | "shutil.copyfile" | "shutil.copytree" => {
                let (src, dst) = (arg(0, "src").unwrap_or_else(unknown), arg(1, "dst").unwrap_or_else(unknown));
                self.file_write(dst.clone(), WriteKind::Copy, Some(src), None, line);
                dst
            }
            "os.symlink" | "os.link" => {
                let (src, dst) = (arg(0, "src").unwrap_or_else(unknown), arg(1, "dst").unwrap_or_else(unknown));
                self.file_write(dst, WriteKind::Link, Some(src), None, line);
                Val::None
            }
            "os.remove" | "os.unlink" | "os.rmdir" | "os.removedirs" | "shutil.rmtree" => {
                self.file_write(arg(0, "path").unwrap_or_else(unknown), WriteKind::Remove, None, None, line);
                Val::None
            }
            "os.makedirs" | "os.mkdir" => {
                self.file_write(arg(0, "name").unwrap_or_else(unknown), WriteKind::MakeDir, None, None, line);
                Val::None
            }
            "fileinput.input" | "fileinput.FileInput" => {
                let inplace = args.kw("inplace").map(Val::truth);
                if !matches!(inplace, None | Some(Some(false))) {
                    let was = self.cond;
                    if inplace != Some(Some(true)) {
                        self.cond += 1;
                    }
                    let files = arg(0, "files").unwrap_or_else(unknown);
                    let each = match &files {
                        Val::List(items) => items.to_vec(),
                        other => vec![other.clone()],
                    };
                    for f in each {
                        self.file_write(f, WriteKind::InPlace, None, None, line);
                    }
                    self.cond = was;
                }
                unknown()
            }
            // ---- paths ----
            "os.path.join" => {
                let mut parts = args.pos.iter();
                let Some(first) = parts.next() else { return unknown() };
                let mut acc = first.clone();
                for p in parts {
                    match value::path_join(&acc, p) {
                        Some(v) => acc = v,
                        None => return unknown(),
                    }
                }
                acc
            }
            "os.path.dirname" => arg(0, "p").and_then(|p| value::dirname(&p)).unwrap_or_else(unknown),
            "os.path.basename" => arg(0, "p").and_then(|p| value::basename(&p)).unwrap_or_else(unknown),
            "os.path.normpath" => arg(0, "path").and_then(|p| value::normpath(&p)).unwrap_or_else(unknown),
            "os.path.abspath" | "os.path.realpath" => match arg(0, "path") {
                Some(p @ Val::Installed(_)) => p,
                Some(Val::Str(s)) if s.starts_with('/') => Val::Str(value::normalize(&s)),
                _ => unknown(),
            },
            "os.path.expanduser" | "os.path.expandvars" | "os.fspath" | "inspect.getmodule" => match arg(0, "path") {
                Some(Val::Str(s)) if s.contains(['~', '$']) => unknown(),
                Some(v) => v,
                None => unknown(),
            },
            "os.path.split" => match arg(0, "p") {
                Some(p) => match (value::dirname(&p), value::basename(&p)) {
                    (Some(d), Some(b)) => Val::List(vec![d, b].into()),
                    _ => unknown(),
                },
                None => unknown(),
            },
            "os.path.splitext" => match arg(0, "p") {
                Some(Val::Str(s)) => {
                    let base_start = s.rfind('/').map_or(0, |i| i + 1);
                    match s[base_start..].rfind('.') {
                        Some(i) if i > 0 => Val::List(vec![Val::Str(s[..base_start + i].to_string()), Val::Str(s[base_start + i..].to_string())].into()),
                        _ => Val::List(vec![Val::Str(s.clone()), Val::Str(String::new())].into()),
                    }
                }
                _ => unknown(),
            },
            "pathlib.Path" => {
                let mut parts = args.pos.iter();
                let Some(first) = parts.next() else { return Val::Str(".".into()) };
                let mut acc = first.clone();
                for p in parts {
                    match value::path_join(&acc, p) {
                        Some(v) => acc = v,
                        None => return unknown(),
                    }
                }
                value::normpath(&acc).unwrap_or(acc)
            }
            // ---- where installed modules are ----
            "importlib.util.find_spec" | "pkgutil.get_loader" | "pkgutil.find_loader" => match arg(0, "name") {
                Some(Val::Str(m)) => Val::Spec(m),
                _ => unknown(),
            },
            "importlib.resources.files" => match arg(0, "package") {
                Some(Val::Str(m)) => value::module_dir(&m),
                Some(Val::Object(m)) => value::module_dir(&m),
                _ => unknown(),
            },
            "importlib.metadata.distribution" | "importlib.metadata.Distribution.from_name" | "pkg_resources.get_distribution" => Val::Object("<dist>".into()),
            "<dist>.locate_file" => match arg(0, "path") {
                Some(Val::Str(p)) => value::installed(&p),
                _ => unknown(),
            },
            "pkg_resources.resource_filename" => match (arg(0, "package"), arg(1, "resource")) {
                (Some(Val::Str(m)), Some(r)) => value::path_join(&value::module_dir(&m), &r).unwrap_or_else(unknown),
                _ => unknown(),
            },
            "site.getsitepackages" => Val::List(vec![Val::Installed(String::new())].into()),
            "site.getusersitepackages" | "distutils.sysconfig.get_python_lib" | "sysconfig.get_python_lib" => Val::Installed(String::new()),
            "sysconfig.get_paths" => Val::Dict(
                vec![(Val::Str("purelib".into()), Val::Installed(String::new())), (Val::Str("platlib".into()), Val::Installed(String::new()))].into(),
                Base::Unknown("sysconfig.get_paths()".into()),
            ),
            "sysconfig.get_path" => match arg(0, "name") {
                Some(Val::Str(n)) if n == "purelib" || n == "platlib" => Val::Installed(String::new()),
                _ => unknown(),
            },
            "inspect.getfile" | "inspect.getsourcefile" | "inspect.getabsfile" => match arg(0, "object") {
                Some(Val::Object(n)) => value::module_file(&module_of(&n)),
                Some(Val::Spec(n)) => value::module_file(&n),
                _ => unknown(),
            },
            // ---- shell words ----
            "shlex.split" => match arg(0, "s") {
                Some(Val::Str(s)) => value::shlex_split(&s).map_or_else(unknown, |w| Val::List(w.into_iter().map(Val::Str).collect())),
                _ => unknown(),
            },
            "shlex.join" => match arg(0, "split_command").as_ref().and_then(value::items) {
                Some(items) => items
                    .iter()
                    .map(|i| value::text(i).map(|t| value::shlex_quote(&t)))
                    .collect::<Option<Vec<_>>>()
                    .map_or_else(unknown, |w| Val::Str(w.join(" "))),
                None => unknown(),
            },
            "shlex.quote" => match arg(0, "s").as_ref().and_then(value::text) {
                Some(s) => Val::Str(value::shlex_quote(&s)),
                None => unknown(),
            },
            // ---- builtins ----
            "builtins.str" => match arg(0, "object") {
                None => Val::Str(String::new()),
                Some(v @ Val::Installed(_)) => v,
                Some(v) => value::text(&v).map_or_else(unknown, Val::Str),
            },
            // ---- decoding (a common way to hide a name or a source) ----
            "base64.b64decode" | "base64.standard_b64decode" | "base64.urlsafe_b64decode" | "base64.b64encode" | "base64.standard_b64encode" => {
                use base64::Engine as _;
                let engine = if name.contains("urlsafe") { base64::engine::general_purpose::URL_SAFE } else { base64::engine::general_purpose::STANDARD };
                match arg(0, "s") {
                    Some(Val::Str(text)) if name.ends_with("encode") => Val::Str(engine.encode(text.as_bytes())),
                    Some(Val::Str(text)) => {
                        let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                        engine.decode(cleaned.as_bytes()).map_or_else(|_| unknown(), |b| Val::Str(String::from_utf8_lossy(&b).into_owned()))
                    }
                    _ => unknown(),
                }
            }
            "builtins.bytes.fromhex" | "binascii.unhexlify" | "binascii.a2b_hex" => match arg(0, "string") {
                Some(Val::Str(text)) => {
                    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
                    let bytes: Option<Vec<u8>> = digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()).collect();
                    bytes.filter(|_| digits.len().is_multiple_of(2)).map_or_else(unknown, |b| Val::Str(String::from_utf8_lossy(&b).into_owned()))
                }
                _ => unknown(),
            },
            "codecs.decode" | "codecs.encode" => match (arg(0, "obj"), arg(1, "encoding")) {
                (Some(Val::Str(text)), Some(Val::Str(enc))) if enc == "rot13" || enc == "rot_13" => Val::Str(text.chars().map(rot13).collect()),
                (Some(v @ Val::Str(_)), None) => v,
                _ => unknown(),
            },
            "builtins.chr" => match arg(0, "i").and_then(|i| i.as_int()).and_then(|i| u32::try_from(i).ok()).and_then(char::from_u32) {
                Some(c) => Val::Str(c.to_string()),
                None => unknown(),
            },
            "builtins.ord" => match arg(0, "c") {
                Some(Val::Str(c)) if c.chars().count() == 1 => Val::Int(i64::from(c.chars().next().map_or(0, u32::from))),
                _ => unknown(),
            },
            "builtins.repr" => arg(0, "obj").as_ref().and_then(value::repr).map_or_else(unknown, Val::Str),
            "builtins.format" => match arg(0, "value") {
                Some(v) => {
                    let spec = arg(1, "format_spec").and_then(|s| s.as_str().map(str::to_string)).unwrap_or_default();
                    value::format_value(&v, "", &spec).map_or_else(unknown, Val::Str)
                }
                None => unknown(),
            },
            "builtins.int" => match arg(0, "x") {
                None => Val::Int(0),
                Some(Val::Int(i)) => Val::Int(i),
                Some(Val::Bool(b)) => Val::Int(i64::from(b)),
                Some(Val::Float(x)) if x.is_finite() && x.abs() < 9e18 => Val::Int(x.trunc() as i64),
                Some(Val::Str(s)) => s.trim().replace('_', "").parse::<i64>().map_or_else(|_| unknown(), Val::Int),
                _ => unknown(),
            },
            "builtins.float" => match arg(0, "x") {
                Some(Val::Int(i)) => Val::Float(i as f64),
                Some(Val::Float(x)) => Val::Float(x),
                Some(Val::Str(s)) => s.trim().parse::<f64>().map_or_else(|_| unknown(), Val::Float),
                _ => unknown(),
            },
            "builtins.bool" => arg(0, "x").map_or(Val::Bool(false), |v| v.truth().map_or_else(unknown, Val::Bool)),
            "builtins.len" => match arg(0, "obj") {
                Some(Val::Str(s)) => Val::Int(s.chars().count() as i64),
                Some(Val::List(items)) => Val::Int(items.len() as i64),
                Some(Val::Dict(items, Base::Empty)) => Val::Int(items.len() as i64),
                _ => unknown(),
            },
            "builtins.list" | "builtins.tuple" | "builtins.set" | "builtins.frozenset" | "builtins.sorted" | "builtins.reversed" => {
                let Some(v) = arg(0, "iterable") else { return Val::List(Vec::new().into()) };
                let Some(mut items) = self.iterate(&v) else { return unknown() };
                if name == "builtins.sorted" {
                    if items.iter().all(|i| matches!(i, Val::Str(_))) {
                        items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                    } else if items.iter().all(|i| matches!(i, Val::Int(_))) {
                        items.sort_by_key(|i| i.as_int());
                    } else {
                        return unknown();
                    }
                    if args.kw("reverse").and_then(Val::truth) == Some(true) {
                        items.reverse();
                    }
                }
                if name == "builtins.reversed" {
                    items.reverse();
                }
                Val::List(items.into())
            }
            "builtins.dict" => {
                let mut out = match args.pos.first() {
                    None => Val::Dict(Vec::new().into(), Base::Empty),
                    Some(Val::Object(n)) if n == "os.environ" => Val::Dict(Vec::new().into(), Base::Environ),
                    Some(d @ Val::Dict(..)) => d.clone(),
                    Some(Val::List(pairs)) => {
                        let mut items = Vec::new();
                        for p in pairs {
                            match p {
                                Val::List(kv) if kv.len() == 2 => dict_set(&mut items, kv[0].clone(), kv[1].clone()),
                                _ => return unknown(),
                            }
                        }
                        Val::Dict(items.into(), Base::Empty)
                    }
                    Some(Val::Unknown(d)) => Val::Dict(Vec::new().into(), Base::Unknown(d.clone())),
                    Some(_) => return unknown(),
                };
                if let Val::Dict(items, _) = &mut out {
                    for (k, v) in &args.kw {
                        dict_set(items, Val::Str(k.clone()), v.clone());
                    }
                }
                out
            }
            "builtins.range" => {
                let ints: Option<Vec<i64>> = args.pos.iter().map(Val::as_int).collect();
                let Some(ints) = ints else { return unknown() };
                let (start, stop, step) = match ints.as_slice() {
                    [stop] => (0, *stop, 1),
                    [start, stop] => (*start, *stop, 1),
                    [start, stop, step] if *step != 0 => (*start, *stop, *step),
                    _ => return unknown(),
                };
                let mut out = Vec::new();
                let mut i = start;
                while (step > 0 && i < stop) || (step < 0 && i > stop) {
                    if out.len() >= value::MAX_ITEMS {
                        return unknown_as(format!("range of more than {} items", value::MAX_ITEMS));
                    }
                    out.push(Val::Int(i));
                    let Some(next) = i.checked_add(step) else { break };
                    i = next;
                }
                Val::List(out.into())
            }
            "builtins.enumerate" => {
                let start = arg(1, "start").and_then(|s| s.as_int()).unwrap_or(0);
                match arg(0, "iterable").and_then(|v| self.iterate(&v)) {
                    Some(items) => Val::List(
                        items
                            .into_iter()
                            .enumerate()
                            .map(|(k, v)| Val::List(vec![start.checked_add(k as i64).map_or_else(unknown, Val::Int), v].into()))
                            .collect(),
                    ),
                    None => unknown(),
                }
            }
            "builtins.zip" => {
                let lists: Option<Vec<Vec<Val>>> = args.pos.clone().iter().map(|v| self.iterate(v)).collect();
                match lists {
                    Some(lists) if !lists.is_empty() => {
                        let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                        Val::List((0..n).map(|i| Val::List(lists.iter().map(|l| l[i].clone()).collect())).collect())
                    }
                    _ => unknown(),
                }
            }
            "builtins.map" => {
                let f = arg(0, "func").unwrap_or_else(unknown);
                let lists: Option<Vec<Vec<Val>>> = args.pos.iter().skip(1).cloned().collect::<Vec<_>>().iter().map(|v| self.iterate(v)).collect();
                match lists {
                    Some(lists) if !lists.is_empty() => {
                        let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                        let mut out = Vec::new();
                        for i in 0..n {
                            let call_args = Args::positional(lists.iter().map(|l| l[i].clone()).collect());
                            out.push(self.call(f.clone(), call_args, line));
                        }
                        Val::List(out.into())
                    }
                    _ => unknown(),
                }
            }
            "builtins.getattr" => match (arg(0, "object"), arg(1, "name")) {
                (Some(o), Some(Val::Str(attr))) => {
                    let v = self.attribute(o, &attr);
                    match (v.is_unknown(), arg(2, "default")) {
                        (true, Some(d)) => join(vec![v, d]),
                        _ => v,
                    }
                }
                _ => unknown(),
            },
            "builtins.setattr" => {
                if let (Some(o), Some(Val::Str(attr)), Some(v)) = (arg(0, "obj"), arg(1, "name"), arg(2, "value")) {
                    self.set_attr(o, &attr, v, line);
                }
                Val::None
            }
            "operator.setitem" => {
                if let (Some(c), Some(k), Some(v)) = (arg(0, "a"), arg(1, "b"), arg(2, "c")) {
                    self.set_item(None, c, k, v, line);
                }
                Val::None
            }
            "builtins.min" | "builtins.max" => {
                let items = if args.pos.len() == 1 { self.iterate(&args.pos[0]) } else { Some(args.pos.clone()) };
                let ints: Option<Vec<i64>> = items.and_then(|i| i.iter().map(Val::as_int).collect());
                match ints {
                    Some(ints) if name == "builtins.min" => ints.into_iter().min().map_or_else(unknown, Val::Int),
                    Some(ints) => ints.into_iter().max().map_or_else(unknown, Val::Int),
                    None => unknown(),
                }
            }
            "builtins.abs" => match arg(0, "x") {
                Some(Val::Int(i)) => i.checked_abs().map_or_else(unknown, Val::Int),
                Some(Val::Float(x)) => Val::Float(x.abs()),
                _ => unknown(),
            },
            "time.sleep" => Val::None,
            "builtins.exit" | "builtins.quit" | "sys.exit" | "os._exit" | "os.abort" => {
                self.raising = true;
                Val::None
            }
            "threading.Thread" | "multiprocessing.Process" => {
                if let Some(target) = args.kw("target").cloned() {
                    let pos = args.kw("args").and_then(value::items).unwrap_or_default();
                    let kw = match args.kw("kwargs") {
                        Some(Val::Dict(items, Base::Empty)) => items.iter().filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.clone()))).collect(),
                        _ => Vec::new(),
                    };
                    self.cond += 1;
                    self.call(target, Args { pos, kw, open: false }, line);
                    self.cond = self.cond.saturating_sub(1);
                }
                unknown()
            }
            "atexit.register" => {
                let Some(f) = args.pos.first().cloned() else { return unknown() };
                let rest = Args { pos: args.pos[1..].to_vec(), kw: args.kw.clone(), open: args.open };
                self.call(f.clone(), rest, line);
                f
            }
            _ => unknown(),
        }
    }

    /// `os.environ.update(x)`: each item of a dict or list of pairs a write.
    fn environ_update(&mut self, v: Val, line: u64) {
        match v {
            Val::Dict(items, base) => {
                if let Base::Unknown(d) = base {
                    self.env_write(unknown_as(d), Some(unknown_as("unknown values")), EnvWriteKind::Set, line);
                }
                for (k, v) in items {
                    self.env_write(k, Some(v), EnvWriteKind::Set, line);
                }
            }
            Val::List(pairs) => {
                for p in pairs {
                    match p {
                        Val::List(kv) if kv.len() == 2 => self.env_write(kv[0].clone(), Some(kv[1].clone()), EnvWriteKind::Set, line),
                        other => self.env_write(other, Some(unknown_as("a value not known here")), EnvWriteKind::Set, line),
                    }
                }
            }
            Val::Object(n) if n == "os.environ" => {}
            other => {
                let name = match other {
                    Val::Unknown(d) => unknown_as(d),
                    o => unknown_as(value::short(&o)),
                };
                self.env_write(name, Some(unknown_as("unknown values")), EnvWriteKind::Set, line);
            }
        }
    }

    fn record_launch(&mut self, command: Command, env: Option<Val>, cwd: Option<Val>, via: &str, line: u64) {
        let command = match command {
            Command::Argv(argv) => LaunchCommand::Argv(argv.iter().map(|a| self.show(a)).collect()),
            Command::Shell(text) => LaunchCommand::Shell(self.show(&text)),
        };
        let env = match env {
            None | Some(Val::None) => LaunchEnv::Inherited,
            Some(Val::Dict(items, base)) => LaunchEnv::Given {
                base: match base {
                    Base::Empty => EnvBase::Empty,
                    Base::Environ => EnvBase::Environ,
                    Base::Unknown(d) => EnvBase::Unknown(d),
                },
                vars: items.iter().map(|(k, v)| (self.show(k), self.show(v))).collect(),
            },
            Some(Val::Object(n)) if n == "os.environ" => LaunchEnv::Given { base: EnvBase::Environ, vars: Vec::new() },
            Some(Val::Unknown(d)) => LaunchEnv::Given { base: EnvBase::Unknown(d), vars: Vec::new() },
            Some(other) => LaunchEnv::Given { base: EnvBase::Unknown(value::short(&other)), vars: Vec::new() },
        };
        let cwd = cwd.map(|c| self.show(&c));
        let conditional = self.conditional();
        self.launch(PyLaunch { command, env, cwd, via: via.to_string(), line, conditional });
    }

    /// `os.execv(path, args)`, `os.execlpe(file, arg0, ..., env)`,
    /// `os.spawnve(mode, path, args, env)`, `os.posix_spawn(path, argv, env)`.
    fn exec_family(&mut self, name: &str, args: &Args, line: u64) {
        let pos = &args.pos;
        let (argv, env) = if name.starts_with("os.posix_spawn") {
            (pos.get(1).cloned().and_then(|v| value::items(&v)), pos.get(2).cloned().or_else(|| args.kw("env").cloned()))
        } else {
            let suffix = name.trim_start_matches("os.exec").trim_start_matches("os.spawn");
            let skip = usize::from(name.starts_with("os.spawn"));
            let has_env = suffix.ends_with('e');
            let rest = pos.get(skip + 1..).unwrap_or(&[]);
            if suffix.starts_with('v') {
                (rest.first().and_then(value::items), if has_env { rest.get(1).cloned() } else { None })
            } else {
                let (words, env) = match (has_env, rest.split_last()) {
                    (true, Some((env, words))) => (words.to_vec(), Some(env.clone())),
                    _ => (rest.to_vec(), None),
                };
                (Some(words), env)
            }
        };
        let argv = argv.unwrap_or_else(|| vec![unknown_as(format!("arguments of {name}"))]);
        self.record_launch(Command::Argv(argv), env, None, name, line);
    }

    /// `open(path, mode)`: a write when the mode writes (or is unknown:
    /// then conditional).
    pub(super) fn open(&mut self, path: Val, mode: Option<Val>, line: u64) -> Val {
        let mode = match mode {
            None => "r".to_string(),
            Some(Val::Str(m)) => m,
            Some(_) => "?".to_string(),
        };
        let writes = mode == "?" || mode.contains(['w', 'a', 'x', '+']);
        if !writes {
            return Val::File(None);
        }
        let was = self.cond;
        if mode == "?" {
            self.cond += 1;
        }
        let index = self.file_write(path, WriteKind::Open(mode), None, None, line);
        self.cond = was;
        Val::File(index)
    }

    /// `recv.name(args)` on a value; a list or dict method returns the
    /// receiver after the call too (changed by the methods in [`super::value::MUTATING`]).
    pub(super) fn call_method(&mut self, recv: Val, name: &str, args: Args, line: u64) -> (Val, Option<Val>) {
        let arg = |i: usize| args.pos.get(i).cloned();
        match recv {
            Val::List(mut items) => {
                let result = match name {
                    "append" => {
                        items.push(arg(0).unwrap_or_else(unknown));
                        Val::None
                    }
                    "extend" => {
                        match arg(0).and_then(|v| self.iterate(&v)) {
                            Some(more) => items.extend(more),
                            None => items.push(unknown_as("items not known here")),
                        }
                        Val::None
                    }
                    "insert" => {
                        let at = arg(0).and_then(|i| i.as_int()).unwrap_or(0);
                        let at = usize::try_from(at.max(0)).unwrap_or(0).min(items.len());
                        items.insert(at, arg(1).unwrap_or_else(unknown));
                        Val::None
                    }
                    "pop" => {
                        let at = arg(0).and_then(|i| i.as_int()).unwrap_or(-1);
                        match index(at, items.len()) {
                            Some(i) => items.remove(i),
                            None => unknown(),
                        }
                    }
                    "copy" => Val::List(items.clone()),
                    "clear" => {
                        items.clear();
                        Val::None
                    }
                    "sort" | "reverse" | "remove" => return (unknown(), Some(unknown_as("a list changed in place"))),
                    _ => unknown(),
                };
                if items.len() > value::MAX_ITEMS {
                    return (result, Some(unknown_as("a list too long to follow")));
                }
                (result, Some(Val::List(items)))
            }
            Val::Dict(mut items, base) => {
                let key = arg(0).unwrap_or_else(unknown);
                match name {
                    "get" => {
                        let default = arg(1).unwrap_or(Val::None);
                        let found = items.iter().find(|(k, _)| value::equal(k, &key) == Some(true)).map(|(_, v)| v.clone());
                        let v = match (found, &base) {
                            (Some(v), _) => v,
                            (None, Base::Empty) if items.iter().all(|(k, _)| value::equal(k, &key).is_some()) => default,
                            (None, Base::Environ) => self.env_read(&key, Some(default)),
                            _ => join(vec![unknown(), default]),
                        };
                        (v, Some(Val::Dict(items, base)))
                    }
                    "items" | "keys" | "values" if base == Base::Empty => {
                        let v = match name {
                            "items" => items.iter().map(|(k, v)| Val::List(vec![k.clone(), v.clone()].into())).collect(),
                            "keys" => items.iter().map(|(k, _)| k.clone()).collect(),
                            _ => items.iter().map(|(_, v)| v.clone()).collect(),
                        };
                        (Val::List(v), Some(Val::Dict(items, base)))
                    }
                    "copy" => (Val::Dict(items.clone(), base.clone()), Some(Val::Dict(items, base))),
                    "update" => {
                        match arg(0) {
                            Some(Val::Dict(more, b)) => {
                                if b != Base::Empty {
                                    return (Val::None, Some(Val::Dict(Vec::new().into(), Base::Unknown("a dict updated from another".into()))));
                                }
                                for (k, v) in more {
                                    dict_set(&mut items, k, v);
                                }
                            }
                            Some(Val::Object(n)) if n == "os.environ" && items.is_empty() => {
                                return (Val::None, Some(Val::Dict(Vec::new().into(), Base::Environ)));
                            }
                            Some(other) => {
                                let d = match other {
                                    Val::Unknown(d) => d,
                                    o => value::short(&o),
                                };
                                dict_set(&mut items, unknown_as(d), unknown_as("values not known here"));
                            }
                            None => {}
                        }
                        for (k, v) in args.kw.clone() {
                            dict_set(&mut items, Val::Str(k), v);
                        }
                        (Val::None, Some(Val::Dict(items, base)))
                    }
                    "setdefault" => {
                        let v = arg(1).unwrap_or(Val::None);
                        match items.iter().find(|(k, _)| value::equal(k, &key) == Some(true)) {
                            Some((_, existing)) => {
                                let existing = existing.clone();
                                (existing, Some(Val::Dict(items, base)))
                            }
                            None => {
                                dict_set(&mut items, key, v.clone());
                                (v, Some(Val::Dict(items, base)))
                            }
                        }
                    }
                    "pop" => {
                        let found = items.iter().position(|(k, _)| value::equal(k, &key) == Some(true));
                        match found {
                            Some(i) => {
                                let (_, v) = items.remove(i);
                                (v, Some(Val::Dict(items, base)))
                            }
                            None => (arg(1).unwrap_or_else(unknown), Some(Val::Dict(items, base))),
                        }
                    }
                    "__setitem__" => {
                        items.set(key, arg(1).unwrap_or_else(unknown));
                        (Val::None, Some(Val::Dict(items, base)))
                    }
                    "clear" => (Val::None, Some(Val::Dict(Vec::new().into(), Base::Empty))),
                    _ => (unknown(), Some(Val::Dict(items, base))),
                }
            }
            Val::File(index) => {
                match (name, index) {
                    ("write", Some(i)) => {
                        if let Some(piece) = arg(0) {
                            self.file_content(i, &piece);
                        }
                    }
                    ("writelines", Some(i)) => {
                        let lines = arg(0).and_then(|v| self.iterate(&v)).unwrap_or_else(|| vec![unknown_as("lines not known here")]);
                        for piece in lines {
                            self.file_content(i, &piece);
                        }
                    }
                    ("__enter__", _) => return (Val::File(index), None),
                    _ => {}
                }
                (if matches!(name, "close" | "flush") { Val::None } else { unknown() }, None)
            }
            Val::Spec(module) => match name {
                "get_filename" => (value::module_file(&module), None),
                _ => (unknown(), None),
            },
            Val::Instance(i) => {
                let method = i.0.class.0.attrs.borrow().get(name).cloned();
                match method {
                    Some(Val::Func(f)) => {
                        let mut args = args;
                        args.pos.insert(0, Val::Instance(i.clone()));
                        (self.call_function(&f, args, line), None)
                    }
                    Some(other) => (self.call(other, args, line), None),
                    None => (unknown(), None),
                }
            }
            Val::Str(_) | Val::Installed(_) => (self.text_method(recv, name, &args, line), None),
            _ => (unknown(), None),
        }
    }

    /// A method of a string, or of a path held as one (`pathlib`).
    fn text_method(&mut self, recv: Val, name: &str, args: &Args, line: u64) -> Val {
        let arg = |i: usize| args.pos.get(i).cloned();
        let text_arg = |i: usize| args.pos.get(i).and_then(|v| v.as_str().map(str::to_string));
        match name {
            // pathlib writes
            "write_text" | "write_bytes" => {
                self.file_write(recv, WriteKind::Write, None, Some(arg(0).or_else(|| args.kw("data").cloned()).unwrap_or_else(unknown)), line);
                unknown()
            }
            "open" => self.open(recv, arg(0).or_else(|| args.kw("mode").cloned()), line),
            "unlink" | "rmdir" => {
                self.file_write(recv, WriteKind::Remove, None, None, line);
                Val::None
            }
            "mkdir" | "touch" => {
                self.file_write(recv, WriteKind::MakeDir, None, None, line);
                Val::None
            }
            "rename" | "replace" if args.pos.len() == 1 => {
                let target = arg(0).unwrap_or_else(unknown);
                self.file_write(target.clone(), WriteKind::Move, Some(recv), None, line);
                target
            }
            "symlink_to" | "hardlink_to" => {
                self.file_write(recv, WriteKind::Link, arg(0), None, line);
                Val::None
            }
            "joinpath" | "__truediv__" => {
                let mut acc = recv;
                for p in &args.pos {
                    match value::path_join(&acc, p) {
                        Some(v) => acc = v,
                        None => return unknown(),
                    }
                }
                acc
            }
            "with_name" => match (value::dirname(&recv), arg(0)) {
                (Some(dir), Some(n)) => value::path_join(&dir, &n).unwrap_or_else(unknown),
                _ => unknown(),
            },
            "with_suffix" => match text_arg(0) {
                Some(suffix) => value::map_text(&recv, |s| {
                    let base = s.rfind('/').map_or(0, |i| i + 1);
                    let stem_end = s[base..].rfind('.').filter(|i| *i > 0).map_or(s.len(), |i| base + i);
                    Some(format!("{}{suffix}", &s[..stem_end]))
                })
                .unwrap_or_else(unknown),
                None => unknown(),
            },
            "resolve" | "absolute" | "as_posix" | "__fspath__" | "expanduser" => match &recv {
                Val::Installed(_) => recv,
                Val::Str(s) if s.starts_with('/') => Val::Str(value::normalize(s)),
                Val::Str(_) if name == "as_posix" || name == "__fspath__" => recv,
                _ => unknown(),
            },
            // strings
            "replace" => match (text_arg(0), text_arg(1)) {
                (Some(old), Some(new)) => {
                    let count = arg(2).and_then(|c| c.as_int());
                    value::map_text(&recv, |s| {
                        Some(match count {
                            Some(n) if n >= 0 => s.replacen(&old, &new, usize::try_from(n).ok()?),
                            _ => s.replace(&old, &new),
                        })
                    })
                    .unwrap_or_else(unknown)
                }
                _ => unknown(),
            },
            "format" => match &recv {
                Val::Str(fmt) => value::brace_format(fmt, &args.pos, &args.kw).map_or_else(unknown, Val::Str),
                _ => unknown(),
            },
            "join" => {
                let Some(items) = arg(0).and_then(|v| self.iterate(&v)) else { return unknown() };
                let mut acc: Option<Val> = None;
                for item in items {
                    acc = Some(match acc {
                        None => item,
                        Some(a) => match value::concat(&a, &recv).and_then(|a| value::concat(&a, &item)) {
                            Some(v) => v,
                            None => return unknown(),
                        },
                    });
                    if let Some(Val::Int(_) | Val::Float(_) | Val::None | Val::List(_) | Val::Dict(..)) = acc {
                        return unknown();
                    }
                }
                acc.unwrap_or(Val::Str(String::new()))
            }
            "strip" | "lstrip" | "rstrip" => {
                let chars = text_arg(0);
                value::map_text(&recv, |s| {
                    let is = |c: char| chars.as_deref().map_or(c.is_whitespace(), |set| set.contains(c));
                    Some(
                        match name {
                            "strip" => s.trim_matches(is),
                            "lstrip" => s.trim_start_matches(is),
                            _ => s.trim_end_matches(is),
                        }
                        .to_string(),
                    )
                })
                .unwrap_or_else(unknown)
            }
            "removeprefix" | "removesuffix" => match text_arg(0) {
                Some(a) => value::map_text(&recv, |s| {
                    Some(if name == "removeprefix" { s.strip_prefix(a.as_str()).unwrap_or(s) } else { s.strip_suffix(a.as_str()).unwrap_or(s) }.to_string())
                })
                .unwrap_or_else(unknown),
                None => unknown(),
            },
            "upper" | "lower" | "title" | "capitalize" | "casefold" | "encode" | "decode" => match &recv {
                Val::Str(s) => Val::Str(match name {
                    "upper" => s.to_uppercase(),
                    "lower" | "casefold" => s.to_lowercase(),
                    "encode" | "decode" => s.clone(),
                    _ => {
                        let mut c = s.chars();
                        c.next().map_or(String::new(), |f| f.to_uppercase().chain(c.flat_map(char::to_lowercase)).collect())
                    }
                }),
                Val::Installed(_) if matches!(name, "encode" | "decode") => recv,
                _ => unknown(),
            },
            "split" | "rsplit" | "splitlines" => {
                let Some(s) = value::text(&recv) else { return unknown() };
                let sep = if name == "splitlines" { None } else { text_arg(0) };
                let max = args.pos.get(1).or_else(|| args.kw("maxsplit")).and_then(Val::as_int).filter(|m| *m >= 0);
                let parts: Vec<String> = match (name, sep, max) {
                    ("splitlines", ..) => s.lines().map(str::to_string).collect(),
                    (_, None, None) => s.split_whitespace().map(str::to_string).collect(),
                    (_, None, Some(_)) => return unknown(),
                    ("split", Some(sep), None) if !sep.is_empty() => s.split(sep.as_str()).map(str::to_string).collect(),
                    ("split", Some(sep), Some(m)) if !sep.is_empty() => {
                        s.splitn(usize::try_from(m).unwrap_or(0) + 1, sep.as_str()).map(str::to_string).collect()
                    }
                    ("rsplit", Some(sep), None) if !sep.is_empty() => s.split(sep.as_str()).map(str::to_string).collect(),
                    ("rsplit", Some(sep), Some(m)) if !sep.is_empty() => {
                        let mut v: Vec<String> = s.rsplitn(usize::try_from(m).unwrap_or(0) + 1, sep.as_str()).map(str::to_string).collect();
                        v.reverse();
                        v
                    }
                    _ => return unknown(),
                };
                if parts.len() > value::MAX_ITEMS {
                    return unknown();
                }
                Val::List(parts.into_iter().map(Val::Str).collect())
            }
            "partition" | "rpartition" => match (value::text(&recv), text_arg(0)) {
                (Some(s), Some(sep)) if !sep.is_empty() => {
                    let found = if name == "partition" { s.find(&sep) } else { s.rfind(&sep) };
                    let parts = match found {
                        Some(i) => [s[..i].to_string(), sep.clone(), s[i + sep.len()..].to_string()],
                        None if name == "partition" => [s.clone(), String::new(), String::new()],
                        None => [String::new(), String::new(), s.clone()],
                    };
                    Val::List(parts.into_iter().map(Val::Str).collect())
                }
                _ => unknown(),
            },
            "startswith" | "endswith" => {
                let Some(s) = value::text(&recv) else { return unknown() };
                let options = match arg(0) {
                    Some(Val::Str(p)) => vec![p],
                    Some(Val::List(items)) => match items.iter().map(|i| i.as_str().map(str::to_string)).collect::<Option<Vec<_>>>() {
                        Some(v) => v,
                        None => return unknown(),
                    },
                    _ => return unknown(),
                };
                Val::Bool(options.iter().any(|p| if name == "startswith" { s.starts_with(p.as_str()) } else { s.ends_with(p.as_str()) }))
            }
            "find" | "rfind" | "count" | "index" => match (value::text(&recv), text_arg(0)) {
                (Some(s), Some(sub)) => match name {
                    "count" if !sub.is_empty() => Val::Int(s.matches(sub.as_str()).count() as i64),
                    "find" | "index" => s.find(&sub).map_or(Val::Int(-1), |i| Val::Int(s[..i].chars().count() as i64)),
                    "rfind" => s.rfind(&sub).map_or(Val::Int(-1), |i| Val::Int(s[..i].chars().count() as i64)),
                    _ => unknown(),
                },
                _ => unknown(),
            },
            "isdigit" | "isalpha" | "isspace" | "isupper" | "islower" => match &recv {
                Val::Str(s) if !s.is_empty() => Val::Bool(match name {
                    "isdigit" => s.chars().all(|c| c.is_ascii_digit()),
                    "isalpha" => s.chars().all(char::is_alphabetic),
                    "isspace" => s.chars().all(char::is_whitespace),
                    "isupper" => s.chars().any(char::is_uppercase) && !s.chars().any(char::is_lowercase),
                    _ => s.chars().any(char::is_lowercase) && !s.chars().any(char::is_uppercase),
                }),
                Val::Str(_) => Val::Bool(false),
                _ => unknown(),
            },
            _ => unknown(),
        }
    }
}

/// What a launch runs, before it is recorded.
enum Command {
    Argv(Vec<Val>),
    Shell(Val),
}

/// The code of `python -c CODE ...` (any `python*` program).
fn python_code(argv: &[Val]) -> Option<String> {
    let program = argv.first()?.as_str()?;
    let base = program.rsplit('/').next().unwrap_or(program);
    if !base.starts_with("python") || argv.get(1)?.as_str()? != "-c" {
        return None;
    }
    argv.get(2)?.as_str().map(str::to_string)
}

fn rot13(c: char) -> char {
    match c {
        'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
        'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
        c => c,
    }
}

/// One name for aliases of the same library object.
fn canonical(name: &str) -> String {
    let name = name.strip_prefix("builtins.builtins.").map_or_else(|| name.to_string(), |n| format!("builtins.{n}"));
    let name = match name.strip_prefix("posixpath.") {
        Some(rest) => format!("os.path.{rest}"),
        None => name,
    };
    let name = match name.strip_prefix("importlib_metadata.") {
        Some(rest) => format!("importlib.metadata.{rest}"),
        None => name,
    };
    let name = match name.strip_prefix("importlib.resources.abc.").or_else(|| name.strip_prefix("importlib_resources.")) {
        Some(rest) => format!("importlib.resources.{rest}"),
        None => name,
    };
    match name.as_str() {
        "pathlib.PosixPath" | "pathlib.PurePath" | "pathlib.PurePosixPath" => "pathlib.Path".into(),
        "io.open" | "codecs.open" | "_io.open" => "builtins.open".into(),
        _ => name,
    }
}

/// The module part of a dotted name: the lowercase components before the
/// first one that names a class.
fn module_of(name: &str) -> String {
    name.split('.').take_while(|part| !part.starts_with(|c: char| c.is_ascii_uppercase())).collect::<Vec<_>>().join(".")
}
