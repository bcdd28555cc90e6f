package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/virtctl/apierror"
)

// migrationResource is the resource of migrations, for messages.
const migrationResource = "virtualmachineinstancemigrations"

// MigrateOptions is `migrate NAME` (a live migration of the VM's instance,
// or of the VMI of that name) and `migrate-cancel NAME` (cancels its
// unfinished migration), as KubeVirt's virtctl has them.
type MigrateOptions struct {
	target
	// Cancel: delete the unfinished migration instead of asking for one.
	Cancel bool
	// DryRun: the server checks the request and creates nothing.
	DryRun bool
	genericiooptions.IOStreams
}

func newMigrateCommands(name string, f genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) []*cobra.Command {
	migrate := &MigrateOptions{IOStreams: streams}
	migrateCmd := &cobra.Command{
		Use:   "migrate VM",
		Short: "Move a running virtual machine to another node, live (docs/migration.md)",
		Long: "Ask for a live migration of a VM's running instance (or of the VMI of that name): the\n" +
			"server creates a VirtualMachineInstanceMigration, which `kubectl get vmim` follows. The\n" +
			"guest keeps running; where the move fails, it stays where it was.",
		Example: examples(name, "Move the example VM's guest", "migrate vm-always",
			"Check without doing it", "migrate vm-always --dry-run"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := migrate.complete(f, args[0]); err != nil {
				return err
			}
			if err := migrate.validate("VM"); err != nil {
				return err
			}
			return migrate.Run(cmd.Context())
		},
	}
	migrateCmd.Flags().BoolVar(&migrate.DryRun, "dry-run", false, "let the server check the migration without creating it")

	cancel := &MigrateOptions{Cancel: true, IOStreams: streams}
	cancelCmd := &cobra.Command{
		Use:     "migrate-cancel VM",
		Short:   "Cancel the unfinished live migration of a virtual machine; its guest stays where it runs",
		Example: examples(name, "Cancel the move of the example VM's guest", "migrate-cancel vm-always"),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cancel.complete(f, args[0]); err != nil {
				return err
			}
			if err := cancel.validate("VM"); err != nil {
				return err
			}
			return cancel.Run(cmd.Context())
		},
	}
	return []*cobra.Command{migrateCmd, cancelCmd}
}

// Run asks for the migration, or cancels the unfinished one.
func (o *MigrateOptions) Run(ctx context.Context) error {
	if o.Cancel {
		return o.cancel(ctx)
	}
	opts := metav1.UpdateOptions{}
	if o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	// The VM's subresource first, as KubeVirt's virtctl does; a bare VMI
	// (no VM of that name) through its own.
	m, err := o.Client.VirtualizationV1().VirtualMachines(o.Namespace).Migrate(ctx, o.Name, &virtv1.MigrateOptions{DryRun: opts.DryRun}, opts)
	resource := vmResource
	if apierrors.IsNotFound(err) {
		if _, vmErr := o.Client.VirtualizationV1().VirtualMachines(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); apierrors.IsNotFound(vmErr) {
			resource = vmiResource
			m, err = o.Client.VirtualizationV1().VirtualMachineInstances(o.Namespace).Migrate(ctx, o.Name, &virtv1.MigrateOptions{DryRun: opts.DryRun}, opts)
		}
	}
	if err != nil {
		return o.explain("update", resource, "migrate", err)
	}
	if o.DryRun {
		fmt.Fprintf(o.Out, "VM %s can be migrated (dry run: nothing was created)\n", o.Name)
		return nil
	}
	fmt.Fprintf(o.Out, "VM %s was scheduled to migrate: virtualmachineinstancemigration/%s\n", o.Name, m.Name)
	return nil
}

// cancel deletes the VMI's unfinished migrations; deleting one cancels it.
func (o *MigrateOptions) cancel(ctx context.Context) error {
	migrations := o.Client.VirtualizationV1().VirtualMachineInstanceMigrations(o.Namespace)
	list, err := migrations.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.vmiName", o.Name).String()})
	if err != nil {
		return o.explain("list", migrationResource, "", err)
	}
	cancelled := 0
	for _, m := range list.Items {
		if m.Status.Phase.Final() || m.DeletionTimestamp != nil {
			continue
		}
		if err := migrations.Delete(ctx, m.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &m.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return o.explain("delete", migrationResource, "", err)
		}
		fmt.Fprintf(o.Out, "virtualmachineinstancemigration/%s of VM %s was cancelled\n", m.Name, o.Name)
		cancelled++
	}
	if cancelled == 0 {
		return &apierror.Error{Sentence: fmt.Sprintf("VM %s has no unfinished migration to cancel in namespace %s", o.Name, o.Namespace)}
	}
	return nil
}
