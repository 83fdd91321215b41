package proto

import (
	"encoding/binary"
	"unicode/utf8"
)

// Smallest encodings of list items: a count claiming more items than the
// bytes left could hold is refused, so a count never sizes an allocation
// beyond the input.
const (
	minString   = 4
	minOp       = 1 + 4 + 4 + 4 + 4
	minOpResult = 4 + 4
)

// dec reads a frame body; every read names the field it is for, so a
// malformed frame is reported with the field and offset at fault (in the
// reference implementation's words).
type dec struct {
	b  []byte
	at int
}

func (d *dec) take(n uint64, what string) ([]byte, error) {
	left := uint64(len(d.b) - d.at)
	if n > left {
		return nil, malformed("truncated: %s needs %d bytes at offset %d, %d left", what, n, d.at, left)
	}
	s := d.b[d.at : d.at+int(n)]
	d.at += int(n)
	return s, nil
}

func (d *dec) u8(what string) (byte, error) {
	s, err := d.take(1, what)
	if err != nil {
		return 0, err
	}
	return s[0], nil
}

func (d *dec) u32(what string) (uint32, error) {
	s, err := d.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(s), nil
}

func (d *dec) i32(what string) (int32, error) {
	v, err := d.u32(what)
	return int32(v), err
}

func (d *dec) bool(what string) (bool, error) {
	at := d.at
	v, err := d.u8(what)
	if err != nil {
		return false, err
	}
	switch v {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, malformed("%s at offset %d is %d, not a bool (0 or 1)", what, at, v)
}

// bytes returns nil for an empty item, else a copy (the frame buffer is
// reused by the reader).
func (d *dec) bytes(what string) ([]byte, error) {
	n, err := d.u32(what)
	if err != nil {
		return nil, err
	}
	s, err := d.take(uint64(n), what)
	if err != nil || n == 0 {
		return nil, err
	}
	return append([]byte(nil), s...), nil
}

func (d *dec) string(what string) (string, error) {
	at := d.at
	n, err := d.u32(what)
	if err != nil {
		return "", err
	}
	s, err := d.take(uint64(n), what)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(s) {
		return "", malformed("%s at offset %d is not UTF-8", what, at)
	}
	return string(s), nil
}

func (d *dec) optString(what string) (*string, error) {
	at := d.at
	tag, err := d.u8(what)
	if err != nil {
		return nil, err
	}
	switch tag {
	case 0:
		return nil, nil
	case 1:
		s, err := d.string(what)
		if err != nil {
			return nil, err
		}
		return &s, nil
	}
	return nil, malformed("%s at offset %d has option tag %d, not 0 or 1", what, at, tag)
}

// count reads a list count, refused when the bytes left cannot hold that
// many items of at least minItem bytes (so it may size an allocation).
func (d *dec) count(what string, minItem int) (int, error) {
	n, err := d.u32(what)
	if err != nil {
		return 0, err
	}
	left := len(d.b) - d.at
	if uint64(n) > uint64(left/minItem) {
		return 0, malformed("%s of %d items cannot fit in the %d bytes left", what, n, left)
	}
	return int(n), nil
}

func (d *dec) strings(what string) ([]string, error) {
	n, err := d.count(what, minString)
	if err != nil || n == 0 {
		return nil, err
	}
	v := make([]string, 0, n)
	for range n {
		s, err := d.string(what)
		if err != nil {
			return nil, err
		}
		v = append(v, s)
	}
	return v, nil
}

func (d *dec) family() (Family, error) {
	at := d.at
	v, err := d.u8("family")
	if err != nil {
		return 0, err
	}
	if v != 4 && v != 6 {
		return 0, malformed("family at offset %d is %d, not 4 or 6", at, v)
	}
	return Family(v), nil
}

func (d *dec) op() (Op, error) {
	at := d.at
	code, err := d.u8("op kind")
	if err != nil {
		return Op{}, err
	}
	if code < uint8(OpAppend) || code > uint8(OpCheck) {
		return Op{}, malformed("op kind at offset %d is %d, not 1..=10", at, code)
	}
	o := Op{Kind: OpKind(code)}
	if o.Table, err = d.string("op table"); err != nil {
		return Op{}, err
	}
	if o.Chain, err = d.string("op chain"); err != nil {
		return Op{}, err
	}
	if o.Pos, err = d.u32("op pos"); err != nil {
		return Op{}, err
	}
	if o.Rule, err = d.strings("op rule"); err != nil {
		return Op{}, err
	}
	return o, nil
}

// header checks the version and returns the type byte.
func (d *dec) header() (byte, error) {
	v, err := d.u8("version")
	if err != nil {
		return 0, err
	}
	if v != Version {
		return 0, &BadVersionError{Version: v}
	}
	return d.u8("type")
}

func (d *dec) end() error {
	if d.at != len(d.b) {
		return malformed("%d trailing bytes after the body, at offset %d", len(d.b)-d.at, d.at)
	}
	return nil
}

// DecodeRequest decodes a request from a frame body (the bytes after the
// length prefix: version, type, body). The whole body must be consumed.
// Decoded lists, bytes and strings do not alias body.
func DecodeRequest(body []byte) (Request, error) {
	d := dec{b: body}
	ty, err := d.header()
	if err != nil {
		return nil, err
	}
	var r Request
	switch ty {
	case typeIptables:
		r, err = d.iptables()
	case typeRestore:
		r, err = d.restore()
	case typeSave:
		r, err = d.save()
	case typeStatus:
		r = &Status{}
	case typeOps:
		r, err = d.ops()
	case typeIpset:
		r, err = d.ipset()
	default:
		return nil, malformed("unknown request type 0x%02x", ty)
	}
	if err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}

func (d *dec) iptables() (*Iptables, error) {
	var r Iptables
	var err error
	if r.Family, err = d.family(); err != nil {
		return nil, err
	}
	if r.Prog, err = d.string("prog"); err != nil {
		return nil, err
	}
	if r.Args, err = d.strings("args"); err != nil {
		return nil, err
	}
	return &r, nil
}

func (d *dec) restore() (*Restore, error) {
	var r Restore
	var err error
	if r.Family, err = d.family(); err != nil {
		return nil, err
	}
	if r.Prog, err = d.string("prog"); err != nil {
		return nil, err
	}
	if r.Noflush, err = d.bool("noflush"); err != nil {
		return nil, err
	}
	if r.Counters, err = d.bool("counters"); err != nil {
		return nil, err
	}
	if r.Test, err = d.bool("test"); err != nil {
		return nil, err
	}
	if r.Table, err = d.optString("table"); err != nil {
		return nil, err
	}
	if r.Payload, err = d.bytes("payload"); err != nil {
		return nil, err
	}
	return &r, nil
}

func (d *dec) save() (*Save, error) {
	var r Save
	var err error
	if r.Family, err = d.family(); err != nil {
		return nil, err
	}
	if r.Prog, err = d.string("prog"); err != nil {
		return nil, err
	}
	if r.Counters, err = d.bool("counters"); err != nil {
		return nil, err
	}
	if r.Table, err = d.optString("table"); err != nil {
		return nil, err
	}
	return &r, nil
}

func (d *dec) ipset() (*Ipset, error) {
	var r Ipset
	var err error
	if r.Args, err = d.strings("args"); err != nil {
		return nil, err
	}
	at := d.at
	tag, err := d.u8("input")
	if err != nil {
		return nil, err
	}
	switch tag {
	case 0:
	case 1:
		r.WithInput = true
		if r.Input, err = d.bytes("input"); err != nil {
			return nil, err
		}
	default:
		return nil, malformed("input at offset %d has option tag %d, not 0 or 1", at, tag)
	}
	return &r, nil
}

func (d *dec) ops() (*Ops, error) {
	var r Ops
	var err error
	if r.Family, err = d.family(); err != nil {
		return nil, err
	}
	n, err := d.count("ops", minOp)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		r.Ops = make([]Op, 0, n)
	}
	for range n {
		o, err := d.op()
		if err != nil {
			return nil, err
		}
		r.Ops = append(r.Ops, o)
	}
	return &r, nil
}

