//! Software prefetch: asks the processor to bring a cache line in ahead of its use. A
//! hint only: it reads nothing the program sees, cannot fault, and changes no result.

/// Line size the hints step by (x86-64 and most ARM cores).
const LINE: usize = 64;

/// Prefetches the line holding `p` into every cache level. A no-op but on x86-64.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is not a memory access in the language's sense: any address is
    // allowed, nothing is read into the program, and it cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetches the lines of `*r` from byte `from` up to byte `to` (offsets in `T`).
#[inline(always)]
pub fn prefetch_span<T>(r: *const T, from: usize, to: usize) {
    let base = r.cast::<u8>();
    let mut off = from;
    while off < to {
        prefetch(base.wrapping_add(off));
        off += LINE;
    }
}
