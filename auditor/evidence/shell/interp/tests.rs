//! The interpreter on small scripts: what bash would give.

use super::*;

fn run(script: &str) -> Evaluation {
    run_with(script, &[])
}

fn run_with(script: &str, env: &[(&str, &str)]) -> Evaluation {
    let inputs = Inputs {
        script: "/w/s.sh".into(),
        args: Vec::new(),
        env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        open: false,
        cwd: "/w".into(),
    };
    evaluate(script, &inputs, &NoFiles, Limits::default())
}

/// The launches' argv and the value of `name` in their environment.
fn launches(e: &Evaluation, name: &str) -> Vec<(String, Option<String>)> {
    e.execs
        .iter()
        .filter(|x| crate::evidence::shell::command::launch_of(&x.argv.iter().map(Str::display).collect::<Vec<_>>()).is_some())
        .map(|x| (x.argv.iter().map(Str::display).collect::<Vec<_>>().join(" "), x.env.get(name).map(Str::display)))
        .collect()
}

const FLAG: &str = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE";
const LAUNCH: &str = "python3 -m sglang.launch_server --tp 8";

fn flag_at_launch(script: &str) -> Vec<Option<String>> {
    let e = run(&format!("{script}\n{LAUNCH}\n"));
    assert!(e.problems.iter().all(|p| !p.bound), "{:?}", e.problems);
    launches(&e, FLAG).into_iter().map(|(_, v)| v).collect()
}

#[test]
fn exports_reach_the_launch() {
    assert_eq!(flag_at_launch(&format!("export {FLAG}=1")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("{FLAG}=1")), vec![None]);
    assert_eq!(flag_at_launch(&format!("{FLAG}=1; export {FLAG}")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("export {FLAG}=0; {FLAG}=1")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("export {FLAG}=1; unset {FLAG}")), vec![None]);
    assert_eq!(flag_at_launch(&format!("set -a; {FLAG}=1; set +a")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("declare -x {FLAG}=1")), vec![Some("1".into())]);
}