// DecodeReply decodes a reply from a frame body (the bytes after the length
// prefix). The whole body must be consumed.
func DecodeReply(body []byte) (Reply, error) {
	d := dec{b: body}
	ty, err := d.header()
	if err != nil {
		return nil, err
	}
	var r Reply
	switch ty {
	case typeStdout:
		var b []byte
		b, err = d.bytes("stdout data")
		r = Stdout(b)
	case typeStderr:
		var b []byte
		b, err = d.bytes("stderr data")
		r = Stderr(b)
	case typeExit:
		var c int32
		c, err = d.i32("exit code")
		r = Exit(c)
	case typeOpResults:
		r, err = d.opResults()
	case typeError:
		e := &Error{}
		if e.Code, err = d.i32("error code"); err == nil {
			e.Message, err = d.string("error message")
		}
		r = e
	default:
		return nil, malformed("unknown reply type 0x%02x", ty)
	}
	if err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return r, nil
}

func (d *dec) opResults() (OpResults, error) {
	n, err := d.count("op results", minOpResult)
	if err != nil || n == 0 {
		return nil, err
	}
	rs := make(OpResults, 0, n)
	for range n {
		var res OpResult
		if res.Code, err = d.i32("op result code"); err != nil {
			return nil, err
		}
		if res.Message, err = d.string("op result message"); err != nil {
			return nil, err
		}
		rs = append(rs, res)
	}
	return rs, nil
}
