package controller

import (
	"context"
	"fmt"
	"os"
	"testing"

	"kubevirt.dev/virt/test/e2e/framework"
)

// cluster is the cluster under test, set up once for the package.
var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	c, err := framework.Setup(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "controller integration: FAIL: no cluster to test: %v\n", err)
		return 1
	}
	cluster = c
	code := m.Run()
	if err := c.Teardown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "controller integration: FAIL: teardown: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
