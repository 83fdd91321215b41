package nfkeeper_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// fakeDaemon is a scripted daemon on a unix socket: for every request it
// calls answer, which writes whatever frames (or bytes) it likes to the
// connection; returning false closes the connection.
type fakeDaemon struct {
	path     string
	ln       net.Listener
	accepted atomic.Int64
	// inFlight counts requests between their arrival and their answer.
	inFlight atomic.Int64
	maxIn    atomic.Int64
	wg       sync.WaitGroup
	answer   func(c net.Conn, req proto.Request) bool
}

func startFakeDaemon(t *testing.T, answer func(c net.Conn, req proto.Request) bool) *fakeDaemon {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{path: path, ln: ln, answer: answer}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.accepted.Add(1)
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				defer c.Close()
				for {
					req, err := proto.ReadRequest(c, proto.DefaultMaxRequest)
					if err != nil {
						return
					}
					n := d.inFlight.Add(1)
					for m := d.maxIn.Load(); n > m && !d.maxIn.CompareAndSwap(m, n); m = d.maxIn.Load() {
					}
					more := d.answer(c, req)
					d.inFlight.Add(-1)
					if !more {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return d
}

func send(c net.Conn, rs ...proto.Reply) {
	var b []byte
	for _, r := range rs {
		b, _ = proto.AppendReply(b, r)
	}
	_, _ = c.Write(b)
}

func TestIptablesStreamsAndExitCodes(t *testing.T) {
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
		r := req.(*proto.Iptables)
		if r.Prog != "ip6tables" || r.Family != proto.IPv6 {
			send(c, proto.Stderr("wrong request\n"), proto.Exit(99))
			return true
		}
		if r.Args[0] == "-S" {
			send(c, proto.Stdout("-P INPUT "), proto.Stderr("warn\n"), proto.Stdout("ACCEPT\n"), proto.Exit(0))
		} else {
			send(c, proto.Stderr("ip6tables: No chain/target/match by that name.\n"), proto.Exit(1))
		}
		return true
	})
	c := nfk.New(nfk.Options{Path: d.path})
	defer c.Close()
	ctx := context.Background()
	o, err := c.Iptables(ctx, nfk.IPv6, "-S")
	if err != nil || string(o.Stdout) != "-P INPUT ACCEPT\n" || string(o.Stderr) != "warn\n" || o.Code != 0 {
		t.Fatalf("%+v %v", o, err)
	}
	o, err = c.Iptables(ctx, nfk.IPv6, "-A", "NOPE", "-j", "ACCEPT")
	var ee *nfk.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || o.Code != 1 || !nfk.IsNotFound(err) ||
		err.Error() != "ip6tables: No chain/target/match by that name." {
		t.Fatalf("%+v %v", o, err)
	}
	if n := d.accepted.Load(); n != 1 {
		t.Fatalf("%d connections for two sequential requests", n)
	}
}

