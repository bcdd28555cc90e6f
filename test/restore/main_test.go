// Package restore tests backup and restore of the platform's store
// (virt-apiserver store backup/restore, apiserver/store; docs/cluster.md "Backup and
// restore") on the local cluster, the way an operator recovers from losing
// it: `make backup`, `make down PURGE=1` (every piece of state gone, the
// certificates and the mode too), `make up`, `make restore`, and every VM
// and VMI definition is back.
//
// The cluster is rebuilt in the middle of the test, so the clients of the
// cluster TestMain attached to die with it: the test connects anew after
// the rebuild (framework.Setup) and never uses the old ones past it.
package restore

import (
	"testing"

	"kubevirt.dev/virt/test/e2e/framework"
)

// initial is the cluster as TestMain found or brought it up; its clients
// are valid only until the test rebuilds the cluster.
var initial *framework.Cluster

func TestMain(m *testing.M) {
	framework.Main(m, "restore", func(c *framework.Cluster) { initial = c })
}
