//! A run member stored compact: its element holds only its rule id and its
//! comment (with the comment's place among the rule's matches), and the
//! rule is rebuilt from the run's shape (in the run rule's userdata), the
//! element's key and, for a verdict map, its verdict.
//!
//! Why: a member's canonical text is mostly its run's shape again. Element
//! userdata is what a set dump carries per member, and the kernel answers a
//! dump in ~32 KiB replies, each restarting its walk from the set's first
//! element; three times smaller elements are three times fewer replies and
//! a third of the walking. Rebuilding is also cheaper than parsing the text
//! on a read.
//!
//! Contract: a member is written compact only when [`compact`] says so,
//! i.e. when [`member`] rebuilds exactly the rule (`==`), so a read gives
//! back what was written whatever the rule; any other member keeps its text.

use super::{verdict_of, KeyKind};
use iptables::ext::matches::comment::Comment;
use iptables::ext::Match;
use iptables::{Rule, Target};
use nft::Verdict;
use ruleset::Family;

/// The longest comment a compact element holds: the kernel's 256 bytes of
/// userdata less the id (10), the member mark (3), the comment's header (2)
/// and its terminating NUL.
pub const MAX_COMMENT: usize = 240;

/// The rule of a compact member of run (`kind`, `map`, `shape`): the
/// element's `key`, its `verdict` (map runs), and its comment at match
/// index `at`. `None` when the parts do not make a rule (not a compact
/// kind, a key of the wrong length, a map element without a verdict).
/// O(matches).
pub fn member(
    kind: KeyKind,
    map: bool,
    shape: &Rule,
    key: &[u8],
    verdict: Option<&Verdict>,
    comment: Option<(u8, &str)>,
    family: Family,
) -> Option<Rule> {
    let mut r = kind.join(shape, key, family)?;
    if map {
        r.target = match verdict? {
            Verdict::Accept => Target::Accept,
            Verdict::Drop => Target::Drop,
            Verdict::Return => Target::Return,
            Verdict::Jump(c) => Target::Jump(c.as_str().into()),
            Verdict::Goto(c) => Target::Goto(c.as_str().into()),
            _ => return None,
        };
    }
    if let Some((at, text)) = comment {
        let at = at as usize;
        if at > r.matches.len() {
            return None;
        }
        r.matches.insert(
            at,
            Match::Comment(Comment {
                text: text.to_string(),
            }),
        );
    }
    Some(r)
}

