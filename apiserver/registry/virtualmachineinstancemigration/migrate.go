package virtualmachineinstancemigration

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/action"
)

// NewMigrateREST returns virtualmachineinstances/NAME/migrate (owner nil)
// or virtualmachines/NAME/migrate (owner the VM storage: the VM must exist;
// its instance has its name): a PUT creates a migration of the instance
// with generateName kubevirt-migrate-vm-, checked like any new migration,
// and answers it.
func NewMigrateREST(scheme *runtime.Scheme, migrations *REST, owner rest.Getter) (*action.REST, error) {
	return action.New(scheme, func() *virtualization.MigrateOptions { return &virtualization.MigrateOptions{} },
		func(ctx context.Context, name string, opts *virtualization.MigrateOptions) (runtime.Object, error) {
			if errs := metav1validation.ValidateDryRun(field.NewPath("dryRun"), opts.DryRun); len(errs) > 0 {
				return nil, apierrors.NewInvalid(virtualization.Kind("MigrateOptions"), name, errs)
			}
			if owner != nil {
				if _, err := owner.Get(ctx, name, &metav1.GetOptions{}); err != nil {
					return nil, err
				}
			}
			ns, _ := genericapirequest.NamespaceFrom(ctx)
			m := &virtualization.VirtualMachineInstanceMigration{
				ObjectMeta: metav1.ObjectMeta{GenerateName: virtv1.MigrationGenerateNamePrefix, Namespace: ns},
				Spec:       virtualization.VirtualMachineInstanceMigrationSpec{VMIName: name},
			}
			return migrations.Create(ctx, m, rest.ValidateAllObjectFunc, &metav1.CreateOptions{DryRun: opts.DryRun})
		})
}
