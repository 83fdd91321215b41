package nfkeeper

import (
	"strconv"
	"strings"

	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

// fakeErr is a failed operation: iptables' exit code and the message the
// daemon gives for typed operations (program name "nfkeeper").
type fakeErr struct {
	code int
	msg  string
}

func (e *fakeErr) asError() error { return &ExitError{Code: e.code, Stderr: e.msg + "\n"} }

// The daemon's wording: iptables' messages with program "nfkeeper" and
// the iptables version nfkeeper reports.
const fakeBanner = "nfkeeper v1.8.11 (nfkeeper): "

// opErr is a failed ruleset operation (exit 1).
func opErr(msg string) *fakeErr { return &fakeErr{1, "nfkeeper: " + msg} }

// paramErr is a parameter problem (exit 2).
func paramErr(msg string) *fakeErr {
	return &fakeErr{2, fakeBanner + msg + "\nTry `nfkeeper -h' or 'nfkeeper --help' for more information."}
}

// versionErr is a version problem (exit 3), e.g. an unknown table.
func versionErr(msg string) *fakeErr {
	return &fakeErr{3, fakeBanner + msg + "\nPerhaps nfkeeper or your kernel needs to be upgraded."}
}

var (
	errNoChain    = "No chain/target/match by that name."
	errNoRule     = "Bad rule (does a matching rule exist in that chain?)."
	errNotBuiltin = "Bad built-in chain name."
)

// maxNameLen: chain names must be shorter (iptables' XT_EXTENSION_MAXNAMELEN).
const maxNameLen = 29

// knownTargets are the target names iptables knows: -j NAME with one of
// these is no jump, and no chain may be named like one.
var knownTargets = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(`ACCEPT DROP RETURN QUEUE CONTINUE AUDIT CHECKSUM
		CLASSIFY CLUSTERIP CONNMARK CONNSECMARK CT DNAT DNPT DSCP ECN HL HMARK IDLETIMER
		LED LOG MARK MASQUERADE NETMAP NFLOG NFQUEUE NOTRACK RATEEST REDIRECT REJECT
		SECMARK SET SNAT SNPT SYNPROXY TCPMSS TCPOPTSTRIP TEE TOS TPROXY TRACE TTL ULOG`) {
		m[t] = true
	}
	return m
}()

// checkChainName is what iptables checks of a chain name on -N.
func checkChainName(name string) *fakeErr {
	switch {
	case len(name) >= maxNameLen:
		return paramErr("chain name `" + name + "' too long (must be under " + strconv.Itoa(maxNameLen) + " chars)")
	case name[0] == '-' || name[0] == '!':
		return paramErr("chain name not allowed to start with `" + name[:1] + "'")
	case knownTargets[name]:
		return paramErr("chain name may not clash with target name")
	case strings.ContainsAny(name, " \t\n\v\f\r"):
		return paramErr("Invalid chain name `" + name + "'")
	}
	return nil
}

