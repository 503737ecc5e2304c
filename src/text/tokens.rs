//! Tokens of names and sentences: the one tokenizer for tool names (`getLibraryDocs`,
//! `get-library-docs`, `get_library_docs` are the same tokens), and small text cuts.

/// Split `getLibraryDocs`, `get-library-docs`, `get_library_docs` into the same tokens.
pub fn name_tokens(name: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                tokens.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            tokens.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        tokens.push(cur);
    }
    tokens
}

/// The first sentence (through its period) and the rest (with its leading space).
pub fn split_first_sentence(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1);
        if b == b'\n' {
            return (&text[..i], &text[i..]);
        }
        if matches!(b, b'.' | b'!' | b'?') && next.is_none_or(|n| n.is_ascii_whitespace()) {
            return (&text[..=i], &text[i + 1..]);
        }
    }
    (text, "")
}

/// `s` cut to `max` characters, the cut marked with `…`.
pub fn ellipsis(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_styles_give_the_same_tokens() {
        for name in [
            "readTextFile",
            "read-text_file",
            "read_text_file",
            "READ_TEXT_FILE",
        ] {
            assert_eq!(name_tokens(name), ["read", "text", "file"], "{name}");
        }
        assert_eq!(name_tokens("get2fa"), ["get2fa"]);
    }

    #[test]
    fn first_sentence_and_ellipsis() {
        assert_eq!(
            split_first_sentence("Read it. Then more."),
            ("Read it.", " Then more.")
        );
        assert_eq!(split_first_sentence("v1.2 is out"), ("v1.2 is out", ""));
        assert_eq!(split_first_sentence("line\nnext"), ("line", "\nnext"));
        assert_eq!(ellipsis("abcdef", 4), "abc…");
        assert_eq!(ellipsis("abc", 4), "abc");
    }
}