func TestSaveRestoreStatusRequests(t *testing.T) {
	var got []proto.Request
	var mu sync.Mutex
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		switch req.(type) {
		case *proto.Save:
			send(c, proto.Stdout("*filter\n"), proto.Stdout("COMMIT\n"), proto.Exit(0))
		case *proto.Restore:
			send(c, proto.Stderr("iptables-restore: line 2 failed\n"), proto.Exit(1))
		case *proto.Status:
			send(c, proto.Stdout("serving\n"), proto.Exit(0))
		case *proto.Ipset:
			send(c, proto.Stderr("ipset v7.21: The set with the given name does not exist\n"), proto.Exit(1))
		}
		return true
	})
	c := nfk.New(nfk.Options{Path: d.path})
	ctx := context.Background()
	out, err := c.Save(ctx, nfk.IPv4, nfk.SaveOptions{Table: "nat", Counters: true})
	if err != nil || string(out) != "*filter\nCOMMIT\n" {
		t.Fatalf("%q %v", out, err)
	}
	err = c.Restore(ctx, nfk.IPv6, []byte("*filter\nbad\n"), nfk.RestoreOptions{Noflush: true, Test: true})
	if err == nil || err.Error() != "iptables-restore: line 2 failed" {
		t.Fatalf("%v", err)
	}
	st, err := c.Status(ctx)
	if err != nil || st != "serving\n" {
		t.Fatalf("%q %v", st, err)
	}
	o, err := c.Ipset(ctx, "add", "nosuch", "10.0.0.1")
	var ee *nfk.ExitError
	if !errors.As(err, &ee) || o.Code != 1 || ee.Stderr != "ipset v7.21: The set with the given name does not exist\n" {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := c.IpsetRestore(ctx, nil, "-exist"); !errors.As(err, &ee) {
		t.Fatalf("%v", err)
	}
	nat := "nat"
	want := []proto.Request{
		&proto.Save{Family: proto.IPv4, Prog: "iptables-save", Counters: true, Table: &nat},
		&proto.Restore{Family: proto.IPv6, Prog: "ip6tables-restore", Noflush: true, Test: true, Payload: []byte("*filter\nbad\n")},
		&proto.Status{},
		&proto.Ipset{Args: []string{"add", "nosuch", "10.0.0.1"}},
		&proto.Ipset{Args: []string{"-exist", "restore"}, WithInput: true},
	}
	for i := range want {
		a, _ := proto.AppendRequest(nil, got[i])
		b, _ := proto.AppendRequest(nil, want[i])
		if !bytes.Equal(a, b) {
			t.Errorf("request %d: %#v, want %#v", i, got[i], want[i])
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestSaveToStopsWritingOnError(t *testing.T) {
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
		send(c, proto.Stdout("a"), proto.Stdout("b"), proto.Exit(0))
		return true
	})
	c := nfk.New(nfk.Options{Path: d.path})
	if err := c.SaveTo(context.Background(), nfk.IPv4, nfk.SaveOptions{}, failingWriter{}); err == nil || err.Error() != "disk full" {
		t.Fatalf("%v", err)
	}
	// The reply was read to its end: the connection serves the next request.
	if _, err := c.Save(context.Background(), nfk.IPv4, nfk.SaveOptions{}); err != nil || d.accepted.Load() != 1 {
		t.Fatalf("%v, %d connections", err, d.accepted.Load())
	}
}

func TestRunNamesTheFailingOperation(t *testing.T) {
	cases := []struct {
		name    string
		results proto.OpResults
		code    int32
		want    string
	}{
		{"ok", proto.OpResults{{}, {}}, 0, "<nil>"},
		{"second fails", proto.OpResults{{Message: "not applied"}, {Code: 1, Message: "nfkeeper: No chain/target/match by that name."}}, 1,
			"operation 2 of 2 (-t filter -A NOPE -j ACCEPT) failed: nfkeeper: No chain/target/match by that name."},
		{"unknown which", proto.OpResults{{Code: 4, Message: "busy"}, {Code: 4, Message: "busy"}}, 4,
			"transaction of 2 operations failed: busy"},
	}
	for _, tc := range cases {
		d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
			send(c, tc.results, proto.Exit(tc.code))
			return true
		})
		c := nfk.New(nfk.Options{Path: d.path})
		tx := c.NewTransaction(nfk.IPv4)
		tx.Add(&nfk.Chain{Name: "SVC"})
		tx.Add(&nfk.Rule{Chain: "NOPE", Spec: []string{"-j", "ACCEPT"}})
		err := c.Run(context.Background(), tx)
		if got := errString(err); got != tc.want {
			t.Errorf("%s: %s", tc.name, got)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestMalformedAnswers(t *testing.T) {
	cases := []struct {
		name  string
		reply []proto.Reply
		raw   []byte
		want  string
	}{
		{"too few results", []proto.Reply{proto.OpResults{{}}, proto.Exit(0)}, nil,
			"nfkeeper: broken exchange with the daemon (malformed message: 1 results for 2 operations); the change may or may not have been applied"},
		{"two result frames", []proto.Reply{proto.OpResults{{}, {}}, proto.OpResults{{}, {}}, proto.Exit(0)}, nil,
			"nfkeeper: broken exchange with the daemon (malformed message: two OpResults frames in one reply); the change may or may not have been applied"},
		{"no results", []proto.Reply{proto.Stderr("nfkeeper: writer stopped\n"), proto.Exit(1)}, nil,
			"nfkeeper: writer stopped"},
		{"error frame", []proto.Reply{&proto.Error{Code: 4, Message: "server busy"}}, nil, "nfkeeper: server busy"},
		{"garbage", nil, []byte{0, 0, 0, 2, 1, 1},
			"nfkeeper: broken exchange with the daemon (malformed message: unknown reply type 0x01); the change may or may not have been applied"},
		{"closed before answering", nil, []byte{},
			"nfkeeper: the daemon closed the connection before answering; the change may or may not have been applied"},
		{"closed inside a frame", nil, []byte{0, 0, 0, 9, 1},
			"nfkeeper: the daemon closed the connection before answering; the change may or may not have been applied"},
	}
	for _, tc := range cases {
		d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
			send(c, tc.reply...)
			_, _ = c.Write(tc.raw)
			return false
		})
		c := nfk.New(nfk.Options{Path: d.path})
		ops := []proto.Op{{Kind: proto.OpFlush, Table: "filter"}, {Kind: proto.OpDeleteChain, Table: "filter"}}
		_, err := c.Apply(context.Background(), nfk.IPv4, ops)
		if got := errString(err); got != tc.want {
			t.Errorf("%s: %s", tc.name, got)
		}
	}
}

