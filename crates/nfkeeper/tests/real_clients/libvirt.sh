# libvirtd 9.0 (Debian libvirt-daemon): its network driver alone, with
# libvirt's stock default network (NAT, DHCP and DNS by dnsmasq), a NAT
# network with IPv6, a routed and an isolated one: define, start, restart
# of the daemon (which reloads every active network's rules), destroy,
# undefine. Sourced by ns.sh (see there for step/snapshot).
#
# dnsmasq must be installed even for networks without DHCP and DNS:
# libvirtd 9.0 crashes (SIGSEGV) when it reloads active networks and has
# no dnsmasq capabilities.
#
# On restart libvirtd reloads the active networks in its hash table's
# order, which is seeded at random per process: the snapshots from then on
# are compared without order.

client_run() {
    L=$W/libvirt
    mkdir -p "$L/etc/qemu/networks" "$L/drivers" "$L/xml"
    # Private configuration and state; only the network driver loads.
    mount --bind "$L/etc" /etc/libvirt
    for d in /var/lib /var/cache /var/log; do mount -t tmpfs tmpfs "$d"; done
    ln -s /usr/lib/*/libvirt/connection-driver/libvirt_driver_network.so "$L/drivers/"
    export LIBVIRT_DRIVER_DIR=$L/drivers
    # dnsmasq runs as libvirt-dnsmasq: a private passwd and group with it.
    cp /etc/passwd "$L/passwd"
    cp /etc/group "$L/group"
    echo 'libvirt-dnsmasq:x:64055:64055::/var/lib/libvirt/dnsmasq:/usr/sbin/nologin' >>"$L/passwd"
    echo 'libvirt-dnsmasq:x:64055:' >>"$L/group"
    mount --bind "$L/passwd" /etc/passwd
    mount --bind "$L/group" /etc/group
    cat >"$L/etc/libvirtd.conf" <<EOT
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:$W/log/libvirtd.log"
EOT
    cat >"$L/xml/default.xml" <<EOT
<network>
  <name>default</name>
  <bridge name='virbr0'/>
  <forward/>
  <ip address='192.168.122.1' netmask='255.255.255.0'>
    <dhcp>
      <range start='192.168.122.2' end='192.168.122.254'/>
    </dhcp>
  </ip>
</network>
EOT
    cat >"$L/xml/nat6.xml" <<EOT
<network>
  <name>nat6</name>
  <bridge name='virbr3'/>
  <forward mode='nat'>
    <nat><port start='1024' end='65535'/></nat>
  </forward>
  <dns enable='no'/>
  <ip address='192.168.123.1' netmask='255.255.255.0'/>
  <ip family='ipv6' address='fd00:db8:122::1' prefix='64'/>
</network>
EOT
    cat >"$L/xml/routed.xml" <<EOT
<network>
  <name>routed</name>
  <bridge name='virbr1'/>
  <forward mode='route'/>
  <dns enable='no'/>
  <ip address='198.51.100.1' netmask='255.255.255.0'/>
  <ip family='ipv6' address='fd00:db8:123::1' prefix='64'/>
</network>
EOT
    cat >"$L/xml/isolated.xml" <<EOT
<network>
  <name>isolated</name>
  <bridge name='virbr2'/>
  <dns enable='no'/>
  <ip address='203.0.113.1' netmask='255.255.255.0'/>
</network>
EOT
    export LIBVIRT_DEFAULT_URI=network:///system

    libvirtd -f "$L/etc/libvirtd.conf" >"$W/log/libvirtd.out" 2>&1 &
    pid=$!
    step libvirtd-up wait_for virsh net-list --all
    for n in default nat6 routed isolated; do
        step "define-$n" virsh net-define "$L/xml/$n.xml"
        step "start-$n" virsh net-start "$n"
    done
    snapshot started
    step libvirtd-stop stop_pid "$pid"
    libvirtd -f "$L/etc/libvirtd.conf" >>"$W/log/libvirtd.out" 2>&1 &
    pid=$!
    step libvirtd-restart wait_for virsh net-list --all
    snapshot restarted unordered
    step destroy-routed virsh net-destroy routed
    snapshot one-destroyed unordered
    for n in default nat6 isolated; do
        step "destroy-$n" virsh net-destroy "$n"
    done
    for n in default nat6 routed isolated; do
        step "undefine-$n" virsh net-undefine "$n"
    done
    snapshot destroyed
    step libvirtd-stop2 stop_pid "$pid"
    grep -E ': (error|warning) : ' "$W/log/libvirtd.log" |
        sed -E 's/^[0-9-]+ [0-9:.+]+: [0-9]+: //' >"$out/errors"
    return 0
}
