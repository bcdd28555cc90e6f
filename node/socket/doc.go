// Package socket dials and listens on a unix socket by its path on the
// host, whatever the path's length.
//
// virt-handler reaches each launcher's socket through the launcher pod's
// emptyDir under the kubelet's root directory
// (launcher/layout.HostPrivateDir), a path longer than the 108 bytes a unix
// socket address may hold. Dial opens the socket's directory and connects
// through /proc/self/fd/<n>/<name>, which is short whatever the directory.
// Listen binds the same way (the unit tests' fake launchers listen at such
// paths).
//
// It imports nothing of the platform.
package socket
