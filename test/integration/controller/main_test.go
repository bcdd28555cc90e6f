package controller

import (
	"testing"

	"kubevirt.dev/virt/test/e2e/framework"
)

// cluster is the cluster under test, set up once for the package.
var cluster *framework.Cluster

func TestMain(m *testing.M) {
	framework.Main(m, "controller integration", func(c *framework.Cluster) { cluster = c })
}
