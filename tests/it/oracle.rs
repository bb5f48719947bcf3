//! The bash side of the differential "bash is the oracle" test: for every
//! single-node benchmark job of the real InferenceX snapshot, what real bash
//! makes the launch script hand the serving engine (argv and environment),
//! for the abstract interpreter (`auditor/evidence/shell/`) to be held to.
//!
//! The product executes nothing from an input (docs: DESIGN.md). This test
//! does: it runs the snapshot's runner and launch scripts, which it unpacked
//! itself, with real bash inside a bubblewrap sandbox it builds: a fresh
//! tmpfs root holding bash, the pure programs the interpreter models (cat,
//! sed, grep, awk, jq, ...), the host's shared libraries read-only, a copy
//! of the tree, a private /tmp, no network and its own pid namespace. Every
//! other program is a stub (tests/oracle/stub.rs): it records its argv,
//! environment and directory to a log the scripts do not know, then exits
//! at once. Wrappers (numactl, timeout, mpirun, ...) exec what they wrap,
//! so the engine's stub sees the engine's environment; a name that is on
//! no PATH reaches the stub through bash's `command_not_found_handle`
//! (prefix assignments reach it: `FOO=1 unknown` records `FOO=1`).
//!
//! Each job runs under stub variants ([`StubVariant`]). Quiet is a healthy
//! machine: every stub succeeds and prints nothing (`rocm-smi` reports an
//! idle GPU), a stub bash starts in the background runs until the script
//! kills it (a server), and the few setup tools whose files a script checks
//! before its launch leave them (a virtualenv, a downloaded checkpoint's
//! metadata: tests/oracle/stub.rs), and the machine has the few files
//! no stub answers for: an RDMA rail's state, an image source a recipe
//! patches ([`MACHINE_FILES`]).
//! Loud is a broken one: every stub prints a marker line and fails at once.
//! Chatty is Quiet's machine printing a number: it varies what stubs
//! print but not whether they succeed. Loud and Chatty also keep programs
//! in /usr/bin only, where Quiet has them in every PATH directory, so
//! `command -v` answers differently. What two runs launch alike did not
//! depend on the stubs' answers; where they differ the interpreter must say
//! "undetermined" ([`compare`]). Two samples are not a proof: where both
//! answers send a script down the same branch (a `grep` that matches
//! neither), bash agrees with itself on something that still depends on
//! the machine. Scripts that stop before their launch under Quiet for such
//! a reason (a file of the image, sysfs, a Python program's output) are
//! listed in [`BLOCKED`].
//!
//! Jobs ([`snapshot_jobs`]) are derived as the workflows derive them:
//!
//! - `utils/process_changelog.py` runs `generate_sweep_configs.py
//!   test-config` over `configs/amd-master.yaml` and `nvidia-master.yaml`:
//!   one matrix row per search-space point and concurrency (`conc-list`, or
//!   `conc-start`..`conc-end` doubling), with `exp-name`, `max-model-len`
//!   (isl + osl + 256), agentic `total-cpu-dram-gb` (from
//!   `configs/runners.yaml` hardware and `dram-utilization`) and the
//!   throughput rows' `recipe-fingerprint` (sha256 of the row's canonical
//!   JSON without conc and exp-name). Eval-only rows: every fixed-seq-len
//!   8k1k row and every agentic row, as `--all-evals` makes them (the
//!   default policy picks a subset of these), with `run-eval` and
//!   `eval-only` true and no fingerprint.
//! - `.github/workflows/run-sweep.yml` passes a row to
//!   `benchmark-tmpl.yml` (`sweep-single-node-*`, `sweep-agentic`,
//!   `sweep-evals`, `sweep-agentic-evals`), whose `env:` block and "Launch
//!   job script" step set the variables ([`workflow_env`]) and run `bash
//!   ./runners/launch_${RUNNER_NAME%%_*}.sh`.
//! - The runner is bash too, so it is run, not read: in the sandbox, with
//!   the tree at a GitHub workspace path, `salloc` granting job 4242 and
//!   every other program stubbed. Its `srun ... bash SCRIPT` or `docker run
//!   ... --entrypoint=/bin/bash IMAGE SCRIPT` names the launch script, the
//!   container's working directory, and the environment: srun's
//!   `--export=ALL,K=V` (its own environment plus K=V, plus SLURM_JOB_ID and
//!   SLURMD_NODENAME), docker's `-e NAME`/`-e NAME=V` only. The container's
//!   PATH is a standard one; the image's own variables are unknown and not
//!   modelled.
//! - A runner label of several node kinds (`b200`: b200-cw, b200-nb,
//!   b200-dgxc) gives a job per kind, on its first node.
//!
//! Left out: multi-node jobs (their launch goes through srt-slurm recipes,
//! an `srtctl` Python tool and Slurm, not a bash script with an engine
//! command line; a later step), scripts no master-config entry runs
//! (`fixed_seq_len/deprecated/`, speedbench), and GitHub secrets, which are
//! placeholders (`oracle-secret-<NAME>`).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One job of the snapshot: a launch script and the environment it starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OracleJob {
    /// The launch script, relative to the tree root (`benchmarks/single_node/...`).
    pub script: String,
    /// Every variable the script's process starts with: the workflow's, the
    /// runner's, the container's PATH.
    pub env: BTreeMap<String, String>,
    /// Config entry key, scenario, point and runner node, for messages.
    pub label: String,
    /// Where the runner mounts the tree in the container and starts the
    /// script (`/workspace`; `/ix` for some images): `$PWD` and the place
    /// of absolute paths like `/workspace/server.log`.
    pub workdir: String,
}

/// How every stub answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StubVariant {
    /// A healthy machine: every stub exits 0 and prints nothing; one bash
    /// started in the background runs until killed (3 s at most); the setup
    /// tools a script checks leave their files (tests/oracle/stub.rs).
    Quiet,
    /// A broken machine: every stub prints `oracle-stub-output` and exits 1
    /// at once; programs are in /usr/bin only.
    Loud,
    /// Quiet's healthy machine, but every stub prints a line, `7` (a number,
    /// so output a script reads as one varies too; process tools, `ps`,
    /// `pgrep`..., print nothing: the processes they
    /// would list are stubs) and programs are in /usr/bin only: it varies
    /// what stubs print and not whether they succeed, so a `set -e` script
    /// still reaches its launch, which Loud's first failing stub stops.
    Chatty,
}

impl StubVariant {
    fn mode(self) -> &'static str {
        match self {
            StubVariant::Quiet => "quiet",
            StubVariant::Loud => "loud",
            StubVariant::Chatty => "chatty",
        }
    }
}

/// A serving engine the script started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The argv the engine's program received (`python3 -m sglang.launch_server ...`).
    pub argv: Vec<String>,
    /// Its environment, without what bash adds by itself (PWD, OLDPWD,
    /// SHLVL, `_`) and without the harness's BASH_ENV.
    pub env: BTreeMap<String, String>,
    /// The wrappers that exec'd it, outermost first (`mpirun -n 1 ...`).
    pub wrappers: Vec<Vec<String>>,
}

/// One bash run of a job.
#[derive(Debug, Clone, Default)]
pub struct BashRun {
    pub launches: Vec<Launch>,
    /// The argv of every external program the script ran, in order (real
    /// pure programs are not recorded; stubs and wrappers are).
    pub execs: Vec<Vec<String>>,
    /// Bash's exit status; `None` when it was killed (timeout).
    pub status: Option<i32>,
    /// The last lines of its stderr.
    pub stderr_tail: String,
    /// Killed after 10 s, twice.
    pub timed_out: bool,
}

/// A launch as the interpreter reports it; `None` is "undetermined".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterpLaunch {
    pub argv: Vec<Option<String>>,
    pub env: BTreeMap<String, Option<String>>,
    /// Every path reaching it assumed a condition the interpreter could
    /// not decide (a program's output or status, a file the run has): the
    /// interpreter says the launch may happen, not that it does.
    pub assumed: bool,
}

/// Each bash run's limit: `sleep` returns at once under the stubs and a
/// job's run takes a fraction of a second, so one that lasts this long
/// loops or waits forever.
const RUN_TIMEOUT: Duration = Duration::from_secs(10);

/// Parts of the tree no single-node script or runner reads (multi-node
/// recipes, experiments, docs: two thirds of its files), mounted read-only
/// in the workdir instead of copied, which is most of a run's cost.
const NOT_COPIED: [&str; 3] = ["benchmarks/multi_node", "experimental", "docs"];

/// Files of Quiet's healthy machine that launch scripts read or edit before
/// their launch and no stub answers for: a node with an active RDMA rail,
/// and image sources a script patches with `sed -i` (empty: the patch's
/// pattern matches nothing, as on an image that already has it). Loud and
/// Chatty have none of them. `(path, content)`.
const MACHINE_FILES: &[(&str, &str)] =
    &[("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n"), ("/sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py", "")];

/// How much of a run's stderr [`BashRun::stderr_tail`] keeps.
const STDERR_TAIL: usize = 1500;

/// Variables bash sets in its children by itself, and the harness's own.
const NOT_FROM_THE_JOB: [&str; 6] = ["PWD", "OLDPWD", "SHLVL", "_", "BASH_ENV", "ORACLE_CNF"];

