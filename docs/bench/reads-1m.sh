#!/bin/bash
# 1 000 000 rules in 1 000 chains of 1 000 (-A Cn -s ADDR -j ACCEPT), direct
# mode, each tool in a namespace of its own: the restore (once, with its
# peak RSS), then best of 3 of iptables-save, -S C500, -S C500 1000,
# -L C500 -n, -C C500 (the last rule), with peak RSS of the save.
# Usage (root): docs/bench/reads-1m.sh NFKEEPER_BIN ; iptables-legacy is the
# baseline. Changes only the namespaces it creates (r1m-nfkeeper,
# r1m-legacy), removed at the end (also on failure).
set -u
BIN=$1
IN=$(mktemp /tmp/r1m.XXXXXX)
trap 'for t in nfkeeper legacy; do ip netns del r1m-$t 2>/dev/null; done; rm -f "$IN"' EXIT
python3 -c '
print("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]")
for c in range(1000):
    print(f":C{c} - [0:0]")
for c in range(1000):
    for i in range(1000):
        print(f"-A C{c} -s 10.{c>>8}.{c&255}.{i&255}/32 -d 192.0.2.{i>>8} -j ACCEPT")
print("COMMIT")' > "$IN"
ms() { local s=$(date +%s%N); "$@" > /dev/null 2>&1; echo $(( ($(date +%s%N)-s)/1000000 )); }
best() { local b=999999; for r in 1 2 3; do e=$(ms "$@"); [ "$e" -lt "$b" ] && b=$e; done; echo "$b"; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null < "${STDIN:-/dev/null}" | tail -1; }
LAST="-s 10.1.244.231/32 -d 192.0.2.3 -j ACCEPT"
for tool in nfkeeper legacy; do
  ns=r1m-$tool; ip netns add $ns
  case $tool in
    nfkeeper) P="ip netns exec $ns $BIN --direct"; RESTORE="$P iptables-restore"; SAVE="$P iptables-save"; IPT="$P iptables";;
    legacy) P="ip netns exec $ns"; RESTORE="$P iptables-legacy-restore"; SAVE="$P iptables-legacy-save"; IPT="$P iptables-legacy";;
  esac
  s=$(date +%s%N); r_rss=$(STDIN=$IN rss $RESTORE); r_ms=$(( ($(date +%s%N)-s)/1000000 ))
  echo "$tool restore=${r_ms}ms (peak RSS ${r_rss} KB)" \
    "save=$(best $SAVE)ms (peak RSS $(rss $SAVE) KB)" \
    "-S C500=$(best $IPT -S C500)ms" \
    "-S C500 1000=$(best $IPT -S C500 1000)ms" \
    "-L C500 -n=$(best $IPT -L C500 -n)ms" \
    "-C C500=$(best $IPT -C C500 $LAST)ms" \
    "rules=$($SAVE | grep -c '^-A')"
  ip netns del $ns
done
