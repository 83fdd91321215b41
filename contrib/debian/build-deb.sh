#!/bin/sh
# Builds the nfkeeper Debian package from binaries cargo built, with
# dpkg-deb only (no debhelper, no cargo-deb):
#
#   cargo build --release
#   contrib/debian/build-deb.sh [--nfkeeper BIN] [--bench BIN|--no-bench] [--out DIR]
#
# BIN defaults to target/release/nfkeeper (under $CARGO_TARGET_DIR when set)
# and nfkeeper-bench beside it (left out when absent, or with --no-bench);
# DIR to target/debian. Prints the path of the .deb it wrote.
#
# Contents: /usr/sbin/nfkeeper (and nfkeeper-bench, which `nfkeeper bench`
# runs from beside it), /usr/lib/nfkeeper/NAME -> ../../sbin/nfkeeper for
# every personality the binary answers to (probed: `NAME --version` must
# name NAME), the systemd unit (not enabled), the man pages, the bash
# completion, the docs. The
# maintainer scripts register those names as alternatives at priority 5
# (docs/packaging.md).
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
nfk=$target/release/nfkeeper
bench=
no_bench=
out=$target/debian
while [ $# -gt 0 ]; do
    case "$1" in
    --nfkeeper) nfk=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --no-bench) no_bench=1; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--nfkeeper BIN] [--bench BIN|--no-bench] [--out DIR]" >&2; exit 2 ;;
    esac
done
[ -n "$bench" ] || bench=$(dirname "$nfk")/nfkeeper-bench
[ -z "$no_bench" ] && [ -x "$bench" ] || bench=
[ -x "$nfk" ] || { echo "$0: no nfkeeper binary at $nfk (cargo build --release)" >&2; exit 1; }

# Priority of nfkeeper's alternatives: below iptables-legacy (10) and
# iptables-nft (20), so that installing the package switches nothing.
prio=5
# Link groups as Debian's iptables package defines them (master, then its
# slaves; names must match, or update-alternatives refuses the group).
# iptables and ip6tables are required, the others go in when the binary
# answers to every name of the group.
groups="iptables:iptables-restore,iptables-save ip6tables:ip6tables-restore,ip6tables-save ipset:"
required="iptables ip6tables"

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$repo/Cargo.toml")
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
umask 022
chmod 0755 "$stage"

install -D -m 0755 "$nfk" "$stage/usr/sbin/nfkeeper"
[ -z "$bench" ] || install -D -m 0755 "$bench" "$stage/usr/sbin/nfkeeper-bench"
# As dh_strip does: debug info and symbols stay in the build tree.
if command -v strip >/dev/null 2>&1; then
    for b in "$stage"/usr/sbin/*; do
        strip --remove-section=.comment --remove-section=.note --strip-unneeded "$b"
    done
fi

# The personalities: a name goes in only if the binary answers to it.
mkdir -p "$stage/usr/lib/nfkeeper"
answers() {
    ln -sf ../../sbin/nfkeeper "$stage/usr/lib/nfkeeper/$1"
    first=$("$stage/usr/lib/nfkeeper/$1" --version 2>/dev/null | awk 'NR == 1 { print $1 }') || true
    [ "$first" = "$1" ] || { rm -f "$stage/usr/lib/nfkeeper/$1"; return 1; }
}
install_cmds=
remove_cmds=
for g in $groups; do
    master=${g%%:*}
    slaves=$(echo "${g#*:}" | tr , ' ')
    ok=1
    for n in $master $slaves; do answers "$n" || ok=; done
    if [ -z "$ok" ]; then
        for n in $master $slaves; do rm -f "$stage/usr/lib/nfkeeper/$n"; done
        case " $required " in
        *" $master "*) echo "$0: $nfk does not answer to every name of $master's group" >&2; exit 1 ;;
        esac
        continue
    fi
    cmd="    update-alternatives --install /usr/sbin/$master $master /usr/lib/nfkeeper/$master $prio"
    for s in $slaves; do
        cmd="$cmd \\
        --slave /usr/sbin/$s $s /usr/lib/nfkeeper/$s"
    done
    install_cmds="$install_cmds$cmd
"
    remove_cmds="$remove_cmds    update-alternatives --remove $master /usr/lib/nfkeeper/$master
"
done

# The unit of contrib/, run from where the package puts the binary.
mkdir -p "$stage/usr/lib/systemd/system"
sed 's|^ExecStart=/usr/local/bin/nfkeeper |ExecStart=/usr/sbin/nfkeeper |' \
    "$repo/contrib/nfkeeper.service" >"$stage/usr/lib/systemd/system/nfkeeper.service"
grep -q '^ExecStart=/usr/sbin/nfkeeper ' "$stage/usr/lib/systemd/system/nfkeeper.service" ||
    { echo "$0: contrib/nfkeeper.service: no ExecStart=/usr/local/bin/nfkeeper to rewrite" >&2; exit 1; }

mkdir -p "$stage/usr/share/man/man8"
for page in nfkeeper nfkeeper-bench; do
    [ "$page" = nfkeeper ] || [ -n "$bench" ] || continue
    gzip -9n <"$repo/docs/man/$page.8" >"$stage/usr/share/man/man8/$page.8.gz"
done

# Bash completion (subcommands and options from the installed binary's
# --help at completion time).
install -D -m 0644 "$repo/contrib/completions/nfkeeper.bash" \
    "$stage/usr/share/bash-completion/completions/nfkeeper"

doc=$stage/usr/share/doc/nfkeeper
mkdir -p "$doc/docs"
cp "$repo/README.md" "$repo/ARCHITECTURE.md" "$doc/"
cp "$repo"/docs/*.md "$doc/docs/"
cat >"$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: nfkeeper

Files: *
Copyright: the nfkeeper authors
License: GPL-2.0-or-later
 On Debian systems, the full text of the GNU General Public License
 version 2 can be found in /usr/share/common-licenses/GPL-2.
COPYRIGHT

mkdir -p "$stage/DEBIAN"
# Through the environment, which awk takes as is (-v would read escapes).
CMDS=$install_cmds awk '$0 == "@INSTALL@" { printf "%s", ENVIRON["CMDS"]; next } { print }' \
    "$repo/contrib/debian/postinst.in" >"$stage/DEBIAN/postinst"
CMDS=$remove_cmds awk '$0 == "@REMOVE@" { printf "%s", ENVIRON["CMDS"]; next } { print }' \
    "$repo/contrib/debian/prerm.in" >"$stage/DEBIAN/prerm"
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CONTROL
Package: nfkeeper
Version: $version
Architecture: $arch
Maintainer: ${NFKEEPER_DEB_MAINTAINER:-nfkeeper developers <nfkeeper@localhost>}
Installed-Size: $size
Section: net
Priority: optional
Description: iptables-compatible firewall ruleset manager on native nftables
 nfkeeper speaks iptables (the command line, iptables-save and
 iptables-restore, with their messages and exit codes), keeps an indexed
 model of the ruleset and programs the kernel through native nftables over
 netlink. nfkeeper serve keeps the model of a network namespace warm for
 programs that change the firewall often.
 .
 The package offers nfkeeper as an alternative for iptables, ip6tables and
 their -save and -restore commands at a priority below iptables' own; select
 it with update-alternatives --set. The systemd unit is not enabled.
CONTROL

mkdir -p "$out"
deb=$out/nfkeeper_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
