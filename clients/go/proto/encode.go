package proto

import (
	"encoding/binary"
	"fmt"
	"math"
)

// enc appends body items to a frame under construction; the first length
// that does not fit in 32 bits is kept in err and later items are skipped.
type enc struct {
	b   []byte
	err error
}

func (e *enc) u8(v byte) { e.b = append(e.b, v) }
func (e *enc) u32(v uint32) {
	e.b = binary.BigEndian.AppendUint32(e.b, v)
}
func (e *enc) i32(v int32) { e.u32(uint32(v)) }
func (e *enc) bool(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *enc) len(n int) {
	if uint64(n) > math.MaxUint32 {
		if e.err == nil {
			e.err = &TooBigToEncodeError{Len: uint64(n)}
		}
		return
	}
	e.u32(uint32(n))
}
func (e *enc) bytes(b []byte) {
	e.len(len(b))
	e.b = append(e.b, b...)
}
func (e *enc) string(s string) {
	e.len(len(s))
	e.b = append(e.b, s...)
}
func (e *enc) optString(s *string) {
	if s == nil {
		e.u8(0)
		return
	}
	e.u8(1)
	e.string(*s)
}
func (e *enc) strings(l []string) {
	e.len(len(l))
	for _, s := range l {
		e.string(s)
	}
}
func (e *enc) family(f Family) error {
	if f != IPv4 && f != IPv6 {
		return fmt.Errorf("family %d is neither 4 nor 6", uint8(f))
	}
	e.u8(uint8(f))
	return nil
}

// frame appends one frame of type ty whose body body writes, then patches
// the length prefix in.
func frame(dst []byte, ty byte, body func(e *enc) error) ([]byte, error) {
	start := len(dst)
	e := enc{b: append(dst, 0, 0, 0, 0, Version, ty)}
	if err := body(&e); err != nil {
		return dst, err
	}
	if e.err != nil {
		return dst, e.err
	}
	n := len(e.b) - start - 4
	if uint64(n) > math.MaxUint32 {
		return dst, &TooBigToEncodeError{Len: uint64(n)}
	}
	binary.BigEndian.PutUint32(e.b[start:], uint32(n))
	return e.b, nil
}

// AppendRequest appends one whole request frame (length prefix included)
// to dst. It fails, leaving dst as it was, for a family other than IPv4 or
// IPv6, an op kind outside 1..=10, or a frame or item of 4 GiB or more.
func AppendRequest(dst []byte, r Request) ([]byte, error) {
	switch r := r.(type) {
	case *Iptables:
		return frame(dst, typeIptables, func(e *enc) error {
			if err := e.family(r.Family); err != nil {
				return err
			}
			e.string(r.Prog)
			e.strings(r.Args)
			return nil
		})
	case *Restore:
		return frame(dst, typeRestore, func(e *enc) error {
			if err := e.family(r.Family); err != nil {
				return err
			}
			e.string(r.Prog)
			e.bool(r.Noflush)
			e.bool(r.Counters)
			e.bool(r.Test)
			e.optString(r.Table)
			e.bytes(r.Payload)
			return nil
		})
	case *Save:
		return frame(dst, typeSave, func(e *enc) error {
			if err := e.family(r.Family); err != nil {
				return err
			}
			e.string(r.Prog)
			e.bool(r.Counters)
			e.optString(r.Table)
			return nil
		})
	case *Status:
		return frame(dst, typeStatus, func(*enc) error { return nil })
	case *Ops:
		return frame(dst, typeOps, func(e *enc) error {
			if err := e.family(r.Family); err != nil {
				return err
			}
			e.len(len(r.Ops))
			for i, op := range r.Ops {
				if op.Kind < OpAppend || op.Kind > OpCheck {
					return fmt.Errorf("op %d: kind %d is not 1..=10", i, uint8(op.Kind))
				}
				e.u8(uint8(op.Kind))
				e.string(op.Table)
				e.string(op.Chain)
				e.u32(op.Pos)
				e.strings(op.Rule)
			}
			return nil
		})
	case *Ipset:
		return frame(dst, typeIpset, func(e *enc) error {
			e.strings(r.Args)
			if !r.WithInput {
				e.u8(0)
				return nil
			}
			e.u8(1)
			e.bytes(r.Input)
			return nil
		})
	}
	return dst, fmt.Errorf("unknown request type %T", r)
}

// AppendReply appends one whole reply frame (length prefix included) to
// dst. It fails, leaving dst as it was, for a frame or item of 4 GiB or
// more.
func AppendReply(dst []byte, r Reply) ([]byte, error) {
	switch r := r.(type) {
	case Stdout:
		return frame(dst, typeStdout, func(e *enc) error { e.bytes(r); return nil })
	case Stderr:
		return frame(dst, typeStderr, func(e *enc) error { e.bytes(r); return nil })
	case Exit:
		return frame(dst, typeExit, func(e *enc) error { e.i32(int32(r)); return nil })
	case OpResults:
		return frame(dst, typeOpResults, func(e *enc) error {
			e.len(len(r))
			for _, res := range r {
				e.i32(res.Code)
				e.string(res.Message)
			}
			return nil
		})
	case *Error:
		return frame(dst, typeError, func(e *enc) error {
			e.i32(r.Code)
			e.string(r.Message)
			return nil
		})
	}
	return dst, fmt.Errorf("unknown reply type %T", r)
}
