package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/virtctl/apierror"
)

// unsetGracePeriod is --grace-period's value when not given.
const unsetGracePeriod = -1

// ActionOptions is one of start, stop, restart (of a VM), pause, unpause
// (of a VMI, or of a VM's instance), soft-reboot (of a VMI).
type ActionOptions struct {
	target
	// Action is the subresource: start, stop, restart, pause, unpause,
	// softreboot.
	Action string
	// OfVM: the name is a VM's. Pause and unpause then act on the VM's
	// instance, the VMI of the same name.
	OfVM bool
	// GracePeriod in seconds for stop and restart; -1 leaves the
	// instance's own.
	GracePeriod int64
	// Force: stop or restart at once (grace period 0).
	Force bool
	genericiooptions.IOStreams
}

// action describes one lifecycle command.
type action struct {
	use, short, long, example string
	subresource               string
	ofVM                      bool
	graceFlags                bool
}

func newLifecycleCommands(name string, f genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) []*cobra.Command {
	start := action{use: "start VM", short: "Start a virtual machine: it gets a running instance",
		subresource: "start", ofVM: true, example: examples(name, "Start a VM", "start vm-always")}
	stop := action{use: "stop VM", short: "Stop a virtual machine: its instance stops and it stays stopped",
		long: "Stop a virtual machine: its instance gets an ACPI shutdown and the grace period (the\n" +
			"instance's terminationGracePeriodSeconds unless --grace-period says otherwise) to go, then\n" +
			"it is stopped by force. --force stops it at once (grace period 0).",
		subresource: "stop", ofVM: true, graceFlags: true,
		example: examples(name, "Stop a VM", "stop vm-always", "Pull the plug", "stop vm-always --force")}
	restart := action{use: "restart VM", short: "Restart a virtual machine: its instance is replaced by a new one",
		long: "Restart a virtual machine: its instance is shut down (within the grace period, as for stop)\n" +
			"and a new one started. --force replaces it at once (grace period 0).",
		subresource: "restart", ofVM: true, graceFlags: true,
		example: examples(name, "Restart a VM", "restart vm-always")}
	reboot := action{use: "soft-reboot VMI", short: "Ask the guest of a virtual machine instance to reboot (ACPI)",
		subresource: "softreboot", example: examples(name, "Reboot the example VM's guest", "soft-reboot vmi-tiny")}
	cmds := []*cobra.Command{
		newActionCommand(start, f, streams),
		newActionCommand(stop, f, streams),
		newActionCommand(restart, f, streams),
		newActionCommand(reboot, f, streams),
	}
	for _, sub := range []string{"pause", "unpause"} {
		verb := map[string]string{"pause": "Pause", "unpause": "Unpause"}[sub]
		what := map[string]string{"pause": "stop", "unpause": "resume"}[sub]
		parent := &cobra.Command{
			Use:   sub + " (vm|vmi) NAME",
			Short: fmt.Sprintf("%s a virtual machine instance: its vCPUs %s", verb, what),
			Example: examples(name, verb+" the example VMI", sub+" vmi vmi-tiny",
				verb+" the instance of a VM", sub+" vm vm-always"),
			// Reached only without a kind: vm and vmi are subcommands.
			Args: cobra.ArbitraryArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				return fmt.Errorf("say what to %s: %s vm NAME or %s vmi NAME", sub, cmd.CommandPath(), cmd.CommandPath())
			},
		}
		parent.AddCommand(
			newActionCommand(action{use: "vmi VMI", short: fmt.Sprintf("%s a virtual machine instance", verb),
				subresource: sub}, f, streams, "virtualmachineinstance"),
			newActionCommand(action{use: "vm VM", short: fmt.Sprintf("%s the instance of a virtual machine", verb),
				subresource: sub, ofVM: true}, f, streams, "virtualmachine"),
		)
		cmds = append(cmds, parent)
	}
	return cmds
}

