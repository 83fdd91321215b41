package proto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// vectorDir holds the shared vectors written by crates/proto's test
// `vectors` (NFK_UPDATE_GOLDEN=1 cargo test -p nfk-proto --test vectors).
var vectorDir = filepath.Join("..", "..", "..", "testdata", "protocol")

func ptr(s string) *string { return &s }

// The values of the valid vectors, by name: the same list as the Rust test.
var vectorRequests = map[string]Request{
	"req-iptables-append": &Iptables{Family: IPv4, Prog: "iptables",
		Args: []string{"-A", "INPUT", "-s", "10.0.0.1", "-j", "ACCEPT"}},
	"req-iptables-empty-v6": &Iptables{Family: IPv6},
	"req-restore-noflush-test-table": &Restore{Family: IPv6, Prog: "ip6tables-restore",
		Noflush: true, Test: true, Table: ptr("filter"),
		Payload: []byte("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n\xff")},
	"req-restore-counters-empty": &Restore{Family: IPv4, Prog: "iptables-restore", Counters: true},
	"req-restore-empty-table-name": &Restore{Family: IPv4, Prog: "iptables-restore",
		Table: ptr(""), Payload: []byte("#")},
	"req-save-counters": &Save{Family: IPv4, Prog: "iptables-save", Counters: true},
	"req-save-table-v6": &Save{Family: IPv6, Prog: "ip6tables-save", Table: ptr("nat")},
	"req-status":        &Status{},
	"req-ops-every-kind": &Ops{Family: IPv4, Ops: []Op{
		{Kind: OpAppend, Table: "filter", Chain: "INPUT", Rule: []string{"-s", "10.0.0.1", "-j", "ACCEPT"}},
		{Kind: OpInsert, Table: "filter", Chain: "INPUT", Pos: 3, Rule: []string{"-j", "DROP"}},
		{Kind: OpDelete, Table: "nat", Chain: "POSTROUTING", Rule: []string{"-j", "MASQUERADE"}},
		{Kind: OpDeleteNum, Table: "filter", Chain: "FORWARD", Pos: 7},
		{Kind: OpReplace, Table: "mangle", Chain: "PREROUTING", Pos: 2, Rule: []string{"-j", "MARK", "--set-mark", "1"}},
		{Kind: OpNewChain, Table: "filter", Chain: "é-chain"},
		{Kind: OpDeleteChain, Table: "filter"},
		{Kind: OpFlush, Table: "raw", Chain: "OUTPUT"},
		{Kind: OpPolicy, Table: "filter", Chain: "INPUT", Rule: []string{"DROP"}},
		{Kind: OpCheck, Table: "filter", Chain: "INPUT"},
	}},
	"req-ops-empty-v6": &Ops{Family: IPv6},
	"req-ops-max-pos": &Ops{Family: IPv6, Ops: []Op{
		{Kind: OpDeleteNum, Table: "filter", Chain: "INPUT", Pos: math.MaxUint32}}},
	"req-ipset-add": &Ipset{Args: []string{"add", "ban", "10.0.0.1"}},
	"req-ipset-restore": &Ipset{Args: []string{"-exist", "restore"}, WithInput: true,
		Input: []byte("create ban hash:ip\nadd ban 10.0.0.1\n\xff")},
	"req-ipset-restore-empty-input": &Ipset{Args: []string{"restore"}, WithInput: true},
}

var vectorReplies = map[string]Reply{
	"rep-stdout":          Stdout("-P INPUT ACCEPT\n"),
	"rep-stdout-empty":    Stdout(nil),
	"rep-stderr-binary":   Stderr("iptables: Bad rule.\n\x00\xff"),
	"rep-exit-0":          Exit(0),
	"rep-exit-1":          Exit(1),
	"rep-exit-negative":   Exit(-1),
	"rep-exit-max":        Exit(math.MaxInt32),
	"rep-exit-min":        Exit(math.MinInt32),
	"rep-opresults-empty": OpResults(nil),
	"rep-opresults":       OpResults{{Code: 0}, {Code: 1, Message: "iptables: Chain already exists."}},
	"rep-error-busy":      &Error{Code: 4, Message: "server busy"},
	"rep-error-version": &Error{Code: 2,
		Message: "unsupported protocol version 9; this daemon speaks version 1"},
}

