//! Where a live server's description lives in its source code: the one string literal whose
//! value is the description (a FastMCP docstring, `@mcp.tool(description="…")`,
//! `server.tool("name", "…", …)`, `description: '…'`), and that literal rewritten to the new
//! text. A small lexer of Python and JS/TS string literals, hand-written because the suggestion
//! needs exact byte spans and lines; a description built from several literals or from a
//! template is said to be so, never guessed.

use super::{Located, Style, literal, suggestable};

/// The languages whose string literals are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    /// JavaScript and TypeScript.
    Js,
}

impl Lang {
    /// The language of a source file, by its extension.
    pub fn of(path: &str) -> Option<Lang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        match name.rsplit_once('.')?.1 {
            "py" => Some(Lang::Python),
            "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "jsx" | "tsx" => Some(Lang::Js),
            _ => None,
        }
    }
}

/// One string literal of a source file.
#[derive(Debug, Clone)]
struct Lit {
    /// Byte span of the whole literal, prefix and quotes included.
    start: usize,
    end: usize,
    /// 1-based lines of its first and last byte.
    first: usize,
    last: usize,
    /// Its value; `None` when it is no single literal's value (an f-string field, a `${…}`
    /// substitution, bytes, an unterminated or undecodable literal).
    value: Option<String>,
    /// An f-string's or template's text around its fields, decoded, in order.
    parts: Vec<String>,
    /// Python's `'''…'''` / `"""…"""`.
    triple: bool,
    /// Only blanks, comments and at most one `+` since the previous literal.
    joined: bool,
}

/// What the lexer saw since the last literal, for concatenations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gap {
    Clean,
    Plus,
    Dirty,
}

/// JS: whether a `/` here starts a regular expression (after an operator, an opening bracket,
/// or a keyword) or divides (after a value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prev {
    Operator,
    Value,
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    lang: Lang,
    starts: Vec<usize>,
    lits: Vec<Lit>,
    gap: Gap,
    prev: Prev,
    /// A `/` before this offset is a division: a regular expression tried from an earlier `/`
    /// of the line never closed, so none on the line will (keeps a line of `/[` linear).
    no_regex_until: usize,
}

/// Templates nested in substitutions deeper than this are not read (their text is no literal we
/// could suggest on); the bound keeps hostile nesting from exhausting the stack.
const MAX_NESTING: usize = 32;

/// Literals joined at most when looking for a description built by concatenation.
const MAX_JOINED: usize = 64;

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

const REGEX_AFTER: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
    "instanceof",
];

impl<'a> Lexer<'a> {
    fn new(s: &'a str, lang: Lang) -> Lexer<'a> {
        let mut starts = vec![0];
        starts.extend(s.match_indices('\n').map(|(i, _)| i + 1));
        Lexer {
            s,
            b: s.as_bytes(),
            i: 0,
            lang,
            starts,
            lits: Vec::new(),
            gap: Gap::Dirty,
            prev: Prev::Operator,
            no_regex_until: 0,
        }
    }

    fn line(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at)
    }

    fn at(&self, j: usize) -> u8 {
        self.b.get(j).copied().unwrap_or(0)
    }

    /// The end of the line holding `j` (its `\n`, or the end of the text).
    fn eol(&self, j: usize) -> usize {
        self.s[j..].find('\n').map_or(self.s.len(), |k| j + k)
    }

    fn dirty(&mut self, prev: Prev) {
        self.gap = Gap::Dirty;
        self.prev = prev;
    }

    fn push(&mut self, start: usize, end: usize, value: Option<String>, parts: Vec<String>) {
        let triple = self.lang == Lang::Python && {
            let q = self.s[start..end].trim_start_matches(|c: char| c.is_ascii_alphabetic());
            q.starts_with("'''") || q.starts_with("\"\"\"")
        };
        let joined = !self.lits.is_empty() && self.gap != Gap::Dirty;
        self.lits.push(Lit {
            start,
            end,
            first: self.line(start),
            last: self.line(end.saturating_sub(1).max(start)),
            value,
            parts,
            triple,
            joined,
        });
        self.gap = Gap::Clean;
        self.prev = Prev::Value;
    }

