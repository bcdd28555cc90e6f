// Command virt-controller runs the cluster-wide controllers of the platform:
// launcher pods for VMIs, the hand-off to nodes, node health and VM run
// strategies. See docs/controller.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/controllers/manager"
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
		klog.ErrorS(err, "virt-controller failed")
		os.Exit(1)
	}
}
