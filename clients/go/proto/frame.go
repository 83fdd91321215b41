package proto

import (
	"encoding/binary"
	"errors"
	"io"
)

// eagerAlloc: bodies up to this size are allocated at once; larger ones
// grow with the bytes actually received, so a peer announcing a large frame
// and then stalling costs no more memory than it sent.
const eagerAlloc = 64 << 10

// ReadFrame reads one frame from r and returns its body (the bytes after
// the length prefix: version, type, body), reusing buf's storage.
//
// A clean close before the first byte is ErrClosed; a close inside the
// frame is ErrClosedMidFrame. A length above limit fails with
// *TooLargeError before any body byte is read or allocated; a length below
// 2 (no room for version and type) is *MalformedError. Other read errors
// (timeouts, resets) are returned as they are.
func ReadFrame(r io.Reader, limit int, buf []byte) ([]byte, error) {
	var head [4]byte
	if n, err := io.ReadFull(r, head[:]); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return buf[:0], ErrClosed
		}
		return buf[:0], readErr(err)
	}
	n := uint64(binary.BigEndian.Uint32(head[:]))
	if limit < 0 || n > uint64(limit) {
		return buf[:0], &TooLargeError{Len: n, Max: uint64(max(limit, 0))}
	}
	if n < 2 {
		return buf[:0], malformed("frame length %d leaves no room for the version and type bytes", n)
	}
	want := int(n)
	buf = buf[:0]
	for len(buf) < want {
		if len(buf) == cap(buf) {
			next := want
			if want > eagerAlloc {
				next = min(want, max(2*cap(buf), eagerAlloc))
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		end := min(cap(buf), want)
		k, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+k]
		if err != nil && len(buf) < want {
			return buf[:0], readErr(err)
		}
	}
	return buf, nil
}

// readErr maps an end of input inside a frame to ErrClosedMidFrame.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrClosedMidFrame
	}
	return err
}

// ReadRequest reads and decodes one request frame of at most limit bytes.
func ReadRequest(r io.Reader, limit int) (Request, error) {
	b, err := ReadFrame(r, limit, nil)
	if err != nil {
		return nil, err
	}
	return DecodeRequest(b)
}

// ReadReply reads and decodes one reply frame of at most limit bytes.
func ReadReply(r io.Reader, limit int) (Reply, error) {
	b, err := ReadFrame(r, limit, nil)
	if err != nil {
		return nil, err
	}
	return DecodeReply(b)
}

// WriteRequest writes one request frame with a single Write.
func WriteRequest(w io.Writer, r Request) error {
	b, err := AppendRequest(nil, r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteReply writes one reply frame with a single Write.
func WriteReply(w io.Writer, r Reply) error {
	b, err := AppendReply(nil, r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
