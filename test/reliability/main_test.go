// Package reliability is the fault-injection suite: on the local cluster
// of test/e2e/framework, each test kills a part of the platform the way a
// crash would (SIGKILL of its process on the node) or feeds it bad input,
// while a load runs (the API storm of test/reliability/load, guests being
// created or shut down), and records what the users of the platform saw as
// figures (test/reliability/report): writes lost, requests failed, how long
// until the platform worked again, guests lost or doubled.
//
// TestMain writes the figures as markdown to $RELIABILITY_REPORT, when
// set: `make test-reliability` writes docs/reliability.md, `make test`
// _output/reliability.md. A figure that must hold and does not fails its
// test; so does a missed target, unless the test argues why not (the
// report prints the argument).
//
// Adding a fault is one test function: book.Start a figure, run the load
// (runStorm for the API storm), inject the fault, and Add the results.
package reliability

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/load"
	"kubevirt.dev/virt/test/reliability/report"
)

// cluster is the cluster under test, set up once for the package.
var cluster *framework.Cluster

// book holds the figures, in the order the report prints them: the
// suite's faults from the API path down to the guest, then bad input.
var book = report.NewBook(
	"apiserver-kill",
	"ha-apiserver-kill",
	"ha-etcd-member-kill",
	"ha-etcd-leader-kill",
	"controller-leader-kill",
	"handler-kill",
	"launcher-kill",
	"bad-input",
)

// ReportEnv names the file the report is written to.
const ReportEnv = "RELIABILITY_REPORT"

func TestMain(m *testing.M) {
	began := time.Now()
	code := framework.Run(m, "reliability", func(c *framework.Cluster) { cluster = c })
	if path := os.Getenv(ReportEnv); path != "" && cluster != nil {
		env := report.ReadEnvironment(cluster.Root)
		env.Runtime = time.Since(began)
		env.Command = "go test ./test/reliability/ " + strings.Join(os.Args[1:], " ")
		if cmd := os.Getenv("RELIABILITY_COMMAND"); cmd != "" {
			env.Command = cmd
		}
		if err := book.WriteFile(path, header(env)); err != nil {
			fmt.Fprintf(os.Stderr, "reliability: FAIL: write the report: %v\n", err)
			code = 1
		} else {
			fmt.Fprintf(os.Stderr, "reliability: report written to %s\n", path)
		}
	}
	os.Exit(code)
}

func header(env report.Environment) report.Header {
	return report.Header{
		Title: "Reliability: faults injected into the running platform",
		Intro: `Each section below is one fault injected into the platform on the local
single-node cluster (` + "`make up`" + `, docs/cluster.md) while a load runs, and
what its users saw. A component is killed the way a crash kills it: SIGKILL
of its process on the node (found by its pod's UID and container in
` + "`/proc/<pid>/cgroup`" + `), no handler runs, nothing is released; the kubelet then
restarts the container, or the platform's controllers replace what died.
Bad input is sent through the kube-apiserver's aggregator, as a user's
client would. The suite is ` + "`test/reliability`" + `; ` + "`make test-reliability`" + ` runs
it and writes this file, ` + "`make test`" + ` runs it too (its report then goes to
` + "`_output/reliability.md`" + `).

Bounds: **must** holds or the test fails; a **target** missed fails the test
too, unless the section argues why it does not; **measured** is reported
as it is. The machine is small (2 cores, guests under TCG) and every
figure is one run: durations vary by a few seconds between runs.`,
		Env: env,
		Sections: []string{
			"## The API storm and its figures\n\n" + stormDescription() + "\n\n" + load.Definitions,
		},
	}
}
