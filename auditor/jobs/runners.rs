//! The runners a master-config entry's jobs run on, evaluated the way the
//! benchmark workflows start them: `bash ./runners/launch_${RUNNER_NAME%%_*}.sh`
//! with the entry's inputs (`IMAGE`, `MODEL`, `FRAMEWORK`, ...) in the
//! environment, for every instance its runner label is scheduled on
//! (`configs/runners.yaml`). What the evaluation gives is the image the
//! runner's container starts: a runner that rewrites `IMAGE`, swaps the
//! squash file or imports another reference runs the job on an image the
//! upstream-image rule never saw, whatever the entry pins.
//!
//! Only the runner's own files are read (`runners/`): the recipe it starts
//! inside the container is judged as its own job, and following it here
//! would evaluate it once more per entry.

use crate::evidence::FileEvidence;
use crate::evidence::meta::normalise_image as normalise;
use crate::evidence::meta::{JobMeta, Metadata, Scenario, Started, StartedImage};
use crate::evidence::provenance::FileRef;
use crate::evidence::shell::evaluated::{self, MOUNT, TreeFiles};
use crate::evidence::shell::interp::value::{Place, Str};
use crate::evidence::shell::interp::{self, Evaluation, Files, Inputs, Limits};
use crate::evidence::yaml::runners as labels;
use std::collections::BTreeMap;

/// The runners' directory of a checkout, which their evaluation may read.
const RUNNERS: &str = "runners/";

/// What the runner's evaluation may read: the runners' own files.
struct RunnerFiles<'t>(&'t TreeFiles<'t>);

impl Files for RunnerFiles<'_> {
    fn read(&self, path: &str) -> Option<String> {
        in_runners(path).then(|| self.0.read(path)).flatten()
    }
}

/// Whether `path` (as the run sees it) is a file of the runners' directory.
fn in_runners(path: &str) -> bool {
    let rel = path.strip_prefix(MOUNT).map_or(path, |r| r.trim_start_matches('/'));
    rel.starts_with(RUNNERS) || rel.contains(&format!("/{RUNNERS}"))
}

/// What a runner's evaluation may read to say which of the input's
/// scripts it runs: the runners' own files, and every other file of the
/// input as present but empty (what the script it runs does is judged as
/// that script's job, not again here).
struct TargetFiles<'t>(&'t TreeFiles<'t>);

impl Files for TargetFiles<'_> {
    fn read(&self, path: &str) -> Option<String> {
        let text = self.0.read(path)?;
        Some(if in_runners(path) { text } else { String::new() })
    }
}

/// One evaluation to make: a launcher and the inputs the workflow gives it.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunnerRun {
    pub launcher: String,
    pub env: BTreeMap<String, String>,
}

/// The launcher scripts of the files, by the name the workflows run
/// (`launch_<instance prefix>.sh`), and the label table when the input has one.
pub struct Launchers<'f> {
    scripts: BTreeMap<String, &'f FileEvidence>,
    labels: Option<BTreeMap<String, Vec<String>>>,
}

