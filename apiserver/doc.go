// Package apiserver is virt-apiserver: the aggregated API server that serves
// virtualization.kubevirt.io from its own etcd. It wires options (flags) into
// a k8s.io/apiserver configuration, installs the registries of
// apiserver/registry, starts the embedded etcd when no external one is given,
// and runs until its context ends, draining requests before it stops etcd.
//
// Packages under apiserver/ must not import controllers/, node/ or launcher/:
// the API server serves the components, it does not run them.
package apiserver
