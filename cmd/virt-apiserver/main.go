// Command virt-apiserver serves the virtualization.kubevirt.io API from its
// own etcd, behind the kube-aggregator.
package main

import (
	"os"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"kubevirt.dev/virt/apiserver"
	"kubevirt.dev/virt/apiserver/store"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	o := apiserver.NewOptions()
	cmd := &cobra.Command{
		Use:   "virt-apiserver",
		Short: "Serve virtualization.kubevirt.io (VirtualMachineInstances, VirtualMachines) from an embedded or external etcd",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(store.NewCommand())
	os.Exit(cli.Run(cmd))
}