/// The PATH of the container a script runs in.
pub(crate) const CONTAINER_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Where a GitHub runner checks the repository out.
const GITHUB_WORKSPACE: &str = "/home/runner/_work/InferenceX/InferenceX";

// ---------------------------------------------------------------- sandbox

/// Programs that stay real: their output follows from their input and the
/// files of the sandbox, which the interpreter models. Each must exist on
/// the host (tests/services/start.sh installs jq, xxd and bc).
#[rustfmt::skip]
const REAL: &[&str] = &[
    "bash", "sh", "dash", "cat", "base64", "xxd", "tr", "grep", "egrep", "fgrep", "sed", "cut", "xargs", "jq", "dirname", "basename", "realpath",
    "readlink", "head", "tail", "sort", "uniq", "wc", "seq", "printf", "echo", "env", "printenv", "tee", "mkdir", "touch", "awk", "rm", "rmdir", "mv",
    "cp", "ln", "chmod", "true", "false", "test", "[", "expr", "mktemp", "od", "paste", "tac", "rev", "fold", "nl", "comm", "join", "md5sum",
    "sha1sum", "sha256sum", "cksum", "numfmt", "bc", "yes", "pwd", "getopt", "cmp", "diff", "which", "truncate", "expand", "unexpand", "fmt", "tsort",
];

/// Stub names on PATH (`command -v NAME` finds them, `/usr/bin/NAME` runs
/// them). Any other name not on PATH becomes a stub through
/// `command_not_found_handle`, but `command -v` does not find it.
#[rustfmt::skip]
const STUBS: &[&str] = &[
    "python", "python3", "python3.10", "python3.11", "python3.12", "pip", "pip3", "uv", "uvx", "hf", "huggingface-cli", "git", "curl", "wget",
    "nvidia-smi", "amd-smi", "rocm-smi", "rocminfo", "sleep", "date", "ls", "find", "stat", "du", "df", "ps", "pgrep", "pkill", "killall", "hostname",
    "whoami", "id", "uname", "nproc", "free", "lscpu", "lsof", "ss", "netstat", "ip", "tput", "docker", "podman", "enroot", "unsquashfs", "srun",
    "salloc", "squeue", "scancel", "scontrol", "sbatch", "sinfo", "sacct", "numactl", "taskset", "timeout", "nohup", "setsid", "nice", "ionice",
    "stdbuf", "time", "sudo", "mpirun", "mpiexec", "flock", "vllm", "sglang", "trtllm-serve", "lm_eval", "aiperf", "nvcc", "gcc", "make", "tar",
    "gzip", "gunzip", "zstd", "unzip", "chown", "shuf", "ldconfig", "apt", "apt-get", "conda", "ray", "nginx", "ibv_devinfo", "patch", "virtualenv",
];

/// What every run of the process shares: the stub, the bin directory, the
/// BASH_ENV file, and how to mount the host's libraries.
struct Sandbox {
    /// Holds `stub`, `oracle-init`, `bashenv`, `bin/`, and the mount points
    /// `run/` and `tree/`; mounted read-only at `/.oracle`.
    dir: PathBuf,
    /// bwrap arguments that give the sandbox the host's libraries.
    lib_args: Vec<String>,
}

fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(build_sandbox)
}

fn host_program(name: &str) -> Option<PathBuf> {
    let name = match name {
        "sh" => "dash",
        other => other,
    };
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

fn build_sandbox() -> Sandbox {
    let bwrap = ["/usr/bin/bwrap", "/bin/bwrap"].iter().any(|p| Path::new(p).is_file());
    assert!(bwrap, "bubblewrap (bwrap) is missing: tests/services/start.sh installs it (tests/run calls it)");
    let missing: Vec<&str> = REAL.iter().copied().filter(|p| host_program(p).is_none()).collect();
    assert!(missing.is_empty(), "the oracle's sandbox needs these programs on the host: {missing:?} (tests/services/start.sh installs them)");
    let source = crate::common::root().join("tests/oracle/stub.rs");
    let stub_source = std::fs::read(&source).unwrap();
    let key = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&stub_source, REAL, STUBS).hash(&mut h);
        h.finish()
    };
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = base.join(format!("oracle-sandbox-{key:016x}"));
    if !dir.join("ready").is_file() {
        // Built beside its final name and renamed into place, so test
        // processes running at once never see half of one.
        let tmp = base.join(format!("oracle-sandbox-{key:016x}.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("bin")).unwrap();
        std::fs::create_dir_all(tmp.join("run")).unwrap();
        std::fs::create_dir_all(tmp.join("tree")).unwrap();
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
        let out = Command::new(&rustc)
            .args(["--edition", "2021", "-C", "opt-level=1", "-C", "debuginfo=0", "-o"])
            .arg(tmp.join("stub"))
            .arg(&source)
            .output()
            .unwrap_or_else(|e| panic!("run {rustc} to build the oracle's stub: {e}"));
        assert!(out.status.success(), "rustc {}: {}", source.display(), String::from_utf8_lossy(&out.stderr));
        std::os::unix::fs::symlink("stub", tmp.join("oracle-init")).unwrap();
        // Names bash cannot find become stubs of that name, with the
        // environment bash gives the handler (prefix assignments included).
        std::fs::write(tmp.join("bashenv"), "command_not_found_handle() { ORACLE_CNF=1 exec -a \"$1\" /.oracle/stub \"${@:2}\"; }\n").unwrap();
        for name in REAL {
            std::fs::copy(host_program(name).unwrap(), tmp.join("bin").join(name)).unwrap();
        }
        for name in STUBS {
            std::os::unix::fs::symlink("/.oracle/stub", tmp.join("bin").join(name)).unwrap();
        }
        std::fs::write(tmp.join("ready"), "").unwrap();
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another process won the race; its copy is the same.
            let _ = std::fs::remove_dir_all(&tmp);
        }
    }
    let mut lib_args = Vec::new();
    for lib in ["/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32"] {
        if Path::new(lib).is_dir() && !Path::new(lib).is_symlink() {
            lib_args.extend(["--ro-bind".to_string(), lib.to_string(), lib.to_string()]);
        }
    }
    for lib in ["/lib", "/lib64", "/lib32", "/libx32"] {
        let path = Path::new(lib);
        if let Ok(target) = std::fs::read_link(path) {
            lib_args.extend(["--symlink".to_string(), target.to_string_lossy().into_owned(), lib.to_string()]);
        } else if path.is_dir() {
            lib_args.extend(["--ro-bind".to_string(), lib.to_string(), lib.to_string()]);
        }
    }
    Sandbox { dir, lib_args }
}

/// One stub invocation, as the stub logged it.
#[derive(Debug, Clone)]
struct Record {
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    pid: u64,
}

/// What one sandboxed bash run left.
struct RawRun {
    records: Vec<Record>,
    status: Option<i32>,
    stderr_tail: String,
    timed_out: bool,
}

/// Run `bash SCRIPT` in a fresh sandbox: `tree` copied to `workdir` and
/// entered, `env` exactly (plus BASH_ENV for the not-found handler), the
/// stubs in `mode`.
fn run_sandboxed(tree: &Path, workdir: &str, script: &str, env: &BTreeMap<String, String>, mode: &str, tail: usize) -> RawRun {
    // A stub answers at once, so bash's own races (a `kill` that lands
    // between a fork and an exec, and is lost to a trap) happen that never
    // do on a real machine; one second try makes them rare enough.
    let run = run_sandboxed_once(tree, workdir, script, env, mode, tail);
    if run.timed_out { run_sandboxed_once(tree, workdir, script, env, mode, tail) } else { run }
}

fn run_sandboxed_once(tree: &Path, workdir: &str, script: &str, env: &BTreeMap<String, String>, mode: &str, tail: usize) -> RawRun {
    let sb = sandbox();
    let run = tempfile::tempdir().unwrap();
    std::fs::write(run.path().join("mode"), mode).unwrap();
    let stderr_file = tempfile::tempfile().unwrap();
    let mut cmd = Command::new("bwrap");
    cmd.args(["--unshare-all", "--die-with-parent", "--new-session"]);
    cmd.args(&sb.lib_args);
    cmd.arg("--ro-bind").arg(&sb.dir).arg("/.oracle");
    cmd.arg("--bind").arg(run.path()).arg("/.oracle/run");
    cmd.arg("--ro-bind").arg(tree).arg("/.oracle/tree");
    cmd.arg("--ro-bind").arg(sb.dir.join("bin")).arg("/usr/bin");
    for big in NOT_COPIED {
        if tree.join(big).is_dir() {
            cmd.arg("--ro-bind").arg(tree.join(big)).arg(format!("{}/{big}", workdir.trim_end_matches('/')));
        }
    }
    if mode == "quiet" {
        let machine = run.path().join("machine");
        for (path, content) in MACHINE_FILES {
            let file = machine.join(path.trim_start_matches('/'));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, content).unwrap();
        }
        let tops: BTreeSet<&str> = MACHINE_FILES.iter().filter_map(|(p, _)| p.trim_start_matches('/').split('/').next()).collect();
        for top in tops {
            cmd.arg("--bind").arg(machine.join(top)).arg(format!("/{top}"));
        }
    }
    cmd.args(["--symlink", "usr/bin", "/bin"]);
    // Every PATH directory holds every program, but under Loud and Chatty
    // only /usr/bin does: where a program is installed (`command -v`) is
    // the machine's business, so the variants answer differently.
    for (target, link) in [("usr/bin", "/sbin"), ("bin", "/usr/sbin"), ("../bin", "/usr/local/bin"), ("../bin", "/usr/local/sbin")] {
        if mode == "loud" || mode == "chatty" {
            cmd.args(["--dir", link]);
        } else {
            cmd.args(["--symlink", target, link]);
        }
    }
    cmd.args(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/"]);
    cmd.args(["/.oracle/oracle-init", workdir, "bash", script]);
    cmd.env_clear().envs(env).env("BASH_ENV", "/.oracle/bashenv");
    // An empty file, not /dev/null: a stub with /dev/null as its input was
    // started in the background by bash (tests/oracle/stub.rs).
    cmd.stdin(tempfile::tempfile().unwrap()).stdout(Stdio::null()).stderr(stderr_file.try_clone().unwrap());
    let mut child = cmd.spawn().expect("run bwrap");
    let start = Instant::now();
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break (status.code(), false);
        }
        if start.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(3));
    };
    let stderr = read_tail(stderr_file, tail);
    let log = std::fs::read_to_string(run.path().join("log")).unwrap_or_default();
    let records = log.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()).map(|v| record_of(&v)).collect();
    RawRun { records, status, stderr_tail: stderr, timed_out }
}