    fn run(mut self) -> Vec<Lit> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | 0x0c => self.i += 1,
                b'#' if self.lang == Lang::Python => self.i = self.eol(self.i),
                b'/' if self.lang == Lang::Js && self.at(self.i + 1) == b'/' => {
                    self.i = self.eol(self.i)
                }
                b'/' if self.lang == Lang::Js && self.at(self.i + 1) == b'*' => {
                    self.i = self.s[self.i + 2..]
                        .find("*/")
                        .map_or(self.b.len(), |k| self.i + 2 + k + 2);
                }
                b'/' if self.lang == Lang::Js => {
                    let tried = self.prev == Prev::Operator && self.i >= self.no_regex_until;
                    match tried.then(|| self.regex_end(self.i)).flatten() {
                        Some(end) => {
                            self.i = end;
                            self.dirty(Prev::Value);
                        }
                        None => {
                            if tried {
                                self.no_regex_until = self.eol(self.i);
                            }
                            self.i += 1;
                            self.dirty(Prev::Operator);
                        }
                    }
                }
                // A Python line continuation.
                b'\\' if matches!(self.at(self.i + 1), b'\n' | b'\r') => self.i += 2,
                b'\'' | b'"' => self.string(self.i, ""),
                b'`' if self.lang == Lang::Js => self.template(),
                b'+' => {
                    self.gap = if self.gap == Gap::Clean {
                        Gap::Plus
                    } else {
                        Gap::Dirty
                    };
                    self.prev = Prev::Operator;
                    self.i += 1;
                }
                b')' | b']' | b'}' => {
                    self.i += 1;
                    self.dirty(Prev::Value);
                }
                _ if is_ident(c) => {
                    let start = self.i;
                    while self.i < self.b.len() && is_ident(self.b[self.i]) {
                        self.i += 1;
                    }
                    let word = &self.s[start..self.i];
                    let quote = matches!(self.at(self.i), b'\'' | b'"');
                    if quote && self.lang == Lang::Python && is_prefix(word) {
                        self.string(start, word);
                    } else if REGEX_AFTER.contains(&word) {
                        self.dirty(Prev::Operator);
                    } else {
                        self.dirty(Prev::Value);
                    }
                }
                _ => {
                    // One whole character: a multi-byte one is an identifier's (handled above).
                    self.i += 1;
                    self.dirty(Prev::Operator);
                }
            }
        }
        self.lits
    }

    /// A JS regular expression starting at `j`: where it ends (flags included), or `None` when
    /// the line ends first (then the `/` was a division after all).
    fn regex_end(&self, j: usize) -> Option<usize> {
        let mut k = j + 1;
        let mut class = false;
        loop {
            match self.b.get(k)? {
                b'\n' => return None,
                b'\\' => k += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => break,
                _ => {}
            }
            k += 1;
        }
        k += 1;
        while k < self.b.len() && is_ident(self.b[k]) {
            k += 1;
        }
        Some(k)
    }

    /// A quoted string whose prefix (Python) starts at `start` and whose quote is at `self.i`.
    fn string(&mut self, start: usize, prefix: &str) {
        let prefix = prefix.to_ascii_lowercase();
        let q = self.b[self.i];
        let triple =
            self.lang == Lang::Python && self.at(self.i + 1) == q && self.at(self.i + 2) == q;
        let open = self.i + if triple { 3 } else { 1 };
        let fstr = prefix.contains('f') || prefix.contains('t');
        let raw = prefix.contains('r');
        // Byte ranges of the text outside fields, and whether a field was seen.
        let mut segments = Vec::new();
        let mut seg = open;
        let mut field = false;
        let mut j = open;
        let close = loop {
            match self.b.get(j) {
                None => break None,
                Some(b'\\') => j += if self.at(j + 1) == b'\r' { 3 } else { 2 },
                Some(&c) if c == q && (!triple || (self.at(j + 1) == q && self.at(j + 2) == q)) => {
                    break Some(j);
                }
                Some(b'\n') if !triple => break None,
                Some(b'{') if fstr && self.at(j + 1) == b'{' => j += 2,
                Some(b'{') if fstr => {
                    field = true;
                    segments.push((seg, j));
                    j = self.skip_braces(j, 0);
                    seg = j;
                }
                Some(_) => j += 1,
            }
        };
        let j = j.min(self.b.len());
        let Some(close) = close else {
            // Unterminated: no value, and the lexer goes on after the line.
            let end = self.eol(j);
            self.i = end;
            self.push(start, end, None, Vec::new());
            return;
        };
        segments.push((seg, close));
        let end = close + if triple { 3 } else { 1 };
        self.i = end;
        let decode = |a: usize, b: usize| -> Option<String> {
            let text = &self.s[a..b];
            let v = match self.lang {
                _ if raw => text.replace("\r\n", "\n"),
                Lang::Python => decode_python(text)?,
                Lang::Js => decode_js(text)?,
            };
            Some(if fstr {
                v.replace("{{", "{").replace("}}", "}")
            } else {
                v
            })
        };
        let parts: Option<Vec<String>> = segments.iter().map(|&(a, b)| decode(a, b)).collect();
        let (value, parts) = match parts {
            _ if prefix.contains('b') => (None, Vec::new()),
            Some(p) if field => (None, p),
            Some(mut p) => (p.pop(), Vec::new()),
            None => (None, Vec::new()),
        };
        self.push(start, end, value, parts);
    }

    /// From the `{` of a field (f-string) or substitution (template) at `j`: just past its
    /// matching `}`, quoted text inside skipped.
    fn skip_braces(&self, j: usize, nesting: usize) -> usize {
        if nesting > MAX_NESTING {
            return self.b.len();
        }
        let mut depth = 0usize;
        let mut k = j;
        while k < self.b.len() {
            match self.b[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return k + 1;
                    }
                }
                b'`' if self.lang == Lang::Js => {
                    k = self.template_end(k, nesting + 1).unwrap_or(self.b.len());
                    continue;
                }
                q @ (b'\'' | b'"') => {
                    k += 1;
                    while k < self.b.len() && self.b[k] != q && self.b[k] != b'\n' {
                        k += if self.b[k] == b'\\' { 2 } else { 1 };
                    }
                }
                _ => {}
            }
            k += 1;
        }
        self.b.len()
    }

    /// From the backtick at `j`: just past the closing one.
    fn template_end(&self, j: usize, nesting: usize) -> Option<usize> {
        if nesting > MAX_NESTING {
            return None;
        }
        let mut k = j + 1;
        loop {
            match self.b.get(k)? {
                b'\\' => k += 2,
                b'`' => return Some(k + 1),
                b'$' if self.at(k + 1) == b'{' => k = self.skip_braces(k + 1, nesting + 1),
                _ => k += 1,
            }
        }
    }

    /// A JS template literal at `self.i`.
    fn template(&mut self) {
        let start = self.i;
        let mut segments = Vec::new();
        let mut seg = start + 1;
        let mut k = start + 1;
        let close = loop {
            match self.b.get(k) {
                None => break None,
                Some(b'\\') => k += 2,
                Some(b'`') => break Some(k),
                Some(b'$') if self.at(k + 1) == b'{' => {
                    segments.push((seg, k));
                    k = self.skip_braces(k + 1, 0);
                    seg = k;
                }
                Some(_) => k += 1,
            }
        };
        let Some(close) = close else {
            self.i = self.b.len();
            self.push(start, self.i, None, Vec::new());
            return;
        };
        let field = !segments.is_empty();
        segments.push((seg, close));
        self.i = close + 1;
        let parts: Option<Vec<String>> = segments
            .iter()
            .map(|&(a, b)| decode_js(&self.s[a..b].replace("\r\n", "\n")))
            .collect();
        let (value, parts) = match parts {
            Some(p) if field => (None, p),
            Some(mut p) => (p.pop(), Vec::new()),
            None => (None, Vec::new()),
        };
        self.push(start, self.i, value, parts);
    }
}

