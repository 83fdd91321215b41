//! The chain registry: a user chain that holds no rule and that no rule
//! jumps to needs no kernel chain. It lives as one element of its table's
//! registry set instead, keyed by its name, until a rule goes into it or
//! names it (then the planner creates the kernel chain and drops the
//! element, in one batch).
//!
//! Why: the kernel's commit walks every chain of the namespace for any
//! transaction (`nf_tables_commit` "step 2"), so 100k empty chains cost
//! every later command milliseconds (BENCHMARKS.md §8.16); as set
//! elements they cost nothing per commit, and creating them is cheaper.
//!
//! Element: key = the chain's name, zero-padded to [`KEY_LEN`] bytes; no
//! data, no userdata, no counter. The set has nftables' interface-name
//! type (a NUL-padded string), so `nft list set` prints the names.

/// The registry set of each of our tables.
pub const SET: &str = "__nfk_chains";
/// Key length in bytes: iptables' chain names are at most 28 bytes
/// (`XT_EXTENSION_MAXNAMELEN` - 1); the kernel wants a multiple of 4.
pub const KEY_LEN: u32 = 32;
/// nftables' "ifname" data type (`TYPE_IFNAME`): NUL-padded text, which
/// `nft` prints as a string; its own string type it prints as `""`.
pub const KEY_TYPE: u32 = 41;

/// The key of chain `name`; `None` for a name too long to register (such a
/// chain is always a kernel chain).
pub fn key(name: &str) -> Option<Vec<u8>> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() >= KEY_LEN as usize || b.contains(&0) {
        return None;
    }
    let mut k = vec![0u8; KEY_LEN as usize];
    k[..b.len()].copy_from_slice(b);
    Some(k)
}

/// The chain name of a registry key; `None` when it is not one
/// [`key`] makes (written by someone else).
pub fn name(key: &[u8]) -> Option<String> {
    if key.len() != KEY_LEN as usize {
        return None;
    }
    let end = key.iter().position(|b| *b == 0)?;
    if end == 0 || key[end..].iter().any(|b| *b != 0) {
        return None;
    }
    String::from_utf8(key[..end].to_vec()).ok()
}

/// The smallest capacity a registry set is made with.
pub const MIN_CAPACITY: u32 = 4096;

/// The capacity of a registry set made by a batch that registers `adds`
/// chains: [`crate::layout::set_capacity`], at least [`MIN_CAPACITY`].
/// Without a size, restoring 1k chains took 0.6 ms more, 10k chains 6 ms
/// more (half the kernel's cost of a registry element). A batch beyond it
/// makes its chains kernel chains (`keeper::plan::registry`). Buckets:
/// 64 KiB at the minimum, 4 MiB for 100k chains.
pub fn capacity(adds: usize) -> u32 {
    crate::layout::set_capacity(adds).max(MIN_CAPACITY)
}

/// The registry set of table `table`, with batch-local set id `id` and
/// room for `capacity` chains (see [`capacity`]).
pub fn set(family: nft::Family, table: &str, id: u32, capacity: u32) -> nft::Set {
    let mut s = nft::Set::new(family, table, SET);
    s.key_type = Some(KEY_TYPE);
    s.key_len = Some(KEY_LEN);
    s.id = Some(id);
    s.size = Some(capacity);
    // nft's set userdata: key byte order = host (its TLV type 0, a u32
    // 1), without which `nft list` prints the names reversed, as empty
    // strings.
    let mut ud = vec![0u8, 4];
    ud.extend_from_slice(&1u32.to_ne_bytes());
    s.userdata = Some(ud);
    s
}

/// Elements of `names` (each registrable) in table `table`'s registry.
pub fn elems<'a>(
    family: nft::Family,
    table: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> nft::SetElems {
    let elems = names
        .into_iter()
        .filter_map(key)
        .map(|k| nft::SetElem::key(&k))
        .collect();
    nft::SetElems::new(family, table, SET, elems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_leaves_room_and_has_a_floor() {
        for (adds, want) in [
            (0, MIN_CAPACITY),
            (1, MIN_CAPACITY),
            (2730, MIN_CAPACITY),
            (2732, 8192),
            (10_000, 16_384),
            (100_000, 262_144),
            (usize::MAX, 1 << 31),
        ] {
            assert_eq!(capacity(adds), want, "{adds}");
        }
    }

    #[test]
    fn keys_round_trip_and_refuse_what_is_not_a_name() {
        for n in ["X", "KUBE-SVC-ABCDEFGHIJKLMNOP", &"c".repeat(31)] {
            let k = key(n).unwrap();
            assert_eq!(k.len(), 32);
            assert_eq!(name(&k).as_deref(), Some(n));
        }
        for n in ["", &"c".repeat(32), "a\0b"] {
            assert_eq!(key(n), None, "{n:?}");
        }
        let mut bad = key("AB").unwrap();
        bad[5] = b'x';
        for k in [&bad[..], &[0u8; 32][..], b"AB", &[b'A'; 32][..]] {
            assert_eq!(name(k), None, "{k:?}");
        }
    }
}
