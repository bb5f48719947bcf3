//! The one program behind every non-pure command name in the sandbox of the
//! bash oracle (tests/it/oracle.rs compiles it with rustc and links each stub
//! name to it). It is never part of the product: it runs only inside the
//! test's bubblewrap sandbox, on launch scripts the test unpacked.
//!
//! Every invocation appends one JSON line to `/.oracle/run/log` (a path the
//! scripts do not know): its argv as received, its whole environment as
//! received, its working directory and its process ids. Then:
//!
//! - a wrapper (`numactl`, `taskset`, `timeout`, `nohup`, `mpirun`, ...) execs
//!   the command it wraps, in the same process and environment, so the stub of
//!   the final program sees what the final program would see (the harness
//!   chains records by process id);
//! - otherwise it behaves as the run's variant says (`/.oracle/run/mode`):
//!   `quiet` succeeds and prints nothing, as on a healthy machine (see
//!   [`healthy`]: a background job runs until killed, setup tools leave
//!   their files), `chatty` is the same machine printing one line, a number,
//!   `loud` prints the marker and exits 1 at once, `runner` answers as the
//!   Slurm tools a runner script waits on.
//!
//! Invoked as `oracle-init WORKDIR PROGRAM ARGS...` it is the sandbox's first
//! process instead: it copies the read-only tree at `/.oracle/tree` to
//! WORKDIR (a tmpfs; what the harness mounted there read-only stays as it
//! is), enters it, runs PROGRAM with the environment it was given and
//! exits as it did, once what PROGRAM left running has recorded itself.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{exit, Command};

const LOG: &str = "/.oracle/run/log";
const MODE: &str = "/.oracle/run/mode";
const SELF: &str = "/.oracle/stub";
const TREE: &str = "/.oracle/tree";
/// The marker a loud stub prints.
const MARKER: &str = "oracle-stub-output";
/// What a chatty stub prints: a number, so what a script reads as one (a
/// context length, a count, a port) varies with the stub too.
const CHATTY_LINE: &str = "7";
/// The job id the runner-stage Slurm stubs hand out.
const JOB_ID: &str = "4242";

fn main() {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let name = argv.first().map(|a| basename(a)).unwrap_or_default();
    if name == "oracle-init" {
        init(&argv[1..]);
    }
    record(&argv);
    if let Some((inner, extra_env)) = wrapped(&name, &argv[1..]) {
        exec_inner(&inner, &extra_env);
    }
    let mode = std::fs::read_to_string(MODE).unwrap_or_default();
    match mode.trim() {
        "loud" => {
            println!("{MARKER}");
            exit(1)
        }
        "runner" => runner(&name),
        "chatty" => {
            // The processes a process tool would list are the sandbox's own
            // stubs, and a pid list of markers sends scripts that walk
            // process trees (`pgrep -P`) round forever.
            if !["ps", "pgrep", "pkill", "pidof", "killall"].contains(&name.as_str()) {
                println!("{CHATTY_LINE}");
            }
            healthy(&name, &argv[1..], false)
        }
        _ => healthy(&name, &argv[1..], true),
    }
}

/// Whether bash started this stub as a background job (`cmd &`): bash gives
/// an asynchronous command /dev/null as its standard input when job control
/// is off, while the harness gives the script an empty file. A program that
/// `xargs` runs gets /dev/null too, but from xargs, not bash.
fn in_background() -> bool {
    let dev_null = std::fs::metadata("/dev/null").map(|m| m.rdev()).ok();
    let stdin = std::fs::metadata("/proc/self/fd/0").ok().filter(|m| m.file_type().is_char_device()).map(|m| m.rdev());
    let parent = std::fs::read_to_string(format!("/proc/{}/comm", std::os::unix::process::parent_id())).unwrap_or_default();
    stdin.is_some() && stdin == dev_null && parent.trim() == "bash"
}

/// How long a healthy background stub runs unless killed: a server until
/// the script stops it (`kill -0 $PID` finds it alive meanwhile), but a
/// script that waits for a background job is not kept waiting forever.
const BACKGROUND_LIFE: std::time::Duration = std::time::Duration::from_secs(3);

