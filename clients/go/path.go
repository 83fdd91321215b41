package nfkeeper

import (
	"os"
	"strconv"
	"syscall"
)

// DefaultPath is where the daemon of the caller's network namespace
// listens: $NFKEEPER_SOCKET if set (any value), else NamespacePath().
func DefaultPath() string {
	if p, ok := os.LookupEnv("NFKEEPER_SOCKET"); ok {
		return p
	}
	return NamespacePath()
}

// NamespacePath is /run/nfkeeper/net-<inode>.sock with the inode number of
// /proc/self/ns/net (one stat), whatever the environment says. Without
// /proc it names no daemon (net-unknown.sock), so connecting fails.
//
// /proc/self names the process, so this is the namespace of its main
// thread; a program that moves a locked thread into another namespace
// passes that namespace's path to New itself.
func NamespacePath() string {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/net", &st); err != nil {
		return "/run/nfkeeper/net-unknown.sock"
	}
	return "/run/nfkeeper/net-" + strconv.FormatUint(st.Ino, 10) + ".sock"
}
