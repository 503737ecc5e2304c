//! Process-wide settings for the in-process embedder, made once at the top of `main` (and by
//! examples/embed_bench.rs, so the benchmark measures what the CLI does), before any thread starts;
//! and the guards that keep a pull request's server command away from the process (`guard`).

/// Call first thing in `main`, while the process has one thread.
pub fn tune_process() {
    #[cfg(target_os = "linux")]
    guard();
    pin_thread_count();
    shorten_pool_spin();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tune_glibc_malloc();
}

/// candle asks `candle_core::utils::get_num_threads` on every matmul; unless `RAYON_NUM_THREADS`
/// is set, that counts physical cores by reading /proc/cpuinfo, each time (1,633 opens in one
/// check of 3,000 texts). Setting the variable it reads first to the count it would find keeps
/// its choice and makes the lookup an environment read. rayon's global pool, which candle's gemm
/// runs on, is sized from the same variable, so nothing runs more threads than cores.
fn pin_thread_count() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = candle_core::utils::get_num_threads();
        // SAFETY: no other thread exists yet (see tune_process), so nothing reads the
        // environment concurrently.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", n.to_string()) };
    }
}

/// The server command a check starts is the pull request's code, running as our user.
/// - Not dumpable: its `/proc/<our pid>/environ` and `/proc/<our pid>/mem` become unreadable to
///   it (they would hand it `GITHUB_TOKEN` and every key we were given), and it cannot ptrace us.
/// - A child subreaper: whatever it leaves running after detaching (a double fork, `setsid`) is
///   reparented to us instead of init, so `source::live` finds and kills it before we exit.
#[cfg(target_os = "linux")]
fn guard() {
    // SAFETY: prctl with integer arguments only; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Between element-wise ops, candle's own worker threads spin 25,000 times (a PAUSE each) before
/// parking, while the next matmul runs on rayon's threads: on two cores the spinning worker takes
/// the core a gemm thread needs. 1,000 spins keep the wake-up fast between back-to-back ops. This
/// was measured together with the encoder's first step, not apart (docs/embedder.md § "Own
/// encoder").
fn shorten_pool_spin() {
    if std::env::var_os("CANDLE_BARRIER_POOL_SPIN_LIMIT").is_none() {
        // SAFETY: as in pin_thread_count, no other thread exists yet.
        unsafe { std::env::set_var("CANDLE_BARRIER_POOL_SPIN_LIMIT", "1000") };
    }
}

/// glibc serves an allocation above its mmap threshold (128 KiB, raised on the fly up to 32 MiB)
/// with a fresh mapping that the kernel faults in and zeroes page by page, and unmaps it on free;
/// freed heap above the trim threshold goes back to the kernel the same way. The embedder's
/// activations are megabytes each, made and freed hundreds of times per pass, so a check spent a
/// tenth of its time in page faults (300 texts: 0.93 M minor faults, 2.1 s system time). Fixing
/// the threshold at glibc's maximum (the embedder's batches keep every activation below it, see
/// src/embed/minilm.rs) and keeping freed memory lets the heap be reused instead: 57 k faults,
/// 0.17 s. Other allocators and libcs have nothing to set here.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_glibc_malloc() {
    // SAFETY: mallopt only changes allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
