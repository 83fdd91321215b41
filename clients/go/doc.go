// Package nfkeeper is a Go client for nfkeeper's daemon (`nfkeeper
// serve`), which keeps the iptables ruleset of one network namespace warm
// and applies changes as native nftables transactions. Programs talk to
// its unix socket instead of spawning iptables for every change.
//
// A Client sends iptables command lines (Iptables), iptables-save and
// iptables-restore requests (Save, SaveTo, Restore), ipset command lines
// (Ipset, IpsetRestore), status requests (Status) and typed operations (Apply, Run) over the protocol in
// subpackage proto (docs/protocol.md). It is safe for concurrent use and
// keeps a small pool of connections; every call takes a context whose
// deadline bounds the round trip and whose cancellation abandons it
// (closing that connection: a change the daemon had already received may
// still be applied, and the error says so).
//
// Changes are best made as transactions, in the spirit of knftables:
//
//	c := nfkeeper.New(nfkeeper.Options{}) // the daemon of this namespace
//	tx := c.NewTransaction(nfkeeper.IPv4)
//	tx.Add(&nfkeeper.Chain{Table: "nat", Name: "SVC-WEB"})
//	tx.Add(&nfkeeper.Rule{Table: "nat", Chain: "SVC-WEB",
//		Spec: []string{"-p", "tcp", "-m", "tcp", "--dport", "80",
//			"-j", "DNAT", "--to-destination", "10.0.0.2:8080"}})
//	if err := c.Run(ctx, tx); err != nil {
//		// Nothing was applied; a *TxError names the failing operation.
//	}
//
// Run applies all of a transaction's operations or none. Controllers are
// written against Interface, which Fake implements in memory with
// iptables' semantics (and the daemon's error messages) so they can be
// unit-tested with golden iptables-save dumps (Fake.Dump).
package nfkeeper
