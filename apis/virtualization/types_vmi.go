package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstance is a running virtual machine: one guest, one launcher
// pod, one node. It is created Pending, scheduled by virt-controller, and from
// the moment status.nodeName is set owned by the virt-handler of that node.
type VirtualMachineInstance struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired virtual machine. It cannot change once created.
	Spec VirtualMachineInstanceSpec
	// Status is what the platform observed. Written only through /status.
	Status VirtualMachineInstanceStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceList is a list of VirtualMachineInstances.
type VirtualMachineInstanceList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineInstance
}

// VirtualMachineInstanceSpec describes the guest and where it may run.
type VirtualMachineInstanceSpec struct {
	// Domain is the virtual hardware of the guest.
	Domain DomainSpec

	// NodeSelector must match a node's labels for the guest to be scheduled
	// there, as with pods.
	NodeSelector map[string]string
	// Affinity holds the scheduling constraints of the launcher pod.
	Affinity *corev1.Affinity
	// Tolerations of the launcher pod.
	Tolerations []corev1.Toleration

	// TerminationGracePeriodSeconds is how long the guest gets to shut down
	// after an ACPI power-button press before it is destroyed. Defaults to 30.
	TerminationGracePeriodSeconds *int64

	// Volumes are the storage sources the disks of the domain refer to by name.
	Volumes []Volume
	// Networks are the networks the interfaces of the domain refer to by name.
	Networks []Network

	// Hostname of the guest. Defaults to the VMI's name.
	Hostname string
	// Subdomain makes the guest's FQDN <hostname>.<subdomain>.<namespace>.svc.
	Subdomain string
	// PriorityClassName of the launcher pod.
	PriorityClassName string
	// SchedulerName of the launcher pod; empty means the default scheduler.
	SchedulerName string
}

// VirtualMachineInstancePhase is where a VMI is in its life.
// +enum
type VirtualMachineInstancePhase string

const (
	// PhaseUnset is the phase of a VMI no component has seen yet.
	PhaseUnset VirtualMachineInstancePhase = ""
	// Pending: accepted, no launcher pod exists yet.
	Pending VirtualMachineInstancePhase = "Pending"
	// Scheduling: the launcher pod exists and waits for a node.
	Scheduling VirtualMachineInstancePhase = "Scheduling"
	// Scheduled: the launcher runs on status.nodeName; the node owns the VMI.
	Scheduled VirtualMachineInstancePhase = "Scheduled"
	// Running: the guest runs.
	Running VirtualMachineInstancePhase = "Running"
	// Succeeded: the guest shut down by itself or was shut down gracefully.
	Succeeded VirtualMachineInstancePhase = "Succeeded"
	// Failed: the guest crashed, was killed, or could not be started.
	Failed VirtualMachineInstancePhase = "Failed"
	// Unknown: the state of the guest cannot be observed.
	Unknown VirtualMachineInstancePhase = "Unknown"
)

// IsFinal reports whether no transition leaves the phase.
func (p VirtualMachineInstancePhase) IsFinal() bool {
	return p == Succeeded || p == Failed
}

// VirtualMachineInstanceStatus is the observed state of a VMI.
type VirtualMachineInstanceStatus struct {
	// Phase is where the VMI is in its life.
	Phase VirtualMachineInstancePhase
	// Reason is a CamelCase word saying why the VMI is in its phase, for
	// phases that need one (Failed, Succeeded).
	Reason string
	// Conditions are the observations of the VMI that are not phases.
	Conditions []VirtualMachineInstanceCondition
	// NodeName is the node the guest runs on. Setting it hands the VMI from
	// virt-controller to that node's virt-handler.
	NodeName string
	// Interfaces are the guest's network interfaces as observed.
	Interfaces []VirtualMachineInstanceNetworkInterface
	// PhaseTransitionTimestamps records when the VMI entered each phase.
	PhaseTransitionTimestamps []VirtualMachineInstancePhaseTransitionTimestamp
	// ActivePods maps the UID of each launcher pod of this VMI to its node.
	ActivePods map[types.UID]string
	// LauncherContainerImageVersion is the launcher image the guest runs under.
	LauncherContainerImageVersion string
	// GuestOSInfo is the guest's operating system as its agent reports it.
	GuestOSInfo VirtualMachineInstanceGuestOSInfo
	// VolumeStatus is the state of each volume.
	VolumeStatus []VolumeStatus
}

