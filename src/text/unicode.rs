//! Characters that change what a reader sees without being seen: the classes the scan reports
//! and every renderer shows as visible escapes (never strips: a stripped character is hidden
//! twice, from the model's reader and from ours).

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Why a character is not what it looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hidden {
    /// U+E0000–E007F: invisible copies of ASCII ("ASCII smuggling").
    Tag,
    /// Bidirectional embeddings, overrides, isolates and marks (Trojan Source).
    Bidi,
    /// Zero-width space, joiners, word joiner, BOM.
    ZeroWidth,
    /// Variation selectors: a run of them can carry arbitrary bytes ("emoji smuggling").
    VariationSelector,
    /// C0/C1 controls other than newline and tab (ANSI escape sequences start with one).
    Control,
    /// Any other invisible format character, blank-looking filler or line separator.
    Format,
}

impl Hidden {
    pub fn as_str(self) -> &'static str {
        match self {
            Hidden::Tag => "tag character",
            Hidden::Bidi => "bidi control",
            Hidden::ZeroWidth => "zero-width character",
            Hidden::VariationSelector => "variation selector",
            Hidden::Control => "control character",
            Hidden::Format => "invisible format character",
        }
    }
}

/// The class of `c`, or `None` for a character that shows as what it is. Newline and tab are
/// layout, not hidden; CR is a control (a lone CR rewrites a terminal line).
pub fn hidden(c: char) -> Option<Hidden> {
    match c {
        '\n' | '\t' => None,
        ' '..='~' => None,
        '\u{E0000}'..='\u{E007F}' => Some(Hidden::Tag),
        '\u{061C}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}' => Some(Hidden::Bidi),
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{180E}' => Some(Hidden::ZeroWidth),
        '\u{FE00}'..='\u{FE0F}'
        | '\u{E0100}'..='\u{E01EF}'
        | '\u{180B}'..='\u{180D}'
        | '\u{180F}' => Some(Hidden::VariationSelector),
        c if c.is_control() => Some(Hidden::Control),
        // Blank-looking letters and marks (Hangul fillers, Khmer inherent vowels, braille blank, combining grapheme
        // joiner) and the line/paragraph separators, which some readers break lines on.
        '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{3164}' | '\u{FFA0}'
        | '\u{2800}' | '\u{034F}' | '\u{2028}' | '\u{2029}' => Some(Hidden::Format),
        c if c.general_category() == GeneralCategory::Format => Some(Hidden::Format),
        _ => None,
    }
}

/// The ASCII character a tag character stands for (U+E0020–E007E), if any.
pub fn tag_ascii(c: char) -> Option<char> {
    let u = c as u32;
    (0xE0020..=0xE007E)
        .contains(&u)
        .then(|| char::from_u32(u - 0xE0000).expect("ASCII"))
}

/// The byte a variation selector encodes in the "emoji smuggling" scheme: VS1–16 are 0–15,
/// VS17–256 are 16–255.
pub fn selector_byte(c: char) -> Option<u8> {
    let u = c as u32;
    match u {
        0xFE00..=0xFE0F => Some((u - 0xFE00) as u8),
        0xE0100..=0xE01EF => Some((u - 0xE0100 + 16) as u8),
        _ => None,
    }
}

/// What a run of tag characters or variation selectors says, when it says something: the
/// decoded ASCII of tags, or the decoded bytes of selectors when they are printable UTF-8.
pub fn decode_run(run: &[char]) -> Option<String> {
    if run.iter().all(|c| hidden(*c) == Some(Hidden::Tag)) {
        let text: String = run.iter().filter_map(|c| tag_ascii(*c)).collect();
        return (!text.is_empty()).then_some(text);
    }
    let bytes: Option<Vec<u8>> = run.iter().map(|c| selector_byte(*c)).collect();
    let text = String::from_utf8(bytes?).ok()?;
    (run.len() >= 2 && !text.chars().any(|c| c.is_control() || hidden(c).is_some())).then_some(text)
}

