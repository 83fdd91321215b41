package nfkeeper_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
	"github.com/nfkeeper/nfkeeper/clients/go/internal/nstest"
)

// Integration tests: the client against `nfkeeper serve` in a network
// namespace each test creates and removes. They run as root with
// NFKEEPER_BIN set to the nfkeeper binary, and are skipped (with the
// reason) otherwise.

func TestMain(m *testing.M) {
	if nstest.Unavailable() == "" {
		nstest.RemoveStale()
	}
	os.Exit(m.Run())
}

// serve starts a daemon in a fresh namespace for t; both go away when t
// ends, also on failure.
func serve(t *testing.T) (*nfk.Client, *nstest.Namespace, *nstest.Daemon) {
	t.Helper()
	if why := nstest.Unavailable(); why != "" {
		t.Skip("SKIP: " + why)
	}
	ns, err := nstest.NewNamespace()
	if err != nil {
		t.Skip("SKIP: cannot create a network namespace: ", err)
	}
	t.Cleanup(func() {
		if err := ns.Close(); err != nil {
			t.Error(err)
		}
	})
	d, err := nstest.StartDaemon(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	c := nfk.New(nfk.Options{Path: d.Socket})
	t.Cleanup(func() { c.Close() })
	return c, ns, d
}

// kernelSave is the kernel's ruleset of a family, read in direct mode.
func kernelSave(t *testing.T, ns *nstest.Namespace, family nfk.Family) string {
	t.Helper()
	prog := "iptables-save"
	if family == nfk.IPv6 {
		prog = "ip6tables-save"
	}
	out, err := nstest.Direct(ns, prog)
	if err != nil {
		t.Fatal(err)
	}
	return undated(out)
}

// The scenarios the Fake runs, against the daemon: same outcomes, same
// saves; and what the daemon says is what the kernel holds.
func TestDaemonScenarios(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			c, ns, _ := serve(t)
			runScenario(t, c, f)
			for _, fam := range []nfk.Family{nfk.IPv4, nfk.IPv6} {
				out, err := c.Save(context.Background(), fam, nfk.SaveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := undated(out), kernelSave(t, ns, fam); got != want {
					t.Fatalf("%v: daemon\n%s\nkernel\n%s", fam, got, want)
				}
			}
		})
	}
}

func TestDaemonCommandsSaveRestoreStatus(t *testing.T) {
	c, ns, _ := serve(t)
	ctx := context.Background()
	if _, err := c.Iptables(ctx, nfk.IPv4, "-N", "WEB"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Iptables(ctx, nfk.IPv4, "-A", "WEB", "-p", "tcp", "--dport", "443", "-j", "ACCEPT"); err != nil {
		t.Fatal(err)
	}
	o, err := c.Iptables(ctx, nfk.IPv4, "-S", "WEB")
	if err != nil || string(o.Stdout) != "-N WEB\n-A WEB -p tcp -m tcp --dport 443 -j ACCEPT\n" {
		t.Fatalf("%q %v", o.Stdout, err)
	}
	o, err = c.Iptables(ctx, nfk.IPv4, "-A", "NOPE", "-j", "ACCEPT")
	var ee *nfk.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || ee.Stderr != "iptables: No chain/target/match by that name.\n" || o.Code != 1 {
		t.Fatalf("%v", err)
	}
	_, err = c.Iptables(ctx, nfk.IPv6, "-A", "INPUT", "--bogus")
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.HasPrefix(ee.Stderr, "ip6tables v1.8.11 (nfkeeper): unknown option") {
		t.Fatalf("%v", err)
	}
	restore := "*filter\n:WEB - [0:0]\n-A WEB -s 10.1.0.0/16 -j DROP\nCOMMIT\n"
	if err := c.Restore(ctx, nfk.IPv4, []byte(restore), nfk.RestoreOptions{Noflush: true}); err != nil {
		t.Fatal(err)
	}
	bad := "*filter\n-A WEB -j ACCEPT\n-A NOPE -j ACCEPT\nCOMMIT\n"
	err = c.Restore(ctx, nfk.IPv4, []byte(bad), nfk.RestoreOptions{Noflush: true})
	if !errors.As(err, &ee) || ee.Code == 0 || !strings.Contains(ee.Stderr, "line 3") {
		t.Fatalf("%v", err)
	}
	out, err := c.Save(ctx, nfk.IPv4, nfk.SaveOptions{Table: "filter"})
	want := "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:WEB - [0:0]\n-A WEB -s 10.1.0.0/16 -j DROP\nCOMMIT\n"
	if err != nil || undated(out) != want {
		t.Fatalf("%s %v", out, err)
	}
	if got := kernelSave(t, ns, nfk.IPv4); got != want {
		t.Fatalf("kernel:\n%s", got)
	}
	_, err = c.Save(ctx, nfk.IPv4, nfk.SaveOptions{Table: "bogus"})
	if !errors.As(err, &ee) || ee.Stderr != "Table `bogus' does not exist\n" {
		t.Fatalf("%v", err)
	}
	st, err := c.Status(ctx)
	if err != nil || st == "" {
		t.Fatalf("%q %v", st, err)
	}
	chains, err := nfk.ListChains(ctx, c, nfk.IPv4, "filter")
	if err != nil || strings.Join(chains, " ") != "INPUT FORWARD OUTPUT WEB" {
		t.Fatalf("%q %v", chains, err)
	}
	ok, err := nfk.Exists(ctx, c, nfk.IPv4, &nfk.Rule{Chain: "WEB", Spec: []string{"-s", "10.1.0.0/16", "-j", "DROP"}})
	if !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	ok, err = nfk.Exists(ctx, c, nfk.IPv4, &nfk.Rule{Chain: "WEB", Spec: []string{"-s", "10.2.0.0/16", "-j", "DROP"}})
	if ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
}

// ipset through the daemon: a restore, single commands with ipset's exit
// codes and messages, and the sets in the kernel as direct mode reads them.
func TestDaemonIpset(t *testing.T) {
	c, ns, _ := serve(t)
	ctx := context.Background()
	if _, err := c.IpsetRestore(ctx, []byte("create ban hash:ip\nadd ban 10.0.0.1\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ipset(ctx, "add", "ban", "10.0.0.2"); err != nil {
		t.Fatal(err)
	}
	var ee *nfk.ExitError
	_, err := c.Ipset(ctx, "add", "ban", "10.0.0.2")
	if !errors.As(err, &ee) || ee.Code != 1 ||
		ee.Stderr != "ipset v7.21: Element cannot be added to the set: it's already added\n" {
		t.Fatalf("%v", err)
	}
	if _, err := c.Ipset(ctx, "test", "ban", "10.0.0.3"); !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("%v", err)
	}
	_, err = c.IpsetRestore(ctx, []byte("add ban 10.0.0.3\nadd ban bogus\n"))
	if !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "line 2") {
		t.Fatalf("a failed restore: %v", err)
	}
	want := "create ban hash:ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval "
	o, err := c.Ipset(ctx, "save", "ban")
	if err != nil || !strings.HasPrefix(string(o.Stdout), want) {
		t.Fatalf("%q %v", o.Stdout, err)
	}
	direct, err := nstest.Direct(ns, "ipset", "save", "ban")
	if err != nil || string(direct) != string(o.Stdout) {
		t.Fatalf("direct mode reads %q (%v), the daemon %q", direct, err, o.Stdout)
	}
	if n := strings.Count(string(o.Stdout), "\nadd ban "); n != 2 {
		t.Fatalf("%d members, want 2 (nothing of the failed restore):\n%s", n, o.Stdout)
	}
}

