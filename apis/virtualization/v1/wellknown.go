package v1

// Labels, annotations and finalizers the platform's components agree on.
const (
	// CreatedByLabel on a launcher pod holds the UID of its VMI.
	CreatedByLabel = "virtualization.kubevirt.io/created-by"
	// VMINameLabel on a launcher pod holds the name of its VMI.
	VMINameLabel = "virtualization.kubevirt.io/vmi-name"
	// ComponentLabel names the platform component a pod belongs to.
	ComponentLabel = "virtualization.kubevirt.io/component"
	// LauncherComponent is the ComponentLabel value of launcher pods.
	LauncherComponent = "virt-launcher"
	// VMNameLabel on a VMI holds the name of the VM that created it.
	VMNameLabel = "virtualization.kubevirt.io/vm-name"

	// SchedulableNodeLabel is set to "true" by virt-handler on nodes it runs
	// on; launcher pods are scheduled only to such nodes.
	SchedulableNodeLabel = "virtualization.kubevirt.io/schedulable"
	// HandlerLeasePrefix and the node's name make the name of the Lease
	// (coordination.k8s.io) through which a node's virt-handler says it is
	// alive, in the platform's namespace (HandlerLeaseName). Only that
	// node's virt-handler may write it (the ValidatingAdmissionPolicy
	// virt-handler-node-restriction); virt-controller reads its renewTime.
	HandlerLeasePrefix = "virt-handler-"

	// LauncherPodFinalizer keeps a VMI until its launcher pods are gone.
	// virt-apiserver adds it on create; virt-controller removes it.
	LauncherPodFinalizer = "virtualization.kubevirt.io/launcher-pod"
	// GuestShutdownFinalizer keeps a VMI until its guest is shut down.
	// virt-apiserver adds it on create; the virt-handler of status.nodeName
	// removes it once the domain is gone, or virt-controller does when the
	// VMI never reached a node or its node is unresponsive.
	GuestShutdownFinalizer = "virtualization.kubevirt.io/guest-shutdown"

	// FenceNodeAfterAnnotation on a VMI (or a VM, whose instances get it)
	// overrides virt-controller's --fence-unresponsive-nodes-after for the
	// VMI: a duration ("90s"), or FenceNodeNever. A node whose Node is
	// NotReady and whose virt-handler is silent for longer than the
	// smallest fence-after of its running VMIs is tainted
	// node.kubernetes.io/out-of-service by virt-controller
	// (docs/node-failure.md, which warns about what that assumes).
	FenceNodeAfterAnnotation = "virtualization.kubevirt.io/fence-node-after"
	// FenceNodeNever as FenceNodeAfterAnnotation: the VMI does not ask for
	// its node to be fenced (another VMI of the node still may).
	FenceNodeNever = "never"
)

// Reasons of a VMI's status.reason and conditions.
const (
	// ReasonPodFailed: the launcher pod failed before the hand-off.
	ReasonPodFailed = "PodFailed"
	// ReasonPodDeleted: the launcher pod disappeared before the hand-off.
	ReasonPodDeleted = "PodDeleted"
	// ReasonUnschedulable: the scheduler found no node for the launcher pod.
	ReasonUnschedulable = "Unschedulable"
	// ReasonNodeUnresponsive: the node's virt-handler stopped renewing its
	// Lease and the VMI's launcher pod is known not to run (gone, ended, its
	// Node deleted or out of service): the VMI's reason when it fails, and
	// the Warning event when the NodeUnresponsive condition is set.
	ReasonNodeUnresponsive = "NodeUnresponsive"
	// ReasonHeartbeatStale: the NodeUnresponsive condition's reason while
	// the launcher pod may still run the guest.
	ReasonHeartbeatStale = "HeartbeatStale"
	// ReasonNodeResponsive: the Normal event when the node's virt-handler
	// beats again and the NodeUnresponsive condition goes.
	ReasonNodeResponsive = "NodeResponsive"
	// ReasonGuestShutdown: the guest powered off (ACPI or by itself).
	ReasonGuestShutdown = "GuestShutdown"
	// ReasonGuestCrashed: qemu or the guest crashed.
	ReasonGuestCrashed = "GuestCrashed"
	// ReasonGuestDestroyed: the domain was destroyed, because it did not
	// power off within its grace period or was killed.
	ReasonGuestDestroyed = "GuestDestroyed"
	// ReasonLauncherGone: the launcher stopped answering or exited while the
	// guest should have been running.
	ReasonLauncherGone = "LauncherGone"
	// ReasonPodTerminated: the launcher pod was evicted, deleted, or
	// terminated by its kubelet while the VMI was neither deleted nor ended,
	// and its launcher shut the guest down (ACPI, destroyed after the grace
	// period). Not the user's doing on the VMI, not the guest's: the VMI
	// fails, so runStrategy Always and RerunOnFailure start it again.
	ReasonPodTerminated = "PodTerminated"
	// ReasonLivenessProbeFailed: the guest failed its liveness probe, the
	// kubelet stopped the launcher container (whose probe it is) and the
	// launcher shut the guest down. The VMI fails, so runStrategy Always
	// and RerunOnFailure start it again.
	ReasonLivenessProbeFailed = "LivenessProbeFailed"
	// ReasonSyncFailed: the launcher could not define or start the domain.
	ReasonSyncFailed = "SyncFailed"
	// ReasonPVCNotFound: a persistentVolumeClaim volume names a claim that
	// does not exist in the VMI's namespace; the VMI fails before its pod is
	// created.
	ReasonPVCNotFound = "PVCNotFound"
	// ReasonPVCNotBound: a volumeStatus reason; the volume's claim waits for
	// a PersistentVolume, and so does the guest.
	ReasonPVCNotBound = "PVCNotBound"
	// ReasonSoftwareEmulation: SoftwareEmulation condition reason.
	ReasonSoftwareEmulation = "NoHardwareVirtualization"
)

