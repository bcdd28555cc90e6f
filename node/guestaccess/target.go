package guestaccess

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
	"kubevirt.dev/virt/node/podfs"
)

var vmiResource = virtv1.Resource("virtualmachineinstances")

// target is a running VMI of this node and where its launcher is.
type target struct {
	vmi *virtv1.VirtualMachineInstance
	pod *corev1.Pod
	// privateDir is the launcher pod's PrivateVolume on the host.
	privateDir podfs.Dir
}

func (t *target) String() string { return t.vmi.Namespace + "/" + t.vmi.Name }

// find resolves a request's VMI: 404 unless the node's informer holds it
// with the requested UID, 409 unless it is Running, 503 while the caches
// fill or the launcher pod is not known yet.
func (s *Server) find(r *http.Request) (*target, error) {
	namespace, name, uid := r.PathValue("namespace"), r.PathValue("name"), r.URL.Query().Get("uid")
	if uid == "" {
		return nil, apierrors.NewBadRequest("the query parameter uid (the VMI's UID) is required")
	}
	if !s.cfg.HasSynced() {
		return nil, apierrors.NewServiceUnavailable("virt-handler has not synced its caches yet")
	}
	vmi, err := s.cfg.VMIs.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) || err == nil && vmi.Status.NodeName != s.cfg.NodeName {
		return nil, apierrors.NewNotFound(vmiResource, name)
	}
	if err != nil {
		return nil, err
	}
	if string(vmi.UID) != uid {
		st := apierrors.NewNotFound(vmiResource, name)
		st.ErrStatus.Message = fmt.Sprintf("VMI %s with UID %s not found on node %s (the VMI of that name has UID %s)", name, uid, s.cfg.NodeName, vmi.UID)
		return nil, st
	}
	if vmi.Status.Phase != virtv1.Running {
		return nil, conflict(vmi, fmt.Sprintf("VMI %s is not running (phase %s)", name, phaseOf(vmi)))
	}
	pod := s.launcherPod(vmi)
	if pod == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no running launcher pod of VMI %s on node %s", name, s.cfg.NodeName))
	}
	return &target{vmi: vmi, pod: pod, privateDir: s.cfg.PodFiles.PrivateDir(string(pod.UID))}, nil
}

// launcherPod is the VMI's active launcher pod on this node, as the VMI
// controller finds it.
func (s *Server) launcherPod(vmi *virtv1.VirtualMachineInstance) *corev1.Pod {
	objs, err := s.cfg.Pods.ByIndex(vmipod.VMIUIDIndex, string(vmi.UID))
	if err != nil {
		return nil
	}
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			continue
		}
		if _, active := vmi.Status.ActivePods[pod.UID]; active && pod.Spec.NodeName == s.cfg.NodeName && !vmipod.Exited(pod) {
			return pod
		}
	}
	return nil
}

func phaseOf(vmi *virtv1.VirtualMachineInstance) virtv1.VirtualMachineInstancePhase {
	if vmi.Status.Phase == "" {
		return "Pending"
	}
	return vmi.Status.Phase
}

// conflict is the 409 of an action that makes no sense in the VMI's state.
func conflict(vmi *virtv1.VirtualMachineInstance, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusConflict,
		Reason:  metav1.StatusReasonConflict,
		Message: msg,
		Details: &metav1.StatusDetails{Group: vmiResource.Group, Kind: vmiResource.Resource, Name: vmi.Name, UID: vmi.UID},
	}}
}

func newStatus(code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
}
