// Command virtctl reaches and drives the platform's virtual machines: the
// serial console, the display (VNC), and the lifecycle actions of VMs and
// VMIs. Installed as kubectl-virt too, it is the kubectl plugin `kubectl
// virt`. See docs/guest-access.md and docs/getting-started.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"kubevirt.dev/virt/virtctl/cli"
)

func main() {
	cmd := cli.NewCommand(os.Args[0], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
