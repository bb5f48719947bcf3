//! Honest output under hostile input (issue 12): reports that the tools
//! reading them accept, and inputs refused where they enter with an error
//! that says what to do.

use crate::common::*;
use serde_json::Value;
use std::sync::OnceLock;

/// The OASIS SARIF 2.1.0 schema (tests/fixtures/sarif/README.md says where
/// it comes from), compiled once, formats checked.
fn sarif_schema() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let text = std::fs::read_to_string(root().join("tests/fixtures/sarif/sarif-schema-2.1.0.json")).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        jsonschema::draft4::options().should_validate_formats(true).build(&schema).expect("the SARIF schema compiles")
    })
}

/// Every way `sarif` breaks the schema or GitHub code scanning's rules as
/// documented for uploads (at most 20 runs, 25,000 results and 25,000 rules
/// a run, 1,000 locations a result, 10 MB gzip-compressed): a region
/// without `startLine`, a result without a location or fingerprint, a
/// `note` (info is left out unless asked for), a physical location with
/// an empty URI, a scheme, an absolute path, `./` or `..`, a file not
/// under `%SRCROOT%` or `IMAGEROOT`, or a directory.
pub(crate) fn sarif_problems(what: &str, sarif: &Value) -> Vec<String> {
    let info_asked = sarif["runs"][0]["properties"]["infoAsked"] == true;
    let mut problems: Vec<String> = sarif_schema().iter_errors(sarif).map(|e| format!("{what}: {} at {}", e, e.instance_path())).collect();
    let runs = sarif["runs"].as_array().map_or(0, Vec::len);
    let results = sarif["runs"][0]["results"].as_array().map_or(0, Vec::len);
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"].as_array().map_or(0, Vec::len);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gzip, sarif.to_string().as_bytes()).unwrap();
    let compressed = gzip.finish().unwrap().len();
    if runs > 20 || results > 25_000 || rules > 25_000 || compressed > 10 << 20 {
        problems.push(format!("{what}: over GitHub's upload limits: {runs} runs, {results} results, {rules} rules, {compressed} B gzip"));
    }
    for result in sarif["runs"][0]["results"].as_array().into_iter().flatten() {
        let locations = result["locations"].as_array().map(Vec::as_slice).unwrap_or_default();
        let related = result["relatedLocations"].as_array().map(Vec::as_slice).unwrap_or_default();
        if locations.is_empty() {
            problems.push(format!("{what}: result without a location: {result}"));
        }
        if locations.len() + related.len() > 1000 {
            problems.push(format!("{what}: more than 1,000 locations: {}", result["ruleId"]));
        }
        if result["level"] == "note" && !info_asked {
            problems.push(format!("{what}: a note (info) by default: {}", result["message"]["text"]));
        }
        if result["partialFingerprints"].as_object().is_none_or(|f| f.is_empty()) {
            problems.push(format!("{what}: result without partialFingerprints: {}", result["ruleId"]));
        }
        for loc in locations.iter().chain(related) {
            if loc.get("physicalLocation").is_none() && loc.get("logicalLocations").is_none() {
                problems.push(format!("{what}: a location that names nothing: {loc}"));
            }
            let Some(physical) = loc.get("physicalLocation") else { continue };
            if let Some(region) = physical.get("region")
                && region["startLine"].as_u64().is_none_or(|l| l < 1)
            {
                problems.push(format!("{what}: region without startLine: {loc}"));
            }
            let artifact = &physical["artifactLocation"];
            let uri = artifact["uri"].as_str().unwrap_or_default();
            if uri.is_empty() || uri.split('/').next().unwrap_or_default().contains(':') {
                problems.push(format!("{what}: URI GitHub cannot place: {uri:?}"));
            }
            if uri.starts_with('/') || uri.split('/').any(|part| part == "." || part == ".." || part.is_empty()) {
                problems.push(format!("{what}: URI not normalised or absolute: {uri:?}"));
            }
            if !matches!(artifact["uriBaseId"].as_str(), Some("%SRCROOT%" | "IMAGEROOT")) {
                problems.push(format!("{what}: URI under no base: {uri:?}"));
            }
            if artifact.get("uriBaseId").is_none() && root().join(uri).is_dir() {
                problems.push(format!("{what}: location is a directory: {uri:?}"));
            }
        }
    }
    problems
}

