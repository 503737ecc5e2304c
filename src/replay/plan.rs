//! `check --plan`: what a check would send, before anything is sent — requests per side after
//! the disk cache and the in-run reuse of identical questions, the input tokens of those left to
//! send, and what they cost at the user's prices.

use serde::Serialize;

use crate::route::RouteRequest;

/// One side's requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SidePlan {
    /// Every request of the side (cases × repeats).
    pub requests: u64,
    /// Answered by the disk cache.
    pub cached: u64,
    /// Identical to an earlier request of this run (head questions equal to base's).
    pub reused: u64,
    /// Left to send.
    pub to_send: u64,
    /// Input tokens of the requests left to send.
    pub input_tokens: u64,
    /// Of `input_tokens`, the tool blocks a provider's prompt cache can answer: every request of
    /// a rotation after the first repeats its block (at most: requests in flight together may
    /// all miss). Blocks under [`MIN_CACHED_PREFIX`] are not cached.
    pub prefix_cached_tokens: u64,
    /// Of `input_tokens`, the first request of each rotation's block, which Anthropic writes to
    /// its cache at a premium.
    pub prefix_written_tokens: u64,
}

/// The shortest prompt prefix the providers cache (OpenAI; Anthropic's Sonnet and Opus models).
pub const MIN_CACHED_PREFIX: u64 = 1024;

/// The plan of a check.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub router: crate::route::Kind,
    pub model: String,
    pub cases: usize,
    pub repeats: u32,
    pub base: SidePlan,
    pub head: SidePlan,
    /// How tokens were counted ("o200k_base", or an estimate said as such).
    pub tokens_counted_with: String,
    /// `--replay targeted`: head sends at most `head.to_send`; which cases is decided by base's
    /// answers, so the plan cannot know it yet.
    pub targeted: bool,
    /// `--shard i/n` the plan covers, if any.
    pub shard: Option<String>,
    /// Input cost of the requests left to send, at `price_per_mtok`.
    pub input_cost_usd: Option<f64>,
    /// Output cost if every answer used all of `max_tokens`: an upper bound.
    pub output_cost_usd_at_most: Option<f64>,
    pub price_per_mtok: Option<[f64; 2]>,
    /// USD per million cached input tokens (`None`: the input price).
    pub price_cached_input_per_mtok: Option<f64>,
    pub max_tokens: u32,
    /// `--batch`: the fraction taken off the live price in both costs above (0.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_discount: Option<f64>,
    /// `--lint-llm`: grading requests (first attempts) left to send at base and head after the
    /// cache; not in the costs above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lint_llm_to_send: Option<[usize; 2]>,
    /// `fix` and `check --suggest`: what verifying the rewrites may send after the check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewrites: Option<RewritePlan>,
}

/// The most that verifying rewrites can send: which tools fail is known only once the check has
/// answered, so this bounds it by every target there can be (`job::fix::plan`). Each rewrite is asked the
/// whole suite once (its held-out questions are then the cache's); head with the offered
/// rewrites, once more.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewritePlan {
    /// Targets at most: every tool the suite expects, every changed tool, every reworded
    /// parameter description of an expected tool.
    pub tools_at_most: usize,
    pub rewrites_per_tool_at_most: usize,
    /// The suite's cases × repeats.
    pub requests_per_rewrite: u64,
    pub requests_at_most: u64,
    /// At head's mean input tokens per request.
    pub input_tokens_at_most: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_cost_usd_at_most: Option<f64>,
    /// `fix --llm N`: the model's drafting requests, re-asks included, not in the cost above.
    pub drafting_requests_at_most: u64,
}

impl RewritePlan {
    /// The bound for `tools` failing tools, `per_tool` rewrites each, on a plan of the check.
    pub fn bound(check: &Plan, tools: usize, per_tool: usize) -> RewritePlan {
        let per = check.head.requests;
        let requests = (tools * per_tool) as u64 * per + if tools > 0 { per } else { 0 };
        let mean = [&check.head, &check.base]
            .iter()
            .find(|s| s.to_send > 0)
            .map_or(0, |s| s.input_tokens / s.to_send);
        let tokens = requests * mean;
        let pay = 1.0 - check.batch_discount.unwrap_or(0.0);
        RewritePlan {
            tools_at_most: tools,
            rewrites_per_tool_at_most: per_tool,
            requests_per_rewrite: per,
            requests_at_most: requests,
            input_tokens_at_most: tokens,
            input_cost_usd_at_most: check
                .price_per_mtok
                .map(|[i, _]| tokens as f64 * i * pay / 1e6),
            drafting_requests_at_most: 0,
        }
    }
}

impl Plan {
    /// The cost lines, from the token counts and the prices.
    pub fn priced(mut self) -> Plan {
        let [b, h] = [&self.base, &self.head];
        let input = crate::llm::Usage {
            input_tokens: b.input_tokens + h.input_tokens,
            output_tokens: 0,
            cached_input_tokens: b.prefix_cached_tokens + h.prefix_cached_tokens,
            cache_write_tokens: b.prefix_written_tokens + h.prefix_written_tokens,
        };
        let sent = b.to_send + h.to_send;
        let pay = 1.0 - self.batch_discount.unwrap_or(0.0);
        let cached = self.price_cached_input_per_mtok;
        self.input_cost_usd = self.price_per_mtok.map(|[i, _]| {
            input.cost_usd([i, 0.0], cached, self.router.cache_write_premium()) * pay
        });
        self.output_cost_usd_at_most = self
            .price_per_mtok
            .map(|[_, o]| (sent * u64::from(self.max_tokens)) as f64 * o * pay / 1e6);
        self
    }
}

/// The text a request's input tokens are counted over: system prompt, messages and the offered
/// tools' definitions as JSON (how the providers receive them, give or take their framing).
pub fn request_text(req: &RouteRequest) -> String {
    let mut t = req.system.clone();
    for m in &req.messages {
        t.push('\n');
        t.push_str(&m.content);
    }
    for tool in &req.tools {
        t.push('\n');
        t.push_str(&tool.to_value().to_string());
    }
    t
}

/// The part of a request every case of its rotation repeats: the system prompt and the shared
/// tools, counted as [`request_text`] counts them.
pub fn prefix_text(req: &RouteRequest) -> String {
    let mut t = req.system.clone();
    for tool in &req.tools[..req.shared_tools.min(req.tools.len())] {
        t.push('\n');
        t.push_str(&tool.to_value().to_string());
    }
    t
}
