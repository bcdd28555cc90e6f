// Package framework gives the end-to-end tests a real cluster: the local
// single-node Kubernetes of hack/cluster (the same scripts as `make up`)
// with the platform deployed into it, clients for it, and helpers that wait
// with bounds and say what they waited for.
//
// Setup, called once from a test package's TestMain, attaches to the local
// cluster of ${VIRT_STATE} when it already runs healthy (and leaves it
// running), and otherwise brings it up and tears it down in Teardown, unless
// VIRT_E2E_KEEP_CLUSTER=1. It needs root, as `make up` does, and fails,
// never skips, when something is missing.
//
// It imports the platform's API types and generated clientset, nothing of
// the components themselves: the tests see the platform as a user does.
package framework
