package nfkeeper

import (
	"fmt"
	"strings"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// Object is what a transaction operates on: a *Table, a *Chain or a *Rule.
type Object interface {
	object()
}

// Table names an iptables table ("filter", "nat", "mangle", "raw",
// "security"); "" means filter.
type Table struct {
	Name string
}

// Chain names a chain of a table (Table "" means filter).
type Chain struct {
	Table string
	Name  string
}

// Rule is a rule of a chain. Spec holds iptables rule options, e.g.
// {"-s", "10.0.0.1/32", "-p", "tcp", "-m", "tcp", "--dport", "80", "-j",
// "ACCEPT"}, one argument per element (a comment with spaces is one
// element). Index is a rule number (1 = first) where an operation needs
// one: Insert (0 means 1), Replace, and Delete by number (Spec empty).
//
// The daemon compares rules in their canonical (iptables-save) form; the
// Fake compares Spec word for word. Writing specs as iptables-save prints
// them (addresses with a prefix length, "-m tcp" before "--dport", ...)
// makes both agree, and makes Fake.Dump equal the daemon's save.
type Rule struct {
	Table string
	Chain string
	Spec  []string
	Index int
}

func (*Table) object() {}
func (*Chain) object() {}
func (*Rule) object()  {}

// Policies of built-in chains.
const (
	Accept = "ACCEPT"
	Drop   = "DROP"
)

// Transaction is a list of iptables operations for one family, applied by
// Run as one unit: all of them or none. Build it with Add, Insert,
// Replace, Delete, Flush, Policy and Check; queuing never fails, but an
// invalid operation (a rule without a chain, Replace without an Index,
// ...) is kept as the transaction's error, later operations are ignored,
// and Run returns that error without sending anything. A Transaction is
// not safe for concurrent use while being built; once built it may be run
// any number of times, by any Interface.
type Transaction struct {
	family Family
	ops    []proto.Op
	err    error
}

// NewTransaction returns an empty transaction for family.
func NewTransaction(family Family) *Transaction {
	return &Transaction{family: family}
}

// Family is the transaction's address family.
func (tx *Transaction) Family() Family { return tx.family }

// NumOperations is the number of operations queued.
func (tx *Transaction) NumOperations() int { return len(tx.ops) }

// Err is the error of the first invalid operation queued, if any.
func (tx *Transaction) Err() error { return tx.err }

// Ops returns a copy of the queued operations.
func (tx *Transaction) Ops() []proto.Op {
	return append([]proto.Op(nil), tx.ops...)
}

// String is the transaction as iptables command lines (arguments without
// argv[0]), one per operation; a pending error follows as a comment.
func (tx *Transaction) String() string {
	var b strings.Builder
	for _, op := range tx.ops {
		b.WriteString(commandLine(op))
		b.WriteByte('\n')
	}
	if tx.err != nil {
		fmt.Fprintf(&b, "# ERROR: %v\n", tx.err)
	}
	return b.String()
}

// commandLine is op's iptables arguments as one line, quoted for display.
func commandLine(op proto.Op) string {
	var b strings.Builder
	for i, a := range op.Args() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteWord(a))
	}
	return b.String()
}

// quoteWord quotes an argument for display when it is empty or contains
// spaces or quotes.
func quoteWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n\"'\\") {
		return w
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(w) + `"`
}

func orFilter(name string) string {
	if name == "" {
		return "filter"
	}
	return name
}

func (tx *Transaction) fail(format string, a ...any) {
	tx.err = fmt.Errorf("nfkeeper: invalid operation %d: "+format, append([]any{len(tx.ops) + 1}, a...)...)
}

func (tx *Transaction) push(op proto.Op) {
	op.Rule = append([]string(nil), op.Rule...)
	tx.ops = append(tx.ops, op)
}

// chainOp queues an operation on the named chain c.
func (tx *Transaction) chainOp(kind proto.OpKind, c *Chain, rule []string) {
	if c == nil || c.Name == "" {
		tx.fail("%s needs a chain name", kind.Flag())
		return
	}
	tx.push(proto.Op{Kind: kind, Table: orFilter(c.Table), Chain: c.Name, Rule: rule})
}

