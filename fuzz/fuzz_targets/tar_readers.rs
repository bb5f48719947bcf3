//! The tool's tar reader against Go's `archive/tar`, the reader container
//! runtimes extract layers with (`tests/tools/gotar -serve`, built once
//! with the machine's Go). On any bytes: where both read the archive they
//! list the same entries (names, link names, types, the data each yields);
//! where one refuses it, what the other listed up to there is the same.
//! A reader refusing what the other reads is counted, not a failure: the
//! tool names a refused layer as not examined, and no runtime applies a
//! layer Go refuses (fuzz/README.md lists the known cases).
#![no_main]

use auditor::tarstream::{Listed, listing};
use libfuzzer_sys::fuzz_target;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

struct Go {
    _child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

fn go() -> &'static Mutex<Go> {
    static GO: OnceLock<Mutex<Go>> = OnceLock::new();
    GO.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("auditor-fuzz-gotar-{}", std::process::id()));
        let bin = dir.join("gotar");
        let source = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/tools/gotar");
        let built = Command::new("go")
            .args(["build", "-o"])
            .arg(&bin)
            .arg(".")
            .current_dir(source)
            .env("GOCACHE", dir.join("gocache"))
            .env("GOPATH", dir.join("gopath"))
            .status()
            .expect("go: install golang-go");
        assert!(built.success(), "go build tests/tools/gotar");
        let mut child = Command::new(&bin).arg("-serve").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let (input, output) = (child.stdin.take().unwrap(), BufReader::new(child.stdout.take().unwrap()));
        Mutex::new(Go { _child: child, input, output })
    })
}

/// Go's listing of `data`.
fn go_listing(data: &[u8]) -> (Vec<Listed>, Option<String>) {
    let mut go = go().lock().unwrap();
    go.input.write_all(&(data.len() as u64).to_be_bytes()).unwrap();
    go.input.write_all(data).unwrap();
    go.input.flush().unwrap();
    let (mut entries, mut error) = (Vec::new(), None);
    loop {
        let mut line = String::new();
        go.output.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            return (entries, error);
        }
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        match value.get("error") {
            Some(e) => error = Some(e.as_str().unwrap_or_default().to_string()),
            None => entries.push(serde_json::from_value(value).unwrap()),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (ours, our_error) = listing(data);
    let (theirs, their_error) = go_listing(data);
    let context = || format!("tool {ours:?} {our_error:?}\ngo   {theirs:?} {their_error:?}");
    match (&our_error, &their_error) {
        (None, None) => assert_eq!(ours, theirs, "{}", context()),
        _ => {
            let shorter = ours.len().min(theirs.len());
            assert_eq!(ours[..shorter], theirs[..shorter], "{}", context());
            // The one that read on without an error read past where the other refused.
            if our_error.is_none() {
                assert!(ours.len() >= theirs.len(), "{}", context());
            }
            if their_error.is_none() {
                assert!(theirs.len() >= ours.len(), "{}", context());
            }
        }
    }
});
