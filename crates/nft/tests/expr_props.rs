//! Property tests of the expression codec over generated values: every
//! `Expr` variant with random fields emits and parses back to itself
//! (alone, as a list, inside a rule); parsing truncated, mutated or random
//! bytes never panics, and whatever parses re-emits to something that
//! parses back the same.
//!
//! The generator is a small deterministic one (xorshift, fixed seeds), so
//! a failure reproduces exactly; [`variant`] is an exhaustive match, so a
//! new `Expr` variant does not compile here until the generator makes it.

use nft::expr::{
    self, Byteorder, CmpOp, Dup, Exthdr, ExthdrSet, ExthdrStrip, Fib, Objref, Rt, Shift,
};
use nft::netlink::{Attrs, Msgs, Writer};
use nft::{Batch, Data, Expr, Family, Object, Rule, RuleCompat, Verdict};

/// xorshift64*: deterministic pseudo-random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn u8(&mut self) -> u8 {
        self.next() as u8
    }
    fn u16(&mut self) -> u16 {
        self.next() as u16
    }
    /// Small values (registers, keys) as often as any.
    fn u32(&mut self) -> u32 {
        match self.below(3) {
            0 => self.below(24) as u32,
            _ => self.next() as u32,
        }
    }
    fn u64(&mut self) -> u64 {
        self.next()
    }
    fn bool(&mut self) -> bool {
        self.next() & 1 == 1
    }
    fn opt<T>(&mut self, f: impl FnOnce(&mut Rng) -> T) -> Option<T> {
        self.bool().then(|| f(self))
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.u8()).collect()
    }
    /// Any text without NUL (strings are NUL-terminated on the wire).
    fn string(&mut self, max: usize) -> String {
        const CHARS: &[char] = &[
            'a',
            'Z',
            '0',
            '-',
            '_',
            ' ',
            '.',
            'é',
            '→',
            '\u{1f525}',
            '\t',
        ];
        let n = self.below(max + 1);
        (0..n).map(|_| CHARS[self.below(CHARS.len())]).collect()
    }
    fn data(&mut self) -> Data {
        if self.bool() {
            return Data::Value(self.bytes(64));
        }
        Data::Verdict(match self.below(8) {
            0 => Verdict::Drop,
            1 => Verdict::Accept,
            2 => Verdict::Continue,
            3 => Verdict::Break,
            4 => Verdict::Return,
            5 => Verdict::Jump(self.string(20)),
            6 => Verdict::Goto(self.string(20)),
            // Codes without a named variant (e.g. NF_QUEUE with a number).
            _ => Verdict::Other(loop {
                let c = self.next() as i32;
                if !(-5..=1).contains(&c) {
                    break c;
                }
            }),
        })
    }
    /// A well-formed run of attributes (what `Expr::Other` data must be to
    /// parse at all), the last one sometimes without its padding (the
    /// parser takes that, so such data must survive emission too).
    fn attrs(&mut self) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = Writer::new(&mut buf);
        let mut end = 0;
        for _ in 0..self.below(4) {
            let ty = 1 + self.below(30) as u16;
            let payload = self.bytes(12);
            end = w.buf.len() + 4 + payload.len();
            w.put(ty, &payload);
        }
        if self.bool() {
            buf.truncate(end);
        }
        buf
    }
}

/// Number of `Expr` variants; [`arbitrary`] makes variant `i` for each
/// `i < VARIANTS`.
const VARIANTS: usize = 33;

/// The index of `e`'s variant (exhaustive on purpose: see the module doc).
fn variant(e: &Expr) -> usize {
    match e {
        Expr::Immediate { .. } => 0,
        Expr::Payload { .. } => 1,
        Expr::PayloadSet { .. } => 2,
        Expr::Cmp { .. } => 3,
        Expr::Range { .. } => 4,
        Expr::Bitwise { .. } => 5,
        Expr::Meta { .. } => 6,
        Expr::MetaSet { .. } => 7,
        Expr::Ct { .. } => 8,
        Expr::CtSet { .. } => 9,
        Expr::Lookup { .. } => 10,
        Expr::Counter { .. } => 11,
        Expr::Log { .. } => 12,
        Expr::Reject { .. } => 13,
        Expr::Nat { .. } => 14,
        Expr::Masq { .. } => 15,
        Expr::Redir { .. } => 16,
        Expr::Limit { .. } => 17,
        Expr::Numgen { .. } => 18,
        Expr::Quota { .. } => 19,
        Expr::Notrack => 20,
        Expr::Byteorder(_) => 21,
        Expr::Shift(_) => 22,
        Expr::Exthdr(_) => 23,
        Expr::ExthdrSet(_) => 24,
        Expr::Fib(_) => 25,
        Expr::Rt(_) => 26,
        Expr::Objref(_) => 27,
        Expr::Match { .. } => 28,
        Expr::Target { .. } => 29,
        Expr::Other { .. } => 30,
        Expr::ExthdrStrip(_) => 31,
        Expr::Dup(_) => 32,
    }
}

