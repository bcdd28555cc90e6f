// Package manager runs virt-handler: it turns flags into clients for the
// kube-apiserver and virt-apiserver (the pod's own bound service-account
// token in a cluster), starts the informers restricted to this node, the
// VMI controller and the heartbeat, serves /healthz, /readyz and /metrics,
// starts guest access (node/guestaccess) on the controller's caches and
// launcher connections, and runs the device plugin that gives launcher pods
// /dev/net/tun (node/deviceplugin).
//
// It is the only package of node/ that knows about processes and flags;
// besides it only node/guestaccess serves HTTP.
package manager
