//go:build tools

// Package kube pins the Kubernetes binaries the local cluster runs
// (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl).
// It is its own module so that the platform's module never inherits
// k8s.io/kubernetes' dependency graph; hack/build-kube.sh builds from here.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
