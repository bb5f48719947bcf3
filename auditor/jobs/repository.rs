//! A checkout of benchmark sources audited before any run exists (the PR
//! gate): srt-slurm recipes, launch scripts and master-config entries become
//! the jobs they will run as, so the same checks judge them.
//!
//! - A recipe is one job per worker role (`<path>#decode`), and one per role
//!   of every variant of an override-format recipe
//!   (`<path>:zip_override_<name>[i]#decode`, the `CONFIG_FILE` selector
//!   syntax). A prefill role is informational.
//! - A launch script is two jobs: what its throughput path runs (`<path>`)
//!   and what its eval-only path runs (`<path> (eval-only)`), split by the
//!   `EVAL_ONLY` tests around each statement.
//! - A master-config entry is a job per scenario (`<path>#<key>`), with its
//!   `additional-settings` as environment. It runs the recipe its
//!   `CONFIG_FILE` names (matched by path suffix, then file name) or, single
//!   node, the script its name grammar names; the job sees that recipe's
//!   generation role (decode, else aggregated) or that script's throughput
//!   path, and the recipe and script jobs see the entry's model and
//!   scenario (and a recipe the settings the runner exports into it).

use super::{Job, JobKind, JobMeta, Scenario, Unexamined, runners};
use crate::evidence::args::launch;
use crate::evidence::env::{EnvAssignment, Scope};
use crate::evidence::gate::Run;
use crate::evidence::meta::Metadata;
use crate::evidence::yaml::master::{MasterEntry, ScenarioEntry};
use crate::evidence::yaml::recipe::{Recipe, RoleConfig};
use crate::evidence::{FileEvidence, FileKind};
use serde_json::Value;
use std::collections::BTreeSet;

/// A job of a repository and the views of files it sees.
#[derive(Debug, Clone)]
pub struct RepoJob {
    pub job: Job,
    pub files: Vec<FileEvidence>,
    /// What the job depends on that the input does not show.
    pub unexamined: Vec<Unexamined>,
}

/// Which configuration of a recipe: its base, or variant `i` of a `zip_override_<name>` block.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Selection {
    Base,
    Variant(String, usize),
}

impl Selection {
    fn suffix(&self) -> String {
        match self {
            Selection::Base => String::new(),
            Selection::Variant(name, i) => format!(":{name}[{i}]"),
        }
    }
}

/// A master-config entry's search-space points that run one recipe (or none).
struct EntryGroup<'f> {
    file: &'f FileEvidence,
    entry: &'f MasterEntry,
    scenario: &'f ScenarioEntry,
    /// The `additional-settings` of these points, one scope per point.
    settings: Vec<EnvAssignment>,
    config_file: Option<String>,
    /// The recipe its eval-only jobs run instead (`EVAL_CONFIG_FILE`).
    eval_config_file: Option<String>,
    /// The `spec-decoding` label of these points.
    spec_decoding: String,
    link: Option<Link<'f>>,
    eval_link: Option<Link<'f>>,
    /// The runner scripts its jobs are scheduled on and the files they run.
    runners: Vec<String>,
    /// For a multi-node entry, the scripts of the input its runner runs
    /// (the runner's evaluation with the entry's inputs).
    runs: Vec<String>,
}

