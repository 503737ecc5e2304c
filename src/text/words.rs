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
}
