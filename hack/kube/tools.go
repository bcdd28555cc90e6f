//go:build tools

// Package kube pins the Kubernetes binaries the local cluster runs
// (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl,
// kube-proxy) and builds etcd (cmd/etcd) for kube-apiserver.
// It is its own module so that the platform's module never inherits
// k8s.io/kubernetes' dependency graph; hack/build-kube.sh builds from here.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