// 64 goroutines append through one client: every append lands once, each
// goroutine's rules in its own order.
func TestDaemonConcurrentAppends(t *testing.T) {
	c, ns, _ := serve(t)
	ctx := context.Background()
	const workers, each = 64, 20
	tx := c.NewTransaction(nfk.IPv4)
	for w := range workers {
		tx.Add(&nfk.Chain{Name: fmt.Sprintf("W%d", w)})
	}
	if err := c.Run(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tx := c.NewTransaction(nfk.IPv4)
				tx.Add(&nfk.Rule{Chain: fmt.Sprintf("W%d", w), Spec: []string{"-s", fmt.Sprintf("10.%d.0.%d/32", w, i+1), "-j", "ACCEPT"}})
				if err := c.Run(ctx, tx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	save := kernelSave(t, ns, nfk.IPv4)
	for w := range workers {
		var want strings.Builder
		for i := range each {
			fmt.Fprintf(&want, "-A W%d -s 10.%d.0.%d/32 -j ACCEPT\n", w, w, i+1)
		}
		if !strings.Contains(save, want.String()) {
			t.Fatalf("W%d's rules missing or out of order in\n%s", w, save)
		}
	}
}

// A request abandoned mid-way (its context ends while the daemon works on
// a large restore) poisons only its connection: the client goes on, the
// daemon goes on, and the restore is there whole or not at all.
func TestDaemonCancelMidRequest(t *testing.T) {
	c, ns, _ := serve(t)
	var b strings.Builder
	b.WriteString("*filter\n:BIG - [0:0]\n")
	const n = 20000
	for i := range n {
		fmt.Fprintf(&b, "-A BIG -s 10.%d.%d.%d/32 -j ACCEPT\n", i>>16, (i>>8)&255, i&255)
	}
	b.WriteString("COMMIT\n")
	// A pooled connection, so that the deadline falls in the exchange.
	if _, err := c.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	err := c.Restore(ctx, nfk.IPv4, []byte(b.String()), nfk.RestoreOptions{Noflush: true})
	cancel()
	var xe *nfk.ExchangeError
	if !errors.As(err, &xe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	st, err := c.Status(context.Background())
	if err != nil || st == "" {
		t.Fatalf("after cancel: %v", err)
	}
	// The daemon still writes: a write after it succeeds, and the kernel
	// holds the restore whole or not at all (one transaction).
	tx := c.NewTransaction(nfk.IPv4)
	tx.Add(&nfk.Chain{Name: "AFTER"})
	if err := c.Run(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	save := kernelSave(t, ns, nfk.IPv4)
	if k := strings.Count(save, "-A BIG "); k != 0 && k != n {
		t.Fatalf("%d of %d rules of one restore", k, n)
	}
	if !strings.Contains(save, ":AFTER - [0:0]") {
		t.Fatal(save)
	}
}

// Connections in the pool outlive a daemon restart: the next request finds
// its connection closed and goes on a new one.
func TestDaemonRestartBehindThePool(t *testing.T) {
	_, ns, _ := serve(t)
	sock := filepath.Join(t.TempDir(), "restart.sock")
	d, err := nstest.StartDaemonAt(ns, sock)
	if err != nil {
		t.Fatal(err)
	}
	c := nfk.New(nfk.Options{Path: sock})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Status(ctx); err != nil {
		t.Fatal(err)
	}
	d.Stop()
	d, err = nstest.StartDaemonAt(ns, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	if _, err := c.Status(ctx); err != nil {
		t.Fatal(err)
	}
}