fn read_tail(mut file: std::fs::File, max: usize) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.seek(SeekFrom::End(0)).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(max as u64)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

fn record_of(v: &Value) -> Record {
    let argv = v["argv"].as_array().map(|a| a.iter().map(|s| s.as_str().unwrap_or_default().to_string()).collect()).unwrap_or_default();
    let env = v["env"].as_object().map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect()).unwrap_or_default();
    Record { argv, env, pid: v["pid"].as_u64().unwrap_or(0) }
}

fn program(argv0: &str) -> &str {
    argv0.rsplit('/').next().unwrap_or(argv0)
}

/// The module of `python [options] -m MODULE ...`.
fn python_module(argv: &[String]) -> Option<&str> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "-m" {
            return argv.get(i + 1).map(String::as_str);
        }
        if let Some(module) = a.strip_prefix("-m") {
            return Some(module);
        }
        if a == "-c" || !a.starts_with('-') || a == "-" {
            return None;
        }
        i += if a == "-W" || a == "-X" || a == "--check-hash-based-pycs" { 2 } else { 1 };
    }
    None
}

/// Whether `argv` starts a serving engine: `python -m sglang.launch_server`,
/// `-m vllm.entrypoints...`, `-m atom.entrypoints...`, `sglang serve`,
/// `vllm serve`, `trtllm-serve`.
pub fn is_engine(argv: &[String]) -> bool {
    let Some(first) = argv.first() else { return false };
    match program(first) {
        "trtllm-serve" => true,
        "vllm" | "sglang" => argv.get(1).is_some_and(|a| a == "serve"),
        p if p.starts_with("python") => python_module(argv).is_some_and(|m| {
            m == "sglang.launch_server" || m.starts_with("sglang.srt.entrypoints") || m.starts_with("vllm.entrypoints") || m.starts_with("atom.entrypoints")
        }),
        _ => false,
    }
}

fn job_env(env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    env.iter().filter(|(k, _)| !NOT_FROM_THE_JOB.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Launches and execs of a run's records. A wrapper stub execs in its own
/// process, so records of one pid are one exec chain, the last its final
/// program.
fn bash_run(raw: RawRun) -> BashRun {
    let execs = raw.records.iter().map(|r| r.argv.clone()).collect();
    let mut launches = Vec::new();
    for (i, r) in raw.records.iter().enumerate() {
        let execs_on = raw.records[i + 1..].iter().any(|later| later.pid == r.pid);
        if execs_on || !is_engine(&r.argv) {
            continue;
        }
        let wrappers = raw.records[..i].iter().filter(|w| w.pid == r.pid).map(|w| w.argv.clone()).collect();
        launches.push(Launch { argv: r.argv.clone(), env: job_env(&r.env), wrappers });
    }
    BashRun { launches, execs, status: raw.status, stderr_tail: raw.stderr_tail, timed_out: raw.timed_out }
}

/// Run `job` with real bash in the sandbox, every stub answering as `variant` says.
pub fn run_bash(tree: &Path, job: &OracleJob, variant: StubVariant) -> BashRun {
    bash_run(run_sandboxed(tree, &job.workdir, &job.script, &job.env, variant.mode(), STDERR_TAIL))
}

/// `f` over `items` on two threads (the machine's two cores), in order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 2);
    let next = AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<R>>> = items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    *slots[i].lock().unwrap() = Some(f(item));
                }
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().unwrap().unwrap()).collect()
}

// ---------------------------------------------------------------- jobs

fn yaml_to_json(y: &saphyr::Yaml) -> Value {
    use saphyr::{Scalar, Yaml};
    match y {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
        Yaml::Value(Scalar::FloatingPoint(f)) => serde_json::Number::from_f64(f.into_inner()).map_or(Value::Null, Value::Number),
        Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
        Yaml::Representation(s, _, _) => Value::String(s.to_string()),
        Yaml::Sequence(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        Yaml::Mapping(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                let key = match yaml_to_json(k) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.insert(key, yaml_to_json(v));
            }
            Value::Object(out)
        }
        Yaml::Tagged(_, inner) => yaml_to_json(inner),
        Yaml::Alias(_) | Yaml::BadValue => Value::Null,
    }
}

fn load_yaml(path: &Path) -> Value {
    use saphyr::LoadableYamlNode;
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs = saphyr::Yaml::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    docs.first().map(yaml_to_json).unwrap_or(Value::Null)
}

/// An integer of a YAML file, `2_063_837` (YAML 1.1, as PyYAML reads it) included.
fn int_of(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str().and_then(|s| s.replace('_', "").parse().ok()))
}

