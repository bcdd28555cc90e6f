// Package e2e holds the end-to-end tests: the platform deployed into a real
// single-node Kubernetes on this machine (test/e2e/framework), used the way
// a user would, through kubectl and the generated clients.
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
