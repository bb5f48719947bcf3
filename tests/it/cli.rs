//! Whole-program behaviour of `auditor audit` on the sample bundles:
//! verdicts, exit codes and every report format.

use crate::common::*;

#[test]
fn pass_sample_passes() {
    let out = audit(&[PASS]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("verdict: PASS"), "{text}");
    assert!(text.contains("jobs:    11 (10 throughput, 1 eval-only)"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");
}

#[test]
fn inherited_forbidden_env_fails_with_rule_file_and_line() {
    let out = audit(&[FAIL_INHERITED]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("forbidden-env/enabled"), "{text}");
    assert!(text.contains("/results/server.log:3"), "{text}");
    assert!(text.contains("inherited"), "{text}");
}

#[test]
fn json_report_has_contract_fields_and_is_deterministic() {
    let first = audit(&[FAIL_INHERITED, "--format", "json"]);
    let second = audit(&[FAIL_INHERITED, "--format", "json"]);
    assert_eq!(first.stdout, second.stdout, "same input, same bytes");
    let report = json(&first);
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["verdict"], "fail");
    assert_eq!(report["inputs"][0]["path"], FAIL_INHERITED);
    assert_eq!(report["inputs"][0]["sha256"].as_str().unwrap().len(), 64);
    let check = &report["checks"][0];
    assert_eq!((check["id"].as_str(), check["status"].as_str()), (Some("forbidden-env"), Some("fail")));
    assert!(check["title"].is_string() && check["summary"].is_string());
    let findings = check["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2, "one finding per failing job");
    for f in findings {
        assert_eq!(f["rule"], "forbidden-env/enabled");
        assert_eq!(f["severity"], "error");
        assert_eq!(f["fingerprint"].as_str().unwrap().len(), 32);
        let evidence = f["evidence"].as_array().unwrap();
        assert_eq!(evidence.len(), 2, "the log is uploaded in two artifacts");
        for e in evidence {
            assert_eq!(e["line"], 3);
            assert_eq!(e["text"], "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=True");
            assert!(e["file"].as_str().unwrap().ends_with("/results/server.log"));
            assert!(e["artifact"].is_string());
        }
    }
    let files = report["files"].as_array().unwrap();
    assert!(files.iter().all(|f| ["read", "skipped"].contains(&f["status"].as_str().unwrap())), "every file accounted for");
    assert!(files.iter().any(|f| f["status"] == "skipped" && f["reason"].as_str().unwrap().contains("CSV")));
}

#[test]
fn sarif_is_2_1_0_with_a_location_on_every_result() {
    let out = audit(&[FAIL_INHERITED, "--format", "sarif"]);
    assert_eq!(code(&out), 1);
    let sarif = json(&out);
    assert_eq!(sarif["version"], "2.1.0");
    assert!(sarif["$schema"].as_str().unwrap().contains("sarif-schema-2.1.0"));
    let run = &sarif["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let results: Vec<_> =
        run["results"].as_array().unwrap().iter().filter(|r| r["level"] == "error" && r["ruleId"].as_str().unwrap().starts_with("forbidden-env/")).collect();
    assert_eq!(results.len(), 2, "one error per failing job");
    for r in run["results"].as_array().unwrap() {
        assert!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string(), "{r}");
    }
    for r in results {
        let rule = r["ruleId"].as_str().unwrap();
        assert!(rules.contains(&rule), "{rule} is declared");
        assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize], rule);
        let loc = &r["locations"][0]["physicalLocation"];
        assert!(loc["artifactLocation"]["uri"].as_str().unwrap().ends_with("/results/server.log"));
        assert_eq!(loc["region"]["startLine"], 3);
    }
}

#[test]
fn junit_parses_with_a_testcase_per_check() {
    // The inherited-flag bundle fails forbidden-env; draft-precision notes the
    // same variable without failing it again (one variable, one report).
    for (bundle, failures) in [(PASS, "0"), (FAIL_INHERITED, "1")] {
        let out = audit(&[bundle, "--format", "junit"]);
        let xml = stdout(&out);
        let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
        let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
        assert_eq!(suite.attribute("failures"), Some(failures));
        let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
        assert!(cases.iter().any(|c| c.attribute("name") == Some("forbidden-env")));
        let failed: Vec<_> = cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("failure"))).filter_map(|c| c.attribute("name")).collect();
        assert_eq!(failed.len().to_string(), failures, "{failed:?}");
        assert!(failed.iter().all(|name| *name == "forbidden-env"), "{failed:?}");
    }
}

