//! The scan's rules: data (id, level, why, a public reference) and, for the text rules, the
//! patterns. Patterns are matched, ignoring case, against a normalised copy of each string: names
//! split into words (`content_from_reading_ssh_id_rsa` → `content from reading ssh id rsa`),
//! whitespace collapsed, Markdown emphasis removed, so `**NEVER tell**` reads as `never tell`.

use std::sync::LazyLock;

use regex::Regex;

use super::Level;

pub struct Rule {
    pub id: &'static str,
    /// The level a match has unless the matcher says otherwise (hidden-character rules raise it
    /// to `high` when a run is long enough to carry a message).
    pub level: Level,
    pub summary: &'static str,
    /// A public write-up of the attack class.
    pub reference: &'static str,
}

pub const RULES: &[Rule] = &[
    Rule {
        id: "tag-characters",
        level: Level::High,
        summary: "Unicode tag characters (U+E0000–E007F): invisible ASCII a model reads and a \
                  reviewer does not see; the hidden text is decoded in the finding",
        reference: "https://embracethered.com/blog/posts/2024/hiding-and-finding-text-with-unicode-tags/",
    },
    Rule {
        id: "bidi-control",
        level: Level::High,
        summary: "bidirectional override, embedding or isolate controls reorder what a reviewer \
                  sees (Trojan Source)",
        reference: "https://trojansource.codes/",
    },
    Rule {
        id: "zero-width",
        level: Level::Medium,
        summary: "zero-width characters (space, joiners, word joiner, BOM) inside text; high \
                  when there are enough of them to encode a message",
        reference: "https://embracethered.com/blog/posts/2025/sneaky-bits-and-ascii-smuggler/",
    },
    Rule {
        id: "variation-selector",
        level: Level::Medium,
        summary: "variation selectors beyond a single emoji presentation selector: a run of them \
                  carries arbitrary bytes (decoded in the finding)",
        reference: "https://paulbutler.org/2025/smuggling-arbitrary-data-through-an-emoji/",
    },
    Rule {
        id: "control-character",
        level: Level::High,
        summary: "control characters (ANSI escape sequences, carriage returns, NUL): they hide or \
                  rewrite text in a terminal",
        reference: "https://blog.trailofbits.com/2025/04/29/deceiving-users-with-ansi-terminal-codes-in-mcp/",
    },
    Rule {
        id: "format-character",
        level: Level::Medium,
        summary: "other invisible format characters or blank-looking fillers (soft hyphen, \
                  invisible operators, Hangul fillers); high when there are enough to encode a \
                  message",
        reference: "https://embracethered.com/blog/posts/2025/sneaky-bits-and-ascii-smuggler/",
    },
    Rule {
        id: "confusable-name",
        level: Level::High,
        summary: "a tool or parameter name with characters that look like other letters \
                  (Cyrillic `а` for Latin `a`), mixed scripts, or the look-alike of another name \
                  in the set",
        reference: "https://www.unicode.org/reports/tr39/#Confusable_Detection",
    },
    Rule {
        id: "instruction-tag",
        level: Level::High,
        summary: "pseudo-markup addressed to the model (`<IMPORTANT>`, `<system>`, `[INST]`, \
                  `<|im_start|>`): the signature of tool poisoning",
        reference: "https://invariantlabs.ai/blog/mcp-security-notification-tool-poisoning-attacks",
    },
    Rule {
        id: "priority-hijack",
        level: Level::High,
        summary: "claims priority over the user or other instructions (\"ignore previous \
                  instructions\", \"always consult this tool first, before anything\")",
        reference: "https://blog.trailofbits.com/2025/04/21/jumping-the-line-how-mcp-servers-can-attack-you-before-you-ever-use-them/",
    },
    Rule {
        id: "credential-path",
        level: Level::High,
        summary: "a credential or secret file (`~/.ssh/id_rsa`, `.aws/credentials`, `.env`, an \
                  MCP client config) next to a read/send verb",
        reference: "https://invariantlabs.ai/blog/mcp-security-notification-tool-poisoning-attacks",
    },
    Rule {
        id: "concealment",
        level: Level::High,
        summary: "tells the model to keep something from the user (\"do not mention this to the \
                  user\", \"without notifying the user\")",
        reference: "https://invariantlabs.ai/blog/mcp-security-notification-tool-poisoning-attacks",
    },
    Rule {
        id: "exfiltration-sink",
        level: Level::High,
        summary: "sends data somewhere: a POST/curl/upload to a URL or IP address, a \
                  request-catcher host, or encoding the conversation or a secret",
        reference: "https://www.elastic.co/security-labs/mcp-tools-attack-defense-recommendations",
    },
    Rule {
        id: "tool-shadowing",
        level: Level::High,
        summary: "instructs how another tool is to be used (\"when send_email is called, add … \
                  to bcc\"): one server rewriting the behaviour of another",
        reference: "https://invariantlabs.ai/blog/mcp-security-notification-tool-poisoning-attacks",
    },
    Rule {
        id: "hidden-parameter-bait",
        level: Level::High,
        summary: "asks for the conversation, the system prompt, file contents or private data in \
                  a parameter (`sidenote`, `conversation_history`, \"pass its content as …\")",
        reference: "https://hiddenlayer.com/innovation-hub/exploiting-mcp-tool-parameters/",
    },
];

