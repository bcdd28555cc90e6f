// Package manager runs virt-handler: it turns flags into clients for the
// kube-apiserver and virt-apiserver (the pod's own bound service-account
// token in a cluster), starts the informers restricted to this node, the
// VMI controller and the heartbeat, and serves /healthz, /readyz and
// /metrics.
//
// It is the only package of node/ that knows about processes, flags and
// HTTP.
package manager
