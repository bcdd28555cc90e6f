package nodes

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"kubevirt.dev/virt/test/e2e/framework"
)

// nodeCount is how many nodes the package's tests run on.
const nodeCount = 3

// cluster is the three-node cluster of the package's tests.
var cluster *framework.Cluster

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	c, err := framework.Attach(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodes: FAIL: no cluster to test: %v\n", err)
		return 1
	}
	keep := os.Getenv(framework.KeepClusterEnv) == "1"
	wasUp := c.Healthy(ctx)
	remembered, err := c.RememberedNodes()
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodes: FAIL: %v\n", err)
		return 1
	}

	// The host as the cluster leaves it when it is down: what `make down`
	// after three nodes must leave.
	var before hostState
	if !keep {
		if wasUp {
			if err := c.Down(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "nodes: FAIL: make down before the tests: %v\n", err)
				return 1
			}
		}
		if before, err = snapshotHost(c); err != nil {
			fmt.Fprintf(os.Stderr, "nodes: FAIL: record the host's state: %v\n", err)
			return 1
		}
	}
	start := time.Now()
	if err := c.SetNodes(ctx, nodeCount); err != nil {
		fmt.Fprintf(os.Stderr, "nodes: FAIL: make up NODES=%d: %v\n", nodeCount, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "nodes: make up NODES=%d took %s\n", nodeCount, time.Since(start).Round(time.Second))
	cluster = c
	code := m.Run()
	if keep {
		fmt.Fprintf(os.Stderr, "nodes: %s=1: leaving the cluster up with %d nodes\n", framework.KeepClusterEnv, nodeCount)
		return code
	}

	if !downLeavesNothing(ctx, c, before) {
		code = 1
	}
	if wasUp {
		// Back to what the other suites expect: one node, up.
		if err := c.SetNodes(ctx, 1); err != nil {
			fmt.Fprintf(os.Stderr, "nodes: FAIL: make up NODES=1 after the tests: %v\n", err)
			code = 1
		}
	} else if err := c.RememberNodes(remembered); err != nil {
		// Down, as found: the next plain make up brings the nodes it
		// would have brought before the tests, not this suite's three.
		fmt.Fprintf(os.Stderr, "nodes: FAIL: remember %d node(s) for the next make up: %v\n", remembered, err)
		code = 1
	}
	return code
}

// downLeavesNothing is the package's last test, run by TestMain after every
// other: `make down` after three nodes leaves the host's network
// namespaces, links, routes, mounts, cgroups, processes and iptables
// chains as they were before the cluster came up.
func downLeavesNothing(ctx context.Context, c *framework.Cluster, before hostState) bool {
	const name = "TestDownLeavesNothing"
	fmt.Fprintf(os.Stderr, "=== RUN   %s\n", name)
	start := time.Now()
	fail := func(format string, args ...any) bool {
		fmt.Fprintf(os.Stderr, "    %s: "+format+"\n--- FAIL: %s (%s)\n", append(append([]any{name}, args...), name, time.Since(start).Round(10*time.Millisecond))...)
		return false
	}
	if err := c.Down(ctx); err != nil {
		return fail("make down after %d nodes: %v", nodeCount, err)
	}
	down := time.Since(start)
	after, err := snapshotHost(c)
	if err != nil {
		return fail("record the host's state: %v", err)
	}
	if diff := before.diff(after); diff != "" {
		return fail("make down after %d nodes left the host changed (- before, + after):\n%s", nodeCount, diff)
	}
	fmt.Fprintf(os.Stderr, "    %s: make down took %s\n--- PASS: %s (%s)\n", name, down.Round(time.Second), name, time.Since(start).Round(10*time.Millisecond))
	return true
}
