package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
)

// rule is the distinct CF-shaped rule of goroutine g, operation i.
func rule(g, i int) []string {
	return strings.Fields(fmt.Sprintf("-s 11.%d.%d.%d/32 -p tcp -m tcp --dport 8080 -j ACCEPT", g%256, (i/256)%256, i%256))
}

// preloadText is chain X with n rules, as iptables-restore --noflush input.
func preloadText(n int) []byte {
	var b bytes.Buffer
	b.WriteString("*filter\n:X - [0:0]\n")
	for i := range n {
		fmt.Fprintf(&b, "-A X -s 10.%d.%d.%d/32 -p tcp -m tcp --dport 8080 -j ACCEPT\n", (i>>16)&255, (i>>8)&255, i&255)
	}
	b.WriteString("COMMIT\n")
	return b.Bytes()
}

// appender performs one append of goroutine g's operation i.
type appender func(ctx context.Context, g, i int) error

// runInner measures one method in the current network namespace.
func runInner(c config) (result, error) {
	ctx := context.Background()
	t0 := time.Now()
	var sock string
	if c.Method == "client" || c.Method == "client-cmd" || c.Method == "exec-nfkeeper" {
		s, stop, err := startDaemon(c.Bin)
		if err != nil {
			return result{}, err
		}
		defer stop()
		sock = s
	}
	client := nfk.New(nfk.Options{Path: sock, MaxConns: c.Goroutines})
	defer client.Close()
	nfkEnv := func(mode string) []string {
		return append(os.Environ(), "NFKEEPER_MODE="+mode, "NFKEEPER_SOCKET="+sock)
	}
	var app appender
	var preload func() error
	var count func() (int, error)
	switch c.Method {
	case "client", "client-cmd", "exec-nfkeeper":
		preload = func() error {
			return client.Restore(ctx, nfk.IPv4, preloadText(c.Preload), nfk.RestoreOptions{Noflush: true})
		}
		count = func() (int, error) {
			out, err := client.Iptables(ctx, nfk.IPv4, "-S", "X")
			return strings.Count(string(out.Stdout), "-A X "), err
		}
	case "exec-nfkeeper-direct":
		preload = func() error {
			return run(nil, preloadText(c.Preload), nfkEnv("direct"), c.Bin, "iptables-restore", "--noflush")
		}
		count = func() (int, error) {
			var out bytes.Buffer
			err := run(&out, nil, nfkEnv("direct"), c.Bin, "iptables", "-S", "X")
			return strings.Count(out.String(), "-A X "), err
		}
	case "exec-iptables-nft":
		preload = func() error {
			return run(nil, preloadText(c.Preload), nil, "iptables-nft-restore", "--noflush")
		}
		count = func() (int, error) {
			var out bytes.Buffer
			err := run(&out, nil, nil, "iptables-nft", "-S", "X")
			return strings.Count(out.String(), "-A X "), err
		}
	default:
		return result{}, fmt.Errorf("unknown method %q", c.Method)
	}
	switch c.Method {
	case "client":
		app = func(ctx context.Context, g, i int) error {
			tx := client.NewTransaction(nfk.IPv4)
			tx.Add(&nfk.Rule{Chain: "X", Spec: rule(g, i)})
			return client.Run(ctx, tx)
		}
	case "client-cmd":
		app = func(ctx context.Context, g, i int) error {
			_, err := client.Iptables(ctx, nfk.IPv4, append([]string{"-A", "X"}, rule(g, i)...)...)
			return err
		}
	case "exec-nfkeeper":
		app = func(_ context.Context, g, i int) error {
			return run(nil, nil, nfkEnv("daemon"), c.Bin, append([]string{"iptables", "-w", "-A", "X"}, rule(g, i)...)...)
		}
	case "exec-nfkeeper-direct":
		app = func(_ context.Context, g, i int) error {
			return run(nil, nil, nfkEnv("direct"), c.Bin, append([]string{"iptables", "-w", "-A", "X"}, rule(g, i)...)...)
		}
	case "exec-iptables-nft":
		app = func(_ context.Context, g, i int) error {
			return run(nil, nil, nil, "iptables-nft", append([]string{"-w", "-A", "X"}, rule(g, i)...)...)
		}
	}
	if err := preload(); err != nil {
		return result{}, fmt.Errorf("preload: %w", err)
	}
	r := result{Method: c.Method, SingleN: c.Single}
	lat := make([]float64, 0, c.Single)
	for i := range c.Single {
		t := time.Now()
		if err := app(ctx, 250, i); err != nil {
			return r, fmt.Errorf("append %d: %w", i, err)
		}
		lat = append(lat, float64(time.Since(t).Nanoseconds())/1e3)
	}
	r.P50, r.P99 = pct(lat, 0.5), pct(lat, 0.99)
	per := (c.Concurrent + c.Goroutines - 1) / c.Goroutines
	r.ConcN = per * c.Goroutines
	all := make([][]float64, c.Goroutines)
	errs := make([]error, c.Goroutines)
	var wg sync.WaitGroup
	tc := time.Now()
	for g := range c.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				t := time.Now()
				if err := app(ctx, g, i); err != nil {
					errs[g] = err
					return
				}
				all[g] = append(all[g], float64(time.Since(t).Nanoseconds())/1e3)
			}
		}()
	}
	wg.Wait()
	r.Rate = float64(r.ConcN) / time.Since(tc).Seconds()
	var merged []float64
	for g := range all {
		if errs[g] != nil {
			return r, fmt.Errorf("goroutine %d: %w", g, errs[g])
		}
		merged = append(merged, all[g]...)
	}
	r.CP50, r.CP99 = pct(merged, 0.5), pct(merged, 0.99)
	n, err := count()
	if err != nil {
		return r, fmt.Errorf("counting: %w", err)
	}
	if want := c.Preload + c.Single + r.ConcN; n != want {
		return r, fmt.Errorf("%d rules in X, want %d", n, want)
	}
	r.FinalRules = n
	r.WallSeconds = time.Since(t0).Seconds()
	return r, nil
}

// pct is the p-quantile (nearest rank) of v, sorted in place.
func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return v[int(float64(len(v)-1)*p+0.5)]
}

// run runs argv with env (nil: inherited) and stdin, its stdout into out;
// a failure carries its stderr.
func run(out *bytes.Buffer, stdin []byte, env []string, argv0 string, args ...string) error {
	cmd := exec.Command(argv0, args...)
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if out != nil {
		cmd.Stdout = out
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", argv0, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// startDaemon starts `nfkeeper serve` in this namespace, killed with this
// process; returns its socket and a stop function.
func startDaemon(bin string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "nfkbench-")
	if err != nil {
		return "", nil, err
	}
	sock := dir + "/nfk.sock"
	cmd := exec.Command(bin, "serve", "--quiet", "--socket", sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	for t0 := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock, stop, nil
		}
		if time.Since(t0) > 30*time.Second {
			stop()
			return "", nil, fmt.Errorf("nfkeeper serve did not start")
		}
	}
}