/// Python's `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`.
fn canonical_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            out.push('{');
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_str(k, out);
                out.push(':');
                canonical_json(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(v, out);
            }
            out.push(']');
        }
        Value::String(s) => canonical_str(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn canonical_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `process_changelog.recipe_fingerprint`: sha256 of the row without conc and exp-name.
fn recipe_fingerprint(row: &serde_json::Map<String, Value>) -> String {
    use sha2::Digest;
    let recipe: serde_json::Map<String, Value> =
        row.iter().filter(|(k, _)| !["conc", "exp-name", "recipe-fingerprint"].contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut text = String::new();
    canonical_json(&Value::Object(recipe), &mut text);
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// GitHub's `toJSON` of an object: two-space indented, keys in the given order.
fn github_to_json(fields: &[(&str, &Value)]) -> String {
    let mut out = String::from("{\n");
    for (i, (k, v)) in fields.iter().enumerate() {
        out.push_str("  ");
        canonical_str(k, &mut out);
        out.push_str(": ");
        canonical_json(v, &mut out);
        out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
    }
    out.push('}');
    out
}

/// The text GitHub makes of a matrix value in an input or `env:` entry.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The concurrencies of a search-space point (`test-config` doubles from
/// conc-start to conc-end, ending on conc-end).
fn concurrencies(point: &Value) -> Vec<i64> {
    if let Some(list) = point.get("conc-list").and_then(Value::as_array).filter(|l| !l.is_empty()) {
        return list.iter().filter_map(int_of).collect();
    }
    let (Some(mut conc), Some(end)) = (point.get("conc-start").and_then(int_of), point.get("conc-end").and_then(int_of)) else { return Vec::new() };
    let mut out = Vec::new();
    while conc <= end && conc > 0 {
        out.push(conc);
        if conc == end {
            break;
        }
        conc = (conc * 2).min(end);
    }
    out
}

/// `agentic_dram_offload_gb`: the runner's CPU DRAM (capped at 3 TB),
/// scaled by `dram-utilization` and the share of the node's GPUs in use.
fn dram_offload_gb(utilization: &Value, gpus: i64, hardware: Option<&Value>) -> Result<i64, String> {
    let hardware = hardware.ok_or("no hardware entry for the runner in configs/runners.yaml")?;
    let available = hardware.get("available-cpu-dram-mib").and_then(int_of).ok_or("no available-cpu-dram-mib")?.min(2_861_022);
    let per_node = hardware.get("gpus-per-node").and_then(int_of).ok_or("no gpus-per-node")?;
    if gpus > per_node {
        return Err(format!("{gpus} GPUs exceed gpus-per-node={per_node}"));
    }
    // str(float) as a decimal fraction, exactly as Python's Decimal(str(u)).
    let u = match utilization {
        Value::Number(n) => n.as_f64().map(|f| format!("{f}")).unwrap_or_default(),
        Value::String(s) => s.clone(),
        _ => return Err("no dram-utilization".to_string()),
    };
    let (whole, frac) = u.split_once('.').unwrap_or((&u, ""));
    let numerator: u128 = format!("{whole}{frac}").parse().map_err(|_| format!("dram-utilization {u}"))?;
    let scale = 10u128.pow(frac.len() as u32);
    let bytes = available as u128 * 1024 * 1024 * numerator * gpus as u128;
    Ok((bytes / (scale * per_node as u128 * 1_000_000_000)) as i64)
}

/// A matrix row of `generate_sweep_configs.py test-config`, as a workflow
/// receives it, and what the workflow gives the runner.
#[derive(Debug, Clone)]
struct Row {
    /// The master-config entry and its scenario (`fixed-seq-len 8k1k`, `agentic`).
    key: String,
    scenario: String,
    label: String,
    runner: String,
    agentic: bool,
    eval: bool,
    fields: serde_json::Map<String, Value>,
}

/// Every single-node row of the master configs: throughput rows and the
/// eval-only rows `--all-evals` makes; `Err` for entries the generator
/// would refuse.
fn matrix_rows(tree: &Path) -> (Vec<Row>, Vec<String>) {
    let runners = load_yaml(&tree.join("configs/runners.yaml"));
    let mut rows = Vec::new();
    let mut refused = Vec::new();
    for file in ["configs/amd-master.yaml", "configs/nvidia-master.yaml"] {
        let master = load_yaml(&tree.join(file));
        let Some(entries) = master.as_object() else { continue };
        for (key, entry) in entries {
            if entry.get("multinode").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            let s = |k: &str| entry.get(k).cloned().unwrap_or(Value::Null);
            let runner = text(&s("runner"));
            let base = |row: &mut serde_json::Map<String, Value>| {
                for k in ["image", "model", "model-prefix", "precision", "framework", "runner"] {
                    row.insert(k.to_string(), s(k));
                }
            };
            let metadata = |point: &Value, row: &mut serde_json::Map<String, Value>| {
                for k in ["router", "kv-p2p-transfer"] {
                    let v = point.get(k).or_else(|| entry.get(k)).filter(|v| !v.is_null());
                    if let Some(v) = v {
                        row.insert(k.to_string(), v.clone());
                    }
                }
            };
            let prefix = text(&s("model-prefix"));
            let scenarios = s("scenarios");
            for seq in scenarios.get("fixed-seq-len").and_then(Value::as_array).into_iter().flatten() {
                let (isl, osl) = (seq.get("isl").and_then(int_of).unwrap_or(0), seq.get("osl").and_then(int_of).unwrap_or(0));
                let seq_name = match (isl, osl) {
                    (1024, 1024) => "1k1k".to_string(),
                    (8192, 1024) => "8k1k".to_string(),
                    _ => format!("{isl}_{osl}"),
                };
                for point in seq.get("search-space").and_then(Value::as_array).into_iter().flatten() {
                    for conc in concurrencies(point) {
                        let mut row = serde_json::Map::new();
                        base(&mut row);
                        row.insert("isl".into(), isl.into());
                        row.insert("osl".into(), osl.into());
                        row.insert("tp".into(), point.get("tp").cloned().unwrap_or(Value::Null));
                        for (k, default) in [("pp", 1), ("dcp-size", 1), ("pcp-size", 1)] {
                            row.insert(k.into(), point.get(k).cloned().unwrap_or(default.into()));
                        }
                        row.insert("conc".into(), conc.into());
                        row.insert("max-model-len".into(), (isl + osl + 256).into());
                        row.insert("ep".into(), point.get("ep").filter(|v| !v.is_null()).cloned().unwrap_or(1.into()));
                        row.insert("dp-attn".into(), point.get("dp-attn").filter(|v| !v.is_null()).cloned().unwrap_or(false.into()));
                        row.insert("spec-decoding".into(), point.get("spec-decoding").cloned().unwrap_or("none".into()));
                        row.insert("exp-name".into(), format!("{prefix}_{seq_name}").into());
                        row.insert("disagg".into(), entry.get("disagg").cloned().unwrap_or(false.into()));
                        row.insert("run-eval".into(), false.into());
                        metadata(point, &mut row);
                        let label = format!(
                            "{key} {seq_name} tp{} ep{} dpa{} spec-{} conc{conc}",
                            text(&row["tp"]),
                            text(&row["ep"]),
                            text(&row["dp-attn"]),
                            text(&row["spec-decoding"])
                        );
                        // Evals run at 8k1k only.
                        let eval = (isl, osl) == (8192, 1024);
                        let (key, scenario) = (key.clone(), seq_name.clone());
                        rows.push(Row {
                            key: key.clone(),
                            scenario: scenario.clone(),
                            label: label.clone(),
                            runner: runner.clone(),
                            agentic: false,
                            eval: false,
                            fields: row.clone(),
                        });
                        if eval {
                            rows.push(Row { key, scenario, label, runner: runner.clone(), agentic: false, eval: true, fields: row });
                        }
                    }
                }
            }
            for agentic in scenarios.get("agentic-coding").and_then(Value::as_array).into_iter().flatten() {
                for point in agentic.get("search-space").and_then(Value::as_array).into_iter().flatten() {
                    let tp = point.get("tp").and_then(int_of).unwrap_or(0);
                    let (pp, pcp) = (point.get("pp").and_then(int_of).unwrap_or(1), point.get("pcp-size").and_then(int_of).unwrap_or(1));
                    let kv = text(&point.get("kv-offloading").cloned().unwrap_or(Value::Null));
                    let backend = point.get("kv-offload-backend").filter(|v| !v.is_null());
                    let dram = if kv == "dram" {
                        match dram_offload_gb(agentic.get("dram-utilization").unwrap_or(&Value::Null), tp * pp * pcp, runners["hardware"].get(&runner)) {
                            Ok(gb) => gb,
                            Err(e) => {
                                refused.push(format!("{key} agentic: the generator refuses it: {e}"));
                                continue;
                            }
                        }
                    } else {
                        0
                    };
                    let spec = text(&point.get("spec-decoding").cloned().unwrap_or("none".into()));
                    let kv_suffix =
                        if kv == "none" { "kvnone".to_string() } else { format!("kv{kv}-{}", backend.map(|b| text(&b["name"])).unwrap_or_default()) };
                    for conc in concurrencies(point) {
                        let mut row = serde_json::Map::new();
                        base(&mut row);
                        row.insert("tp".into(), tp.into());
                        row.insert("pp".into(), pp.into());
                        row.insert("dcp-size".into(), point.get("dcp-size").cloned().unwrap_or(1.into()));
                        row.insert("pcp-size".into(), pcp.into());
                        row.insert("ep".into(), point.get("ep").filter(|v| !v.is_null()).cloned().unwrap_or(1.into()));
                        row.insert("dp-attn".into(), point.get("dp-attn").filter(|v| !v.is_null()).cloned().unwrap_or(false.into()));
                        row.insert("spec-decoding".into(), spec.clone().into());
                        row.insert("conc".into(), conc.into());
                        row.insert("kv-offloading".into(), kv.clone().into());
                        row.insert("total-cpu-dram-gb".into(), dram.into());
                        row.insert("duration".into(), 3600.into());
                        let spec_suffix = if spec == "none" { String::new() } else { format!("_spec-{spec}") };
                        row.insert("exp-name".into(), format!("{prefix}_tp{tp}_conc{conc}_{kv_suffix}{spec_suffix}").into());
                        row.insert("scenario-type".into(), "agentic-coding".into());
                        if let Some(b) = backend {
                            row.insert("kv-offload-backend".into(), b.clone());
                        }
                        metadata(point, &mut row);
                        let label = format!("{key} agentic tp{tp} ep{} kv-{kv} spec-{spec} conc{conc}", text(&row["ep"]));
                        let (key, scenario) = (key.clone(), "agentic".to_string());
                        rows.push(Row {
                            key: key.clone(),
                            scenario: scenario.clone(),
                            label: label.clone(),
                            runner: runner.clone(),
                            agentic: true,
                            eval: false,
                            fields: row.clone(),
                        });
                        rows.push(Row { key, scenario, label, runner: runner.clone(), agentic: true, eval: true, fields: row });
                    }
                }
            }
        }
    }
    (rows, refused)
}

/// The runner nodes a row may land on: the first node of each kind (the
/// name before `_`, which picks `runners/launch_<kind>.sh`) of the label's
/// list in `configs/runners.yaml`. A label without a list is its own kind,
/// or the runner script whose name starts with it (`h200-dgxc` ->
/// `launch_h200-dgxc-slurm.sh`).
fn runner_nodes(tree: &Path, runners: &Value, label: &str) -> Vec<String> {
    let listed: Vec<String> = runners["labels"].get(label).and_then(Value::as_array).into_iter().flatten().map(text).collect();
    let mut kinds = BTreeSet::new();
    let mut nodes = Vec::new();
    for node in listed {
        let kind = node.split_once('_').map_or(node.as_str(), |(k, _)| k).to_string();
        if kinds.insert(kind) {
            nodes.push(node);
        }
    }
    if nodes.is_empty() {
        let bare = label.strip_prefix("cluster:").unwrap_or(label);
        let mut scripts: Vec<String> = std::fs::read_dir(tree.join("runners"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| Some(n.strip_prefix("launch_")?.strip_suffix(".sh")?.to_string()))
            .filter(|kind| kind.starts_with(bare))
            .collect();
        scripts.sort_by_key(|k| (k.len(), k.clone()));
        nodes.extend(scripts.into_iter().next().map(|kind| format!("{kind}_0")));
    }
    nodes
}

fn secret(name: &str) -> String {
    format!("oracle-secret-{name}")
}

/// What `benchmark-tmpl.yml` gives `runners/launch_*.sh` for `row` on `node`:
/// its `env:` block, the "Launch job script" step's `env:` and exports,
/// and the runner machine's own variables.
fn workflow_env(row: &Row, node: &str) -> BTreeMap<String, String> {
    let f = |k: &str| row.fields.get(k).map(text).unwrap_or_default();
    let mut env = BTreeMap::new();
    let mut set = |k: &str, v: String| {
        env.insert(k.to_string(), v);
    };
    let fingerprint = if row.eval { String::new() } else { recipe_fingerprint(&row.fields) };
    let (isl, osl, max_model_len) = if row.agentic { ("0".into(), "0".into(), "0".into()) } else { (f("isl"), f("osl"), f("max-model-len")) };
    let disagg = if row.agentic { "false".to_string() } else { f("disagg") };
    set("RANDOM_RANGE_RATIO", "0.8".into());
    set("HF_TOKEN", secret("INFERENCEX_OFFICIAL_RO_HF_TOKEN"));
    set("HF_HUB_CACHE", "/mnt/hf_hub_cache/".into());
    set("EXP_NAME", f("exp-name"));
    set("RECIPE_FINGERPRINT", fingerprint.clone());
    set("MODEL", f("model"));
    set("MODEL_PREFIX", f("model-prefix"));
    set("ISL", isl);
    set("OSL", osl);
    set("MAX_MODEL_LEN", max_model_len);
    set("IMAGE", f("image"));
    set("FRAMEWORK", f("framework"));
    set("PRECISION", f("precision"));
    set("TP", f("tp"));
    set("PP_SIZE", f("pp"));
    set("DCP_SIZE", f("dcp-size"));
    set("PCP_SIZE", f("pcp-size"));
    set("EP_SIZE", f("ep"));
    set("DP_ATTENTION", f("dp-attn"));
    set("CONC", f("conc"));
    set("SPEC_DECODING", f("spec-decoding"));
    set("DISAGG", disagg);
    set("RUN_EVAL", row.eval.to_string());
    set("EVAL_ONLY", row.eval.to_string());
    set("SCENARIO_TYPE", if row.agentic { "agentic-coding" } else { "fixed-seq-len" }.into());
    set("SCENARIO_SUBDIR", if row.agentic { "agentic/" } else { "fixed_seq_len/" }.into());
    set("IS_AGENTIC", if row.agentic { "1" } else { "0" }.into());
    set("KV_OFFLOADING", f("kv-offloading"));
    let backend = row.fields.get("kv-offload-backend").filter(|b| b.is_object());
    set("KV_OFFLOAD_BACKEND", backend.map(|b| text(&b["name"])).unwrap_or_default());
    let metadata = |v: &Value| {
        let fields: Vec<(&str, &Value)> = ["name", "version"].iter().filter_map(|k| Some((*k, v.get(*k).filter(|x| !x.is_null())?))).collect();
        github_to_json(&fields)
    };
    set("KV_OFFLOAD_BACKEND_METADATA", if row.agentic { backend.map(metadata).unwrap_or_default() } else { String::new() });
    set("ROUTER_METADATA", row.fields.get("router").filter(|r| r.is_object()).map(metadata).unwrap_or_default());
    set("KV_P2P_TRANSFER", f("kv-p2p-transfer"));
    set("TOTAL_CPU_DRAM_GB", if row.agentic { f("total-cpu-dram-gb") } else { "0".into() });
    set("DURATION", "3600".into());
    set("REQUIRE_POWER", "0".into());
    set("AIPERF_EXPERIMENTAL_FAST", "0".into());
    set("EVAL_LIMIT", String::new());
    set("SWEBENCH_GEN_MODE", String::new());
    set("AIPERF_FAILED_REQUEST_THRESHOLD", "0.10".into());
    set("RESULT_DIR", "/workspace/results".into());
    set("PYTHONDONTWRITEBYTECODE", "1".into());
    set("PYTHONPYCACHEPREFIX", "/tmp/inferencex-pycache".into());
    set("SWEBENCH_USE_MODAL", "true".into());
    set("MODAL_TOKEN_ID", secret("MODAL_TOKEN_ID"));
    set("MODAL_TOKEN_SECRET", secret("MODAL_TOKEN_SECRET"));
    set("SALLOC_EXCLUDE", "b300-005,b300-006".into());
    // The "Launch job script" step.
    let base = format!(
        "{}_{}_{}_tp{}-pp{}-dcp{}-pcp{}-ep{}-dpa{}_disagg-{}_spec-{}_conc{}_{node}",
        f("exp-name"),
        f("precision"),
        f("framework"),
        f("tp"),
        f("pp"),
        f("dcp-size"),
        f("pcp-size"),
        f("ep"),
        f("dp-attn"),
        if row.agentic { "false".to_string() } else { f("disagg") },
        f("spec-decoding"),
        f("conc")
    );
    set("RUNNER_NAME", node.to_string());
    set("RUNNER_TYPE", row.runner.clone());
    set("RESULT_FILENAME_BASE", base.clone());
    set("GITHUB_STEP_SUMMARY", String::new());
    let recipe = if fingerprint.is_empty() { String::new() } else { format!("_recipe-{}", &fingerprint[..16]) };
    set("RESULT_FILENAME", format!("{base}{recipe}"));
    let n = |k: &str| row.fields.get(k).and_then(int_of).unwrap_or(1);
    set("GPU_COUNT", (n("tp") * n("pp") * n("pcp-size")).to_string());
    // The runner machine.
    set("CI", "true".into());
    set("GITHUB_ACTIONS", "true".into());
    set("GITHUB_WORKSPACE", GITHUB_WORKSPACE.into());
    set("HOME", "/home/runner".into());
    set("USER", "runner".into());
    set("PATH", CONTAINER_PATH.into());
    set("RUNNER_OS", "Linux".into());
    set("RUNNER_ARCH", "X64".into());
    set("RUNNER_TEMP", "/home/runner/_work/_temp".into());
    env
}

/// The value of `--name=V` or `--name V` / `-n V` in `argv`.
fn option_value<'a>(argv: &'a [String], names: &[&str]) -> Option<&'a str> {
    for (i, a) in argv.iter().enumerate() {
        for name in names {
            if a == name {
                return argv.get(i + 1).map(String::as_str);
            }
            if let Some(v) = a.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')) {
                return Some(v);
            }
        }
    }
    None
}

fn trim_dir(dir: &str) -> String {
    let trimmed = dir.trim_end_matches('/');
    if trimmed.is_empty() { "/".to_string() } else { trimmed.to_string() }
}

/// The job a runner's launching `srun`/`docker run` starts: its script,
/// the container's working directory and environment.
fn container_job(record: &Record) -> Option<(String, String, BTreeMap<String, String>)> {
    let argv = &record.argv;
    let script = argv.last().filter(|s| s.ends_with(".sh") && s.contains("benchmarks/single_node/"))?.clone();
    let runner_env = job_env(&record.env);
    match program(&argv[0]) {
        "srun" => {
            if argv.len() < 3 || program(&argv[argv.len() - 2]) != "bash" {
                return None;
            }
            let export = option_value(argv, &["--export"]).unwrap_or("ALL");
            let mut env = BTreeMap::new();
            let mut parts = export.split(',');
            if parts.clone().next() == Some("ALL") {
                env = runner_env.clone();
                parts.next();
            } else if matches!(parts.clone().next(), Some("NONE" | "NIL")) {
                parts.next();
            }
            for part in parts {
                if let Some((k, v)) = part.split_once('=') {
                    env.insert(k.to_string(), v.to_string());
                } else if let Some(v) = runner_env.get(part) {
                    env.insert(part.to_string(), v.clone());
                }
            }
            env.insert("SLURM_JOB_ID".into(), option_value(argv, &["--jobid"]).unwrap_or("4242").to_string());
            env.insert("SLURMD_NODENAME".into(), "oracle-node".into());
            env.insert("PATH".into(), CONTAINER_PATH.into());
            let workdir = option_value(argv, &["--container-workdir"]).map_or("/workspace".to_string(), trim_dir);
            Some((script, workdir, env))
        }
        "docker" if argv.get(1).is_some_and(|a| a == "run") => {
            let mut env = BTreeMap::from([("PATH".to_string(), CONTAINER_PATH.to_string()), ("HOME".to_string(), "/root".to_string())]);
            let mut i = 2;
            while i < argv.len() {
                let a = argv[i].as_str();
                let value = if a == "-e" || a == "--env" {
                    i += 1;
                    argv.get(i).map(String::as_str)
                } else {
                    a.strip_prefix("--env=").or_else(|| a.strip_prefix("-e").filter(|v| !v.is_empty()))
                };
                if let Some(v) = value {
                    match v.split_once('=') {
                        Some((k, v)) => {
                            env.insert(k.to_string(), v.to_string());
                        }
                        None => {
                            if let Some(value) = runner_env.get(v) {
                                env.insert(v.to_string(), value.clone());
                            }
                        }
                    }
                }
                i += 1;
            }
            let workdir = option_value(argv, &["-w", "--workdir"]).map_or("/".to_string(), trim_dir);
            Some((script, workdir, env))
        }
        _ => None,
    }
}

/// Every single-node job of the snapshot at `tree`, deduplicated by
/// (script, env), sorted. See the module documentation for how.
#[allow(dead_code, reason = "the entry point of the interpreter's differential test; this module's own tests also want the refusals")]
pub fn snapshot_jobs(tree: &Path) -> Vec<OracleJob> {
    snapshot_jobs_and_refusals(tree).0
}

/// [`snapshot_jobs`], and the rows that make no job, with why (an entry
/// the generator refuses, a runner that exits before launching).
pub fn snapshot_jobs_and_refusals(tree: &Path) -> (Vec<OracleJob>, Vec<String>) {
    derive_jobs(tree, |_| true)
}

/// The jobs of the rows `keep` keeps (it sees them in order).
fn derive_jobs(tree: &Path, mut keep: impl FnMut(&Row) -> bool) -> (Vec<OracleJob>, Vec<String>) {
    let runners = load_yaml(&tree.join("configs/runners.yaml"));
    let (rows, mut refused) = matrix_rows(tree);
    let mut work = Vec::new();
    for row in rows.iter().filter(|r| keep(r)) {
        for node in runner_nodes(tree, &runners, &row.runner) {
            work.push((row, node));
        }
    }
    let outcomes = par_map(&work, |(row, node)| {
        let env = workflow_env(row, node);
        let runner = format!("runners/launch_{}.sh", node.split_once('_').map_or(node.as_str(), |(k, _)| k));
        let label = format!("{}{} on {node}", row.label, if row.eval { " eval-only" } else { "" });
        if !tree.join(&runner).is_file() {
            return Err(format!("{label}: no {runner}"));
        }
        let raw = run_sandboxed(tree, GITHUB_WORKSPACE, &runner, &env, "runner", STDERR_TAIL);
        match raw.records.iter().rev().find_map(container_job) {
            Some((script, _, _)) if !tree.join(&script).is_file() => Err(format!("{label}: {runner} runs {script}, which does not exist")),
            Some((script, workdir, env)) => Ok(OracleJob { script, env, label, workdir }),
            None => Err(format!("{label}: {runner} launched no script (status {:?}): {}", raw.status, last_line(&raw.stderr_tail))),
        }
    });
    let mut jobs = BTreeMap::new();
    for outcome in outcomes {
        match outcome {
            Ok(job) => {
                jobs.entry((job.script.clone(), job.env.clone())).or_insert(job);
            }
            Err(why) => refused.push(why),
        }
    }
    (jobs.into_values().collect(), refused)
}

fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or("")
}

