//! Transactions: an nfnetlink batch (`NFNL_MSG_BATCH_BEGIN`, messages,
//! `NFNL_MSG_BATCH_END`) that the kernel applies all or nothing.
//!
//! Every message gets the next sequence number and a caller [`Tag`] (for
//! example the restore line it came from); [`Batch::absorb`] maps a kernel
//! reply back to that tag by sequence number. Messages request no ACK: the
//! kernel reports only failures (and echoes, for messages sent with
//! `NLM_F_ECHO`). Only the batch-end message carries `NLM_F_ACK`: kernel 6.18
//! acknowledges it only when the transaction committed, so that ACK is the
//! positive completion marker (see [`crate::socket`] for the measurements).
//!
//! Pure: the batch is a byte buffer; no I/O here.

use crate::netlink::{
    nft_type, Msg, Tb, Writer, NFNL_BATCH_GENID, NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END,
    NFNL_SUBSYS_NFTABLES, NLMSG_ERROR, NLM_F_ACK, NLM_F_APPEND, NLM_F_CREATE, NLM_F_ECHO,
    NLM_F_EXCL, NLM_F_NONREC, NLM_F_REPLACE, NLM_F_REQUEST,
};
use crate::{msg, Error, Object};

/// A caller's label for one message (e.g. an input line number).
pub type Tag = u32;

/// How a new rule is placed (see [`crate::rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// After `rule.position`, or at the end of the chain if `None`.
    Append,
    /// Before `rule.position`, or at the head of the chain if `None`.
    Insert,
    /// Replace the rule with handle `rule.handle`.
    Replace,
}

/// One failed message: its tag (`None` for the batch-begin message, which
/// is where the kernel reports a generation mismatch; a failure of the
/// commit itself, e.g. an anonymous set no rule binds, comes on the first
/// message after it), its sequence number, the negative errno and the
/// extended-ACK text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchError {
    pub tag: Option<Tag>,
    pub seq: u32,
    pub code: i32,
    pub text: Option<String>,
}

/// An echoed object (sent with `NLM_F_ECHO`): tag, `NFT_MSG_*` type and the
/// kernel-assigned handle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Echo {
    pub tag: Tag,
    /// Sequence number of the message echoed (as returned by [`Batch::push`]).
    pub seq: u32,
    pub msg: u16,
    pub handle: Option<u64>,
}

/// What the kernel said about a batch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The batch-end ACK arrived: the transaction committed.
    pub committed: bool,
    pub errors: Vec<BatchError>,
    pub echoes: Vec<Echo>,
}

impl Outcome {
    /// Committed with no error.
    pub fn is_ok(&self) -> bool {
        self.committed && self.errors.is_empty()
    }
}

/// A position in a batch under construction (see [`Batch::mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    bytes: usize,
    msgs: usize,
}

/// A batch under construction. Owns its buffer; sequence numbers are
/// `first_seq` (begin), `first_seq + 1 ..` (messages), then end.
pub struct Batch {
    buf: Vec<u8>,
    first_seq: u32,
    /// Tags of the messages, index = seq - first_seq - 1.
    tags: Vec<Tag>,
    ended: bool,
    /// Some message leaves objects to the kernel's deferred destruction
    /// (see [`Batch::defers_destruction`]).
    frees: bool,
    /// The last message, while [`Batch::add_elems`] may add elements to it.
    open: Option<OpenList>,
}

/// A NEWSETELEM message at the end of the buffer that more elements of
/// the same set, for the same tag, may join.
struct OpenList {
    /// Offsets of the message and of its `ELEMENTS` nest in `buf`.
    msg: usize,
    nest: usize,
    seq: u32,
    tag: Tag,
    family: crate::Family,
    table: String,
    set: String,
}

impl Batch {
    /// Starts a batch whose begin message has sequence `first_seq`. With
    /// `genid`, the kernel refuses the batch (`ERESTART`, reported on the
    /// begin message) unless the ruleset generation is still `genid`.
    /// A `genid` of 0 disables the check in the kernel.
    pub fn new(first_seq: u32, genid: Option<u32>) -> Batch {
        let mut buf = Vec::with_capacity(4096);
        let mut w = Writer::new(&mut buf);
        let m = w.begin_msg(
            NFNL_MSG_BATCH_BEGIN,
            NLM_F_REQUEST,
            first_seq,
            0,
            NFNL_SUBSYS_NFTABLES,
        );
        if let Some(g) = genid {
            w.put_be32(NFNL_BATCH_GENID, g);
        }
        w.end_msg(m);
        Batch {
            buf,
            first_seq,
            tags: Vec::new(),
            ended: false,
            frees: false,
            open: None,
        }
    }

