package nfkeeper_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
)

const loaded = `*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FW - [0:0]
:OLD - [0:0]
-A INPUT -j KUBE-FW
-A KUBE-FW -m comment --comment "allow \"x\"" -j ACCEPT
-A KUBE-FW -j OLD
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A POSTROUTING -j MASQUERADE
COMMIT
`

func TestFakeLoadDumpAndReferences(t *testing.T) {
	f := nfk.NewFake()
	if err := f.Load(nfk.IPv4, loaded); err != nil {
		t.Fatal(err)
	}
	if got := f.Dump(); got != loaded {
		t.Fatalf("dump\n%s", got)
	}
	ctx := context.Background()
	// Loaded jumps count as references.
	tx := f.NewTransaction(nfk.IPv4)
	tx.Delete(&nfk.Chain{Name: "OLD"})
	if err := f.Run(ctx, tx); !nfk.IsInUse(err) {
		t.Fatalf("%v", err)
	}
	tx = f.NewTransaction(nfk.IPv4)
	tx.Delete(&nfk.Rule{Chain: "KUBE-FW", Spec: []string{"-j", "OLD"}})
	tx.Delete(&nfk.Chain{Name: "OLD"})
	if err := f.Run(ctx, tx); err != nil || f.LastTransaction != tx {
		t.Fatalf("%v", err)
	}
	// Both families: each introduced by its comment line.
	tx = f.NewTransaction(nfk.IPv6)
	tx.Policy(&nfk.Chain{Name: "INPUT"}, nfk.Drop)
	if err := f.Run(ctx, tx); err != nil {
		t.Fatal(err)
	}
	d := f.Dump()
	if !strings.HasPrefix(d, "# IPv4\n*filter\n") || !strings.Contains(d, "COMMIT\n# IPv6\n*filter\n:INPUT DROP [0:0]\n") {
		t.Fatalf("dump\n%s", d)
	}
	if f.DumpFamily(nfk.IPv6) != "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n" {
		t.Fatal(f.DumpFamily(nfk.IPv6))
	}
}

