// Package svcproxy is an example controller in the manner of kube-proxy's
// iptables mode, written against nfkeeper.Interface: services (a cluster
// IP, port and protocol) load-balanced over endpoints with DNAT in the nat
// table, one chain per service and per endpoint. Each Sync computes what
// changed since the last one and applies only that, as one transaction.
// It runs against nfkeeper.Fake in unit tests (golden iptables-save
// dumps) and against the daemon in integration tests (the same goldens).
package svcproxy

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
)

// Service is one service port: traffic to ClusterIP:Port over Protocol is
// spread evenly over Endpoints.
type Service struct {
	Namespace, Name, PortName string
	ClusterIP                 netip.Addr
	Port                      uint16
	Protocol                  string // "tcp" or "udp"
	Endpoints                 []netip.AddrPort
}

// Key names the service port ("ns/name:port").
func (s *Service) Key() string { return s.Namespace + "/" + s.Name + ":" + s.PortName }

// Chains of the nat table the proxier owns.
const (
	chainServices    = "KUBE-SERVICES"
	chainMarkMasq    = "KUBE-MARK-MASQ"
	chainPostrouting = "KUBE-POSTROUTING"
	masqMark         = "0x4000/0x4000"
	table            = "nat"
)

// Proxier keeps one family's service rules in step with the services it
// is given. Not safe for concurrent Syncs.
type Proxier struct {
	nft    nfk.Interface
	family nfk.Family
	// applied is what the last successful Sync left in the ruleset, by
	// service key; nil until the first Sync.
	applied map[string]*Service
}

// New returns a proxier for family over nft.
func New(nft nfk.Interface, family nfk.Family) *Proxier {
	return &Proxier{nft: nft, family: family}
}

// hashName is kube-proxy's chain naming: a prefix and 16 characters of
// the base32 SHA-256 of what the chain is for.
func hashName(prefix, what string) string {
	h := sha256.Sum256([]byte(what))
	return prefix + base32.StdEncoding.EncodeToString(h[:])[:16]
}

func svcChain(s *Service) string { return hashName("KUBE-SVC-", s.Key()+s.Protocol) }

func sepChain(s *Service, ep netip.AddrPort) string {
	return hashName("KUBE-SEP-", s.Key()+s.Protocol+ep.String())
}

// hostBits is the prefix length of one address of the family.
func (p *Proxier) hostBits() int {
	if p.family == nfk.IPv6 {
		return 128
	}
	return 32
}

// probability is -m statistic's --probability as iptables-save prints
// it: the kernel keeps it as a fraction of 2^31.
func probability(p float64) string {
	return fmt.Sprintf("%.11f", math.Round(p*(1<<31))/(1<<31))
}

// Rule specs, written as iptables-save prints them so the daemon's save
// and the Fake's dump agree word for word.
func (p *Proxier) serviceRule(s *Service) []string {
	return []string{"-d", netip.PrefixFrom(s.ClusterIP, p.hostBits()).String(), "-p", s.Protocol,
		"-m", "comment", "--comment", s.Key() + " cluster IP",
		"-m", s.Protocol, "--dport", fmt.Sprint(s.Port), "-j", svcChain(s)}
}

func (p *Proxier) endpointRules(s *Service) [][]string {
	var rules [][]string
	n := len(s.Endpoints)
	for i, ep := range s.Endpoints {
		r := []string{"-m", "comment", "--comment", s.Key() + " -> " + ep.String()}
		if i < n-1 {
			r = append(r, "-m", "statistic", "--mode", "random", "--probability", probability(1/float64(n-i)))
		}
		rules = append(rules, append(r, "-j", sepChain(s, ep)))
	}
	return rules
}

func (p *Proxier) sepRules(s *Service, ep netip.AddrPort) [][]string {
	return [][]string{
		{"-s", netip.PrefixFrom(ep.Addr(), p.hostBits()).String(), "-m", "comment", "--comment", s.Key(), "-j", chainMarkMasq},
		{"-p", s.Protocol, "-m", "comment", "--comment", s.Key(), "-m", s.Protocol,
			"-j", "DNAT", "--to-destination", ep.String()},
	}
}

func rule(chain string, spec []string) *nfk.Rule {
	return &nfk.Rule{Table: table, Chain: chain, Spec: spec}
}

func chain(name string) *nfk.Chain { return &nfk.Chain{Table: table, Name: name} }