/// Results whose first location is not a file with a line (what a
/// reviewer clicks on in code scanning).
pub(crate) fn unplaced(sarif: &Value) -> Vec<String> {
    let results = sarif["runs"][0]["results"].as_array().map(Vec::as_slice).unwrap_or_default();
    results
        .iter()
        .filter(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64().is_none())
        .map(|r| format!("{}: {}", r["ruleId"], r["message"]["text"]))
        .collect()
}

fn sarif_of(args: &[&str]) -> Value {
    let out = auditor(args);
    assert!([0, 1, 3].contains(&code(&out)), "{args:?}: exit {}\n{}", code(&out), stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{args:?}: {e}\n{}", stdout(&out)))
}

#[test]
fn sarif_of_every_sample_bundle_is_valid_for_github() {
    let mut bundles: Vec<String> =
        std::fs::read_dir(root().join("samples/bundles")).unwrap().map(|e| format!("samples/bundles/{}", e.unwrap().file_name().to_string_lossy())).collect();
    bundles.sort();
    assert!(bundles.len() >= 10, "{bundles:?}");
    let mut problems = Vec::new();
    let mut results = 0;
    for bundle in &bundles {
        let sarif = sarif_of(&["audit", bundle, "--golden", GOLDEN, "--format", "sarif"]);
        results += sarif["runs"][0]["results"].as_array().map_or(0, Vec::len);
        problems.extend(sarif_problems(bundle, &sarif));
    }
    assert!(results > 10, "the samples have findings to place ({results})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every result of every sample bundle at a file and a line; info only when asked for.
#[test]
fn every_sarif_result_of_the_samples_is_at_a_file_and_line_and_info_is_asked_for() {
    let mut unplaced_results = Vec::new();
    for bundle in std::fs::read_dir(root().join("samples/bundles")).unwrap() {
        let bundle = format!("samples/bundles/{}", bundle.unwrap().file_name().to_string_lossy());
        let sarif = sarif_of(&["audit", &bundle, "--golden", GOLDEN, "--format", "sarif"]);
        unplaced_results.extend(unplaced(&sarif).into_iter().map(|u| format!("{bundle}: {u}")));
    }
    assert!(unplaced_results.is_empty(), "{}", unplaced_results.join("\n"));
    let with_info = sarif_of(&["audit", FAIL_INHERITED, "--format", "sarif", "--include-info"]);
    let without = sarif_of(&["audit", FAIL_INHERITED, "--format", "sarif"]);
    let notes = |s: &Value| s["runs"][0]["results"].as_array().unwrap().iter().filter(|r| r["level"] == "note").count();
    assert!(notes(&with_info) > 0 && notes(&without) == 0, "{} notes asked for, {} by default", notes(&with_info), notes(&without));
}

/// Where the bundle is named from (relative, absolute, with `./` or
/// `a/../a`) changes no URI and no fingerprint; `--source-root` moves the
/// base; a zip member named `../../..` stays inside its zip, in SARIF and
/// in annotations.
#[test]
fn sarif_locations_are_relative_normalised_and_stable() {
    let shape = |s: &Value| -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = s["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].to_string(), r["partialFingerprints"].to_string()))
            .collect();
        out.sort();
        out
    };
    let absolute = root().join(FAIL_INHERITED).display().to_string();
    let dotted = format!("./{FAIL_INHERITED}/../{}", FAIL_INHERITED.rsplit('/').next().unwrap());
    let plain = sarif_of(&["audit", FAIL_INHERITED, "--format", "sarif"]);
    assert!(!shape(&plain).is_empty());
    for other in [absolute.as_str(), dotted.as_str()] {
        assert_eq!(shape(&sarif_of(&["audit", other, "--format", "sarif"])), shape(&plain), "{other}");
    }
    let from_repo = sarif_of(&["audit", FAIL_INHERITED, "--format", "sarif", "--source-root", "."]);
    let uri = from_repo["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap().to_string();
    assert!(uri.starts_with(&format!("{FAIL_INHERITED}/")), "{uri}");
    assert!(sarif_problems("--source-root", &from_repo).is_empty());

    let dir = tempfile::tempdir().unwrap();
    let zip = crate::cli::zip_bytes(&[("../../../escape/setup.sh", crate::cli::SETUP_SH.as_bytes())]);
    std::fs::write(dir.path().join("bundle.zip"), zip).unwrap();
    let bundle = dir.path().to_str().unwrap();
    let sarif = sarif_of(&["audit", bundle, "--format", "sarif"]);
    assert!(sarif_problems("zip", &sarif).is_empty(), "{}", sarif_problems("zip", &sarif).join("\n"));
    let uris: Vec<String> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().map(str::to_string))
        .collect();
    assert!(!uris.is_empty() && uris.iter().all(|u| u == "bundle.zip/escape/setup.sh"), "{uris:?}");
    let annotations = stdout(&auditor(&["audit", bundle, "--format", "github"]));
    let files: Vec<&str> = annotations.lines().filter_map(|l| l.split("file=").nth(1)).map(|f| f.split(',').next().unwrap()).collect();
    assert!(!files.is_empty() && files.iter().all(|f| *f == "bundle.zip/escape/setup.sh"), "{annotations}");
}

#[test]
fn sarif_of_a_scan_is_valid_for_github() {
    // the scan of the recipes finds knobs only: information, in SARIF when asked for
    assert!(sarif_of(&["scan", "samples/recipes-fail", "--format", "sarif"])["runs"][0]["results"].as_array().unwrap().is_empty());
    let sarif = sarif_of(&["scan", "samples/recipes-fail", "--format", "sarif", "--include-info"]);
    assert!(!sarif["runs"][0]["results"].as_array().unwrap().is_empty());
    let problems = sarif_problems("scan", &sarif);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(unplaced(&sarif).is_empty(), "{:?}", unplaced(&sarif));
}

#[test]
fn sarif_of_image_diff_and_verify_is_valid_for_github() {
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().to_str().unwrap();
    let (pinned, upstream) = ("oci:samples/images/patched", "oci:samples/images/upstream");
    let diff = sarif_of(&["image", "diff", pinned, "--upstream", upstream, "--format", "sarif", "--cache-dir", cache]);
    let verify = sarif_of(&["image", "verify", pinned, "--format", "sarif", "--cache-dir", cache]);
    let mut problems = sarif_problems("image diff", &diff);
    problems.extend(sarif_problems("image verify", &verify));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // A file inside the image is a file relative to the image's root, with
    // the layer that wrote it; never the image reference as a path.
    let results = diff["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty(), "the patched sample differs from upstream");
    let in_image: Vec<&Value> = results
        .iter()
        .flat_map(|r| r["locations"].as_array().unwrap())
        .filter(|l| l["physicalLocation"]["artifactLocation"]["uriBaseId"] == "IMAGEROOT")
        .collect();
    assert!(!in_image.is_empty(), "{diff}");
    for loc in in_image {
        assert!(!loc["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap().starts_with('/'));
    }
    assert!(diff["runs"][0]["originalUriBaseIds"]["IMAGEROOT"]["description"]["text"].as_str().unwrap().contains(pinned));
}

/// A usage error: exit 2, nothing on stdout, the message on stderr.
fn refused(args: &[&str]) -> String {
    let out = auditor(args);
    assert_eq!(code(&out), 2, "{args:?}: {}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    stderr(&out)
}

#[test]
fn today_is_a_calendar_date_or_a_usage_error() {
    for subcommand in [&["audit", FAIL_INHERITED][..], &["image", "verify", "oci:samples/images/patched"][..]] {
        let mut args = subcommand.to_vec();
        args.extend(["--today", "2026-02-30"]);
        let err = refused(&args);
        assert!(err.contains("--today") && err.contains("2026-02 has 28 days"), "{err}");
        args.pop();
        args.push("01/01/2030");
        let err = refused(&args);
        assert!(err.contains("not a YYYY-MM-DD date"), "{err}");
    }
}

#[test]
fn a_suppression_expiry_that_is_no_date_is_refused_when_the_policy_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("p.toml");
    std::fs::write(
        &policy,
        "name = \"waived\"\nextends = \"inferencex\"\n[[suppressions]]\nrule = \"forbidden-env/enabled\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"2026-02-30\"\n",
    )
    .unwrap();
    let err = refused(&["audit", FAIL_INHERITED, "--policy", policy.to_str().unwrap()]);
    assert!(err.contains("forbidden-env/enabled") && err.contains("\"2026-02-30\" is not a YYYY-MM-DD date (2026-02 has 28 days)"), "{err}");
}

#[test]
fn an_unreadable_policy_is_reported_once() {
    let err = refused(&["audit", FAIL_INHERITED, "--policy", "no/such/policy.toml"]);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(err.contains("no/such/policy.toml"), "{err}");
}

#[test]
fn a_path_given_as_an_image_reference_is_pointed_at_its_transport() {
    let err = refused(&["image", "verify", "samples/images/patched"]);
    assert!(err.contains("did you mean `oci:samples/images/patched`?"), "{err}");
    assert!(!err.contains("docker.io"), "no registry was asked: {err}");
    let err = refused(&["image", "diff", "oci:samples/images/patched", "--upstream", "samples/images/upstream"]);
    assert!(err.contains("--upstream") && err.contains("did you mean `oci:samples/images/upstream`?"), "{err}");
    for command in ["diff", "verify", "inspect"] {
        let help = stdout(&auditor(&["image", command, "--help"]));
        for transport in ["docker://", "docker-daemon:", "oci:", "oci-archive:", "docker-archive:"] {
            assert!(help.contains(transport), "image {command} --help: {transport}\n{help}");
        }
    }
}

#[test]
fn image_diff_and_verify_take_the_fetch_options_of_inspect() {
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().to_str().unwrap();
    let fetch = ["--allow-redirect", "blobs.example.com", "--read-timeout", "5", "--max-manifest-size", "1M", "--cache-dir", cache, "--format", "json"];
    let mut diff = vec!["image", "diff", "oci:samples/images/patched", "--upstream", "oci:samples/images/upstream"];
    diff.extend(fetch);
    let mut verify = vec!["image", "verify", "oci:samples/images/patched"];
    verify.extend(fetch);
    for args in [diff, verify] {
        let out = auditor(&args);
        assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
        assert_eq!(json(&out)["verdict"], "fail");
    }
    let err = refused(&["image", "verify", "oci:samples/images/patched", "--max-manifest-size", "lots"]);
    assert!(err.contains("--max-manifest-size"), "{err}");
}

#[test]
fn layers_from_the_cache_are_said_to_be_verified_when_cached_and_verify_cached_reads_them() {
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().to_str().unwrap();
    let verify = |extra: &[&str]| {
        let mut args = vec!["image", "verify", "oci:samples/images/patched", "--cache-dir", cache];
        args.extend_from_slice(extra);
        let out = auditor(&args);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        out
    };
    let cold = stdout(&verify(&[]));
    assert!(cold.contains("3 layers: 3 read and verified now") && !cold.contains("from the cache"), "{cold}");
    let warm = stdout(&verify(&[]));
    assert!(warm.contains("3 layers: 3 from the cache, verified on first read"), "{warm}");
    assert!(!warm.contains("read and verified now"), "{warm}");
    let again = json(&verify(&["--verify-cached", "--format", "json"]));
    let counts = &again["layer_cache"][0];
    assert_eq!((counts["read"].as_u64(), counts["cached"].as_u64()), (Some(3), Some(0)), "{counts}");
}

#[test]
fn colour_follows_no_color_and_clicolor_force() {
    let run = |env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_auditor"));
        cmd.args(["audit", FAIL_INHERITED, "--golden", GOLDEN]).current_dir(root()).env_remove("NO_COLOR").env_remove("CLICOLOR").env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    };
    assert!(!run(&[]).contains('\x1b'), "a pipe is no terminal");
    let forced = run(&[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains("\x1b[") && forced.contains("FAIL"), "{forced}");
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\x1b'), "NO_COLOR wins");
}

#[test]
fn junit_of_every_sample_bundle_parses_and_counts_its_testcases() {
    for entry in std::fs::read_dir(root().join("samples/bundles")).unwrap() {
        let bundle = format!("samples/bundles/{}", entry.unwrap().file_name().to_string_lossy());
        let out = auditor(&["audit", &bundle, "--golden", GOLDEN, "--format", "junit"]);
        let text = stdout(&out);
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{bundle}: {e}\n{text}"));
        let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
        let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
        let with = |tag: &str| cases.iter().filter(|c| c.children().any(|n| n.has_tag_name(tag))).count().to_string();
        assert_eq!(suite.attribute("tests"), Some(cases.len().to_string().as_str()), "{bundle}");
        for (attr, tag) in [("failures", "failure"), ("errors", "error"), ("skipped", "skipped")] {
            assert_eq!(suite.attribute(attr), Some(with(tag).as_str()), "{bundle}: {attr}");
        }
    }
}
