//! Tokens and weights for comparing tools of one server.
//!
//! Weights are inverse document frequencies over the server's own tools: a word every tool uses
//! ("file" on a filesystem server) says what the server is about, not which tool to pick, so it
//! counts for little.

use std::collections::{BTreeMap, BTreeSet};

use crate::text::tokens::name_tokens;

/// Words that carry no meaning for telling tools apart.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with", "as", "by", "is", "are",
    "be", "this", "that", "it", "its", "from", "at", "if", "will", "can", "all", "any", "each",
    "not", "no", "only", "into", "use", "used", "using", "you", "your", "when", "which", "what",
    "than", "then", "there", "these", "those", "such", "also", "may", "must", "should", "has",
    "have", "does", "do", "was", "were", "been", "but", "so", "via", "e", "g", "i", "etc", "more",
    "most", "other", "about", "one", "both", "within", "without",
];

/// A server with fewer tools than this is weighted as if it had this many: with two tools every
/// shared word would otherwise look like "domain" and weigh nothing.
pub const MIN_DOCUMENTS: usize = 8;

/// English plural to singular, enough to make `files`/`file` and `directories`/`directory` one
/// token. Deliberately no other suffix stripping: `string` must not become `str`.
pub fn stem(token: &str) -> String {
    if let Some(s) = token.strip_suffix("ies")
        && s.len() >= 2
    {
        return format!("{s}y");
    }
    if token.ends_with("sses") || token.ends_with("xes") || token.ends_with("ches") {
        return token[..token.len() - 2].to_string();
    }
    if token.len() > 3
        && token.ends_with('s')
        && !token.ends_with("ss")
        && !token.ends_with("us")
        && !token.ends_with("is")
    {
        return token[..token.len() - 1].to_string();
    }
    token.to_string()
}

/// Stemmed name tokens, stopwords dropped (`list_directory_with_sizes` → list, directory, size).
pub fn name_terms(name: &str) -> Vec<String> {
    name_tokens(name)
        .into_iter()
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .map(|t| stem(&t))
        .collect()
}

/// Stemmed words of free text, stopwords and numbers dropped.
pub fn text_terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .flat_map(name_tokens)
        .filter(|t| t.len() > 1 && !t.chars().all(|c| c.is_ascii_digit()))
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .map(|t| stem(&t))
        .collect()
}

/// Inverse document frequency of each term over a server's docs (each doc a bag of terms),
/// smoothed: `ln((1 + N) / (1 + df))` with `N` at least [`MIN_DOCUMENTS`]. A term in every doc of
/// a large server weighs 0.
pub struct Idf {
    weights: BTreeMap<String, f64>,
    /// The heaviest weight, kept once: pair scoring asks for it per pair, and recomputing it
    /// there cost O(vocabulary) per pair (quadratic on a gateway of thousands of tools).
    max: f64,
}

impl Idf {
    pub fn of(docs: &[Vec<String>]) -> Idf {
        let n = docs.len().max(MIN_DOCUMENTS) as f64;
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        for d in docs {
            for t in d.iter().collect::<BTreeSet<_>>() {
                *df.entry(t.clone()).or_default() += 1;
            }
        }
        let weights: BTreeMap<String, f64> = df
            .into_iter()
            .map(|(t, k)| (t, ((1.0 + n) / (1.0 + k as f64)).ln()))
            .collect();
        let max = weights.values().copied().fold(0.0, f64::max);
        Idf { weights, max }
    }

    /// The term's weight; None for a term no doc used.
    pub fn get(&self, term: &str) -> Option<f64> {
        self.weights.get(term).copied()
    }
}

/// Jaccard of two term sets with each term weighted by `w` (terms no doc used weigh the maximum).
pub fn weighted_jaccard(a: &[String], b: &[String], w: &Idf) -> f64 {
    let (sa, sb): (BTreeSet<&String>, BTreeSet<&String>) = (a.iter().collect(), b.iter().collect());
    let weight = |t: &String| w.get(t).unwrap_or(w.max);
    // fold from +0.0: an empty `sum()` of f64 is -0.0, which would print as "-0".
    let inter = sa.intersection(&sb).fold(0.0, |s, t| s + weight(t));
    let union = sa.union(&sb).fold(0.0, |s, t| s + weight(t));
    if union == 0.0 { 0.0 } else { inter / union }
}

/// Cosine of two bags of terms, each term's count damped (1 + ln tf) and weighted by `w`.
pub fn tfidf_cosine(a: &[String], b: &[String], w: &Idf) -> f64 {
    let vec = |d: &[String]| -> BTreeMap<String, f64> {
        let mut tf: BTreeMap<String, usize> = BTreeMap::new();
        for t in d {
            *tf.entry(t.clone()).or_default() += 1;
        }
        tf.into_iter()
            .map(|(t, k)| {
                let x = (1.0 + (k as f64).ln()) * w.get(&t).unwrap_or(0.0);
                (t, x)
            })
            .collect()
    };
    let (va, vb) = (vec(a), vec(b));
    let dot = va
        .iter()
        .filter_map(|(t, x)| vb.get(t).map(|y| x * y))
        .fold(0.0, |s, p| s + p);
    let norm = |v: &BTreeMap<String, f64>| v.values().map(|x| x * x).sum::<f64>().sqrt();
    let (na, nb) = (norm(&va), norm(&vb));
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn plurals_fold_and_words_survive() {
        for (a, b) in [
            ("files", "file"),
            ("directories", "directory"),
            ("sizes", "size"),
            ("matches", "match"),
            ("boxes", "box"),
            ("addresses", "address"),
            ("status", "status"),
            ("access", "access"),
            ("analysis", "analysis"),
            ("string", "string"),
            ("has", "has"),
        ] {
            assert_eq!(stem(a), b, "{a}");
        }
        assert_eq!(
            name_terms("list_directory_with_sizes"),
            v(&["list", "directory", "size"])
        );
        assert_eq!(name_terms("getLibraryDocs"), v(&["get", "library", "doc"]));
        assert_eq!(
            text_terms("Read the complete contents of 2 files (as text)."),
            v(&["read", "complete", "content", "file", "text"])
        );
    }

    #[test]
    fn domain_terms_weigh_less() {
        let docs: Vec<Vec<String>> = (0..10)
            .map(|i| {
                let mut d = v(&["file"]);
                if i < 2 {
                    d.push("media".into());
                }
                d
            })
            .collect();
        let w = Idf::of(&docs);
        assert_eq!(w.get("file"), Some(0.0));
        assert!(w.get("media").unwrap() > 1.0);
        // Sharing only the domain word is no similarity; sharing a rare word is.
        assert_eq!(tfidf_cosine(&v(&["file"]), &v(&["file"]), &w), 0.0);
        assert!((tfidf_cosine(&v(&["file", "media"]), &v(&["media"]), &w) - 1.0).abs() < 1e-12);
        assert!(weighted_jaccard(&v(&["file", "media"]), &v(&["file"]), &w) < 1e-12);
    }

    #[test]
    fn small_servers_are_weighted_as_if_larger() {
        let w = Idf::of(&[v(&["library", "id"]), v(&["library", "doc"])]);
        // ln(9/3): shared by both of two tools, yet not zero.
        assert!((w.get("library").unwrap() - 3f64.ln()).abs() < 1e-12);
    }
}