/// Does `s` hold any hidden character?
pub fn has_hidden(s: &str) -> bool {
    s.chars().any(|c| hidden(c).is_some())
}

/// `s` with every hidden character shown: `⟨U+200B⟩`, and a run of tag characters or
/// smuggling selectors as `⟨hidden "…"⟩` with what it decodes to (ASCII, printable; the caller
/// escapes it for its format like any other text). CRLF becomes LF.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !has_hidden(s) {
        return Cow::Borrowed(s);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let class = hidden(c);
        if class.is_none() {
            out.push(c);
            i += 1;
            continue;
        }
        if c == '\r' && chars.get(i + 1) == Some(&'\n') {
            i += 1;
            continue;
        }
        if matches!(class, Some(Hidden::Tag | Hidden::VariationSelector)) {
            let end = (i..chars.len())
                .find(|&j| hidden(chars[j]) != class)
                .unwrap_or(chars.len());
            if let Some(text) = decode_run(&chars[i..end]) {
                out.push_str(&format!("⟨hidden {text:?}⟩"));
                i = end;
                continue;
            }
        }
        out.push_str(&format!("⟨U+{:04X}⟩", c as u32));
        i += 1;
    }
    Cow::Owned(out)
}

/// Tag characters for `ascii` (tests and fixtures build hidden text with it).
pub fn to_tags(ascii: &str) -> String {
    ascii
        .chars()
        .filter_map(|c| char::from_u32(0xE0000 + c as u32).filter(|_| c.is_ascii()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(hidden('a'), None);
        assert_eq!(hidden('é'), None);
        assert_eq!(hidden('\n'), None);
        assert_eq!(hidden('\u{E0069}'), Some(Hidden::Tag));
        assert_eq!(hidden('\u{202E}'), Some(Hidden::Bidi));
        assert_eq!(hidden('\u{200B}'), Some(Hidden::ZeroWidth));
        assert_eq!(hidden('\u{FE0F}'), Some(Hidden::VariationSelector));
        assert_eq!(hidden('\u{E0100}'), Some(Hidden::VariationSelector));
        assert_eq!(hidden('\u{1b}'), Some(Hidden::Control));
        assert_eq!(hidden('\r'), Some(Hidden::Control));
        assert_eq!(hidden('\u{85}'), Some(Hidden::Control));
        assert_eq!(hidden('\u{AD}'), Some(Hidden::Format));
        assert_eq!(hidden('\u{2064}'), Some(Hidden::Format));
        assert_eq!(hidden('\u{3164}'), Some(Hidden::Format));
        assert_eq!(hidden('\u{2028}'), Some(Hidden::Format));
    }

    #[test]
    fn tags_are_decoded_and_shown() {
        let s = format!("Adds.{}", to_tags("ignore previous"));
        assert_eq!(visible(&s), "Adds.⟨hidden \"ignore previous\"⟩");
    }

    #[test]
    fn selector_smuggling_is_decoded() {
        // "hi" in the emoji-smuggling encoding after a visible emoji.
        let s: String = "😀"
            .chars()
            .chain(
                b"hi"
                    .iter()
                    .map(|b| char::from_u32(0xE0100 + *b as u32 - 16).unwrap()),
            )
            .collect();
        assert_eq!(visible(&s), "😀⟨hidden \"hi\"⟩");
        // A lone emoji presentation selector is shown by its code point.
        assert_eq!(visible("✅\u{FE0F}"), "✅⟨U+FE0F⟩");
    }

    #[test]
    fn others_are_shown_by_code_point() {
        assert_eq!(
            visible("a\u{1b}[31mb\u{200B}c\r\nd\re"),
            "a⟨U+001B⟩[31mb⟨U+200B⟩c\nd⟨U+000D⟩e"
        );
        assert!(matches!(visible("plain é"), Cow::Borrowed(_)));
    }
}
