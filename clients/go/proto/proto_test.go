package proto

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The worked examples of docs/protocol.md, checked against the encoder:
// each frame's hex must appear in the document (annotated lines count up
// to their first double space, without spaces), as the Rust test does.
func TestDocumentedExamples(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	for _, l := range strings.Split(string(raw), "\n") {
		l, _, _ = strings.Cut(l, "  ")
		doc.WriteString(strings.ReplaceAll(l, " ", ""))
	}
	append1 := &Iptables{Family: IPv4, Prog: "iptables",
		Args: []string{"-A", "INPUT", "-s", "10.0.0.1", "-j", "ACCEPT"}}
	cases := []struct {
		name  string
		frame func() ([]byte, error)
	}{
		{"example 1 request", func() ([]byte, error) { return AppendRequest(nil, append1) }},
		{"example 1 reply", func() ([]byte, error) { return AppendReply(nil, Exit(0)) }},
		{"example 2 stderr", func() ([]byte, error) {
			return AppendReply(nil, Stderr("iptables: No chain/target/match by that name.\n"))
		}},
		{"example 2 exit", func() ([]byte, error) { return AppendReply(nil, Exit(1)) }},
	}
	for _, c := range cases {
		f, err := c.frame()
		if err != nil {
			t.Fatal(err)
		}
		if h := hex.EncodeToString(f); !strings.Contains(doc.String(), h) {
			t.Errorf("%s: %s is not in docs/protocol.md", c.name, h)
		}
	}
}

// Every prefix of every valid frame body fails cleanly, and every
// request is no reply and the reverse.
func TestTruncationsAndCrossTypes(t *testing.T) {
	for name, r := range vectorRequests {
		f, err := AppendRequest(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		body := f[4:]
		for n := range len(body) {
			if _, err := DecodeRequest(body[:n]); err == nil {
				t.Errorf("%s cut at %d decoded", name, n)
			}
		}
		var m *MalformedError
		if _, err := DecodeReply(body); !errors.As(err, &m) {
			t.Errorf("%s decoded as a reply: %v", name, err)
		}
	}
	for name, r := range vectorReplies {
		f, err := AppendReply(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		body := f[4:]
		for n := range len(body) {
			if _, err := DecodeReply(body[:n]); err == nil {
				t.Errorf("%s cut at %d decoded", name, n)
			}
		}
		var m *MalformedError
		if _, err := DecodeRequest(body); !errors.As(err, &m) {
			t.Errorf("%s decoded as a request: %v", name, err)
		}
	}
}

func TestFramesInSequenceThenClosed(t *testing.T) {
	var stream []byte
	var want []Reply
	for _, name := range []string{"rep-stdout", "rep-opresults", "rep-exit-1", "rep-error-busy"} {
		var err error
		stream, err = AppendReply(stream, vectorReplies[name])
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, vectorReplies[name])
	}
	rd := bytes.NewReader(stream)
	for i, w := range want {
		got, err := ReadReply(rd, 1<<20)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Fatalf("frame %d: %#v %v", i, got, err)
		}
	}
	if _, err := ReadReply(rd, 1<<20); err != ErrClosed {
		t.Fatalf("after the last frame: %v", err)
	}
}

// fuse yields data, then fails the test if asked for more: proves a reader
// stopped where it should.
type fuse struct {
	t    *testing.T
	data []byte
}

func (f *fuse) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		f.t.Fatal("read beyond the allowed bytes")
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadFrameLimitsReadNoBody(t *testing.T) {
	cases := []struct {
		head  []byte
		limit int
		want  string
	}{
		{[]byte{0x7f, 0xff, 0xff, 0xff}, DefaultMaxRequest, "message of 2147483647 bytes exceeds the limit of 67108864 bytes"},
		{[]byte{0, 0, 0, 11}, 10, "message of 11 bytes exceeds the limit of 10 bytes"},
		{[]byte{0xff, 0xff, 0xff, 0xff}, DefaultMaxReply, "message of 4294967295 bytes exceeds the limit of 1073741824 bytes"},
		{[]byte{0, 0, 0, 0}, 10, "malformed message: frame length 0 leaves no room for the version and type bytes"},
		{[]byte{0, 0, 0, 1}, 10, "malformed message: frame length 1 leaves no room for the version and type bytes"},
	}
	for _, c := range cases {
		buf, err := ReadFrame(&fuse{t: t, data: c.head}, c.limit, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%x limit %d: %v, want %q", c.head, c.limit, err, c.want)
		}
		if cap(buf) != 0 {
			t.Errorf("%x: allocated %d bytes for a refused body", c.head, cap(buf))
		}
	}
}

// stall yields its data, then reports a timeout: a peer that announced a
// large frame and stopped sending.
type stall struct{ data []byte }

var errStalled = errors.New("stalled")

func (s *stall) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, errStalled
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

func TestReadFrameGrowsWithTheBytesReceived(t *testing.T) {
	head := []byte{0x3f, 0xff, 0xff, 0xff, 1, 0x81} // announces 1 GiB
	var buf []byte
	buf, err := ReadFrame(&stall{data: head}, DefaultMaxReply, buf)
	if err != errStalled {
		t.Fatalf("got %v", err)
	}
	if cap(buf) > 1<<20 {
		t.Fatalf("allocated %d bytes for 2 received", cap(buf))
	}
}

