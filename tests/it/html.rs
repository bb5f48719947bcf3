//! `--format html` as a browser shows it: the sample reports rendered by
//! headless Chromium (`tests/services/start.sh` installs Debian's
//! `chromium`), screenshotted, and their DOM read back for the job matrix,
//! the golden-AL chart and the side-by-side diff; and the page loads nothing
//! from the network. Without Chromium these tests fail, unless
//! `AUDITOR_SKIP_BROWSER=1` says to skip them. `AUDITOR_SCREENSHOT_DIR=DIR`
//! keeps the screenshots (how `docs/img/` was made).

use crate::common::{GOLDEN, PASS, auditor, code, stderr, stdout};
use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;

const WIDTH: u32 = 1200;

/// Chromium: `AUDITOR_CHROMIUM`, else `chromium` or `chromium-browser` on
/// PATH. `None` only when the run opted out with `AUDITOR_SKIP_BROWSER=1`.
fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("AUDITOR_CHROMIUM").map(PathBuf::from);
    let on_path = || {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path).flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n))).find(|p| p.is_file())
    };
    match named.or_else(on_path) {
        Some(found) => Some(found),
        None if std::env::var("AUDITOR_SKIP_BROWSER").as_deref() == Ok("1") => {
            eprintln!("AUDITOR_SKIP_BROWSER=1: the HTML report is not checked in a browser");
            None
        }
        None => panic!(
            "Chromium is not installed, so the HTML report cannot be checked in a browser: run tests/services/start.sh \
             (installs Debian's `chromium`), set AUDITOR_CHROMIUM to a Chromium binary, or set AUDITOR_SKIP_BROWSER=1 to skip"
        ),
    }
}

/// A page opened in headless Chromium.
struct Page {
    browser: PathBuf,
    dir: tempfile::TempDir,
    file: PathBuf,
}

