package nfkeeper_test

import (
	"context"
	"strings"
	"testing"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
	"github.com/nfkeeper/nfkeeper/clients/go/proto"
)

func TestTransactionBuildsOps(t *testing.T) {
	tx := nfk.NewTransaction(nfk.IPv6)
	tx.Add(&nfk.Chain{Table: "nat", Name: "SVC"})
	tx.Add(&nfk.Rule{Table: "nat", Chain: "SVC", Spec: []string{"-j", "DNAT", "--to-destination", "[fd00::1]:80"}})
	tx.Insert(&nfk.Rule{Chain: "INPUT", Spec: []string{"-j", "ACCEPT"}})
	tx.Insert(&nfk.Rule{Chain: "INPUT", Spec: []string{"-j", "ACCEPT"}, Index: 3})
	tx.Replace(&nfk.Rule{Chain: "INPUT", Spec: []string{"-j", "DROP"}, Index: 2})
	tx.Delete(&nfk.Rule{Chain: "INPUT", Spec: []string{"-j", "DROP"}})
	tx.Delete(&nfk.Rule{Chain: "INPUT", Index: 4})
	tx.Delete(&nfk.Chain{Name: "OLD"})
	tx.Delete(&nfk.Table{Name: "raw"})
	tx.Flush(&nfk.Chain{Name: "INPUT"})
	tx.Flush(&nfk.Table{})
	tx.Policy(&nfk.Chain{Name: "FORWARD"}, nfk.Drop)
	tx.Check(&nfk.Rule{Chain: "INPUT", Spec: []string{"-m", "comment", "--comment", "a b", "-j", "ACCEPT"}})
	tx.Command("-t", "mangle", "-A", "PREROUTING", "-j", "MARK", "--set-mark", "1")
	want := `-t nat -N SVC
-t nat -A SVC -j DNAT --to-destination [fd00::1]:80
-t filter -I INPUT 1 -j ACCEPT
-t filter -I INPUT 3 -j ACCEPT
-t filter -R INPUT 2 -j DROP
-t filter -D INPUT -j DROP
-t filter -D INPUT 4
-t filter -X OLD
-t raw -X
-t filter -F INPUT
-t filter -F
-t filter -P FORWARD DROP
-t filter -C INPUT -m comment --comment "a b" -j ACCEPT
-t mangle -A PREROUTING -j MARK --set-mark 1
`
	if tx.Err() != nil || tx.String() != want || tx.NumOperations() != 14 || tx.Family() != nfk.IPv6 {
		t.Fatalf("%v\n%s", tx.Err(), tx.String())
	}
	// The transaction keeps its own copy of a spec.
	spec := []string{"-j", "ACCEPT"}
	tx2 := nfk.NewTransaction(nfk.IPv4)
	tx2.Add(&nfk.Rule{Chain: "INPUT", Spec: spec})
	spec[1] = "DROP"
	if got := tx2.Ops()[0].Rule[1]; got != "ACCEPT" {
		t.Fatal(got)
	}
}

func TestTransactionRefusesInvalidOperations(t *testing.T) {
	cases := []struct {
		name  string
		build func(tx *nfk.Transaction)
		want  string
	}{
		{"chain without name", func(tx *nfk.Transaction) { tx.Add(&nfk.Chain{}) },
			"nfkeeper: invalid operation 1: -N needs a chain name"},
		{"rule without chain", func(tx *nfk.Transaction) { tx.Add(&nfk.Rule{Spec: []string{"-j", "ACCEPT"}}) },
			"nfkeeper: invalid operation 1: -A needs a rule with a chain"},
		{"add with index", func(tx *nfk.Transaction) { tx.Add(&nfk.Rule{Chain: "INPUT", Index: 2}) },
			"nfkeeper: invalid operation 1: Add of a rule with Index 2: use Insert"},
		{"replace without index", func(tx *nfk.Transaction) {
			tx.Add(&nfk.Chain{Name: "A"})
			tx.Replace(&nfk.Rule{Chain: "INPUT"})
		}, "nfkeeper: invalid operation 2: -R needs a rule number from 1 on, not 0"},
		{"delete with spec and index", func(tx *nfk.Transaction) {
			tx.Delete(&nfk.Rule{Chain: "INPUT", Spec: []string{"-j", "DROP"}, Index: 1})
		}, "nfkeeper: invalid operation 1: Delete of a rule with both a Spec and an Index"},
		{"delete rule without anything", func(tx *nfk.Transaction) { tx.Delete(&nfk.Rule{Chain: "INPUT"}) },
			"nfkeeper: invalid operation 1: -D needs a rule number from 1 on, not 0"},
		{"policy without policy", func(tx *nfk.Transaction) { tx.Policy(&nfk.Chain{Name: "INPUT"}, "") },
			"nfkeeper: invalid operation 1: -P needs a policy"},
		{"insert of a table", func(tx *nfk.Transaction) { tx.Add(&nfk.Table{Name: "nat"}) },
			"nfkeeper: invalid operation 1: Add of *nfkeeper.Table"},
		{"unknown command", func(tx *nfk.Transaction) { tx.Command("-L", "INPUT") },
			`nfkeeper: invalid operation 1: "-L" is not a command of a typed operation (-A -I -D -R -N -X -F -P -C)`},
		{"first error wins", func(tx *nfk.Transaction) {
			tx.Add(&nfk.Chain{})
			tx.Add(&nfk.Rule{})
		}, "nfkeeper: invalid operation 1: -N needs a chain name"},
	}
	for _, tc := range cases {
		for _, i := range []nfk.Interface{nfk.NewFake(), nfk.New(nfk.Options{Path: "/nonexistent"})} {
			tx := i.NewTransaction(nfk.IPv4)
			tc.build(tx)
			err := i.Run(context.Background(), tx)
			if errString(err) != tc.want || errString(tx.Err()) != tc.want {
				t.Errorf("%s (%T): %v", tc.name, i, err)
			}
			if !strings.Contains(tx.String(), "# ERROR: "+tc.want) {
				t.Errorf("%s: String() %q", tc.name, tx.String())
			}
		}
	}
}

