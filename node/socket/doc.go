// Package socket listens on a unix socket by its path on the host, whatever
// the path's length.
//
// A launcher pod's emptyDir under the kubelet's root directory
// (launcher/layout.HostPrivateDir) is deeper than the 108 bytes a unix
// socket address may hold. Listen binds through an open descriptor of the
// socket's directory (/proc/self/fd/<n>/<name>), which is short whatever
// the directory. The unit tests' fake launchers (node/fakelauncher) listen
// this way. virt-handler dials nothing by path: it reaches a pod's sockets
// only through node/podfs, which refuses symlinks and checks the peer.
//
// It imports nothing of the platform.
package socket