/// What an entry runs.
#[derive(Clone)]
enum Link<'f> {
    Recipe(&'f FileEvidence, Selection, String),
    Script(&'f FileEvidence),
}

/// The jobs of a repository checkout; `None` when the files hold no recipe,
/// launch script or master-config entry, or hold the output of a run
/// (engine startup records in logs, env dumps, eval payloads): a run's
/// files are one job, whatever sources came with them.
pub fn group(files: &[FileEvidence]) -> Option<Vec<RepoJob>> {
    group_with(files, &runners::reach_of(files))
}

/// [`group`], with the launchers' reach computed beforehand ([`runners::reach_of`]).
pub fn group_with(files: &[FileEvidence], reach: &runners::Reach) -> Option<Vec<RepoJob>> {
    let run_output = |f: &FileEvidence| !f.env_dumps.is_empty() || f.eval_payload || (f.kind == FileKind::Log && !f.records.is_empty());
    if files.iter().any(run_output) {
        return None;
    }
    let recipes: Vec<&FileEvidence> = files.iter().filter(|f| !roles(f, &Selection::Base).is_empty()).collect();
    let scripts: Vec<&FileEvidence> = files.iter().filter(|f| is_launch_script(f)).collect();
    let mut groups = entry_groups(files);
    if recipes.is_empty() && scripts.is_empty() && groups.is_empty() {
        return None;
    }
    start_runners(files, reach, &mut groups);
    multi_node_targets(files, &mut groups);
    for group in &mut groups {
        group.link = link(group, group.config_file.as_deref(), &recipes, &scripts);
        group.eval_link = group.eval_config_file.as_deref().and_then(|c| link(group, Some(c), &recipes, &[]));
    }
    let mut jobs = Vec::new();
    for recipe in &recipes {
        let (selections, left_out) = selections(recipe);
        for selection in selections {
            let runs = |link: &Option<Link>| matches!(link, Some(Link::Recipe(f, s, _)) if std::ptr::eq(*f, *recipe) && *s == selection);
            let runner = groups.iter().find(|g| runs(&g.link));
            // A recipe that entries run only for their eval-only jobs (EVAL_CONFIG_FILE).
            let eval_runner = groups.iter().find(|g| runs(&g.eval_link)).filter(|_| runner.is_none());
            // With the master configs in the input, a recipe none of their
            // entries runs is not a job: its files are the repository's.
            if !groups.is_empty() && runner.is_none() && eval_runner.is_none() {
                continue;
            }
            for role in roles(recipe, &selection) {
                let mut job = match eval_runner {
                    Some(g) => eval_recipe_job(recipe, &selection, &role, g),
                    None => recipe_job(recipe, &selection, &role, runner),
                };
                job.unexamined.extend(left_out.iter().cloned().map(Unexamined::Other));
                jobs.push(job);
            }
        }
    }
    for script in &scripts {
        let runner = groups.iter().find(|g| matches!(&g.link, Some(Link::Script(f)) if std::ptr::eq(*f, *script)));
        // An eval-only run exists only where the script has an eval path.
        let runs: &[Run] = if script.eval_path { &[Run::Throughput, Run::EvalOnly] } else { &[Run::Throughput] };
        jobs.extend(runs.iter().map(|run| script_job(script, *run, runner)));
    }
    let multi = |g: &EntryGroup| {
        let same_entry = groups.iter().filter(|o| std::ptr::eq(o.entry, g.entry));
        let scenarios: BTreeSet<_> = same_entry.clone().map(|o| o.scenario.scenario).collect();
        let same_scenario: Vec<&EntryGroup> = same_entry.filter(|o| o.scenario.scenario == g.scenario.scenario).collect();
        let same_config = same_scenario.iter().filter(|o| o.config_file == g.config_file).count();
        (scenarios.len() > 1, same_scenario.len() > 1, same_config > 1)
    };
    for group in &groups {
        jobs.push(entry_job(group, multi(group)));
    }
    Some(jobs)
}

/// The runners each entry group's jobs are scheduled on and the files
/// of the input they run, so that a change to any of them selects the
/// group's jobs. What image each starts is judged for the jobs judged
/// ([`runners::start`]).
fn start_runners(files: &[FileEvidence], reach: &runners::Reach, groups: &mut [EntryGroup]) {
    let launchers = runners::Launchers::of(files);
    for group in groups.iter_mut() {
        let Some(label) = group.entry.meta.runner.as_deref() else { continue };
        for path in launchers.paths(label) {
            group.runners.extend(reach.get(&path).into_iter().flatten().cloned());
            group.runners.push(path);
        }
        group.runners.sort();
        group.runners.dedup();
    }
}

/// What the runner of each multi-node entry without a recipe runs: the
/// multi-node launchers pick the script by the entry's fields
/// (`benchmarks/multi_node/${EXP_NAME%%_*}_${PRECISION}_<sku>_${FRAMEWORK}.sh`),
/// not by the single-node name grammar.
fn multi_node_targets(files: &[FileEvidence], groups: &mut [EntryGroup]) {
    let needs = |g: &EntryGroup| g.entry.meta.multinode == Some(true) && g.config_file.is_none();
    if !groups.iter().any(needs) {
        return;
    }
    let launchers = runners::Launchers::of(files);
    let tree = runners::tree_of(files);
    for group in groups.iter_mut().filter(|g| needs(g)) {
        let runs = launchers.runs(&group.entry.meta, group.scenario.scenario, &group.spec_decoding);
        group.runs = launchers.targets(&runs, &tree);
    }
}

/// The id of [`leftover_job`].
pub const LEFTOVER: &str = "repository";

/// The pseudo-job of a repository's files that no job runs.
pub fn leftover_job() -> Job {
    Job {
        id: LEFTOVER.to_string(),
        kind: JobKind::RunLevel,
        scenario: None,
        runs_eval: false,
        kind_reason: "files of the repository that no recipe role, launch script or master-config entry runs (helpers, docs, other configs)".to_string(),
        role: None,
        meta: JobMeta::default(),
        from_sources: true,
        artifacts: Vec::new(),
    }
}

/// A launch script: a shell script that starts a serving engine, or any
/// script of a `single_node` benchmarks tree (golden-AL collection scripts
/// under `speedbench` are not submissions).
fn is_launch_script(file: &FileEvidence) -> bool {
    file.kind == FileKind::Script && launch_by_place(&file.path).unwrap_or_else(|| file.commands.iter().any(|c| c.engine().is_some()))
}

/// Whether a script's place says it is a launch script: any script of a
/// `single_node` tree is, one under `speedbench` is not; elsewhere
/// (`None`) only what it runs tells.
fn launch_by_place(path: &str) -> Option<bool> {
    let dirs: Vec<&str> = path.split('/').collect();
    if dirs.contains(&"speedbench") { Some(false) } else { dirs.contains(&"single_node").then_some(true) }
}

/// The scripts whose evaluation decides how jobs are grouped: those whose
/// place does not say whether they are launch scripts ([`launch_by_place`])
/// and that a master-config entry would run by name. Another script that
/// launches an engine forms a job of its own, which only its own change
/// (or a changed file it sources) selects, and judging it then evaluates it.
pub fn grouped_by_evaluation(files: &[FileEvidence]) -> BTreeSet<String> {
    let names: BTreeSet<String> = entry_groups(files).iter().filter_map(script_names).flat_map(|(names, _)| names).collect();
    files
        .iter()
        .filter(|f| f.kind == FileKind::Script && launch_by_place(&f.path).is_none())
        .filter(|f| f.path.rsplit('/').next().is_some_and(|n| names.contains(n)))
        .map(|f| f.path.clone())
        .collect()
}

fn is_base(variant: Option<&str>) -> bool {
    variant.is_none_or(|v| v == "base")
}

/// The roles a recipe configures in a selection: from role configs and role env sections.
fn roles(file: &FileEvidence, selection: &Selection) -> Vec<String> {
    let in_selection = |variant: Option<&str>| match selection {
        Selection::Base => is_base(variant),
        Selection::Variant(name, _) => is_base(variant) || variant == Some(name.as_str()),
    };
    let mut out: BTreeSet<String> =
        file.recipe.iter().flat_map(|r| r.roles.iter()).filter(|c| in_selection(c.variant.as_deref())).map(|c| c.role.clone()).collect();
    out.extend(file.env.iter().filter_map(|a| a.scope.recipe_role()).filter(|(v, _)| in_selection(*v)).map(|(_, r)| r.to_string()));
    out.into_iter().collect()
}

/// Most variants of one `zip_override_<name>` block made into jobs.
const MAX_VARIANTS: usize = 64;

/// The base of a recipe and every variant of its `zip_override_<name>` blocks
/// (as many as its longest list-valued leaf, at most [`MAX_VARIANTS`]), and
/// what was left out.
fn selections(file: &FileEvidence) -> (Vec<Selection>, Vec<String>) {
    let mut names: BTreeSet<&str> = file.recipe.iter().flat_map(|r| r.roles.iter()).filter_map(|c| c.variant.as_deref()).collect();
    names.extend(file.env.iter().filter_map(|a| a.scope.recipe_role()?.0));
    let mut out = vec![Selection::Base];
    let mut left_out = Vec::new();
    for name in names.into_iter().filter(|n| !is_base(Some(n))) {
        let count = file
            .recipe
            .iter()
            .flat_map(|r| r.roles.iter())
            .filter(|c| c.variant.as_deref() == Some(name))
            .flat_map(|c| c.args.iter())
            .filter_map(|a| a.value.as_array().map(Vec::len))
            .max()
            .unwrap_or(1)
            .max(1);
        if count > MAX_VARIANTS {
            left_out.push(format!("{name} variants {MAX_VARIANTS}..{} (only the first {MAX_VARIANTS} are audited)", count - 1));
        }
        out.extend((0..count.min(MAX_VARIANTS)).map(|i| Selection::Variant(name.to_string(), i)));
    }
    (out, left_out)
}

/// What one role of a recipe selection sees: its env scopes (and the
/// recipe-wide and client ones), and its engine config with a variant's
/// overrides applied (list leaves zipped: element `i`).
fn role_view(file: &FileEvidence, selection: &Selection, role: &str) -> FileEvidence {
    let variant = match selection {
        Selection::Base => None,
        Selection::Variant(name, _) => Some(name.as_str()),
    };
    let in_role = |a: &EnvAssignment| match a.scope.recipe_role() {
        Some((v, r)) => r == role && (is_base(v) || v == variant),
        None => a.scope == Scope::Recipe || a.client,
    };
    // A variant's values follow the base's in one scope, so they override them.
    let (base, over): (Vec<EnvAssignment>, Vec<EnvAssignment>) =
        file.env.iter().filter(|a| in_role(a)).cloned().partition(|a| a.scope.recipe_role().is_none_or(|(v, _)| is_base(v)));
    // TensorRT-LLM blocks are in the role's config (the file's records mix every role).
    let mut view = file.part(base.into_iter().chain(over).collect(), file.commands.clone());
    if let Selection::Variant(name, i) = selection {
        let scope = Scope::RecipeRole { variant: Some(format!("{name}[{i}]")), role: role.to_string() };
        view.env.iter_mut().filter(|a| !a.client).for_each(|a| a.scope = scope.clone());
    }
    let configs: Vec<&RoleConfig> = file.recipe.iter().flat_map(|r| r.roles.iter()).filter(|c| c.role == role).collect();
    let base_config = configs.iter().find(|c| is_base(c.variant.as_deref())).map(|c| (*c).clone());
    let over_config = configs.iter().find(|c| variant.is_some() && c.variant.as_deref() == variant);
    let config = match (base_config, over_config, selection) {
        (base, Some(over), Selection::Variant(_, i)) => Some(overlay(base, over, *i)),
        (base, _, _) => base,
    };
    view.recipe = file.recipe.as_ref().map(|r| Recipe { roles: config.into_iter().collect(), ..r.clone() });
    view
}

/// A base role config with variant `index` of an override block applied.
fn overlay(base: Option<RoleConfig>, over: &RoleConfig, index: usize) -> RoleConfig {
    let mut config = base.unwrap_or_else(|| RoleConfig { args: Vec::new(), ..over.clone() });
    for arg in &over.args {
        let value = match &arg.value {
            Value::Array(items) => match items.get(index) {
                Some(Value::String(s)) => launch::typed(s),
                Some(v) => v.clone(),
                None => continue,
            },
            other => other.clone(),
        };
        let arg = crate::evidence::yaml::recipe::RoleArg { value, ..arg.clone() };
        match config.args.iter_mut().find(|a| a.field == arg.field) {
            Some(existing) => *existing = arg,
            None => config.args.push(arg),
        }
    }
    config.variant = over.variant.clone();
    config
}

fn recipe_job(file: &FileEvidence, selection: &Selection, role: &str, runner: Option<&EntryGroup>) -> RepoJob {
    let mut files = vec![role_view(file, selection, role)];
    let mut unexamined = Vec::new();
    let (meta, scenario, reason) = match runner {
        Some(g) => {
            files.push(settings_view(g));
            (
                linked_meta(g),
                g.scenario.scenario,
                format!("srt-slurm recipe, {role} role; run by master-config entry {} (its additional-settings are exported into the launch)", g.entry.key),
            )
        }
        None => {
            unexamined.push(Unexamined::Other(
                "the master-config entry that runs this recipe (CONFIG_FILE): its additional-settings may change the environment".to_string(),
            ));
            let by_path = file.path.to_ascii_lowercase().contains("agentic").then_some(Scenario::AgenticCoding);
            (
                JobMeta::default(),
                file.recipe.as_ref().and_then(|r| r.scenario).or(by_path),
                format!("srt-slurm recipe, {role} role; no master-config entry in the input runs it"),
            )
        }
    };
    let reason = if role == "prefill" { format!("{reason}; prefill does not generate tokens: informational for golden-al and sim-acc") } else { reason };
    let job = Job {
        id: format!("{}{}#{role}", file.path, selection.suffix()),
        kind: JobKind::Throughput,
        scenario,
        runs_eval: false,
        kind_reason: reason,
        role: Some(role.to_string()),
        meta,
        from_sources: true,
        artifacts: Vec::new(),
    };
    RepoJob { job, files, unexamined }
}

/// A recipe that master-config entries run only for their eval-only jobs
/// (`EVAL_CONFIG_FILE`): its roles are eval-only jobs, which must not
/// simulate acceptance, and it needs no simulated acceptance either.
fn eval_recipe_job(file: &FileEvidence, selection: &Selection, role: &str, runner: &EntryGroup) -> RepoJob {
    let mut job = recipe_job(file, selection, role, Some(runner));
    job.job.kind = JobKind::EvalOnly;
    job.job.kind_reason = format!("srt-slurm recipe, {role} role; the eval-only recipe of master-config entry {} (EVAL_CONFIG_FILE)", runner.entry.key);
    job
}

/// What one path of a launch script runs, with the engine configs it
/// writes from heredocs (`cat > ser.yaml <<EOF`) for its launch to read.
fn script_view(file: &FileEvidence, run: Run) -> FileEvidence {
    let env = file.env.iter().filter(|a| a.gate.runs_in(run)).cloned().collect();
    let mut view = file.part(env, file.commands.iter().filter(|c| c.gate.runs_in(run)).cloned().collect());
    view.records = file.records.clone();
    view
}

fn script_job(file: &FileEvidence, run: Run, runner: Option<&EntryGroup>) -> RepoJob {
    let view = script_view(file, run);
    let dirs: Vec<&str> = file.path.split('/').collect();
    let by_path = if dirs.contains(&"agentic") {
        Some(Scenario::AgenticCoding)
    } else if dirs.contains(&"fixed_seq_len") {
        Some(Scenario::FixedSeqLen)
    } else {
        None
    };
    let mut meta = runner.map(linked_meta).unwrap_or_default();
    meta.fill_from(&script_name_meta(&file.path));
    let (id, kind, reason) = match run {
        Run::Throughput => (file.path.clone(), JobKind::Throughput, "launch script, throughput path (statements that run unless EVAL_ONLY=true)"),
        Run::EvalOnly => (format!("{} (eval-only)", file.path), JobKind::EvalOnly, "launch script, eval-only path (statements that run when EVAL_ONLY=true)"),
    };
    let job = Job {
        id,
        kind,
        scenario: by_path.or(runner.and_then(|g| g.scenario.scenario)),
        runs_eval: false,
        kind_reason: reason.to_string(),
        role: None,
        meta,
        from_sources: true,
        artifacts: Vec::new(),
    };
    RepoJob { job, files: vec![view], unexamined: Vec::new() }
}

/// `<prefix>_<precision>_<sku>[_<framework>][_mtp].sh` (the runners' `benchmarks/single_node/${SCENARIO_SUBDIR}<name>` lookup).
fn script_name_meta(path: &str) -> JobMeta {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    let parts: Vec<&str> = stem.split('_').collect();
    let [prefix, precision, sku, ..] = parts.as_slice() else { return JobMeta::default() };
    JobMeta {
        model_prefix: Some(prefix.to_string()),
        precision: Some(precision.to_string()),
        hw: Some(sku.to_string()),
        spec_decoding: stem.ends_with("_mtp").then(|| "mtp".to_string()),
        ..JobMeta::default()
    }
}

/// What an entry says about the jobs that run its recipe or script: the
/// model and its labels, not the image (the entry's own job judges that).
fn linked_meta(group: &EntryGroup) -> JobMeta {
    JobMeta { image: None, runner: None, hw: None, spec_decoding: Some(group.spec_decoding.clone()), ..group.entry.meta.clone() }
}

/// The master config as one group of an entry sees it: its settings.
fn settings_view(group: &EntryGroup) -> FileEvidence {
    group.file.part(group.settings.clone(), Vec::new())
}

fn entry_job(group: &EntryGroup, (scenarios, runs, labels): (bool, bool, bool)) -> RepoJob {
    let mut entry_view = settings_view(group);
    let meta = JobMeta { spec_decoding: Some(group.spec_decoding.clone()), ..group.entry.meta.clone() };
    entry_view.metadata = Some(Box::new(Metadata {
        meta: meta.clone(),
        scenario: group.scenario.scenario,
        image_at: Some(group.entry.image_at.clone()),
        runners: group.runners.clone(),
        started: Vec::new(),
    }));
    let mut files = vec![entry_view];
    let (reason, unexamined) = match &group.link {
        Some(Link::Recipe(recipe, selection, role)) => {
            files.push(role_view(recipe, selection, role));
            (format!("master-config entry; runs {}{}#{role} (CONFIG_FILE)", recipe.path, selection.suffix()), Vec::new())
        }
        Some(Link::Script(script)) => {
            files.push(script_view(script, Run::Throughput));
            let by = if group.runs.contains(&script.path) { "its runner's evaluation" } else { "the launch-script name grammar" };
            (format!("master-config entry; runs {} (by {by})", script.path), Vec::new())
        }
        None => {
            let what = match &group.config_file {
                Some(c) => Unexamined::NotInInput(format!("the recipe CONFIG_FILE={c} names")),
                None if group.entry.meta.multinode == Some(true) && !group.runs.is_empty() => Unexamined::NotMapped(format!(
                    "the engine launch of entry {} (its runner runs {}, in which the auditor finds no engine launch it follows)",
                    group.entry.key,
                    group.runs.join(", ")
                )),
                None if group.entry.meta.multinode == Some(true) => {
                    Unexamined::NotMapped(format!("the multi-node launch of entry {} (a runner's multi-node pipeline such as amd_utils/)", group.entry.key))
                }
                None => {
                    let meta = &group.entry.meta;
                    let name = [&meta.model_prefix, &meta.precision, &meta.hw, &meta.framework]
                        .iter()
                        .map(|v| v.as_deref().unwrap_or("?"))
                        .collect::<Vec<_>>()
                        .join("_");
                    Unexamined::NotInInput(format!("the launch script of entry {} ({name}[_mtp].sh by the runner's name grammar)", group.entry.key))
                }
            };
            (format!("master-config entry; {what}"), vec![what])
        }
    };
    let mut id = format!("{}#{}", group.file.path, group.entry.key);
    if scenarios {
        id.push('/');
        id.push_str(group.scenario.scenario.map_or("unknown", scenario_name));
    }
    let mut tags: Vec<String> = Vec::new();
    if let (true, Some(config)) = (runs, &group.config_file) {
        tags.push(config.clone());
    }
    if runs && (labels || group.config_file.is_none()) {
        tags.push(format!("spec-decoding {}", group.spec_decoding));
    }
    if !tags.is_empty() {
        id.push_str(&format!(" [{}]", tags.join(", ")));
    }
    let job = Job {
        id,
        kind: JobKind::Throughput,
        scenario: group.scenario.scenario,
        runs_eval: false,
        kind_reason: reason,
        role: None,
        meta,
        from_sources: true,
        artifacts: Vec::new(),
    };
    RepoJob { job, files, unexamined }
}

fn scenario_name(scenario: Scenario) -> &'static str {
    match scenario {
        Scenario::AgenticCoding => "agentic-coding",
        Scenario::FixedSeqLen => "fixed-seq-len",
    }
}

