// Package e2e holds the end-to-end tests: the platform deployed into a real
// single-node Kubernetes on this machine (test/e2e/framework), used the way
// a user would, through kubectl and the generated clients.
//
// Two kinds of test share the cluster. A test that restarts, stops or
// reconfigures a component, switches the cluster's mode, edits a
// cluster-wide object others read, writes to Nodes, or bounds a pause of a
// guest runs alone: it does not call t.Parallel, and Go runs all such tests
// first, one after the other. Every other test keeps to its own namespace
// (and cluster-scoped objects of unique names) and calls t.Parallel: those
// run after them, `make test-e2e E2E_PARALLEL=n` at once (default 2; the
// guests are emulated and 2 cores are shared). Most of their time is spent
// waiting on guests and controllers, which overlaps.
package e2e

import (
	"testing"

	"kubevirt.dev/virt/test/e2e/framework"
)

// cluster is the cluster under test, set up once for the package.
var cluster *framework.Cluster

func TestMain(m *testing.M) {
	framework.Main(m, "e2e", func(c *framework.Cluster) { cluster = c })
}
