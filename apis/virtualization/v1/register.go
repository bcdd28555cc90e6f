package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every type in this package.
const GroupName = "virtualization.kubevirt.io"

// SchemeGroupVersion is the group and version objects of this package are
// served and stored as.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// Resource takes an unqualified resource and returns a group-qualified one.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the types, defaults and conversions of this
	// version. The generated files (defaults, conversion) add themselves to
	// localSchemeBuilder in their init(), which is why it is a pointer and
	// not a literal: registering here would run before they do.
	SchemeBuilder      runtime.SchemeBuilder
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds every type of this version to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	localSchemeBuilder.Register(addKnownTypes, addDefaultingFuncs, addFieldLabelConversionFuncs)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&VirtualMachineInstance{},
		&VirtualMachineInstanceList{},
		&VirtualMachine{},
		&VirtualMachineList{},
		&StartOptions{},
		&StopOptions{},
		&RestartOptions{},
		&PauseOptions{},
		&MigrateOptions{},
		&UnpauseOptions{},
		&SoftRebootOptions{},
		&VirtualMachineInstanceGuestAgentInfo{},
		&VirtualMachineInstancetype{},
		&VirtualMachineInstancetypeList{},
		&VirtualMachineClusterInstancetype{},
		&VirtualMachineClusterInstancetypeList{},
		&VirtualMachinePreference{},
		&VirtualMachinePreferenceList{},
		&VirtualMachineClusterPreference{},
		&VirtualMachineClusterPreferenceList{},
		&VirtualMachineInstanceReplicaSet{},
		&VirtualMachineInstanceReplicaSetList{},
		&VirtualMachineInstanceMigration{},
		&VirtualMachineInstanceMigrationList{},
		&VirtualMachineInstancetypeRevision{},
		&VirtualMachineInstancetypeRevisionList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
