# dockerd 20.10 (Debian docker.io): the daemon with its own data and exec
# roots and its own containerd, IPv4 and IPv6 (ip6tables) rules; an image
# imported from a tarball holding one static binary; a user network and an
# internal one; containers with published ports; then everything removed
# and the daemon stopped. Sourced by ns.sh (see there for step/snapshot).

client_run() {
    D=$W/docker
    mkdir -p "$D/data" "$D/etc" "$D/cli" "$D/img"
    mount --bind "$D/etc" /etc/docker
    export DOCKER_HOST=unix:///run/docker.sock DOCKER_CONFIG=$D/cli
    # The container's cgroups go under a parent of this run's own, removed
    # at the end (the hierarchies are the host's).
    cg=nfkeeper-real-clients-$(basename "$W")

    step image-binary gcc -static -Os -o "$D/img/pause" "$HERE/pause.c"
    dockerd --data-root "$D/data" --exec-root /run/docker --pidfile /run/docker.pid \
        -H "$DOCKER_HOST" --storage-driver vfs --cgroup-parent "/$cg" \
        --experimental --ipv6 --ip6tables --fixed-cidr-v6 fd00:db8:1::/64 \
        >"$W/log/dockerd.log" 2>&1 &
    dockerd_pid=$!
    step dockerd-up wait_for docker version
    snapshot started
    step import sh -c "tar -C '$D/img' -c . | docker import - nfk-test:1"
    step net-create docker network create --ipv6 --subnet 172.30.0.0/24 \
        --subnet fd00:db8:2::/64 -o com.docker.network.bridge.name=nfkbr0 nfknet
    step net-internal docker network create --internal --subnet 172.31.0.0/24 -o com.docker.network.bridge.name=nfkbr1 nfkint
    step run-default docker run -d --name web -p 8080:80 -p 8053:53/udp nfk-test:1 /pause
    step run-user docker run -d --name app --network nfknet -p 127.0.0.1:8443:443 nfk-test:1 /pause
    step connect-internal docker network connect nfkint app
    snapshot running
    step rm-containers docker rm -f web app
    step net-rm docker network rm nfknet nfkint
    snapshot removed
    # Errors logged until now, and warnings about the firewall (the others
    # are racy: shim and grpc reconnects); the shutdown's errors are racy
    # too (containerd's event stream closing first or not).
    grep -E 'level=(error|fatal)|level=warning.*([Ii]ptables|ip6tables|[Cc]hain|[Ff]irewall)' \
        "$W/log/dockerd.log" |
        sed -E 's/time="[^"]*" //' >"$out/errors"
    step dockerd-stop stop_pid "$dockerd_pid"
    snapshot stopped
    find /sys/fs/cgroup/*/"$cg" -depth -type d -exec rmdir {} + 2>/dev/null
    return 0
}
