//! A small, fast, non-cryptographic hasher for the table's indexes (and,
//! re-exported as `ruleset::hash`, for the compiler's and engine's
//! per-rule maps).
//!
//! It is the Fx hash (rustc's): one rotate, xor and multiply per 8 bytes. The
//! keys hashed here are rule bodies, chain ids and rule ids chosen by the
//! local administrator, so HashDoS resistance is not needed; speed is (every
//! rule add/delete hashes its body once).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::RuleId;

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8-byte chunk")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    /// The state rotated so that its best-mixed (high) bits come low:
    /// hashbrown picks buckets by the low bits, and the low bits of a
    /// product depend only on the low bits of the input — keys that share
    /// their first bytes (addresses of one /16) fell into a few buckets.
    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxMap<K, V> = HashMap<K, V, FxBuild>;
pub type FxSet<K> = HashSet<K, FxBuild>;

/// A `RuleId` stored as two `u32` halves: alignment 4 makes an id-index entry
/// `(IdKey, u32)` 12 bytes instead of 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdKey([u32; 2]);

impl IdKey {
    pub(crate) fn new(id: RuleId) -> Self {
        IdKey([id.0 as u32, (id.0 >> 32) as u32])
    }
}

impl Hash for IdKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(u64::from(self.0[0]) | (u64::from(self.0[1]) << 32));
    }
}

/// Spec-index key of a body in a chain: the high half of its Fx hash (the
/// better-mixed half). Equal keys are resolved by comparing chain and body,
/// so truncation to 32 bits costs only rare extra comparisons.
pub(crate) fn spec_key<R: Hash>(chain: u32, body: &R) -> u32 {
    let mut h = FxHasher::default();
    h.write_u32(chain);
    body.hash(&mut h);
    (h.hash >> 32) as u32
}