/// A healthy machine's program: it succeeds (a quiet one prints nothing, a
/// chatty one its line, already printed), runs on in the background until
/// killed (for [`BACKGROUND_LIFE`] at most), and leaves what a launch script
/// checks for before it starts its engine (kept as few as the snapshot
/// needs):
///
/// - a virtualenv maker (`uv venv D`, `python3 -m venv D`, `virtualenv D`)
///   leaves D whose `bin` is the sandbox's own, holding every program;
/// - `hf download ... --local-dir D` (and `huggingface-cli`) leaves D with a
///   checkpoint's metadata files (`{}`; the index maps no shard);
/// - quiet, `rocm-smi --showmemuse` reports an idle GPU, `--showfw` a MEC
///   firmware.
fn healthy(name: &str, args: &[OsString], quiet: bool) -> ! {
    let s: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let word = |i: usize| s.get(i).map(String::as_str);
    let venv = match (name, word(0), word(1)) {
        ("uv", Some("venv"), _) | ("virtualenv", _, _) => positional(&s[usize::from(name == "uv")..], &["--python", "-p", "--prompt"]),
        (python, Some("-m"), Some("venv")) if python.starts_with("python") => positional(&s[2..], &["--prompt"]),
        _ => None,
    };
    if let Some(dir) = venv {
        let dir = Path::new(&dir);
        let _ = std::fs::create_dir_all(dir);
        let _ = std::os::unix::fs::symlink("/usr/bin", dir.join("bin"));
        let _ = std::fs::write(dir.join("pyvenv.cfg"), "");
    }
    if matches!(name, "hf" | "huggingface-cli") && word(0) == Some("download") {
        let local = s
            .iter()
            .position(|a| a == "--local-dir")
            .and_then(|i| s.get(i + 1))
            .cloned()
            .or_else(|| s.iter().find_map(|a| a.strip_prefix("--local-dir=").map(str::to_string)));
        if let Some(dir) = local {
            let dir = Path::new(&dir);
            let _ = std::fs::create_dir_all(dir);
            for file in ["config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json"] {
                let _ = std::fs::write(dir.join(file), "{}\n");
            }
            let _ = std::fs::write(dir.join("model.safetensors.index.json"), "{\"weight_map\": {}}\n");
        }
    }
    if quiet && name == "rocm-smi" && s.iter().any(|a| a == "--showmemuse") {
        println!("GPU[0]\t\t: GPU Memory Allocated (VRAM%): 0");
    }
    if quiet && name == "rocm-smi" && s.iter().any(|a| a == "--showfw") {
        println!("GPU[0]\t\t: MEC firmware version: \t\t177");
    }
    if in_background() {
        let _ = std::io::stdout().flush();
        std::thread::sleep(BACKGROUND_LIFE);
    }
    exit(0)
}

/// The first word of `args` that is no option (options in `with_arg` take
/// the next word).
fn positional(args: &[String], with_arg: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            return Some(a.to_string());
        }
        i += if with_arg.contains(&a) { 2 } else { 1 };
    }
    None
}

fn basename(arg: &OsStr) -> String {
    let bytes = arg.as_bytes();
    let base = bytes.rsplit(|b| *b == b'/').next().unwrap_or(bytes);
    String::from_utf8_lossy(base).into_owned()
}

/// What the Slurm tools of a runner script print: `salloc` grants job
/// 4242 (on stderr, where the runners grep it), `squeue` lists it.
fn runner(name: &str) -> ! {
    match name {
        "salloc" => eprintln!("salloc: Granted job allocation {JOB_ID}"),
        "squeue" => println!("{JOB_ID}"),
        _ => {}
    }
    exit(0)
}

fn json_str(out: &mut Vec<u8>, s: &OsStr) {
    out.push(b'"');
    for c in String::from_utf8_lossy(s.as_bytes()).chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// One JSON line, written with one `write` on an `O_APPEND` file, so the
/// records of concurrent stubs never interleave.
fn record(argv: &[OsString]) {
    let mut line = Vec::with_capacity(4096);
    line.extend_from_slice(b"{\"argv\":[");
    for (i, a) in argv.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        json_str(&mut line, a);
    }
    line.extend_from_slice(b"],\"env\":{");
    for (i, (k, v)) in std::env::vars_os().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        json_str(&mut line, &k);
        line.push(b':');
        json_str(&mut line, &v);
    }
    line.extend_from_slice(b"},\"cwd\":");
    let cwd = std::env::current_dir().map(|p| p.into_os_string()).unwrap_or_default();
    json_str(&mut line, &cwd);
    line.extend_from_slice(format!(",\"pid\":{},\"ppid\":{}}}\n", std::process::id(), std::os::unix::process::parent_id()).as_bytes());
    let file = std::fs::OpenOptions::new().create(true).append(true).open(LOG);
    if let Ok(mut file) = file {
        let _ = file.write_all(&line);
    }
}

