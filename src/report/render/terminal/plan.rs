//! `check --plan`'s table for the terminal: the requests each side would send, what caches
//! answer, the tokens and the cost. (JSON is the plan's serde form.)

use std::fmt::Write;

use crate::replay::plan::Plan;

pub fn render(p: &Plan) -> String {
    let mut f = String::new();
    let _ = writeln!(
        f,
        "driftgate {} --plan: nothing was sent. {} {} · {} case(s) × {} repeat(s){}",
        if p.rewrites.is_some() { "fix" } else { "check" },
        p.router,
        p.model,
        p.cases,
        p.repeats,
        p.shard
            .as_ref()
            .map(|s| format!(" · shard {s}"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        f,
        "{:<6} {:>9} {:>9} {:>9} {:>9} {:>14} {:>16}",
        "side", "requests", "cached", "reused", "to send", "input tokens", "of them prefix"
    );
    for (side, s) in [("base", &p.base), ("head", &p.head)] {
        let _ = writeln!(
            f,
            "{side:<6} {:>9} {:>9} {:>9} {:>9} {:>14} {:>16}",
            s.requests, s.cached, s.reused, s.to_send, s.input_tokens, s.prefix_cached_tokens
        );
    }
    let _ = writeln!(f, "tokens: {}", p.tokens_counted_with);
    if !p.router.is_proxy() {
        let _ = writeln!(
            f,
            "of them prefix: tool blocks the provider's prompt cache can answer (a rotation's requests after its first; at most), priced at {}",
            match p.price_cached_input_per_mtok {
                Some(x) => format!("${x}/M (--price-cached-input)"),
                None => "the input price (no --price-cached-input)".into(),
            }
        );
    }
    if let Some([b, h]) = p.lint_llm_to_send {
        let _ = writeln!(
            f,
            "--lint-llm: {b} grading request(s) to send at base, {h} at head (not in the cost below)"
        );
    }
    if let Some(r) = &p.rewrites {
        let _ = writeln!(
            f,
            "rewrites: at most {} request(s) more ({} changed tool(s) the suite expects × {} rewrite(s) × {} request(s), and head with the offered ones once), {} input token(s){}; which tools fail is known once the check has answered, the cache makes a re-run free",
            r.requests_at_most,
            r.tools_at_most,
            r.rewrites_per_tool_at_most,
            r.requests_per_rewrite,
            r.input_tokens_at_most,
            r.input_cost_usd_at_most
                .map(|c| format!(", at most ${c:.4} input"))
                .unwrap_or_default()
        );
        if r.drafting_requests_at_most > 0 {
            let _ = writeln!(
                f,
                "--llm: at most {} drafting request(s) (first attempts; not in the cost above)",
                r.drafting_requests_at_most
            );
        }
    }
    if p.targeted {
        let _ = writeln!(
            f,
            "--replay targeted: head sends at most {} (the cases a change can reach are known once base has answered)",
            p.head.to_send
        );
    }
    let _ = match (p.input_cost_usd, p.output_cost_usd_at_most) {
        (Some(i), Some(o)) => writeln!(
            f,
            "cost: ${i:.4} input, at most ${o:.4} output ({} token(s) per answer at most){}",
            p.max_tokens,
            p.batch_discount
                .map(|d| format!(", with the batch API's {:.0}% discount", d * 100.0))
                .unwrap_or_default()
        ),
        _ => writeln!(
            f,
            "cost: not estimated (no prices: --price-input and --price-output, or [router] price_input_per_mtok and price_output_per_mtok)"
        ),
    };
    f
}
