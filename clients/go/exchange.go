package nfkeeper

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// longAgo is a deadline in the past: setting it makes blocked reads and
// writes on a connection return at once.
var longAgo = time.Unix(1, 0)

// Call sends req and hands each Stdout/Stderr chunk to sink as it arrives
// (sink may be nil; the chunk is only valid during the call). It returns
// the exit code and, for Ops, the per-operation results. An Error frame is
// a *RefusedError; a broken exchange an *ExchangeError.
//
// The context bounds the whole round trip: its deadline becomes the
// connection's, and canceling it closes the connection (the daemon may
// still apply a request it has received).
func (c *Client) Call(ctx context.Context, req proto.Request, sink func(proto.Reply)) (int, proto.OpResults, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, &ExchangeError{Err: err}
	}
	frame, err := proto.AppendRequest(nil, req)
	if err != nil {
		return 0, nil, err
	}
	for attempt := 0; ; attempt++ {
		cn, reused, err := c.get(ctx)
		if err != nil {
			return 0, nil, err
		}
		var code int
		var results proto.OpResults
		var sent bool
		// The deadline is set before the cancellation hook is armed, so a
		// cancellation always has the last word.
		dl, _ := ctx.Deadline()
		if err := cn.c.SetDeadline(dl); err != nil {
			c.drop(cn)
			return 0, nil, &ExchangeError{Err: err}
		}
		stop := context.AfterFunc(ctx, func() { _ = cn.c.SetDeadline(longAgo) })
		code, results, sent, err = c.exchange(ctx, cn, frame, sink)
		// A cancellation that fired once the reply was in may still move
		// the deadline: that connection is not reused either.
		if stop() && err == nil {
			c.put(cn)
		} else {
			c.drop(cn)
		}
		if err == nil {
			return code, results, nil
		}
		// A reused connection the daemon had closed in the meantime (its
		// idle timeout) refuses the write: nothing reached the daemon,
		// so the request goes again on a new connection. Not when the
		// deadline passed during the write (the context's timer may not
		// have marked it done yet): that is the caller's deadline.
		if reused && !sent && attempt == 0 && ctx.Err() == nil &&
			!errors.Is(err, context.DeadlineExceeded) {
			var ee *ExchangeError
			if errors.As(err, &ee) {
				continue
			}
		}
		return 0, nil, err
	}
}

// exchange sends one encoded request on cn and reads its reply; the caller has arranged for a
// canceled ctx to move cn's deadline into the past. sent reports whether
// the whole request was written (so the daemon may have applied it).
func (c *Client) exchange(ctx context.Context, cn *conn, frame []byte, sink func(proto.Reply)) (code int, results proto.OpResults, sent bool, err error) {
	fail := func(e error, sent bool) (int, proto.OpResults, bool, error) {
		if ce := ctx.Err(); ce != nil {
			e = ce
		} else if dl, ok := ctx.Deadline(); ok && isTimeout(e) && !time.Now().Before(dl) {
			// The socket's deadline (the context's) passed a moment
			// before the context's own timer marked it done.
			e = context.DeadlineExceeded
		}
		return 0, nil, sent, &ExchangeError{Err: e, Sent: sent}
	}
	_, werr := cn.c.Write(frame)
	if werr != nil {
		// The daemon acts only on whole frames: a request not written
		// whole was not applied.
		if ctx.Err() != nil {
			return fail(werr, false)
		}
		// A daemon that refused us wrote an Error frame before it closed:
		// that explains the failed write better than EPIPE.
		if r, rerr := c.next(cn); rerr == nil {
			if e, ok := r.(*proto.Error); ok {
				return 0, nil, false, &RefusedError{Code: int(e.Code), Message: e.Message}
			}
		}
		return fail(werr, false)
	}
	var res proto.OpResults
	seen := false
	for {
		r, err := c.next(cn)
		if err != nil {
			return fail(err, true)
		}
		switch r := r.(type) {
		case proto.Exit:
			return int(r), res, true, nil
		case *proto.Error:
			return 0, nil, true, &RefusedError{Code: int(r.Code), Message: r.Message}
		case proto.OpResults:
			if seen {
				return fail(&proto.MalformedError{Why: "two OpResults frames in one reply"}, true)
			}
			seen, res = true, r
		default:
			if sink != nil {
				sink(r)
			}
		}
	}
}

// next reads and decodes one reply frame into cn's buffer.
func (c *Client) next(cn *conn) (proto.Reply, error) {
	var err error
	cn.in, err = proto.ReadFrame(cn.c, c.maxReply, cn.in)
	if err != nil {
		return nil, err
	}
	return proto.DecodeReply(cn.in)
}

// isClosed: errors that mean the peer went away.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, net.ErrClosed)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
