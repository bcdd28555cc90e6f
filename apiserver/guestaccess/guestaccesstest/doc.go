// Package guestaccesstest is the virt-handler side of guest access for tests
// of virt-apiserver: the certificates of hack/cluster/certs.sh made in the
// test, and a fake handler on an httptest TLS server that echoes the console
// and VNC streams and answers the actions with a metav1.Status of the
// test's choosing. It must not import node/: virt-apiserver's tests fake
// the handler, they do not run it.
package guestaccesstest