func newActionCommand(a action, f genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams, aliases ...string) *cobra.Command {
	o := &ActionOptions{Action: a.subresource, OfVM: a.ofVM, GracePeriod: unsetGracePeriod, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     a.use,
		Aliases: aliases,
		Short:   a.short,
		Long:    a.long,
		Example: a.example,
		Args:    cobra.ExactArgs(1),
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
	if a.graceFlags {
		cmd.Flags().Int64Var(&o.GracePeriod, "grace-period", unsetGracePeriod,
			"seconds the guest gets to shut down before it is stopped by force; -1 keeps the instance's terminationGracePeriodSeconds")
		cmd.Flags().BoolVar(&o.Force, "force", false, "do it at once: --grace-period=0")
	}
	return cmd
}

// Complete reads the kubeconfig flags and the object's name.
func (o *ActionOptions) Complete(f genericclioptions.RESTClientGetter, args []string) error {
	return o.complete(f, args[0])
}

// Validate checks the flags: --force is a grace period of 0, so it goes
// with no other.
func (o *ActionOptions) Validate() error {
	if o.GracePeriod < unsetGracePeriod {
		return fmt.Errorf("--grace-period must be 0 or more seconds, not %d", o.GracePeriod)
	}
	if o.Force && o.GracePeriod > 0 {
		return fmt.Errorf("--force stops at once (--grace-period=0): it does not go with --grace-period=%d", o.GracePeriod)
	}
	if o.OfVM {
		return o.validate("VM")
	}
	return o.validate("VMI")
}

// gracePeriod is the grace period to send, nil for the instance's own.
func (o *ActionOptions) gracePeriod() *int64 {
	switch {
	case o.Force:
		return ptr.To[int64](0)
	case o.GracePeriod == unsetGracePeriod:
		return nil
	}
	return ptr.To(o.GracePeriod)
}

// resource is the resource whose subresource the command PUTs: pause and
// unpause of a VM act on its instance, the VMI of the same name.
func (o *ActionOptions) resource() string {
	switch o.Action {
	case "start", "stop", "restart":
		return vmResource
	}
	return vmiResource
}

// do makes the command's PUT with the generated client.
func (o *ActionOptions) do(ctx context.Context) error {
	vms := o.Client.VirtualizationV1().VirtualMachines(o.Namespace)
	vmis := o.Client.VirtualizationV1().VirtualMachineInstances(o.Namespace)
	var err error
	switch o.Action {
	case "start":
		_, err = vms.Start(ctx, o.Name, &virtv1.StartOptions{}, metav1.UpdateOptions{})
	case "stop":
		_, err = vms.Stop(ctx, o.Name, &virtv1.StopOptions{GracePeriod: o.gracePeriod()}, metav1.UpdateOptions{})
	case "restart":
		_, err = vms.Restart(ctx, o.Name, &virtv1.RestartOptions{GracePeriodSeconds: o.gracePeriod()}, metav1.UpdateOptions{})
	case "pause":
		_, err = vmis.Pause(ctx, o.Name, &virtv1.PauseOptions{}, metav1.UpdateOptions{})
	case "unpause":
		_, err = vmis.Unpause(ctx, o.Name, &virtv1.UnpauseOptions{}, metav1.UpdateOptions{})
	case "softreboot":
		_, err = vmis.SoftReboot(ctx, o.Name, &virtv1.SoftRebootOptions{}, metav1.UpdateOptions{})
	default:
		err = fmt.Errorf("unknown action %q", o.Action)
	}
	return err
}

// Run makes the call and says what happens next.
func (o *ActionOptions) Run(ctx context.Context) error {
	if err := o.do(ctx); err != nil {
		return o.explainCall(ctx, err)
	}
	kind := "VMI"
	if o.OfVM {
		kind = "VM"
	}
	what := map[string]string{"softreboot": "soft reboot"}[o.Action]
	if what == "" {
		what = o.Action
	}
	fmt.Fprintf(o.Out, "%s %s was scheduled to %s\n", kind, o.Name, what)
	return nil
}

// explainCall tells a failed call's error. Pausing a VM acts on its
// instance: when that is missing, the VM may still be there, stopped.
func (o *ActionOptions) explainCall(ctx context.Context, err error) error {
	resource := o.resource()
	if o.OfVM && resource == vmiResource && apierrors.IsNotFound(err) {
		_, vmErr := o.Client.VirtualizationV1().VirtualMachines(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		switch {
		case vmErr == nil:
			return &apierror.Error{Err: err,
				Sentence: fmt.Sprintf("VM %s has no running instance to %s in namespace %s (start it first)", o.Name, o.Action, o.Namespace)}
		case apierrors.IsNotFound(vmErr):
			return o.explain("get", vmResource, "", vmErr)
		}
	}
	// Every action is authorized as an update of its subresource.
	return o.explain("update", resource, o.Action, err)
}