type vector struct {
	kind, name, text string
	limit            int
}

func readIndex(t *testing.T) []vector {
	t.Helper()
	f, err := os.Open(filepath.Join(vectorDir, "index.txt"))
	if err != nil {
		t.Fatalf("shared vectors missing (%v): run NFK_UPDATE_GOLDEN=1 cargo test -p nfk-proto --test vectors", err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 {
			t.Fatalf("index line %q", sc.Text())
		}
		v := vector{kind: f[0], name: f[1], text: f[2]}
		if v.kind == "bad-frame" {
			if len(f) != 4 {
				t.Fatalf("bad-frame line %q", sc.Text())
			}
			v.limit, err = strconv.Atoi(f[2])
			if err != nil {
				t.Fatal(err)
			}
			v.text = f[3]
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func readVector(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorDir, name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// body checks a whole frame's length prefix and returns what follows it.
func body(t *testing.T, frame []byte) []byte {
	t.Helper()
	if len(frame) < 4 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		t.Fatalf("length prefix of %x does not count the bytes after it", frame)
	}
	return frame[4:]
}

// TestSharedVectors: every vector the Rust reference wrote encodes to the
// same bytes here, decodes to the same value, and every malformed one is
// refused with the same error text.
func TestSharedVectors(t *testing.T) {
	seen := map[string]bool{}
	counts := map[string]int{}
	for _, v := range readIndex(t) {
		seen[v.name] = true
		counts[v.kind]++
		raw := readVector(t, v.name)
		t.Run(v.name, func(t *testing.T) {
			switch v.kind {
			case "request":
				want, ok := vectorRequests[v.name]
				if !ok {
					t.Fatalf("no Go value for request vector %s (%s)", v.name, v.text)
				}
				got, err := AppendRequest(nil, want)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, raw) {
					t.Fatalf("encoded\n%x\nwant\n%x", got, raw)
				}
				dec, err := ReadRequest(bytes.NewReader(raw), len(raw))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(dec, want) {
					t.Fatalf("decoded %#v, want %#v", dec, want)
				}
			case "reply":
				want, ok := vectorReplies[v.name]
				if !ok {
					t.Fatalf("no Go value for reply vector %s (%s)", v.name, v.text)
				}
				got, err := AppendReply(nil, want)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, raw) {
					t.Fatalf("encoded\n%x\nwant\n%x", got, raw)
				}
				dec, err := ReadReply(bytes.NewReader(raw), len(raw))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(dec, want) {
					t.Fatalf("decoded %#v, want %#v", dec, want)
				}
			case "bad-request":
				_, err := DecodeRequest(body(t, raw))
				if err == nil || err.Error() != v.text {
					t.Fatalf("got %v, want %q", err, v.text)
				}
			case "bad-reply":
				_, err := DecodeReply(body(t, raw))
				if err == nil || err.Error() != v.text {
					t.Fatalf("got %v, want %q", err, v.text)
				}
			case "bad-frame":
				_, err := ReadFrame(bytes.NewReader(raw), v.limit, nil)
				if err == nil || err.Error() != v.text {
					t.Fatalf("got %v, want %q", err, v.text)
				}
			default:
				t.Fatalf("unknown vector kind %q", v.kind)
			}
		})
	}
	for name := range vectorRequests {
		if !seen[name] {
			t.Errorf("Go request value %s has no shared vector", name)
		}
	}
	for name := range vectorReplies {
		if !seen[name] {
			t.Errorf("Go reply value %s has no shared vector", name)
		}
	}
	for _, k := range []string{"request", "reply", "bad-request", "bad-reply", "bad-frame"} {
		if counts[k] == 0 {
			t.Errorf("no %s vectors", k)
		}
	}
}