func TestParseCommand(t *testing.T) {
	cases := []struct {
		args string
		want proto.Op
		err  string
	}{
		{"-A INPUT -j ACCEPT", proto.Op{Kind: proto.OpAppend, Table: "filter", Chain: "INPUT", Rule: []string{"-j", "ACCEPT"}}, ""},
		{"-t nat --append POSTROUTING -j MASQUERADE", proto.Op{Kind: proto.OpAppend, Table: "nat", Chain: "POSTROUTING", Rule: []string{"-j", "MASQUERADE"}}, ""},
		{"-I INPUT -j DROP", proto.Op{Kind: proto.OpInsert, Table: "filter", Chain: "INPUT", Pos: 1, Rule: []string{"-j", "DROP"}}, ""},
		{"-I INPUT 5 -j DROP", proto.Op{Kind: proto.OpInsert, Table: "filter", Chain: "INPUT", Pos: 5, Rule: []string{"-j", "DROP"}}, ""},
		{"-R INPUT 2 -j DROP", proto.Op{Kind: proto.OpReplace, Table: "filter", Chain: "INPUT", Pos: 2, Rule: []string{"-j", "DROP"}}, ""},
		{"-D INPUT 3", proto.Op{Kind: proto.OpDeleteNum, Table: "filter", Chain: "INPUT", Pos: 3}, ""},
		{"-D INPUT -j DROP", proto.Op{Kind: proto.OpDelete, Table: "filter", Chain: "INPUT", Rule: []string{"-j", "DROP"}}, ""},
		{"-X", proto.Op{Kind: proto.OpDeleteChain, Table: "filter"}, ""},
		{"-t raw -F", proto.Op{Kind: proto.OpFlush, Table: "raw"}, ""},
		{"-N SVC", proto.Op{Kind: proto.OpNewChain, Table: "filter", Chain: "SVC"}, ""},
		{"-P INPUT DROP", proto.Op{Kind: proto.OpPolicy, Table: "filter", Chain: "INPUT", Rule: []string{"DROP"}}, ""},
		{"-C INPUT -p tcp", proto.Op{Kind: proto.OpCheck, Table: "filter", Chain: "INPUT", Rule: []string{"-p", "tcp"}}, ""},
		{"-R INPUT -j DROP", proto.Op{}, "-R INPUT needs a rule number from 1 on"},
		{"-A", proto.Op{}, "-A needs a chain"},
		{"-N SVC extra", proto.Op{}, `unexpected arguments after -N SVC: ["extra"]`},
		{"-P INPUT", proto.Op{}, "-P INPUT needs exactly one policy"},
		{"-S", proto.Op{}, `"-S" is not a command of a typed operation (-A -I -D -R -N -X -F -P -C)`},
		{"", proto.Op{}, "no command in []"},
	}
	for _, tc := range cases {
		op, err := nfk.ParseCommand(strings.Fields(tc.args)...)
		if tc.err != "" {
			if errString(err) != tc.err {
				t.Errorf("%q: %v", tc.args, err)
			}
			continue
		}
		a, _ := proto.AppendRequest(nil, &proto.Ops{Family: proto.IPv4, Ops: []proto.Op{op}})
		b, _ := proto.AppendRequest(nil, &proto.Ops{Family: proto.IPv4, Ops: []proto.Op{tc.want}})
		if err != nil || string(a) != string(b) {
			t.Errorf("%q: %+v %v", tc.args, op, err)
		}
		// The command line the daemon runs is the one given (with -t).
		if strings.HasPrefix(tc.args, "-t") && strings.Join(op.Args(), " ") != strings.Replace(tc.args, "--append", "-A", 1) {
			t.Errorf("%q: args %q", tc.args, op.Args())
		}
	}
}