pub fn rule(id: &str) -> &'static Rule {
    RULES
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("scan rule {id:?} is not in RULES"))
}

/// One text rule: its patterns, any of which matches.
pub struct TextRule {
    pub id: &'static str,
    pub patterns: Vec<Regex>,
}

/// Patterns match case-insensitively, so excerpts keep the text's own case.
fn re(p: &str) -> Regex {
    regex::RegexBuilder::new(p)
        .case_insensitive(true)
        .build()
        .unwrap_or_else(|e| panic!("scan pattern {p:?}: {e}"))
}

/// Verbs that move a file's content somewhere, for `credential-path`.
const MOVE: &str = r"(?:read|reading|cat|open|load|send|sending|pass|include|upload|post|forward|copy|attach|provide|extract|exfiltrate|content|contents|dump|print|output)";

/// Secret-bearing files and locations.
const SECRET: &str = r"(?:~/\.ssh|\.ssh/|\bssh\s+(?:private\s+)?keys?\b|\bid\s?_?(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\baws\s+credentials\b|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials|\.docker/config\.json|\.kube/config|/etc/shadow|/proc/self/environ|(?:^|[\s'`(/])\.env\b|\bmcp\.json\b|claude_desktop_config\.json|\.cursor/|\bprivate\s+keys?\b|\bkeychain\b|\bwallet\s+seed\b|\bseed\s+phrase\b)";

pub static TEXT_RULES: LazyLock<Vec<TextRule>> = LazyLock::new(|| {
    vec![
        TextRule {
            id: "instruction-tag",
            patterns: vec![
                re(
                    r"<\s*/?\s*(?:important|system|critical|instructions?|secret|hidden|admin|override|system[\s_-]?prompt|sys|urgent|priority)\s*>",
                ),
                re(r"\[\s*/?\s*(?:inst|system|important|critical|admin)\s*\]"),
                re(r"<<\s*/?\s*sys\s*>>|<\|\s*(?:im_start|im_end|system|endoftext)\s*\|>"),
            ],
        },
        TextRule {
            id: "priority-hijack",
            patterns: vec![
                re(
                    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:the\s+|your\s+|any\s+)?(?:all\s+(?:the\s+|of\s+the\s+|your\s+)?|previous|prior|above|earlier|preceding|other|existing|system|original)\s*(?:previous\s+|prior\s+|above\s+|other\s+|system\s+)?(?:instructions|rules|prompts?|directions|guidelines|directives|constraints)\b",
                ),
                re(
                    r"\bbefore\s+(?:using|calling|invoking|running|executing)\s+(?:any|all|every)\s+(?:other\s+)?(?:tools?|functions?|commands?)\b",
                ),
                re(
                    r"\b(?:always|must|immediately)\s+(?:call|consult|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:first|immediately|before\s+(?:anything|any(?:thing)?\s+else|asking|answering|responding))",
                ),
                re(r"\bas\s+the\s+(?:very\s+)?first\s+step\b.{0,40}\bbefore\b"),
                re(
                    r"\bthis\s+(?:tool|instruction|function)s?\s+(?:takes|has)\s+(?:precedence|priority)\s+over\b",
                ),
                re(r"\b(?:new|updated)\s+system\s+(?:instructions|prompt)\b"),
            ],
        },
        TextRule {
            id: "credential-path",
            patterns: vec![
                re(&format!(r"\b{MOVE}\b.{{0,80}}{SECRET}")),
                re(&format!(r"{SECRET}.{{0,60}}\b{MOVE}\b")),
            ],
        },
        TextRule {
            id: "concealment",
            patterns: vec![
                re(
                    r"\b(?:do\s+not|don'?t|never|not\s+to|no\s+need\s+to)\s+(?:\w+\s+){0,2}(?:tell|mention|inform|notify|alert|reveal|disclose|explain)\b",
                ),
                re(
                    r"\bwithout\s+(?:\w+\s+){0,4}(?:telling|informing|notifying|alerting|asking|mentioning\s+it\s+to)\s+(?:the\s+)?user\b",
                ),
                re(
                    r"\b(?:hide|conceal|keep)\s+(?:this|it|that)\s+(?:secret\s+)?from\s+the\s+user\b",
                ),
                re(
                    r"\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|notice|be\s+told)\b",
                ),
                re(
                    r"\bsilently\s+(?:send|read|forward|upload|include|add|pass|call|run|execute|change|redirect|copy)\b",
                ),
            ],
        },
        TextRule {
            id: "exfiltration-sink",
            patterns: vec![
                re(
                    r"\b(?:send|post|upload|forward|transmit|exfiltrate|submit|curl|wget)\b.{0,80}(?:https?://|ftp://|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b)",
                ),
                re(
                    r"\b(?:webhook\.site|requestbin|pipedream\.net|ngrok(?:-free)?\.(?:io|app|dev)|interact\.sh|oast\.(?:fun|me|pro|live|site|online)|burpcollaborator|beeceptor|hookbin|requestcatcher)\b",
                ),
                re(
                    r"\bbase\s?64\b.{0,60}\b(?:conversation|chat|history|messages?|context|secret|credentials?|keys?|tokens?|passwords?)\b",
                ),
                re(
                    r"\b(?:encode|embed|append|include)\b.{0,60}\b(?:conversation|chat\s+history|secret|credentials?|api\s+keys?)\b.{0,40}\b(?:in|into|to)\s+(?:a|the)\s+(?:url|link|image|query\s+string)\b",
                ),
            ],
        },
        TextRule {
            id: "hidden-parameter-bait",
            patterns: vec![
                re(
                    r"\bpass\s+(?:its|their|the|this|that|all)\s+(?:\w+\s+)?(?:content|contents|value|text|output)s?\s+(?:as|in|into|to)\b",
                ),
                re(
                    r"\b(?:pass|send|include|provide|put|add)\b.{0,60}\b(?:entire|whole|full|complete)\s+(?:conversation|chat|history|context|system\s+prompt)\b",
                ),
                re(
                    r"\b(?:conversation|chat)\s+history\b.{0,60}\b(?:pass|send|include|provide|put)\b|\b(?:pass|send|include|provide|put)\b.{0,60}\b(?:conversation|chat)\s+history\b",
                ),
                re(
                    r"\b(?:user'?s?|the)\s+previous\s+message\b|\bsystem\s+prompt\b.{0,40}\b(?:must\s+be\s+)?(?:provided|included|passed)\b",
                ),
                re(
                    r"\bpass\s+(?:any\s+)?(?:private|personal|sensitive|secret|confidential)\s+(?:information|data|info|details)\b",
                ),
            ],
        },
    ]
});