// apply runs one operation on t (a working copy), in the order of checks
// iptables (and the daemon's model) makes.
func (t *fakeTable) apply(op proto.Op) *fakeErr {
	if len(op.Chain) >= maxNameLen {
		return paramErr("chain name `" + op.Chain + "' too long (must be under " + strconv.Itoa(maxNameLen) + " chars)")
	}
	if t.name == "nat" && dropsIn(op) {
		return paramErr("\nThe \"nat\" table is not intended for filtering, the use of DROP is therefore inhibited.\n\n")
	}
	c := t.chains[op.Chain]
	rule := fakeRule{spec: op.Rule, jump: jumpTarget(op.Rule)}
	pos := int(op.Pos)
	switch op.Kind {
	case proto.OpNewChain:
		if e := checkChainName(op.Chain); e != nil {
			return e
		}
		if c != nil {
			return opErr("Chain already exists.")
		}
		t.chains[op.Chain] = &fakeChain{name: op.Chain}
	case proto.OpDeleteChain:
		if op.Chain == "" {
			return t.deleteUserChains()
		}
		if c == nil {
			return opErr(errNoChain)
		}
		if e := deletable(c); e != nil {
			return e
		}
		delete(t.chains, op.Chain)
	case proto.OpFlush:
		if op.Chain == "" {
			for _, c := range t.chains {
				t.flush(c)
			}
			return nil
		}
		if c == nil {
			return opErr(errNoChain)
		}
		t.flush(c)
	case proto.OpPolicy:
		if len(op.Rule) != 1 || (op.Rule[0] != Accept && op.Rule[0] != Drop) {
			return opErr("Bad policy name. Run `dmesg' for more information.")
		}
		if c == nil || !c.builtin {
			return opErr(errNotBuiltin)
		}
		c.policy = op.Rule[0]
	case proto.OpAppend:
		if c == nil {
			return opErr(errNoChain)
		}
		return t.insert(c, len(c.rules), rule)
	case proto.OpInsert:
		if pos < 1 {
			return paramErr("Invalid rule number `" + strconv.Itoa(pos) + "'")
		}
		if c == nil {
			return opErr(errNoChain)
		}
		if pos > len(c.rules)+1 {
			return opErr("Index of insertion too big.")
		}
		return t.insert(c, pos-1, rule)
	case proto.OpReplace:
		if pos < 1 {
			return paramErr("Invalid rule number `" + strconv.Itoa(pos) + "'")
		}
		if c == nil {
			return opErr(errNoChain)
		}
		if pos > len(c.rules) {
			return opErr("Index of replacement too big.")
		}
		if e := t.checkJump(c, rule); e != nil {
			return e
		}
		t.unref(c.rules[pos-1])
		c.rules[pos-1] = rule
		t.ref(rule)
	case proto.OpDeleteNum:
		if pos < 1 {
			return paramErr("Invalid rule number `" + strconv.Itoa(pos) + "'")
		}
		if c == nil {
			return opErr(errNoChain)
		}
		if pos > len(c.rules) {
			return opErr("Index of deletion too big.")
		}
		t.remove(c, pos-1)
	case proto.OpDelete, proto.OpCheck:
		if e := t.targetExists(rule); e != nil {
			return e
		}
		if c == nil {
			return opErr(errNoChain)
		}
		at := find(c, rule.spec)
		if at < 0 {
			return opErr(errNoRule)
		}
		if op.Kind == proto.OpDelete {
			t.remove(c, at)
		}
	default:
		return paramErr("unknown operation kind " + strconv.Itoa(int(op.Kind)))
	}
	return nil
}

