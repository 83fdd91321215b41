package nfkeeper

import (
	"context"
	"errors"
	"strings"
)

// Interface is what a controller needs of nfkeeper: transactions and a
// view of the ruleset. *Client implements it against the daemon, *Fake in
// memory for tests.
type Interface interface {
	// NewTransaction returns an empty transaction for family.
	NewTransaction(family Family) *Transaction
	// Run applies tx as one transaction: all of its operations or none.
	// A failure is a *TxError naming the failing operation (or
	// tx.Err()).
	Run(ctx context.Context, tx *Transaction) error
	// Save returns the ruleset of family (one table with opts.Table) in
	// iptables-save format.
	Save(ctx context.Context, family Family, opts SaveOptions) ([]byte, error)
}

// ListChains returns the chains of a table ("" for filter) in save order
// (built-in chains first, then user chains by name).
func ListChains(ctx context.Context, i Interface, family Family, table string) ([]string, error) {
	t, err := savedTable(ctx, i, family, table)
	if err != nil || t == nil {
		return nil, err
	}
	names := make([]string, 0, len(t.Chains))
	for _, c := range t.Chains {
		names = append(names, c.Name)
	}
	return names, nil
}

// ListRules returns the rules of a chain, in order, as Rule values (Index
// is each rule's number); the chain must exist.
func ListRules(ctx context.Context, i Interface, family Family, table, chain string) ([]*Rule, error) {
	t, err := savedTable(ctx, i, family, table)
	if err != nil {
		return nil, err
	}
	if t != nil {
		for _, c := range t.Chains {
			if c.Name != chain {
				continue
			}
			rules := make([]*Rule, 0, len(c.Rules))
			for k, r := range c.Rules {
				rules = append(rules, &Rule{Table: table, Chain: chain, Spec: r.Spec, Index: k + 1})
			}
			return rules, nil
		}
	}
	return nil, &ExitError{Code: 1, Stderr: prog(family, "") + ": No chain/target/match by that name.\n"}
}

func savedTable(ctx context.Context, i Interface, family Family, table string) (*SavedTable, error) {
	table = orFilter(table)
	out, err := i.Save(ctx, family, SaveOptions{Table: table})
	if err != nil {
		return nil, err
	}
	ts, err := ParseSave(out)
	if err != nil {
		return nil, err
	}
	for k := range ts {
		if ts[k].Name == table {
			return &ts[k], nil
		}
	}
	return nil, nil
}

// Exists reports whether a rule matching r's Spec is in its chain (a
// transaction of one Check). A missing chain is an error.
func Exists(ctx context.Context, i Interface, family Family, r *Rule) (bool, error) {
	tx := i.NewTransaction(family)
	tx.Check(r)
	err := i.Run(ctx, tx)
	if err == nil {
		return true, nil
	}
	var te *TxError
	if errors.As(err, &te) && strings.Contains(te.Message, "Bad rule (does a matching rule exist in that chain?)") {
		return false, nil
	}
	return false, err
}