#[test]
fn functions_arrays_and_namerefs() {
    assert_eq!(flag_at_launch(&format!("setenv() {{ export \"$1=$2\"; }}\nsetenv {FLAG} 1")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("declare -n r={FLAG}; r=1; export {FLAG}")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("A=({FLAG}=1 X=2); export \"${{A[@]}}\"")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("declare -A M=([{FLAG}]=1); for k in \"${{!M[@]}}\"; do export \"$k=${{M[$k]}}\"; done")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch("export SGLANG_NVFP4_CKPT_FP8_{NEXTN,X}_MOE=1").len(), 1);
    assert_eq!(flag_at_launch(&format!("export $(echo {FLAG}=1)")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("readarray -t L <<'E'\n{FLAG}=1\nE\nexport \"${{L[@]}}\"")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("f() {{ local v=1; export {FLAG}=$v; }}; f")), vec![Some("1".into())]);
}

#[test]
fn wrappers_carry_the_setting() {
    let e = run(&format!("env -S '{FLAG}=1 python3 -m sglang.launch_server'\n"));
    assert_eq!(launches(&e, FLAG), vec![("python3 -m sglang.launch_server".into(), Some("1".into()))]);
    let e = run(&format!("sudo -E {FLAG}=1 python3 -m sglang.launch_server\n"));
    assert_eq!(launches(&e, FLAG)[0].1.as_deref(), Some("1"));
    let e = run(&format!("export {FLAG}=1\nsudo python3 -m sglang.launch_server\n"));
    assert_eq!(launches(&e, FLAG)[0].1, None);
    let e = run(&format!("bash -s <<< \"export {FLAG}=1; {LAUNCH}\"\n"));
    assert_eq!(launches(&e, FLAG)[0].1.as_deref(), Some("1"));
    let e = run(&format!("nohup numactl --cpunodebind=0 timeout 10 env {FLAG}=1 {LAUNCH} &\n"));
    assert_eq!(launches(&e, FLAG), vec![(LAUNCH.into(), Some("1".into()))]);
}

#[test]
fn python_the_script_runs_is_evaluated() {
    let e = run(&format!("python3 -c \"import os, runpy; os.environ['{FLAG}'] = '1'; runpy.run_module('sglang.launch_server', run_name='__main__')\"\n"));
    assert_eq!(launches(&e, FLAG), vec![("python3 -m sglang.launch_server".to_string(), Some("1".to_string()))]);
    let e = run(&format!(
        "python3 - <<'EOF'\nimport os, subprocess\nenv = dict(os.environ, {FLAG}='1')\nsubprocess.run(['python3', '-m', 'sglang.launch_server', '--tp', '8'], env=env)\nEOF\n"
    ));
    assert_eq!(launches(&e, FLAG), vec![(LAUNCH.to_string(), Some("1".to_string()))]);
    // The honest twin reads the flag and sets nothing.
    let e = run(&format!("python3 -c \"import os; print(os.environ.get('{FLAG}', '0'))\"\n{LAUNCH}\n"));
    assert_eq!(launches(&e, FLAG), vec![(LAUNCH.to_string(), None)]);
}

#[test]
fn control_flow_follows_known_inputs() {
    let script = format!("if [ \"$EVAL_ONLY\" != true ]; then export {FLAG}=1; fi\n{LAUNCH}\n");
    let eval = run_with(&script, &[("EVAL_ONLY", "true")]);
    assert_eq!(launches(&eval, FLAG)[0].1, None);
    let tput = run_with(&script, &[("EVAL_ONLY", "false")]);
    assert_eq!(launches(&tput, FLAG)[0].1.as_deref(), Some("1"));
    // Saved, flipped and restored around the block that decides.
    let flip = format!("S=$EVAL_ONLY; EVAL_ONLY=false\nif [ \"$EVAL_ONLY\" != true ]; then export {FLAG}=1; fi\nEVAL_ONLY=$S\n{LAUNCH}\n");
    assert_eq!(launches(&run_with(&flip, &[("EVAL_ONLY", "true")]), FLAG)[0].1.as_deref(), Some("1"));
    // case nested in case.
    let nested = format!("case $M in a) case $N in b) export {FLAG}=1;; esac;; esac\n{LAUNCH}\n");
    assert_eq!(launches(&run_with(&nested, &[("M", "a"), ("N", "b")]), FLAG)[0].1.as_deref(), Some("1"));
    assert_eq!(launches(&run_with(&nested, &[("M", "a"), ("N", "c")]), FLAG)[0].1, None);
}

#[test]
fn unknown_conditions_keep_both_arms_marked() {
    let inputs = Inputs { script: "/w/s.sh".into(), args: vec![], env: BTreeMap::new(), open: true, cwd: "/w".into() };
    let e = evaluate(&format!("if [[ -n $X ]]; then export {FLAG}=1; fi\n{LAUNCH}\n"), &inputs, &NoFiles, Limits::default());
    let values: Vec<Option<String>> = launches(&e, FLAG).into_iter().map(|(_, v)| v).collect();
    assert!(values.contains(&Some("1".into())), "{values:?}");
    let marked = e.execs.iter().find(|x| x.env.contains_key(FLAG)).unwrap();
    assert_eq!(marked.ctx.marks.len(), 1);
    assert!(marked.ctx.marks[0].held);
}

#[test]
fn decoded_and_computed_values() {
    assert_eq!(flag_at_launch("source <(echo ZXhwb3J0IFNHTEFOR19OVkZQNF9DS1BUX0ZQOF9ORVhUTl9NT0U9MQ== | base64 -d)"), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("eval \"$(printf '\\x65\\x78\\x70\\x6f\\x72\\x74 {FLAG}=1')\"")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("export {FLAG}=$((0+1))")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("Z=0; export {FLAG}=${{Z/0/1}}")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("W=10; export {FLAG}=${{W:0:1}}")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("AL=2.99; export {FLAG}=$(awk \"BEGIN{{print ($AL-1)/3}}\")")), vec![Some("0.663333".into())]);
    assert_eq!(flag_at_launch(&format!("cat > /tmp/.env <<'EOF'\n{FLAG}=1\nEOF\nexport $(grep -v '^#' /tmp/.env | xargs)")), vec![Some("1".into())]);
    assert_eq!(flag_at_launch(&format!("while IFS== read -r k v; do export \"$k=$v\"; done <<< {FLAG}=1")), vec![Some("1".into())]);
}