// ---------------------------------------------------------------- compare

/// The interpreter's launches against bash's two runs of one job (Quiet
/// and Loud; or Quiet and Chatty, which keeps the launches of `set -e`
/// scripts that Loud's first failing stub stops): where the two runs agree
/// on a word or variable, the interpreter must give exactly that value (and
/// an unset variable must be absent); where they differ, or a launch or
/// variable exists in one run only, it must say `None`. Launches pair by
/// position. When the two runs' argv lengths differ, their common prefix
/// must be given and every later word must be `None`. One line per
/// mismatch, naming the runs "Quiet" and "Loud".
pub fn compare(bash: &[BashRun; 2], interp: &[InterpLaunch]) -> Vec<String> {
    let [quiet, loud] = bash;
    let mut out = Vec::new();
    let both = quiet.launches.len().min(loud.launches.len());
    let any = quiet.launches.len().max(loud.launches.len());
    if interp.len() < both {
        out.push(format!("bash launches {both} engine(s) under both variants, the interpreter {}", interp.len()));
    }
    // A launch only an undecided condition leads to may be one no stub
    // reaches (a directory a program prints, tested for: neither variant's
    // output names one): bash not reaching it agrees with "it may happen".
    let certain = interp.iter().filter(|l| !l.assumed).count();
    if certain > any {
        out.push(format!("the interpreter reports {certain} launch(es) on paths that assumed nothing, bash at most {any}"));
    }
    for (i, got) in interp.iter().enumerate().take(any) {
        match (quiet.launches.get(i), loud.launches.get(i)) {
            (Some(q), Some(l)) => compare_launch(i, q, l, got, &mut out),
            // Whether the launch happens at all turned on a stub's answer
            // (the interpreter keeps both paths): what it determines of it
            // must be what the one run that reached it gave.
            (q, l) => {
                let (only, seen) = match (q, l) {
                    (Some(q), _) => ("Quiet", q),
                    (_, Some(l)) => ("Loud", l),
                    _ => unreachable!("a launch index below the longer run's count"),
                };
                for (j, w) in got.argv.iter().enumerate() {
                    if let Some(w) = w
                        && seen.argv.get(j) != Some(w)
                    {
                        out.push(format!("launch {i} happens under {only} only, with argv[{j}] {:?}; the interpreter determines {w:?}", seen.argv.get(j)));
                    }
                }
                for (k, v) in &got.env {
                    if let Some(v) = v
                        && seen.env.get(k) != Some(v)
                    {
                        out.push(format!("launch {i} happens under {only} only, with {k}={:?}; the interpreter determines {v:?}", seen.env.get(k)));
                    }
                }
            }
        }
    }
    out
}

