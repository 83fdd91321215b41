package nfkeeper

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// Fake is an in-memory Interface with iptables' semantics, for unit tests
// of controllers: tables with their built-in chains and policies, user
// chains, ordered rules, -C/-D by rule specification, -F, -X refusing
// non-empty and referenced chains, jumps only to existing chains, no jump
// loops reachable from a built-in chain, and transactions applied all or
// nothing. Its errors carry the exit codes and messages the daemon gives
// for the same operations (the integration tests hold the two together).
//
// What it does not do: parse rule options. A Spec is a list of words,
// compared word for word (the daemon compares canonical forms, so write
// specs as iptables-save prints them); a word after -j/--jump naming no
// known target, or after -g/--goto, is a jump to that chain. Counters stay
// zero. A table exists (appears in Save and Dump) from its first
// successful operation on.
//
// Fake is safe for concurrent use.
type Fake struct {
	mu     sync.Mutex
	tables map[Family]map[string]*fakeTable
	// LastTransaction is the last transaction Run applied (nil before).
	LastTransaction *Transaction
}

// NewFake returns an empty fake: no tables exist.
func NewFake() *Fake {
	return &Fake{tables: map[Family]map[string]*fakeTable{IPv4: {}, IPv6: {}}}
}

type fakeTable struct {
	name   string
	chains map[string]*fakeChain
}

type fakeChain struct {
	name    string
	builtin bool
	policy  string
	rules   []fakeRule
	// refs counts rules (in any chain of the table) jumping here.
	refs int
}

type fakeRule struct {
	spec []string
	jump string // the chain the rule jumps or goes to, or ""
}

