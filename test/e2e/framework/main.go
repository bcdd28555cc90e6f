package framework

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// Main is the TestMain of a package that tests on the cluster: it sets the
// cluster up (or attaches to a running one), hands it to use, runs the
// tests, tears it down, and exits failing when the tests or either end of
// the cluster failed. suite names the package in those failures.
func Main(m *testing.M, suite string, use func(*Cluster)) {
	os.Exit(Run(m, suite, use))
}

// Run is Main without the exit: it returns the code Main would exit with,
// for a TestMain that has more to do once the tests ran (write a report).
func Run(m *testing.M, suite string, use func(*Cluster)) int {
	ctx := context.Background()
	c, err := Setup(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: FAIL: no cluster to test: %v\n", suite, err)
		return 1
	}
	use(c)
	code := m.Run()
	if err := c.Teardown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: FAIL: teardown: %v\n", suite, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
