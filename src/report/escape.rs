//! Tool text is untrusted: it is written by whoever publishes the server. Every renderer passes it
//! through one of these before output, so a description can neither drive the terminal (ANSI,
//! bidi overrides) nor inject markup, mentions or our comment marker into a PR comment.

/// Tool text made inert for a reader: every control, bidi, zero-width, tag or other hidden
/// character is shown as a visible escape (`⟨U+202E⟩`, `⟨hidden "…"⟩`, see
/// [`crate::text::unicode::visible`]), never kept raw and never silently dropped. So an ANSI
/// sequence shows as `⟨U+001B⟩[31m` instead of colouring the terminal, and a reviewer sees what
/// the model would read. Newlines and tabs survive only when `keep_newlines`.
pub fn clean(s: &str, keep_newlines: bool) -> String {
    let shown = crate::text::unicode::visible(s);
    if keep_newlines {
        shown.into_owned()
    } else {
        shown.replace(['\n', '\t'], " ")
    }
}

/// A JSON document whose strings hold no hidden character raw: each is written as its `\u`
/// escape (a surrogate pair above the BMP), which decodes to the same value. JSON structure is
/// ASCII, so every hidden character found is inside a string.
pub fn json_hidden(json: &str) -> std::borrow::Cow<'_, str> {
    use crate::text::unicode::{has_hidden, hidden};
    if !has_hidden(json) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 32);
    let mut units = [0u16; 2];
    for c in json.chars() {
        if hidden(c).is_some() {
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
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

// ---- Markdown (PR comments, job summaries) --------------------------------------------------
//
// GitHub turns `@name` into a notification and `#12` / `owner/repo#12` / `GH-12` into
// cross-references wherever they appear in rendered text, even after a backslash escape or an
// HTML entity, because it links text nodes after Markdown is parsed. It never links inside code.
// So untrusted text goes into code spans or fenced blocks, where nothing is parsed: no HTML, no
// links, no mentions. What remains is making sure the text cannot close its span or fence, break
// a table row, or spell `<!--` / `-->` (which could spoof or end our hidden marker).

/// Break up HTML comment delimiters so tool text never contains `<!--` or `-->`.
fn defuse_comments(s: &str) -> String {
    s.replace("<!--", "<! --").replace("-->", "-- >")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// An inline code span showing `s` literally on one line, cut to `max` characters. In a table
/// cell (`in_table`) pipes are escaped: GFM splits cells before it parses code spans.
pub fn md_code(s: &str, max: usize, in_table: bool) -> String {
    let mut text = defuse_comments(&cell(s, max));
    if text.is_empty() {
        return "(empty)".into();
    }
    if in_table {
        text = text.replace('|', "\\|");
    }
    let ticks = "`".repeat(longest_run(&text, '`') + 1);
    // A space inside both delimiters is stripped by the renderer; it lets the content start or
    // end with a backtick.
    if text.starts_with('`') || text.ends_with('`') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

/// Does this word make GitHub link or notify something (mention, reference, URL)?
fn is_linkish(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    word.contains('@')
        || word.contains('#')
        || lower.contains("://")
        || lower.contains("www.")
        // Anywhere in the word: GitHub links `(GH-12)` as readily as `GH-12`.
        || lower
            .match_indices("gh-")
            .any(|(i, _)| lower[i + 3..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Prose that may contain untrusted fragments (the verdict reason names tools): one line, every
/// Markdown-active ASCII character backslash-escaped, and every word that GitHub would turn into a
/// mention, reference or link put in a code span instead.
pub fn md_inline(s: &str) -> String {
    let flat = defuse_comments(&cell(s, 4000));
    let mut out = String::with_capacity(flat.len() + 16);
    for (i, word) in flat.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if is_linkish(word) {
            out.push_str(&md_code(word, 200, true));
            continue;
        }
        // Our own prose quotes names as `name`: keep that a code span (its content is escaped).
        // Punctuation after the closing backtick ("`name`:", "`name`,") stays outside the span.
        let bare = word.trim_end_matches([',', ':', ';', '.', ')']);
        if let Some(inner) = bare
            .strip_prefix('`')
            .and_then(|w| w.strip_suffix('`'))
            .filter(|w| !w.is_empty() && !w.contains('`'))
        {
            out.push_str(&md_code(inner, 200, true));
            for c in word[bare.len()..].chars() {
                out.push(c);
            }
            continue;
        }
        for c in word.chars() {
            // Characters that start emphasis, code, links, images, HTML, entities, tables or
            // strikethrough anywhere in a line. (Line-start syntax such as `-` or `#` cannot
            // occur: every line we write starts with our own text.)
            if matches!(
                c,
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '!' | '|' | '~' | '&' | '$'
            ) {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// A fenced code block (e.g. ```` ```diff ````) whose fence is longer than any backtick run in
/// the body, so the body cannot close it. The body keeps its lines; controls are removed.
pub fn md_fence(info: &str, body: &str) -> String {
    let body = defuse_comments(&clean(body, true));
    let fence = "`".repeat(longest_run(&body, '`').max(2) + 1);
    let body = body.trim_end_matches('\n');
    format!("{fence}{info}\n{body}\n{fence}\n")
}

/// Keep a link target only if it is a plain http(s) URL that cannot break out of `(…)`.
pub fn md_url(url: &str) -> Option<&str> {
    let ok = (url.starts_with("https://") || url.starts_with("http://"))
        && url.chars().all(|c| {
            c.is_ascii_graphic() && !matches!(c, '(' | ')' | '<' | '>' | '"' | '\'' | '`')
        });
    ok.then_some(url)
}

// ---- HTML (the self-contained report) -------------------------------------------------------

/// Tool text as HTML character data or a quoted attribute value: hidden characters shown (as
/// everywhere), then `&`, `<`, `>`, `"` and `'` written as entities, so nothing can open a tag,
/// end an attribute or start an entity. Newlines survive only when `keep_newlines`.
pub fn html(s: &str, keep_newlines: bool) -> String {
    let shown = clean(s, keep_newlines);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

// ---- GitHub workflow commands (`::error file=…::message`) -----------------------------------

/// Escape the message part of a workflow command: `%`, CR and LF (as the runner's toolkit does),
/// after removing other controls and bidi marks. A newline can therefore never start a second
/// command such as `::add-mask::` or `::stop-commands::`.
pub fn workflow_data(s: &str) -> String {
    clean(s, true)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a property value (`file=`, `title=`): also `:` and `,`, which delimit properties.
pub fn workflow_property(s: &str) -> String {
    workflow_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_ansi_bidi_and_controls() {
        let s = "a\u{1b}[31mred b\u{202E}evil\u{0007}c\r\nd";
        assert_eq!(clean(s, true), "a⟨U+001B⟩[31mred b⟨U+202E⟩evil⟨U+0007⟩c\nd");
        assert_eq!(clean("x\ny", false), "x y");
    }

    #[test]
    fn json_keeps_values_but_not_raw_hidden_characters() {
        let value = serde_json::json!({"d": "a\u{200B}b\u{E0069}\u{202E}"});
        let json = serde_json::to_string(&value).unwrap();
        let safe = json_hidden(&json);
        assert!(safe.is_ascii(), "{safe}");
        assert_eq!(safe, r#"{"d":"a\u200bb\udb40\udc69\u202e"}"#);
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn code_spans_cannot_be_closed_or_split() {
        assert_eq!(md_code("a`b", 50, false), "``a`b``");
        assert_eq!(md_code("`x``", 50, false), "``` `x`` ```");
        assert_eq!(md_code("a|b", 50, true), "`a\\|b`");
        assert_eq!(md_code("<!-- x -->", 50, false), "`<! -- x -- >`");
        assert_eq!(md_code("", 5, false), "(empty)");
    }

    #[test]
    fn inline_text_defuses_mentions_refs_and_markup() {
        assert_eq!(
            md_inline("ping @octocat about #12 <b>x</b>"),
            "ping `@octocat` about `#12` \\<b\\>x\\</b\\>"
        );
        assert_eq!(
            md_inline("see GH-7 and https://x.y"),
            "see `GH-7` and `https://x.y`"
        );
        // GitHub links `GH-34` after punctuation too (the fuzzer found `(GH-34)`).
        assert_eq!(md_inline("(GH-34) x-gh-5"), "`(GH-34)` `x-gh-5`");
        // Our quoted names stay code spans before punctuation; a hostile backtick does not.
        assert_eq!(
            md_inline("`a_b`: 3 went to `c_d`, 2 to `e`"),
            "`a_b`: 3 went to `c_d`, 2 to `e`"
        );
        assert_eq!(md_inline("`a`b`:"), "\\`a\\`b\\`:");
    }

    #[test]
    fn html_text_opens_no_tag_and_hides_nothing() {
        assert_eq!(
            html("<img src=x onerror='a'>&amp;\u{202E}\n", false),
            "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;amp;⟨U+202E⟩ "
        );
        assert_eq!(html("a\nb\"", true), "a\nb&quot;");
    }

    #[test]
    fn fences_outlast_the_body() {
        assert_eq!(md_fence("diff", "- a\n+ b\n"), "```diff\n- a\n+ b\n```\n");
        assert!(md_fence("", "````").starts_with("`````\n"));
    }

    #[test]
    fn workflow_commands_escape_delimiters() {
        assert_eq!(workflow_data("50%\r\n::x"), "50%25%0A::x");
        assert_eq!(workflow_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn cells_are_single_line_and_bounded() {
        assert_eq!(cell("a \n\n b", 10), "a b");
        assert_eq!(cell(&"x".repeat(50), 5), "xxxx…");
    }
}
