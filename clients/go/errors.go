package nfkeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// Errors, by what they say about the request:
//
//   - *ConnectError: no daemon could be reached; nothing was sent.
//   - *ExchangeError: the exchange broke (the daemon went away, a
//     deadline passed, the context was canceled, garbage arrived) after the
//     request was perhaps sent: a write may or may not have been applied.
//   - *RefusedError: the daemon refused the request at the protocol level
//     (an Error frame: permission, malformed, too large, server busy).
//   - *ExitError: iptables, iptables-save or iptables-restore ran and
//     failed: its exit code and error output.
//   - *TxError: a transaction failed and applied nothing: the failing
//     operation (when known), its exit code and iptables' message.
//
// IsNotFound, IsExists and IsInUse classify the last three by iptables'
// message.

const maybeApplied = "the change may or may not have been applied"

// ConnectError: connecting to the daemon at Path failed; nothing was sent.
type ConnectError struct {
	Path string
	Err  error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("nfkeeper: cannot reach the daemon at %s: %v", e.Path, e.Err)
}
func (e *ConnectError) Unwrap() error { return e.Err }

// ExchangeError: the exchange with the daemon broke. Sent reports whether
// the whole request had been written: then the daemon may have applied
// it; when false it cannot have (it acts only on whole requests).
type ExchangeError struct {
	Err  error
	Sent bool
}

func (e *ExchangeError) Error() string {
	tail := maybeApplied
	if !e.Sent {
		tail = "the request was not sent"
	}
	switch {
	case errors.Is(e.Err, context.Canceled), errors.Is(e.Err, context.DeadlineExceeded):
		return fmt.Sprintf("nfkeeper: %v while talking to the daemon; %s", e.Err, tail)
	case errors.Is(e.Err, proto.ErrClosed), errors.Is(e.Err, proto.ErrClosedMidFrame), isClosed(e.Err):
		return "nfkeeper: the daemon closed the connection before answering; " + tail
	case isTimeout(e.Err):
		return "nfkeeper: the daemon did not answer in time; " + tail
	}
	return fmt.Sprintf("nfkeeper: broken exchange with the daemon (%v); %s", e.Err, tail)
}
func (e *ExchangeError) Unwrap() error { return e.Err }

// RefusedError: the daemon answered with an Error frame and closed the
// connection. Codes: 1 permission, 2 malformed request or unknown version,
// 3 stopping (CodeStopping), 4 too large or server busy.
type RefusedError struct {
	Code    int
	Message string
}

// CodeStopping is the Error frame code of a daemon that is stopping: it
// applied nothing of the request, which may be sent again (to the next
// daemon, or another way).
const CodeStopping = 3

func (e *RefusedError) Error() string { return "nfkeeper: " + e.Message }

// Stopping reports whether the daemon refused because it is stopping, so
// that nothing of the request was applied.
func (e *RefusedError) Stopping() bool { return e.Code == CodeStopping }

// ExitError: the program ran in the daemon and exited with Code (non-zero);
// Stderr is its error output.
type ExitError struct {
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	if m := strings.TrimRight(e.Stderr, "\n"); m != "" {
		return m
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// TxError: a transaction failed; nothing of it was applied. Index is the
// 0-based position of the failing operation in the transaction and Op the
// operation, or Index is -1 when the failure is the transaction's as a
// whole (a kernel refusal no single operation is known to have caused).
// Total is the number of operations, Code iptables' exit code and Message
// its error text.
type TxError struct {
	Index   int
	Op      proto.Op
	Total   int
	Code    int
	Message string
}

func (e *TxError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("transaction of %d operations failed: %s", e.Total, e.Message)
	}
	return fmt.Sprintf("operation %d of %d (%s) failed: %s",
		e.Index+1, e.Total, commandLine(e.Op), e.Message)
}

// message is iptables' error text of err, for classification.
func message(err error) (string, bool) {
	var tx *TxError
	var ex *ExitError
	switch {
	case errors.As(err, &tx):
		return tx.Message, true
	case errors.As(err, &ex):
		return ex.Stderr, true
	}
	return "", false
}

func hasAny(err error, texts ...string) bool {
	m, ok := message(err)
	if !ok {
		return false
	}
	for _, t := range texts {
		if strings.Contains(m, t) {
			return true
		}
	}
	return false
}

// IsNotFound: the chain, rule or rule number an operation named does not
// exist (or a -C found no matching rule).
func IsNotFound(err error) bool {
	return hasAny(err, "No chain/target/match by that name.",
		"Bad rule (does a matching rule exist in that chain?).",
		"Index of deletion too big.", "Index of replacement too big.",
		"Index of insertion too big.", "does not exist")
}

// IsExists: the chain an operation creates exists already.
func IsExists(err error) bool {
	return hasAny(err, "Chain already exists.", "File exists.")
}

// IsInUse: a chain cannot be deleted: rules jump to it, it still has
// rules, or it is built-in.
func IsInUse(err error) bool {
	return hasAny(err, "Too many links.", "Directory not empty.")
}