/// Whether member `r` of run (`kind`, `map`, `shape`) can be stored
/// compact: `Some(comment)` (its place and text, if it has one) when
/// [`member`] gives `r` back from its key, verdict and that comment.
/// O(matches); builds the rule once.
pub fn compact<'r>(
    kind: KeyKind,
    map: bool,
    shape: &Rule,
    r: &'r Rule,
    family: Family,
) -> Option<Option<(u8, &'r str)>> {
    let mut comment = None;
    for (i, m) in r.matches.iter().enumerate() {
        if let Match::Comment(c) = m {
            if comment.is_some() || c.text.len() > MAX_COMMENT || c.text.contains('\0') {
                return None;
            }
            comment = Some((u8::try_from(i).ok()?, c.text.as_str()));
        }
    }
    if kind.is_interval() || kind == KeyKind::Numgen {
        return None;
    }
    let key = kind.key(r, family)?;
    let verdict = if map {
        Some(verdict_of(&r.target)?)
    } else {
        None
    };
    let back = member(kind, map, shape, &key, verdict.as_ref(), comment, family)?;
    (back == *r).then_some(comment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables::parse::{parse, ParseOpts};
    use ruleset::TableKind;

    fn rule(line: &str, family: Family) -> Rule {
        let words = iptables::parse::restore::words(line).expect(line);
        let argv: Vec<&str> = words.iter().map(|w| w.as_ref()).collect();
        let o = ParseOpts {
            family,
            restore: true,
            table: Some(TableKind::Filter),
            prog: "t",
        };
        parse(&argv, o).expect(line).rules.remove(0)
    }

    /// Each member is split as a run does and rebuilt from its shape, key,
    /// verdict and comment; `compact` is `None` exactly where the rebuilt
    /// rule would differ (or the kind has no compact form).
    #[test]
    fn members_rebuild_from_shape_key_and_comment() {
        use Family::{Ipv4, Ipv6};
        // (rule, family, kind, map, compact)
        let cases: &[(&str, Family, KeyKind, bool, bool)] = &[
            ("-A X -s 10.0.0.1/32 -j ACCEPT", Ipv4, KeyKind::Src, false, true),
            ("-A X -s 10.0.0.1/32 -j ACCEPT", Ipv4, KeyKind::Src, true, true),
            ("-A X -d 2001:db8::1/128 -j DROP", Ipv6, KeyKind::Dst, true, true),
            (
                "-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment \"default/kubernetes:https cluster IP\" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y",
                Ipv4,
                KeyKind::DstDport,
                true,
                true,
            ),
            (
                "-A X -m comment --comment first -s 10.0.0.2/32 -p udp -m udp --dport 53 -j RETURN",
                Ipv4,
                KeyKind::SrcDport,
                true,
                true,
            ),
            ("-A X -s 10.0.0.1/32 -d 10.0.0.2/32 -g Y", Ipv4, KeyKind::SrcDst, true, true),
            ("-A X -i eth0 -p tcp -m tcp --syn -j ACCEPT", Ipv4, KeyKind::Iif, false, true),
            ("-A X -p tcp -m tcp --dport 22 -j LOG --log-prefix ssh", Ipv4, KeyKind::Dport, false, true),
            // Two comments: only one fits the compact form.
            (
                "-A X -s 10.0.0.1/32 -m comment --comment a -m comment --comment b -j ACCEPT",
                Ipv4,
                KeyKind::Src,
                true,
                false,
            ),
            // A map member's target must be a verdict.
            ("-A X -s 10.0.0.1/32 -j LOG", Ipv4, KeyKind::Src, true, false),
            // Interval kinds keep their text.
            ("-A X -s 10.0.0.0/8 -j ACCEPT", Ipv4, KeyKind::SrcNet, false, false),
        ];
        for &(line, family, kind, map, want) in cases {
            let r = rule(line, family);
            let (key, mut shape) = kind.split(&r, family).expect(line);
            if map {
                shape.target = Target::None;
            }
            let got = compact(kind, map, &shape, &r, family);
            assert_eq!(got.is_some(), want, "{line}");
            if let Some(comment) = got {
                let v = if map { verdict_of(&r.target) } else { None };
                let back = member(kind, map, &shape, &key, v.as_ref(), comment, family);
                assert_eq!(back.as_ref(), Some(&r), "{line}");
            }
        }
    }

    /// Parts that do not make a member are refused, never guessed.
    #[test]
    fn broken_parts_make_no_member() {
        let r = rule(
            "-A X -d 10.96.0.1/32 -p tcp -m tcp --dport 443 -j Y",
            Family::Ipv4,
        );
        let (key, mut shape) = KeyKind::DstDport.split(&r, Family::Ipv4).unwrap();
        shape.target = Target::None;
        let j = Verdict::Jump("Y".into());
        let m = |key: &[u8], v: Option<&Verdict>, c| {
            member(KeyKind::DstDport, true, &shape, key, v, c, Family::Ipv4)
        };
        assert_eq!(m(&key, Some(&j), None).as_ref(), Some(&r));
        assert_eq!(m(&key[..6], Some(&j), None), None, "short key");
        assert_eq!(m(&key, None, None), None, "no verdict");
        assert_eq!(
            m(&key, Some(&j), Some((9, "c"))),
            None,
            "comment beyond the matches"
        );
        assert_eq!(
            member(
                KeyKind::DstNet,
                false,
                &shape,
                &key[..4],
                None,
                None,
                Family::Ipv4
            ),
            None,
            "interval kinds have no compact form"
        );
    }
}