fn compare_launch(i: usize, q: &Launch, l: &Launch, got: &InterpLaunch, out: &mut Vec<String>) {
    if q.argv.len() == l.argv.len() {
        if got.argv.len() != q.argv.len() {
            out.push(format!("launch {i}: bash's argv has {} words under both variants, the interpreter's {}", q.argv.len(), got.argv.len()));
        }
        for (j, (qw, lw)) in q.argv.iter().zip(&l.argv).enumerate() {
            let expected = (qw == lw).then_some(qw);
            check_word(i, j, expected, qw, lw, got.argv.get(j), out);
        }
    } else {
        let common = q.argv.iter().zip(&l.argv).take_while(|(a, b)| a == b).count();
        for j in 0..got.argv.len().max(common) {
            let expected = q.argv.get(j).filter(|_| j < common);
            let (qw, lw) = (q.argv.get(j).map_or("<none>", String::as_str), l.argv.get(j).map_or("<none>", String::as_str));
            check_word(i, j, expected, qw, lw, got.argv.get(j), out);
        }
    }
    let names: BTreeSet<&String> = q.env.keys().chain(l.env.keys()).chain(got.env.keys()).collect();
    for name in names {
        let (qv, lv, gv) = (q.env.get(name), l.env.get(name), got.env.get(name));
        match (qv, lv) {
            (Some(a), Some(b)) if a == b => match gv {
                Some(Some(g)) if g == a => {}
                Some(Some(g)) => out.push(format!("launch {i}: {name}: bash {a:?} under both variants, the interpreter {g:?}")),
                Some(None) => out.push(format!("launch {i}: {name}: bash {a:?} under both variants, the interpreter says undetermined")),
                None => out.push(format!("launch {i}: {name}: bash {a:?} under both variants, the interpreter has it unset")),
            },
            (None, None) => {
                if let Some(g) = gv {
                    let said = g.as_ref().map_or("undetermined".to_string(), |g| format!("{g:?}"));
                    out.push(format!("launch {i}: {name}: unset under both variants, the interpreter says {said}"));
                }
            }
            _ => {
                if !matches!(gv, Some(None)) {
                    let said = match gv {
                        Some(Some(g)) => format!("{g:?}"),
                        _ => "unset".to_string(),
                    };
                    out.push(format!("launch {i}: {name}: Quiet {qv:?}, Loud {lv:?} (stub-dependent), the interpreter says {said}, not undetermined"));
                }
            }
        }
    }
}

fn check_word(i: usize, j: usize, expected: Option<&String>, qw: &str, lw: &str, got: Option<&Option<String>>, out: &mut Vec<String>) {
    match (expected, got) {
        (Some(e), Some(Some(g))) if g == e => {}
        (Some(e), Some(Some(g))) => out.push(format!("launch {i}: argv[{j}]: bash {e:?} under both variants, the interpreter {g:?}")),
        (Some(e), Some(None)) => out.push(format!("launch {i}: argv[{j}]: bash {e:?} under both variants, the interpreter says undetermined")),
        (Some(e), None) => out.push(format!("launch {i}: argv[{j}]: bash {e:?} under both variants, missing from the interpreter's argv")),
        (None, Some(Some(g))) => {
            out.push(format!("launch {i}: argv[{j}]: Quiet {qw:?}, Loud {lw:?} (stub-dependent), the interpreter {g:?}, not undetermined"))
        }
        (None, _) => {}
    }
}

// ---------------------------------------------------------------- tests

/// Whether a script's text starts an engine (outside comments).
fn starts_an_engine(text: &str) -> bool {
    let engine = regex::Regex::new(r"sglang\.launch_server|\b(vllm|sglang) serve\b|trtllm-serve|atom\.entrypoints|vllm\.entrypoints").unwrap();
    text.lines().map(|l| l.split(" #").next().unwrap_or(l)).any(|l| !l.trim_start().starts_with('#') && engine.is_match(l))
}

/// Launch scripts whose engine launch bash cannot reach in the sandbox
/// under Quiet for some of their jobs, and what stops it: something no stub
/// answers (sysfs, files of the container image, what a Python program
/// prints). Each must still stop somewhere, or its entry goes.
const BLOCKED: &[(&str, &str)] = &[
    ("benchmarks/single_node/agentic/kimik3_fp4_mi355x_mtp.sh", "apply_k3_container_patches.sh patches the image's vLLM sources first"),
    ("benchmarks/single_node/agentic/minimaxm3_fp8_h200_mtp.sh", "the model's snapshot directory is what a Python program prints (Chatty's marker gets past)"),
];