// DefaultFilesystemOverhead is the share of a Filesystem-mode claim that a
// disk image on it leaves to the file system when nothing else is
// configured: KubeVirt's (and CDI's) default. virt-controller records the
// value it used in volumeStatus[].persistentVolumeClaimInfo, and
// virt-launcher sizes the disk image from that record.
const DefaultFilesystemOverhead Percent = "0.055"

// HandlerLeaseName is the name of node's virt-handler Lease.
func HandlerLeaseName(node string) string { return HandlerLeasePrefix + node }

// Live migration's labels, annotations, finalizer and reasons (KubeVirt's
// names; docs/migration.md).
const (
	// MigrationVMINameLabel on a VirtualMachineInstanceMigration holds the
	// name of its VMI, so a VMI's migrations are listed by label.
	MigrationVMINameLabel = "kubevirt.io/vmi-name"
	// MigrationJobUIDLabel on a migration's target launcher pod holds the
	// UID of its VirtualMachineInstanceMigration.
	MigrationJobUIDLabel = "kubevirt.io/migrationJobUID"
	// EvacuationMigrationAnnotation on a VirtualMachineInstanceMigration
	// that virt-controller created for a drain holds the node being
	// drained; such migrations go before the users'.
	EvacuationMigrationAnnotation = "kubevirt.io/evacuationMigration"
	// MigrationFinalizer keeps a VirtualMachineInstanceMigration until
	// virt-controller has cancelled or finished it: deleting an unfinished
	// migration cancels it. virt-controller adds and removes it.
	MigrationFinalizer = "kubevirt.io/migrationJobFinalize"
	// MigrationGenerateNamePrefix is the generateName of the migrations the
	// migrate subresources create.
	MigrationGenerateNamePrefix = "kubevirt-migrate-vm-"
	// EvacuationGenerateNamePrefix is the generateName of the migrations
	// virt-controller creates for a drain.
	EvacuationGenerateNamePrefix = "kubevirt-evacuation-"
)

// Reasons of a False LiveMigratable condition (KubeVirt's); the condition's
// message names the volume, interface or device that cannot move.
const (
	// ReasonDisksNotMigratable: a volume cannot be reached from another
	// node (a PersistentVolumeClaim that is not ReadWriteMany, a host
	// disk, ...).
	ReasonDisksNotMigratable = "DisksNotLiveMigratable"
	// ReasonInterfaceNotMigratable: an interface binding cannot move.
	ReasonInterfaceNotMigratable = "InterfaceNotLiveMigratable"
	// ReasonHostDeviceNotMigratable: the guest has a host device.
	ReasonHostDeviceNotMigratable = "HostDeviceNotLiveMigratable"
	// ReasonHotplugNotMigratable: a hotplugged volume cannot move.
	ReasonHotplugNotMigratable = "HotplugNotLiveMigratable"
	// ReasonFilesystemNotMigratable: a virtiofs file system cannot move.
	ReasonFilesystemNotMigratable = "VirtIOFSNotLiveMigratable"
)

// GuestInPodCondition is the readiness gate of every launcher pod: True
// only on the pod whose QEMU runs the guest of a Running VMI, written by
// virt-controller (controllers/guestpod). A Service thus sends a guest's
// traffic to that pod only, never to a migration's target before the
// switch-over nor to its source after it.
const GuestInPodCondition = "virtualization.kubevirt.io/guest-in-pod"

// LibvirtLogFiltersAnnotation on a VMI (or a VM's template) turns on
// libvirt's debug log in the VMI's launcher pod: its value is libvirt's
// log filters ("1:qemu.qemu_monitor 3:*", https://libvirt.org/logging.html),
// and the matching messages go to the compute container's log. KubeVirt's
// name and meaning. virt-apiserver refuses a value that is not a filter
// list (validation.ValidateLibvirtLogFilters); virt-controller hands it to
// the launcher as LIBVIRT_LOG_FILTERS, never into a configuration file.
const LibvirtLogFiltersAnnotation = "kubevirt.io/libvirt-log-filters"
