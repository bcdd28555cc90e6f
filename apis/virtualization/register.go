package virtualization

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every type in this package.
const GroupName = "virtualization.kubevirt.io"

// SchemeGroupVersion is the internal version used to register these types.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

// Kind takes an unqualified kind and returns a group-qualified one.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource takes an unqualified resource and returns a group-qualified one.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the internal types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the internal types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

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
	return nil
}
