//! Retrying, and deciding what is worth retrying.
//!
//! `with_retry` repeats a request while it fails with `Failure::Transient`, sleeping with
//! exponential backoff and full jitter, and never sooner than the server's `Retry-After`. It is
//! the one retry loop: routers, drafting, embeddings and the GitHub API all go through it.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::Rng;
use reqwest::header::HeaderMap;

use super::Failure;

/// The longest `Retry-After` we wait for by default. A server asking for more (a daily quota, an
/// outage) is not retried at all: waiting minutes per case would stall CI, and retrying sooner
/// than the server allows only burns the attempts.
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included; 1 disables retrying.
    pub max_attempts: u32,
    /// Backoff ceiling before the first retry; doubles with every further failure.
    pub base_delay: Duration,
    /// Cap on the backoff; a server's `Retry-After` may exceed it (up to `max_retry_after`).
    pub max_delay: Duration,
    /// The longest wait a server may ask for; asked for more, the loop gives up at once.
    pub max_retry_after: Duration,
    /// Full jitter: sleep a uniform random time in [0, backoff], so parallel clients that failed
    /// together do not retry together. Off gives the deterministic ceiling (tests).
    pub jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: RETRY_AFTER_CAP,
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The backoff ceiling after `failures` consecutive failures (1-based):
    /// `min(max_delay, base_delay * 2^(failures-1))`.
    pub fn backoff_ceiling(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1));
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(Duration::MAX)
            .min(self.max_delay)
    }

    /// How long to sleep after `failures` failures, given the server's `Retry-After`;
    /// `None` when the server asks for longer than `max_retry_after` (give up now).
    pub fn delay(&self, failures: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry_after.is_some_and(|ra| ra > self.max_retry_after) {
            return None;
        }
        let ceiling = self.backoff_ceiling(failures);
        let backoff = if self.jitter && !ceiling.is_zero() {
            rand::rng().random_range(Duration::ZERO..=ceiling)
        } else {
            ceiling
        };
        Some(backoff.max(retry_after.unwrap_or_default()))
    }
}

/// A failure the retry loop can read.
pub trait Retryable: Sized {
    /// `None`: final, do not retry. `Some(wait)`: worth another attempt, no sooner than `wait`
    /// (the server's `Retry-After`) when it is given.
    fn retry_after(&self) -> Option<Option<Duration>>;
    /// This failure, saying it was not retried because the server asked for `asked`, more than
    /// the `cap` we wait.
    fn waited_too_long(self, asked: Duration, cap: Duration) -> Self;
}

impl Retryable for Failure {
    fn retry_after(&self) -> Option<Option<Duration>> {
        match self {
            Failure::Transient { retry_after, .. } => Some(*retry_after),
            Failure::Fatal(_) => None,
        }
    }

    fn waited_too_long(self, asked: Duration, cap: Duration) -> Self {
        self.map_message(|m| {
            format!(
                "{m} (the server asked to retry after {} s, more than the {} s cap: not retried)",
                asked.as_secs(),
                cap.as_secs()
            )
        })
    }
}

/// A result together with what it took to get it, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Retried<T, E = Failure> {
    pub result: Result<T, E>,
    /// Attempts made, the successful or last failing one included (≥ 1).
    pub attempts: u32,
    /// Total time slept between attempts.
    pub waited: Duration,
}

/// Call `f` until it succeeds, fails for good, or `policy.max_attempts` attempts are made; the
/// last error is returned when they run out.
///
/// Only a retryable `Err` is retried: an `Ok` is the server's answer, whatever it says.
pub async fn with_retry<T, E, F, Fut>(policy: &RetryPolicy, f: F) -> Retried<T, E>
where
    E: Retryable,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    with_retry_notify(policy, f, |_, _| {}).await
}