/// Variant `which` (see [`variant`]) with random fields.
fn arbitrary(r: &mut Rng, which: usize) -> Expr {
    const OPS: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Neq,
        CmpOp::Lt,
        CmpOp::Lte,
        CmpOp::Gt,
        CmpOp::Gte,
    ];
    match which {
        0 => Expr::Immediate {
            dreg: r.u32(),
            data: r.data(),
        },
        1 => Expr::Payload {
            dreg: r.u32(),
            base: r.u32(),
            offset: r.u32(),
            len: r.u32(),
        },
        2 => Expr::PayloadSet {
            sreg: r.u32(),
            base: r.u32(),
            offset: r.u32(),
            len: r.u32(),
            csum_type: r.opt(Rng::u32),
            csum_offset: r.opt(Rng::u32),
            csum_flags: r.opt(Rng::u32),
        },
        3 => Expr::Cmp {
            sreg: r.u32(),
            op: OPS[r.below(OPS.len())],
            data: r.bytes(64),
        },
        4 => Expr::Range {
            sreg: r.u32(),
            neq: r.bool(),
            from: r.bytes(16),
            to: r.bytes(16),
        },
        5 => Expr::Bitwise {
            sreg: r.u32(),
            dreg: r.u32(),
            len: r.u32(),
            mask: r.bytes(16),
            xor: r.bytes(16),
        },
        6 => Expr::Meta {
            key: r.u32(),
            dreg: r.u32(),
        },
        7 => Expr::MetaSet {
            key: r.u32(),
            sreg: r.u32(),
        },
        8 => Expr::Ct {
            key: r.u32(),
            dreg: r.u32(),
            dir: r.opt(Rng::u8),
        },
        9 => Expr::CtSet {
            key: r.u32(),
            sreg: r.u32(),
            dir: r.opt(Rng::u8),
        },
        10 => Expr::Lookup {
            set: r.string(16),
            set_id: r.opt(Rng::u32),
            sreg: r.u32(),
            dreg: r.opt(Rng::u32),
            flags: r.opt(Rng::u32),
        },
        11 => Expr::Counter {
            bytes: r.u64(),
            packets: r.u64(),
        },
        12 => Expr::Log {
            group: r.opt(Rng::u16),
            prefix: r.opt(|r| r.string(30)),
            snaplen: r.opt(Rng::u32),
            qthreshold: r.opt(Rng::u16),
            level: r.opt(Rng::u32),
            flags: r.opt(Rng::u32),
        },
        13 => Expr::Reject {
            ty: r.u32(),
            code: r.opt(Rng::u8),
        },
        14 => Expr::Nat {
            ty: r.u32(),
            family: r.u32(),
            reg_addr_min: r.opt(Rng::u32),
            reg_addr_max: r.opt(Rng::u32),
            reg_proto_min: r.opt(Rng::u32),
            reg_proto_max: r.opt(Rng::u32),
            flags: r.opt(Rng::u32),
        },
        15 => Expr::Masq {
            flags: r.opt(Rng::u32),
            reg_proto_min: r.opt(Rng::u32),
            reg_proto_max: r.opt(Rng::u32),
        },
        16 => Expr::Redir {
            reg_proto_min: r.opt(Rng::u32),
            reg_proto_max: r.opt(Rng::u32),
            flags: r.opt(Rng::u32),
        },
        17 => Expr::Limit {
            rate: r.u64(),
            unit: r.u64(),
            burst: r.u32(),
            ty: r.u32(),
            flags: r.u32(),
        },
        18 => Expr::Numgen {
            dreg: r.u32(),
            modulus: r.u32(),
            ty: r.u32(),
            offset: r.opt(Rng::u32),
        },
        19 => Expr::Quota {
            bytes: r.u64(),
            flags: r.u32(),
            consumed: r.opt(Rng::u64),
        },
        20 => Expr::Notrack,
        21 => Expr::Byteorder(Byteorder {
            sreg: r.u32(),
            dreg: r.u32(),
            op: r.u32(),
            len: r.u32(),
            size: r.u32(),
        }),
        22 => Expr::Shift(Shift {
            sreg: r.u32(),
            dreg: r.u32(),
            len: r.u32(),
            right: r.bool(),
            amount: r.u32(),
        }),
        23 => Expr::Exthdr(Exthdr {
            dreg: r.u32(),
            op: r.u32(),
            ty: r.u8(),
            offset: r.u32(),
            len: r.u32(),
            flags: r.u32(),
        }),
        24 => Expr::ExthdrSet(ExthdrSet {
            sreg: r.u32(),
            op: r.u32(),
            ty: r.u8(),
            offset: r.u32(),
            len: r.u32(),
        }),
        25 => Expr::Fib(Fib {
            dreg: r.u32(),
            result: r.u32(),
            flags: r.u32(),
        }),
        26 => Expr::Rt(Rt {
            dreg: r.u32(),
            key: r.u32(),
        }),
        27 => Expr::Objref(Objref {
            ty: r.u32(),
            name: r.string(16),
        }),
        28 => Expr::Match {
            name: r.string(28),
            rev: r.u32(),
            info: r.bytes(300),
        },
        29 => Expr::Target {
            name: r.string(28),
            rev: r.u32(),
            info: r.bytes(300),
        },
        30 => Expr::Other {
            // A name no kind has.
            name: format!("x-{}", r.string(10)),
            data: r.attrs(),
        },
        31 => Expr::ExthdrStrip(ExthdrStrip {
            op: r.u32(),
            ty: r.u8(),
        }),
        32 => Expr::Dup(Dup {
            sreg_addr: r.u32(),
            sreg_dev: r.opt(Rng::u32),
        }),
        _ => panic!("no variant {which}"),
    }
}

