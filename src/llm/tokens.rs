//! Input tokens of a request, counted before it is sent (`check --plan`): with the model
//! family's own tokenizer where one is public (OpenAI's BPEs via `tiktoken-rs`, chosen from the
//! model name the way OpenAI's `tiktoken` does), otherwise estimated at 4 characters a token and
//! said to be an estimate. Providers add a few tokens of framing per message and render tool
//! definitions their own way, so even a real tokenizer's count is an approximation of the bill.

/// How a count was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// A model family's tokenizer, by name ("o200k_base").
    Tokenizer(&'static str),
    /// No public tokenizer for this model: characters ÷ 4.
    Estimate,
}

impl Counter {
    /// The counter for `model` (the name the provider is sent).
    pub fn for_model(model: &str) -> Counter {
        use tiktoken_rs::tokenizer::{Tokenizer as T, get_tokenizer};
        // A routed name such as "openai/gpt-4o-mini" (OpenRouter, LiteLLM) names the family last.
        let name = model.rsplit('/').next().unwrap_or(model);
        match get_tokenizer(name) {
            Some(T::O200kBase | T::O200kHarmony) => Counter::Tokenizer("o200k_base"),
            Some(T::Cl100kBase) => Counter::Tokenizer("cl100k_base"),
            Some(T::P50kBase | T::P50kEdit) => Counter::Tokenizer("p50k_base"),
            Some(T::R50kBase | T::Gpt2) => Counter::Tokenizer("r50k_base"),
            None => Counter::Estimate,
        }
    }

    /// Tokens of `text`.
    pub fn count(&self, text: &str) -> u64 {
        let bpe = match self {
            Counter::Tokenizer("o200k_base") => tiktoken_rs::o200k_base_singleton(),
            Counter::Tokenizer("cl100k_base") => tiktoken_rs::cl100k_base_singleton(),
            Counter::Tokenizer("p50k_base") => tiktoken_rs::p50k_base_singleton(),
            Counter::Tokenizer(_) => tiktoken_rs::r50k_base_singleton(),
            Counter::Estimate => return (text.chars().count() as u64).div_ceil(4),
        };
        bpe.encode_ordinary(text).len() as u64
    }

    /// "o200k_base" or "estimated at 4 characters a token".
    pub fn describe(&self) -> String {
        match self {
            Counter::Tokenizer(name) => (*name).to_string(),
            Counter::Estimate => {
                "estimated at 4 characters a token (no public tokenizer for this model)".into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_family_tokenizer_or_says_it_estimates() {
        assert_eq!(
            Counter::for_model("gpt-4o-mini"),
            Counter::Tokenizer("o200k_base")
        );
        assert_eq!(
            Counter::for_model("openai/gpt-4.1"),
            Counter::Tokenizer("o200k_base")
        );
        assert_eq!(
            Counter::for_model("gpt-4"),
            Counter::Tokenizer("cl100k_base")
        );
        assert_eq!(Counter::for_model("claude-sonnet-4-5"), Counter::Estimate);
        assert_eq!(
            Counter::for_model("qwen2.5-0.5b-instruct"),
            Counter::Estimate
        );
    }

    #[test]
    fn counts_tokens() {
        // Known o200k/cl100k counts of a short English sentence.
        let o200k = Counter::Tokenizer("o200k_base");
        assert_eq!(o200k.count("hello world"), 2);
        assert_eq!(Counter::Tokenizer("cl100k_base").count("hello world"), 2);
        assert!(o200k.count("Reschedule an existing appointment to a new time.") < 15);
        assert_eq!(Counter::Estimate.count("abcdefgh"), 2);
        assert_eq!(Counter::Estimate.count("abcdefghi"), 3);
    }
}
