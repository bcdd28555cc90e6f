package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/virtctl/apierror"
)

// PluginName is the binary's name as a kubectl plugin: kubectl finds
// kubectl-virt on the PATH and runs it for `kubectl virt`.
const PluginName = "kubectl-virt"

// NewCommand is the command tree. invokedAs is the binary's path as run
// (os.Args[0]): called as kubectl-virt, the help reads `kubectl virt ...`.
func NewCommand(invokedAs string, streams genericiooptions.IOStreams) *cobra.Command {
	name := filepath.Base(invokedAs)
	root := &cobra.Command{
		Use:   name,
		Short: "Reach and drive the virtual machines of virtualization.kubevirt.io",
		Long: "Reach and drive the virtual machines of virtualization.kubevirt.io: their serial console and\n" +
			"display, and the lifecycle actions of VMs and VMIs (docs/guest-access.md).",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	display := name
	if name == PluginName {
		display = "kubectl virt"
		root.Use = "virt"
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: display}
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)

	flags := genericclioptions.NewConfigFlags(true)
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newConsoleCommand(display, flags, streams),
		newVNCCommand(display, flags, streams),
		newVersionCommand(flags, streams),
	)
	root.AddCommand(newLifecycleCommands(display, flags, streams)...)
	root.AddCommand(newMigrateCommands(display, flags, streams)...)
	return root
}

// examples formats pairs of (what, command line) as cobra examples of the
// binary called display.
func examples(display string, pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "  # %s\n  %s %s", pairs[i], display, pairs[i+1])
	}
	return b.String()
}

// target is what a command acting on one object needs: the connection
// from the kubeconfig flags and the object named on the command line.
// The resources whose subresources virtctl uses.
const (
	vmResource  = "virtualmachines"
	vmiResource = "virtualmachineinstances"
)

type target struct {
	Namespace string
	Name      string
	Config    *rest.Config
	Client    virtclient.Interface
}

// complete reads the kubeconfig flags: the namespace (-n, else the
// context's, else default), the rest config and a client.
func (t *target) complete(f genericclioptions.RESTClientGetter, name string) error {
	t.Name = name
	ns, _, err := f.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("read the kubeconfig: %w", err)
	}
	t.Namespace = ns
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("read the kubeconfig: %w", err)
	}
	cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	t.Config = cfg
	t.Client, err = virtclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	return nil
}

// validate checks the name.
func (t *target) validate(kind string) error {
	if strings.TrimSpace(t.Name) == "" {
		return fmt.Errorf("name the %s", kind)
	}
	return nil
}

// explain tells err of a request verb resource/subresource on the target.
func (t *target) explain(verb, resource, subresource string, err error) error {
	return apierror.Request{
		Server: t.Config.Host, Verb: verb, Resource: resource, Subresource: subresource,
		Namespace: t.Namespace, Name: t.Name,
	}.Explain(err)
}
