// Package manager runs virt-controller: it turns flags into clients for the
// kube-apiserver and virt-apiserver, serves /healthz and /metrics, takes part
// in leader election on a Lease, and, while it leads, runs the VMI, node, VM
// and VMI replica set controllers on shared informers. A controller that dies ends the lead:
// the others stop, the Lease is released and Run returns the controller's
// error, so the process restarts and a standby takes over.
//
// It is the only package of controllers/ that knows about processes, flags
// and HTTP; the controllers themselves take clients and informers.
package manager
