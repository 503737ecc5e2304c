//! Small word forms shared by lint, stress and drafting.

/// `s` with its first character upper-cased (the rest as it is).
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A noun, singular, by the plain English rules a tool name uses: `directories` → `directory`,
/// `files` → `file`; `address` (-ss) and three-letter words (`bus`, `ids`) stay as they are.
pub fn singular(noun: &str) -> String {
    if let Some(s) = noun.strip_suffix("ies") {
        format!("{s}y")
    } else if noun.len() > 3 && noun.ends_with('s') && !noun.ends_with("ss") {
        noun[..noun.len() - 1].to_string()
    } else {
        noun.to_string()
    }
}

/// `template` with each `{key}` of `values` replaced, in one pass: a value that itself holds a
/// `{key}` (a tool name is untrusted) is copied as it is, never expanded. An unknown `{…}` stays.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after.find('}').and_then(|close| {
            let key = &after[..close];
            values
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v, close))
        });
        match hit {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_forms() {
        assert_eq!(capitalise("éclair au chocolat"), "Éclair au chocolat");
        assert_eq!(capitalise(""), "");
        assert_eq!(singular("directories"), "directory");
        assert_eq!(singular("files"), "file");
        assert_eq!(singular("address"), "address");
        assert_eq!(singular("bus"), "bus");
    }

    #[test]
    fn fill_expands_each_placeholder_once() {
        let v = [("a", "{b}"), ("b", "x")];
        assert_eq!(fill("`{a}` and `{b}`", &v), "`{b}` and `x`");
        assert_eq!(fill("{c} {a", &v), "{c} {a");
        assert_eq!(fill("{}{a}}", &v), "{}{b}}");
        assert_eq!(fill("é{b}é", &v), "éxé");
    }
}
