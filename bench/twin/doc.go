// Package twin installs the CRD architecture's twin of our VMI API into a
// cluster and removes it again: the CRD of bench/crd, the webhook process
// (cmd virt-bench-webhook) on the node's address with a serving certificate
// from a CA generated per run, and the mutating and validating webhook
// configurations that send every create and update of the twin to it.
//
// The webhook runs on the host at the node IP rather than in a pod: the
// kube-apiserver runs on the host too, so the twin's admission round trip
// is the shortest it can be (no container, no Service hop). That favours
// the twin, never ours.
package twin
