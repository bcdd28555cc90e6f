package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/term"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/virtctl/console"
)

// ConsoleOptions is `console VMI`.
type ConsoleOptions struct {
	target
	// Timeout is how many minutes to wait for the VMI to run.
	Timeout int
	genericiooptions.IOStreams
}

func newConsoleCommand(name string, f genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ConsoleOptions{Timeout: 5, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "console VMI",
		Short: "Connect to the serial console of a virtual machine instance",
		Long: "Connect to the serial console of a virtual machine instance, once it runs. The escape sequence\n" +
			"is " + console.EscapeName + " (Ctrl+]). One console per VMI: a new connection takes over from the one before.",
		Example: examples(name,
			"Log in to the example VM", "console vmi-tiny",
			"Wait up to 10 minutes for it to run", "console vmi-tiny --timeout 10"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().IntVar(&o.Timeout, "timeout", o.Timeout, "minutes to wait for the VMI to be Running")
	return cmd
}

// Complete reads the kubeconfig flags and the VMI's name.
func (o *ConsoleOptions) Complete(f genericclioptions.RESTClientGetter, args []string) error {
	return o.complete(f, args[0])
}

// Validate checks the flags.
func (o *ConsoleOptions) Validate() error {
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be 1 minute or more, not %d", o.Timeout)
	}
	return o.validate("VMI")
}

// Run waits for the VMI to run, connects, and hands the terminal over
// (raw) until the escape sequence or the end of the console.
func (o *ConsoleOptions) Run(ctx context.Context) error {
	if err := o.waitRunning(ctx); err != nil {
		return err
	}
	conn, err := console.Dial(ctx, o.Config, o.Namespace, o.Name)
	if err != nil {
		return o.explain("get", vmiResource, console.Subresource, err)
	}
	fmt.Fprintf(o.ErrOut, "Successfully connected to %s console. The escape sequence is %s\n", o.Name, console.EscapeName)
	tty := term.TTY{In: o.In, Out: o.Out, Raw: true}
	err = tty.Safe(func() error { return console.Attach(ctx, conn, o.In, o.Out) })
	// Back in cooked mode: end the guest's last line.
	fmt.Fprintln(o.ErrOut)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("console of %s: %w", o.Name, err)
	}
	return nil
}

// waitRunning waits up to the timeout, saying which phase the VMI is in.
func (o *ConsoleOptions) waitRunning(ctx context.Context) error {
	timeout := time.Duration(o.Timeout) * time.Minute
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := console.WaitRunning(ctx, o.Client, o.Namespace, o.Name, func(p virtv1.VirtualMachineInstancePhase) {
		fmt.Fprintf(o.ErrOut, "Waiting for VMI %s to be Running: it is %s\n", o.Name, phaseWord(p))
	})
	var nr *console.NotRunningError
	switch {
	case errors.As(err, &nr) && errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("VMI %s is not Running after %v: it is %s (wait longer with --timeout)", o.Name, timeout, phaseWord(nr.Phase))
	case err != nil:
		return o.explain("get", vmiResource, "", err)
	}
	return nil
}

func phaseWord(p virtv1.VirtualMachineInstancePhase) string {
	if p == virtv1.PhaseUnset {
		return "not yet in a phase"
	}
	return string(p)
}