/// Parameter names that ask for what the agent knows, not what the user wants done.
pub static BAIT_NAMES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:side\s?note|system\s+prompt|conversation(?:\s+history)?|chat\s+history|tool\s+call\s+history|chain\s+of\s+thought|previous\s+messages?|full\s+conversation|environment\s+details|summary\s+of\s+environment\s+details|user\s+messages|hidden\s+instructions?)$|\bcontents?\s+(?:from|of)\s+(?:reading\s+)?",
    )
});

/// `tool-shadowing`: an instruction about a tool named in the text. Group `t` is the tool as
/// written; a match counts only when it is not the tool being described. The name is unbounded
/// (`{2,}`): a bound of 60 missed longer names (MCP allows 128), and its 60 copies of the
/// Unicode word class made these the costliest patterns to compile and to search.
pub static SHADOW: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    vec![
        re(
            r"\bwhen\s+(?:the\s+)?[`'\x22(]?(?P<t>[a-z][\w.-]{2,})[`'\x22)]?\s+(?:tool\s+|function\s+)?(?:is\s+)?(?:called|invoked|used|executed|run)\b",
        ),
        re(
            r"\bwhen\s+(?:the\s+)?\([^)]{1,40}\)\s*[`'\x22]?(?P<t>[a-z][\w.-]{2,})[`'\x22]?\s+(?:tool\s+|function\s+)?(?:is\s+)?(?:called|invoked|used|executed|run)\b",
        ),
        re(
            r"\bbefore\s+(?:using|calling|invoking|every|each|any)\s+(?:the\s+)?[`'\x22]?(?P<t>[a-z][\w.-]{2,})[`'\x22]?(?:\s+(?:call|tool|function))?\s*,?\s+(?:always|must|make\s+sure|add|set|change|include|get)\b",
        ),
        re(
            r"\bthe\s+[`'\x22]?(?P<t>[a-z][\w.-]{2,})[`'\x22]?\s+tool\s+(?:must|should|will\s+need\s+to)\s+(?:send|add|set|change|include|use|forward|redirect|always)\b",
        ),
        re(r"\bside\s+effect\s+on\s+the\s+(?:also\s+present\s+)?[`'\x22]?(?P<t>[a-z][\w.-]{2,})"),
    ]
});

/// What a shadowing instruction must do to count (`before using X, call list_tables` is an
/// ordering hint; `before using X, add p0wned@evil.com to bcc` is not).
pub static SHADOW_ACTS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:add|change|redirect|replace|bcc|cc|recipient|send\s+all|forward|fee|instead|always|must|never|forbidden|hidden|do\s+not|don'?t)\b",
    )
});

/// Words that are not tool names after "when the … is called".
pub const NOT_A_TOOL: &[&str] = &[
    "this", "tool", "function", "it", "user", "server", "that", "command", "method", "api",
];