// find is the position of the first rule of c with this spec, or -1.
func find(c *fakeChain, spec []string) int {
	for i, r := range c.rules {
		if equalWords(r.spec, spec) {
			return i
		}
	}
	return -1
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// deletable: iptables' checks before deleting a chain, in its order.
func deletable(c *fakeChain) *fakeErr {
	switch {
	case c.builtin:
		return opErr("Directory not empty.")
	case c.refs > 0:
		return opErr("Too many links.")
	case len(c.rules) > 0:
		return opErr("Directory not empty.")
	}
	return nil
}

// deleteUserChains is -X without a chain: every user chain, checked in
// name order; the first failure deletes nothing.
func (t *fakeTable) deleteUserChains() *fakeErr {
	var user []*fakeChain
	for _, c := range t.chains {
		if !c.builtin {
			user = append(user, c)
		}
	}
	sortChains(user)
	for _, c := range user {
		if e := deletable(c); e != nil {
			return e
		}
	}
	for _, c := range user {
		delete(t.chains, c.name)
	}
	return nil
}

func sortChains(cs []*fakeChain) {
	for i := 1; i < len(cs); i++ {
		for k := i; k > 0 && cs[k].name < cs[k-1].name; k-- {
			cs[k], cs[k-1] = cs[k-1], cs[k]
		}
	}
}

func (t *fakeTable) flush(c *fakeChain) {
	for _, r := range c.rules {
		t.unref(r)
	}
	c.rules = nil
}

func (t *fakeTable) ref(r fakeRule) {
	if j, ok := t.chains[r.jump]; ok && r.jump != "" {
		j.refs++
	}
}

func (t *fakeTable) unref(r fakeRule) {
	if j, ok := t.chains[r.jump]; ok && r.jump != "" {
		j.refs--
	}
}

func (t *fakeTable) insert(c *fakeChain, at int, r fakeRule) *fakeErr {
	if e := t.checkJump(c, r); e != nil {
		return e
	}
	c.rules = append(c.rules, fakeRule{})
	copy(c.rules[at+1:], c.rules[at:])
	c.rules[at] = r
	t.ref(r)
	return nil
}

func (t *fakeTable) remove(c *fakeChain, at int) {
	t.unref(c.rules[at])
	c.rules = append(c.rules[:at], c.rules[at+1:]...)
}

// targetExists: a rule named in -D or -C may only jump to an existing
// chain.
func (t *fakeTable) targetExists(r fakeRule) *fakeErr {
	if r.jump != "" && t.chains[r.jump] == nil {
		return paramErr("Chain '" + r.jump + "' does not exist")
	}
	return nil
}

// checkJump: a rule added to chain from may jump only to an existing
// chain, and not close a jump loop that a built-in chain reaches (loops
// no built-in chain reaches are allowed, as in the kernel).
func (t *fakeTable) checkJump(from *fakeChain, r fakeRule) *fakeErr {
	if r.jump == "" {
		return nil
	}
	to := t.chains[r.jump]
	if to == nil {
		return paramErr("Chain '" + r.jump + "' does not exist")
	}
	if t.reachedFromBuiltin(from) && t.cycleFrom(to, from) {
		return opErr("Loop found in table.")
	}
	return nil
}

// reachedFromBuiltin: whether a built-in chain reaches c (or c is one).
func (t *fakeTable) reachedFromBuiltin(c *fakeChain) bool {
	seen := map[string]bool{c.name: true}
	stack := []string{c.name}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.chains[n].builtin {
			return true
		}
		for _, up := range t.chains {
			if seen[up.name] {
				continue
			}
			for _, r := range up.rules {
				if r.jump == n {
					seen[up.name] = true
					stack = append(stack, up.name)
					break
				}
			}
		}
	}
	return false
}

// cycleFrom: whether the jump graph plus an edge from -> start has a cycle
// reachable from start (depth-first with on-stack marks).
func (t *fakeTable) cycleFrom(start, from *fakeChain) bool {
	const (
		onStack = 1
		done    = 2
	)
	state := map[string]int{}
	var visit func(n string) bool
	visit = func(n string) bool {
		state[n] = onStack
		next := make([]string, 0, 4)
		for _, r := range t.chains[n].rules {
			if r.jump != "" {
				next = append(next, r.jump)
			}
		}
		if n == from.name {
			next = append(next, start.name)
		}
		for _, m := range next {
			if state[m] == onStack || state[m] == 0 && visit(m) {
				return true
			}
		}
		state[n] = done
		return false
	}
	return visit(start.name)
}

// dropsIn: whether op sets a DROP policy or adds a rule with -j DROP
// (which iptables refuses in the nat table).
func dropsIn(op proto.Op) bool {
	if op.Kind == proto.OpPolicy {
		return len(op.Rule) == 1 && op.Rule[0] == Drop
	}
	for i := 0; i+1 < len(op.Rule); i++ {
		switch op.Rule[i] {
		case "--comment", "--log-prefix", "--nflog-prefix", "--nfacct-name":
			i++
		case "-j", "--jump":
			if op.Rule[i+1] == Drop {
				return true
			}
		}
	}
	return false
}
