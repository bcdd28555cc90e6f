// Package etcd runs the etcd that virt-apiserver stores its objects in by
// default, inside the server's own process (go.etcd.io/etcd/server/v3/embed):
// one member, on loopback only, its data under a directory that survives
// restarts. Operators who want an etcd cluster instead pass --etcd-servers
// and this package is not used.
package etcd
