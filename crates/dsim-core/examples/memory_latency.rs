//! The latency of a dependent load from a buffer of each size, on this machine: what an
//! event pays for each line it reads that is not in cache (docs/performance.md, "Scale").
//! Each load reads the address of the next from a random cycle over the buffer's cache
//! lines, so no load can start before the one before it ends and no prefetcher can guess.
//!
//!     cargo run --release -p dsim-core --example memory_latency
//!     GLIBC_TUNABLES=glibc.malloc.hugetlb=1 cargo run --release -p dsim-core --example memory_latency
//!
//! The second puts the buffers on 2 MB pages where the kernel's transparent huge pages are
//! in `madvise` mode: the difference is the cost of the page walks.

use std::hint::black_box;
use std::time::Instant;

use rand::SeedableRng;
use rand::seq::SliceRandom;

const LINE: usize = 64;
const LOADS: usize = 20_000_000;

/// Nanoseconds per load around a random cycle over the lines of a buffer of `bytes`.
fn ns_per_load(bytes: usize) -> f64 {
    let lines = bytes / LINE;
    let mut order: Vec<usize> = (0..lines).collect();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
    // Word i * 8 (the first of line i) holds the index of the next line's first word.
    let mut next = vec![0usize; lines * LINE / size_of::<usize>()];
    let words = LINE / size_of::<usize>();
    for (k, &line) in order.iter().enumerate() {
        next[line * words] = order[(k + 1) % lines] * words;
    }
    let mut at = order[0] * words;
    for _ in 0..lines {
        at = next[at];
    }
    let start = Instant::now();
    for _ in 0..LOADS {
        at = next[at];
    }
    let ns = start.elapsed().as_nanos() as f64 / LOADS as f64;
    black_box(at);
    ns
}

fn main() {
    println!("{:>10}  {:>8}", "buffer", "ns/load");
    for kb in [16, 256, 768, 2 << 10, 8 << 10, 24 << 10, 64 << 10, 256 << 10] {
        println!("{:>7} KB  {:>8.1}", kb, ns_per_load(kb << 10));
    }
}
