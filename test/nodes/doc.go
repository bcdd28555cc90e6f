// Package nodes tests the platform on a cluster of several nodes: the local
// cluster of hack/cluster with `make up NODES=3` (docs/cluster.md "More
// nodes"), node 1 the host's with the control plane, nodes 2 and 3 each a
// kubelet, containerd and kube-proxy in namespaces of their own.
//
// Its TestMain owns the cluster for the package's run: it brings the
// cluster down first and records the host's state (network namespaces,
// links, routes, mounts, cgroups, the cluster's processes, iptables
// chains), brings it up with three nodes, runs the tests, brings it down
// again and fails the package (as TestDownLeavesNothing) if the host's
// state differs from the record; then it brings the cluster back up with
// one node when it was running before. VIRT_E2E_KEEP_CLUSTER=1 skips both
// downs and leaves the three nodes up: for iterating on one test.
//
// Not under test/e2e: `go test ./test/e2e/...` runs packages in parallel,
// and this one changes the cluster's shape under them.
//
// Adding a test: a Test function in a file of this package, using the
// package's cluster (a *framework.Cluster with cluster.Nodes() = virt-node,
// virt-node-2, virt-node-3) and the helpers of helpers_test.go (pinnedVMI,
// startPinnedVMI, startHTTPD). A test that kills or stops a node
// (cluster.KillNode, cluster.StopNode) starts it again before it ends
// (t.Cleanup(func() { restartNode(t, name) })), so that the tests after it,
// and the final down, find every node Ready; and it deletes what it
// created (cluster.Namespace does).
package nodes