/// A Python string prefix (`r`, `u`, `b`, `f`, `t` and their pairs, any case).
fn is_prefix(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    matches!(
        w.as_str(),
        "r" | "u" | "b" | "f" | "t" | "br" | "rb" | "fr" | "rf" | "tr" | "rt"
    )
}

/// `n` hex digits at the start of `it`, as a character.
fn hex(it: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize) -> Option<char> {
    let mut v = 0u32;
    for _ in 0..n {
        v = v * 16 + it.next()?.to_digit(16)?;
    }
    char::from_u32(v)
}

/// A non-raw Python string's text, escapes decoded; `None` for what we do not decode (`\N{…}`)
/// or an invalid escape.
fn decode_python(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\r' && it.peek() == Some(&'\n') {
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next()? {
            '\n' => {}
            '\r' => {
                it.next_if_eq(&'\n');
            }
            e @ ('\\' | '\'' | '"') => out.push(e),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => out.push(hex(&mut it, 2)?),
            'u' => out.push(hex(&mut it, 4)?),
            'U' => out.push(hex(&mut it, 8)?),
            'N' => return None,
            d @ '0'..='7' => {
                let mut v = d.to_digit(8)?;
                for _ in 0..2 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v)?);
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// A JS string's or template's text, escapes decoded; `None` for an invalid escape.
fn decode_js(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next()? {
            '\n' | '\u{2028}' | '\u{2029}' => {}
            '\r' => {
                it.next_if_eq(&'\n');
            }
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0' if !it.peek().is_some_and(char::is_ascii_digit) => out.push('\0'),
            'x' => out.push(hex(&mut it, 2)?),
            'u' if it.peek() == Some(&'{') => {
                it.next();
                let mut v = 0u32;
                let mut digits = 0;
                loop {
                    match it.next()? {
                        '}' if digits > 0 => break,
                        d => v = v.checked_mul(16)?.checked_add(d.to_digit(16)?)?,
                    }
                    digits += 1;
                }
                out.push(char::from_u32(v)?);
            }
            'u' => out.push(hex(&mut it, 4)?),
            other => out.push(other),
        }
    }
    Some(out)
}