    /// Appends one message of type `msg` (an `NFT_MSG_*`) with extra netlink
    /// `flags` (`NLM_F_REQUEST` is implied), built from `obj`. Returns its
    /// sequence number (the first one, if a long set-element list is split
    /// over several messages, all with the same tag). Panics if called after
    /// [`Batch::finish`].
    pub fn push<O: Object>(&mut self, msg: u16, flags: u16, obj: &O, tag: Tag) -> u32 {
        assert!(!self.ended, "batch already finished");
        self.open = None;
        self.frees |= defers_destruction(msg, flags);
        let first = self.next_seq();
        let mut from = Some(0);
        while let Some(at) = from {
            let seq = self.next_seq();
            let mut w = Writer::new(&mut self.buf);
            let m = w.begin_msg(
                nft_type(msg),
                NLM_F_REQUEST | flags,
                seq,
                obj.family() as u8,
                0,
            );
            from = obj.emit_split(&mut w, at);
            w.end_msg(m);
            self.tags.push(tag);
        }
        first
    }

    /// Creates `obj` if absent (no error if it exists; tables, chains, sets,
    /// elements). For rules use [`Batch::add_rule`].
    pub fn add<O: Object>(&mut self, obj: &O, tag: Tag) -> u32 {
        self.push(O::NEW, NLM_F_CREATE, obj, tag)
    }

    /// As [`Batch::add`] for set elements, joining the previous message
    /// when it was made here for the same set and tag and the elements fit
    /// in its nest: a run of one-member adds (an `ipset restore`) becomes
    /// a few large messages instead of one per member, which the kernel
    /// handles with one table and set lookup each. Returns the sequence
    /// number of the message holding the first element (a refusal of a
    /// joined message names the first write that went into it).
    pub fn add_elems(&mut self, es: &crate::SetElems, tag: Tag) -> u32 {
        assert!(!self.ended, "batch already finished");
        if let Some(o) = &self.open {
            let same = o.tag == tag
                && o.family == es.family
                && o.table == es.table
                && o.set == es.set
                && es.set_id.is_none();
            if same && es.emit_more(&mut Writer::new(&mut self.buf), o.msg, o.nest) {
                return o.seq;
            }
        }
        let seq = self.next_seq();
        let at = self.buf.len();
        let mut w = Writer::new(&mut self.buf);
        let m = w.begin_msg(
            nft_type(msg::NEWSETELEM),
            NLM_F_REQUEST | NLM_F_CREATE,
            seq,
            es.family as u8,
            0,
        );
        let (next, nest) = es.emit_part(&mut w, 0);
        w.end_msg(m);
        self.tags.push(tag);
        self.open = None;
        if next < es.elems.len() {
            // More than one message's worth: the rest as `push` splits it.
            let mut rest =
                crate::SetElems::new(es.family, &es.table, &es.set, es.elems[next..].to_vec());
            rest.set_id = es.set_id;
            self.push(msg::NEWSETELEM, NLM_F_CREATE, &rest, tag);
        } else if let (Some(nest), None) = (nest, es.set_id) {
            self.open = Some(OpenList {
                msg: at,
                nest,
                seq,
                tag,
                family: es.family,
                table: es.table.clone(),
                set: es.set.clone(),
            });
        }
        seq
    }

    /// Creates `obj`, failing with `EEXIST` if it exists.
    pub fn create<O: Object>(&mut self, obj: &O, tag: Tag) -> u32 {
        self.push(O::NEW, NLM_F_CREATE | NLM_F_EXCL, obj, tag)
    }

    /// As [`Batch::create`], and the kernel echoes the object with its
    /// handle (reported in [`Outcome::echoes`]).
    pub fn create_echo<O: Object>(&mut self, obj: &O, tag: Tag) -> u32 {
        self.push(O::NEW, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ECHO, obj, tag)
    }

    /// Deletes `obj` (identified by name or handle; for rules see
    /// [`crate::rule`]: by handle, or a chain flush without handle).
    pub fn delete<O: Object>(&mut self, obj: &O, tag: Tag) -> u32 {
        self.push(O::DEL, 0, obj, tag)
    }

