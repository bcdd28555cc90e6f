// Package testserver runs a real virt-apiserver inside a test process: the
// same code as the binary, in --standalone mode (no kube-apiserver), with
// its embedded etcd on free loopback ports and its data in a directory the
// test chooses, so a test can stop it and start it again on the same data.
package testserver
