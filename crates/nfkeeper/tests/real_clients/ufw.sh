# ufw 0.36 (Debian): enable, allow, limit, deny, reject, route, insert,
# default policy, logging, delete, reload, for IPv4 and IPv6, then
# disable. Sourced by ns.sh (see there for step/snapshot).

client_run() {
    # Private state: ufw's configuration, its rule files and defaults.
    mkdir -p "$W/ufw/etc" "$W/ufw/lib"
    cp -a /etc/ufw/. "$W/ufw/etc/"
    cp -a /lib/ufw/. "$W/ufw/lib/"
    mount --bind "$W/ufw/etc" /etc/ufw
    mount --bind "$W/ufw/lib" /lib/ufw
    # IPv6 on; no sysctl changes (an empty file).
    : >"$W/ufw/sysctl.conf"
    sed -e 's/^IPV6=.*/IPV6=yes/' -e "s|^IPT_SYSCTL=.*|IPT_SYSCTL=$W/ufw/sysctl.conf|" \
        /etc/default/ufw >"$W/ufw/default"
    mount --bind "$W/ufw/default" /etc/default/ufw

    step enable ufw --force enable
    step allow-ssh ufw allow 22/tcp
    step allow-v4-net ufw allow from 192.0.2.0/24 to any port 80 proto tcp
    step allow-v6-net ufw allow from 2001:db8::/32 to any port 443 proto tcp
    step limit ufw limit 2222/tcp
    step deny-telnet ufw deny 23
    step deny-v6-host ufw deny from 2001:db8:1::1
    step reject-out ufw reject out 25/tcp
    step allow-udp-range ufw allow 60000:60010/udp
    step route-allow ufw route allow in on lo out on lo to 198.51.100.0/24 port 53 proto udp
    step insert-first ufw insert 1 deny from 203.0.113.9 to any port 22 proto tcp
    step default-outgoing ufw default deny outgoing
    step logging ufw logging medium
    step delete-ssh ufw delete allow 22/tcp
    step delete-telnet ufw delete deny 23
    step status ufw status verbose
    step reload ufw reload
    snapshot enabled
    step disable ufw --force disable
    snapshot disabled
    # ufw reports problems on its own output (a rule it skips, a failed
    # iptables call) and may still exit 0.
    grep -E 'ERROR|WARN|Skipping|[Pp]roblem|[Cc]ould not' "$W/log/steps.log" >"$out/errors"
    return 0
}
