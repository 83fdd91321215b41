// Package nstest runs nfkeeper's daemon in a network namespace of its own
// for integration tests and benchmarks: it never touches the caller's
// namespace, and removes what it creates (also when a test fails).
package nstest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// BinEnv names the environment variable holding the nfkeeper binary's
// path (cargo build --release -p nfkeeper: target/release/nfkeeper).
const BinEnv = "NFKEEPER_BIN"

// prefix of the namespaces this package creates: nfk-go-<pid>-<n>.
const prefix = "nfk-go-"

var seq atomic.Int64

// Unavailable says why integration tests cannot run here ("" when they
// can): no root, no binary, or no way to create a network namespace.
func Unavailable() string {
	if os.Geteuid() != 0 {
		return "integration tests need root (network namespaces)"
	}
	bin := os.Getenv(BinEnv)
	if bin == "" {
		return "set " + BinEnv + " to the nfkeeper binary (cargo build --release -p nfkeeper)"
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return fmt.Sprintf("%s=%s is not a file", BinEnv, bin)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "no ip(8) to create network namespaces"
	}
	return ""
}

// Bin is the nfkeeper binary named by $NFKEEPER_BIN.
func Bin() string { return os.Getenv(BinEnv) }

// Namespace is a named network namespace (ip netns), deleted by Close.
type Namespace struct {
	Name string
}

// NewNamespace creates a fresh network namespace with loopback up.
func NewNamespace() (*Namespace, error) {
	name := fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), seq.Add(1))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add %s: %v: %s", name, err, out)
	}
	ns := &Namespace{Name: name}
	if out, err := ns.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		ns.Close()
		return nil, fmt.Errorf("lo up in %s: %v: %s", name, err, out)
	}
	return ns, nil
}

// Close deletes the namespace.
func (ns *Namespace) Close() error {
	out, err := exec.Command("ip", "netns", "del", ns.Name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip netns del %s: %v: %s", ns.Name, err, out)
	}
	return nil
}

// Path is the namespace's bind mount, for nsenter --net=.
func (ns *Namespace) Path() string { return "/run/netns/" + ns.Name }

// Command is argv run inside the namespace (through nsenter, cheaper than
// ip netns exec).
func (ns *Namespace) Command(argv ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=" + ns.Path()}, argv...)...)
}

// RemoveStale deletes namespaces an earlier run of this package left
// behind (its process killed before it could clean up): those named with
// the prefix whose process is gone.
func RemoveStale() {
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		_ = exec.Command("ip", "netns", "del", e.Name()).Run()
	}
}

// Daemon is `nfkeeper serve` running in a namespace.
type Daemon struct {
	Socket string
	cmd    *exec.Cmd
	log    string
	exited chan error
	// dir is the temporary directory StartDaemon made for the socket.
	dir string
}

// StartDaemon starts `nfkeeper serve --quiet --socket SOCK EXTRA...` in ns
// with its socket in a new temporary directory, and waits until it
// accepts connections (at most 10s).
func StartDaemon(ns *Namespace, extra ...string) (*Daemon, error) {
	dir, err := os.MkdirTemp("", "nfk-go-daemon-")
	if err != nil {
		return nil, err
	}
	d, err := StartDaemonAt(ns, filepath.Join(dir, "nfk.sock"), extra...)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	d.dir = dir
	return d, nil
}

// StartDaemonAt is StartDaemon with the socket at path (its log next to
// it, path + ".log").
func StartDaemonAt(ns *Namespace, path string, extra ...string) (*Daemon, error) {
	d := &Daemon{Socket: path, log: path + ".log"}
	logf, err := os.Create(d.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := append([]string{Bin(), "serve", "--quiet", "--socket", d.Socket}, extra...)
	d.cmd = ns.Command(args...)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	d.exited = make(chan error, 1)
	go func() { d.exited <- d.cmd.Wait() }()
	for t0 := time.Now(); ; {
		if c, err := net.Dial("unix", d.Socket); err == nil {
			c.Close()
			return d, nil
		}
		select {
		case err := <-d.exited:
			d.exited <- err
			log := d.Log()
			d.Stop()
			return nil, fmt.Errorf("nfkeeper serve exited (%v): %s", err, log)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(t0) > 10*time.Second {
			log := d.Log()
			d.Stop()
			return nil, errors.New("nfkeeper serve did not start within 10s: " + log)
		}
	}
}

// Log is what the daemon wrote so far.
func (d *Daemon) Log() string {
	b, _ := os.ReadFile(d.log)
	return string(b)
}

// Stop kills the daemon, waits for it, and removes its socket and log
// (and the directory StartDaemon made). Call it once.
func (d *Daemon) Stop() {
	_ = d.cmd.Process.Kill()
	<-d.exited
	_ = os.Remove(d.Socket)
	_ = os.Remove(d.log)
	if d.dir != "" {
		_ = os.RemoveAll(d.dir)
	}
}

// Direct runs nfkeeper with args in ns in direct mode (reading the kernel
// itself, not through a daemon): the kernel's truth.
func Direct(ns *Namespace, args ...string) ([]byte, error) {
	c := ns.Command(append([]string{Bin()}, args...)...)
	c.Env = append(os.Environ(), "NFKEEPER_MODE=direct", "NFKEEPER_SOCKET=/nonexistent")
	out, err := c.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out, fmt.Errorf("nfkeeper %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
	}
	return out, err
}