#[test]
fn places_follow_the_text() {
    let e = run(&format!("setenv() {{\n  export \"$1=$2\"\n}}\nsetenv {FLAG} 1\n{LAUNCH}\n"));
    let a = e.assigns.iter().find(|a| a.name == FLAG).unwrap();
    assert_eq!(a.name_at.line, 4, "the call site wrote the name");
    assert_eq!(a.ctx.at.line, 2, "the export ran in the function");
    assert!(matches!(&a.ctx.chain[..], [Call { kind: CallKind::Function(f), at, defined: Some(d) }] if f == "setenv" && at.line == 4 && d.line == 1));
}

#[test]
fn comments_ending_in_a_backslash_do_not_swallow_the_next_line() {
    assert_eq!(flag_at_launch(&format!("# note \\\nexport {FLAG}=1")), vec![Some("1".into())]);
}

#[test]
fn bounds_trip_as_problems_and_keep_what_was_found() {
    // A loop whose counter has no bound the inputs give: widened, not run forever.
    let e = run(&format!("export {FLAG}=1\nwhile [ $i -lt $N ]; do i=$((i+1)); done\n{LAUNCH}\n"));
    assert!(!e.bounded(), "{:?}", e.problems);
    assert_eq!(launches(&e, FLAG).len(), 1);
    // A loop past the iteration limit trips it and keeps what came before.
    let inputs = Inputs { script: "/w/s.sh".into(), args: Vec::new(), env: Default::default(), open: false, cwd: "/w".into() };
    let e = evaluate(
        &format!("export {FLAG}=1\n{LAUNCH}\nfor ((i=0; i<100000; i++)); do :; done\n"),
        &inputs,
        &NoFiles,
        Limits { iterations: 3, ..Limits::default() },
    );
    assert!(e.bounded());
    assert_eq!(launches(&e, FLAG).len(), 1);
    let e = run(&format!("f() {{ f; }}\nf\nexport {FLAG}=1\n{LAUNCH}\n"));
    assert!(e.bounded());
    let e = run("echo $(( - - - - 1 ))\n");
    assert!(!e.bounded());
}

/// Every script of a tree (`AUDITOR_INTERP_TREE`), evaluated for both
/// kinds of job: what each launches and what it could not examine.
#[test]
#[ignore = "a survey over a real tree, run by hand"]
fn survey_tree() {
    struct Tree(std::path::PathBuf);
    impl Files for Tree {
        fn read(&self, path: &str) -> Option<String> {
            let rel = path.strip_prefix("/workspace/")?;
            std::fs::read_to_string(self.0.join(rel)).ok()
        }
        fn find_tail(&self, tail: &str) -> Option<(String, String)> {
            let text = std::fs::read_to_string(self.0.join(tail)).ok()?;
            Some((format!("/workspace/{tail}"), text))
        }
    }
    let root = std::path::PathBuf::from(std::env::var("AUDITOR_INTERP_TREE").expect("AUDITOR_INTERP_TREE"));
    let mut scripts = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "sh") {
                scripts.push(p);
            }
        }
    }
    scripts.sort();
    if let Ok(only) = std::env::var("AUDITOR_INTERP_ONLY") {
        scripts.retain(|s| s.to_string_lossy().contains(&only));
    }
    let tree = Tree(root.clone());
    let started = std::time::Instant::now();
    for script in &scripts {
        let rel = script.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(script).unwrap();
        for eval in ["true", "false"] {
            let inputs = Inputs {
                script: format!("/workspace/{rel}"),
                args: Vec::new(),
                env: [("EVAL_ONLY".to_string(), eval.to_string())].into(),
                open: true,
                cwd: "/workspace".into(),
            };
            let t = std::time::Instant::now();
            let e = evaluate(&text, &inputs, &tree, Limits::default());
            let launches: Vec<&Exec> =
                e.execs.iter().filter(|x| crate::evidence::shell::command::launch_of(&x.argv.iter().map(Str::display).collect::<Vec<_>>()).is_some()).collect();
            println!(
                "{rel} EVAL_ONLY={eval}: {} execs, {} launches, {} assigns, {} paths, {} steps, {} problems, {:?}",
                e.execs.len(),
                launches.len(),
                e.assigns.len(),
                e.paths,
                e.steps,
                e.problems.len(),
                t.elapsed()
            );
            if std::env::var("AUDITOR_INTERP_SHOW").as_deref() == Ok("all") {
                for x in &e.execs {
                    println!("    exec at {}:{} {:?}", e.file_of(x.ctx.at), x.ctx.at.line, x.argv.iter().map(Str::display).collect::<Vec<_>>());
                }
            }
            if std::env::var("AUDITOR_INTERP_SHOW").is_ok() {
                for x in &launches {
                    println!("    launch at {}:{} {:?}", e.file_of(x.ctx.at), x.ctx.at.line, x.argv.iter().map(Str::display).collect::<Vec<_>>());
                }
            }
            if std::env::var("AUDITOR_INTERP_HOT").is_ok() {
                // Events by the chain of calls they happened in: where the work goes.
                let chain_of = |ctx: &Ctx| {
                    let names: Vec<String> = ctx
                        .chain
                        .iter()
                        .map(|c| match &c.kind {
                            CallKind::Function(f) => f.clone(),
                            k => format!("{k:?}").chars().take(20).collect(),
                        })
                        .collect();
                    names.join(">")
                };
                let mut counts: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
                for a in &e.assigns {
                    counts.entry(chain_of(&a.ctx)).or_default().0 += 1;
                }
                for x in &e.execs {
                    counts.entry(chain_of(&x.ctx)).or_default().1 += 1;
                }
                let mut v: Vec<_> = counts.into_iter().collect();
                v.sort_by_key(|(_, (a, x))| std::cmp::Reverse(a + x));
                for (k, (a, x)) in v.iter().take(15) {
                    println!("    hot {a} assigns {x} execs in {k}");
                }
            }
            for p in &e.problems {
                println!("    problem {}:{} {}{}", e.file_of(p.at), p.at.line, p.what, if p.bound { " [bound]" } else { "" });
            }
        }
    }
    println!("{} scripts in {:?}", scripts.len(), started.elapsed());
}

