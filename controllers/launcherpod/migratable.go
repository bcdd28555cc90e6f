package launcherpod

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// LiveMigratable computes the LiveMigratable condition of vmi
// (virtv1.VirtualMachineInstanceIsMigratable): what a target
// pod on another node could not take over. claims are the VMI's claims by
// name (a claim missing from it counts as not shared).
//
// A disk is migratable when both pods can open it at once: a claim that is
// ReadWriteMany (or a read-only disk on a ReadOnlyMany claim). A disk that
// lives in the pod (container disks' overlays, emptyDisks, cloud-init, config
// volumes, the kernel-boot files) is migratable too: the source launcher
// copies pod-local writable disks block by block to the target's
// (NON_SHARED_INC), and the read-only ones are rebuilt by the target pod
// from the same images and objects. A host disk lives on the node.
//
// The bridge binding on the pod network hands the pod's own address to the
// guest: the target pod has another one, so the guest would lose its
// address. Masquerade and passt keep the guest's address inside the pod.
func LiveMigratable(vmi *virtv1.VirtualMachineInstance, claims map[string]*corev1.PersistentVolumeClaim) (status corev1.ConditionStatus, reason, message string) {
	var disks []string
	for _, vol := range vmi.Spec.Volumes {
		if why := volumeNotMigratable(vmi, &vol, claims); why != "" {
			disks = append(disks, why)
		}
	}
	if len(disks) > 0 {
		return corev1.ConditionFalse, virtv1.ReasonDisksNotMigratable, strings.Join(disks, "; ")
	}
	if len(vmi.Spec.Domain.Devices.Filesystems) > 0 {
		return corev1.ConditionFalse, virtv1.ReasonFilesystemNotMigratable,
			fmt.Sprintf("filesystem %s is shared through virtiofs, which cannot migrate", vmi.Spec.Domain.Devices.Filesystems[0].Name)
	}
	podNetworks := map[string]bool{}
	for _, n := range vmi.Spec.Networks {
		podNetworks[n.Name] = n.Pod != nil
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		switch {
		case iface.Bridge != nil && podNetworks[iface.Name]:
			return corev1.ConditionFalse, virtv1.ReasonInterfaceNotMigratable,
				fmt.Sprintf("interface %s uses the bridge binding on the pod network: the guest holds the pod's IP address, which the target pod does not have", iface.Name)
		case iface.Binding != nil:
			return corev1.ConditionFalse, virtv1.ReasonInterfaceNotMigratable,
				fmt.Sprintf("interface %s uses the network binding plugin %s, which is not known to migrate", iface.Name, iface.Binding.Name)
		}
	}
	if d := vmi.Spec.Domain.Devices; len(d.HostDevices) > 0 || len(d.GPUs) > 0 {
		return corev1.ConditionFalse, virtv1.ReasonHostDeviceNotMigratable, "host devices and GPUs passed through to the guest cannot migrate"
	}
	return corev1.ConditionTrue, "", ""
}

// volumeNotMigratable says why vol cannot follow the guest, or "".
func volumeNotMigratable(vmi *virtv1.VirtualMachineInstance, vol *virtv1.Volume, claims map[string]*corev1.PersistentVolumeClaim) string {
	claimName, readOnly := "", false
	switch {
	case vol.PersistentVolumeClaim != nil:
		claimName, readOnly = vol.PersistentVolumeClaim.ClaimName, vol.PersistentVolumeClaim.ReadOnly
	case vol.DataVolume != nil:
		claimName = vol.DataVolume.Name
	case vol.Ephemeral != nil && vol.Ephemeral.PersistentVolumeClaim != nil:
		// The overlay is pod-local (copied); the claim below is read only.
		claimName, readOnly = vol.Ephemeral.PersistentVolumeClaim.ClaimName, true
	case vol.HostDisk != nil:
		return fmt.Sprintf("volume %s is a host disk (%s), which stays on the node", vol.Name, vol.HostDisk.Path)
	case vol.MemoryDump != nil:
		return fmt.Sprintf("volume %s is a memory dump being written", vol.Name)
	default:
		// Pod-local: block-copied or rebuilt by the target pod.
		return ""
	}
	claim := claims[claimName]
	if claim == nil {
		return fmt.Sprintf("volume %s: claim %s/%s not found", vol.Name, vmi.Namespace, claimName)
	}
	modes := claim.Status.AccessModes
	if len(modes) == 0 {
		modes = claim.Spec.AccessModes
	}
	if slices.Contains(modes, corev1.ReadWriteMany) || (readOnly && slices.Contains(modes, corev1.ReadOnlyMany)) {
		return ""
	}
	return fmt.Sprintf("volume %s: claim %s is not ReadWriteMany (access modes %v), so the target pod cannot open it while the source holds it",
		vol.Name, claimName, modes)
}