/// `NFTA_EXPR_NAME` + `NFTA_EXPR_DATA` of `e`.
fn body(e: &Expr) -> Vec<u8> {
    let mut buf = Vec::new();
    e.emit_body(&mut Writer::new(&mut buf));
    buf
}

/// `e` as an `NFTA_LIST_ELEM` nest.
fn elem(e: &Expr) -> Vec<u8> {
    let mut buf = Vec::new();
    e.emit(&mut Writer::new(&mut buf));
    buf
}

#[test]
fn the_generator_makes_every_variant() {
    let mut r = Rng(1);
    for i in 0..VARIANTS {
        assert_eq!(variant(&arbitrary(&mut r, i)), i);
    }
}

#[test]
fn every_variant_round_trips() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for n in 0..VARIANTS * 400 {
        let e = arbitrary(&mut r, n % VARIANTS);
        assert_eq!(Expr::parse_body(&body(&e)).unwrap(), e);
        let bytes = elem(&e);
        let a = Attrs::new(&bytes).next().unwrap().unwrap();
        assert_eq!(Expr::parse(&a).unwrap(), e);
    }
}

#[test]
fn lists_and_rules_round_trip() {
    let mut r = Rng(7);
    for _ in 0..500 {
        let exprs: Vec<Expr> = (0..r.below(9))
            .map(|_| {
                let which = r.below(VARIANTS);
                arbitrary(&mut r, which)
            })
            .collect();
        let mut buf = Vec::new();
        expr::emit_list(&mut Writer::new(&mut buf), 4, &exprs);
        let a = Attrs::new(&buf).next().unwrap().unwrap();
        assert_eq!(expr::parse_list(&a).unwrap(), exprs);

        let rule = Rule {
            compat: r.opt(|r| RuleCompat {
                proto: r.u32(),
                flags: r.u32(),
            }),
            ..Rule::new(Family::Ipv4, "t", "c", exprs)
        };
        let mut b = Batch::new(0, None);
        b.add(&rule, 0);
        let bytes = b.finish();
        let m = Msgs::new(bytes).nth(1).unwrap().unwrap();
        assert_eq!(Rule::parse_msg(&m).unwrap(), rule);
    }
}

/// Parses `bytes` as an expression body; if that succeeds, the value must
/// re-emit to bytes that parse back to it (emission is total, and parsing
/// what we emit loses nothing of what was parsed).
fn parse_checked(bytes: &[u8]) {
    if let Ok(e) = Expr::parse_body(bytes) {
        let again = Expr::parse_body(&body(&e));
        assert_eq!(again.as_ref().ok(), Some(&e), "from {bytes:02x?}");
    }
    for a in Attrs::new(bytes).flatten() {
        let _ = expr::parse_list(&a);
        let _ = Expr::parse(&a);
    }
}

#[test]
fn truncated_mutated_and_random_bytes_never_panic() {
    let mut r = Rng(0x1234_5678);
    for n in 0..VARIANTS * 40 {
        let e = arbitrary(&mut r, n % VARIANTS);
        let bytes = body(&e);
        for cut in 0..bytes.len() {
            parse_checked(&bytes[..cut]);
        }
        for _ in 0..50 {
            let mut m = bytes.clone();
            for _ in 0..1 + r.below(4) {
                let i = r.below(m.len());
                m[i] = r.u8();
            }
            parse_checked(&m);
        }
    }
    for _ in 0..20_000 {
        let v = r.bytes(200);
        parse_checked(&v);
    }
}