func TestRefusedBeforeTheRequestIsRead(t *testing.T) {
	for _, tc := range []struct {
		code     int32
		message  string
		stopping bool
	}{
		{1, "permission denied: uid 65534 is not root", false},
		{nfk.CodeStopping, "the daemon is stopping; nothing was applied", true},
	} {
		path := filepath.Join(t.TempDir(), "d.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			send(c, &proto.Error{Code: tc.code, Message: tc.message})
			c.Close()
		}()
		c := nfk.New(nfk.Options{Path: path})
		// A large request: its write fails against the closed peer.
		err = c.Restore(context.Background(), nfk.IPv4, bytes.Repeat([]byte("#"), 4<<20), nfk.RestoreOptions{})
		ln.Close()
		var re *nfk.RefusedError
		if !errors.As(err, &re) || re.Code != int(tc.code) || re.Stopping() != tc.stopping || err.Error() != "nfkeeper: "+tc.message {
			t.Fatalf("code %d: %v", tc.code, err)
		}
	}
}

func TestUnencodableRequestsAreNotSent(t *testing.T) {
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool { return false })
	c := nfk.New(nfk.Options{Path: d.path})
	_, err := c.Iptables(context.Background(), nfk.Family(5), "-S")
	if errString(err) != "family 5 is neither 4 nor 6" || d.accepted.Load() != 0 {
		t.Fatalf("%v, %d connections", err, d.accepted.Load())
	}
}

func TestConnectError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.sock")
	_, err := nfk.Dial(context.Background(), path)
	var ce *nfk.ConnectError
	if !errors.As(err, &ce) || !errors.Is(err, syscall.ENOENT) || ce.Path != path {
		t.Fatalf("%v", err)
	}
	// A socket file nobody listens on.
	ln, _ := net.Listen("unix", path)
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	_, err = nfk.New(nfk.Options{Path: path}).Status(context.Background())
	if !errors.As(err, &ce) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("%v", err)
	}
}