impl<'f> Launchers<'f> {
    pub fn of(files: &'f [FileEvidence]) -> Launchers<'f> {
        let mut scripts = BTreeMap::new();
        for f in files.iter().filter(|f| f.script.is_some()) {
            let Some((dir, name)) = f.path.rsplit_once('/') else { continue };
            if !(dir == "runners" || dir.ends_with("/runners")) {
                continue;
            }
            if let Some(stem) = name.strip_prefix("launch_").and_then(|n| n.strip_suffix(".sh")) {
                scripts.insert(stem.to_string(), f);
            }
        }
        let labels = files.iter().find(|f| labels::is_runner_labels(&f.path)).and_then(|f| f.text.as_deref()).map(labels::labels);
        Launchers { scripts, labels }
    }

    /// The launchers a runner label runs (with the instance each is run as):
    /// by the label table, else the label's own launcher.
    fn for_label(&self, label: &str) -> Vec<(&'f FileEvidence, String)> {
        let instances: Vec<String> = match self.labels.as_ref().and_then(|t| t.get(label)) {
            Some(instances) => instances.clone(),
            None => vec![format!("{}_0", label.strip_prefix("cluster:").unwrap_or(label))],
        };
        let mut out: Vec<(&FileEvidence, String)> = Vec::new();
        for instance in instances {
            let stem = instance.split('_').next().unwrap_or(&instance);
            if let Some(f) = self.scripts.get(stem)
                && !out.iter().any(|(o, _)| std::ptr::eq(*o, *f))
            {
                out.push((f, instance.clone()));
            }
        }
        out
    }

    /// The runs of the runners an entry's jobs are scheduled on, with the
    /// workflow's inputs that the entry decides.
    pub fn runs(&self, meta: &JobMeta, scenario: Option<Scenario>, spec_decoding: &str) -> Vec<RunnerRun> {
        let (Some(label), Some(image)) = (meta.runner.as_deref(), meta.image.as_deref()) else { return Vec::new() };
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        env.insert("IMAGE".into(), image.to_string());
        env.insert("RUNNER_TYPE".into(), label.to_string());
        env.insert("SPEC_DECODING".into(), spec_decoding.to_string());
        env.insert("GITHUB_WORKSPACE".into(), MOUNT.to_string());
        for (name, value) in [("MODEL", &meta.model), ("MODEL_PREFIX", &meta.model_prefix), ("PRECISION", &meta.precision), ("FRAMEWORK", &meta.framework)] {
            if let Some(v) = value {
                env.insert(name.into(), v.clone());
            }
        }
        if meta.multinode == Some(true) {
            // The multi-node workflow's; its exp-name starts with the model prefix and `_`.
            env.insert("IS_MULTINODE".into(), "true".into());
            if let Some(prefix) = &meta.model_prefix {
                env.insert("EXP_NAME".into(), format!("{prefix}_"));
            }
        }
        if let Some(s) = scenario {
            let (kind, subdir, agentic) = match s {
                Scenario::AgenticCoding => ("agentic-coding", "agentic/", "1"),
                Scenario::FixedSeqLen => ("fixed-seq-len", "fixed_seq_len/", "0"),
            };
            env.insert("SCENARIO_TYPE".into(), kind.into());
            env.insert("SCENARIO_SUBDIR".into(), subdir.into());
            env.insert("IS_AGENTIC".into(), agentic.into());
        }
        self.for_label(label)
            .into_iter()
            .map(|(f, instance)| {
                let mut env = env.clone();
                env.insert("RUNNER_NAME".into(), instance);
                RunnerRun { launcher: f.path.clone(), env }
            })
            .collect()
    }

    /// The launcher paths a label runs, and the files of the input each
    /// reaches, from one evaluation of each with only `IMAGE`'s presence
    /// known (every arm taken): what a change to any of them selects.
    pub fn reach(&self, tree: &TreeFiles) -> BTreeMap<String, Vec<String>> {
        use rayon::prelude::*;
        let files = RunnerFiles(tree);
        let launchers: Vec<&FileEvidence> = self.scripts.values().copied().collect();
        let work = || -> Vec<(String, Vec<String>)> {
            launchers
                .par_iter()
                .with_max_len(1)
                .filter_map(|f| {
                    let text = f.script.clone()?;
                    let file = FileRef { path: f.path.clone(), artifact: f.artifact.clone() };
                    let env = BTreeMap::from([("GITHUB_WORKSPACE".to_string(), MOUNT.to_string())]);
                    Some((f.path.clone(), reached(&evaluation(&file, &text, &env, &files), tree)))
                })
                .collect()
        };
        crate::evidence::on_evaluation_pool(work).into_iter().collect()
    }

    /// The scripts of the input outside `runners/` that the runs run
    /// (`bash benchmarks/multi_node/${SCRIPT_NAME}`), by their paths in
    /// the input, from the evaluation of each run.
    pub fn targets(&self, runs: &[RunnerRun], tree: &TreeFiles) -> Vec<String> {
        let files = TargetFiles(tree);
        let mut out: Vec<String> = Vec::new();
        for run in runs {
            let Some((_, e)) = self.evaluate_run(run, &files) else { continue };
            for path in in_tree_reached(&e) {
                // Files of the input only: not those the launcher itself wrote.
                let in_input = tree.read(&format!("{MOUNT}/{path}")).is_some();
                if in_input && !in_runners(&path) && !out.contains(&path) {
                    out.push(path);
                }
            }
        }
        out
    }

    /// Evaluate one run's launcher, reading `files`: the launcher and what it did.
    fn evaluate_run(&self, run: &RunnerRun, files: &dyn Files) -> Option<(FileRef, Evaluation)> {
        let f = self.scripts.values().find(|f| f.path == run.launcher)?;
        let text = f.script.as_deref()?;
        let file = FileRef { path: f.path.clone(), artifact: f.artifact.clone() };
        let e = evaluation(&file, text, &run.env, files);
        Some((file, e))
    }

    /// The launcher paths of a label.
    pub fn paths(&self, label: &str) -> Vec<String> {
        self.for_label(label).into_iter().map(|(f, _)| f.path.clone()).collect()
    }

    /// Evaluate each run: the images its containers start.
    fn evaluate(&self, runs: &[RunnerRun], tree: &TreeFiles) -> BTreeMap<RunnerRun, Vec<StartedImage>> {
        use rayon::prelude::*;
        let files = RunnerFiles(tree);
        let work = || -> Vec<(RunnerRun, Vec<StartedImage>)> {
            runs.par_iter()
                .with_max_len(1)
                .filter_map(|run| {
                    let (file, e) = self.evaluate_run(run, &files)?;
                    let image = run.env.get("IMAGE").map(String::as_str).unwrap_or_default();
                    Some((run.clone(), started(&file, &e, image)))
                })
                .collect()
        };
        crate::evidence::on_evaluation_pool(work).into_iter().collect()
    }
}

/// Each launcher's path and the files of the input it runs ([`Launchers::reach`]).
pub type Reach = BTreeMap<String, Vec<String>>;

/// [`Launchers::reach`] of the launchers among `files`: computed once per
/// read of a tree, before its passes of grouping.
pub fn reach_of(files: &[FileEvidence]) -> Reach {
    let launchers = Launchers::of(files);
    if launchers.scripts.is_empty() {
        return Reach::new();
    }
    launchers.reach(&tree_of(files))
}

/// The input's files as a run sees them: each one's script, or its text.
pub fn tree_of(files: &[FileEvidence]) -> TreeFiles<'_> {
    TreeFiles::new(files.iter().filter_map(|f| Some((f.path.as_str(), f.script.as_deref().or(f.text.as_deref())?))))
}

