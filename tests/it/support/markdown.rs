//! Reads our Markdown the way a GFM renderer does (pulldown-cmark with tables, strikethrough,
//! footnotes, math and GitHub alerts) and checks that tool text stayed inert: no HTML but our own
//! tags, no links or images but the report link, no mention, reference or URL outside code, no
//! emphasis or math, every table row as wide as its header, only `diff` fences.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// The HTML we write ourselves.
const OUR_TAGS: &[&str] = &[
    "<details>",
    "</details>",
    "<summary>",
    "</summary>",
    "<sub>",
    "</sub>",
];

fn strip_our_tags(html: &str) -> String {
    let mut s = html.to_string();
    for t in OUR_TAGS {
        s = s.replace(t, "");
    }
    s
}

fn linkish(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied().unwrap_or(' ');
        if *c == '@' && (next.is_alphanumeric() || next == '-') {
            return Some(format!("mention at {i}"));
        }
        if *c == '#' && next.is_ascii_digit() {
            return Some(format!("reference at {i}"));
        }
    }
    let lower = text.to_ascii_lowercase();
    for pat in ["http://", "https://", "www."] {
        if lower.contains(pat) {
            return Some(format!("{pat:?} would be linked"));
        }
    }
    lower
        .match_indices("gh-")
        .any(|(i, _)| lower[i + 3..].starts_with(|c: char| c.is_ascii_digit()))
        .then(|| "GH-n reference".to_string())
}

/// The y-axis line of the PR comment's Mermaid chart, written by us.
const MERMAID_RANGE: &str = "\n    y-axis \"accuracy %\" 0 --> 100\n";

/// Panics with a description of the first unsafe construct. `link` is the one URL we may link.
pub fn assert_inert(md: &str, marker: Option<&str>, link: Option<&str>) {
    // The marker, if any, is the first line and the only HTML comment.
    let opens = md.matches("<!--").count();
    // The Mermaid chart's axis range is our one `-->`, inside a fence where nothing is parsed.
    let closes = md.matches("-->").count() - md.matches(MERMAID_RANGE).count();
    match marker {
        Some(m) => {
            assert_eq!(md.lines().next(), Some(m), "marker first");
            assert_eq!(
                (opens, closes),
                (1, 1),
                "only our marker is an HTML comment"
            );
        }
        None => assert_eq!((opens, closes), (0, 0), "no HTML comment at all"),
    }
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM
        | Options::ENABLE_TASKLISTS;
    let mut in_code_block = false;
    let mut in_cell = false;
    let mut header_cells: Option<usize> = None;
    let mut row_cells = 0usize;
    let mut strong = Vec::new();
    let mut strong_text: Option<String> = None;
    for (ev, range) in Parser::new_ext(md, opts).into_offset_iter() {
        let at = || format!("at {range:?}: {:?}", &md[range.clone()]);
        match ev {
            Event::Html(h) | Event::InlineHtml(h) => {
                let h = h.to_string();
                if Some(h.trim()) == marker {
                    continue;
                }
                let rest = strip_our_tags(&h);
                assert!(
                    !rest.contains('<') && !rest.contains('>'),
                    "foreign HTML {h:?} {}",
                    at()
                );
                assert!(
                    linkish(&rest).is_none(),
                    "linkable text in HTML {h:?} {}",
                    at()
                );
            }
            Event::Text(t) => {
                if let Some(s) = strong_text.as_mut() {
                    s.push_str(&t);
                }
                // The parser pads or drops cells to the header's width, so a pipe that split a
                // cell shows up as the halves of a broken code span in plain text.
                if in_cell {
                    assert!(
                        !t.contains('`') && !t.contains('|'),
                        "split table cell {}",
                        at()
                    );
                }
                if !in_code_block {
                    if let Some(why) = linkish(&t) {
                        panic!("{why} in text {t:?} {}", at());
                    }
                }
            }
            Event::InlineMath(_) | Event::DisplayMath(_) => panic!("math {}", at()),
            Event::FootnoteReference(_) => panic!("footnote {}", at()),
            Event::TaskListMarker(_) => panic!("task list {}", at()),
            Event::Start(tag) => match tag {
                Tag::Link { dest_url, .. } => {
                    assert_eq!(
                        Some(dest_url.as_ref()),
                        link,
                        "only the report link {}",
                        at()
                    )
                }
                Tag::Image { .. } => panic!("image {}", at()),
                Tag::Emphasis | Tag::Strikethrough | Tag::Superscript | Tag::Subscript => {
                    panic!("emphasis from tool text {}", at())
                }
                Tag::Strong => strong_text = Some(String::new()),
                Tag::CodeBlock(kind) => {
                    in_code_block = true;
                    match kind {
                        CodeBlockKind::Fenced(info) => {
                            assert!(
                                matches!(info.as_ref(), "diff" | "mermaid"),
                                "fence {info:?} {}",
                                at()
                            )
                        }
                        CodeBlockKind::Indented => panic!("indented code block {}", at()),
                    }
                }
                Tag::Table(aligns) => {
                    header_cells = Some(aligns.len());
                }
                Tag::TableHead | Tag::TableRow => row_cells = 0,
                Tag::TableCell => {
                    row_cells += 1;
                    in_cell = true;
                }
                Tag::List(_) | Tag::Item => panic!("list {}", at()),
                Tag::FootnoteDefinition(_) => panic!("footnote {}", at()),
                _ => {}
            },
            Event::End(end) => match end {
                TagEnd::CodeBlock => in_code_block = false,
                TagEnd::TableCell => in_cell = false,
                TagEnd::TableHead | TagEnd::TableRow => {
                    assert_eq!(Some(row_cells), header_cells, "row width {}", at())
                }
                TagEnd::Strong => strong.push(strong_text.take().unwrap_or_default()),
                _ => {}
            },
            _ => {}
        }
    }
    for s in strong {
        assert!(
            [
                "pass",
                "fail",
                "incomplete",
                "inconclusive",
                "Routing accuracy",
                "Call accuracy",
                "Now passes."
            ]
            .contains(&s.as_str()),
            "bold text {s:?} is not ours"
        );
    }
}