/// A path that took an arm of `[ "$X" = text ]` over an input knows X
/// there: later tests of the same are decided, so a script testing one
/// input in three places has two paths, not eight, and the launch of each
/// carries the arguments its arm built, as bash would.
#[test]
fn a_tested_input_is_known_on_the_arm_taken() {
    let script = "A=(--tp 8)\nif [ \"$DP\" = true ]; then A+=(--dp 8); fi\nif [[ \"$DP\" == true ]]; then A+=(--enable-dp-attention); fi\nif [ \"$DP\" != \"true\" ]; then A+=(--kv fp8); fi\ncase x in x) [ \"$DP\" = true ] && A+=(--router) ;; esac\npython3 -m sglang.launch_server \"${A[@]}\"\n";
    let inputs = Inputs { script: "/w/s.sh".into(), args: Vec::new(), env: Default::default(), open: true, cwd: "/w".into() };
    let e = evaluate(script, &inputs, &NoFiles, Limits::default());
    let mut got: Vec<String> = launches(&e, "DP").into_iter().map(|(argv, dp)| format!("{argv} [DP={}]", dp.unwrap_or_default())).collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            "python3 -m sglang.launch_server --tp 8 --dp 8 --enable-dp-attention --router [DP=true]".to_string(),
            "python3 -m sglang.launch_server --tp 8 --kv fp8 [DP=]".to_string(),
        ]
    );
    // A test combining two comparisons tells nothing of either alone; an assignment forgets what was learnt.
    let e = evaluate("if [ \"$DP\" = true -o \"$X\" = 1 ]; then python3 -m sglang.launch_server --a; fi\n", &inputs, &NoFiles, Limits::default());
    assert_eq!(launches(&e, "DP"), vec![("python3 -m sglang.launch_server --a".to_string(), None)]);
    let e = evaluate("if ! [ \"$DP\" != true ]; then python3 -m sglang.launch_server --a; fi\n", &inputs, &NoFiles, Limits::default());
    assert_eq!(launches(&e, "DP"), vec![("python3 -m sglang.launch_server --a".to_string(), Some("true".to_string()))]);
    let e = evaluate(
        "if [ \"$DP\" = true ]; then :; else DP=maybe; fi\nif [ \"$DP\" = true ]; then python3 -m sglang.launch_server --dp; fi\n",
        &inputs,
        &NoFiles,
        Limits::default(),
    );
    assert_eq!(launches(&e, "DP").len(), 1);
}