// ruleOp queues an operation on rule r.
func (tx *Transaction) ruleOp(kind proto.OpKind, r *Rule, pos int) {
	switch {
	case r == nil || r.Chain == "":
		tx.fail("%s needs a rule with a chain", kind.Flag())
	case kind.HasPos() && (pos < 1 || pos > 1<<31-1):
		tx.fail("%s needs a rule number from 1 on, not %d", kind.Flag(), pos)
	default:
		tx.push(proto.Op{Kind: kind, Table: orFilter(r.Table), Chain: r.Chain, Pos: uint32(max(pos, 0)), Rule: r.Spec})
	}
}

func (tx *Transaction) ok() bool { return tx.err == nil }

// Add creates a chain (iptables -N; it must not exist: iptables has no
// create-if-missing, so a controller that may find its chains from an
// earlier run lists them first, see ListChains) or appends a rule to its
// chain (-A; the rule's Index must be 0: use Insert to place it).
func (tx *Transaction) Add(obj Object) {
	if !tx.ok() {
		return
	}
	switch o := obj.(type) {
	case *Chain:
		tx.chainOp(proto.OpNewChain, o, nil)
	case *Rule:
		if o.Index != 0 {
			tx.fail("Add of a rule with Index %d: use Insert", o.Index)
			return
		}
		tx.ruleOp(proto.OpAppend, o, 0)
	default:
		tx.fail("Add of %T", obj)
	}
}

// Insert inserts a rule at its Index (-I; 0 means 1, the head of the
// chain; at most one past the last rule).
func (tx *Transaction) Insert(r *Rule) {
	if !tx.ok() {
		return
	}
	pos := 1
	if r != nil && r.Index != 0 {
		pos = r.Index
	}
	tx.ruleOp(proto.OpInsert, r, pos)
}

// Replace replaces rule number Index by the rule (-R).
func (tx *Transaction) Replace(r *Rule) {
	if !tx.ok() {
		return
	}
	pos := 0
	if r != nil {
		pos = r.Index
	}
	tx.ruleOp(proto.OpReplace, r, pos)
}

// Delete deletes a user chain (-X; it must be empty and unreferenced), a
// rule by its Spec (-D; the first matching rule) or, with an empty Spec,
// rule number Index (-D N), or every user chain of a table (-X without a
// chain; fails, deleting nothing, if one has rules or is referenced).
func (tx *Transaction) Delete(obj Object) {
	if !tx.ok() {
		return
	}
	switch o := obj.(type) {
	case *Chain:
		tx.chainOp(proto.OpDeleteChain, o, nil)
	case *Rule:
		switch {
		case o == nil:
			tx.ruleOp(proto.OpDelete, o, 0)
		case len(o.Spec) > 0 && o.Index != 0:
			tx.fail("Delete of a rule with both a Spec and an Index")
		case len(o.Spec) > 0:
			tx.ruleOp(proto.OpDelete, o, 0)
		default:
			tx.ruleOp(proto.OpDeleteNum, o, o.Index)
		}
	case *Table:
		tx.push(proto.Op{Kind: proto.OpDeleteChain, Table: orFilter(tableName(o))})
	default:
		tx.fail("Delete of %T", obj)
	}
}

// Flush removes every rule of a chain (-F chain), or of every chain of a
// table (-F).
func (tx *Transaction) Flush(obj Object) {
	if !tx.ok() {
		return
	}
	switch o := obj.(type) {
	case *Chain:
		tx.chainOp(proto.OpFlush, o, nil)
	case *Table:
		tx.push(proto.Op{Kind: proto.OpFlush, Table: orFilter(tableName(o))})
	default:
		tx.fail("Flush of %T", obj)
	}
}

func tableName(t *Table) string {
	if t == nil {
		return ""
	}
	return t.Name
}

// Policy sets a built-in chain's policy (-P; Accept or Drop).
func (tx *Transaction) Policy(c *Chain, policy string) {
	if !tx.ok() {
		return
	}
	if policy == "" {
		tx.fail("-P needs a policy")
		return
	}
	tx.chainOp(proto.OpPolicy, c, []string{policy})
}

// Check asserts that a rule matching the rule's Spec exists (-C): if none
// does, the transaction fails (code 1, IsNotFound) and applies nothing.
func (tx *Transaction) Check(r *Rule) {
	if !tx.ok() {
		return
	}
	tx.ruleOp(proto.OpCheck, r, 0)
}