/// Variables a wrapper sets for what it runs (`mpirun -x K=V`, `sudo K=V`).
type Assignments = Vec<(OsString, OsString)>;

/// The command a wrapper runs and the variables it
/// sets for it; `None` when `name` is no wrapper or wraps nothing here
/// (`flock -w 600 9`, `taskset -p`).
fn wrapped(name: &str, args: &[OsString]) -> Option<(Vec<OsString>, Assignments)> {
    let s: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut env = Vec::new();
    let start = match name {
        "nohup" => skip_options(&s, &[], &[], 0),
        "setsid" => skip_options(&s, &[], &[], 0),
        "nice" => skip_options(&s, &["-n", "--adjustment"], &[], 0),
        "ionice" => {
            if s.iter().any(|a| a == "-p" || a == "-P" || a == "-u" || a.starts_with("--pid") || a.starts_with("--pgid") || a.starts_with("--uid")) {
                return None;
            }
            skip_options(&s, &["-c", "--class", "-n", "--classdata"], &[], 0)
        }
        "taskset" => {
            if s.iter().any(|a| a == "-p" || a == "--pid" || (a.starts_with('-') && !a.starts_with("--") && a.contains('p'))) {
                return None;
            }
            // taskset [options] MASK COMMAND...
            skip_options(&s, &[], &[], 1)
        }
        "numactl" => {
            let with_arg = [
                "-i",
                "--interleave",
                "-p",
                "--preferred",
                "-P",
                "--preferred-many",
                "-m",
                "--membind",
                "-N",
                "--cpunodebind",
                "-C",
                "--physcpubind",
                "-w",
                "--weighted-interleave",
            ];
            skip_options(&s, &with_arg, &[], 0)
        }
        "timeout" => skip_options(&s, &["-s", "--signal", "-k", "--kill-after"], &[], 1),
        "stdbuf" => skip_options(&s, &["-i", "--input", "-o", "--output", "-e", "--error"], &[], 0),
        "time" => skip_options(&s, &["-f", "--format", "-o", "--output"], &[], 0),
        "sudo" => {
            let at = skip_options(
                &s,
                &[
                    "-u",
                    "--user",
                    "-g",
                    "--group",
                    "-C",
                    "--close-from",
                    "-D",
                    "--chdir",
                    "-h",
                    "--host",
                    "-p",
                    "--prompt",
                    "-r",
                    "--role",
                    "-t",
                    "--type",
                    "-U",
                    "--other-user",
                    "-T",
                    "--command-timeout",
                ],
                &[],
                0,
            )?;
            let mut at = at;
            while at < s.len() && is_assignment(&s[at]) {
                let (k, v) = s[at].split_once('=').unwrap();
                env.push((k.into(), v.into()));
                at += 1;
            }
            Some(at)
        }
        "mpirun" | "mpiexec" | "orterun" | "prterun" => {
            let with_arg = [
                "-n",
                "-np",
                "-c",
                "--n",
                "--np",
                "-N",
                "--npernode",
                "-npernode",
                "--host",
                "-host",
                "-H",
                "--hostfile",
                "-hostfile",
                "--machinefile",
                "-machinefile",
                "--map-by",
                "-map-by",
                "--bind-to",
                "-bind-to",
                "--rank-by",
                "-rank-by",
                "--wdir",
                "-wdir",
                "--prefix",
                "-prefix",
                "-x",
                "--output-filename",
                "--report-bindings-file",
                "--rankfile",
                "-rf",
                "--app",
                "--personality",
                "--runtime-options",
                "--display",
            ];
            let with_two = ["--mca", "-mca", "--gmca", "-gmca", "--prtemca", "--pmixmca"];
            let at = skip_options(&s, &with_arg, &with_two, 0)?;
            // `-x NAME=VALUE` sets NAME for the ranks; `-x NAME` passes it on.
            let mut i = 0;
            while i < at {
                if s[i] == "-x" && i + 1 < at {
                    if let Some((k, v)) = s[i + 1].split_once('=') {
                        env.push((k.into(), v.into()));
                    }
                    i += 1;
                }
                i += 1;
            }
            Some(at)
        }
        "flock" => {
            let at = skip_options(&s, &["-w", "--timeout", "-E", "--conflict-exit-code"], &[], 1)?;
            // `flock FILE -c STRING` runs STRING with sh; `flock FD` wraps nothing.
            if s.get(at).map(String::as_str) == Some("-c") || s.get(at).map(String::as_str) == Some("--command") {
                let string = args.get(at + 1)?.clone();
                return Some((vec!["sh".into(), "-c".into(), string], env));
            }
            Some(at)
        }
        _ => return None,
    }?;
    if start >= args.len() {
        return None;
    }
    Some((args[start..].to_vec(), env))
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) && !name.starts_with(|c: char| c.is_ascii_digit()),
        None => false,
    }
}

