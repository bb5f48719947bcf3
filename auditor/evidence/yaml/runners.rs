//! `configs/runners.yaml`: which runner instances each runner label of a
//! master-config entry (`runner: h200`, `runner: cluster:b200-dgxc`) is
//! scheduled on. An instance `h200-cw_01` runs the launcher
//! `runners/launch_h200-cw.sh` (the workflows' `launch_${RUNNER_NAME%%_*}.sh`).

use super::nodes::{entries, load, scalar_text};
use saphyr::YamlData;
use std::collections::BTreeMap;

/// Whether `path` is the runner-label table of a checkout.
pub fn is_runner_labels(path: &str) -> bool {
    path == "configs/runners.yaml" || path.ends_with("/configs/runners.yaml")
}

/// The `labels:` table: label → instances; empty when the text does not load.
pub fn labels(text: &str) -> BTreeMap<String, Vec<String>> {
    let Ok(docs) = load(text, false) else { return BTreeMap::new() };
    let mut out = BTreeMap::new();
    for doc in &docs {
        for (key, value) in entries(doc, 0) {
            if key != "labels" {
                continue;
            }
            for (label, instances) in entries(value, 0) {
                let YamlData::Sequence(items) = &instances.data else { continue };
                out.insert(label, items.iter().filter_map(scalar_text).collect());
            }
        }
    }
    out
}

/// The `containers:` map of an srt-slurm `srtslurm.yaml` (alias → squash
/// file or image, which srt-slurm starts a recipe's workers in): each
/// alias, its value and the value's line (1-based); empty when the text
/// does not load.
pub fn containers(text: &str) -> Vec<(String, String, usize)> {
    let Ok(docs) = load(text, false) else { return Vec::new() };
    let mut out = Vec::new();
    for doc in &docs {
        for (_, value) in entries(doc, 0).into_iter().filter(|(k, _)| k == "containers") {
            for (alias, image) in entries(value, 0) {
                if let Some(text) = scalar_text(image) {
                    out.push((alias, text, image.span.start.line()));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels_list_their_instances() {
        let table =
            super::labels("labels:\n  h200:\n    - h200-cw_00\n    - h200-nb_1\n  cluster:b200-dgxc:\n  - b200-dgxc_00\nhardware:\n  h200: {gpus: 8}\n");
        assert_eq!(table.get("h200").map(Vec::len), Some(2));
        assert_eq!(table.get("cluster:b200-dgxc").cloned(), Some(vec!["b200-dgxc_00".to_string()]));
        assert!(super::labels("labels: [").is_empty());
    }

    #[test]
    fn the_container_map_of_srtslurm_yaml() {
        let text = "default_account: a\ncontainers:\n  dynamo-sglang: /sq/x.sqsh\n  \"lmsysorg/sglang:v1\": /sq/x.sqsh\n  nginx-sqsh: /sq/n.sqsh\n";
        let map = super::containers(text);
        assert_eq!(map.len(), 3);
        assert_eq!(map[1], ("lmsysorg/sglang:v1".to_string(), "/sq/x.sqsh".to_string(), 4));
    }
}