/// `inspect.cleandoc`: tabs expanded, the first line's leading blanks and the other lines'
/// common indentation removed, leading and trailing empty lines dropped.
fn cleandoc(doc: &str) -> String {
    let expand = |line: &str| {
        let mut out = String::with_capacity(line.len());
        let mut column = 0usize;
        for c in line.chars() {
            if c == '\t' {
                let pad = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', pad));
                column += pad;
            } else {
                out.push(c);
                column += 1;
            }
        }
        out
    };
    let mut lines: Vec<String> = doc.split('\n').map(expand).collect();
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let margin = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    if let Some(first) = lines.first_mut() {
        *first = first.trim_start().to_string();
    }
    for l in lines.iter_mut().skip(1) {
        let cut = margin.min(indent(l));
        *l = l[cut..].to_string();
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let lead = lines.iter().take_while(|l| l.is_empty()).count();
    lines[lead..].join("\n")
}

/// Every string literal of `text`.
fn scan(text: &str, lang: Lang) -> Vec<Lit> {
    Lexer::new(text, lang).run()
}

/// Whether `lit`'s value is the description (surrounding whitespace aside; a docstring also
/// once dedented as Python dedents docstrings).
fn holds(lit: &Lit, old: &str) -> bool {
    lit.value
        .as_deref()
        .is_some_and(|v| v.trim() == old.trim() || (lit.triple && cleandoc(v).trim() == old.trim()))
}

/// Whether the text around an f-string's or template's fields could make `old`: each part in
/// order, the first at the start and the last at the end, covering at least half of it (a
/// template of fields alone says nothing).
fn could_make(parts: &[String], old: &str) -> bool {
    let old = old.trim();
    let fixed: usize = parts.iter().map(|p| p.trim().len()).sum();
    if parts.len() < 2 || fixed * 2 < old.len() {
        return false;
    }
    let (first, last) = (parts[0].trim_start(), parts[parts.len() - 1].trim_end());
    if first.len() + last.len() > old.len()
        || !old.starts_with(first)
        || !old[first.len()..].ends_with(last)
    {
        return false;
    }
    let mut rest = &old[first.len()..old.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p.as_str()) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    true
}

/// The lines of a tool's name as anchors in one file: literals equal to it, and a Python
/// `def name(`.
fn anchors(text: &str, lits: &[Lit], tool: &str) -> Vec<usize> {
    let mut out: Vec<usize> = lits
        .iter()
        .filter(|l| l.value.as_deref() == Some(tool))
        .map(|l| l.first)
        .collect();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let t = t.strip_prefix("async ").map_or(t, str::trim_start);
        if let Some(rest) = t.strip_prefix("def ")
            && let Some(after) = rest.trim_start().strip_prefix(tool)
            && after.trim_start().starts_with('(')
        {
            out.push(i + 1);
        }
    }
    out
}

/// The new literal for `lit`: `"…"`, or `"""…"""` for a Python docstring; prefixes dropped.
fn new_literal(lit: &Lit, lang: Lang, new: &str) -> String {
    match lang {
        Lang::Python if lit.triple => {
            let l = literal(new, Style::Python);
            format!("\"\"{l}\"\"")
        }
        Lang::Python => literal(new, Style::Python),
        Lang::Js => literal(new, Style::Js),
    }
}

/// `lit`'s lines rewritten as one: what precedes it on its first line, the new literal, what
/// follows it on its last.
fn rewrite(text: &str, lit: &Lit, lang: Lang, new: &str) -> Result<Located, String> {
    let line_start = text[..lit.start].rfind('\n').map_or(0, |k| k + 1);
    let line_end = text[lit.end..]
        .find('\n')
        .map_or(text.len(), |k| lit.end + k);
    let before = &text[line_start..lit.start];
    let after = text[lit.end..line_end].trim_end_matches('\r');
    let replacement = format!("{before}{}{after}", new_literal(lit, lang, new));
    suggestable(&replacement)?;
    Ok(Located {
        line: lit.last as u64,
        start_line: (lit.first != lit.last).then_some(lit.first as u64),
        replacement,
    })
}