// VirtualMachineInstanceGuestOSInfo is the guest's operating system.
type VirtualMachineInstanceGuestOSInfo struct {
	Name          string
	KernelRelease string
	Version       string
	PrettyName    string
	VersionID     string
	KernelVersion string
	Machine       string
	ID            string
}

// VolumeStatus is the observed state of one volume.
type VolumeStatus struct {
	// Name of the volume in spec.volumes.
	Name string
	// Target is the guest device the volume is attached as.
	Target string
	// Reason and Message say why the volume keeps the guest from starting.
	Reason  string
	Message string
	// PersistentVolumeClaimInfo is the claim behind a PVC volume.
	PersistentVolumeClaimInfo *PersistentVolumeClaimInfo
}

// PersistentVolumeClaimInfo is what the guest's disk on a claim depends on.
type PersistentVolumeClaimInfo struct {
	ClaimName          string
	AccessModes        []corev1.PersistentVolumeAccessMode
	VolumeMode         *corev1.PersistentVolumeMode
	Capacity           corev1.ResourceList
	Requests           corev1.ResourceList
	FilesystemOverhead *Percent
}

// Percent is a fraction as a decimal string, such as "0.055".
type Percent string

// VirtualMachineInstanceConditionType names an observation of a VMI.
type VirtualMachineInstanceConditionType string

const (
	// VirtualMachineInstanceReady is True while the guest runs and can be used.
	VirtualMachineInstanceReady VirtualMachineInstanceConditionType = "Ready"
	// VirtualMachineInstancePaused is True while the guest's vCPUs are paused.
	VirtualMachineInstancePaused VirtualMachineInstanceConditionType = "Paused"
	// VirtualMachineInstanceAgentConnected is True while the guest agent is
	// connected.
	VirtualMachineInstanceAgentConnected VirtualMachineInstanceConditionType = "AgentConnected"
	// VirtualMachineInstanceSoftwareEmulation is True when the guest runs
	// under software emulation (QEMU TCG) because the node has no usable
	// hardware virtualisation. Such guests are an order of magnitude slower.
	VirtualMachineInstanceSoftwareEmulation VirtualMachineInstanceConditionType = "SoftwareEmulation"
	// VirtualMachineInstanceProvisioning is True while the launcher pod is
	// being prepared (images pulled, volumes attached).
	VirtualMachineInstanceProvisioning VirtualMachineInstanceConditionType = "Provisioning"
	// VirtualMachineInstancePodScheduled mirrors the launcher pod's
	// PodScheduled condition, including the scheduler's reason when False.
	VirtualMachineInstancePodScheduled VirtualMachineInstanceConditionType = "PodScheduled"
)

// VirtualMachineInstanceCondition is one observation of a VMI.
type VirtualMachineInstanceCondition struct {
	Type               VirtualMachineInstanceConditionType
	Status             corev1.ConditionStatus
	LastProbeTime      metav1.Time
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}

// VirtualMachineInstanceNetworkInterface is a guest interface as observed.
type VirtualMachineInstanceNetworkInterface struct {
	// Name of the interface in spec.domain.devices.interfaces.
	Name string
	// IPAddress is the primary address of the interface.
	IPAddress string
	// IPAddresses are all addresses of the interface.
	IPAddresses []string
	// MAC is the hardware address of the interface.
	MAC string
	// InterfaceName is the name of the interface inside the guest.
	InterfaceName string
	// InfoSource says where the data comes from: "domain", "dhcp",
	// "guest-agent", comma-separated.
	InfoSource string
	// PodInterfaceName is the pod interface the guest NIC is bound to.
	PodInterfaceName string
}

// VirtualMachineInstancePhaseTransitionTimestamp records a phase change.
type VirtualMachineInstancePhaseTransitionTimestamp struct {
	// Phase entered.
	Phase VirtualMachineInstancePhase
	// PhaseTransitionTimestamp is when the phase was entered.
	PhaseTransitionTimestamp metav1.Time
}
