// Package endpoint is how the benchmarks reach the servers: the
// kube-apiserver with the admin kubeconfig, and virt-apiserver directly at
// its Service's ClusterIP (the path our own components can take) with the
// token of a service account that may use VMIs and read /metrics, trusting
// the APIService's caBundle.
//
// Every address it dials is checked to be inside 198.18.0.0/15 and the
// node's bridge must exist: with the cluster down, 198.18.0.1 would be
// routed off the machine.
package endpoint