/// The search-space point an `additional-settings` scope path belongs to:
/// settings of its `prefill`/`decode` blocks are exported together.
fn point_of(path: &str) -> &str {
    let Some(at) = path.find(".search-space.") else { return path };
    let rest = &path[at + ".search-space.".len()..];
    let end = rest.find('.').map_or(path.len(), |i| at + ".search-space.".len() + i);
    &path[..end]
}

/// Every (entry, scenario) of every master config, split by what its
/// points run: the recipe (`CONFIG_FILE`), the eval recipe
/// (`EVAL_CONFIG_FILE`) and the point's own `spec-decoding` label (which
/// picks the `_mtp` script of a single-node entry).
fn entry_groups(files: &[FileEvidence]) -> Vec<EntryGroup<'_>> {
    let mut out = Vec::new();
    for file in files.iter().filter(|f| !f.master.is_empty()) {
        // Sorted by scope path (stably: in-scope order kept), so each scenario's settings are one range.
        let mut sorted: Vec<(&str, &EnvAssignment)> = file.env.iter().filter_map(|a| Some((a.scope.settings_path()?, a))).collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        for entry in &file.master {
            for scenario in &entry.scenarios {
                let prefix = scenario.settings_path.as_str();
                let start = sorted.partition_point(|(path, _)| *path < prefix);
                let settings: Vec<EnvAssignment> = sorted[start..]
                    .iter()
                    .take_while(|(path, _)| path.starts_with(prefix))
                    .map(|(path, a)| EnvAssignment { scope: Scope::Settings(point_of(path).to_string()), ..(*a).clone() })
                    .collect();
                let value_of = |point: &str, name: &str| {
                    settings.iter().filter(|a| a.scope.settings_path() == Some(point) && a.name == name).filter_map(|a| a.value.clone()).next_back()
                };
                type Key = (Option<String>, Option<String>, String);
                let mut by_run: Vec<(Key, Vec<&str>)> = Vec::new();
                for point in &scenario.points {
                    let key = (value_of(&point.settings_path, "CONFIG_FILE"), value_of(&point.settings_path, "EVAL_CONFIG_FILE"), point.spec_decoding.clone());
                    match by_run.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, list)) => list.push(point.settings_path.as_str()),
                        None => by_run.push((key, vec![point.settings_path.as_str()])),
                    }
                }
                if by_run.is_empty() {
                    by_run.push(((None, None, "none".to_string()), Vec::new()));
                }
                for ((config_file, eval_config_file, spec_decoding), points) in by_run {
                    let settings = settings.iter().filter(|a| a.scope.settings_path().is_some_and(|p| points.contains(&p))).cloned().collect();
                    out.push(EntryGroup {
                        file,
                        entry,
                        scenario,
                        settings,
                        config_file,
                        eval_config_file,
                        spec_decoding,
                        link: None,
                        eval_link: None,
                        runners: Vec::new(),
                        runs: Vec::new(),
                    });
                }
            }
        }
    }
    out
}

