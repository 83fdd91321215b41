package svcproxy

import (
	"context"
	"strings"
	"testing"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
	"github.com/nfkeeper/nfkeeper/clients/go/internal/nstest"
)

// The example's life against `nfkeeper serve` in a fresh namespace: the
// same goldens as on the Fake, and the kernel holds what the daemon says.
func TestLifecycleOnTheDaemon(t *testing.T) {
	if why := nstest.Unavailable(); why != "" {
		t.Skip("SKIP: " + why)
	}
	ns, err := nstest.NewNamespace()
	if err != nil {
		t.Skip("SKIP: cannot create a network namespace: ", err)
	}
	defer func() {
		if err := ns.Close(); err != nil {
			t.Error(err)
		}
	}()
	d, err := nstest.StartDaemon(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	c := nfk.New(nfk.Options{Path: d.Socket})
	defer c.Close()
	save := func() string {
		out, err := c.Save(context.Background(), nfk.IPv4, nfk.SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kernel, err := nstest.Direct(ns, "iptables-save")
		if err != nil {
			t.Fatal(err)
		}
		if undated(out) != undated(kernel) {
			t.Fatalf("daemon\n%s\nkernel\n%s", out, kernel)
		}
		return undated(out)
	}
	lifecycle(t, c, save)
}

func undated(b []byte) string {
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out.WriteString(l)
		}
	}
	return out.String()
}
