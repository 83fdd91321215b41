package nfkeeper

import (
	"fmt"
	"strconv"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// commandKinds maps iptables command options to typed operation kinds.
var commandKinds = map[string]proto.OpKind{
	"-A": proto.OpAppend, "--append": proto.OpAppend,
	"-I": proto.OpInsert, "--insert": proto.OpInsert,
	"-D": proto.OpDelete, "--delete": proto.OpDelete,
	"-R": proto.OpReplace, "--replace": proto.OpReplace,
	"-N": proto.OpNewChain, "--new-chain": proto.OpNewChain,
	"-X": proto.OpDeleteChain, "--delete-chain": proto.OpDeleteChain,
	"-F": proto.OpFlush, "--flush": proto.OpFlush,
	"-P": proto.OpPolicy, "--policy": proto.OpPolicy,
	"-C": proto.OpCheck, "--check": proto.OpCheck,
}

// ParseCommand turns an iptables command line (without argv[0]) into a
// typed operation: [-t TABLE] CMD CHAIN [NUM] [rule options...], where CMD
// is -A, -I, -D, -R, -N, -X, -F, -P or -C (or its long form) and the table
// option, if any, comes first. As in iptables, -I without a number
// inserts at 1 and -D with a number alone deletes by number; -X and -F
// without a chain mean every chain of the table. Other commands (-L, -S,
// -Z, -E) are not typed operations: run them with Client.Iptables.
func ParseCommand(args ...string) (proto.Op, error) {
	op := proto.Op{Table: "filter"}
	a := args
	if len(a) >= 2 && (a[0] == "-t" || a[0] == "--table") {
		op.Table, a = a[1], a[2:]
	}
	if len(a) == 0 {
		return op, fmt.Errorf("no command in %q", args)
	}
	kind, ok := commandKinds[a[0]]
	if !ok {
		return op, fmt.Errorf("%q is not a command of a typed operation (-A -I -D -R -N -X -F -P -C)", a[0])
	}
	flag := a[0]
	op.Kind, a = kind, a[1:]
	if len(a) == 0 {
		if kind == proto.OpFlush || kind == proto.OpDeleteChain {
			return op, nil
		}
		return op, fmt.Errorf("%s needs a chain", flag)
	}
	op.Chain, a = a[0], a[1:]
	num := func() (uint32, bool) {
		if len(a) == 0 {
			return 0, false
		}
		n, err := strconv.ParseUint(a[0], 10, 31)
		if err != nil || n == 0 {
			return 0, false
		}
		return uint32(n), true
	}
	switch kind {
	case proto.OpInsert:
		op.Pos = 1
		if n, ok := num(); ok {
			op.Pos, a = n, a[1:]
		}
	case proto.OpReplace:
		n, ok := num()
		if !ok {
			return op, fmt.Errorf("-R %s needs a rule number from 1 on", op.Chain)
		}
		op.Pos, a = n, a[1:]
	case proto.OpDelete:
		if n, ok := num(); ok && len(a) == 1 {
			op.Kind, op.Pos, a = proto.OpDeleteNum, n, nil
		}
	case proto.OpNewChain, proto.OpDeleteChain, proto.OpFlush:
		if len(a) > 0 {
			return op, fmt.Errorf("unexpected arguments after %s %s: %q", flag, op.Chain, a)
		}
	case proto.OpPolicy:
		if len(a) != 1 {
			return op, fmt.Errorf("-P %s needs exactly one policy", op.Chain)
		}
	}
	if len(a) > 0 {
		op.Rule = append([]string(nil), a...)
	}
	return op, nil
}

// Command queues an iptables command line (without argv[0]), as
// ParseCommand reads it: tx.Command("-t", "nat", "-A", "SVC", "-j", "DNAT",
// "--to-destination", "10.0.0.1:80").
func (tx *Transaction) Command(args ...string) {
	if !tx.ok() {
		return
	}
	op, err := ParseCommand(args...)
	if err != nil {
		tx.fail("%v", err)
		return
	}
	tx.push(op)
}