func TestReadFrameCutAndExact(t *testing.T) {
	for _, cut := range [][]byte{{0, 0}, {0, 0, 0, 6, 1, 0x83, 0}} {
		_, err := ReadFrame(bytes.NewReader(cut), 10, nil)
		if err != ErrClosedMidFrame || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%x: %v", cut, err)
		}
	}
	// Exactly at the limit is allowed, and the frame ends where it says.
	rd := bytes.NewReader([]byte{0, 0, 0, 6, 1, 0x83, 0, 0, 0, 3, 0xde, 0xad})
	b, err := ReadFrame(rd, 6, nil)
	if err != nil || !bytes.Equal(b, []byte{1, 0x83, 0, 0, 0, 3}) || rd.Len() != 2 {
		t.Fatalf("%x %v, %d left", b, err, rd.Len())
	}
	// A large frame arrives whole.
	big := bytes.Repeat([]byte{'x'}, 3<<20)
	f, err := AppendReply(nil, Stdout(big))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadReply(bytes.NewReader(f), DefaultMaxReply)
	if err != nil || !bytes.Equal(r.(Stdout), big) {
		t.Fatalf("large frame: %v", err)
	}
}

func TestOpArgs(t *testing.T) {
	cases := []struct {
		op   Op
		want string
	}{
		{Op{Kind: OpAppend, Table: "filter", Chain: "INPUT", Rule: []string{"-s", "10.0.0.1", "-j", "ACCEPT"}}, "-t filter -A INPUT -s 10.0.0.1 -j ACCEPT"},
		{Op{Kind: OpInsert, Table: "nat", Chain: "PREROUTING", Pos: 2, Rule: []string{"-j", "RETURN"}}, "-t nat -I PREROUTING 2 -j RETURN"},
		{Op{Kind: OpDelete, Table: "filter", Chain: "INPUT", Rule: []string{"-j", "DROP"}}, "-t filter -D INPUT -j DROP"},
		{Op{Kind: OpDeleteNum, Table: "filter", Chain: "INPUT", Pos: 4}, "-t filter -D INPUT 4"},
		{Op{Kind: OpReplace, Table: "filter", Chain: "OUTPUT", Pos: 1, Rule: []string{"-j", "ACCEPT"}}, "-t filter -R OUTPUT 1 -j ACCEPT"},
		{Op{Kind: OpNewChain, Table: "filter", Chain: "MINE"}, "-t filter -N MINE"},
		{Op{Kind: OpDeleteChain, Table: "filter", Chain: "MINE"}, "-t filter -X MINE"},
		{Op{Kind: OpDeleteChain, Table: "filter"}, "-t filter -X"},
		{Op{Kind: OpFlush, Table: "mangle", Chain: "FORWARD"}, "-t mangle -F FORWARD"},
		{Op{Kind: OpFlush, Table: "mangle"}, "-t mangle -F"},
		{Op{Kind: OpPolicy, Table: "filter", Chain: "FORWARD", Rule: []string{"DROP"}}, "-t filter -P FORWARD DROP"},
		{Op{Kind: OpCheck, Table: "filter", Chain: "INPUT", Rule: []string{"-p", "tcp"}}, "-t filter -C INPUT -p tcp"},
	}
	for _, c := range cases {
		if got := strings.Join(c.op.Args(), " "); got != c.want {
			t.Errorf("%+v: %q, want %q", c.op, got, c.want)
		}
	}
}

func TestEncodeRefusesWhatTheWireCannotSay(t *testing.T) {
	cases := []struct {
		name string
		r    Request
		want string
	}{
		{"family 5", &Iptables{Family: 5}, "family 5 is neither 4 nor 6"},
		{"zero family", &Save{}, "family 0 is neither 4 nor 6"},
		{"op kind 0", &Ops{Family: IPv4, Ops: []Op{{Kind: 0}}}, "op 0: kind 0 is not 1..=10"},
		{"op kind 11", &Ops{Family: IPv6, Ops: []Op{{Kind: OpAppend}, {Kind: 11}}}, "op 1: kind 11 is not 1..=10"},
		{"nil request", nil, "unknown request type <nil>"},
	}
	for _, c := range cases {
		dst := []byte{0xaa}
		got, err := AppendRequest(dst, c.r)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if !bytes.Equal(got, dst) {
			t.Errorf("%s: dst changed to %x", c.name, got)
		}
	}
}

func TestAppendKeepsWhatWasThere(t *testing.T) {
	dst := []byte{0xaa}
	got, err := AppendRequest(dst, &Status{})
	if err != nil || !bytes.Equal(got, []byte{0xaa, 0, 0, 0, 2, 1, 4}) {
		t.Fatalf("%x %v", got, err)
	}
}

func TestErrorTexts(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&TooLargeError{Len: 80000000, Max: DefaultMaxRequest}, "message of 80000000 bytes exceeds the limit of 67108864 bytes"},
		{&BadVersionError{Version: 2}, "unsupported protocol version 2 (this side speaks version 1)"},
		{ErrClosed, "the connection was closed"},
		{ErrClosedMidFrame, "the connection was closed in the middle of a message"},
		{&MalformedError{Why: "x"}, "malformed message: x"},
	}
	for _, c := range cases {
		if c.err.Error() != c.want {
			t.Errorf("%q, want %q", c.err.Error(), c.want)
		}
	}
}