func TestFakeSaveOptionsAndListing(t *testing.T) {
	f := nfk.NewFake()
	if err := f.Load(nfk.IPv4, loaded); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := f.Save(ctx, nfk.IPv4, nfk.SaveOptions{Table: "nat", Counters: true})
	want := "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n[0:0] -A POSTROUTING -j MASQUERADE\nCOMMIT\n"
	if err != nil || string(out) != want {
		t.Fatalf("%s %v", out, err)
	}
	_, err = f.Save(ctx, nfk.IPv4, nfk.SaveOptions{Table: "bogus"})
	var ee *nfk.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || ee.Stderr != "Table `bogus' does not exist\n" {
		t.Fatalf("%v", err)
	}
	chains, err := nfk.ListChains(ctx, f, nfk.IPv4, "")
	if err != nil || strings.Join(chains, " ") != "INPUT FORWARD OUTPUT KUBE-FW OLD" {
		t.Fatalf("%q %v", chains, err)
	}
	rules, err := nfk.ListRules(ctx, f, nfk.IPv4, "filter", "KUBE-FW")
	if err != nil || len(rules) != 2 || !reflect.DeepEqual(rules[0].Spec, []string{"-m", "comment", "--comment", `allow "x"`, "-j", "ACCEPT"}) || rules[1].Index != 2 {
		t.Fatalf("%+v %v", rules, err)
	}
	if _, err := nfk.ListRules(ctx, f, nfk.IPv4, "filter", "NOPE"); !nfk.IsNotFound(err) {
		t.Fatalf("%v", err)
	}
	for _, tc := range []struct {
		spec []string
		want bool
	}{{rules[1].Spec, true}, {[]string{"-j", "DROP"}, false}} {
		ok, err := nfk.Exists(ctx, f, nfk.IPv4, &nfk.Rule{Chain: "KUBE-FW", Spec: tc.spec})
		if ok != tc.want || err != nil {
			t.Fatalf("%q: %v %v", tc.spec, ok, err)
		}
	}
	if _, err := nfk.Exists(ctx, f, nfk.IPv4, &nfk.Rule{Chain: "NOPE", Spec: []string{"-j", "DROP"}}); !nfk.IsNotFound(err) {
		t.Fatalf("%v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Save(cctx, nfk.IPv4, nfk.SaveOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func TestFakeIsSafeForConcurrentUse(t *testing.T) {
	f := nfk.NewFake()
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chain := fmt.Sprintf("W%d", w)
			tx := f.NewTransaction(nfk.IPv4)
			tx.Add(&nfk.Chain{Name: chain})
			for i := range 50 {
				tx.Add(&nfk.Rule{Chain: chain, Spec: []string{"-s", fmt.Sprintf("10.0.%d.%d/32", w, i), "-j", "ACCEPT"}})
			}
			if err := f.Run(ctx, tx); err != nil {
				t.Error(err)
			}
			if _, err := f.Save(ctx, nfk.IPv4, nfk.SaveOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(f.Dump(), "\n-A W"); n != 16*50 {
		t.Fatalf("%d rules", n)
	}
}

func TestParseSaveAndSplitWords(t *testing.T) {
	words := []struct {
		line string
		want []string
	}{
		{`-A X -j ACCEPT`, []string{"-A", "X", "-j", "ACCEPT"}},
		{`  -m comment --comment "a b"  -j ACCEPT `, []string{"-m", "comment", "--comment", "a b", "-j", "ACCEPT"}},
		{`--comment "say \"hi\" \\ there"`, []string{"--comment", `say "hi" \ there`}},
		{`--comment ""`, []string{"--comment", ""}},
		{`a"b c"`, []string{"ab c"}},
	}
	for _, tc := range words {
		got, err := nfk.SplitWords(tc.line)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q %v", tc.line, got, err)
		}
	}
	if _, err := nfk.SplitWords(`--comment "open`); err == nil {
		t.Error("unterminated quote accepted")
	}
	bad := []struct {
		text, want string
	}{
		{"-A X -j ACCEPT\n", `iptables-save line 1: outside a table: "-A X -j ACCEPT"`},
		{"*filter\n-A X -j ACCEPT\nCOMMIT\n", `iptables-save line 2: rule of an undeclared chain: "-A X -j ACCEPT"`},
		{"*filter\n:X - [a:0]\nCOMMIT\n", `iptables-save line 2: counters "[a:0]": ":X - [a:0]"`},
		{"*filter\n:X -\nCOMMIT\n", `iptables-save line 2: chain line: ":X -"`},
		{"*filter\n*nat\n", `iptables-save line 2: table without COMMIT before it: "*nat"`},
		{"*filter\n", "iptables-save: table filter has no COMMIT"},
		{"*filter\n:X - [0:0]\n-I X 1\nCOMMIT\n", `iptables-save line 3: rule line without -A CHAIN: "-I X 1"`},
	}
	for _, tc := range bad {
		if _, err := nfk.ParseSave([]byte(tc.text)); errString(err) != tc.want {
			t.Errorf("%q: %v", tc.text, err)
		}
	}
	ts, err := nfk.ParseSave([]byte("# Generated by x\n*raw\n:OUTPUT ACCEPT [5:600]\n[1:2] -A OUTPUT -j CT --notrack\nCOMMIT\n# Completed\n"))
	want := []nfk.SavedTable{{Name: "raw", Chains: []nfk.SavedChain{{Name: "OUTPUT", Policy: "ACCEPT", Packets: 5, Bytes: 600,
		Rules: []nfk.SavedRule{{Spec: []string{"-j", "CT", "--notrack"}, Packets: 1, Bytes: 2}}}}}}
	if err != nil || !reflect.DeepEqual(ts, want) {
		t.Fatalf("%+v %v", ts, err)
	}
	if got := nfk.FormatSave(ts, true); got != "*raw\n:OUTPUT ACCEPT [5:600]\n[1:2] -A OUTPUT -j CT --notrack\nCOMMIT\n" {
		t.Fatal(got)
	}
}

func TestErrorClasses(t *testing.T) {
	cases := []struct {
		msg                     string
		notFound, exists, inUse bool
	}{
		{"nfkeeper: No chain/target/match by that name.", true, false, false},
		{"nfkeeper: Bad rule (does a matching rule exist in that chain?).", true, false, false},
		{"nfkeeper: Index of deletion too big.", true, false, false},
		{"nfkeeper: Chain already exists.", false, true, false},
		{"nfkeeper: Too many links.", false, false, true},
		{"nfkeeper: Directory not empty.", false, false, true},
		{"nfkeeper: Loop found in table.", false, false, false},
	}
	for _, tc := range cases {
		for _, err := range []error{&nfk.TxError{Message: tc.msg}, &nfk.ExitError{Code: 1, Stderr: tc.msg + "\n"}, fmt.Errorf("wrapped: %w", &nfk.TxError{Message: tc.msg})} {
			if nfk.IsNotFound(err) != tc.notFound || nfk.IsExists(err) != tc.exists || nfk.IsInUse(err) != tc.inUse {
				t.Errorf("%q (%T)", tc.msg, err)
			}
		}
	}
	if nfk.IsNotFound(errors.New("No chain/target/match by that name.")) {
		t.Error("a plain error classified")
	}
}