// builtinChains of each table, in save order.
var builtinChains = map[string][]string{
	"filter":   {"INPUT", "FORWARD", "OUTPUT"},
	"nat":      {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
	"mangle":   {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"},
	"raw":      {"PREROUTING", "OUTPUT"},
	"security": {"INPUT", "FORWARD", "OUTPUT"},
}

// saveOrder is the order iptables-save prints tables in.
var saveOrder = []string{"mangle", "security", "raw", "filter", "nat"}

func newFakeTable(name string) *fakeTable {
	t := &fakeTable{name: name, chains: map[string]*fakeChain{}}
	for _, c := range builtinChains[name] {
		t.chains[c] = &fakeChain{name: c, builtin: true, policy: Accept}
	}
	return t
}

// clone copies the table; rule specs are shared (never modified).
func (t *fakeTable) clone() *fakeTable {
	n := &fakeTable{name: t.name, chains: make(map[string]*fakeChain, len(t.chains))}
	for k, c := range t.chains {
		cc := *c
		cc.rules = append([]fakeRule(nil), c.rules...)
		n.chains[k] = &cc
	}
	return n
}

// NewTransaction returns an empty transaction for family.
func (f *Fake) NewTransaction(family Family) *Transaction { return NewTransaction(family) }

// Run applies tx to the fake: all of its operations or none.
func (f *Fake) Run(ctx context.Context, tx *Transaction) error {
	if tx.err != nil {
		return tx.err
	}
	if err := ctx.Err(); err != nil {
		return &ExchangeError{Err: err}
	}
	if len(tx.ops) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	live := f.family(tx.family)
	work := map[string]*fakeTable{}
	for i, op := range tx.ops {
		t, ferr := tableFor(live, work, op.Table)
		if ferr == nil {
			ferr = t.apply(op)
		}
		if ferr != nil {
			res := make(proto.OpResults, len(tx.ops))
			for k := range res {
				res[k] = proto.OpResult{Message: "not applied"}
			}
			res[i] = proto.OpResult{Code: int32(ferr.code), Message: ferr.msg}
			return txResult(tx.ops, res)
		}
	}
	for name, t := range work {
		live[name] = t
	}
	f.LastTransaction = tx
	return nil
}

func (f *Fake) family(fam Family) map[string]*fakeTable {
	m, ok := f.tables[fam]
	if !ok {
		m = map[string]*fakeTable{}
		f.tables[fam] = m
	}
	return m
}

// tableFor returns the transaction's working copy of a table, made on
// first use from the live one (or a new one with its built-in chains).
func tableFor(live, work map[string]*fakeTable, name string) (*fakeTable, *fakeErr) {
	if t, ok := work[name]; ok {
		return t, nil
	}
	if _, ok := builtinChains[name]; !ok {
		return nil, versionErr("table '" + name + "' does not exist")
	}
	var t *fakeTable
	if l, ok := live[name]; ok {
		t = l.clone()
	} else {
		t = newFakeTable(name)
	}
	work[name] = t
	return t, nil
}

// Save returns the fake's ruleset of family in iptables-save format,
// without the dated comment lines.
func (f *Fake) Save(ctx context.Context, family Family, opts SaveOptions) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &ExchangeError{Err: err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if opts.Table != "" {
		if _, ok := builtinChains[opts.Table]; !ok {
			return nil, &ExitError{Code: 1, Stderr: "Table `" + opts.Table + "' does not exist\n"}
		}
	}
	return []byte(FormatSave(f.saved(family, opts.Table), opts.Counters)), nil
}

// saved is the family's ruleset (one table when only is set, even if it
// does not exist yet, as iptables-save --table prints it).
func (f *Fake) saved(family Family, only string) []SavedTable {
	var out []SavedTable
	live := f.family(family)
	for _, name := range saveOrder {
		t, ok := live[name]
		if only != "" && name != only || only == "" && !ok {
			continue
		}
		if !ok {
			t = newFakeTable(name)
		}
		out = append(out, t.saved())
	}
	return out
}

func (t *fakeTable) saved() SavedTable {
	st := SavedTable{Name: t.name}
	var user []string
	for name, c := range t.chains {
		if !c.builtin {
			user = append(user, name)
		}
	}
	sort.Strings(user)
	for _, name := range append(append([]string(nil), builtinChains[t.name]...), user...) {
		c := t.chains[name]
		sc := SavedChain{Name: name, Policy: c.policy}
		if !c.builtin {
			sc.Policy = ""
		}
		for _, r := range c.rules {
			sc.Rules = append(sc.Rules, SavedRule{Spec: r.spec})
		}
		st.Chains = append(st.Chains, sc)
	}
	return st
}

// DumpFamily is family's ruleset in iptables-save format without the
// dated comment lines: "" while no table of it exists.
func (f *Fake) DumpFamily(family Family) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FormatSave(f.saved(family, ""), false)
}

// Dump is the fake's ruleset in iptables-save format, for golden tests:
// the tables of the one family that has any, or, when both have, each
// family's introduced by a "# IPv4" or "# IPv6" comment line.
func (f *Fake) Dump() string {
	v4, v6 := f.DumpFamily(IPv4), f.DumpFamily(IPv6)
	switch {
	case v4 == "":
		return v6
	case v6 == "":
		return v4
	}
	return "# IPv4\n" + v4 + "# IPv6\n" + v6
}

// Load replaces family's ruleset by iptables-save text (as Save or Dump
// print it; counters are ignored): to start a test from a ruleset an
// earlier run of a controller left behind. Rules are taken as they are
// (no jump or loop checks).
func (f *Fake) Load(family Family, save string) error {
	ts, err := ParseSave([]byte(save))
	if err != nil {
		return err
	}
	m := map[string]*fakeTable{}
	for _, st := range ts {
		if _, ok := builtinChains[st.Name]; !ok {
			return versionErr("table '" + st.Name + "' does not exist").asError()
		}
		t := newFakeTable(st.Name)
		for _, sc := range st.Chains {
			c, ok := t.chains[sc.Name]
			if !ok {
				c = &fakeChain{name: sc.Name}
				t.chains[sc.Name] = c
			}
			if c.builtin && sc.Policy != "" {
				c.policy = sc.Policy
			}
		}
		for _, sc := range st.Chains {
			for _, r := range sc.Rules {
				fr := fakeRule{spec: r.Spec, jump: jumpTarget(r.Spec)}
				if j, ok := t.chains[fr.jump]; ok {
					j.refs++
				}
				t.chains[sc.Name].rules = append(t.chains[sc.Name].rules, fr)
			}
		}
		m[st.Name] = t
	}
	f.mu.Lock()
	f.tables[family] = m
	f.mu.Unlock()
	return nil
}

// jumpTarget is the chain a rule jumps or goes to, or "": the argument of
// the last -j/--jump naming no known target, or of -g/--goto (free-text
// arguments such as a comment are skipped).
func jumpTarget(spec []string) string {
	j := ""
	for i := 0; i+1 < len(spec); i++ {
		switch spec[i] {
		case "--comment", "--log-prefix", "--nflog-prefix", "--nfacct-name":
			i++ // free text, not an option
		case "-j", "--jump":
			if !knownTargets[spec[i+1]] {
				j = spec[i+1]
			} else {
				j = ""
			}
		case "-g", "--goto":
			j = spec[i+1]
		}
	}
	return j
}

// String is for debugging: the IPv4 and IPv6 dumps.
func (f *Fake) String() string { return strings.TrimSpace(f.Dump()) }
