#!/bin/bash
# Reads of 100 000 rules in one chain (-A FORWARD -s ADDR -j ACCEPT), direct
# mode, each tool in a namespace of its own, best of 3: iptables-save -c,
# -L -v -n, iptables-save. Usage (root): docs/bench/reads-100k.sh NEW_BIN OLD_BIN
# (two nfkeeper builds) ; iptables-legacy is the baseline. Changes only the
# namespaces it creates (rd-new, rd-old, rd-legacy), removed at the end.
set -u
NEW=$1; OLD=$2
trap 'for t in new old legacy; do ip netns del rd-$t 2>/dev/null; done; rm -f /tmp/r100k.txt' EXIT
python3 -c '
print("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]")
for i in range(100000):
    print(f"-A FORWARD -s 10.{(i>>16)&255}.{(i>>8)&255}.{i&255}/32 -j ACCEPT")
print("COMMIT")' > /tmp/r100k.txt
best() { local b=999999; for r in 1 2 3; do s=$(date +%s%N); "$@" > /dev/null 2>&1; e=$(( ($(date +%s%N)-s)/1000000 )); [ $e -lt $b ] && b=$e; done; echo $b; }
for tool in new old legacy; do
  ns=rd-$tool; ip netns add $ns
  case $tool in
    new) B="ip netns exec $ns $NEW --direct"; $B iptables-restore < /tmp/r100k.txt; SAVE="$B iptables-save"; IPT="$B iptables";;
    old) B="ip netns exec $ns $OLD --direct"; $B iptables-restore < /tmp/r100k.txt; SAVE="$B iptables-save"; IPT="$B iptables";;
    legacy) ip netns exec $ns iptables-legacy-restore < /tmp/r100k.txt; SAVE="ip netns exec $ns iptables-legacy-save"; IPT="ip netns exec $ns iptables-legacy";;
  esac
  echo "$tool save-c=$(best $SAVE -c)ms  L-v-n=$(best $IPT -L -v -n)ms  save=$(best $SAVE)ms  rules=$($SAVE | grep -c '^-A')"
  ip netns del $ns
done
