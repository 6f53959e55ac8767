//! The CLI's first step on x86-64: a binary built for x86-64-v3 (the project's
//! default, `.cargo/config.toml`) that starts on a CPU without those instructions says
//! so and exits 2, instead of dying on an illegal instruction somewhere later.
//!
//! The check runs before anything else and is plain integer code: with AVX enabled the
//! compiler may emit AVX instructions in any function of this crate, so it must decide
//! and report without calling into the rest of the program.

#![allow(unsafe_code)] // cpuid, xgetbv and the raw write and exit of the refusal.

use std::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};

/// Leaf 1, ECX: FMA, the operating system saves the extended registers (OSXSAVE), AVX.
const LEAF1_ECX: u32 = (1 << 12) | (1 << 27) | (1 << 28);
/// Leaf 7, EBX: BMI1, AVX2, BMI2.
const LEAF7_EBX: u32 = (1 << 3) | (1 << 5) | (1 << 8);
/// XCR0: the operating system saves the SSE and AVX registers on a context switch.
const XCR0_SSE_AVX: u64 = 0b110;

/// What a CPU without them is told, on stderr.
const REFUSAL: &[u8] = b"glue-recon: this build needs an x86-64-v3 CPU (AVX2, BMI2, FMA: \
Intel Haswell, AMD Excavator or later) and this CPU or operating system lacks them.\n\
Build for it without them: RUSTFLAGS= cargo build --release --bin glue-recon\n";

/// Whether this CPU and operating system run AVX2, BMI1, BMI2 and FMA code: the
/// x86-64-v3 features that CPUs sold without AVX lack (the rest of the level comes
/// with them on every CPU that has these).
fn runs_x86_64_v3() -> bool {
    // SAFETY: every x86-64 CPU has cpuid; leaf 7 is read only when leaf 0 lists it,
    // and xgetbv only when leaf 1 says the operating system enabled it (OSXSAVE).
    unsafe {
        if __cpuid(0).eax < 7 || __cpuid(1).ecx & LEAF1_ECX != LEAF1_ECX {
            return false;
        }
        _xgetbv(0) & XCR0_SSE_AVX == XCR0_SSE_AVX
            && __cpuid_count(7, 0).ebx & LEAF7_EBX == LEAF7_EBX
    }
}

/// Exit 2 with [`REFUSAL`] on stderr unless [`runs_x86_64_v3`].
pub fn refuse_unless_x86_64_v3() {
    if !runs_x86_64_v3() {
        // SAFETY: writes a static buffer to file descriptor 2, then ends the process.
        unsafe {
            libc::write(2, REFUSAL.as_ptr().cast(), REFUSAL.len());
            libc::_exit(2);
        }
    }
}