    /// Deletes `obj` only if nothing uses it (`NLM_F_NONREC`): a chain
    /// with rules or references, a table with objects, fail with `EBUSY`
    /// instead of being deleted with their contents.
    pub fn delete_nonrec<O: Object>(&mut self, obj: &O, tag: Tag) -> u32 {
        self.push(O::DEL, NLM_F_NONREC, obj, tag)
    }

    /// Adds a rule placed per `placement`; with `echo` the kernel sends the
    /// rule back with its handle (reported in [`Outcome::echoes`]).
    pub fn add_rule(
        &mut self,
        rule: &crate::Rule,
        placement: Placement,
        echo: bool,
        tag: Tag,
    ) -> u32 {
        let mut flags = match placement {
            Placement::Append => NLM_F_CREATE | NLM_F_APPEND,
            Placement::Insert => NLM_F_CREATE,
            Placement::Replace => NLM_F_REPLACE,
        };
        if echo {
            flags |= NLM_F_ECHO;
        }
        self.push(msg::NEWRULE, flags, rule, tag)
    }

    /// Sets the generation id the kernel must still be at (see
    /// [`Batch::new`]); for resending an unchanged batch after a concurrent
    /// commit elsewhere. No-op for a batch made without a genid.
    pub fn set_genid(&mut self, genid: u32) {
        // Begin message: 16-byte nlmsghdr, 4-byte nfgenmsg, then the
        // NFNL_BATCH_GENID attribute (4-byte header, big-endian u32).
        let at = 16 + 4;
        if self.buf.len() >= at + 8 && self.buf[16 + 4 + 2] == NFNL_BATCH_GENID as u8 {
            self.buf[at + 4..at + 8].copy_from_slice(&genid.to_be_bytes());
        }
    }

    /// A point to [`Batch::truncate`] back to: drops the messages added
    /// after it (a caller's command that failed half-way). O(1).
    pub fn mark(&self) -> Mark {
        Mark {
            bytes: self.buf.len(),
            msgs: self.tags.len(),
        }
    }

    /// Forgets every message added since `mark` (taken from this batch,
    /// before [`Batch::finish`]).
    pub fn truncate(&mut self, mark: Mark) {
        assert!(!self.ended, "batch already finished");
        self.buf.truncate(mark.bytes);
        self.tags.truncate(mark.msgs);
        // Elements that joined a message older than the mark are cut off
        // with the rest: that message ends at the mark again.
        if let Some(o) = self.open.take() {
            if o.msg < mark.bytes {
                let mut w = Writer::new(&mut self.buf);
                w.end_nest(o.nest);
                w.end_msg(o.msg);
            }
        }
    }

    /// Closes the batch (idempotent) and returns its bytes.
    pub fn finish(&mut self) -> &[u8] {
        if !self.ended {
            let seq = self.next_seq();
            let mut w = Writer::new(&mut self.buf);
            let m = w.begin_msg(
                NFNL_MSG_BATCH_END,
                NLM_F_REQUEST | NLM_F_ACK,
                seq,
                0,
                NFNL_SUBSYS_NFTABLES,
            );
            w.end_msg(m);
            self.ended = true;
        }
        &self.buf
    }

    /// The bytes so far (complete only after [`Batch::finish`]).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Number of messages between begin and end.
    pub fn len(&self) -> usize {
        self.tags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    /// Whether committing this batch leaves objects to the kernel's
    /// deferred destruction (freed after an RCU grace period; see
    /// [`crate::linger`]): it deletes something, replaces a rule, or updates
    /// a table, chain or object that may exist. Errs on the side of yes
    /// (a message later truncated away still counts).
    pub fn defers_destruction(&self) -> bool {
        self.frees
    }

    pub fn first_seq(&self) -> u32 {
        self.first_seq
    }

    /// Sequence number of the end message (valid after `finish`), i.e. the
    /// last one this batch uses.
    pub fn last_seq(&self) -> u32 {
        self.first_seq.wrapping_add(self.tags.len() as u32 + 1)
    }

    /// The sequence number the next message pushed gets.
    pub fn next_seq(&self) -> u32 {
        self.first_seq.wrapping_add(self.tags.len() as u32 + 1)
    }

    /// The tag of the message with sequence `seq`; `None` for begin/end and
    /// for sequence numbers outside the batch.
    pub fn tag_of(&self, seq: u32) -> Option<Tag> {
        let i = seq.wrapping_sub(self.first_seq).wrapping_sub(1) as usize;
        self.tags.get(i).copied()
    }

    /// The message with sequence `seq` (between begin and end), read back
    /// from the batch's bytes: to describe a message the kernel refused.
    /// O(messages before it).
    pub fn message(&self, seq: u32) -> Option<Msg<'_>> {
        self.tag_of(seq)?;
        crate::netlink::Msgs::new(&self.buf)
            .filter_map(Result::ok)
            .find(|m| m.seq == seq)
    }

