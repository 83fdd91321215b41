package nfkeeper_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
)

// Scenario files (testdata/scenarios/*.txt) script transactions and their
// expected outcomes; the Fake runs them in unit tests and the daemon in
// the integration tests, so both are held to the same results:
//
//	# comment
//	tx [v4|v6]                 start a transaction
//	-t nat -A CHAIN -j ...     an operation (iptables words, "..." quoting)
//	=> ok                      run it: it succeeds
//	=> op N code C: MESSAGE    run it: operation N (1-based) fails (\n in MESSAGE is a newline)
//	=> failed code C: MESSAGE  run it: the transaction fails as a whole
//	save [v4|v6] [TABLE]       iptables-save output (no comment lines) up to "end"
type scenarioStep struct {
	line    int
	family  nfk.Family
	ops     [][]string
	want    string // "ok", or the expected error as formatted by outcome
	save    bool
	table   string
	wantOut string
}

func familyWord(w string) (nfk.Family, error) {
	switch w {
	case "", "v4":
		return nfk.IPv4, nil
	case "v6":
		return nfk.IPv6, nil
	}
	return 0, fmt.Errorf("family %q", w)
}

func loadScenario(t *testing.T, path string) []scenarioStep {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []scenarioStep
	var cur *scenarioStep
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		bad := func(why string) { t.Fatalf("%s:%d: %s: %q", path, n, why, line) }
		if cur != nil && cur.save {
			if line == "end" {
				steps = append(steps, *cur)
				cur = nil
			} else {
				cur.wantOut += line + "\n"
			}
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		switch {
		case w[0] == "tx":
			if cur != nil {
				bad("tx inside a tx")
			}
			fam, err := familyWord(strings.Join(w[1:], ""))
			if err != nil {
				bad(err.Error())
			}
			cur = &scenarioStep{line: n, family: fam}
		case w[0] == "save":
			if cur != nil {
				bad("save inside a tx")
			}
			st := scenarioStep{line: n, save: true}
			if len(w) > 1 {
				fam, err := familyWord(w[1])
				if err != nil {
					bad(err.Error())
				}
				st.family = fam
			} else {
				st.family = nfk.IPv4
			}
			if len(w) > 2 {
				st.table = w[2]
			}
			cur = &st
		case w[0] == "=>":
			if cur == nil {
				bad("=> outside a tx")
			}
			cur.want = strings.ReplaceAll(strings.TrimSpace(strings.TrimPrefix(line, "=>")), `\n`, "\n")
			steps = append(steps, *cur)
			cur = nil
		default:
			if cur == nil {
				bad("operation outside a tx")
			}
			words, err := nfk.SplitWords(line)
			if err != nil {
				bad(err.Error())
			}
			cur.ops = append(cur.ops, words)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s: unterminated step from line %d", path, cur.line)
	}
	return steps
}

// outcome formats Run's result as the scenario files write it.
func outcome(err error) string {
	var tx *nfk.TxError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &tx) && tx.Index >= 0:
		return "op " + strconv.Itoa(tx.Index+1) + " code " + strconv.Itoa(tx.Code) + ": " + tx.Message
	case errors.As(err, &tx):
		return "failed code " + strconv.Itoa(tx.Code) + ": " + tx.Message
	}
	return "error: " + err.Error()
}

// undated drops iptables-save's comment lines.
func undated(b []byte) string {
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out.WriteString(l)
		}
	}
	return out.String()
}

// runScenario runs one scenario file against i.
func runScenario(t *testing.T, i nfk.Interface, path string) {
	ctx := context.Background()
	for _, st := range loadScenario(t, path) {
		where := fmt.Sprintf("%s:%d", filepath.Base(path), st.line)
		if st.save {
			out, err := i.Save(ctx, st.family, nfk.SaveOptions{Table: st.table})
			if err != nil {
				t.Fatalf("%s: save: %v", where, err)
			}
			if got := undated(out); got != st.wantOut {
				t.Fatalf("%s: save\n%s\nwant\n%s", where, got, st.wantOut)
			}
			continue
		}
		tx := i.NewTransaction(st.family)
		for _, words := range st.ops {
			tx.Command(words...)
		}
		if err := tx.Err(); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if got := outcome(i.Run(ctx, tx)); got != st.want {
			t.Fatalf("%s: got\n  %q\nwant\n  %q", where, got, st.want)
		}
	}
}

func scenarioFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	return files
}

func TestFakeScenarios(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			runScenario(t, nfk.NewFake(), f)
		})
	}
}
