#!/bin/bash
# Replace restores (iptables-restore without --noflush) against
# iptables-legacy-restore, each restore in a fresh namespace of its own,
# tools taking turns (BENCHMARKS.md §8.5).
# Usage (root): docs/bench/restores.sh NEW_BIN [OLD_BIN]
#   small inputs: CPU time (perf stat task-clock of the restore and its
#   children), median of 11; large inputs: /usr/bin/time once (wall, user,
#   sys, peak RSS), compiled (default) and with --no-compile-runs.
# Inputs (filter table):
#   x1000, x10000   -A X -s ADDR/32 -j ACCEPT × N in one user chain (case 1.1)
#   c1000, c10000   N empty user chains (case 1.2)
#   s200x10, s200x100  200 chains × N such rules (case 1.3)
#   d1000, d100000  -s A -d B -p tcp --dport P -m comment, all distinct: no runs
#   a100000         -A FORWARD -s ADDR -j ACCEPT × 100k
#   m100k, m1m      100 / 1000 chains × 1000 (-s ADDR -d NET), as reads-1m.sh
# Changes only the namespace it creates (rst-bench), removed at the end.
set -u
NEW=$1
OLD=${2:-}
DIR=$(mktemp -d /tmp/restores.XXXXXX)
trap 'ip netns del rst-bench 2>/dev/null; rm -rf "$DIR"' EXIT
python3 - "$DIR" <<'EOF'
import sys
d = sys.argv[1]
def w(name, chains, rules):
    with open(f"{d}/{name}", "w") as f:
        f.write("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
        for c in chains: f.write(f":{c} - [0:0]\n")
        for r in rules: f.write(r + "\n")
        f.write("COMMIT\n")
def a(i): return f"10.{(i>>16)&255}.{(i>>8)&255}.{i&255}"
def d_(i): return (f"-A FORWARD -s {a(i)} -d 172.16.{(i>>8)&255}.{i&255} -p tcp -m tcp"
                   f" --dport {i%60000+1} -m comment --comment \"rule {i}\" -j ACCEPT")
for n in (1000, 10000):
    w(f"x{n}", ["X"], (f"-A X -s {a(i)}/32 -j ACCEPT" for i in range(n)))
    w(f"c{n}", [f"C{i:06}" for i in range(n)], [])
for n in (10, 100):
    w(f"s200x{n}", [f"C{c:06}" for c in range(200)],
      (f"-A C{c:06} -s {a(i)}/32 -j ACCEPT" for c in range(200) for i in range(n)))
for n in (1000, 100000):
    w(f"d{n}", [], (d_(i) for i in range(n)))
w("a100000", [], (f"-A FORWARD -s {a(i)} -j ACCEPT" for i in range(100000)))
for k in (100, 1000):
    w(f"m{'100k' if k == 100 else '1m'}", [f"C{c}" for c in range(k)],
      (f"-A C{c} -s 10.{c>>8}.{c&255}.{i&255}/32 -d 192.0.2.{i>>8} -j ACCEPT"
       for c in range(k) for i in range(1000)))
EOF
tools="$NEW ${OLD} legacy"
cmd() { if [ "$1" = legacy ]; then echo iptables-legacy-restore; else echo "$1 --direct ${2:-} iptables-restore"; fi; }
for f in x1000 c1000 s200x10 x10000 c10000 s200x100 d1000; do
  declare -A T=()
  for r in $(seq 11); do
    for t in $tools; do
      ip netns add rst-bench
      perf stat -x, -e task-clock -o "$DIR/stat" -- ip netns exec rst-bench $(cmd $t) < "$DIR/$f" > /dev/null 2>&1
      T[$t]="${T[$t]:-} $(grep task-clock "$DIR/stat" | cut -d, -f1)"
      ip netns del rst-bench
    done
  done
  for t in $tools; do
    echo "$f $(basename $t): CPU median $(echo ${T[$t]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {printf "%.1f ms", a[int((NR+1)/2)]}')"
  done
  unset T
done
for f in a100000 d100000 m100k m1m; do
  for t in $tools; do
    for flag in "" --no-compile-runs; do
      [ "$t" = legacy ] && [ -n "$flag" ] && continue
      [ "$f" = m1m ] && [ -n "$flag" ] && continue
      ip netns add rst-bench
      /usr/bin/time -o "$DIR/time" -f "%e s wall, %U user, %S sys, %M KB" \
        ip netns exec rst-bench $(cmd $t $flag) < "$DIR/$f" > /dev/null 2>&1
      echo "$f $(basename $t) $flag: $(tail -1 "$DIR/time")"
      ip netns del rst-bench
    done
  done
done