/// Recipes that only retired master configs run (their `CONFIG_FILE` or
/// `EVAL_CONFIG_FILE` names them, no active entry does): retired with them.
pub fn run_only_by_retired(active: &[FileEvidence], retired: &[FileEvidence]) -> BTreeSet<String> {
    let recipes: Vec<&FileEvidence> = active.iter().filter(|f| !roles(f, &Selection::Base).is_empty()).collect();
    let named = |files: &[FileEvidence]| -> BTreeSet<String> {
        files
            .iter()
            .filter(|f| !f.master.is_empty())
            .flat_map(|f| f.env.iter())
            .filter(|a| a.name == "CONFIG_FILE" || a.name == "EVAL_CONFIG_FILE")
            .filter_map(|a| a.value.as_deref())
            .filter_map(|v| find_by_path(&recipes, split_selector(v).0))
            .map(|f| f.path.clone())
            .collect()
    };
    let by_active = named(active);
    named(retired).into_iter().filter(|p| !by_active.contains(p)).collect()
}

/// What an entry group runs: the recipe its `CONFIG_FILE` names, or the
/// launch script its fields name.
fn link<'f>(group: &EntryGroup<'f>, config_file: Option<&str>, recipes: &[&'f FileEvidence], scripts: &[&'f FileEvidence]) -> Option<Link<'f>> {
    match config_file {
        Some(config) => {
            let (path, selector) = split_selector(config);
            let recipe = find_by_path(recipes, path)?;
            let selection = selector.unwrap_or(Selection::Base);
            let roles = roles(recipe, &selection);
            let role = ["decode", "aggregated"].into_iter().find(|r| roles.iter().any(|x| x == r))?;
            Some(Link::Recipe(recipe, selection, role.to_string()))
        }
        // A multi-node entry runs what its runner runs, whatever the names say.
        None if group.entry.meta.multinode == Some(true) => group.runs.iter().find_map(|t| scripts.iter().find(|s| s.path == *t)).map(|s| Link::Script(s)),
        None => script_for(group, scripts).map(Link::Script),
    }
}