/// Run `jobs` under Quiet and the `others`; a summary, and what is wrong:
/// a job of a script that starts an engine (and is not [`BLOCKED`])
/// reaching no launch under Quiet, or a [`BLOCKED`] entry no longer needed.
fn run_and_judge(tree: &Path, jobs: &[OracleJob], refused: &[String], started: Instant, others: &[StubVariant]) -> (String, Vec<String>) {
    let derived = started.elapsed();
    let variants: Vec<StubVariant> = std::iter::once(StubVariant::Quiet).chain(others.iter().copied()).collect();
    let runs = par_map(jobs, |job| variants.iter().map(|v| run_bash(tree, job, *v)).collect::<Vec<_>>());
    let scripts: BTreeSet<&str> = jobs.iter().map(|j| j.script.as_str()).collect();
    let launching: BTreeSet<&str> = scripts.iter().copied().filter(|s| std::fs::read_to_string(tree.join(s)).is_ok_and(|t| starts_an_engine(&t))).collect();
    let mut no_launch: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let (mut launches, mut timeouts, mut otherwise) = (vec![0; variants.len()], vec![0; variants.len()], vec![0; variants.len()]);
    for (job, runs) in jobs.iter().zip(&runs) {
        for (v, run) in runs.iter().enumerate() {
            launches[v] += run.launches.len();
            timeouts[v] += usize::from(run.timed_out);
            otherwise[v] += usize::from(run.launches != runs[0].launches);
        }
        let quiet = &runs[0];
        if launching.contains(job.script.as_str()) && quiet.launches.is_empty() {
            let why = if quiet.timed_out { "timed out".to_string() } else { format!("status {:?}: {}", quiet.status, last_line(&quiet.stderr_tail)) };
            no_launch.entry(&job.script).or_default().push(format!("{} ({why})", job.label));
        }
    }
    let per = |counts: &[usize], from: usize| variants.iter().zip(counts).skip(from).map(|(v, n)| format!("{v:?} {n}")).collect::<Vec<_>>().join(", ");
    let mut summary = format!(
        "{} jobs of {} scripts ({} start an engine) in {:.0?} (derived in {:.0?}); {} rows made no job\n\
         engine launches: {}; timeouts: {}; jobs launching otherwise than under Quiet: {}",
        jobs.len(),
        scripts.len(),
        launching.len(),
        started.elapsed(),
        derived,
        refused.len(),
        per(&launches, 0),
        per(&timeouts, 0),
        per(&otherwise, 1),
    );
    for why in refused {
        summary.push_str(&format!("\n  no job: {why}"));
    }
    let mut unrun = Vec::new();
    for dir in ["benchmarks/single_node/agentic", "benchmarks/single_node/fixed_seq_len"] {
        for entry in std::fs::read_dir(tree.join(dir)).into_iter().flatten().flatten() {
            let path = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if path.ends_with(".sh") && !scripts.contains(path.as_str()) {
                unrun.push(path);
            }
        }
    }
    unrun.sort();
    summary.push_str(&format!("\n  scripts of agentic/ and fixed_seq_len/ no job runs: {unrun:?}"));
    let mut wrong = Vec::new();
    for (script, labels) in &no_launch {
        let known = BLOCKED.iter().find(|(s, _)| s == script).map_or("", |(_, why)| *why);
        let known_text = if known.is_empty() { String::new() } else { format!(" [{known}]") };
        summary.push_str(&format!("\n  no launch under Quiet: {script}: {} job(s){known_text}, e.g. {}", labels.len(), labels[0]));
        if known.is_empty() {
            wrong.push(format!("{script}: {} job(s) reach no engine launch under Quiet, e.g. {}", labels.len(), labels[0]));
        }
    }
    for (script, _) in BLOCKED {
        if scripts.contains(script) && !no_launch.contains_key(script) {
            wrong.push(format!("{script} launches in every job now: its BLOCKED entry goes"));
        }
    }
    (summary, wrong)
}

/// A sample of [`snapshot_jobs`] in a tenth of its time (about 300 jobs,
/// derived in seconds): the rows of the lowest concurrency of every entry,
/// scenario and run kind (throughput, eval-only), which reach every script
/// and runner, then one job of each script, run kind and runner kind.
#[allow(dead_code, reason = "for the interpreter's differential test; this module's test wants the refusals")]
pub fn sample_jobs(tree: &Path) -> Vec<OracleJob> {
    sample_jobs_and_refusals(tree).0
}

fn sample_jobs_and_refusals(tree: &Path) -> (Vec<OracleJob>, Vec<String>) {
    let mut seen = BTreeSet::new();
    let (jobs, refused) = derive_jobs(tree, |row| seen.insert((row.key.clone(), row.scenario.clone(), row.eval)));
    let mut seen = BTreeSet::new();
    let runner = |job: &OracleJob| job.env.get("RUNNER_NAME").map(|n| n.split('_').next().unwrap_or_default().to_string());
    let jobs = jobs.into_iter().filter(|j| seen.insert((j.script.clone(), j.env.get("EVAL_ONLY").cloned(), runner(j)))).collect();
    (jobs, refused)
}

/// [`sample_jobs`] under Quiet and Loud, in about a minute.
#[test]
fn bash_runs_a_job_of_every_script() {
    let started = Instant::now();
    let unpacked = crate::common::unpack_shared("tree-843c6254.tar.gz");
    let tree = unpacked.path().join("InferenceX");
    let (jobs, refused) = sample_jobs_and_refusals(&tree);
    let (summary, wrong) = run_and_judge(&tree, &jobs, &refused, started, &[StubVariant::Loud]);
    println!("{summary}");
    assert!(wrong.is_empty(), "{}\n{summary}", wrong.join("\n"));
}

/// Every job under Quiet, Loud and Chatty.
#[test]
#[ignore = "about 3,000 jobs: over ten minutes on two cores; bash_runs_a_job_of_every_script samples them"]
fn bash_runs_every_snapshot_job() {
    let started = Instant::now();
    let unpacked = crate::common::unpack_shared("tree-843c6254.tar.gz");
    let tree = unpacked.path().join("InferenceX");
    let (jobs, refused) = snapshot_jobs_and_refusals(&tree);
    let (summary, wrong) = run_and_judge(&tree, &jobs, &refused, started, &[StubVariant::Loud, StubVariant::Chatty]);
    println!("{summary}");
    assert!(wrong.is_empty(), "{}\n{summary}", wrong.join("\n"));
}

