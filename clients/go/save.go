package nfkeeper

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// SavedTable is one table as iptables-save prints it.
type SavedTable struct {
	Name string
	// Chains in save order: built-in chains first, then user chains.
	Chains []SavedChain
}

// SavedChain is one chain of a saved table and its rules, in order.
type SavedChain struct {
	Name string
	// Policy of a built-in chain; "" for a user chain.
	Policy         string
	Packets, Bytes uint64
	Rules          []SavedRule
}

// SavedRule is one rule: its options after "-A CHAIN", one argument per
// element (quotes removed), and its counters when saved with --counters.
type SavedRule struct {
	Spec           []string
	Packets, Bytes uint64
}

// ParseSave reads iptables-save output (comment lines are skipped).
func ParseSave(text []byte) ([]SavedTable, error) {
	var tables []SavedTable
	var cur *SavedTable
	chains := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		bad := func(why string) error { return fmt.Errorf("iptables-save line %d: %s: %q", n, why, line) }
		switch {
		case line == "" || line[0] == '#':
		case line[0] == '*':
			if cur != nil {
				return nil, bad("table without COMMIT before it")
			}
			tables = append(tables, SavedTable{Name: line[1:]})
			cur = &tables[len(tables)-1]
			chains = map[string]int{}
		case cur == nil:
			return nil, bad("outside a table")
		case line == "COMMIT":
			cur = nil
		case line[0] == ':':
			f := strings.Fields(line[1:])
			if len(f) != 3 {
				return nil, bad("chain line")
			}
			c := SavedChain{Name: f[0]}
			if f[1] != "-" {
				c.Policy = f[1]
			}
			var err error
			if c.Packets, c.Bytes, err = counters(f[2]); err != nil {
				return nil, bad(err.Error())
			}
			chains[c.Name] = len(cur.Chains)
			cur.Chains = append(cur.Chains, c)
		default:
			var r SavedRule
			if line[0] == '[' {
				end := strings.IndexByte(line, ']')
				if end < 0 {
					return nil, bad("rule counters")
				}
				var err error
				if r.Packets, r.Bytes, err = counters(line[:end+1]); err != nil {
					return nil, bad(err.Error())
				}
				line = strings.TrimSpace(line[end+1:])
			}
			w, err := SplitWords(line)
			if err != nil {
				return nil, bad(err.Error())
			}
			if len(w) < 2 || w[0] != "-A" {
				return nil, bad("rule line without -A CHAIN")
			}
			i, ok := chains[w[1]]
			if !ok {
				return nil, bad("rule of an undeclared chain")
			}
			r.Spec = w[2:]
			cur.Chains[i].Rules = append(cur.Chains[i].Rules, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("iptables-save: table %s has no COMMIT", cur.Name)
	}
	return tables, nil
}

// counters reads "[packets:bytes]".
func counters(s string) (uint64, uint64, error) {
	p, b, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), ":")
	if !ok || !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return 0, 0, fmt.Errorf("counters %q", s)
	}
	pn, err1 := strconv.ParseUint(p, 10, 64)
	bn, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("counters %q", s)
	}
	return pn, bn, nil
}

// SplitWords splits a line into arguments as iptables-restore does: blanks
// separate words, "..." groups (and may be empty), a backslash escapes the
// next character inside quotes only.
func SplitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inQuote, escaped, quoted := false, false, false
	for _, c := range line {
		switch {
		case inQuote && escaped:
			cur.WriteRune(c)
			escaped = false
		case inQuote && c == '\\':
			escaped = true
		case inQuote && c == '"':
			inQuote = false
			words = append(words, cur.String())
			cur.Reset()
			quoted = false
		case inQuote:
			cur.WriteRune(c)
		case c == '"':
			inQuote, quoted = true, true
		case c == ' ' || c == '\t':
			if cur.Len() > 0 || quoted {
				words = append(words, cur.String())
				cur.Reset()
			}
			quoted = false
		default:
			cur.WriteRune(c)
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote")
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words, nil
}

// quotedOptions are the options whose argument iptables-save prints with
// quotes unless it is made of letters, digits, '_' and '-' only.
var quotedOptions = map[string]bool{
	"--comment": true, "--log-prefix": true, "--nflog-prefix": true, "--nfacct-name": true,
}

// saveWord writes one rule argument as iptables-save would: quoted after
// the options above (and wherever it could not be read back otherwise).
func saveWord(b *strings.Builder, prev, w string) {
	plain := w != ""
	for i := 0; i < len(w) && plain; i++ {
		c := w[i]
		plain = c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if plain || (!quotedOptions[prev] && w != "" && !strings.ContainsAny(w, " \t\n\"'\\")) {
		b.WriteString(w)
		return
	}
	b.WriteByte('"')
	for _, c := range w {
		if c == '"' || c == '\\' || c == '\'' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	b.WriteByte('"')
}

// FormatSave prints tables in iptables-save format, without the dated
// comment lines; with counters, every rule line starts with its
// [packets:bytes].
func FormatSave(tables []SavedTable, withCounters bool) string {
	var b strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&b, "*%s\n", t.Name)
		for _, c := range t.Chains {
			p := c.Policy
			if p == "" {
				p = "-"
			}
			fmt.Fprintf(&b, ":%s %s [%d:%d]\n", c.Name, p, c.Packets, c.Bytes)
		}
		for _, c := range t.Chains {
			for _, r := range c.Rules {
				if withCounters {
					fmt.Fprintf(&b, "[%d:%d] ", r.Packets, r.Bytes)
				}
				b.WriteString("-A ")
				b.WriteString(c.Name)
				prev := ""
				for _, w := range r.Spec {
					b.WriteByte(' ')
					saveWord(&b, prev, w)
					prev = w
				}
				b.WriteByte('\n')
			}
		}
		b.WriteString("COMMIT\n")
	}
	return b.String()
}
