package svcproxy

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
)

// services is n services of e endpoints each, deterministic.
func services(n, e int) []Service {
	var out []Service
	for i := range n {
		s := Service{Namespace: "default", Name: fmt.Sprintf("svc-%d", i), PortName: "http",
			ClusterIP: netip.AddrFrom4([4]byte{10, 96, byte((i + 1) >> 8), byte(i + 1)}), Port: uint16(80 + i%2), Protocol: "tcp"}
		if i%3 == 2 {
			s.Protocol = "udp"
		}
		for j := range e {
			s.Endpoints = append(s.Endpoints, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i), byte(j + 1)}), 8080))
		}
		out = append(out, s)
	}
	return out
}

// churn changes a set of services the way a cluster does: svc-0's
// endpoints move (one replaced, one added), svc-1 goes away, svc-3 comes.
func churn(in []Service) []Service {
	out := []Service{}
	for _, s := range in {
		switch s.Name {
		case "svc-0":
			s.Endpoints = []netip.AddrPort{s.Endpoints[0],
				netip.MustParseAddrPort("10.1.0.9:8080"), netip.MustParseAddrPort("10.1.0.10:8080")}
		case "svc-1":
			continue
		}
		out = append(out, s)
	}
	return append(out, services(4, 1)[3])
}

// golden compares got with testdata/NAME (rewritten with NFK_UPDATE_GOLDEN
// set).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("NFK_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (NFK_UPDATE_GOLDEN=1 writes it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs:\n%s", name, got)
	}
}

// lifecycle runs the example's life against nft, checking each state with
// save (the ruleset as iptables-save prints it, without comment lines):
// first sync, partial update, no-op resync, restart over existing chains.
func lifecycle(t *testing.T, nft nfk.Interface, save func() string) {
	ctx := context.Background()
	p := New(nft, nfk.IPv4)
	svcs := services(3, 2)
	if _, err := p.Sync(ctx, svcs); err != nil {
		t.Fatal(err)
	}
	golden(t, "initial.txt", save())
	n, err := p.Sync(ctx, churn(svcs))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "updated.txt", save())
	// svc-0: flush its chain, one endpoint chain added (3 ops) and one
	// removed (2), 3 rules; svc-1: entry, 2 flushes, 3 deletes... counted
	// exactly so that a change of strategy is seen.
	if n != 25 {
		t.Fatalf("partial update took %d operations", n)
	}
	if n, err := p.Sync(ctx, churn(svcs)); err != nil || n != 0 {
		t.Fatalf("resync without changes: %d operations, %v", n, err)
	}
	// A new proxier (a restarted controller) finds the chains and
	// rebuilds the same ruleset.
	if _, err := New(nft, nfk.IPv4).Sync(ctx, churn(svcs)); err != nil {
		t.Fatal(err)
	}
	golden(t, "updated.txt", save())
}

func TestLifecycleOnTheFake(t *testing.T) {
	f := nfk.NewFake()
	lifecycle(t, f, f.Dump)
}

func TestFailedSyncAppliesNothing(t *testing.T) {
	ctx := context.Background()
	f := nfk.NewFake()
	p := New(f, nfk.IPv4)
	svcs := services(2, 2)
	if _, err := p.Sync(ctx, svcs); err != nil {
		t.Fatal(err)
	}
	// Someone else deletes a rule the proxier owns: the sync that removes
	// that service fails as a whole, names the operation, changes nothing.
	tx := f.NewTransaction(nfk.IPv4)
	tx.Delete(rule(chainServices, p.serviceRule(&svcs[1])))
	if err := f.Run(ctx, tx); err != nil {
		t.Fatal(err)
	}
	before := f.Dump()
	_, err := p.Sync(ctx, svcs[:1])
	var te *nfk.TxError
	if !errors.As(err, &te) || te.Index != 0 || !nfk.IsNotFound(err) ||
		!strings.HasPrefix(err.Error(), "operation 1 of 7 (-t nat -D KUBE-SERVICES -d 10.96.0.2/32 -p tcp") {
		t.Fatalf("%v", err)
	}
	if f.Dump() != before {
		t.Fatal("a failed sync changed the ruleset")
	}
	// A restarted proxier rebuilds from what it finds.
	if _, err := New(f, nfk.IPv4).Sync(ctx, svcs[:1]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.Dump(), "svc-1") {
		t.Fatal(f.Dump())
	}
}

func TestManyServicesPartialUpdateIsSmall(t *testing.T) {
	ctx := context.Background()
	f := nfk.NewFake()
	p := New(f, nfk.IPv4)
	svcs := services(200, 10)
	full, err := p.Sync(ctx, svcs)
	if err != nil {
		t.Fatal(err)
	}
	svcs[17].Endpoints = svcs[17].Endpoints[1:]
	n, err := p.Sync(ctx, svcs)
	if err != nil {
		t.Fatal(err)
	}
	if full < 200*10*3 || n > 15 {
		t.Fatalf("full sync %d operations, one endpoint less %d", full, n)
	}
	if k := strings.Count(f.Dump(), "\n-A KUBE-SEP-"); k != 2*(200*10-1) {
		t.Fatalf("%d endpoint rules", k)
	}
}