/// `recipes/x.yaml:zip_override_k[1]` -> (`recipes/x.yaml`, variant 1 of `zip_override_k`).
fn split_selector(config: &str) -> (&str, Option<Selection>) {
    let Some((path, selector)) = config.rsplit_once(':').filter(|(p, _)| p.ends_with(".yaml") || p.ends_with(".yml")) else { return (config, None) };
    let (name, index) = match selector.strip_suffix(']').and_then(|s| s.split_once('[')) {
        Some((name, i)) => (name, i.parse().unwrap_or(0)),
        None => (selector, 0),
    };
    (path, Some(Selection::Variant(name.to_string(), index)))
}

/// The recipe a `CONFIG_FILE` path names: the launcher copies the repo's
/// recipes under `recipes/`, so the path after it must match the end of
/// the recipe's path, folder by folder. A file of the same name elsewhere
/// is another recipe (another model, another SKU): a path the tree does
/// not hold is not in the input.
fn find_by_path<'f>(recipes: &[&'f FileEvidence], path: &str) -> Option<&'f FileEvidence> {
    let rest = path.strip_prefix("recipes/").unwrap_or(path);
    recipes.iter().find(|r| r.path == rest || r.path.ends_with(&format!("/{rest}"))).copied()
}

/// The file names a group's launch script may have, and the scenario
/// directory it sits in (empty: any).
fn script_names(group: &EntryGroup) -> Option<([String; 2], &'static str)> {
    let meta = &group.entry.meta;
    let (Some(prefix), Some(precision), Some(sku), Some(framework)) = (&meta.model_prefix, &meta.precision, &meta.hw, &meta.framework) else { return None };
    let spec = if group.spec_decoding == "mtp" { "_mtp" } else { "" };
    let legacy = if framework == "trt" { "_trt" } else { "" };
    let names = [format!("{prefix}_{precision}_{sku}_{framework}{spec}.sh"), format!("{prefix}_{precision}_{sku}{legacy}{spec}.sh")];
    let dir = match group.scenario.scenario {
        Some(Scenario::AgenticCoding) => "agentic",
        Some(Scenario::FixedSeqLen) => "fixed_seq_len",
        None => "",
    };
    Some((names, dir))
}