/// A counted loop of a few passes runs exactly; a longer one (a retry loop)
/// is widened after its first passes instead of run pass by pass.
#[test]
fn counted_loops_run_exactly_then_widen() {
    let e = run("A=()\nfor ((i=0; i<4; i++)); do A+=(--x$i); done\npython3 -m sglang.launch_server \"${A[@]}\"\n");
    assert_eq!(launches(&e, "X").into_iter().map(|(a, _)| a).collect::<Vec<_>>(), vec!["python3 -m sglang.launch_server --x0 --x1 --x2 --x3".to_string()]);
    let e = run("for ((i=1; i<=1000; i++)); do t=$(echo try); [ -n \"$t\" ] && break; sleep 1; done\npython3 -m sglang.launch_server --tries \"$i\"\n");
    assert!(e.steps < 40, "{} steps", e.steps);
    assert!(e.problems.iter().all(|p| !p.bound), "{:?}", e.problems);
    let e = run("for ((i=1; i<=1000; i++)); do sleep 1; done\npython3 -m sglang.launch_server --tries \"$i\"\n");
    assert!(e.steps < 40, "{} steps", e.steps);
    assert_eq!(launches(&e, "X").len(), 1);
    // A loop that only computes runs to its bound: its result is known.
    let e = run("L=()\nfor ((n = 1; n <= 32; n++)); do L+=(\"$((n * 4))\"); done\npython3 -m sglang.launch_server --sizes \"${L[*]}\"\n");
    let sizes: Vec<String> = (1..=32).map(|n| (n * 4).to_string()).collect();
    assert_eq!(launches(&e, "X").into_iter().map(|(a, _)| a).collect::<Vec<_>>(), [format!("python3 -m sglang.launch_server --sizes {}", sizes.join(" "))]);
}

/// `mpirun` is taken off as bash's stub of it execs the program: the
/// engine is the launch, and `-x NAME=VALUE` is in its environment.
#[test]
fn mpirun_is_a_wrapper_and_its_x_options_are_environment() {
    let e = run(&format!("mpirun -n 1 --oversubscribe --allow-run-as-root --mca btl tcp -x {FLAG}=1 -x PATH trtllm-serve /m --tp_size 8\n"));
    let execs: Vec<Vec<String>> = e.execs.iter().map(|x| x.argv.iter().map(Str::display).collect()).collect();
    assert_eq!(execs, vec![vec!["trtllm-serve".to_string(), "/m".into(), "--tp_size".into(), "8".into()]]);
    assert_eq!(e.execs[0].env.get(FLAG).map(Str::display).as_deref(), Some("1"));
    assert!(e.assigns.iter().any(|a| a.name == FLAG && a.how == How::Prefix), "{:?}", e.assigns);
}

/// A `while read` loop over input the script has in full runs pass by pass
/// (not widened after two): a runner's sanitising loop over `env` unsets
/// exactly the variables it matches.
#[test]
fn a_loop_over_known_input_runs_every_pass() {
    let script = "while IFS='=' read -r name _; do\n  case \"$name\" in\n    SLURM_*|PMI*) unset \"$name\" ;;\n  esac\ndone < <(env)\npython3 -m sglang.launch_server --tp 8\n";
    let env = [("A", "1"), ("B", "2"), ("C", "3"), ("SLURM_JOB_ID", "4242"), ("D", "4"), ("PMI_RANK", "0"), ("E", "5")];
    let e = run_with(script, &env);
    assert!(e.problems.iter().all(|p| !p.bound), "{:?}", e.problems);
    let x = &e.execs[0];
    let names: Vec<&String> = x.env.keys().collect();
    assert_eq!(names, ["A", "B", "C", "D", "E"], "{:?}", x.env);
}

/// `command -v NAME` prints where the run has NAME: a directory only the
/// run knows, then the name, so a launch through it is still recognised.
#[test]
fn command_v_prints_a_path_ending_in_the_name() {
    let e = run("PY=\"$(command -v python3)\"\n\"$PY\" -m sglang.launch_server --tp 8\n");
    let got: Vec<String> = launches(&e, "X").into_iter().map(|(argv, _)| argv).collect();
    assert_eq!(got.len(), 1, "{:?}", e.execs);
    assert!(got[0].ends_with("/python3 -m sglang.launch_server --tp 8"), "{got:?}");
}