/// Where a literal is, for messages.
fn place(path: &str, lit: &Lit) -> String {
    if lit.first == lit.last {
        format!("{path}:{}", lit.first)
    } else {
        format!("{path}:{}–{}", lit.first, lit.last)
    }
}

/// The one string literal among `files` (repository path, text) whose value is `old`, tool
/// `tool`'s description, rewritten to `new`: its path and lines. Several such literals: the one
/// nearest to the tool's name in the same file. Otherwise why there is no one-literal
/// suggestion: the description is built from several literals, or from a template, or in code.
pub fn locate(
    files: &[(String, String)],
    tool: &str,
    old: &str,
    new: &str,
) -> Result<(String, Located), String> {
    if old.trim().is_empty() {
        return Err("head's description is empty: no literal to find".into());
    }
    let scanned: Vec<(&str, &str, Lang, Vec<Lit>)> = files
        .iter()
        .filter_map(|(p, t)| {
            let lang = Lang::of(p)?;
            Some((p.as_str(), t.as_str(), lang, scan(t, lang)))
        })
        .collect();
    let mut found: Vec<(usize, &Lit, Option<usize>)> = Vec::new();
    for (f, (_, text, _, lits)) in scanned.iter().enumerate() {
        let near = anchors(text, lits, tool);
        for lit in lits.iter().filter(|l| holds(l, old)) {
            let distance = near.iter().map(|a| a.abs_diff(lit.first)).min();
            found.push((f, lit, distance));
        }
    }
    let chosen = match found.as_slice() {
        [] => None,
        [one] => Some((one.0, one.1)),
        many => {
            // Nearest to the tool's name, compared within one file: only one file may name it.
            let named: std::collections::BTreeSet<usize> =
                many.iter().filter(|m| m.2.is_some()).map(|m| m.0).collect();
            let pick = match named.iter().collect::<Vec<_>>().as_slice() {
                &[&f] => {
                    let best = many.iter().filter(|m| m.0 == f).filter_map(|m| m.2).min();
                    let at_best: Vec<_> = many.iter().filter(|m| m.0 == f && m.2 == best).collect();
                    match at_best.as_slice() {
                        [one] => Some((one.0, one.1)),
                        _ => None,
                    }
                }
                _ => None,
            };
            if pick.is_none() {
                let list: Vec<String> = many
                    .iter()
                    .take(5)
                    .map(|(f, l, _)| place(scanned[*f].0, l))
                    .collect();
                return Err(format!(
                    "{} string literals hold the description ({}{}) and none is nearest to the tool's name in the one file that names it; no suggestion",
                    many.len(),
                    list.join(", "),
                    if many.len() > 5 { ", …" } else { "" }
                ));
            }
            pick
        }
    };
    if let Some((f, lit)) = chosen {
        let (path, text, lang, _) = &scanned[f];
        return Ok((path.to_string(), rewrite(text, lit, *lang, new)?));
    }
    Err(concatenated(&scanned, old)
        .or_else(|| templated(&scanned, old))
        .unwrap_or_else(|| {
            "no string literal in the repository's source holds the description (built in code)"
                .into()
        }))
}

type Scanned<'a> = [(&'a str, &'a str, Lang, Vec<Lit>)];

/// Adjacent literals (`"a" "b"`, `"a" + "b"`) whose values together are the description.
fn concatenated(scanned: &Scanned<'_>, old: &str) -> Option<String> {
    for (path, _, _, lits) in scanned {
        for i in 0..lits.len() {
            let Some(mut joined) = lits[i].value.clone() else {
                continue;
            };
            for (j, next) in lits.iter().enumerate().skip(i + 1).take(MAX_JOINED) {
                let Some(v) = next.value.as_deref().filter(|_| next.joined) else {
                    break;
                };
                joined.push_str(v);
                if joined.trim() == old.trim() {
                    return Some(format!(
                        "the description is built from {} literals at {path}:{}–{}; no one-literal suggestion",
                        j - i + 1,
                        lits[i].first,
                        next.last
                    ));
                }
                if joined.len() > old.len() + 64 {
                    break;
                }
            }
        }
    }
    None
}