/// The index of the wrapped command in `s`: options (`with_arg` take one
/// argument, as the next word or after `=`; `with_two` take two) are
/// skipped up to `--` or the first other word, then `positional` words
/// (a duration, a mask, a lock file) are skipped.
fn skip_options(s: &[String], with_arg: &[&str], with_two: &[&str], positional: usize) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        let a = s[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if with_two.contains(&a) {
            i += 3;
            continue;
        }
        if with_arg.contains(&a) {
            i += 2;
            continue;
        }
        i += 1;
    }
    let at = i + positional;
    (at <= s.len()).then_some(at)
}

/// Exec the wrapped command through PATH in this process; a name not on
/// PATH becomes a stub of that name, as bash's `command_not_found_handle`
/// would have made it.
fn exec_inner(inner: &[OsString], extra_env: &[(OsString, OsString)]) -> ! {
    let mut cmd = Command::new(&inner[0]);
    cmd.args(&inner[1..]).envs(extra_env.iter().map(|(k, v)| (k, v)));
    let err = cmd.exec();
    if inner[0].as_bytes().contains(&b'/') {
        eprintln!("{}: {err}", inner[0].to_string_lossy());
        exit(127);
    }
    let mut cmd = Command::new(SELF);
    cmd.arg0(&inner[0]).args(&inner[1..]).envs(extra_env.iter().map(|(k, v)| (k, v))).env("ORACLE_CNF", "1");
    let err = cmd.exec();
    eprintln!("{SELF}: {err}");
    exit(127)
}

/// The sandbox's first process: copy the tree, enter WORKDIR, run PROGRAM.
fn init(args: &[OsString]) -> ! {
    if args.len() < 2 {
        eprintln!("oracle-init WORKDIR PROGRAM ARGS...");
        exit(2);
    }
    let workdir = Path::new(&args[0]);
    let copied = std::fs::create_dir_all(workdir).and_then(|()| std::fs::metadata(workdir)).and_then(|m| copy_tree(Path::new(TREE), workdir, m.dev()));
    if let Err(e) = copied {
        eprintln!("oracle-init: copying the tree to {}: {e}", workdir.display());
        exit(2);
    }
    if let Err(e) = std::env::set_current_dir(workdir) {
        eprintln!("oracle-init: {}: {e}", workdir.display());
        exit(2);
    }
    let status = match Command::new(&args[1]).args(&args[2..]).status() {
        Ok(status) => status,
        Err(err) => {
            eprintln!("oracle-init: {}: {err}", args[1].to_string_lossy());
            exit(2)
        }
    };
    settle();
    exit(status.code().unwrap_or_else(|| 128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)))
}

/// How long [`settle`] waits at most for what the script left running.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// A job the script started in the background (`python3 -m ... &`) may not
/// have recorded itself yet when the script ends, on a loaded machine, and
/// bwrap ends the sandbox with the script: the launch would be lost. Wait
/// until every process left is a stub the log holds (a server sleeping
/// until killed), for [`SETTLE`] at most: a loop of bash's that the script
/// left running is not waited out.
fn settle() {
    let me = std::process::id();
    let start = std::time::Instant::now();
    while start.elapsed() < SETTLE {
        let log = std::fs::read_to_string(LOG).unwrap_or_default();
        let recorded: std::collections::BTreeSet<u32> =
            log.lines().filter_map(|l| l.rsplit_once(",\"pid\":")).filter_map(|(_, rest)| rest.split(',').next()?.parse().ok()).collect();
        let pending = std::fs::read_dir("/proc").into_iter().flatten().flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).any(|pid| {
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.rsplit_once(") ").is_none_or(|(_, rest)| rest.starts_with('Z')));
            let stub = std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == Path::new(SELF));
            pid != 1 && pid != me && !zombie && !(stub && recorded.contains(&pid))
        });
        if !pending {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Copy `from` into `to`, except what the harness already mounted there
/// read-only (a directory on another device than the workdir's, `dev`).
fn copy_tree(from: &Path, to: &Path, dev: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if std::fs::symlink_metadata(&dst).is_ok_and(|m| m.dev() != dev) {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&src, &dst, dev)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}
