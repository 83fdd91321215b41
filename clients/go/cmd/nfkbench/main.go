// Command nfkbench measures the Go client against the ways kube-proxy-like
// controllers change iptables today, each in a fresh network namespace:
//
//   - client: one typed append per transaction through nfkeeper.Client
//     (the daemon started in the namespace);
//   - client-cmd: the same append as an iptables command line through
//     Client.Iptables;
//   - exec-iptables-nft: one `iptables-nft -w -A` process per append;
//   - exec-nfkeeper: one `nfkeeper iptables -w -A` process per append,
//     through the daemon;
//   - exec-nfkeeper-direct: the same in direct mode (no daemon).
//
// For each: single-operation latency (p50/p99 of sequential appends) and
// concurrent appends/s with G goroutines (64), onto a chain preloaded with
// P rules (1000). Rules are CF-shaped (`-s ADDR/32 -p tcp -m tcp --dport
// 8080 -j ACCEPT`), as in nfkeeper's own `bench daemon`.
//
// Usage (root): nfkbench -bin target/release/nfkeeper [-methods a,b]
// [-preload N] [-single N] [-single-exec N] [-goroutines G] [-concurrent N]
// [-concurrent-exec N]. The namespaces are removed at the end, also on
// SIGINT/SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/nfkeeper/nfkeeper/clients/go/internal/nstest"
)

// config is what the outer process passes to each inner run.
type config struct {
	Method         string
	Bin            string
	Preload        int
	Single         int
	Goroutines     int
	Concurrent     int
	RunsCompiled   bool
	CommandLineArg string
}

// result is what one inner run reports (latencies in µs).
type result struct {
	Method      string
	SingleN     int
	P50, P99    float64
	ConcN       int
	Rate        float64
	CP50, CP99  float64
	FinalRules  int
	WallSeconds float64
}

var allMethods = []string{"client", "client-cmd", "exec-iptables-nft", "exec-nfkeeper", "exec-nfkeeper-direct"}

func main() {
	inner := flag.String("inner", "", "internal: run one method in the current namespace (JSON config)")
	bin := flag.String("bin", os.Getenv(nstest.BinEnv), "nfkeeper binary (default $NFKEEPER_BIN)")
	methods := flag.String("methods", strings.Join(allMethods, ","), "methods to measure")
	preload := flag.Int("preload", 1000, "rules in the chain before measuring")
	single := flag.Int("single", 2000, "sequential appends (client methods)")
	singleExec := flag.Int("single-exec", 300, "sequential appends (exec methods)")
	goroutines := flag.Int("goroutines", 64, "concurrent goroutines")
	conc := flag.Int("concurrent", 6400, "concurrent appends in all (client methods)")
	concExec := flag.Int("concurrent-exec", 640, "concurrent appends in all (exec methods)")
	flag.Parse()
	if *inner != "" {
		var c config
		if err := json.Unmarshal([]byte(*inner), &c); err != nil {
			fail(err)
		}
		r, err := runInner(c)
		if err != nil {
			fail(err)
		}
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fail(err)
		}
		return
	}
	if os.Geteuid() != 0 {
		fail(fmt.Errorf("nfkbench needs root (it creates network namespaces)"))
	}
	if *bin == "" {
		fail(fmt.Errorf("no nfkeeper binary: -bin or $%s", nstest.BinEnv))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Setenv(nstest.BinEnv, *bin)
	nstest.RemoveStale()
	var results []result
	for _, m := range strings.Split(*methods, ",") {
		c := config{Method: m, Bin: *bin, Preload: *preload, Goroutines: *goroutines}
		if strings.HasPrefix(m, "exec-") {
			c.Single, c.Concurrent = *singleExec, *concExec
		} else {
			c.Single, c.Concurrent = *single, *conc
		}
		r, err := runInNamespace(ctx, c)
		if err != nil {
			fail(fmt.Errorf("%s: %w", m, err))
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%s: p50 %.0f µs, p99 %.0f µs; %d goroutines %.0f appends/s\n", m, r.P50, r.P99, c.Goroutines, r.Rate)
	}
	report(results, *preload, *goroutines)
}

// runInNamespace runs one method in a fresh namespace (deleted after).
func runInNamespace(ctx context.Context, c config) (result, error) {
	ns, err := nstest.NewNamespace()
	if err != nil {
		return result{}, err
	}
	defer ns.Close()
	arg, _ := json.Marshal(c)
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	cmd := exec.CommandContext(ctx, "nsenter", "--net="+ns.Path(), self, "-inner", string(arg))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.Output()
	if err != nil {
		return result{}, err
	}
	var r result
	err = json.Unmarshal(out, &r)
	return r, err
}

func report(rs []result, preload, goroutines int) {
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("nfkbench: %s, %d CPUs, load %s, %s, preload %d rules\n\n", host, runtime.NumCPU(),
		strings.Join(strings.Fields(string(load))[:3], " "), time.Now().UTC().Format(time.RFC3339), preload)
	fmt.Printf("| method | sequential appends | p50 µs | p99 µs | %d goroutines: appends | appends/s | p50 µs | p99 µs |\n", goroutines)
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rs {
		fmt.Printf("| %s | %d | %.0f | %.0f | %d | %.0f | %.0f | %.0f |\n", r.Method, r.SingleN, r.P50, r.P99, r.ConcN, r.Rate, r.CP50, r.CP99)
	}
	fmt.Printf("\ncommand: %s\n", strings.Join(os.Args, " "))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "nfkbench:", err)
	os.Exit(1)
}
