//! What the HTML report may contain, read with an HTML5 parser (html5ever, as a browser parses):
//! one policy that fetches nothing, our one style and one script, elements from a fixed list, no
//! event handler, no URL-bearing attribute, and no raw hidden character.

use scraper::{Html, Node, Selector};

/// Elements the renderer writes (HTML and the SVG plotters draws).
const ALLOWED: &[&str] = &[
    "html", "head", "meta", "title", "style", "script", "body", "h1", "h2", "h3", "div", "p",
    "strong", "span", "code", "br", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "del",
    "ins", "input", "svg", "rect", "line", "polyline", "polygon", "circle", "text", "path", "g",
];

/// Attributes that load, link or run something.
const FORBIDDEN_ATTRS: &[&str] = &[
    "href",
    "src",
    "srcset",
    "srcdoc",
    "action",
    "formaction",
    "xlink:href",
    "style",
    "data",
    "poster",
    "background",
    "ping",
];

/// Panics with what is wrong; `case` names the input.
pub fn assert_inert(page: &str, case: &str) {
    let doc = Html::parse_document(page);
    let sel = |s: &str| Selector::parse(s).unwrap();
    let scripts: Vec<_> = doc.select(&sel("script")).collect();
    assert_eq!(scripts.len(), 1, "{case}: only our script");
    assert_eq!(
        doc.select(&sel("style")).count(),
        1,
        "{case}: only our style"
    );
    let csp: Vec<String> = doc
        .select(&sel("meta[http-equiv=Content-Security-Policy]"))
        .filter_map(|m| m.value().attr("content").map(str::to_string))
        .collect();
    assert_eq!(csp.len(), 1, "{case}: one policy");
    assert!(
        csp[0].starts_with("default-src 'none'; style-src 'sha256-")
            && csp[0].contains("script-src 'sha256-")
            && !csp[0].contains("unsafe"),
        "{case}: policy {:?}",
        csp[0]
    );
    assert_eq!(
        doc.select(&sel("meta[http-equiv]")).count(),
        doc.select(&sel("head > meta[http-equiv=Content-Security-Policy]"))
            .count(),
        "{case}: the policy, in head, is the only http-equiv"
    );
    assert_eq!(
        doc.select(&sel("meta")).count(),
        4,
        "{case}: charset, policy, viewport, generator"
    );
    for node in doc.tree.nodes() {
        if let Node::Element(e) = node.value() {
            let name = e.name();
            assert!(ALLOWED.contains(&name), "{case}: element <{name}>");
            for (attr, value) in e.attrs() {
                let lower = attr.to_ascii_lowercase();
                assert!(
                    !lower.starts_with("on"),
                    "{case}: <{name} {attr}={value:?}>"
                );
                assert!(
                    !FORBIDDEN_ATTRS.contains(&lower.as_str()),
                    "{case}: <{name} {attr}={value:?}>"
                );
                assert!(
                    !value.to_ascii_lowercase().contains("javascript:"),
                    "{case}: <{name} {attr}={value:?}>"
                );
            }
        }
    }
    for (i, c) in page.char_indices() {
        assert!(
            c == '\n' || driftgate::text::unicode::hidden(c).is_none(),
            "{case}: raw {:?} (U+{:04X}) near {:?}",
            driftgate::text::unicode::hidden(c),
            c as u32,
            &page[i.saturating_sub(20)..(i + 4).min(page.len())]
        );
    }
}

/// The page's element outline for a snapshot: tag, id and class, one per line, indented by
/// depth; an `svg` is one line with its element count (plotters' geometry is not the point); a
/// run of siblings with the same outline (table rows) is one entry marked `×N`.
pub fn outline(page: &str) -> String {
    let doc = Html::parse_document(page);
    walk(doc.root_element(), 0)
}

/// An element as an outline line: indent, tag, `#id`, `.class`.
fn label(e: &scraper::node::Element, depth: usize) -> String {
    let mut line = format!("{}{}", "  ".repeat(depth), e.name());
    if let Some(id) = e.attr("id") {
        line.push_str(&format!("#{id}"));
    }
    if let Some(class) = e.attr("class") {
        line.push_str(&format!(".{}", class.replace(' ', ".")));
    }
    line
}

fn walk(el: scraper::ElementRef, depth: usize) -> String {
    let e = el.value();
    let line = label(e, depth);
    if e.name() == "svg" {
        let n = el.descendants().filter(|d| d.value().is_element()).count();
        return format!("{line} ({n} elements)\n");
    }
    let mut out = format!("{line}\n");
    let kids: Vec<String> = el
        .children()
        .filter_map(scraper::ElementRef::wrap)
        .map(|c| walk(c, depth + 1))
        .collect();
    let mut i = 0;
    while i < kids.len() {
        let run = kids[i..].iter().take_while(|k| **k == kids[i]).count();
        if run > 1 {
            let (first, rest) = kids[i].split_once('\n').unwrap_or((&kids[i], ""));
            out.push_str(&format!("{first} ×{run}\n{rest}"));
        } else {
            out.push_str(&kids[i]);
        }
        i += run;
    }
    out
}

/// The page for a reviewer: its sha256 (so any byte that changes shows), then every element as
/// [`outline`] writes it with its own text beside it; the style and the script as their size
/// and hash; an `svg` as its element count and the labels it draws. Nothing is collapsed: rows
/// with the same shape carry different words.
pub fn readable(page: &str) -> String {
    let doc = Html::parse_document(page);
    let mut out = format!(
        "page {}, {} bytes\n",
        driftgate::canon::hash_str(page),
        page.len()
    );
    read(doc.root_element(), 0, &mut out);
    out
}

fn read(el: scraper::ElementRef, depth: usize, out: &mut String) {
    let e = el.value();
    let line = label(e, depth);
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    match e.name() {
        "style" | "script" => {
            let body: String = el.text().collect();
            out.push_str(&format!(
                "{line} ({} bytes, {})\n",
                body.len(),
                driftgate::canon::hash_str(&body)
            ));
            return;
        }
        "svg" => {
            let n = el.descendants().filter(|d| d.value().is_element()).count();
            let labels: Vec<String> = el
                .descendants()
                .filter_map(scraper::ElementRef::wrap)
                .filter(|d| d.value().name() == "text")
                .map(|t| squash(&t.text().collect::<String>()))
                .filter(|t| !t.is_empty())
                .collect();
            out.push_str(&format!("{line} ({n} elements): {}\n", labels.join(" · ")));
            return;
        }
        _ => {}
    }
    let own: Vec<String> = el
        .children()
        .filter_map(|c| c.value().as_text().map(|t| squash(t)))
        .filter(|t| !t.is_empty())
        .collect();
    if own.is_empty() {
        out.push_str(&format!("{line}\n"));
    } else {
        out.push_str(&format!("{line}: {}\n", own.join(" ¦ ")));
    }
    for c in el.children().filter_map(scraper::ElementRef::wrap) {
        read(c, depth + 1, out);
    }
}
