//! `driftgate stress`: how close to a knife-edge does each tool description sit?
//!
//! Each tool in turn gets each perturbation (harmless-looking edits, see `perturb`), and the suite
//! is replayed with that one tool perturbed, through the same `Replayer` and `compare` as
//! `driftgate check` (the run itself is `job::stress`): base is the unperturbed set (replayed
//! once), head the perturbed one. The report gives, per tool, the accuracy change under each
//! edit, the worst edit, a fragility score and the cases that flipped.

pub mod edits;
pub mod paraphrase;
pub mod perturb;

use crate::error::{Error, Result};

use perturb::Perturbation;

/// A jargon table file: a YAML (or JSON) map, order kept.
pub fn load_jargon(path: &std::path::Path) -> Result<Vec<(String, String)>> {
    let text = crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
        .map_err(|e| Error::io(path, e))?;
    let label = path.display().to_string();
    let v: serde_yaml::Value = serde_yaml::from_str(&text)
        .map_err(|e| Error::Usage(format!("{label}: invalid YAML/JSON: {e}")))?;
    let map = v
        .as_mapping()
        .ok_or_else(|| Error::Usage(format!("{label}: expected a map {{plain phrase: jargon}}")))?;
    let mut out = Vec::new();
    for (k, v) in map {
        match (k.as_str(), v.as_str()) {
            (Some(a), Some(b)) if !a.trim().is_empty() => {
                out.push((a.trim().to_string(), b.trim().to_string()))
            }
            _ => {
                return Err(Error::Usage(format!(
                    "{label}: every entry must map a non-empty phrase to a string (found {k:?}: {v:?})"
                )));
            }
        }
    }
    if out.is_empty() {
        return Err(Error::Usage(format!("{label}: the jargon table is empty")));
    }
    Ok(out)
}

/// Pick the perturbations named by `--perturb` (all when empty), in table order.
pub fn select(
    all: Vec<Box<dyn Perturbation>>,
    wanted: &[String],
) -> Result<Vec<Box<dyn Perturbation>>> {
    if let Some(bad) = wanted
        .iter()
        .find(|w| !perturb::BUILTIN_IDS.contains(&w.as_str()))
    {
        return Err(Error::Usage(format!(
            "--perturb {bad}: unknown perturbation (known: {})",
            perturb::BUILTIN_IDS.join(", ")
        )));
    }
    Ok(all
        .into_iter()
        .filter(|p| wanted.is_empty() || wanted.iter().any(|w| w == p.id()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perturb_selection_rejects_unknown_ids() {
        let all = perturb::builtin(None);
        let e = select(all, &["tersr".into()]).err().unwrap().to_string();
        assert!(
            e.starts_with("--perturb tersr: unknown perturbation (known: terser, jargonier"),
            "{e}"
        );
        let some = select(
            perturb::builtin(None),
            &["inverted".into(), "terser".into()],
        )
        .unwrap();
        let ids: Vec<&str> = some.iter().map(|p| p.id()).collect();
        assert_eq!(ids, ["terser", "inverted"]);
    }

    #[test]
    fn jargon_files_keep_order_and_reject_bad_entries() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.yaml");
        std::fs::write(&p, "file: artifact\nlist: enumerate\n").unwrap();
        assert_eq!(
            load_jargon(&p).unwrap(),
            [
                ("file".to_string(), "artifact".to_string()),
                ("list".to_string(), "enumerate".to_string())
            ]
        );
        std::fs::write(&p, "- a\n").unwrap();
        assert!(
            load_jargon(&p)
                .unwrap_err()
                .to_string()
                .contains("expected a map")
        );
        std::fs::write(&p, "file: [x]\n").unwrap();
        assert!(
            load_jargon(&p)
                .unwrap_err()
                .to_string()
                .contains("non-empty phrase to a string")
        );
    }
}
