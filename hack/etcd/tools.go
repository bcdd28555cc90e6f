//go:build tools

// Package etcd pins the etcd release of the platform's HA mode (the etcd
// cluster of artifacts/etcd): the server (go.etcd.io/etcd/server/v3, whose
// root package is etcd's main), etcdctl and etcdutl, at the version
// k8s.io/apiserver is built and tested against. hack/build-etcd.sh builds
// them from here, static.
//
// It is its own module so that neither the platform's module nor hack/kube
// (whose graph builds the Kubernetes binaries: a change there costs their
// rebuild) inherits etcdctl's and etcdutl's dependencies.
package etcd

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
	_ "go.etcd.io/etcd/server/v3"
)