/// A quoted expansion that comes out empty is one empty field (`[ -n "${R:-}" ]`
/// is false), unless it is a list that lists nothing (bash 5).
#[test]
fn a_quoted_empty_expansion_is_one_field() {
    let count = |words: &str| {
        let e = run(&format!("set --\nA=()\nf() {{ COUNT=$#; }}\nf {words}\nexport COUNT\npython3 -m sglang.launch_server\n"));
        launches(&e, "COUNT").pop().and_then(|(_, v)| v)
    };
    for (words, n) in [
        ("\"${R:-}\"", "1"),
        ("\"${R:-}$@\"", "0"),
        ("\"$@\"", "0"),
        ("\"${R:-$@}\"", "1"),
        ("\"${A[@]}\"", "0"),
        ("\"${A[@]:-}\"", "1"),
        ("\"${R:-}${A[@]}\"", "0"),
        ("\"\"", "1"),
        ("\"${!A[@]}\"", "0"),
        ("\"${@:1}\"", "0"),
    ] {
        assert_eq!(count(words).as_deref(), Some(n), "{words}");
    }
    assert_eq!(flag_at_launch(&format!("if [ -n \"${{R:-}}\" ]; then export {FLAG}=1; fi")), vec![None]);
}

/// Pure programs the recipes compute with (`sort -n -u`, `paste -sd,`, `awk
/// BEGIN`), evaluated as bash runs them: each value equals what real bash
/// prints for the same script.
#[test]
fn pure_pipelines_give_what_bash_gives() {
    let scripts = [
        "L=(8 4 100 200 4 12)\nV=$(printf '%s\\n' \"${L[@]}\" | sort -n -u | paste -sd, -)",
        "MAX_NUM_SEQS=4; T=3; L=()\nfor ((n = 1; n <= MAX_NUM_SEQS; n++)); do L+=(\"$((n * T))\"); done\nL+=(100 200 300 400 500)\nC=$(printf '%s\\n' \"${L[@]}\" | sort -n -u | paste -sd, -)\nV=\"{\\\"cudagraph_capture_sizes\\\":[${C}]}\"",
        "V=$(printf '3\\n10\\n2\\n' | sort -rn)",
        "V=$(printf 'a\\nb\\n' | paste -s -d ' ' -)",
        "S=0; R=0.75\nif awk -v s=\"$S\" 'BEGIN { exit !(s > 0) }'; then V=size; elif awk -v r=\"$R\" -v cap=0.75 'BEGIN { exit !(r > cap) }'; then V=over; else V=ratio; fi",
        "S=300; if awk -v s=\"$S\" -v cap=270 'BEGIN { exit !(s > cap) }'; then V=over; else V=fits; fi",
        "V=$(awk \"BEGIN{print (12-1)/4}\")",
    ];
    for script in scripts {
        let real = std::process::Command::new("bash").arg("-c").arg(format!("{script}\nprintf %s \"$V\"")).output().expect("bash runs");
        let bash = String::from_utf8_lossy(&real.stdout).into_owned();
        let e = run(&format!("{script}\nexport V\npython3 -m sglang.launch_server\n"));
        let got = launches(&e, "V").pop().and_then(|(_, v)| v);
        assert_eq!(got.as_deref(), Some(bash.as_str()), "{script}");
        let x = e.execs.iter().find(|x| x.argv.first().and_then(Str::known).as_deref() == Some("python3")).expect("the launch");
        assert!(x.env["V"].is_known(), "{script}: {:?}", x.env["V"]);
    }
}