func TestCancelMidRequestClosesTheConnection(t *testing.T) {
	release := make(chan struct{})
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
		if _, ok := req.(*proto.Status); ok {
			send(c, proto.Stdout("ok"), proto.Exit(0))
			return true
		}
		<-release // a slow write: the client gives up first
		send(c, proto.OpResults{{}}, proto.Exit(0))
		return true
	})
	defer close(release)
	c := nfk.New(nfk.Options{Path: d.path})
	cases := []struct {
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
		{func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
	}
	for _, tc := range cases {
		ctx, cancel := tc.ctx()
		t0 := time.Now()
		tx := nfk.NewTransaction(nfk.IPv4)
		tx.Add(&nfk.Chain{Name: "X"})
		err := c.Run(ctx, tx)
		cancel()
		var xe *nfk.ExchangeError
		if !errors.As(err, &xe) || !xe.Sent || !errors.Is(err, tc.want) {
			t.Fatalf("%v", err)
		}
		if !strings.Contains(err.Error(), "may or may not have been applied") {
			t.Fatalf("%v", err)
		}
		if d := time.Since(t0); d > 2*time.Second {
			t.Fatalf("returned after %v", d)
		}
	}
	// The abandoned connections are not reused: the next request gets a
	// fresh one and its own answer.
	st, err := c.Status(context.Background())
	if err != nil || st != "ok" || d.accepted.Load() != 3 {
		t.Fatalf("%q %v, %d connections", st, err, d.accepted.Load())
	}
	// A context already done sends nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Status(ctx)
	var xe *nfk.ExchangeError
	if !errors.As(err, &xe) || xe.Sent || !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func TestIdleConnectionClosedByTheDaemonIsReplaced(t *testing.T) {
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
		send(c, proto.Stdout("ok"), proto.Exit(0))
		return false // close after every answer, as an idle timeout would
	})
	c := nfk.New(nfk.Options{Path: d.path})
	for i := range 3 {
		if st, err := c.Status(context.Background()); err != nil || st != "ok" {
			t.Fatalf("request %d: %q %v", i, st, err)
		}
	}
	if n := d.accepted.Load(); n != 3 {
		t.Fatalf("%d connections", n)
	}
}

func TestConcurrentRequestsShareABoundedPool(t *testing.T) {
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
		r := req.(*proto.Iptables)
		time.Sleep(time.Millisecond)
		send(c, proto.Stdout(strings.Join(r.Args, " ")), proto.Exit(0))
		return true
	})
	c := nfk.New(nfk.Options{Path: d.path, MaxConns: 8, MaxIdle: 4})
	defer c.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64*10)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				want := strings.Repeat("x", g) + "-" + strings.Repeat("y", i)
				o, err := c.Iptables(context.Background(), nfk.IPv4, want)
				if err != nil {
					errs <- err
				} else if string(o.Stdout) != want {
					errs <- errors.New("crossed answers: " + string(o.Stdout) + " for " + want)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if m := d.maxIn.Load(); m > 8 {
		t.Fatalf("%d requests in flight at once, limit 8", m)
	}
	if n := d.accepted.Load(); n > 64*10/2 {
		t.Fatalf("%d connections for 640 requests: no reuse", n)
	}
}

func TestWaitingForAConnectionHonoursTheContext(t *testing.T) {
	release := make(chan struct{})
	d := startFakeDaemon(t, func(c net.Conn, req proto.Request) bool {
		<-release
		send(c, proto.Exit(0))
		return true
	})
	c := nfk.New(nfk.Options{Path: d.path, MaxConns: 1})
	done := make(chan error)
	go func() { _, err := c.Status(context.Background()); done <- err }()
	for d.accepted.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Status(ctx)
	var xe *nfk.ExchangeError
	if !errors.As(err, &xe) || xe.Sent || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("NFKEEPER_SOCKET", "/tmp/x.sock")
	if p := nfk.DefaultPath(); p != "/tmp/x.sock" {
		t.Fatal(p)
	}
	os.Unsetenv("NFKEEPER_SOCKET")
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/net", &st); err != nil {
		t.Skip("no /proc")
	}
	want := "/run/nfkeeper/net-" + strconvU(st.Ino) + ".sock"
	if p := nfk.DefaultPath(); p != want {
		t.Fatalf("%s, want %s", p, want)
	}
	if p := nfk.NamespacePath(); p != want {
		t.Fatalf("%s, want %s", p, want)
	}
}

func strconvU(v uint64) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
		if v == 0 {
			return string(b)
		}
	}
}