    /// Whether `seq` belongs to this batch (begin..=end).
    pub fn owns(&self, seq: u32) -> bool {
        (seq.wrapping_sub(self.first_seq) as usize) <= self.tags.len() + 1
    }

    /// Folds one received message into `out`: the batch-end ACK, errors
    /// (non-zero `NLMSG_ERROR`) and echoes of this batch's messages. Other
    /// ACKs and messages of other sequence numbers are ignored. Returns whether the
    /// message belonged to this batch.
    pub fn absorb(&self, m: &Msg, out: &mut Outcome) -> Result<bool, Error> {
        if m.ty == NLMSG_ERROR {
            let e = m.error()?;
            if !self.owns(e.seq) {
                return Ok(false);
            }
            if e.code == 0 {
                out.committed |= e.seq == self.last_seq() && self.ended;
            } else {
                out.errors.push(BatchError {
                    tag: self.tag_of(e.seq),
                    seq: e.seq,
                    code: e.code,
                    text: e.text.map(str::to_string),
                });
            }
            return Ok(true);
        }
        if !self.owns(m.seq) || m.ty >> 8 != NFNL_SUBSYS_NFTABLES {
            return Ok(false);
        }
        if let Some(tag) = self.tag_of(m.seq) {
            let kind = m.ty & 0xff;
            let handle_attr = match kind {
                msg::NEWTABLE => 4,
                msg::NEWCHAIN => 2,
                msg::NEWRULE => 3,
                msg::NEWSET => 16,
                _ => 0,
            };
            let handle = if handle_attr != 0 {
                Tb::parse(m.nf()?.attrs)?.opt_be64(handle_attr)?
            } else {
                None
            };
            out.echoes.push(Echo {
                tag,
                seq: m.seq,
                msg: kind,
                handle,
            });
        }
        Ok(true)
    }
}