// Sync makes the ruleset carry exactly services, in one transaction, and
// returns how many operations it took. The first Sync sets up the base
// chains, replacing whatever an earlier run left in its KUBE-* chains;
// later ones touch only services that changed. When a Sync fails nothing
// of it was applied, and the next one retries the same difference.
func (p *Proxier) Sync(ctx context.Context, services []Service) (int, error) {
	// Copies: the caller may change its services after Sync returns.
	want := map[string]*Service{}
	for _, s := range services {
		if _, dup := want[s.Key()]; dup {
			return 0, fmt.Errorf("service %s twice", s.Key())
		}
		s.Endpoints = append([]netip.AddrPort(nil), s.Endpoints...)
		want[s.Key()] = &s
	}
	tx := p.nft.NewTransaction(p.family)
	applied := p.applied
	if applied == nil {
		if err := p.setup(ctx, tx); err != nil {
			return 0, err
		}
		applied = map[string]*Service{}
	}
	for _, key := range sortedKeys(applied) {
		if _, ok := want[key]; !ok {
			p.remove(tx, applied[key])
		}
	}
	for _, key := range sortedKeys(want) {
		p.update(tx, applied[key], want[key])
	}
	if err := p.nft.Run(ctx, tx); err != nil {
		return 0, err
	}
	p.applied = want
	return tx.NumOperations(), nil
}

// setup queues the base chains and jumps; KUBE-* chains found from an
// earlier run are flushed and their service chains deleted first.
func (p *Proxier) setup(ctx context.Context, tx *nfk.Transaction) error {
	chains, err := nfk.ListChains(ctx, p.nft, p.family, table)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	var stale []string
	for _, c := range chains {
		have[c] = true
		if strings.HasPrefix(c, "KUBE-SVC-") || strings.HasPrefix(c, "KUBE-SEP-") {
			stale = append(stale, c)
		}
	}
	base := []string{chainServices, chainMarkMasq, chainPostrouting}
	for _, c := range append(base, stale...) {
		if have[c] {
			tx.Flush(chain(c))
		}
	}
	for _, c := range stale {
		tx.Delete(chain(c))
	}
	for _, c := range base {
		if !have[c] {
			tx.Add(chain(c))
		}
	}
	jumps := []struct{ from, comment, to string }{
		{"PREROUTING", "kubernetes service portals", chainServices},
		{"OUTPUT", "kubernetes service portals", chainServices},
		{"POSTROUTING", "kubernetes postrouting rules", chainPostrouting},
	}
	for _, j := range jumps {
		spec := []string{"-m", "comment", "--comment", j.comment, "-j", j.to}
		if !have[j.to] {
			tx.Add(rule(j.from, spec))
			continue
		}
		ok, err := nfk.Exists(ctx, p.nft, p.family, rule(j.from, spec))
		if err != nil {
			return err
		}
		if !ok {
			tx.Add(rule(j.from, spec))
		}
	}
	tx.Add(rule(chainMarkMasq, []string{"-j", "MARK", "--set-xmark", masqMark}))
	tx.Add(rule(chainPostrouting, []string{"-m", "mark", "--mark", masqMark, "-j", "MASQUERADE"}))
	return nil
}

// remove queues the removal of a service: its entry, its chain and its
// endpoints' chains.
func (p *Proxier) remove(tx *nfk.Transaction, s *Service) {
	tx.Delete(rule(chainServices, p.serviceRule(s)))
	tx.Flush(chain(svcChain(s)))
	for _, ep := range s.Endpoints {
		tx.Flush(chain(sepChain(s, ep)))
	}
	tx.Delete(chain(svcChain(s)))
	for _, ep := range s.Endpoints {
		tx.Delete(chain(sepChain(s, ep)))
	}
}

// update queues what turns service old (nil: absent) into s; nothing when
// they are equal. The service's chain is rewritten when its endpoints
// change; endpoints that stay keep their chains untouched.
func (p *Proxier) update(tx *nfk.Transaction, old, s *Service) {
	if old != nil && equal(old, s) {
		return
	}
	if old != nil && (old.ClusterIP != s.ClusterIP || old.Port != s.Port || old.Protocol != s.Protocol) {
		p.remove(tx, old)
		old = nil
	}
	had := map[netip.AddrPort]bool{}
	if old == nil {
		tx.Add(chain(svcChain(s)))
		tx.Add(rule(chainServices, p.serviceRule(s)))
	} else {
		tx.Flush(chain(svcChain(s)))
		for _, ep := range old.Endpoints {
			had[ep] = true
		}
	}
	keep := map[netip.AddrPort]bool{}
	for _, ep := range s.Endpoints {
		keep[ep] = true
		if had[ep] {
			continue
		}
		tx.Add(chain(sepChain(s, ep)))
		for _, spec := range p.sepRules(s, ep) {
			tx.Add(rule(sepChain(s, ep), spec))
		}
	}
	if old != nil {
		for _, ep := range old.Endpoints {
			if !keep[ep] {
				tx.Flush(chain(sepChain(old, ep)))
				tx.Delete(chain(sepChain(old, ep)))
			}
		}
	}
	for _, spec := range p.endpointRules(s) {
		tx.Add(rule(svcChain(s), spec))
	}
}

func equal(a, b *Service) bool {
	if a.ClusterIP != b.ClusterIP || a.Port != b.Port || a.Protocol != b.Protocol || len(a.Endpoints) != len(b.Endpoints) {
		return false
	}
	for i := range a.Endpoints {
		if a.Endpoints[i] != b.Endpoints[i] {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]*Service) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