/// Fill in the images the runners start for the master-config entries
/// `metas` describe (the entry views of the jobs judged), from the files
/// of the input: each distinct run evaluated once.
pub fn start(files: &[FileEvidence], metas: &mut [&mut Metadata]) {
    let launchers = Launchers::of(files);
    let runs: Vec<Vec<RunnerRun>> = metas.iter().map(|m| launchers.runs(&m.meta, m.scenario, m.meta.spec_decoding.as_deref().unwrap_or("none"))).collect();
    let distinct: Vec<RunnerRun> = runs.iter().flatten().cloned().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    if distinct.is_empty() {
        return;
    }
    let texts: Vec<(&str, &str)> = files.iter().filter_map(|f| Some((f.path.as_str(), f.script.as_deref()?))).collect();
    let results = launchers.evaluate(&distinct, &TreeFiles::new(texts));
    for (meta, runs) in metas.iter_mut().zip(runs) {
        for s in runs.iter().flat_map(|r| results.get(r)).flatten() {
            if !meta.started.contains(s) {
                meta.started.push(s.clone());
            }
        }
    }
}

/// A launcher evaluated with `env` as the workflow starts it.
fn evaluation(file: &FileRef, text: &str, env: &BTreeMap<String, String>, files: &dyn Files) -> Evaluation {
    let inputs = Inputs { script: format!("{MOUNT}/{}", file.path), args: Vec::new(), env: env.clone(), open: true, cwd: MOUNT.to_string() };
    interp::evaluate(text, &inputs, files, Limits::default())
}