/// An f-string or template literal whose fixed text could make the description.
fn templated(scanned: &Scanned<'_>, old: &str) -> Option<String> {
    scanned.iter().find_map(|(path, _, lang, lits)| {
        let lit = lits.iter().find(|l| could_make(&l.parts, old))?;
        let kind = match lang {
            Lang::Python => "an f-string with a `{…}` field",
            Lang::Js => "a template literal with `${…}`",
        };
        Some(format!(
            "the description is made by {kind} at {}, not a single literal; no suggestion",
            place(path, lit)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the one literal on `line` (a suggested line decoded back).
    fn value_of(line: &str, lang: Lang) -> String {
        let lits = scan(line, lang);
        let vals: Vec<&Lit> = lits.iter().filter(|l| l.value.is_some()).collect();
        vals.last()
            .and_then(|l| l.value.clone())
            .unwrap_or_else(|| panic!("no literal in {line:?}"))
    }

    fn one(path: &str, text: &str) -> Vec<(String, String)> {
        vec![(path.to_string(), text.to_string())]
    }

    /// `text` with lines `from..=to` (1-based) replaced by `with`, as GitHub applies a
    /// suggestion.
    fn apply(text: &str, at: &Located, with: &str) -> String {
        let from = at.start_line.unwrap_or(at.line) as usize;
        let lines: Vec<&str> = text.lines().collect();
        let mut out: Vec<&str> = lines[..from - 1].to_vec();
        out.push(with);
        out.extend(&lines[at.line as usize..]);
        out.join("\n") + "\n"
    }

    /// Hostile source cannot run away: each input was quadratic (or, the nesting, a stack
    /// overflow) before its bound; now each takes about a second or less in a debug build.
    #[test]
    fn hostile_source_is_read_in_bounded_time_and_stack() {
        let big = 1 << 20;
        let cases = [
            // Templates nested in substitutions, 100k deep.
            ("a.js", "`${".repeat(100_000)),
            // A line of unclosed regular-expression classes after an operator.
            ("b.js", format!("x = {}", "/[".repeat(big / 2))),
            // Empty literals joined, as a description built by concatenation is looked for
            // (87k of them: quadratic, that was hours).
            ("c.py", "'' ".repeat(big / 12)),
            ("d.js", "\"\"+".repeat(big / 12)),
            // A docstring of tabs (dedented as Python dedents docstrings).
            ("e.py", format!("\"\"\"{}\"\"\"", "\t".repeat(big))),
        ];
        for (path, text) in cases {
            // Run on a thread with a small stack, as a tokio worker's: nesting must not recurse.
            let started = std::time::Instant::now();
            let file = one(path, &text);
            let r = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || locate(&file, "t", "never there", "x").is_err())
                .unwrap()
                .join();
            assert_eq!(r.ok(), Some(true), "{path}");
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "{path}: {:?}",
                started.elapsed()
            );
        }
    }

    #[test]
    fn a_python_decorator_keyword_is_rewritten_in_place() {
        let py = "from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('cal')\n\n@mcp.tool(description=\"Book a slot.\")  # the booking\ndef schedule_appointment(patient_id: str) -> str:\n    return 'ok'\n";
        let (path, at) = locate(
            &one("server.py", py),
            "schedule_appointment",
            "Book a slot.",
            "Book a slot. Schedule it.",
        )
        .unwrap();
        assert_eq!(
            (path.as_str(), at.line, at.start_line),
            ("server.py", 4, None)
        );
        assert_eq!(
            at.replacement,
            "@mcp.tool(description=\"Book a slot. Schedule it.\")  # the booking"
        );
        assert_eq!(
            value_of(&at.replacement, Lang::Python),
            "Book a slot. Schedule it."
        );
    }

    #[test]
    fn a_fastmcp_docstring_on_several_lines_becomes_one_line_of_the_same_value() {
        let py = "@mcp.tool()\ndef schedule_appointment(patient_id: str) -> str:\n    \"\"\"Book a slot.\n\n    Use it for new visits.\n    \"\"\"\n    return 'ok'\n";
        // FastMCP takes the dedented docstring.
        let old = "Book a slot.\n\nUse it for new visits.";
        let new = "Book a new appointment.\n\nNot for \"moving\" one.";
        let (_, at) = locate(&one("tools/cal.py", py), "schedule_appointment", old, new).unwrap();
        assert_eq!((at.start_line, at.line), (Some(3), 6));
        assert_eq!(
            at.replacement,
            r#"    """Book a new appointment.\n\nNot for \"moving\" one.""""#
        );
        assert_eq!(value_of(&at.replacement, Lang::Python), new);
        // Applied, the file holds the new docstring where the old one was.
        let applied = apply(py, &at, &at.replacement);
        let lits = scan(&applied, Lang::Python);
        assert_eq!(lits[0].value.as_deref(), Some(new));
        assert!(applied.ends_with("\"\"\"\n    return 'ok'\n"), "{applied}");
    }

    #[test]
    fn a_typescript_server_tool_call_is_found_by_value() {
        let ts = "import { McpServer } from \"@modelcontextprotocol/sdk/server/mcp.js\";\n// \"Book a slot.\" in a comment is no literal\n/* nor \"Book a slot.\" here */\nconst re = /\"[a-z]+'/g, half = 1 / 2;\nserver.tool(\"schedule_appointment\", \"Book a slot.\", { patient_id: z.string() }, async ({ patient_id }) => ({ content: [] }));\n";
        let (path, at) = locate(
            &one("src/index.ts", ts),
            "schedule_appointment",
            "Book a slot.",
            "Book a slot; it's new.",
        )
        .unwrap();
        assert_eq!(
            (path.as_str(), at.line, at.start_line),
            ("src/index.ts", 5, None)
        );
        assert_eq!(
            at.replacement,
            "server.tool(\"schedule_appointment\", \"Book a slot; it's new.\", { patient_id: z.string() }, async ({ patient_id }) => ({ content: [] }));"
        );
        assert_eq!(
            value_of(&at.replacement, Lang::Js).as_str(),
            "Book a slot; it's new."
        );
        // The regex and the division did not derail the lexer: exactly these literals.
        let values: Vec<Option<String>> = scan(ts, Lang::Js).into_iter().map(|l| l.value).collect();
        assert_eq!(
            values,
            [
                Some("@modelcontextprotocol/sdk/server/mcp.js".into()),
                Some("schedule_appointment".into()),
                Some("Book a slot.".into())
            ]
        );
    }

    #[test]
    fn a_register_tool_description_in_single_quotes_is_nearest_to_its_name() {
        let ts = "server.registerTool('list_slots', {\n  description: 'Book a slot.',\n});\n\nserver.registerTool('schedule_appointment', {\n  title: 'Book',\n  description: 'Book a slot.',\n  inputSchema: { patient_id: z.string() },\n}, handler);\n";
        let (_, at) = locate(
            &one("server.mts", ts),
            "schedule_appointment",
            "Book a slot.",
            "Say \"hi\"",
        )
        .unwrap();
        assert_eq!(at.line, 7);
        assert_eq!(at.replacement, r#"  description: "Say \"hi\"","#);
        assert_eq!(value_of(&at.replacement, Lang::Js), "Say \"hi\"");
        // Two equal literals and no name to tell them apart: said, with where.
        let e = locate(&one("server.mts", ts), "gone", "Book a slot.", "x").unwrap_err();
        assert!(e.contains("server.mts:2, server.mts:7"), "{e}");
    }

    #[test]
    fn a_description_built_by_concatenation_is_said_with_its_lines() {
        let py = "@mcp.tool(\n    description=\"Book a slot \"\n    \"for a patient.\",\n)\ndef schedule_appointment(): ...\n";
        let e = locate(
            &one("app/server.py", py),
            "schedule_appointment",
            "Book a slot for a patient.",
            "x",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "the description is built from 2 literals at app/server.py:2–3; no one-literal suggestion"
        );
        let js = "const d = 'Book a slot ' +\n  // why\n  \"for a \" + `patient.`;\n";
        let e = locate(&one("s.js", js), "t", "Book a slot for a patient.", "x").unwrap_err();
        assert!(e.contains("built from 3 literals at s.js:1–3"), "{e}");
        // Not adjacent: built in code.
        let js = "const d = 'Book a slot ' + who + 'for a patient.';\n";
        let e = locate(&one("s.js", js), "t", "Book a slot for a patient.", "x").unwrap_err();
        assert!(e.contains("(built in code)"), "{e}");
    }

    #[test]
    fn an_f_string_or_a_template_with_a_field_is_said_to_be_one() {
        let py = "CLINIC = 'Main St.'\n@mcp.tool(description=f\"Book a slot at {CLINIC}, today.\")\ndef schedule_appointment(): ...\n";
        let e = locate(
            &one("s.py", py),
            "schedule_appointment",
            "Book a slot at Main St., today.",
            "x",
        )
        .unwrap_err();
        assert!(
            e.contains("an f-string with a `{…}` field at s.py:2"),
            "{e}"
        );
        let ts = "server.tool('schedule_appointment', `Book a slot at ${clinic.name()}, today.`, {}, h);\n";
        let e = locate(
            &one("s.ts", ts),
            "schedule_appointment",
            "Book a slot at Main St., today.",
            "x",
        )
        .unwrap_err();
        assert!(
            e.contains("a template literal with `${…}` at s.ts:1"),
            "{e}"
        );
        // Doubled braces are text, and a template without `${` is a single literal.
        let py = "@mcp.tool(description=f'Use {{id}}.')\n";
        let (_, at) = locate(&one("s.py", py), "t", "Use {id}.", "Use the id.").unwrap();
        assert_eq!(at.replacement, "@mcp.tool(description=\"Use the id.\")");
        let ts = "const d = `Book\na slot.`;\n";
        let (_, at) = locate(&one("s.ts", ts), "t", "Book\na slot.", "Book.").unwrap();
        assert_eq!((at.start_line, at.line), (Some(1), 2));
        assert_eq!(at.replacement, "const d = \"Book.\";");
    }

    #[test]
    fn escapes_decode_to_the_value_compared() {
        let py = "d = 'It\\'s a \\x41\\u00e9\\U0001F600 slot.\\nNext \\\n line.'\nr = r'C:\\new'\n";
        let lits = scan(py, Lang::Python);
        assert_eq!(
            lits[0].value.as_deref(),
            Some("It's a Aé\u{1F600} slot.\nNext  line.")
        );
        assert_eq!(lits[1].value.as_deref(), Some("C:\\new"));
        let js = "d = \"It\\'s \\x41\\u00e9\\u{1F600}\\n\\\nend\"; e = 'a\\\\b'\n";
        let lits = scan(js, Lang::Js);
        assert_eq!(lits[0].value.as_deref(), Some("It's Aé\u{1F600}\nend"));
        assert_eq!(lits[1].value.as_deref(), Some("a\\b"));
        // Found by its decoded value, and a new text with escapes decodes back to itself.
        let new = "It's \"new\":\n\té \u{1F600} \\ end";
        for (path, text, lang) in [("s.py", py, Lang::Python), ("s.js", js, Lang::Js)] {
            let old = scan(text, lang)[0].value.clone().unwrap();
            let (_, at) = locate(&one(path, text), "t", &old, new).unwrap();
            let back = scan(&at.replacement, lang);
            assert_eq!(back[0].value.as_deref(), Some(new), "{}", at.replacement);
            // The continued literal spans two lines; the suggestion replaces both.
            assert_eq!((at.start_line, at.line), (Some(1), 2));
        }
        // A bytes literal is no description, and a `#` inside a string is no comment.
        let lits = scan("b'x' '# not a comment' # 'a comment'\n", Lang::Python);
        let values: Vec<Option<&str>> = lits.iter().map(|l| l.value.as_deref()).collect();
        assert_eq!(values, [None, Some("# not a comment")]);
    }

    #[test]
    fn hostile_new_text_is_escaped_to_the_same_value_in_both_languages() {
        let new = "Book.\u{202e}evil ``` @here <!-- driftgate:x --> \u{e0041} \u{200b}";
        for (path, text, lang) in [
            (
                "s.py",
                "@mcp.tool(description='Book a slot.')\n",
                Lang::Python,
            ),
            (
                "s.py",
                "def t():\n    \"\"\"\n    Book a slot.\n    \"\"\"\n",
                Lang::Python,
            ),
            (
                "s.ts",
                "server.tool('t', \"Book a slot.\", {}, h);\n",
                Lang::Js,
            ),
        ] {
            let (_, at) = locate(&one(path, text), "t", "Book a slot.", new).unwrap();
            let line = &at.replacement;
            assert!(!crate::text::unicode::has_hidden(line), "{line}");
            assert!(!line.contains("<!--") && !line.contains("-->"), "{line}");
            assert_eq!(value_of(line, lang), new, "{line}");
            // The astral tag character in each language's own escape, never a surrogate pair.
            match lang {
                Lang::Python => assert!(line.contains("\\U000E0041"), "{line}"),
                Lang::Js => assert!(line.contains("\\u{E0041}"), "{line}"),
            }
            assert!(!line.contains("\\udb40"), "{line}");
        }
        // A line whose other parts hide something is not suggested on.
        let bad = "server.tool('t', \"Book a slot.\") // \u{200b}\n";
        let e = locate(&one("s.js", bad), "t", "Book a slot.", "x").unwrap_err();
        assert!(e.contains("hidden characters or comment delimiters"), "{e}");
    }

    #[test]
    fn only_source_files_are_read_and_a_description_in_code_is_said() {
        assert_eq!(Lang::of("a/b.tsx"), Some(Lang::Js));
        assert_eq!(Lang::of("a.b/c"), None);
        assert_eq!(Lang::of("x.json"), None);
        let files = vec![(
            "tools.json".to_string(),
            "{\"description\": \"Book a slot.\"}".to_string(),
        )];
        let e = locate(&files, "t", "Book a slot.", "x").unwrap_err();
        assert_eq!(
            e,
            "no string literal in the repository's source holds the description (built in code)"
        );
    }
}
