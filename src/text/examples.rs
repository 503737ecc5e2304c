//! Usage examples inside a description: "For example, …", "(e.g. …)", ", for instance …",
//! "Example: {…}". An example illustrates the purpose with concrete values (file names, JSON, a
//! quoted line); it does not state a purpose. The semantic router reads a description without
//! them, so an added example's file names and values do not pull other tools' prompts (measured
//! on the hand-written batches, docs/router.md).

/// Openings that make what follows an example, lower case, longest first where one is the
/// start of another.
const OPENINGS: [&str; 7] = [
    "for example",
    "for instance",
    "examples:",
    "example:",
    "e.g.",
    "eg.",
    "e. g.",
];

/// `text` with every example span removed: a sentence that opens with an example marker, an
/// example in parentheses, and a clause from ", for example" (or "; e.g.", " — for instance")
/// to its sentence's end (that end kept). A list that follows a sentence ending in a colon
/// ("Examples:" then "- …" lines) goes with it. The text as it was when nothing else is left.
pub fn without(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        match opening(rest, sentence_starts_at(text, i)) {
            Some(Span::Parenthesis) => {
                trim_space(&mut out);
                i += closing(rest);
            }
            Some(Span::Sentence(len)) => {
                i = skip_list(text, sentence_end(text, i + len, true));
                i += text[i..].len() - text[i..].trim_start_matches([' ', '\t']).len();
            }
            // An inline clause: its punctuation goes, the sentence's end stays.
            Some(Span::Clause(len)) => {
                trim_space(&mut out);
                i = sentence_end(text, i + len, false);
            }
            None => {
                let c = rest.chars().next().expect("inside text");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    // Untouched when nothing was an example (line breaks and spacing as they were).
    match out.trim() {
        _ if out == text => text.to_string(),
        "" => text.to_string(),
        t => t.to_string(),
    }
}

/// An example that starts where [`opening`] looked, and how it runs.
enum Span {
    /// "(e.g. …)": to its closing parenthesis.
    Parenthesis,
    /// A sentence that opens with a marker this many bytes long: the whole sentence.
    Sentence(usize),
    /// ", for example" (this many bytes, punctuation included): to the sentence's end.
    Clause(usize),
}

/// Whether `rest` opens an example: a marker after "(", at a sentence's start, or after a
/// clause's punctuation ("use e.g. paths" is no example: a marker needs one of those).
fn opening(rest: &str, sentence_start: bool) -> Option<Span> {
    if let Some(body) = rest.strip_prefix('(') {
        return marker(body).map(|_| Span::Parenthesis);
    }
    if sentence_start && let Some(n) = marker(rest) {
        return Some(Span::Sentence(n));
    }
    let body = rest.strip_prefix([',', ';', ':', '—', '–'])?;
    let trimmed = body.trim_start_matches(' ');
    marker(trimmed).map(|n| Span::Clause(rest.len() - trimmed.len() + n))
}

/// The length of the example marker `body` starts with: a whole word or phrase ("for
/// example," or "e.g." but not "for example-free").
fn marker(body: &str) -> Option<usize> {
    OPENINGS.iter().find_map(|o| {
        let head = body.get(..o.len())?;
        let after = body[o.len()..].chars().next();
        let whole = o.ends_with([':', '.']) || after.is_none_or(|c| matches!(c, ',' | ':' | ' '));
        (head.eq_ignore_ascii_case(o) && whole).then_some(o.len())
    })
}

/// Whether byte `i` of `text` begins a sentence: the text's start, or only spaces since a line
/// break or since a `.`, `!`, `?` that ended one (not the dot of "e.g.").
fn sentence_starts_at(text: &str, i: usize) -> bool {
    let before = text[..i].trim_end_matches([' ', '\t', '\r']);
    if before.is_empty() || before.ends_with('\n') {
        return true;
    }
    before.len() < i && ends_sentence(before)
}

/// Whether `before` ends with a sentence's terminal punctuation.
fn ends_sentence(before: &str) -> bool {
    before.ends_with(['.', '!', '?']) && !ends_with_abbreviation(before)
}

/// Where the sentence running through byte `from` ends: after its terminal punctuation (`keep`)
/// or just before it, or at a line break, or at the text's end. Punctuation inside quotes,
/// backticks or brackets does not end it.
fn sentence_end(text: &str, from: usize, keep: bool) -> usize {
    let (mut quoted, mut ticked, mut depth) = (false, false, 0i32);
    let mut it = text[from..].char_indices().peekable();
    while let Some((k, c)) = it.next() {
        let at = from + k;
        match c {
            '"' if !ticked => quoted = !quoted,
            '`' if !quoted => ticked = !ticked,
            '{' | '[' | '(' if !quoted && !ticked => depth += 1,
            '}' | ']' | ')' if !quoted && !ticked => depth -= 1,
            '\n' => return at,
            '.' | '!' | '?' if !quoted && !ticked && depth <= 0 => {
                let next = it.peek().map(|&(_, n)| n);
                if next.is_none_or(char::is_whitespace) && !ends_with_abbreviation(&text[..at + 1])
                {
                    return if keep { at + 1 } else { at };
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// Whether the dot that ends `upto` is the last of an abbreviation ("e.g.", "i.e."): only its
/// last bytes are compared, so asking at every position of a long text stays linear.
fn ends_with_abbreviation(upto: &str) -> bool {
    let tail = upto.as_bytes();
    ["e.g.", "eg.", "e. g.", "i.e."].iter().any(|a| {
        tail.len() >= a.len() && tail[tail.len() - a.len()..].eq_ignore_ascii_case(a.as_bytes())
    })
}

/// Past the closing parenthesis that matches the one `text` opens with (or the sentence's end
/// when none closes it).
fn closing(text: &str) -> usize {
    let mut depth = 0;
    for (k, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            '\n' => return k,
            _ => {}
        }
    }
    text.len()
}

/// Past `end`, the end of an example sentence: when it ended with a colon at a line break,
/// the list lines that follow ("- …", "* …", "1. …") belong to it.
fn skip_list(text: &str, end: usize) -> usize {
    if !text[..end].trim_end().ends_with(':') || !text[end..].starts_with('\n') {
        return end;
    }
    let mut at = end + 1;
    for line in text[at..].split_inclusive('\n') {
        let l = line.trim_start();
        let numbered = l
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !(l.starts_with(['-', '*', '•']) || numbered) {
            break;
        }
        at += line.len();
    }
    if at == end + 1 { end } else { at }
}

fn trim_space(out: &mut String) {
    let n = out.trim_end_matches([' ', '\t']).len();
    out.truncate(n);
}

#[cfg(test)]
mod tests {
    use super::without;

    #[test]
    fn an_example_sentence_goes_and_the_purpose_stays() {
        assert_eq!(
            without(
                "Make line-based edits to a text file. For example, an edit can replace the line \
                 'debug = false' with 'debug = true' in config.ini. Returns a git-style diff."
            ),
            "Make line-based edits to a text file. Returns a git-style diff."
        );
        assert_eq!(
            without(
                "Get a tree as JSON. Example: a 'src' folder gives {\"name\": \"src\", \"children\": \
                 [{\"name\": \"main.py\"}]}. Only works within allowed directories."
            ),
            "Get a tree as JSON. Only works within allowed directories."
        );
        assert_eq!(
            without("Search files. E.g. the pattern \"readme\" finds docs/README.md. Fast."),
            "Search files. Fast."
        );
    }

    #[test]
    fn an_example_in_parentheses_or_a_trailing_clause_goes() {
        assert_eq!(
            without(
                "Matches partial names (e.g. the pattern \"readme\" finds docs/README.md). Returns \
                 full paths."
            ),
            "Matches partial names. Returns full paths."
        );
        assert_eq!(
            without(
                "Results carry [FILE] and [DIR] prefixes, for example \"[DIR] src\" or \"[FILE] \
                 README.md\". This tool lists a directory."
            ),
            "Results carry [FILE] and [DIR] prefixes. This tool lists a directory."
        );
        assert_eq!(
            without("Deploys a model (e.g. GPT4o / gpt-4o, OpenAI) as a named deployment."),
            "Deploys a model as a named deployment."
        );
        assert_eq!(
            without("Inspect a setting; e.g. max_connections.\nNext line."),
            "Inspect a setting.\nNext line."
        );
    }

    #[test]
    fn an_example_list_after_a_colon_goes_with_its_heading() {
        assert_eq!(
            without("Query logs.\nExamples:\n- show errors\n- query workspace\nReturns rows."),
            "Query logs.\nReturns rows."
        );
    }

    #[test]
    fn words_that_only_look_like_markers_stay() {
        for text in [
            "Use e.g. paths within allowed dirs.",
            "Returns an example of the schema.",
            "Fetches the examples folder: every file in it.",
            "Lists instances, for example-free output.",
            "Read a file.",
            "",
        ] {
            assert_eq!(without(text), text.trim(), "{text:?}");
        }
        // A long text is read in one pass (asking whether each position starts a sentence
        // once lowercased the whole prefix: 15,000 sentences took seconds).
        let long = "Reads a file. ".repeat(15_000);
        assert_eq!(without(&long), long);
        // Nothing but an example: the text as it was.
        assert_eq!(without("For example, x."), "For example, x.");
    }
}