/// `with_retry`, calling `notify(error, delay)` before each sleep (for "retrying in …" lines).
pub async fn with_retry_notify<T, E, F, Fut, N>(
    policy: &RetryPolicy,
    mut f: F,
    mut notify: N,
) -> Retried<T, E>
where
    E: Retryable,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    N: FnMut(&E, Duration),
{
    let max_attempts = policy.max_attempts.max(1);
    let mut attempts = 0;
    let mut waited = Duration::ZERO;
    loop {
        attempts += 1;
        let result = f().await;
        let retry_after = match &result {
            Err(e) if attempts < max_attempts => match e.retry_after() {
                Some(ra) => ra,
                None => {
                    return Retried {
                        result,
                        attempts,
                        waited,
                    };
                }
            },
            _ => {
                return Retried {
                    result,
                    attempts,
                    waited,
                };
            }
        };
        let Some(delay) = policy.delay(attempts, retry_after) else {
            let asked = retry_after.unwrap_or_default();
            return Retried {
                result: result.map_err(|e| e.waited_too_long(asked, policy.max_retry_after)),
                attempts,
                waited,
            };
        };
        if let Err(e) = &result {
            notify(e, delay);
        }
        tokio::time::sleep(delay).await;
        waited += delay;
    }
}

// ---- Retry-After --------------------------------------------------------------------------------

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` as delay-seconds
/// or an HTTP-date (RFC 9110 §10.2.3). A date in the past means "now".
pub fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(parse_seconds) {
        return Some(ms / 1000);
    }
    retry_after_value(text("retry-after")?, SystemTime::now())
}

/// One `Retry-After` value relative to `now`.
pub fn retry_after_value(value: &str, now: SystemTime) -> Option<Duration> {
    if let Some(d) = parse_seconds(value) {
        return Some(d);
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Non-negative decimal seconds ("120", leniently also "1.5"); rejects NaN, signs, garbage.
fn parse_seconds(value: &str) -> Option<Duration> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let secs: f64 = value.parse().ok()?;
    // Absurd values saturate rather than fail: they are "longer than the cap" either way.
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// IMF-fixdate, the only HTTP-date form senders may generate: `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let mut parts = value.split_ascii_whitespace();
    let weekday = parts.next()?;
    if !weekday.ends_with(',') {
        return None;
    }
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || parts.next().is_some() || hms.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 || year < 1970 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn transient(retry_after: Option<Duration>) -> Failure {
        Failure::Transient {
            message: "busy".into(),
            retry_after,
        }
    }

    fn ok() -> String {
        "hi".into()
    }

    fn fixed(base_ms: u64, max_ms: u64) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(base_ms),
            max_delay: Duration::from_millis(max_ms),
            max_retry_after: RETRY_AFTER_CAP,
            jitter: false,
        }
    }

    #[test]
    fn backoff_doubles_up_to_max_delay() {
        let p = fixed(500, 3_000);
        let ms: Vec<u128> = (1..=5).map(|n| p.backoff_ceiling(n).as_millis()).collect();
        assert_eq!(ms, [500, 1_000, 2_000, 3_000, 3_000]);
        // No overflow for absurd failure counts.
        assert_eq!(p.backoff_ceiling(u32::MAX), Duration::from_secs(3));
    }

    #[test]
    fn jitter_stays_within_zero_and_the_ceiling_and_varies() {
        let p = RetryPolicy {
            jitter: true,
            ..fixed(1_000, 30_000)
        };
        let samples: Vec<Duration> = (0..200).map(|_| p.delay(3, None).unwrap()).collect();
        assert!(samples.iter().all(|d| *d <= Duration::from_secs(4)));
        let first = samples[0];
        assert!(samples.iter().any(|d| *d != first), "jitter never varied");
    }

    #[test]
    fn retry_after_is_a_floor_even_above_max_delay_up_to_the_cap() {
        let p = RetryPolicy {
            jitter: true,
            ..fixed(100, 1_000)
        };
        for _ in 0..50 {
            assert!(p.delay(1, Some(Duration::from_secs(2))).unwrap() >= Duration::from_secs(2));
        }
        assert_eq!(p.delay(1, Some(RETRY_AFTER_CAP)), Some(RETRY_AFTER_CAP));
        let short = RetryPolicy {
            max_retry_after: Duration::from_secs(5),
            ..p.clone()
        };
        assert_eq!(short.delay(1, Some(Duration::from_secs(6))), None);
        assert_eq!(
            p.delay(1, Some(RETRY_AFTER_CAP + Duration::from_secs(1))),
            None
        );
        // A short Retry-After does not shorten the backoff.
        let p = fixed(800, 1_000);
        assert_eq!(
            p.delay(1, Some(Duration::from_millis(10))),
            Some(Duration::from_millis(800))
        );
    }

    #[tokio::test]
    async fn transient_errors_are_retried_until_success() {
        let calls = Cell::new(0);
        let r = with_retry(&fixed(5, 30_000), || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n < 3 {
                    Err(transient(None))
                } else {
                    Ok(ok())
                }
            }
        })
        .await;
        assert_eq!(r.result, Ok(ok()));
        assert_eq!(r.attempts, 3);
        assert_eq!(r.waited, Duration::from_millis(5 + 10));
    }

    #[tokio::test]
    async fn exhaustion_returns_the_last_error_and_counts_attempts() {
        let calls = Cell::new(0u32);
        let r: Retried<String> = with_retry(&fixed(10, 100), || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                Err(Failure::Transient {
                    message: format!("fail {n}"),
                    retry_after: None,
                })
            }
        })
        .await;
        assert_eq!(r.attempts, 4);
        assert_eq!(calls.get(), 4);
        assert_eq!(
            r.result,
            Err(Failure::Transient {
                message: "fail 4".into(),
                retry_after: None
            })
        );
        assert_eq!(r.waited, Duration::from_millis(10 + 20 + 40));
    }

    #[tokio::test]
    async fn fatal_errors_and_answers_are_not_retried() {
        let calls = Cell::new(0);
        let r: Retried<String> = with_retry(&RetryPolicy::default(), || {
            calls.set(calls.get() + 1);
            async { Err(Failure::Fatal("401".into())) }
        })
        .await;
        assert_eq!((r.attempts, calls.get()), (1, 1));
        assert_eq!(r.waited, Duration::ZERO);

        // An answer, however useless, is the server's answer: not retried.
        let malformed = "not what was asked".to_string();
        let r: Retried<String> =
            with_retry(&RetryPolicy::default(), || async { Ok(malformed.clone()) }).await;
        assert_eq!(r.attempts, 1);
    }

    #[tokio::test]
    async fn retry_after_beyond_the_cap_gives_up_and_says_why() {
        let calls = Cell::new(0);
        let r: Retried<String> = with_retry(&RetryPolicy::default(), || {
            calls.set(calls.get() + 1);
            async { Err(transient(Some(Duration::from_secs(3_600)))) }
        })
        .await;
        assert_eq!(calls.get(), 1);
        let Err(Failure::Transient { message, .. }) = r.result else {
            panic!("expected a transient error");
        };
        assert!(message.contains("3600 s"), "{message}");
    }

    #[tokio::test]
    async fn max_attempts_one_and_zero_mean_a_single_attempt() {
        for max_attempts in [0, 1] {
            let calls = Cell::new(0);
            let p = RetryPolicy {
                max_attempts,
                ..RetryPolicy::default()
            };
            let r: Retried<String> = with_retry(&p, || {
                calls.set(calls.get() + 1);
                async { Err(transient(None)) }
            })
            .await;
            assert_eq!((r.attempts, calls.get()), (1, 1));
        }
    }

    #[test]
    fn retry_after_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        let v = |s: &str| retry_after_value(s, now);
        assert_eq!(v("1"), Some(Duration::from_secs(1)));
        assert_eq!(v("0"), Some(Duration::ZERO));
        assert_eq!(v("1.5"), Some(Duration::from_millis(1_500)));
        assert_eq!(v("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        assert_eq!(
            v("Sun, 06 Nov 1994 08:50:07 GMT"),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            v("Mon, 07 Nov 1994 08:49:37 GMT"),
            Some(Duration::from_secs(86_400))
        );
        // In the past: retry now.
        assert_eq!(v("Sat, 05 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        for bad in [
            "",
            "-1",
            "soon",
            "1e3",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "06 Nov 1994",
        ] {
            assert_eq!(v(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn http_date_matches_known_epoch_seconds() {
        let secs = |s: &str| {
            parse_http_date(s)
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
        };
        assert_eq!(secs("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
        assert_eq!(secs("Tue, 29 Feb 2000 12:00:00 GMT"), 951_825_600);
        assert_eq!(secs("Sun, 29 Nov 2026 13:52:39 GMT"), 1_795_960_359);
    }

    #[test]
    fn retry_after_headers_prefer_milliseconds() {
        let mut h = HeaderMap::new();
        assert_eq!(parse_retry_after(&h), None);
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(250)));
    }
}