#[test]
fn markdown_is_a_merge_gate_comment() {
    let out = audit(&[PASS, "--format", "markdown"]);
    let md = stdout(&out);
    assert!(md.starts_with("## ✅ auditor verdict: PASS"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("✅ Check forbidden-env: PASS — ")), "{md}");
    let out = audit(&[FAIL_INHERITED, "--format", "markdown"]);
    let md = stdout(&out);
    assert!(md.lines().any(|l| l.starts_with("❌ Check forbidden-env: FAIL — ")), "{md}");
    assert!(md.contains("`forbidden-env/enabled`"));
}

#[test]
fn github_annotations_point_at_file_and_line() {
    let out = audit(&[FAIL_INHERITED, "--format", "github"]);
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert!(lines.iter().all(|l| !l.starts_with("::notice file=")), "no info annotations: {lines:?}");
    let errors: Vec<_> = lines.iter().filter(|l| l.starts_with("::error file=") && l.contains("title=forbidden-env/")).collect();
    assert_eq!(errors.len(), 2, "{lines:?}");
    assert!(errors.iter().all(|l| l.contains("/results/server.log,line=3,title=forbidden-env/enabled::")));
    assert_eq!(
        lines.last().unwrap(),
        "::error title=auditor verdict::FAIL (forbidden-env fail, sim-acc-throughput pass, sim-acc-eval na, golden-al pass, draft-precision pass, arch-override pass, engine-patch pass, upstream-image pass, eval-threshold na)"
    );
}

#[test]
fn output_file_receives_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let out = audit(&[PASS, "--format", "json", "--output", path.to_str().unwrap()]);
    assert_eq!(code(&out), 0);
    assert!(out.stdout.is_empty());
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(report["verdict"], "pass");
}

#[test]
fn also_writes_every_format_from_one_run_and_the_job_summary_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let also = |format: &str| format!("{format}={}", file(format));
    let summary = file("summary.md");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_auditor"))
        .args([
            "audit",
            FAIL_INHERITED,
            "--golden",
            GOLDEN,
            "--format",
            "github",
            "--also",
            &also("json"),
            "--also",
            &also("sarif"),
            "--also",
            &also("markdown"),
        ])
        .current_dir(root())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stdout(&out), stdout(&audit(&[FAIL_INHERITED, "--format", "github"])));
    for format in ["json", "sarif", "markdown"] {
        let written = std::fs::read_to_string(file(format)).unwrap();
        assert_eq!(written, stdout(&audit(&[FAIL_INHERITED, "--format", format])), "--also {format}");
    }
    // `github` on standard output appends the Markdown report once, not once per output.
    let markdown = std::fs::read_to_string(file("markdown")).unwrap();
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), format!("{markdown}\n"));

    for bad in ["json", "yaml=x.yaml", "json="] {
        let out = audit(&[PASS, "--also", bad]);
        assert_eq!(code(&out), 2, "--also {bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("--also"), "{}", stderr(&out));
    }
}

#[test]
fn archives_give_the_same_verdict_jobs_and_findings_as_the_directory() {
    let summary = |bundle: &str| {
        let report = json(&audit(&[bundle, "--format", "json"]));
        let jobs: Vec<(String, String)> =
            report["jobs"].as_array().unwrap().iter().map(|j| (j["id"].as_str().unwrap().to_string(), j["kind"].as_str().unwrap().to_string())).collect();
        let statuses: Vec<String> = report["files"].as_array().unwrap().iter().map(|f| f["status"].as_str().unwrap().to_string()).collect();
        (report["verdict"].clone(), jobs, statuses, report["checks"][0]["summary"].clone())
    };
    let dir = summary(PASS);
    assert_eq!(summary(&format!("{PASS}.tar.gz")), dir);
    assert_eq!(summary(&format!("{PASS}.zip")), dir);
}

