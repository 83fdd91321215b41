# fail2ban 1.0.2 (Debian): a server with one jail per action, each
# started, banning an address that fails to log in five times in a test
# log, banning and unbanning IPv4 and IPv6 addresses by fail2ban-client,
# then stopped.
# CASE "iptables": the iptables-multiport and iptables-allports actions;
# CASE "ipset": the iptables-ipset action (ipset sets and `-m set`).
# Sourced by ns.sh (see there for step/snapshot).

client_run() {
    # Private configuration, socket, pid file and log; an in-memory database.
    mkdir -p "$W/f2b" /run/fail2ban
    cp -a /etc/fail2ban/. "$W/f2b/"
    rm -f "$W/f2b/jail.d/"*
    cat >"$W/f2b/fail2ban.local" <<EOT
[DEFAULT]
loglevel = INFO
logtarget = $W/log/fail2ban.log
socket = /run/fail2ban/fail2ban.sock
pidfile = /run/fail2ban/fail2ban.pid
dbfile = :memory:
EOT
    : >"$W/auth.log"
    : >"$W/quiet.log"
    cat >"$W/f2b/jail.local" <<EOT
[DEFAULT]
backend = polling
filter = sshd
logpath = $W/auth.log
bantime = 3600

EOT
    case $CASE in
        iptables)
            jails="multi all"
            cat >>"$W/f2b/jail.local" <<EOT
[multi]
enabled = true
action = iptables-multiport[name=multi, port="22,80", protocol=tcp]

[all]
enabled = true
logpath = $W/quiet.log
action = iptables-allports[name=all]
EOT
            ;;
        ipset)
            jails=set
            cat >>"$W/f2b/jail.local" <<EOT
[set]
enabled = true
action = iptables-ipset[name=set, port="22,443", protocol=tcp, type=multiport]
EOT
            ;;
        *) echo "unknown case '$CASE'" >&2; return 2 ;;
    esac
    mount --bind "$W/f2b" /etc/fail2ban

    step start fail2ban-client start
    # A ban from the log, as in production: five failed logins (the sshd
    # filter's maxretry) from one address, in the log of the first jail
    # only (the others read their own empty logs: jails start their
    # actions on their first ban, in parallel, and the order of their
    # jumps in INPUT would be a race).
    for i in 1 2 3 4 5; do
        echo "$(date '+%b %e %H:%M:%S') host sshd[4242]: Failed password for root from 198.51.100.7 port 5000$i ssh2"
    done >>"$W/auth.log"
    first=${jails%% *}
    step log-ban wait_for sh -c "[ \"\$(fail2ban-client get $first banned 198.51.100.7)\" = 1 ]"
    for jail in $jails; do
        step "$jail-ban4" fail2ban-client set "$jail" banip 192.0.2.10 192.0.2.11
        step "$jail-ban6" fail2ban-client set "$jail" banip 2001:db8::10
    done
    snapshot banned
    for jail in $jails; do
        step "$jail-unban4" fail2ban-client set "$jail" unbanip 192.0.2.10
        step "$jail-unban6" fail2ban-client set "$jail" unbanip 2001:db8::10
    done
    snapshot unbanned
    step stop fail2ban-client stop
    snapshot stopped
    # What the actions reported: fail2ban exits 0 when an action fails.
    grep -E ' (ERROR|CRITICAL) ' "$W/log/fail2ban.log" |
        sed -E 's/^[0-9-]+ [0-9:,]+ +//; s/\[[0-9]+\]//' >"$out/errors"
}
