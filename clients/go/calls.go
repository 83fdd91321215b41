package nfkeeper

import (
	"bytes"
	"context"
	"io"
	"strconv"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// Family is the address family of a request.
type Family = proto.Family

const (
	IPv4 = proto.IPv4
	IPv6 = proto.IPv6
)

// prog is the program name the daemon uses in messages, as argv[0] would
// be: "iptables", "ip6tables-save", ...
func prog(f Family, suffix string) string {
	if f == IPv6 {
		return "ip6tables" + suffix
	}
	return "iptables" + suffix
}

// Output is everything a command printed, and its exit code.
type Output struct {
	Stdout []byte
	Stderr []byte
	Code   int
}

// Iptables runs one iptables (ip6tables for IPv6) command line, args
// without argv[0], in the daemon, exactly as the CLI would. A non-zero exit
// is an *ExitError; the Output is returned either way.
func (c *Client) Iptables(ctx context.Context, family Family, args ...string) (*Output, error) {
	req := &proto.Iptables{Family: family, Prog: prog(family, ""), Args: args}
	return c.collect(ctx, req)
}

func (c *Client) collect(ctx context.Context, req proto.Request) (*Output, error) {
	o := &Output{}
	code, _, err := c.Call(ctx, req, func(r proto.Reply) {
		switch r := r.(type) {
		case proto.Stdout:
			o.Stdout = append(o.Stdout, r...)
		case proto.Stderr:
			o.Stderr = append(o.Stderr, r...)
		}
	})
	if err != nil {
		return nil, err
	}
	o.Code = code
	if code != 0 {
		return o, &ExitError{Code: code, Stderr: string(o.Stderr)}
	}
	return o, nil
}

// SaveOptions are iptables-save's options.
type SaveOptions struct {
	// Table limits the output to one table (--table); "" means all.
	Table string
	// Counters includes packet and byte counters (--counters).
	Counters bool
}

// Save returns iptables-save's output for family.
func (c *Client) Save(ctx context.Context, family Family, opts SaveOptions) ([]byte, error) {
	var b bytes.Buffer
	if err := c.SaveTo(ctx, family, opts, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SaveTo streams iptables-save's output to w as it arrives (a large
// ruleset comes in chunks). A failed write to w ends the call with that
// error; the rest of the reply is read and dropped.
func (c *Client) SaveTo(ctx context.Context, family Family, opts SaveOptions, w io.Writer) error {
	req := &proto.Save{Family: family, Prog: prog(family, "-save"), Counters: opts.Counters, Table: optional(opts.Table)}
	var stderr []byte
	var werr error
	code, _, err := c.Call(ctx, req, func(r proto.Reply) {
		switch r := r.(type) {
		case proto.Stdout:
			if werr == nil {
				_, werr = w.Write(r)
			}
		case proto.Stderr:
			stderr = append(stderr, r...)
		}
	})
	switch {
	case err != nil:
		return err
	case code != 0:
		return &ExitError{Code: code, Stderr: string(stderr)}
	}
	return werr
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// RestoreOptions are iptables-restore's options.
type RestoreOptions struct {
	// Noflush keeps what the input does not mention (--noflush).
	Noflush bool
	// Counters restores packet and byte counters (--counters).
	Counters bool
	// Test only checks the input (--test).
	Test bool
	// Table restores only this table (--table); "" means all.
	Table string
}

// Restore runs iptables-restore with payload as its input: all of it is
// applied or none. A failure is an *ExitError with iptables-restore's
// message (which names the failing line).
func (c *Client) Restore(ctx context.Context, family Family, payload []byte, opts RestoreOptions) error {
	req := &proto.Restore{Family: family, Prog: prog(family, "-restore"), Noflush: opts.Noflush,
		Counters: opts.Counters, Test: opts.Test, Table: optional(opts.Table), Payload: payload}
	_, err := c.collect(ctx, req)
	return err
}

// Ipset runs one ipset command line, args without argv[0], in the daemon,
// exactly as `nfkeeper ipset` would: same output, messages and exit code.
// A non-zero exit is an *ExitError; the Output is returned either way.
func (c *Client) Ipset(ctx context.Context, args ...string) (*Output, error) {
	return c.collect(ctx, &proto.Ipset{Args: args})
}

// IpsetRestore runs `ipset restore` (with global options such as "-exist"
// in args) on input, as one transaction: every line or none.
func (c *Client) IpsetRestore(ctx context.Context, input []byte, args ...string) (*Output, error) {
	req := &proto.Ipset{Args: append(append([]string(nil), args...), "restore"), WithInput: true, Input: input}
	return c.collect(ctx, req)
}

// Status returns the daemon's status text.
func (c *Client) Status(ctx context.Context) (string, error) {
	o, err := c.collect(ctx, &proto.Status{})
	if err != nil {
		return "", err
	}
	return string(o.Stdout), nil
}

// Apply sends typed operations, applied by the daemon as one transaction,
// and returns one result per operation: all codes 0 when it was applied;
// otherwise nothing was applied, the failing operation's result carries
// iptables' code and message, and the others say "not applied" (or, when
// no single operation is known to have failed, each carries the error).
// Run wraps this with a *TxError.
func (c *Client) Apply(ctx context.Context, family Family, ops []proto.Op) (proto.OpResults, error) {
	var stderr []byte
	code, res, err := c.Call(ctx, &proto.Ops{Family: family, Ops: ops}, func(r proto.Reply) {
		if e, ok := r.(proto.Stderr); ok {
			stderr = append(stderr, e...)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(res) == len(ops) {
		return res, nil
	}
	if len(res) == 0 && code != 0 {
		return nil, &ExitError{Code: code, Stderr: string(stderr)}
	}
	return nil, &ExchangeError{Sent: true, Err: &proto.MalformedError{
		Why: strconv.Itoa(len(res)) + " results for " + strconv.Itoa(len(ops)) + " operations"}}
}

// NewTransaction returns an empty transaction for family.
func (c *Client) NewTransaction(family Family) *Transaction { return NewTransaction(family) }

// Run applies tx in the daemon as one transaction: all of its operations
// or none. A failure is a *TxError naming the failing operation; an empty
// transaction is not sent.
func (c *Client) Run(ctx context.Context, tx *Transaction) error {
	if tx.err != nil {
		return tx.err
	}
	if len(tx.ops) == 0 {
		return nil
	}
	res, err := c.Apply(ctx, tx.family, tx.ops)
	if err != nil {
		return err
	}
	return txResult(tx.ops, res)
}

// txResult turns per-operation results into Run's error: nil when all
// succeeded, else a *TxError naming the failing operation when exactly one
// result has a non-zero code (Index -1 when several do: the daemon did not
// know which operation caused the failure).
func txResult(ops []proto.Op, res proto.OpResults) error {
	failed := -1
	for i, r := range res {
		if r.Code == 0 {
			continue
		}
		if failed >= 0 {
			return &TxError{Index: -1, Total: len(ops), Code: int(r.Code), Message: r.Message}
		}
		failed = i
	}
	if failed < 0 {
		return nil
	}
	r := res[failed]
	return &TxError{Index: failed, Op: ops[failed], Total: len(ops), Code: int(r.Code), Message: r.Message}
}
