// virt-bench is `make bench`: it measures the platform side by side with
// the CRD architecture and raw libvirt on the local cluster and writes
// docs/performance.md and docs/performance.png (see bench/README.md).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"kubevirt.dev/virt/bench"
	"kubevirt.dev/virt/bench/migration"
	"kubevirt.dev/virt/bench/rawguest"
)

func main() {
	// Parts 6 and 7 run raw libvirt as this binary again, in a network
	// namespace of their own.
	if rawguest.IsChild() {
		os.Exit(rawguest.ChildMain())
	}
	// Part 8 runs raw libvirt's migration as this binary again, as the
	// launcher pods' user.
	if migration.IsChild() {
		os.Exit(migration.ChildMain())
	}
	var o bench.Options
	o.AddFlags(pflag.CommandLine)
	pflag.Parse()
	// A signal cancels the load; every part then removes what it created.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := bench.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "virt-bench:", err)
		os.Exit(1)
	}
}