#[test]
fn failing_bundle_fails_as_zip_and_tar_gz_too() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("fail.zip");
    let tgz = tmp.path().join("fail.tgz");
    zip_tree(&root().join(FAIL_INHERITED), "run-123", &zip);
    targz_tree(&root().join(FAIL_INHERITED), "run-123", &tgz);
    for archive in [&zip, &tgz] {
        let out = audit(&[archive.to_str().unwrap()]);
        assert_eq!(code(&out), 1, "{}", stdout(&out));
        assert!(stdout(&out).contains("fail.") && stdout(&out).contains("run-123/agentic_dsv4_tp8_conc8"));
    }
}

#[test]
fn missing_path_is_a_usage_error() {
    let out = audit(&["no/such/bundle"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no/such/bundle"), "{}", stderr(&out));
    let out = auditor(&["audit"]);
    assert_eq!(code(&out), 2, "missing argument");
    let out = audit(&[PASS, "--format", "yaml"]);
    assert_eq!(code(&out), 2, "unknown format");
    // The interpreter is the default: its old flag is still accepted, but not beside the line reader's.
    assert_eq!(code(&audit(&[PASS, "--interpret-scripts"])), 0);
    let out = audit(&[PASS, "--interpret-scripts", "--line-reader"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn corrupt_tar_gz_names_the_file_and_never_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = std::fs::read(root().join(format!("{PASS}.tar.gz"))).unwrap();
    // Garbage, a cut in the middle, and bytes flipped inside the deflate stream.
    let mut flipped = archive.clone();
    let mid = flipped.len() / 2;
    flipped[mid..mid + 64].iter_mut().for_each(|b| *b ^= 0x5a);
    let cases = [("garbage.tar.gz", b"not an archive at all".to_vec()), ("cut.tar.gz", archive[..archive.len() / 2].to_vec()), ("flipped.tar.gz", flipped)];
    for (name, bytes) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = audit(&[path.to_str().unwrap()]);
        let c = code(&out);
        assert!(c == 2 || c == 3, "{name}: exit {c}: {}{}", stdout(&out), stderr(&out));
        assert!(stdout(&out).contains(name) || stderr(&out).contains(name), "{name} named: {}{}", stdout(&out), stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
}

#[test]
fn truncated_zip_still_audits_the_readable_members() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("fail.zip");
    zip_tree(&root().join(FAIL_INHERITED), "b", &zip);
    let bytes = std::fs::read(&zip).unwrap();
    let cut = tmp.path().join("cut.zip");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 4]).unwrap();
    let out = audit(&[cut.to_str().unwrap(), "--format", "json"]);
    let report = json(&out);
    // The forbidden variable is in members before the cut, so the check still fails.
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert_eq!(report["checks"][0]["status"], "fail");
    let not_examined = report["not_examined"].as_array().unwrap();
    assert!(not_examined.iter().any(|n| n.as_str().unwrap().contains("cut.zip: zip central directory unreadable")), "{not_examined:?}");
    // Cut right after the first members: nothing fails, so the verdict is incomplete.
    let early = tmp.path().join("early.zip");
    let pass_zip = std::fs::read(root().join(format!("{PASS}.zip"))).unwrap();
    std::fs::write(&early, &pass_zip[..pass_zip.len() / 3]).unwrap();
    let out = audit(&[early.to_str().unwrap()]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    assert!(stdout(&out).contains("verdict: INCOMPLETE"));
}

#[test]
fn member_over_the_size_limit_is_not_examined() {
    let out = audit(&[PASS, "--max-member-size", "4K", "--format", "json"]);
    assert_eq!(code(&out), 3);
    let report = json(&out);
    assert_eq!(report["verdict"], "incomplete");
    let over: Vec<_> = report["files"].as_array().unwrap().iter().filter(|f| f["status"] == "not-examined").collect();
    assert!(!over.is_empty());
    assert!(over.iter().all(|f| f["reason"].as_str().unwrap().contains("member size limit")));
    let out = audit(&[&format!("{PASS}.tar.gz"), "--max-members", "10"]);
    assert_eq!(code(&out), 3);
    assert!(stdout(&out).contains("more than 10 members"));
}

#[test]
fn a_long_line_is_reported_and_a_fail_still_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let long = format!("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n{}\n", "x".repeat(5000));
    write_tree(tmp.path(), &[("server_logs_R/server.log", &long)]);
    let out = audit(&[tmp.path().to_str().unwrap(), "--max-line-length", "1K"]);
    assert_eq!(code(&out), 1, "fail beats incomplete: {}", stdout(&out));
    assert!(stdout(&out).contains("longer than 1024 bytes"));
}

#[test]
fn rules_list_and_explain() {
    let out = auditor(&["rules", "list"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("forbidden-env/enabled"));
    let out = auditor(&["rules", "explain", "forbidden-env"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.contains("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE") && text.contains("To fix"), "{text}");
    assert_eq!(code(&auditor(&["rules", "explain", "no-such-check"])), 2);
}

/// `auditor image ARGS --format json` with a fresh cache, from the repository root.
fn image_json(args: &[&str]) -> (i32, serde_json::Value) {
    let cache = tempfile::tempdir().unwrap();
    let mut all = vec!["image"];
    all.extend_from_slice(args);
    let cache_arg = cache.path().display().to_string();
    all.extend_from_slice(&["--format", "json", "--cache-dir", &cache_arg]);
    let out = auditor(&all);
    (code(&out), json(&out))
}

fn rules(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut rules: Vec<(String, String)> =
        findings(report).map(|f| (f["rule"].as_str().unwrap().to_string(), f["path"].as_str().unwrap_or("").to_string())).collect();
    rules.sort();
    rules
}

#[test]
fn the_sample_images_show_each_patch_the_readme_shows() {
    let site = "/usr/local/lib/python3.12/dist-packages";
    let moe = format!("{site}/sglang/srt/layers/moe/fused_moe.py");
    let (code, report) = image_json(&["diff", "oci:samples/images/patched:v1", "--upstream", "oci:samples/images/upstream:v1"]);
    assert_eq!(code, 1, "{report:#}");
    let expected: Vec<(String, String)> = [
        ("engine-patch/config", ""),
        ("engine-patch/distribution-file", moe.as_str()),
        ("engine-patch/hook", &format!("{site}/sitecustomize.py")),
        ("engine-patch/injection-env", ""),
        ("engine-patch/patch-file", &format!("{moe}.patch")),
        ("forbidden-env/enabled", ""),
    ]
    .iter()
    .map(|(r, p)| (r.to_string(), p.to_string()))
    .collect();
    assert_eq!(rules(&report), expected, "{report:#}");
    let engine = check(&report, "engine-patch");
    assert!(engine["summary"].as_str().unwrap().starts_with("4 engine patch error(s) and 1 warning(s): "), "{engine:#}");
    let modified = findings(&report).find(|f| f["path"] == moe.as_str()).unwrap();
    assert!(modified["diff"].as_str().unwrap().contains("+    return scores.topk(min(top_k, 4), dim=-1)\n"), "{modified:#}");

    let (code, report) = image_json(&["verify", "oci:samples/images/patched:v1"]);
    assert_eq!(code, 1, "{report:#}");
    assert!(rules(&report).contains(&("engine-patch/record-mismatch".into(), moe.clone())), "{report:#}");
    let (code, report) = image_json(&["verify", "oci:samples/images/upstream:v1"]);
    assert_eq!((code, rules(&report)), (0, vec![]), "{report:#}");
}

/// A launch script that exports a forbidden variable and patches the engine.
pub(crate) const SETUP_SH: &str = "#!/usr/bin/env bash\nset -euo pipefail\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\ngit apply /tmp/fix.patch\n\
                        python3 -m sglang.launch_server --model-path /data/models/DeepSeek-V4-Pro --tp 8 --port 8888\n";

/// A zip of `members` (name, content).
pub(crate) fn zip_bytes(members: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, content) in members {
        zip.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(content).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A `.tar.gz` of `members` (name, content).
fn targz_bytes(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (name, content) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, name, *content).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// Error findings of a report: (rule, evidence file).
fn errors(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = findings(report)
        .filter(|f| f["severity"] == "error")
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["evidence"][0]["file"].as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn a_zip_in_a_bundle_is_read_like_a_tarball_beside_it_nested_too() {
    let setup = [("setup.sh", SETUP_SH.as_bytes())];
    let zip = zip_bytes(&setup);
    let targz = targz_bytes(&setup);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("setup.zip", zip.clone(), "setup.zip/setup.sh"),
        ("setup.tar.gz", targz.clone(), "setup.tar.gz/setup.sh"),
        ("logs.tar.gz", targz_bytes(&[("inner/setup.zip", &zip)]), "logs.tar.gz/inner/setup.zip/setup.sh"),
        ("bundle.zip", zip_bytes(&[("setup.tar.gz", &targz)]), "bundle.zip/setup.tar.gz/setup.sh"),
        ("outer.zip", zip_bytes(&[("setup.zip", &zip)]), "outer.zip/setup.zip/setup.sh"),
    ];
    for (name, bytes, member) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(name), &bytes).unwrap();
        let out = audit(&[dir.path().to_str().unwrap(), "--format", "json"]);
        assert_eq!(code(&out), 1, "{name}: {}", stdout(&out));
        let report = json(&out);
        assert_eq!(
            errors(&report),
            [("engine-patch/apply".to_string(), member.to_string()), ("forbidden-env/enabled".to_string(), member.to_string())],
            "{name}"
        );
        let text = stdout(&audit(&[dir.path().to_str().unwrap()]));
        assert!(text.contains(&format!("{}/{member}:3", dir.path().display())), "{name}: the member is named: {text}");
    }
}

#[test]
fn nested_archives_stop_at_max_depth_and_an_unreadable_zip_is_not_examined() {
    let zip = zip_bytes(&[("setup.sh", SETUP_SH.as_bytes())]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("outer.zip"), zip_bytes(&[("setup.zip", &zip)])).unwrap();
    let out = audit(&[dir.path().to_str().unwrap(), "--format", "json", "--max-depth", "1"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let report = json(&out);
    let inner = report["files"].as_array().unwrap().iter().find(|f| f["path"] == "outer.zip/setup.zip").unwrap();
    assert_eq!(inner["status"], "not-examined", "{inner}");
    assert!(inner["reason"].as_str().unwrap().contains("nested deeper than 1"), "{inner}");

    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("launch.sh", "#!/usr/bin/env bash\npython3 -m sglang.launch_server --model-path /data/models/x --tp 8\n")]);
    // Cut inside the first local header: no member can be recovered.
    let mut cut = zip.clone();
    cut.truncate(20);
    std::fs::write(dir.path().join("setup.zip"), &cut).unwrap();
    let out = audit(&[dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 3, "nothing failed in what was read, but the zip was not: {}", stdout(&out));
    let report = json(&out);
    let entry = report["files"].as_array().unwrap().iter().find(|f| f["path"] == "setup.zip").unwrap();
    assert_eq!(entry["status"], "not-examined", "{entry}");
    assert!(report["not_examined"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("setup.zip")), "{}", report["not_examined"]);
}

#[test]
fn a_check_does_not_pass_on_a_file_it_could_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bundle");
    copy_tree(&root().join(PASS), &dir);
    let passing: Vec<String> = {
        let report = json(&audit(&[dir.to_str().unwrap(), "--format", "json"]));
        report["checks"].as_array().unwrap().iter().filter(|c| c["status"] == "pass").map(|c| c["id"].as_str().unwrap().to_string()).collect()
    };
    assert!(passing.contains(&"forbidden-env".to_string()), "{passing:?}");
    // A zip beside the logs that cannot be read may hold the export that would fail.
    std::fs::write(dir.join("setup.zip"), b"PK\x03\x04 not really a zip").unwrap();
    let out = audit(&[dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let report = json(&out);
    for id in &passing {
        let c = check(&report, id);
        assert_eq!(c["status"], "error", "{id}: {c}");
        assert!(c["summary"].as_str().unwrap().starts_with("not conclusive, 1 file(s) not examined (setup.zip"), "{id}: {c}");
    }
    let text = stdout(&audit(&[dir.to_str().unwrap()]));
    assert!(!text.lines().any(|l| l.starts_with("PASS")), "{text}");
}

#[test]
fn an_input_in_which_nothing_could_be_judged_is_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[
            ("readme/README.md", "# Benchmark results\n\nThe logs of run 123 are attached to the workflow.\n"),
            ("notes.txt", "sweep finished at 14:02, all green\nsee the dashboard for numbers\n"),
            ("notes/a.txt", "nothing here\n"),
            ("notes/b.log", "done\n"),
        ],
    );
    for input in ["readme", "notes.txt", "notes"] {
        let path = tmp.path().join(input);
        let out = audit(&[path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code(&out), 3, "{input}: {}", stdout(&out));
        let report = json(&out);
        assert_eq!(report["verdict"], "incomplete");
        let said = report["not_examined"].as_array().unwrap().iter().filter_map(|n| n.as_str()).any(|n| n.starts_with("nothing could be judged"));
        assert!(said, "{input}: {}", report["not_examined"]);
        assert!(stdout(&audit(&[path.to_str().unwrap()])).contains("a launch command, an environment, engine server arguments"), "{input}");
    }
    // An empty directory has nothing to read at all: a usage error, as before.
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    assert_eq!(code(&audit(&[tmp.path().join("empty").to_str().unwrap()])), 2);
    // The same prose beside a run's logs changes nothing.
    let dir = tmp.path().join("bundle");
    copy_tree(&root().join(PASS), &dir);
    std::fs::write(dir.join("README.md"), "# Benchmark results\n").unwrap();
    assert_eq!(code(&audit(&[dir.to_str().unwrap()])), 0);
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for rel in list_files(from) {
        let target = to.join(&rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&rel), target).unwrap();
    }
}

/// A path argument that cannot be used is a usage error that names its
/// flag, so a CI log says which of a dozen arguments to fix.
#[test]
fn every_path_error_names_its_flag() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let unwritable = format!("{missing}/report");
    let cases: &[(&str, Vec<&str>)] = &[
        ("--policy", vec!["audit", PASS, "--policy", missing]),
        ("--golden", vec!["audit", PASS, "--golden", missing]),
        ("--thresholds", vec!["audit", PASS, "--thresholds", missing]),
        ("--checkpoint", vec!["audit", PASS, "--checkpoint", missing]),
        ("--waivers", vec!["audit", PASS, "--waivers", missing]),
        ("--baseline", vec!["audit", PASS, "--baseline", missing]),
        ("--output", vec!["audit", PASS, "--output", &unwritable]),
        ("--source-root", vec!["audit", PASS, "--source-root", missing]),
        ("--signatures", vec!["scan", PASS, "--signatures", missing]),
        ("--policy", vec!["scan", PASS, "--policy", missing]),
        ("--output", vec!["baseline", PASS, "--output", &unwritable]),
    ];
    for (flag, args) in cases {
        let out = auditor(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{args:?}: the error does not name {flag}: {}", stderr(&out));
    }
    let also = format!("json={unwritable}");
    let out = auditor(&["audit", PASS, "--also", &also]);
    assert!(code(&out) == 2 && stderr(&out).contains("--also json"), "{}", stderr(&out));
    // checked before the audit: nothing is printed, not even the report on standard output
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let twice = dir.path().join("r.json");
    let twice = format!("json={}", twice.display());
    let out = auditor(&["audit", PASS, "--also", &twice, "--also", &twice.replacen("json", "sarif", 1)]);
    assert!(code(&out) == 2 && stderr(&out).contains("named by another output"), "{}", stderr(&out));
}

/// The file counts agree with the findings: a file cut at
/// `--max-line-length` was examined (its findings cite it) and is counted
/// as read in part, never as not examined.
#[test]
fn a_file_cited_as_evidence_is_never_counted_as_not_examined() {
    let out = audit(&[FAIL_INHERITED, "--max-line-length", "100", "--format", "json"]);
    let report = json(&out);
    let status = |path: &str| report["files"].as_array().unwrap().iter().find(|f| f["path"] == path).map(|f| f["status"].clone());
    let cited: Vec<String> =
        findings(&report).flat_map(|f| f["evidence"].as_array().unwrap().iter().filter_map(|e| e["file"].as_str().map(str::to_string))).collect();
    let partial: Vec<&String> = cited.iter().filter(|p| status(p).is_some_and(|s| s == "partial")).collect();
    assert!(!partial.is_empty(), "no cited file was cut: the case does not test anything");
    for path in &cited {
        assert!(status(path).is_none_or(|s| s == "read" || s == "partial"), "{path} is cited and counted {:?}", status(path));
    }
    let text = stdout(&audit(&[FAIL_INHERITED, "--max-line-length", "100"]));
    let files = text.lines().find(|l| l.starts_with("files:")).unwrap();
    let read_in_part = report["files"].as_array().unwrap().iter().filter(|f| f["status"] == "partial").count();
    assert!(files.contains(&format!("{read_in_part} read in part")) && files.ends_with(" 0 not examined"), "{files}");
}

/// `--quiet` prints the answer alone; `--min-severity error` lists errors
/// only, and says how many warnings it left out; JSON keeps them all.
#[test]
fn quiet_is_the_answer_and_min_severity_counts_what_it_leaves_out() {
    let full = stdout(&audit(&[FAIL_INHERITED]));
    let quiet = auditor(&["audit", FAIL_INHERITED, "--quiet"]);
    assert_eq!(code(&quiet), 1);
    let quiet = stdout(&quiet);
    assert!(full.starts_with(&quiet) && quiet.lines().count() == 3, "{quiet}");
    assert!(quiet.contains("FAIL forbidden-env: 2 error(s)"), "{quiet}");
    // incomplete with no check at fault: the quiet answer still says why
    let cut = auditor(&["audit", PASS, "--max-members", "3", "--quiet"]);
    assert_eq!(code(&cut), 3, "{}", stdout(&cut));
    assert!(stdout(&cut).contains("verdict: INCOMPLETE") && stdout(&cut).contains("not examined: "), "{}", stdout(&cut));

    let bundle = "samples/bundles/trtllm-dynamo-disagg-pass";
    let all = stdout(&audit(&[bundle]));
    let errors_only = stdout(&audit(&[bundle, "--min-severity", "error"]));
    assert!(all.contains("\n  warning "), "the sample has no listed warning: {all}");
    assert!(!errors_only.contains("\n  warning ") && errors_only.contains("(1 warning(s) not listed: --min-severity error)"), "{errors_only}");
    for format in ["sarif", "github"] {
        let listed = stdout(&audit(&[bundle, "--format", format]));
        let cut = stdout(&audit(&[bundle, "--format", format, "--min-severity", "error"]));
        assert!(listed.contains("warning") && !cut.contains("\"warning\"") && !cut.contains("::warning"), "{format}: {cut}");
    }
    assert_eq!(stdout(&audit(&[bundle, "--format", "json", "--min-severity", "error"])), stdout(&audit(&[bundle, "--format", "json"])));
}

/// The README and the guide point at each other and at the tree: every
/// relative link names a file that exists, and every `#anchor` a heading
/// of the file it names (GitHub's anchor rule: lowercase, punctuation but
/// `-` and `_` dropped, spaces as `-`).
#[test]
fn every_link_of_the_readme_and_the_guide_resolves() {
    let anchors = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim_start_matches('#').strip_prefix(' ').filter(|_| l.starts_with('#')))
            .map(|h| h.trim().to_lowercase().chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' ')).collect::<String>().replace(' ', "-"))
            .collect()
    };
    let mut checked = 0;
    for doc in ["README.md", "docs/GUIDE.md"] {
        let path = root().join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, _) in text.match_indices("](") {
            let target: String = text[i + 2..].chars().take_while(|c| *c != ')' && !c.is_whitespace()).collect();
            if target.starts_with("http") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if file.is_empty() { path.clone() } else { path.parent().unwrap().join(file) };
            assert!(file.exists(), "{doc}: link to {target}: no such file");
            if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
                assert!(anchors(&std::fs::read_to_string(&file).unwrap()).iter().any(|a| a == anchor), "{doc}: link to {target}: no such heading");
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} links found");
}