/// The files of the input a runner's evaluation ran: those it sourced, the
/// Python programs it ran (`python3 $GITHUB_WORKSPACE/runners/inject_synthetic_acceptance.py`)
/// and the packages beside them that they import.
fn reached(e: &Evaluation, tree: &TreeFiles) -> Vec<String> {
    let in_tree = |p: &str| p.strip_prefix(MOUNT).map(|r| r.trim_start_matches('/').to_string());
    let mut out = in_tree_reached(e);
    for x in &e.execs {
        let words: Vec<String> = x.argv.iter().map(Str::display).collect();
        let Some(program) = words.first().map(|p| p.rsplit('/').next().unwrap_or(p)) else { continue };
        if !program.starts_with("python") {
            continue;
        }
        let Some(script) = words.iter().skip(1).find(|w| !w.starts_with('-')).filter(|w| w.ends_with(".py")) else { continue };
        let Some(text) = tree.read(script) else { continue };
        let Some(rel) = in_tree(script) else { continue };
        let dir = script.rsplit_once('/').map_or(MOUNT, |(d, _)| d);
        out.push(rel);
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(module) = (match words.as_slice() {
                ["import" | "from", m, ..] => m.split('.').next(),
                _ => None,
            }) else {
                continue;
            };
            out.extend(tree.modules_in(&format!("{dir}/{module}")));
            out.extend(tree.modules_in(dir).into_iter().filter(|m| m.rsplit('/').next() == Some(&format!("{module}.py"))));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The files of the input an evaluation sourced or ran, by their paths
/// in the input (a relative path is the launcher's, run from the
/// checkout's root).
fn in_tree_reached(e: &Evaluation) -> Vec<String> {
    e.reached
        .iter()
        .filter(|(_, found, _)| *found)
        .filter_map(|(p, _, _)| {
            let p = p.known()?;
            let rel = match p.strip_prefix(MOUNT) {
                Some(r) => r.trim_start_matches('/'),
                None if !p.starts_with('/') => p.trim_start_matches("./"),
                None => return None,
            };
            Some(rel.to_string())
        })
        .collect()
}

/// The images a launcher's containers start, as its evaluation `e` gives them.
fn started(file: &FileRef, e: &Evaluation, image: &str) -> Vec<StartedImage> {
    let imports = imports(e);
    let mut out: Vec<StartedImage> = Vec::new();
    for (launcher, ctx) in &e.containers {
        let Some(value) = container_image(launcher) else { continue };
        let (started, mut written) = judge(&value, image, &imports);
        // A runner that assigns IMAGE itself is cited there: its value is
        // re-read by any child shell, which keeps no place of its own.
        if matches!(started, Started::Other { .. })
            && let Some(a) = e.assigns.iter().find(|a| a.name == "IMAGE" && a.value.as_ref().and_then(Str::known).as_deref() != Some(image))
        {
            written = Some(if a.name_at.line > 0 { a.name_at } else { a.ctx.at });
        }
        let mut places = vec![written.unwrap_or(ctx.at)];
        if places[0] != ctx.at {
            places.push(ctx.at);
        }
        let item = StartedImage { runner: file.path.clone(), started, at: places.into_iter().map(|p| evaluated::provenance(file, e, p)).collect() };
        if !out.contains(&item) {
            out.push(item);
        }
    }
    for item in mapped(file, e, image) {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Aliases of an `srtslurm.yaml` container map for what srt-slurm starts
/// beside the engine (the frontend's nginx, the DCGM power exporter).
const AUXILIARY: [&str; 2] = ["nginx", "dcgm"];

/// The containers an `srtslurm.yaml` the runner writes maps for srt-slurm
/// (a multi-node launch starts the recipe's workers in one of them): each
/// alias but the auxiliary ones must be the entry's image or its squash file.
fn mapped(file: &FileRef, e: &Evaluation, image: &str) -> Vec<StartedImage> {
    let mut out = Vec::new();
    for wr in e.writes.iter().filter(|w| w.path.display().rsplit('/').next() == Some("srtslurm.yaml")) {
        let places = interp::line_places(&wr.content, wr.ctx.at);
        for (alias, value, line) in labels::containers(&wr.content.display()) {
            if AUXILIARY.iter().any(|a| alias.starts_with(a)) {
                continue;
            }
            let name = value.rsplit('/').next().unwrap_or(&value);
            let started = if pinned(&value, image) || named_for(name, image) {
                Started::Pinned
            } else if value.contains('$') {
                Started::Undetermined(format!("srtslurm.yaml maps container {alias} to {value}, decided by the run"))
            } else {
                Started::Other {
                    image: value.clone(),
                    how: "the srtslurm.yaml it writes maps the recipe's containers to it, where srt-slurm starts the workers".into(),
                }
            };
            let at = places.get(line.saturating_sub(1)).copied().unwrap_or(wr.ctx.at);
            // Cited first where the runner wrote the value (`SQUASH_FILE=…`), then where it maps it.
            let written = e.assigns.iter().rev().find(|a| a.value.as_ref().is_some_and(|v| v.display() == value) && a.ctx.order < wr.ctx.order);
            let written = written.map(|a| if a.name_at.line > 0 { a.name_at } else { a.ctx.at }).filter(|w| *w != at);
            let at = written.into_iter().chain([at]).map(|p| evaluated::provenance(file, e, p)).collect();
            out.push(StartedImage { runner: file.path.clone(), started, at });
        }
    }
    out
}

/// An image import: the file it writes, the reference it pulls, where.
struct Import {
    to: Str,
    from: Str,
}

/// `enroot import [-o FILE] docker://REF` commands of the evaluation.
fn imports(e: &Evaluation) -> Vec<Import> {
    let mut out = Vec::new();
    for x in &e.execs {
        let words: Vec<String> = x.argv.iter().map(Str::display).collect();
        let program = words.first().map(|p| p.rsplit('/').next().unwrap_or(p));
        if program != Some("enroot") || words.get(1).map(String::as_str) != Some("import") {
            continue;
        }
        let mut to = None;
        let mut from = None;
        let mut i = 2;
        while i < x.argv.len() {
            match words[i].as_str() {
                "-o" | "--output" => {
                    to = x.argv.get(i + 1).cloned();
                    i += 1;
                }
                w if w.starts_with("--output=") => to = Some(after_equals(&x.argv[i])),
                w if !w.starts_with('-') => from = Some(x.argv[i].clone()),
                _ => {}
            }
            i += 1;
        }
        if let (Some(to), Some(from)) = (to, from) {
            out.push(Import { to, from });
        }
    }
    out
}

/// The value after the first `=` of an option word, with its places.
fn after_equals(word: &Str) -> Str {
    let parts = word.split_char('=');
    let mut out = Str::new();
    for (i, p) in parts.iter().enumerate().skip(1) {
        if i > 1 {
            out.push_str("=", p.first_place().unwrap_or_default());
        }
        out.append(p);
    }
    out
}

/// The image a container launcher starts: pyxis's `--container-image`, or
/// the image operand that ends a `docker|podman run` launcher.
fn container_image(launcher: &[Str]) -> Option<Str> {
    let words: Vec<String> = launcher.iter().map(Str::display).collect();
    let program = words.first().map(|p| p.rsplit('/').next().unwrap_or(p))?;
    match program {
        "docker" | "podman" | "nerdctl" => launcher.last().cloned(),
        _ => words.iter().enumerate().find_map(|(i, w)| {
            if w == "--container-image" { launcher.get(i + 1).cloned() } else { w.starts_with("--container-image=").then(|| after_equals(&launcher[i])) }
        }),
    }
}

/// A reference without its transport (`docker://`, `dockerd://`, `podman://`).
fn reference(text: &str) -> &str {
    ["docker://", "dockerd://", "podman://"].iter().find_map(|t| text.strip_prefix(t)).unwrap_or(text)
}

/// Whether a reference (with or without its transport) is `image`.
fn pinned(text: &str, image: &str) -> bool {
    normalise(reference(text)) == normalise(image)
}

/// Whether `name` (a squash file's name) is the runners' name for `image`:
/// its `/:@#` each written as `_` or `+`, with or without its registry.
fn named_for(name: &str, image: &str) -> bool {
    let stem = name.strip_suffix(".sqsh").unwrap_or(name);
    let bare = image.split_once('/').filter(|(host, _)| host.contains('.')).map_or(image, |(_, rest)| rest);
    [image, bare].iter().any(|i| ['_', '+'].iter().any(|c| i.replace(['/', ':', '@', '#'], &c.to_string()) == stem))
}

/// What a container started from `value` runs, and where the value was written.
fn judge(value: &Str, image: &str, imports: &[Import]) -> (Started, Option<Place>) {
    let written = value.first_place().filter(|p| p.line > 0);
    let shown = value.display();
    let path_like = shown.starts_with('/') || shown.ends_with(".sqsh") || shown.starts_with('$') || shown.starts_with('.');
    let pinned = |text: &str| pinned(text, image);
    if !path_like {
        return match value.known() {
            Some(text) if pinned(&text) => (Started::Pinned, written),
            Some(text) => (Started::Other { image: reference(&text).to_string(), how: "the runner starts it in place of the entry's image".into() }, written),
            None => (Started::Undetermined(format!("the container image is {shown}, decided by the run")), written),
        };
    }
    let sources: Vec<&Import> = imports.iter().filter(|i| i.to.display() == shown).collect();
    if let Some(other) = sources.iter().find(|i| i.from.known().is_some_and(|t| !pinned(&t))) {
        let text = other.from.known().unwrap_or_default();
        let how = format!("the runner imports it into {shown}, the squash file its container starts");
        // Cited where the reference's own text was written, past its transport.
        let transport = text.chars().count() - reference(&text).chars().count();
        let at = other.from.slice_chars(transport, usize::MAX).first_place().filter(|p| p.line > 0);
        return (Started::Other { image: reference(&text).to_string(), how }, at.or(written));
    }
    if sources.iter().any(|i| i.from.known().is_some_and(|t| pinned(&t))) {
        return (Started::Pinned, written);
    }
    if let Some(unknown) = sources.first() {
        return (Started::Undetermined(format!("{shown} is imported from {}, decided by the run", unknown.from.display())), written);
    }
    // No import of it on any path: a file already on the runner, known by its name.
    let name = value.split_char('/').pop().unwrap_or_default();
    match name.known() {
        Some(name) if named_for(&name, image) => (Started::Pinned, written),
        Some(name) if !name.is_empty() => {
            let how = format!("{shown}: a squash file the runner does not import from the entry's image, nor named for it");
            (Started::Other { image: shown.clone(), how }, written)
        }
        _ => (Started::Undetermined(format!("the container image is {shown}, decided by the run")), written),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started_of(script: &str, image: &str) -> Vec<Started> {
        let file = FileRef { path: "runners/launch_x.sh".into(), artifact: None };
        let env = BTreeMap::from([("IMAGE".to_string(), image.to_string())]);
        started(&file, &evaluation(&file, script, &env, &interp::NoFiles), image).into_iter().map(|s| s.started).collect()
    }

    const IMAGE: &str = "lmsysorg/sglang:v0.5.12-cu130";

    #[test]
    fn the_pinned_image_and_its_squash_file_are_pinned() {
        let direct = "srun --container-image=$IMAGE bash benchmarks/x.sh\n";
        assert_eq!(started_of(direct, IMAGE), vec![Started::Pinned]);
        let squash = "SQ=\"/sq/$(echo \"$IMAGE\" | sed 's/[\\/:@#]/_/g').sqsh\"\nif ! unsquashfs -l $SQ; then enroot import -o $SQ docker://$IMAGE; fi\nsrun --container-image=$(realpath $SQ) bash b.sh\n";
        assert_eq!(started_of(squash, IMAGE), vec![Started::Pinned]);
        let docker = "docker run --rm -v $PWD:/workspace \"$IMAGE\" bash b.sh\n";
        assert_eq!(started_of(docker, IMAGE), vec![Started::Pinned]);
    }

    #[test]
    fn a_rewritten_image_or_a_swapped_squash_file_is_another_image() {
        let rewrite = "IMAGE=lmsysorg/sglang:patched\nsrun --container-image=$IMAGE bash b.sh\n";
        assert!(matches!(started_of(rewrite, IMAGE).as_slice(), [Started::Other { image, .. }] if image == "lmsysorg/sglang:patched"));
        let swap = "SQ=/sq/lmsysorg_sglang_v0.5.12-cu130.sqsh\nenroot import -o $SQ docker://$IMAGE\nSQ=/sq/mine.sqsh\nsrun --container-image=$SQ bash b.sh\n";
        assert!(matches!(started_of(swap, IMAGE).as_slice(), [Started::Other { image, .. }] if image == "/sq/mine.sqsh"));
        let import = "SQ=/sq/lmsysorg_sglang_v0.5.12-cu130.sqsh\nenroot import -o $SQ docker://ghcr.io/me/sglang:x\nsrun --container-image=$SQ bash b.sh\n";
        assert!(matches!(started_of(import, IMAGE).as_slice(), [Started::Other { image, .. }] if image == "ghcr.io/me/sglang:x"));
    }

    #[test]
    fn an_srtslurm_container_map_is_judged_alias_by_alias() {
        let map = |line: &str| {
            format!(
                "SQ=\"/sq/$(echo \"$IMAGE\" | sed 's/[\\/:@#]/_/g').sqsh\"\ncat > srtslurm.yaml <<EOF\ncontainers:\n  dynamo-sglang: ${{SQ}}\n  nginx-sqsh: /sq/nginx_1.27.sqsh\n{line}\nEOF\nsrtctl apply -f r.yaml\n"
            )
        };
        let honest = started_of(&map("  \"${IMAGE}\": ${SQ}"), IMAGE);
        assert!(honest.len() == 2 && honest.iter().all(|s| *s == Started::Pinned), "{honest:?}");
        let swapped = started_of(&map("  dynamo-vllm: /sq/mine.sqsh"), IMAGE);
        assert!(
            swapped.contains(&Started::Pinned) && swapped.iter().any(|s| matches!(s, Started::Other { image, .. } if image == "/sq/mine.sqsh")),
            "{swapped:?}"
        );
    }

    #[test]
    fn squash_names_follow_the_runners_spellings() {
        assert!(named_for("lmsysorg_sglang_v0.5.12-cu130.sqsh", IMAGE));
        assert!(named_for("nvidia+tensorrt-llm+release+1.2.sqsh", "nvcr.io/nvidia/tensorrt-llm/release:1.2"));
        assert!(!named_for("lmsysorg_sglang_v0.5.11.sqsh", IMAGE));
    }
}
