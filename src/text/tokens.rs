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

/// A description's sentences (split after `.`, `!`, `?` before whitespace, and at line breaks),
/// each longer than three characters; the whole text when it has none.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end_here = c == '\n'
            || (matches!(c, '.' | '!' | '?')
                && b.get(i + 1).is_some_and(|n| n.is_ascii_whitespace()));
        if end_here {
            let piece = text[start..=i].trim();
            if piece.len() > 3 {
                out.push(piece);
            }
            start = i + 1;
        }
    }
    let piece = text[start..].trim();
    if piece.len() > 3 {
        out.push(piece);
    }
    if out.is_empty() && !text.trim().is_empty() {
        out.push(text.trim());
    }
    out
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

    #[test]
    fn sentences_end_at_terminal_punctuation_before_a_space_and_at_line_breaks() {
        assert_eq!(
            sentences("Read a file. Use e.g. paths within allowed dirs! Why?\nLast line"),
            [
                "Read a file.",
                "Use e.g.",
                "paths within allowed dirs!",
                "Why?",
                "Last line"
            ]
        );
        // A dot inside a token (a version, a file name) does not end a sentence.
        assert_eq!(
            sentences("Reads config.json from v1.2 servers"),
            ["Reads config.json from v1.2 servers"]
        );
        // Fragments of three characters or fewer are not views of their own…
        assert_eq!(sentences("Ok. Fine text here."), ["Fine text here."]);
        // …unless they are the whole description.
        assert_eq!(sentences("Ok."), ["Ok."]);
        assert!(sentences("  \n ").is_empty());
        // Multi-byte text around the punctuation is sliced on character boundaries.
        assert_eq!(
            sentences("Öffnet die Datei. Schließt sie."),
            ["Öffnet die Datei.", "Schließt sie."]
        );
    }
}
