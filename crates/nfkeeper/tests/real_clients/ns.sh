#!/bin/sh
# Runs as the first process of fresh pid, network and mount namespaces
# (made by the Rust harness with `unshare --fork --kill-child`), so every
# daemon a client starts dies with it and no mount or rule outlives it.
#
# Usage: ns.sh SIDE CLIENT WORK NFKEEPER [CASE]
#   SIDE      nft | nfkeeper: what /usr/sbin/iptables* (and ipset) resolve to
#   CLIENT    the client's script (sourced; defines client_run)
#   WORK      private scratch directory (the harness removes it)
#   NFKEEPER  the nfkeeper binary
#   CASE      passed to the client script (which variant of its sequence)
#
# Writes, under WORK/out: steps (one "NAME RC" line per client step),
# wiring (what the tools resolved to), save/SNAP.4, SNAP.6 and SNAP.ipset
# (iptables-save, ip6tables-save and ipset save of each snapshot the client
# script takes, read with the side's own tools), on the nfkeeper side also
# SNAP.bypass (iptables-nft's save: must stay empty) and SNAP.verify
# (`nfkeeper verify`), and "unordered" (see snapshot).
set -u
side=$1 client=$2 W=$3 nfk=$4 CASE=${5:-}
HERE=$(cd "$(dirname "$0")" && pwd)

# Refuse to touch anything unless this is a new pid, network and mount
# namespace (the harness passes its own namespaces' ids).
if [ "$$" != 1 ] ||
    [ "$(readlink /proc/self/ns/net)" = "${NFK_HOST_NET:-}" ] ||
    [ "$(readlink /proc/self/ns/mnt)" = "${NFK_HOST_MNT:-}" ] ||
    [ -z "${NFK_HOST_NET:-}" ] || [ -z "${NFK_HOST_MNT:-}" ]; then
    echo "ns.sh: not in fresh namespaces; refusing to run" >&2
    exit 99
fi

out=$W/out
mkdir -p "$out/save" "$W/alt" "$W/log"

# Private /run and alternatives; nothing below is visible outside.
mount --make-rprivate /
mount -t tmpfs tmpfs /run
cp -a /etc/alternatives/. "$W/alt/"
for t in iptables ip6tables iptables-save ip6tables-save iptables-restore ip6tables-restore; do
    case $side in
        nft) target=/usr/sbin/$(echo "$t" | sed 's/tables/tables-nft/') ;;
        nfkeeper) target=$nfk ;;
    esac
    ln -sfn "$target" "$W/alt/$t"
done
mount --bind "$W/alt" /etc/alternatives
if [ "$side" = nfkeeper ] && [ -e /usr/sbin/ipset ]; then
    mount --bind "$nfk" /usr/sbin/ipset
fi
ip link set lo up

{
    for t in iptables ip6tables iptables-save iptables-restore; do
        echo "$t -> $(readlink -f "/usr/sbin/$t")"
    done
    if [ ! -e /usr/sbin/ipset ]; then
        echo "ipset -> none"
    elif cmp -s /usr/sbin/ipset "$nfk"; then
        echo "ipset -> nfkeeper"
    else
        echo "ipset -> ipset"
    fi
} >"$out/wiring"

# step NAME CMD...: runs CMD (at most 120 s), its output to log/steps.log,
# "NAME RC" to out/steps.
step() {
    name=$1
    shift
    echo "### $name: $*" >>"$W/log/steps.log"
    case $(command -v "$1") in
        /*) timeout 120 "$@" >>"$W/log/steps.log" 2>&1 ;;
        *) "$@" >>"$W/log/steps.log" 2>&1 ;; # a shell function (bounded itself)
    esac
    rc=$?
    echo "$name $rc" >>"$out/steps"
    return $rc
}

# wait_for CMD...: retries CMD for up to 60 s until it succeeds.
wait_for() {
    i=0
    until "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -ge 120 ] && return 1
        sleep 0.5
    done
}

# stop_pid PID: SIGTERM, then SIGKILL after 30 s; returns once it is gone.
stop_pid() {
    kill -TERM "$1" 2>/dev/null || return 1
    i=0
    while kill -0 "$1" 2>/dev/null; do
        i=$((i + 1))
        [ $i -eq 60 ] && kill -KILL "$1"
        sleep 0.5
    done
    wait "$1" 2>/dev/null
    return 0
}

# snapshot NAME [unordered]: both families' saves as the side's own save
# prints them, and the ipsets; "unordered" when the client's own order of
# rules is not deterministic (they are then compared sorted).
snapshot() {
    [ "${2:-}" = unordered ] && echo "$1" >>"$out/unordered"
    case $side in
        nft)
            iptables-nft-save >"$out/save/$1.4" 2>>"$W/log/save.err"
            ip6tables-nft-save >"$out/save/$1.6" 2>>"$W/log/save.err"
            ;;
        nfkeeper)
            "$nfk" iptables-save >"$out/save/$1.4" 2>>"$W/log/save.err"
            "$nfk" ip6tables-save >"$out/save/$1.6" 2>>"$W/log/save.err"
            # Nothing may have bypassed nfkeeper into iptables-nft's tables.
            iptables-nft-save >"$out/save/$1.bypass" 2>&1
            ip6tables-nft-save >>"$out/save/$1.bypass" 2>&1
            # The kernel holds what nfkeeper's logical rules compile to.
            "$nfk" verify -q >"$out/save/$1.verify" 2>&1
            echo "verify exit $?" >>"$out/save/$1.verify"
            ;;
    esac
    # Kernel ipsets (nft side) or nfkeeper's (nfkeeper side): /usr/sbin/ipset
    # is the side's own.
    ipset save >"$out/save/$1.ipset" 2>>"$W/log/save.err"
}

. "$client"
client_run
echo "exit $?" >>"$out/steps"