/// `set -e`: a child shell that fails on some path stops the script there,
/// so a launch after it happens only on the path where it succeeded (marked);
/// in a condition, or without `set -e`, the script goes on unmarked. A
/// cluster `-euo pipefail` takes its option name and sets no positional
/// parameter.
#[test]
fn set_e_after_a_child_shell_that_may_fail_marks_what_follows() {
    let child = "bash -c 'R=\"$(python3 -c \"print(1)\")\"; if [ ! -d \"$R/vllm\" ]; then exit 1; fi'";
    let marks = |script: &str| -> Vec<usize> {
        let e = run(&format!("{script}\n{LAUNCH}\n"));
        e.execs.iter().filter(|x| x.argv.first().map(Str::display).as_deref() == Some("python3") && x.argv.len() > 3).map(|x| x.ctx.marks.len()).collect()
    };
    assert_eq!(marks(&format!("set -euo pipefail\n{child}")), vec![1], "the launch only where the child succeeded");
    assert_eq!(marks(&format!("set -o errexit\n{child}")), vec![1]);
    assert_eq!(marks(child), vec![0], "without set -e the script goes on");
    assert_eq!(marks(&format!("set -e\nif {child}; then :; fi")), vec![0], "in a condition set -e does not stop it");
    assert_eq!(marks(&format!("set -e\n{child} || true")), vec![0], "a failing operand but the last does not stop it");
    assert_eq!(marks("set -e\nbash -c 'exit 3'"), Vec::<usize>::new(), "a child that fails on every path stops the script");
    assert_eq!(flag_at_launch(&format!("set -euo pipefail\nexport {FLAG}=\"${{1:-0}}\"")), vec![Some("0".into())]);
}

/// A container launcher's word the run decides stands for options when
/// the next word the script spells out is an option, or when each value it
/// may take is empty or an option: the image and its command come after.
/// A word followed by the command is the image.
#[test]
fn container_words_the_run_decides_are_options_before_the_image() {
    let image_of = |script: &str| {
        let e = run(&format!("{script}\n"));
        let (launcher, _) = e.containers.last().unwrap_or_else(|| panic!("no container in {script}")).clone();
        (launcher.last().map(Str::display).unwrap_or_default(), launches(&e, "X").into_iter().map(|(argv, _)| argv).collect::<Vec<_>>())
    };
    let launch = "python3 -m sglang.launch_server --tp 8";
    // Open to the run: an input's mounts, then options the script spells out.
    let (image, ran) = image_of(&format!("docker run --rm $(extra_mounts) -v /a:/b --name c img {launch}"));
    assert_eq!((image.as_str(), ran), ("img", vec![launch.to_string()]));
    // One of nothing or an option.
    let (image, _) = image_of(&format!("if [ -n \"$Y\" ]; then M='-v /a:/b'; fi\ndocker run $M img {launch}"));
    assert_eq!(image, "img");
    // The image itself decided by the run: the word before the command.
    let (image, ran) = image_of(&format!("I=$(pick_image)\ndocker run --rm -v /a:/b \"$I\" {launch}"));
    assert_eq!((image.as_str(), ran), ("$(pick_image)", vec![launch.to_string()]));
}

/// Paths joined past the bound keep the arrays they disagree on: a launch
/// that uses them runs once per path again, each array with the value its
/// path gave it, never one path's with another's.
#[test]
fn arrays_paths_disagree_on_split_again_where_a_command_uses_them() {
    let many: String = (1..=4).map(|i| format!("if [ -f /a{i} ]; then V{i}=1; fi\n")).collect();
    let script = format!(
        "if [ -f /dcp ]; then D=(--dcp 4); S=(--spec 3); else D=(); S=(--spec 4 --al 3.24); fi\n{many}CMD=(python3 -m sglang.launch_server \"${{D[@]}}\" \"${{S[@]}}\")\n\"${{CMD[@]}}\"\n"
    );
    let e = run(&script);
    let mut argv: Vec<String> = launches(&e, FLAG).into_iter().map(|(a, _)| a).collect();
    argv.sort();
    argv.dedup();
    assert_eq!(argv, vec!["python3 -m sglang.launch_server --dcp 4 --spec 3", "python3 -m sglang.launch_server --spec 4 --al 3.24"]);
    // Each launch keeps the condition of its arm.
    let held: Vec<Vec<bool>> = e
        .execs
        .iter()
        .map(|x| x.ctx.marks.iter().filter(|m| m.text.contains("/dcp")).map(|m| m.held).collect())
        .filter(|h: &Vec<bool>| !h.is_empty())
        .collect();
    assert!(held.contains(&vec![true]) && held.contains(&vec![false]), "{held:?}");
}