impl Page {
    fn new(browser: PathBuf, name: &str, html: String) -> Page {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(format!("{name}.html"));
        std::fs::write(&file, &html).unwrap();
        Page { browser, dir, file }
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        let profile = self.dir.path().join("profile");
        let out = Command::new(&self.browser)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(args)
            .arg(format!("file://{}", self.file.display()))
            .output()
            .expect("run chromium");
        assert!(out.status.success(), "chromium {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// The DOM after the page loaded (and its script ran).
    fn dom(&self) -> String {
        String::from_utf8(self.run(&["--dump-dom"]).stdout).unwrap()
    }

    /// A PNG of the first `height` pixels, `WIDTH` wide; its path.
    fn screenshot(&self, name: &str, height: u32) -> PathBuf {
        let png = self.dir.path().join(format!("{name}.png"));
        self.run(&[&format!("--screenshot={}", png.display()), &format!("--window-size={WIDTH},{height}")]);
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}: a PNG");
        let (w, h) = (u32::from_be_bytes(bytes[16..20].try_into().unwrap()), u32::from_be_bytes(bytes[20..24].try_into().unwrap()));
        assert_eq!((w, h), (WIDTH, height), "{name}: the window's size");
        if let Some(keep) = std::env::var_os("AUDITOR_SCREENSHOT_DIR") {
            std::fs::create_dir_all(&keep).unwrap();
            std::fs::copy(&png, Path::new(&keep).join(format!("{name}.png"))).unwrap();
        }
        png
    }
}

/// The page loads nothing: no URL at all, every link an anchor of the page
/// that exists, no `src`, and a policy that forbids any other load.
fn self_contained(html: &str) {
    assert!(!html.contains("http://") && !html.contains("https://"), "no URL in the page");
    assert!(!Regex::new(r"(?i)<[a-z][^>]*\ssrc\s*=").unwrap().is_match(html), "nothing is loaded by src=");
    assert!(!Regex::new(r"(?i)@import|url\(").unwrap().is_match(html), "styles load nothing");
    for href in Regex::new(r#"href="([^"]*)""#).unwrap().captures_iter(html) {
        let target = href[1].strip_prefix('#').unwrap_or_else(|| panic!("a link out of the page: {}", &href[1]));
        assert!(html.contains(&format!("id=\"{target}\"")), "link to #{target}, which the page does not have");
    }
    assert!(html.contains("Content-Security-Policy") && html.contains("default-src 'none'"));
}

/// The first element `<tag ... class="class"...>...</tag>` of `dom` (no nesting of the same tag inside).
fn element<'d>(dom: &'d str, tag: &str, class: &str) -> Option<&'d str> {
    let open = Regex::new(&format!(r#"<{tag}\b[^>]*class="{}"[^>]*>"#, regex::escape(class))).unwrap();
    let start = open.find(dom)?.start();
    let end = dom[start..].find(&format!("</{tag}>"))? + start;
    Some(&dom[start..end])
}

fn render(args: &[&str], expected_code: i32) -> String {
    let out = auditor(args);
    assert_eq!(code(&out), expected_code, "{args:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn golden_al_fail_shows_the_job_off_its_golden_curve_in_a_browser() {
    let Some(browser) = chromium() else { return };
    let html = render(&["audit", "samples/bundles/golden-al-fail", "--format", "html"], 1);
    self_contained(&html);
    let page = Page::new(browser, "golden-al-fail", html);
    let dom = page.dom();
    assert!(dom.contains(r#"<header class="banner fail">"#) && dom.contains(">FAIL</span>"), "the verdict banner");
    // The chart: the dsv4_mtp curves, and the job at K=2 simulating 2.49 where the golden AL is 2.27.
    let chart = element(&dom, "figure", "golden-chart").expect("a golden-AL chart");
    assert!(chart.contains("<svg") && chart.contains("dsv4_mtp (deepseek-v4-pro)"), "{chart}");
    assert!(chart.contains(r#"data-mode="thinking_on""#) && chart.contains(r#"data-mode="thinking_off""#), "a curve per thinking mode");
    let off = element(&dom, "g", "job-point off-curve").expect("the job off its curve");
    assert!(off.contains(r#"<circle class="off""#), "drawn red: {off}");
    assert!(
        off.contains("<title>job dsv4_tp8_conc8") && off.contains("simulated AL 2.49, golden AL 2.27 (thinking_on K=2)"),
        "a tooltip with both values: {off}"
    );
    assert!(off.contains(r#"class="off-label""#) && off.contains(">simulated AL 2.49, golden AL 2.27</text>"), "a visible label with both values: {off}");
    assert!(!dom.contains("job-point on-curve"), "no job of this bundle is on its curve");
    // The matrix: one configuration at TP 8 and concurrency 8, failed, linking to the job's findings.
    let matrix = element(&dom, "table", "matrix").expect("a job matrix");
    assert!(matrix.contains("dsv4 · fp4 · b200 · sglang · mtp · agentic-coding") && matrix.contains("conc 8"), "{matrix}");
    let cell = Regex::new(r##"<td class="cell fail"><a class="fail" href="#(job-\d+)""##).unwrap();
    let anchor = &cell.captures(matrix).expect("a failed cell linking to its job")[1];
    let job = Regex::new(&format!(r#"(?s)<section class="job fail" id="{anchor}">.*?</section>"#)).unwrap();
    let job = job.find(&dom).expect("the job's section").as_str();
    assert!(job.contains("golden-al/mismatch"), "{job}");
    // Findings by place, the evidence lines highlighted.
    let place = element(&dom, "section", "place fail").expect("the failing place");
    assert!(place.contains("server.log:3</code>") && place.contains("<mark>SGLANG_SIMULATE_ACC_LEN=2.49</mark>"), "{place}");
    page.screenshot("html-golden-al-fail", 1500);
}

#[test]
fn a_passing_bundle_is_green_in_a_browser() {
    let Some(browser) = chromium() else { return };
    let html = render(&["audit", PASS, "--golden", GOLDEN, "--format", "html"], 0);
    self_contained(&html);
    let page = Page::new(browser, "pass", html);
    let dom = page.dom();
    assert!(dom.contains(r#"<header class="banner pass">"#), "the verdict banner");
    let matrix = element(&dom, "table", "matrix").expect("a job matrix");
    // 11 jobs: 10 throughput (TP 4 and 8 at five concurrencies) and one eval-only job.
    assert_eq!(matrix.matches("<tr>").count(), 3, "a header and a row per TP: {matrix}");
    assert_eq!(matrix.matches(r#"<td class="cell pass">"#).count(), 10, "{matrix}");
    assert_eq!(matrix.matches(r##"<a class="pass" href="#job-"##).count(), 11, "{matrix}");
    assert!(!matrix.contains("cell fail") && !matrix.contains("cell warning"));
    let chart = element(&dom, "figure", "golden-chart").expect("a golden-AL chart");
    assert!(chart.contains("job-point on-curve") && !chart.contains("off-curve"), "every job on its curve: {chart}");
    assert!(chart.contains("10 jobs") && chart.contains("simulated AL 3.51, golden AL 3.51"), "{chart}");
    page.screenshot("html-pass", 1100);
}

#[test]
fn image_diff_shows_the_edited_engine_file_side_by_side_in_a_browser() {
    let Some(browser) = chromium() else { return };
    let cache = tempfile::tempdir().unwrap();
    let html = render(
        &[
            "image",
            "diff",
            "oci:samples/images/patched",
            "--upstream",
            "oci:samples/images/upstream",
            "--format",
            "html",
            "--cache-dir",
            cache.path().to_str().unwrap(),
        ],
        1,
    );
    self_contained(&html);
    let page = Page::new(browser, "image-diff", html);
    let dom = page.dom();
    let sections = Regex::new(r#"(?s)<section class="diff" id="diff-\d+">.*?</section>"#).unwrap();
    let engine =
        sections.find_iter(&dom).map(|m| m.as_str()).find(|s| s.contains("/sglang/srt/layers/moe/fused_moe.py</code>")).expect("the edited engine file's diff");
    assert!(engine.contains("modified") && engine.contains("engine-patch/distribution-file"), "{engine}");
    assert!(engine.contains("<th colspan=\"2\">upstream</th><th colspan=\"2\">pinned</th>"), "two columns: {engine}");
    let row = Regex::new(r#"<tr><td class="no">3</td><td class="del">    return scores.topk\(top_k, dim=-1\)</td><td class="no">3</td><td class="add">    # cap the routed experts"#).unwrap();
    assert!(row.is_match(engine), "the upstream line beside the pinned line that replaced it: {engine}");
    assert!(engine.contains("return scores.topk(min(top_k, 4), dim=-1)</td>"), "{engine}");
    assert!(
        engine.contains("written by <code>layer 2 of oci:samples/images/patched (sha256:") && engine.contains(r#"<code class="created-by">COPY fused_moe.py"#),
        "its layer and build step: {engine}"
    );
    let config = element(&dom, "table", "config").expect("the config changes");
    let pythonpath = Regex::new(r#"(?s)<th class="mono">Env PYTHONPATH</th>\s*<td class="absent">not set</td>\s*<td>/opt/overrides</td>"#).unwrap();
    assert!(pythonpath.is_match(config), "upstream and pinned side by side: {config}");
    page.screenshot("html-image-diff", 1300);
}

/// A value from the input that is markup stays text in the browser: no
/// element it names is created, no script of it runs.
#[test]
fn hostile_input_stays_text_in_a_browser() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = "#!/usr/bin/env bash\nexport SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=\"<script>document.title='owned'</script><img src=x>\"\n";
    std::fs::write(dir.path().join("launch<b>.sh"), script).unwrap();
    let html = render(&["scan", dir.path().to_str().unwrap(), "--format", "html"], 0);
    self_contained(&html);
    let dom = Page::new(browser, "hostile", html).dom();
    assert_eq!(dom.matches("<script").count(), 1, "only the page's own script: {dom}");
    assert!(!dom.contains("<img") && !dom.contains("<b>") && !dom.contains("owned</title>"), "{dom}");
    assert!(dom.contains("&lt;script&gt;document.title='owned'&lt;/script&gt;&lt;img src=x&gt;"), "shown as text: {dom}");
    assert!(dom.contains("launch&lt;b&gt;.sh"), "{dom}");
}
