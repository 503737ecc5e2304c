//! Tool text is untrusted: it is written by whoever publishes the server. Every renderer passes it
//! through one of these before output, so a description can neither drive the terminal (ANSI,
//! bidi overrides) nor inject markup, mentions or our comment marker into a PR comment.

/// Characters that reorder or hide text (Trojan Source) plus zero-width joiners/marks.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' |
        '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{061C}' | '\u{180E}')
}

/// Remove control characters (ANSI escapes included) and bidi/invisible marks. Newlines and tabs
/// survive only when `keep_newlines`.
pub fn clean(s: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // Drop a whole CSI/OSC sequence, not just the ESC byte, so no "[31m" litter remains.
            match chars.peek() {
                Some('[') => {
                    chars.next();
                    while let Some(&n) = chars.peek() {
                        chars.next();
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    while let Some(n) = chars.next() {
                        if n == '\u{7}' || (n == '\u{1b}' && chars.peek() == Some(&'\\')) {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        if c == '\n' || c == '\t' {
            out.push(if keep_newlines { c } else { ' ' });
        } else if c.is_control() || is_invisible(c) {
            // includes '\r': CRLF becomes LF, a lone CR cannot overwrite a line
            continue;
        } else {
            out.push(c);
        }
    }
    out
}

/// One line for a table cell in a terminal: cleaned, whitespace collapsed, cut to `max` chars.
pub fn cell(s: &str, max: usize) -> String {
    let flat = clean(s, false)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    truncate(&flat, max)
}

pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_ansi_bidi_and_controls() {
        let s = "a\u{1b}[31mred\u{1b}[0m b\u{202E}evil\u{2066}x\u{0007}\u{1b}]0;title\u{7}c\r\nd";
        assert_eq!(clean(s, true), "ared bevilxc\nd");
        assert_eq!(clean("x\ny", false), "x y");
    }

    #[test]
    fn cells_are_single_line_and_bounded() {
        assert_eq!(cell("a \n\n b", 10), "a b");
        assert_eq!(cell(&"x".repeat(50), 5), "xxxx…");
    }
}