/// A tool, not a check: `ORACLE_JOB=<label substring> cargo test --test it
/// oracle::show_bash_runs -- --ignored --nocapture` prints each matching
/// job's environment and both bash runs (launches, execs, stderr).
#[test]
#[ignore = "a tool: ORACLE_JOB=<substring of a job label> selects the jobs to show"]
fn show_bash_runs() {
    let filter = std::env::var("ORACLE_JOB").unwrap_or_default();
    let unpacked = crate::common::unpack_shared("tree-843c6254.tar.gz");
    let tree = unpacked.path().join("InferenceX");
    let (jobs, refused) = derive_jobs(&tree, |row| format!("{}{}", row.label, if row.eval { " eval-only" } else { "" }).contains(&filter));
    for why in &refused {
        println!("no job: {why}");
    }
    // The first job of each script: a job's siblings differ in little more than CONC.
    let mut seen = BTreeSet::new();
    let brief = std::env::var_os("ORACLE_BRIEF").is_some();
    for job in jobs.iter().filter(|j| seen.insert(j.script.clone())) {
        println!("==== {} ({} in {})", job.label, job.script, job.workdir);
        if !brief {
            println!("{:#?}", job.env);
        }
        for variant in [StubVariant::Quiet, StubVariant::Loud, StubVariant::Chatty] {
            let t = Instant::now();
            let run = bash_run(run_sandboxed(&tree, &job.workdir, &job.script, &job.env, variant.mode(), 200_000));
            let took = t.elapsed();
            println!(
                "---- {variant:?}: status {:?}, timed out {}, {} launch(es), {} exec(s), {took:.0?}",
                run.status,
                run.timed_out,
                run.launches.len(),
                run.execs.len()
            );
            let lines: Vec<&str> = run.stderr_tail.lines().collect();
            if brief {
                println!("{}", lines[lines.len().saturating_sub(6)..].join("\n"));
                continue;
            }
            println!("launches {:#?}\nexecs:", run.launches);
            for exec in &run.execs {
                println!("  {exec:?}");
            }
            println!("stderr:\n{}", lines[lines.len().saturating_sub(400)..].join("\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(argv: &[&str], env: &[(&str, &str)]) -> Launch {
        Launch {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            wrappers: Vec::new(),
        }
    }

    fn run(launches: Vec<Launch>) -> BashRun {
        BashRun { launches, status: Some(0), ..BashRun::default() }
    }

    fn interp(argv: &[Option<&str>], env: &[(&str, Option<&str>)]) -> InterpLaunch {
        InterpLaunch {
            argv: argv.iter().map(|w| w.map(str::to_string)).collect(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.map(str::to_string))).collect(),
            assumed: false,
        }
    }

    #[test]
    fn compare_holds_determined_values_exact_and_stub_dependent_ones_undetermined() {
        let quiet = run(vec![launch(&["vllm", "serve", "m", "--port", "8888"], &[("TP", "8"), ("HOST", "")])]);
        let loud = run(vec![launch(&["vllm", "serve", "m", "--port", "oracle-stub-output"], &[("TP", "8"), ("HOST", "oracle-stub-output"), ("X", "1")])]);
        let bash = [quiet, loud];
        let exact = interp(&[Some("vllm"), Some("serve"), Some("m"), Some("--port"), None], &[("TP", Some("8")), ("HOST", None), ("X", None)]);
        assert_eq!(compare(&bash, &[exact]), Vec::<String>::new());

        let wrong = interp(&[Some("vllm"), Some("serve"), Some("n"), Some("--port"), Some("8888")], &[("TP", None), ("HOST", Some("")), ("Y", Some("1"))]);
        let lines = compare(&bash, &[wrong]);
        assert_eq!(lines.len(), 6, "{lines:#?}");
        assert!(lines[0].contains("argv[2]: bash \"m\" under both variants, the interpreter \"n\""), "{lines:#?}");
        assert!(lines[1].contains("argv[4]: Quiet \"8888\", Loud \"oracle-stub-output\" (stub-dependent)"), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("HOST: Quiet Some(\"\"), Loud Some(\"oracle-stub-output\")")), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("TP: bash \"8\" under both variants, the interpreter says undetermined")), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("X: Quiet None, Loud Some(\"1\") (stub-dependent), the interpreter says unset")), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("Y: unset under both variants, the interpreter says \"1\"")), "{lines:#?}");
    }

    #[test]
    fn compare_counts_launches_and_holds_a_one_variant_launch_to_the_run_that_reached_it() {
        let bash = [run(vec![launch(&["trtllm-serve", "m"], &[]), launch(&["vllm", "serve"], &[("A", "1")])]), run(vec![launch(&["trtllm-serve", "m"], &[])])];
        assert_eq!(compare(&bash, &[]), ["bash launches 1 engine(s) under both variants, the interpreter 0"]);
        let second = interp(&[None, Some("serve")], &[("A", None)]);
        let lines = compare(&bash, &[interp(&[Some("trtllm-serve"), Some("m")], &[]), second.clone(), second.clone()]);
        assert_eq!(lines, ["the interpreter reports 3 launch(es) on paths that assumed nothing, bash at most 2"]);
        // A third launch only an undecided condition leads to may be one neither variant reaches.
        let assumed = InterpLaunch { assumed: true, ..second.clone() };
        assert!(compare(&bash, &[interp(&[Some("trtllm-serve"), Some("m")], &[]), second.clone(), assumed]).is_empty());
        let wrong = interp(&[Some("vllm"), Some("run")], &[("A", Some("0")), ("B", Some("1"))]);
        assert_eq!(
            compare(&bash, &[interp(&[Some("trtllm-serve"), Some("m")], &[]), wrong]),
            [
                "launch 1 happens under Quiet only, with argv[1] Some(\"serve\"); the interpreter determines \"run\"",
                "launch 1 happens under Quiet only, with A=Some(\"1\"); the interpreter determines \"0\"",
                "launch 1 happens under Quiet only, with B=None; the interpreter determines \"1\"",
            ]
        );
    }

    #[test]
    fn compare_gives_argv_of_different_lengths_their_common_prefix() {
        let bash = [run(vec![launch(&["sglang", "serve", "--a", "1"], &[])]), run(vec![launch(&["sglang", "serve", "--b"], &[])])];
        assert!(compare(&bash, &[interp(&[Some("sglang"), Some("serve"), None, None], &[])]).is_empty());
        assert_eq!(compare(&bash, &[interp(&[Some("sglang"), None, Some("--a")], &[])]).len(), 2);
    }

    #[test]
    fn engines_are_recognised_by_argv() {
        let argv = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        for yes in [
            "python3 -m sglang.launch_server --model x",
            "/usr/bin/python3 -u -m atom.entrypoints.openai_server",
            "python -m vllm.entrypoints.openai.api_server",
            "vllm serve m",
            "sglang serve --model-path m",
            "trtllm-serve m",
        ] {
            assert!(is_engine(&argv(yes)), "{yes}");
        }
        for no in ["python3 -m pip install x", "python3 utils/bench.py -m sglang.launch_server", "vllm bench serve", "python3 -c import"] {
            assert!(!is_engine(&argv(no)), "{no}");
        }
    }

    #[test]
    fn python_json_and_github_json_are_written_as_their_tools_write_them() {
        let v: Value = serde_json::json!({"b": [1, true, null], "a": "é\"x", "dp-attn": false});
        let mut out = String::new();
        canonical_json(&v, &mut out);
        assert_eq!(out, r#"{"a":"\u00e9\"x","b":[1,true,null],"dp-attn":false}"#);
        let (name, version) = (Value::from("hicache"), Value::from("1.0"));
        assert_eq!(github_to_json(&[("name", &name), ("version", &version)]), "{\n  \"name\": \"hicache\",\n  \"version\": \"1.0\"\n}");
        assert_eq!(concurrencies(&serde_json::json!({"conc-start": 4, "conc-end": 48})), [4, 8, 16, 32, 48]);
        // 3_095_781 MiB capped at 2_861_022, 0.8 of it, 4 of 8 GPUs.
        let hw = serde_json::json!({"available-cpu-dram-mib": "3_095_781", "gpus-per-node": 8});
        assert_eq!(dram_offload_gb(&Value::from(0.8), 4, Some(&hw)), Ok(1199));
    }

    /// The sandbox itself: a launch through a wrapper and a prefix
    /// assignment, an unknown command, a real pure program's output, the
    /// difference Loud makes, and nothing of the host.
    #[test]
    fn the_sandbox_records_what_bash_launches() {
        let tree = tempfile::tempdir().unwrap();
        crate::common::write_tree(
            tree.path(),
            &[(
                "s.sh",
                "set -x\nN=$(printf 'a\\nb\\n' | wc -l)\nV=$(nvidia-smi --query)\nnot-a-command --flag \"$N\"\n\
                 [ -e /work ] && echo host-visible\nexport PORT=$((8000 + N))\n\
                 FOO=bar timeout 10 numactl --cpunodebind=0 python3 -u -m sglang.launch_server --port $PORT --v \"$V\" > /workspace/server.log 2>&1 &\n\
                 wait\nls /\n",
            )],
        );
        let job = OracleJob {
            script: "s.sh".into(),
            env: BTreeMap::from([("PATH".to_string(), CONTAINER_PATH.to_string()), ("TP".to_string(), "8".to_string())]),
            label: "hand-made".into(),
            workdir: "/workspace".into(),
        };
        let quiet = run_bash(tree.path(), &job, StubVariant::Quiet);
        assert_eq!(quiet.status, Some(0), "{}", quiet.stderr_tail);
        assert!(!quiet.stderr_tail.contains("host-visible"), "{}", quiet.stderr_tail);
        assert_eq!(quiet.launches.len(), 1, "{quiet:#?}");
        let l = &quiet.launches[0];
        assert_eq!(l.argv, ["python3", "-u", "-m", "sglang.launch_server", "--port", "8002", "--v", ""]);
        assert_eq!(
            l.wrappers,
            [
                vec!["timeout", "10", "numactl", "--cpunodebind=0", "python3", "-u", "-m", "sglang.launch_server", "--port", "8002", "--v", ""],
                vec!["numactl", "--cpunodebind=0", "python3", "-u", "-m", "sglang.launch_server", "--port", "8002", "--v", ""]
            ]
        );
        assert_eq!(
            l.env,
            BTreeMap::from([("FOO", "bar"), ("PATH", CONTAINER_PATH), ("PORT", "8002"), ("TP", "8")].map(|(k, v)| (k.to_string(), v.to_string())))
        );
        let programs: Vec<&str> = quiet.execs.iter().map(|a| a[0].as_str()).collect();
        assert_eq!(programs, ["nvidia-smi", "not-a-command", "timeout", "numactl", "python3", "ls"]);
        let loud = run_bash(tree.path(), &job, StubVariant::Loud);
        assert_eq!(loud.launches[0].argv.last().unwrap(), "oracle-stub-output");
        assert_eq!(loud.status, Some(1));
    }

    /// A launch started in the background just before the script ends is
    /// recorded (the sandbox once ended with the script, before the stub
    /// had started: on a loaded machine a launch went missing), and the
    /// script's own status is the run's.
    #[test]
    fn a_launch_left_in_the_background_at_the_end_is_recorded() {
        let tree = tempfile::tempdir().unwrap();
        crate::common::write_tree(tree.path(), &[("s.sh", "python3 -m sglang.launch_server --port 1 &\nexit 3\n")]);
        let job = OracleJob {
            script: "s.sh".into(),
            env: BTreeMap::from([("PATH".to_string(), CONTAINER_PATH.to_string())]),
            label: "hand-made".into(),
            workdir: "/workspace".into(),
        };
        let runs: Vec<BashRun> = par_map(&[(); 8], |()| run_bash(tree.path(), &job, StubVariant::Quiet));
        for run in runs {
            assert_eq!(run.status, Some(3), "{}", run.stderr_tail);
            assert_eq!(run.launches.len(), 1, "{run:#?}");
        }
    }
}
