package v1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Field selectors a client may use on the list and watch of each kind. The
// node daemon watches with status.nodeName and, for the migrations to its
// node, status.migrationState.targetNode, which is why both are indexed.
var (
	virtualMachineInstanceSelectableFields = []string{"metadata.name", "metadata.namespace", "status.nodeName", "status.phase",
		"status.migrationState.targetNode"}
	virtualMachineSelectableFields                  = []string{"metadata.name", "metadata.namespace", "status.printableStatus"}
	virtualMachineInstanceMigrationSelectableFields = []string{"metadata.name", "metadata.namespace", "spec.vmiName", "status.phase"}
)

// addFieldLabelConversionFuncs tells the scheme which field selectors exist.
// Without it the server refuses every selector but metadata.name and
// metadata.namespace, whatever the storage strategy offers.
func addFieldLabelConversionFuncs(scheme *runtime.Scheme) error {
	if err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("VirtualMachineInstance"),
		identityFieldLabelConversion(virtualMachineInstanceSelectableFields)); err != nil {
		return err
	}
	if err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("VirtualMachine"),
		identityFieldLabelConversion(virtualMachineSelectableFields)); err != nil {
		return err
	}
	return scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind("VirtualMachineInstanceMigration"),
		identityFieldLabelConversion(virtualMachineInstanceMigrationSelectableFields))
}

func identityFieldLabelConversion(fields []string) runtime.FieldLabelConversionFunc {
	return func(label, value string) (string, string, error) {
		for _, f := range fields {
			if label == f {
				return label, value, nil
			}
		}
		return "", "", fmt.Errorf("field label not supported: %s (supported: %v)", label, fields)
	}
}
