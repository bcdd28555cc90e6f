package vmipod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// VMIUIDIndex is the name of the informer index that IndexByVMIUID
// fills: launcher pods by the UID of their VMI (CreatedByLabel). Both
// virt-controller and virt-handler find a VMI's pods through it.
const VMIUIDIndex = "virtualization.kubevirt.io/vmi-uid"

// IndexByVMIUID is the cache.IndexFunc of VMIUIDIndex. Pods without
// the label are not indexed.
func IndexByVMIUID(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if uid, ok := pod.Labels[virtv1.CreatedByLabel]; ok {
		return []string{uid}, nil
	}
	return nil, nil
}

// VMIKey is the namespace/name key of the VMI that controls pod, or "" for
// pods that are not launcher pods (no VMI owner reference set by New).
func VMIKey(pod *corev1.Pod) string {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "VirtualMachineInstance" || ref.APIVersion != virtv1.SchemeGroupVersion.String() {
		return ""
	}
	return pod.Namespace + "/" + ref.Name
}

// Exited reports whether the launcher of pod has exited: the pod ended, or
// its compute container terminated. Then no guest runs in it, whatever the
// VMI says.
func Exited(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || ComputeTerminated(pod) != nil
}

// ComputeTerminated is the terminated state of pod's compute container, nil
// while it has not terminated.
func ComputeTerminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == layout.ComputeContainer && cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

// EndedHolder is the status of a container of pod other than compute that
// has terminated, nil while none has. The other containers hold an image's
// files (kernel boot, container disks) for the pod's whole life, and in a
// launcher pod (restartPolicy Never) a container that ended never starts
// again: a launcher waiting for its files waits in vain. Seen on the
// node's containerd 1.6 under load: a holder's start failed with
// "namespace path: lstat /proc/0/ns/ipc" (containerd issue 9160) and the
// launcher waited out its 5-minute bound.
func EndedHolder(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name != layout.ComputeContainer && cs.State.Terminated != nil {
			return cs
		}
	}
	return nil
}

// LauncherRunning reports whether pod's launcher runs and every other
// container of the pod is ready: the hand-off's condition. The node, not
// the controller, waits for the launcher to serve (monitor: its ready
// file), every 50 ms instead of at a kubelet probe's 1-s period, whose
// pass would reach the API up to a second after the launcher is ready, on
// the path of every VMI start and migration target. Nor does the
// launcher count once it is Ready: a VMI's readiness probe is the compute
// container's readiness probe, which cannot pass before the node starts
// the guest.
func LauncherRunning(pod *corev1.Pod) bool {
	if len(pod.Status.ContainerStatuses) < len(pod.Spec.Containers) {
		return false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == layout.ComputeContainer {
			if cs.State.Running == nil {
				return false
			}
		} else if !cs.Ready {
			return false
		}
	}
	return true
}

// ComputeReady reports whether pod's compute container is ready: with a
// VMI's readiness probe, whether the guest passes it.
func ComputeReady(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == layout.ComputeContainer {
			return cs.Ready
		}
	}
	return false
}
