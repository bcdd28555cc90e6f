// Package framework gives the end-to-end tests a real cluster: the local
// single-node Kubernetes of hack/cluster (the same scripts as `make up`)
// with the platform deployed into it, clients for it, and helpers that wait
// with bounds and say what they waited for. A claim that something does not
// happen is a watch (WatchVMI) that sees every change, never a sleep.
//
// Setup, called once from a test package's TestMain, attaches to the local
// cluster of ${VIRT_STATE} when it already runs healthy (and leaves it
// running), and otherwise brings it up and tears it down in Teardown, unless
// VIRT_E2E_KEEP_CLUSTER=1. It needs root, as `make up` does, and fails,
// never skips, when something is missing. The cluster it gives has one
// node, whatever an earlier `make up NODES=N` left; SetupNodes, SetNodes
// and Attach are for suites of several nodes (test/nodes), and Nodes,
// KillNode, StopNode, StartNode, NodeKubeletRoot and NodeOfProcess tell
// the nodes apart and act on one (hack/cluster/node.sh).
//
// It imports the platform's API types and generated clientset. It must not
// import the components themselves, so the tests see the platform as a user
// does; only where an operator would look on the node (a guest's serial log,
// its QEMU process) it takes the launcher's names for them from
// launcher/layout and launcher/domain, and of a component it reads what an
// operator reads: its log and its /metrics.
package framework
