// Package proto is the wire protocol of nfkeeper's daemon (`nfkeeper
// serve`): length-prefixed, versioned frames carrying requests (an iptables
// command line, a restore payload, a save request, status, or typed
// operations) and replies (stdout and stderr chunks, then an exit code).
//
// docs/protocol.md in the nfkeeper repository is the specification and the
// Rust crate crates/proto its reference implementation; this package is
// byte-compatible with it, which the shared vectors in
// testdata/protocol (written by crates/proto's tests) hold both to. Error
// texts are the reference implementation's, word for word.
//
// Decoding never panics and never allocates more than the input can
// justify: every length and count is checked against the bytes left in the
// frame before it is used, and ReadFrame refuses a frame longer than its
// limit before reading or allocating its body.
package proto

import (
	"strconv"
)

// Version is the protocol version this package speaks (the second byte of
// every frame).
const Version byte = 1

// DefaultMaxRequest is the daemon's default limit on one request frame.
const DefaultMaxRequest = 64 << 20

// DefaultMaxReply is the client's default limit on one reply frame.
const DefaultMaxReply = 1 << 30

// Frame type bytes.
const (
	typeIptables  byte = 0x01
	typeRestore   byte = 0x02
	typeSave      byte = 0x03
	typeStatus    byte = 0x04
	typeOps       byte = 0x05
	typeIpset     byte = 0x06
	typeStdout    byte = 0x81
	typeStderr    byte = 0x82
	typeExit      byte = 0x83
	typeOpResults byte = 0x84
	typeError     byte = 0x85
)

// Family is the address family of a request: wire value 4 or 6.
type Family uint8

const (
	IPv4 Family = 4
	IPv6 Family = 6
)

func (f Family) String() string {
	switch f {
	case IPv4:
		return "IPv4"
	case IPv6:
		return "IPv6"
	}
	return "Family(" + strconv.Itoa(int(f)) + ")"
}

// Request is what a client asks the daemon: one of *Iptables, *Restore,
// *Save, *Status, *Ops, *Ipset.
type Request interface {
	requestType() byte
}

// Iptables is an iptables command line without argv[0]; Prog names the
// program in messages ("iptables", "ip6tables"), as argv[0] would.
type Iptables struct {
	Family Family
	Prog   string
	Args   []string
}

// Restore is iptables-restore with its options; Payload is the whole
// restore input (not necessarily UTF-8). Table nil means no --table.
type Restore struct {
	Family   Family
	Prog     string
	Noflush  bool
	Counters bool
	Test     bool
	Table    *string
	Payload  []byte
}

// Save is iptables-save with its options. Table nil means every table.
type Save struct {
	Family   Family
	Prog     string
	Counters bool
	Table    *string
}

// Status asks for the daemon's status text (sent on Stdout).
type Status struct{}

// Ops is a list of typed operations applied as one transaction: all of them
// or none.
type Ops struct {
	Family Family
	Ops    []Op
}

// Ipset is an ipset command line without argv[0]. WithInput says whether
// Input is sent: restore's input (standard input or -file, read by the
// client), possibly empty.
type Ipset struct {
	Args      []string
	WithInput bool
	Input     []byte
}

func (*Iptables) requestType() byte { return typeIptables }
func (*Restore) requestType() byte  { return typeRestore }
func (*Save) requestType() byte     { return typeSave }
func (*Status) requestType() byte   { return typeStatus }
func (*Ops) requestType() byte      { return typeOps }
func (*Ipset) requestType() byte    { return typeIpset }

// OpKind is the kind of a typed operation (wire values 1..=10).
type OpKind uint8

const (
	OpAppend      OpKind = 1  // -A
	OpInsert      OpKind = 2  // -I pos
	OpDelete      OpKind = 3  // -D by rule specification
	OpDeleteNum   OpKind = 4  // -D pos
	OpReplace     OpKind = 5  // -R pos
	OpNewChain    OpKind = 6  // -N
	OpDeleteChain OpKind = 7  // -X (empty chain: every empty user chain)
	OpFlush       OpKind = 8  // -F (empty chain: every chain of the table)
	OpPolicy      OpKind = 9  // -P, rule = [policy]
	OpCheck       OpKind = 10 // -C: fails (code 1) when no rule matches
)

// Flag is the iptables command option of the kind ("" for an unknown kind).
func (k OpKind) Flag() string {
	switch k {
	case OpAppend:
		return "-A"
	case OpInsert:
		return "-I"
	case OpDelete, OpDeleteNum:
		return "-D"
	case OpReplace:
		return "-R"
	case OpNewChain:
		return "-N"
	case OpDeleteChain:
		return "-X"
	case OpFlush:
		return "-F"
	case OpPolicy:
		return "-P"
	case OpCheck:
		return "-C"
	}
	return ""
}

// HasPos reports whether the rule number is part of this kind's command
// line (Insert, DeleteNum, Replace).
func (k OpKind) HasPos() bool {
	return k == OpInsert || k == OpDeleteNum || k == OpReplace
}

// Op is one typed operation: an iptables command on one chain of one
// table. Pos is the rule number (1 = first) for Insert, DeleteNum and
// Replace, and 0 otherwise; Rule holds iptables rule options
// (["-s", "10.0.0.1", "-j", "ACCEPT"]), or [policy] for Policy. An empty
// Chain in Flush or DeleteChain means every chain of the table.
type Op struct {
	Kind  OpKind
	Table string
	Chain string
	Pos   uint32
	Rule  []string
}

// Args is the equivalent iptables argv (without argv[0]):
// -t table FLAG chain [pos] rule... The chain is left out when it is empty
// in Flush and DeleteChain (all chains).
func (o Op) Args() []string {
	a := make([]string, 0, 5+len(o.Rule))
	a = append(a, "-t", o.Table, o.Kind.Flag())
	if !((o.Kind == OpFlush || o.Kind == OpDeleteChain) && o.Chain == "") {
		a = append(a, o.Chain)
	}
	if o.Kind.HasPos() {
		a = append(a, strconv.FormatUint(uint64(o.Pos), 10))
	}
	return append(a, o.Rule...)
}

// OpResult is the outcome of one typed operation: its iptables exit code
// and message (empty on success).
type OpResult struct {
	Code    int32
	Message string
}

// Reply is what the daemon sends back: one of Stdout, Stderr, Exit,
// OpResults, *Error.
type Reply interface {
	replyType() byte
}

// Stdout is a chunk of standard output, in production order.
type Stdout []byte

// Stderr is a chunk of standard error, in production order.
type Stderr []byte

// Exit ends a reply: the exit code the CLI would exit with.
type Exit int32

// OpResults holds one result per typed operation; an Exit follows.
type OpResults []OpResult

// Error is a protocol-level refusal; the daemon closes the connection
// after it. Codes the daemon uses: 1 permission, 2 malformed or incomplete
// request or unknown version, 4 too large or server busy.
type Error struct {
	Code    int32
	Message string
}

func (Stdout) replyType() byte    { return typeStdout }
func (Stderr) replyType() byte    { return typeStderr }
func (Exit) replyType() byte      { return typeExit }
func (OpResults) replyType() byte { return typeOpResults }
func (*Error) replyType() byte    { return typeError }