/// Whether a message of type `msg` with `flags` may leave an object for the
/// kernel to free after a grace period: every delete; a rule replacement
/// (the old rule); and a create that may update an existing table, chain
/// or stateful object (the kernel keeps the update's transaction until
/// then). Pure creations (`NLM_F_EXCL`), rule appends and inserts, new sets
/// and set elements free nothing.
fn defers_destruction(msg: u16, flags: u16) -> bool {
    use crate::events::more_msg::{DELFLOWTABLE, DELOBJ, DESTROYFLOWTABLE, DESTROYTABLE, NEWOBJ};
    match msg {
        crate::msg::DELTABLE
        | crate::msg::DELCHAIN
        | crate::msg::DELRULE
        | crate::msg::DELSET
        | crate::msg::DELSETELEM
        | DELOBJ
        | DELFLOWTABLE
        | DESTROYTABLE..=DESTROYFLOWTABLE => true,
        crate::msg::NEWRULE => flags & NLM_F_REPLACE != 0,
        crate::msg::NEWTABLE | crate::msg::NEWCHAIN | NEWOBJ => flags & NLM_F_EXCL == 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_messages_defer_destruction() {
        use crate::events::more_msg::{DESTROYRULE, DESTROYSETELEM, NEWOBJ};
        let cases: &[(u16, u16, bool)] = &[
            (msg::DELRULE, 0, true),
            (msg::DELCHAIN, NLM_F_NONREC, true),
            (msg::DELTABLE, 0, true),
            (msg::DELSET, 0, true),
            (msg::DELSETELEM, 0, true),
            (DESTROYRULE, 0, true),
            (DESTROYSETELEM, 0, true),
            (msg::NEWRULE, NLM_F_CREATE | NLM_F_APPEND, false),
            (msg::NEWRULE, NLM_F_CREATE, false),
            (msg::NEWRULE, NLM_F_REPLACE, true),
            (msg::NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL, false),
            (msg::NEWCHAIN, NLM_F_CREATE, true),
            (msg::NEWTABLE, NLM_F_CREATE, true),
            (NEWOBJ, NLM_F_CREATE | NLM_F_EXCL, false),
            (msg::NEWSET, NLM_F_CREATE, false),
            (msg::NEWSETELEM, NLM_F_CREATE, false),
        ];
        for &(m, flags, want) in cases {
            assert_eq!(
                defers_destruction(m, flags),
                want,
                "msg {m} flags {flags:#x}"
            );
        }
    }

    /// `add_elems` joins the previous message only when it was made by
    /// `add_elems` for the same set and tag; the messages decode to the
    /// elements given, in order.
    #[test]
    fn element_adds_join_the_previous_message() {
        use crate::{Family, Object, SetElem, SetElems};
        let es = |set: &str, keys: &[u8]| {
            let elems = keys.iter().map(|k| SetElem::key(&[*k; 4])).collect();
            SetElems::new(Family::Inet, "t", set, elems)
        };
        enum Step {
            Add(&'static str, Tag, &'static [u8]),
            Table,
            Mark,
            Truncate,
        }
        use Step::*;
        // (steps, per message between begin and end: (set, keys); "" for
        // a table)
        type Want = Vec<(&'static str, Vec<u8>)>;
        let cases: Vec<(Vec<Step>, Want)> = vec![
            (
                vec![Add("s", 0, &[1]), Add("s", 0, &[2]), Add("s", 0, &[3, 4])],
                vec![("s", vec![1, 2, 3, 4])],
            ),
            (
                vec![Add("s", 0, &[1]), Add("u", 0, &[2]), Add("s", 0, &[3])],
                vec![("s", vec![1]), ("u", vec![2]), ("s", vec![3])],
            ),
            (
                vec![Add("s", 0, &[1]), Add("s", 1, &[2])],
                vec![("s", vec![1]), ("s", vec![2])],
            ),
            (
                vec![Add("s", 0, &[1]), Table, Add("s", 0, &[2])],
                vec![("s", vec![1]), ("", vec![]), ("s", vec![2])],
            ),
            // Cutting back to a mark cuts what joined after it.
            (
                vec![
                    Add("s", 0, &[1]),
                    Mark,
                    Add("s", 0, &[2]),
                    Truncate,
                    Add("s", 0, &[3]),
                ],
                vec![("s", vec![1]), ("s", vec![3])],
            ),
            (
                vec![
                    Mark,
                    Add("s", 0, &[1]),
                    Add("s", 0, &[2]),
                    Truncate,
                    Add("s", 0, &[3]),
                ],
                vec![("s", vec![3])],
            ),
        ];
        for (steps, want) in cases {
            let mut b = Batch::new(1, None);
            let mut mark = b.mark();
            for st in &steps {
                match st {
                    Add(set, tag, keys) => {
                        b.add_elems(&es(set, keys), *tag);
                    }
                    Table => {
                        b.add(&crate::Table::new(Family::Inet, "t"), 0);
                    }
                    Mark => mark = b.mark(),
                    Truncate => b.truncate(mark),
                }
            }
            let bytes = b.finish().to_vec();
            let msgs: Vec<_> = crate::netlink::Msgs::new(&bytes)
                .map(|m| m.unwrap())
                .collect();
            assert_eq!(msgs.len(), want.len() + 2, "{want:?}");
            for (m, (set, keys)) in msgs[1..msgs.len() - 1].iter().zip(&want) {
                if set.is_empty() {
                    continue;
                }
                let nf = m.nf().unwrap();
                let got = SetElems::parse(Family::Inet, nf.attrs).unwrap();
                assert_eq!(got.set, *set);
                let got: Vec<u8> = got
                    .elems
                    .iter()
                    .map(|e| e.key.as_ref().unwrap()[0])
                    .collect();
                assert_eq!(&got, keys, "{want:?}");
            }
        }
    }

    #[test]
    fn a_batch_remembers_any_freeing_message() {
        let t = crate::Table::new(crate::Family::Ipv4, "t");
        let mut b = Batch::new(1, None);
        b.create(&t, 0);
        assert!(!b.defers_destruction());
        b.delete(&t, 1);
        assert!(b.defers_destruction());
    }
}
