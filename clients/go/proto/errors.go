package proto

import (
	"errors"
	"fmt"
	"io"
)

// ErrClosed: the peer closed the connection cleanly before the first byte
// of a frame.
var ErrClosed = errors.New("the connection was closed")

// ErrClosedMidFrame: the connection closed inside a frame. errors.Is(err,
// io.ErrUnexpectedEOF) holds for it.
var ErrClosedMidFrame error = closedMidFrame{}

type closedMidFrame struct{}

func (closedMidFrame) Error() string {
	return "the connection was closed in the middle of a message"
}
func (closedMidFrame) Unwrap() error { return io.ErrUnexpectedEOF }

// TooLargeError: a frame announced Len bytes, more than the reader's limit
// Max; its body was not read.
type TooLargeError struct {
	Len, Max uint64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.Len, e.Max)
}

// BadVersionError: the frame carries a version this package does not
// speak.
type BadVersionError struct {
	Version byte
}

func (e *BadVersionError) Error() string {
	return fmt.Sprintf("unsupported protocol version %d (this side speaks version %d)", e.Version, Version)
}

// MalformedError: the frame does not follow the format; Why says where.
type MalformedError struct {
	Why string
}

func (e *MalformedError) Error() string { return "malformed message: " + e.Why }

func malformed(format string, a ...any) error {
	return &MalformedError{Why: fmt.Sprintf(format, a...)}
}

// TooBigToEncodeError: an item or the whole frame is 4 GiB or more, which
// the 32-bit lengths cannot express.
type TooBigToEncodeError struct {
	Len uint64
}

func (e *TooBigToEncodeError) Error() string {
	return fmt.Sprintf("a protocol frame or item of %d bytes does not fit in 32 bits", e.Len)
}
