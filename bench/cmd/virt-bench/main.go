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
	"kubevirt.dev/virt/bench/network"
)

func main() {
	// Part 6 runs raw libvirt as this binary again, in its own namespace.
	if network.IsRawLibvirt() {
		os.Exit(network.RawLibvirtMain())
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
