package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstance is a running virtual machine: one guest, one launcher
// pod, one node. It is created Pending, scheduled by virt-controller, and from
// the moment status.nodeName is set owned by the virt-handler of that node.
type VirtualMachineInstance struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired virtual machine. It cannot change once created.
	Spec VirtualMachineInstanceSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is what the platform observed. Written only through /status.
	// +optional
	Status VirtualMachineInstanceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceList is a list of VirtualMachineInstances.
type VirtualMachineInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineInstance `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstanceSpec describes the guest and where it may run.
type VirtualMachineInstanceSpec struct {
	// Domain is the virtual hardware of the guest.
	Domain DomainSpec `json:"domain" protobuf:"bytes,1,opt,name=domain"`

	// NodeSelector must match a node's labels for the guest to be scheduled
	// there, as with pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,2,rep,name=nodeSelector"`
	// Affinity holds the scheduling constraints of the launcher pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty" protobuf:"bytes,3,opt,name=affinity"`
	// Tolerations of the launcher pod.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty" protobuf:"bytes,4,rep,name=tolerations"`

	// TerminationGracePeriodSeconds is how long the guest gets to shut down
	// after an ACPI power-button press before it is destroyed. Defaults to 30.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty" protobuf:"varint,5,opt,name=terminationGracePeriodSeconds"`

	// Volumes are the storage sources the disks of the domain refer to by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Volumes []Volume `json:"volumes,omitempty" protobuf:"bytes,6,rep,name=volumes"`
	// Networks are the networks the interfaces of the domain refer to by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Networks []Network `json:"networks,omitempty" protobuf:"bytes,7,rep,name=networks"`

	// Hostname of the guest. Defaults to the VMI's name.
	// +optional
	Hostname string `json:"hostname,omitempty" protobuf:"bytes,8,opt,name=hostname"`
	// Subdomain makes the guest's FQDN <hostname>.<subdomain>.<namespace>.svc.
	// +optional
	Subdomain string `json:"subdomain,omitempty" protobuf:"bytes,9,opt,name=subdomain"`
	// PriorityClassName of the launcher pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty" protobuf:"bytes,10,opt,name=priorityClassName"`
	// SchedulerName of the launcher pod; empty means the default scheduler.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty" protobuf:"bytes,11,opt,name=schedulerName"`
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

// Condition is the condition of type t, nil if s has none. The pointer is
// into s.Conditions: writing through it changes s.
func (s *VirtualMachineInstanceStatus) Condition(t VirtualMachineInstanceConditionType) *VirtualMachineInstanceCondition {
	return findCondition(s.Conditions, string(t))
}

// VirtualMachineInstanceStatus is the observed state of a VMI.
type VirtualMachineInstanceStatus struct {
	// Phase is where the VMI is in its life.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstancePhase"`
	// Reason is a CamelCase word saying why the VMI is in its phase, for
	// phases that need one (Failed, Succeeded).
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,2,opt,name=reason"`
	// Conditions are the observations of the VMI that are not phases.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceCondition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// NodeName is the node the guest runs on. Setting it hands the VMI from
	// virt-controller to that node's virt-handler.
	// +optional
	NodeName string `json:"nodeName,omitempty" protobuf:"bytes,4,opt,name=nodeName"`
	// Interfaces are the guest's network interfaces as observed.
	// +optional
	// +listType=atomic
	Interfaces []VirtualMachineInstanceNetworkInterface `json:"interfaces,omitempty" protobuf:"bytes,5,rep,name=interfaces"`
	// PhaseTransitionTimestamps records when the VMI entered each phase.
	// +optional
	// +listType=atomic
	PhaseTransitionTimestamps []VirtualMachineInstancePhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty" protobuf:"bytes,6,rep,name=phaseTransitionTimestamps"`
	// ActivePods maps the UID of each launcher pod of this VMI to its node.
	// +optional
	ActivePods map[types.UID]string `json:"activePods,omitempty" protobuf:"bytes,7,rep,name=activePods,castkey=k8s.io/apimachinery/pkg/types.UID"`
	// LauncherContainerImageVersion is the launcher image the guest runs under.
	// +optional
	LauncherContainerImageVersion string `json:"launcherContainerImageVersion,omitempty" protobuf:"bytes,8,opt,name=launcherContainerImageVersion"`
}

// VirtualMachineInstanceConditionType names an observation of a VMI.
type VirtualMachineInstanceConditionType string

const (
	// VirtualMachineInstanceReady is True while the guest runs and can be used.
	VirtualMachineInstanceReady VirtualMachineInstanceConditionType = "Ready"
	// VirtualMachineInstancePaused is True while the guest's vCPUs are paused.
	VirtualMachineInstancePaused VirtualMachineInstanceConditionType = "Paused"
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
	Type   VirtualMachineInstanceConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineInstanceConditionType"`
	Status corev1.ConditionStatus              `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	// +optional
	// +nullable
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty" protobuf:"bytes,3,opt,name=lastProbeTime"`
	// +optional
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// VirtualMachineInstanceNetworkInterface is a guest interface as observed.
type VirtualMachineInstanceNetworkInterface struct {
	// Name of the interface in spec.domain.devices.interfaces.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// IPAddress is the primary address of the interface.
	// +optional
	IPAddress string `json:"ipAddress,omitempty" protobuf:"bytes,2,opt,name=ipAddress"`
	// IPAddresses are all addresses of the interface.
	// +optional
	// +listType=atomic
	IPAddresses []string `json:"ipAddresses,omitempty" protobuf:"bytes,3,rep,name=ipAddresses"`
	// MAC is the hardware address of the interface.
	// +optional
	MAC string `json:"mac,omitempty" protobuf:"bytes,4,opt,name=mac"`
	// InterfaceName is the name of the interface inside the guest.
	// +optional
	InterfaceName string `json:"interfaceName,omitempty" protobuf:"bytes,5,opt,name=interfaceName"`
	// InfoSource says where the data comes from, as a comma-separated list:
	// "domain" (the launcher's domain), "dhcp" (the lease the guest took
	// from the launcher's DHCP server), "guest-agent".
	// +optional
	InfoSource string `json:"infoSource,omitempty" protobuf:"bytes,6,opt,name=infoSource"`
	// PodInterfaceName is the pod interface the guest NIC is bound to, such
	// as eth0.
	// +optional
	PodInterfaceName string `json:"podInterfaceName,omitempty" protobuf:"bytes,7,opt,name=podInterfaceName"`
}

// VirtualMachineInstancePhaseTransitionTimestamp records a phase change.
type VirtualMachineInstancePhaseTransitionTimestamp struct {
	// Phase entered.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstancePhase"`
	// PhaseTransitionTimestamp is when the phase was entered.
	// +optional
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty" protobuf:"bytes,2,opt,name=phaseTransitionTimestamp"`
}
