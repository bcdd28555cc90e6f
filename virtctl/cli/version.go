package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/virtctl/apierror"
)

// VersionOptions is `version`.
type VersionOptions struct {
	// ClientOnly: do not ask the server.
	ClientOnly bool
	genericiooptions.IOStreams
}

func newVersionCommand(f genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client's version and what the server serves",
		Long: "Print the client's version (its module, commit and Go), then the Kubernetes version of the\n" +
			"API server and the subresources virt-apiserver serves through it, if it is reachable.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(f)
		},
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "print the client's version only")
	return cmd
}

// Run prints the versions. A server that cannot be reached is reported
// on the output, and is an error.
func (o *VersionOptions) Run(f genericclioptions.RESTClientGetter) error {
	fmt.Fprintf(o.Out, "Client Version: %s\n", clientVersion())
	if o.ClientOnly {
		return nil
	}
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("read the kubeconfig: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	req := apierror.Request{Server: cfg.Host, Verb: "get"}
	kube, err := dc.ServerVersion()
	if err != nil {
		return req.Explain(err)
	}
	fmt.Fprintf(o.Out, "Server Version: Kubernetes %s at %s\n", kube.GitVersion, cfg.Host)
	gv := virtv1.SchemeGroupVersion.String()
	resources, err := dc.ServerResourcesForGroupVersion(gv)
	if err != nil {
		fmt.Fprintf(o.Out, "virt-apiserver: not reachable: %v\n", err)
		return fmt.Errorf("virt-apiserver does not answer for %s through %s (kubectl get apiservice v1.%s): %w",
			gv, cfg.Host, virtv1.SchemeGroupVersion.Group, err)
	}
	fmt.Fprintf(o.Out, "virt-apiserver: serves %s: %s\n", gv, describe(resources.APIResources))
	return nil
}

// describe lists resources with their subresources:
// "virtualmachineinstances (console, pause, ...), virtualmachines (...)".
func describe(list []metav1.APIResource) string {
	subs := map[string][]string{}
	var names []string
	for _, r := range list {
		name, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			names = append(names, name)
			continue
		}
		subs[name] = append(subs[name], sub)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n
		if s := subs[n]; len(s) > 0 {
			sort.Strings(s)
			parts[i] += " (" + strings.Join(s, ", ") + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// clientVersion is the module's version, commit and Go as the build
// recorded them.
func clientVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("unknown (%s, %s/%s)", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	parts := []string{bi.GoVersion, runtime.GOOS + "/" + runtime.GOARCH}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			parts = append([]string{"commit " + s.Value}, parts...)
		case "vcs.modified":
			if s.Value == "true" {
				parts = append(parts, "modified")
			}
		}
	}
	return fmt.Sprintf("%s %s (%s)", bi.Main.Path, bi.Main.Version, strings.Join(parts, ", "))
}
