// Command virt-handler is the platform's node daemon: it drives the
// launchers of the VMIs handed to its node, reports their state, shuts their
// guests down on deletion and keeps the node's heartbeat. See
// docs/handler.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/node/manager"
)

func main() {
	o := manager.NewOptions()
	o.AddFlags(pflag.CommandLine)
	pflag.Parse()
	if err := o.Validate(); err != nil {
		klog.ErrorS(err, "Invalid flags")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := manager.Run(ctx, o)
	stop()
	if err != nil {
		klog.ErrorS(err, "virt-handler failed")
		os.Exit(1)
	}
}
