// virt-launcher is the main process of a VMI's pod: it runs the guest under
// an embedded libvirt and serves the node's virt-handler over gRPC. See
// docs/launcher.md.
package main

import (
	"context"
	goflag "flag"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/launcher"
)

func main() {
	opts := launcher.NewOptions()
	fs := pflag.NewFlagSet("virt-launcher", pflag.ExitOnError)
	opts.AddFlags(fs)
	klogFlags := goflag.NewFlagSet("klog", goflag.ExitOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	_ = fs.Parse(os.Args[1:]) // ExitOnError: never returns an error
	ctx := klog.NewContext(context.Background(), klog.Background())
	if opts.WriteCapabilitiesSeed != "" {
		code := 0
		if err := launcher.WriteCapabilitiesSeed(ctx, opts.WriteCapabilitiesSeed); err != nil {
			klog.Background().Error(err, "Writing the capabilities seed failed")
			code = 1
		}
		klog.Flush()
		os.Exit(code)
	}
	if opts.ProbeNode != "" {
		code := 0
		if err := opts.WriteNodeFacts(ctx, opts.ProbeNode); err != nil {
			klog.Background().Error(err, "Probing the node failed")
			code = 1
		}
		klog.Flush()
		os.Exit(code)
	}
	if opts.GuestProbe != "" {
		code := opts.RunGuestProbe(ctx, fs.Args())
		os.Exit(code)
	}
	code := opts.Run(ctx)
	klog.Flush()
	os.Exit(code)
}
