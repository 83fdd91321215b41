package nfkeeper

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// Options configure a Client. The zero value is usable.
type Options struct {
	// Path of the daemon's socket; "" means DefaultPath().
	Path string
	// MaxConns bounds the connections open at once (callers beyond it
	// wait for one, or for their context); 0 means 64. The daemon serves
	// each connection with a thread and refuses more than its
	// --max-clients (1024 by default).
	MaxConns int
	// MaxIdle bounds the connections kept open between requests; 0 means
	// 16, negative means none (a connection per request).
	MaxIdle int
	// IdleTimeout: a connection idle this long is closed rather than
	// reused; 0 means 30s (the daemon closes connections idle for 60s by
	// default).
	IdleTimeout time.Duration
	// MaxReply bounds one reply frame; 0 means proto.DefaultMaxReply.
	MaxReply int
}

// Client talks to one nfkeeper daemon. It is safe for concurrent use: each
// request takes a connection from a small pool (a connection carries one
// request at a time) and gives it back when the reply has been read. A
// connection whose exchange failed or was canceled is closed, never
// reused.
type Client struct {
	path        string
	maxIdle     int
	idleTimeout time.Duration
	maxReply    int
	slots       chan struct{}

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

// maxKeptBuffer: a pooled connection keeps a reply buffer up to this size
// (the daemon sends output in frames of at most 1 MiB).
const maxKeptBuffer = 1<<20 + 64

// conn is one connection and its reply buffer (reused across requests).
type conn struct {
	c    *net.UnixConn
	in   []byte
	used time.Time
}

// New returns a client for the daemon at o.Path; it connects lazily, on
// the first request.
func New(o Options) *Client {
	c := &Client{
		path:        o.Path,
		maxIdle:     o.MaxIdle,
		idleTimeout: o.IdleTimeout,
		maxReply:    o.MaxReply,
	}
	if c.path == "" {
		c.path = DefaultPath()
	}
	if c.maxIdle == 0 {
		c.maxIdle = 16
	}
	if c.idleTimeout == 0 {
		c.idleTimeout = 30 * time.Second
	}
	if c.maxReply == 0 {
		c.maxReply = proto.DefaultMaxReply
	}
	n := o.MaxConns
	if n <= 0 {
		n = 64
	}
	c.slots = make(chan struct{}, n)
	return c
}

// Dial returns a client for the daemon at path ("" for DefaultPath())
// after checking that it answers: a *ConnectError means no daemon serves
// that path (callers may fall back to running iptables themselves).
func Dial(ctx context.Context, path string) (*Client, error) {
	c := New(Options{Path: path})
	cn, _, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	c.put(cn)
	return c, nil
}

// Path is the socket path the client connects to.
func (c *Client) Path() string { return c.path }

// Close closes the idle connections; requests in flight finish, and their
// connections are closed afterwards. Requests after Close fail.
func (c *Client) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	for _, cn := range idle {
		cn.c.Close()
	}
	return nil
}

var errClientClosed = errors.New("client closed")

// get takes a connection slot, then an idle connection (reused reports
// true) or a new one. The caller gives both back with put or drop.
func (c *Client) get(ctx context.Context) (cn *conn, reused bool, err error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, &ExchangeError{Err: ctx.Err()}
	}
	now := time.Now()
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			<-c.slots
			return nil, false, &ConnectError{Path: c.path, Err: errClientClosed}
		}
		n := len(c.idle)
		if n == 0 {
			c.mu.Unlock()
			break
		}
		cn = c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		if now.Sub(cn.used) < c.idleTimeout && !peerGone(cn.c) {
			return cn, true, nil
		}
		cn.c.Close()
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		<-c.slots
		if ce := ctx.Err(); ce != nil {
			err = ce
		} else if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			err = context.DeadlineExceeded
		}
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		var sc *os.SyscallError
		if errors.As(err, &sc) {
			err = sc.Err
		}
		return nil, false, &ConnectError{Path: c.path, Err: err}
	}
	return &conn{c: nc.(*net.UnixConn)}, false, nil
}

// put gives back a connection that finished a round trip cleanly.
func (c *Client) put(cn *conn) {
	cn.used = time.Now()
	if cap(cn.in) > maxKeptBuffer {
		cn.in = nil
	}
	c.mu.Lock()
	keep := !c.closed && len(c.idle) < c.maxIdle
	if keep {
		c.idle = append(c.idle, cn)
	}
	c.mu.Unlock()
	if !keep {
		cn.c.Close()
	}
	<-c.slots
}

// drop closes a connection whose exchange failed and frees its slot.
func (c *Client) drop(cn *conn) {
	cn.c.Close()
	<-c.slots
}

// peerGone reports whether an idle connection is no longer usable: the
// daemon closed it (idle timeout, restart) or, against the protocol, sent
// something unasked. One non-blocking peek.
func peerGone(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return true
	}
	gone := true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, e := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = e != syscall.EAGAIN && e != syscall.EWOULDBLOCK
		return true
	})
	return gone || err != nil
}