/// The single-node script an entry runs:
/// `<prefix>_<precision>_<sku>[_<framework>][_mtp].sh` (framework-tagged
/// name first; legacy names use `_trt` for TRT-LLM and nothing otherwise),
/// in the scenario's own directory.
fn script_for<'f>(group: &EntryGroup, scripts: &[&'f FileEvidence]) -> Option<&'f FileEvidence> {
    let (names, dir) = script_names(group)?;
    // The runner runs `benchmarks/single_node/${SCENARIO_SUBDIR}<name>`: a
    // script of the same name in another scenario's directory is not it.
    names.iter().find_map(|name| {
        let matching: Vec<&&FileEvidence> = scripts.iter().filter(|s| s.path.rsplit('/').next() == Some(name.as_str())).collect();
        if dir.is_empty() {
            return matching.first().map(|s| **s);
        }
        matching.iter().find(|s| s.path.split('/').any(|d| d == dir)).map(|s| **s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Extractor;

    fn group_of(files: &[(&str, &str)]) -> Vec<RepoJob> {
        let ex = Extractor::new(1 << 20);
        let evidence: Vec<FileEvidence> =
            files.iter().map(|(path, text)| ex.extract(path, crate::evidence::classify(path).unwrap(), &mut text.as_bytes()).0).collect();
        group(&evidence).unwrap()
    }

    fn job<'a>(jobs: &'a [RepoJob], id: &str) -> &'a RepoJob {
        jobs.iter().find(|j| j.job.id == id).unwrap_or_else(|| panic!("no job {id} in {:?}", jobs.iter().map(|j| &j.job.id).collect::<Vec<_>>()))
    }

    fn steps(job: &RepoJob) -> Vec<Value> {
        job.files
            .iter()
            .filter_map(|f| f.recipe.as_ref())
            .flat_map(|r| r.roles.iter())
            .flat_map(|c| c.args.iter())
            .filter(|a| a.field == "speculative_num_steps")
            .map(|a| a.value.clone())
            .collect()
    }

    const OVERRIDE_RECIPE: &str = "base:\n  backend:\n    type: sglang\n    decode_environment:\n      SGLANG_SIMULATE_ACC_LEN: '2.49'\n    sglang_config:\n      prefill: {speculative-num-steps: 3}\n      decode: {speculative-num-steps: 3, tp-size: 8}\nzip_override_k:\n  backend:\n    decode_environment:\n      SGLANG_SIMULATE_ACC_LEN: '2.27'\n    sglang_config:\n      decode: {speculative-num-steps: [1, 2]}\n";

    #[test]
    fn override_recipes_give_a_job_per_variant_and_role() {
        let path = "benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4/x.yaml";
        let jobs = group_of(&[(path, OVERRIDE_RECIPE)]);
        let ids: BTreeSet<&str> = jobs.iter().map(|j| j.job.id.as_str()).collect();
        let expected: BTreeSet<String> =
            ["#decode", "#prefill", ":zip_override_k[0]#decode", ":zip_override_k[0]#prefill", ":zip_override_k[1]#decode", ":zip_override_k[1]#prefill"]
                .iter()
                .map(|s| format!("{path}{s}"))
                .collect();
        assert_eq!(ids, expected.iter().map(String::as_str).collect());
        assert_eq!(steps(job(&jobs, &format!("{path}#decode"))), [Value::from(3)]);
        let variant = job(&jobs, &format!("{path}:zip_override_k[1]#decode"));
        assert_eq!(steps(variant), [Value::from(2)]);
        // The variant's value follows the base's in one scope: it takes effect.
        let env: Vec<(&str, String)> = variant.files[0].env.iter().map(|a| (a.value.as_deref().unwrap(), a.scope.to_string())).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(v, s)| (*v, s.as_str())).collect();
        assert_eq!(env, [("2.49", "recipe:zip_override_k[1]:decode"), ("2.27", "recipe:zip_override_k[1]:decode")]);
        let prefill = job(&jobs, &format!("{path}#prefill"));
        assert!(prefill.job.informational() && prefill.files[0].env.is_empty());
        assert_eq!(prefill.unexamined.len(), 1, "no master-config entry runs it");
    }

    /// The runner's eval-only run of a script runs its eval path; a script
    /// with none (an agentic replay only) has no eval-only job.
    #[test]
    fn an_eval_only_job_exists_only_where_the_script_has_an_eval_path() {
        let path = "benchmarks/single_node/agentic/x_fp4_b300_mtp.sh";
        let ids = |script: &str| group_of(&[(path, script)]).into_iter().map(|j| j.job.id).collect::<Vec<_>>();
        let replay =
            "vllm serve /m --speculative-config '{\"method\":\"eagle3\",\"num_speculative_tokens\":3}'\nrun_agentic_replay_and_write_outputs \"$RESULT_DIR\"\n";
        assert_eq!(ids(replay), [path]);
        let with_eval = format!("{replay}if [ \"${{EVAL_ONLY}}\" = \"true\" ]; then\n    run_eval --port 8000\nfi\n");
        assert_eq!(ids(&with_eval), [path.to_string(), format!("{path} (eval-only)")]);
    }

    /// A CONFIG_FILE the tree does not hold is not in the input, even when
    /// a recipe of the same file name for another model and SKU is.
    #[test]
    fn a_config_file_is_matched_by_its_path_never_by_its_file_name_alone() {
        let master = "dsr1-fp8-b200-dynamo-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: dsr1\n  framework: dynamo-sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - search-space:\n      - spec-decoding: none\n        additional-settings: [\"CONFIG_FILE=recipes/b200-fp8/8k1k_stp_maxtpt_0.yaml\"]\n";
        let other = "benchmarks/multi_node/srt-slurm-recipes/sglang/qwen3.5/gb300-fp4/8k1k/disagg/stp/8k1k_stp_maxtpt_0.yaml";
        let jobs = group_of(&[("configs/nvidia-master.yaml", master), (other, OVERRIDE_RECIPE)]);
        let entry = job(&jobs, "configs/nvidia-master.yaml#dsr1-fp8-b200-dynamo-sglang");
        assert_eq!(entry.files.len(), 1, "the entry alone, not the Qwen3.5 GB300 recipe");
        assert!(
            matches!(&entry.unexamined[..], [Unexamined::NotInInput(what)] if what.contains("recipes/b200-fp8/8k1k_stp_maxtpt_0.yaml")),
            "{:?}",
            entry.unexamined
        );
    }

    #[test]
    fn entries_link_recipe_variants_and_scripts() {
        let master = "a-fp4-gb200-dynamo-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: dsv4\n  framework: dynamo-sglang\n  runner: cluster:gb200-nv\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: mtp\n        additional-settings: [\"CONFIG_FILE=recipes/sglang/dsv4/x.yaml:zip_override_k[1]\"]\n      - spec-decoding: mtp\n        additional-settings: [\"CONFIG_FILE=recipes/sglang/dsv4/missing.yaml\"]\ndsv4-fp4-b200-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: dsv4\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - search-space:\n      - { spec-decoding: mtp }\n";
        let script = "if [ \"$EVAL_ONLY\" != true ]; then export SGLANG_SIMULATE_ACC_LEN=2.49; fi\npython3 -m sglang.launch_server --speculative-num-steps 3\n";
        let jobs = group_of(&[
            ("configs/nvidia-master.yaml", master),
            ("benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4/x.yaml", OVERRIDE_RECIPE),
            ("benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang_mtp.sh", script),
        ]);
        let linked = job(&jobs, "configs/nvidia-master.yaml#a-fp4-gb200-dynamo-sglang [recipes/sglang/dsv4/x.yaml:zip_override_k[1]]");
        assert_eq!(steps(linked), [Value::from(2)]);
        assert!(linked.job.kind_reason.contains("x.yaml:zip_override_k[1]#decode"), "{}", linked.job.kind_reason);
        let missing = job(&jobs, "configs/nvidia-master.yaml#a-fp4-gb200-dynamo-sglang [recipes/sglang/dsv4/missing.yaml]");
        assert_eq!((missing.files.len(), missing.unexamined.len()), (1, 1));
        let variant = job(&jobs, "benchmarks/multi_node/srt-slurm-recipes/sglang/dsv4/x.yaml:zip_override_k[1]#decode");
        assert_eq!((variant.job.scenario, variant.job.meta.model_prefix.as_deref()), (Some(Scenario::AgenticCoding), Some("dsv4")));
        assert!(variant.unexamined.is_empty());
        // No entry runs the base or the other variant: with the master config in the input they are not jobs.
        let recipe_jobs: Vec<&str> = jobs.iter().map(|j| j.job.id.as_str()).filter(|id| id.starts_with("benchmarks/multi_node")).collect();
        assert_eq!(recipe_jobs.len(), 2, "the run variant's roles only: {recipe_jobs:?}");
        assert!(recipe_jobs.iter().all(|id| id.contains(":zip_override_k[1]#")), "{recipe_jobs:?}");
        let single = job(&jobs, "configs/nvidia-master.yaml#dsv4-fp4-b200-sglang");
        assert_eq!(single.files.len(), 2, "the entry and its script's throughput path");
        assert_eq!(single.files[1].env.len(), 1);
        let eval = job(&jobs, "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_sglang_mtp.sh (eval-only)");
        assert_eq!((eval.job.kind, eval.files[0].env.len(), eval.files[0].commands.len()), (JobKind::EvalOnly, 0, 1));
        assert_eq!(eval.job.scenario, Some(Scenario::FixedSeqLen));
    }

    #[test]
    fn each_point_keeps_its_own_label_and_eval_recipes_are_eval_only() {
        let master = "q-fp8-h200-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: q\n  precision: fp8\n  framework: sglang\n  runner: h200\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - { tp: 8 }\n      - { tp: 8, spec-decoding: mtp }\nm-fp4-gb300-dynamo-vllm:\n  image: vllm/vllm-openai:v1\n  model-prefix: m\n  framework: dynamo-vllm\n  runner: gb300\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: mtp\n        additional-settings: [\"CONFIG_FILE=recipes/m/tput.yaml\", \"EVAL_CONFIG_FILE=recipes/m/eval.yaml\"]\n";
        let recipe = "backend:\n  type: vllm\n  vllm_config:\n    decode: {tensor-parallel-size: 4}\n";
        let jobs = group_of(&[
            ("configs/nvidia-master.yaml", master),
            ("benchmarks/single_node/agentic/q_fp8_h200.sh", "python3 -m sglang.launch_server --tp 8\n"),
            ("benchmarks/single_node/agentic/q_fp8_h200_mtp.sh", "python3 -m sglang.launch_server --tp 8 --speculative-num-steps 3\n"),
            ("benchmarks/multi_node/srt-slurm-recipes/m/tput.yaml", recipe),
            ("benchmarks/multi_node/srt-slurm-recipes/m/eval.yaml", recipe),
        ]);
        let plain = job(&jobs, "configs/nvidia-master.yaml#q-fp8-h200-sglang [spec-decoding none]");
        assert!(plain.job.kind_reason.ends_with("q_fp8_h200.sh (by the launch-script name grammar)"), "{}", plain.job.kind_reason);
        assert_eq!(plain.job.meta.spec_decoding.as_deref(), Some("none"), "not borrowed from the mtp sibling");
        let mtp = job(&jobs, "configs/nvidia-master.yaml#q-fp8-h200-sglang [spec-decoding mtp]");
        assert!(mtp.job.kind_reason.contains("q_fp8_h200_mtp.sh"));
        let eval = job(&jobs, "benchmarks/multi_node/srt-slurm-recipes/m/eval.yaml#decode");
        assert_eq!(eval.job.kind, JobKind::EvalOnly, "{}", eval.job.kind_reason);
        assert_eq!(job(&jobs, "benchmarks/multi_node/srt-slurm-recipes/m/tput.yaml#decode").job.kind, JobKind::Throughput);
    }

    #[test]
    fn recipes_only_retired_configs_run_are_retired() {
        let ex = Extractor::new(1 << 20);
        let file = |path: &str, text: &str| ex.extract(path, crate::evidence::classify(path).unwrap(), &mut text.as_bytes()).0;
        let recipe = "backend:\n  type: sglang\n  sglang_config:\n    decode: {tp-size: 8}\n";
        let master = |config: &str| {
            format!(
                "k:\n  image: lmsysorg/sglang:v1\n  framework: dynamo-sglang\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - additional-settings: [\"CONFIG_FILE=recipes/{config}\"]\n"
            )
        };
        let active = [file("configs/nvidia-master.yaml", &master("a.yaml")), file("r/a.yaml", recipe), file("r/b.yaml", recipe), file("r/c.yaml", recipe)];
        let retired = [file("configs/deprecated/old.yaml", &master("b.yaml"))];
        assert_eq!(run_only_by_retired(&active, &retired), BTreeSet::from(["r/b.yaml".to_string()]));
    }

    #[test]
    fn variants_are_capped() {
        let many: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let recipe = format!(
            "base:\n  backend:\n    sglang_config:\n      decode: {{speculative-num-steps: 3}}\nzip_override_c:\n  backend:\n    sglang_config:\n      decode: {{cuda-graph-max-bs: [{}]}}\n",
            many.join(", ")
        );
        let jobs = group_of(&[("r.yaml", recipe.as_str())]);
        assert_eq!(jobs.len(), 1 + MAX_VARIANTS);
        assert!(jobs.iter().all(|j| j.unexamined.iter().any(|u| u.to_string().contains("zip_override_c variants 64..99"))));
    }

    #[test]
    fn run_output_is_not_a_repository() {
        let ex = Extractor::new(1 << 20);
        let script = ex.extract("run.sh", FileKind::Script, &mut "python3 -m sglang.launch_server --tp 8\n".as_bytes()).0;
        let log = ex.extract("server.log", FileKind::Log, &mut "[2026-07-01 15:18:36] server_args=ServerArgs(tp_size=8)\n".as_bytes()).0;
        assert!(group(std::slice::from_ref(&script)).is_some());
        assert!(group(&[script, log]).is_none());
    }

    #[test]
    fn selectors_points_and_names() {
        assert_eq!(split_selector("recipes/a/x.yaml:zip_override_k[1]"), ("recipes/a/x.yaml", Some(Selection::Variant("zip_override_k".into(), 1))));
        assert_eq!(split_selector("recipes/a/x.yaml"), ("recipes/a/x.yaml", None));
        assert_eq!(
            point_of("additional-settings:k.scenarios.s.0.search-space.2.decode.additional-settings"),
            "additional-settings:k.scenarios.s.0.search-space.2"
        );
        assert_eq!(point_of("additional-settings:k.scenarios.s.0.search-space.2.additional-settings"), "additional-settings:k.scenarios.s.0.search-space.2");
        let meta = script_name_meta("benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp.sh");
        assert_eq!((meta.model_prefix.as_deref(), meta.hw.as_deref(), meta.spec_decoding.as_deref()), (Some("dsv4"), Some("b200"), Some("mtp")));
        assert_eq!(script_name_meta("run.sh"), JobMeta::default());
        let role = Scope::RecipeRole { variant: Some("zip_override_k".into()), role: "decode".into() };
        assert_eq!(role.recipe_role(), Some((Some("zip_override_k"), "decode")));
        assert_eq!(role.to_string(), "recipe:zip_override_k:decode");
        assert_eq!(Scope::Yaml("frontend.env".into()).recipe_role(), None);
    }
}
