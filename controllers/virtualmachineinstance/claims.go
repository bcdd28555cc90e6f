package virtualmachineinstance

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Event reasons of a volume's claim.
const (
	// ReasonPVCBound: a claim the VMI waited for is bound.
	ReasonPVCBound = "PVCBound"
)

// claimIndex indexes VMIs by the claims their volumes name, as
// "namespace/claim", so a claim's change requeues the VMIs waiting for it.
const claimIndex = "claim"

func indexByClaim(obj any) ([]string, error) {
	vmi, ok := obj.(*virtv1.VirtualMachineInstance)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, v := range vmi.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			keys = append(keys, vmi.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		}
	}
	return keys, nil
}

// enqueueClaimUsers requeues the VMIs whose volumes name the claim obj.
func (c *Controller) enqueueClaimUsers(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	users, err := c.vmiIndexer.ByIndex(claimIndex, key)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("VMIs of claim %s: %w", key, err))
		return
	}
	for _, u := range users {
		c.enqueue(u)
	}
}

// missingClaim is a persistentVolumeClaim volume whose claim does not exist.
type missingClaim struct {
	volume, claim string
}

func (m *missingClaim) message(namespace string) string {
	return fmt.Sprintf("PersistentVolumeClaim %q of volume %q does not exist in namespace %s", m.claim, m.volume, namespace)
}

// volumeStatus is the VMI's status.volumeStatus as its claims are now: one
// entry per persistentVolumeClaim volume, in spec order, holding what the
// guest's disk depends on (persistentVolumeClaimInfo) and, while the claim
// keeps the guest from starting, why (reason and message). It also reports
// the first volume whose claim does not exist. Claims come from the cache; a
// claim the cache does not have, or does not have bound, is asked of the
// API when fresh is set, so that a decision that cannot be undone (failing
// the VMI, handing it off) does not rest on a lagging cache.
func (c *Controller) volumeStatus(ctx context.Context, vmi *virtv1.VirtualMachineInstance, fresh bool) (out []virtv1.VolumeStatus, missing *missingClaim, err error) {
	for _, v := range vmi.Spec.Volumes {
		src := v.PersistentVolumeClaim
		if src == nil {
			continue
		}
		var claim *corev1.PersistentVolumeClaim
		claim, err = c.pvcLister.PersistentVolumeClaims(vmi.Namespace).Get(src.ClaimName)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("get claim %s/%s: %w", vmi.Namespace, src.ClaimName, err)
		}
		if fresh && (claim == nil || claim.Status.Phase != corev1.ClaimBound) {
			claim, err = c.kube.CoreV1().PersistentVolumeClaims(vmi.Namespace).Get(ctx, src.ClaimName, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, nil, fmt.Errorf("get claim %s/%s: %w", vmi.Namespace, src.ClaimName, err)
			}
		}
		if apierrors.IsNotFound(err) || claim == nil {
			m := &missingClaim{volume: v.Name, claim: src.ClaimName}
			if missing == nil {
				missing = m
			}
			out = append(out, virtv1.VolumeStatus{Name: v.Name, Reason: virtv1.ReasonPVCNotFound, Message: m.message(vmi.Namespace),
				PersistentVolumeClaimInfo: &virtv1.PersistentVolumeClaimInfo{ClaimName: src.ClaimName}})
			continue
		}
		out = append(out, c.claimStatus(v.Name, claim))
	}
	return out, missing, nil
}

// claimStatus is the volumeStatus entry of volume on claim.
func (c *Controller) claimStatus(volume string, claim *corev1.PersistentVolumeClaim) virtv1.VolumeStatus {
	mode := corev1.PersistentVolumeFilesystem
	if claim.Spec.VolumeMode != nil {
		mode = *claim.Spec.VolumeMode
	}
	info := &virtv1.PersistentVolumeClaimInfo{
		ClaimName:   claim.Name,
		AccessModes: append([]corev1.PersistentVolumeAccessMode(nil), claim.Spec.AccessModes...),
		VolumeMode:  &mode,
		Requests:    claim.Spec.Resources.Requests.DeepCopy(),
	}
	if mode == corev1.PersistentVolumeFilesystem {
		// Only a file system takes its share of the volume: a Block
		// claim's disk is the whole device.
		info.FilesystemOverhead = ptr.To(c.filesystemOverhead)
	}
	vs := virtv1.VolumeStatus{Name: volume, PersistentVolumeClaimInfo: info}
	switch claim.Status.Phase {
	case corev1.ClaimBound:
		info.Capacity = claim.Status.Capacity.DeepCopy()
	case corev1.ClaimLost:
		vs.Reason = virtv1.ReasonPVCNotBound
		vs.Message = fmt.Sprintf("PersistentVolumeClaim %q lost its PersistentVolume %q", claim.Name, claim.Spec.VolumeName)
	default:
		if c.bindsOnFirstConsumer(claim) {
			// Not a reason to wait: the claim binds once the launcher pod
			// is scheduled, which the pod's PodScheduled condition tells.
			vs.Message = fmt.Sprintf("PersistentVolumeClaim %q binds when the launcher pod is scheduled (volumeBindingMode WaitForFirstConsumer)", claim.Name)
			break
		}
		vs.Reason = virtv1.ReasonPVCNotBound
		vs.Message = fmt.Sprintf("PersistentVolumeClaim %q is Pending: no PersistentVolume is bound to it yet; the guest starts once one is", claim.Name)
	}
	return vs
}

// bindsOnFirstConsumer reports whether the Pending claim waits for its first
// consumer, the launcher pod, to be scheduled before it is bound.
func (c *Controller) bindsOnFirstConsumer(claim *corev1.PersistentVolumeClaim) bool {
	if _, ok := claim.Annotations["volume.kubernetes.io/selected-node"]; ok {
		return true
	}
	name := claim.Spec.StorageClassName
	if name == nil || *name == "" {
		return false
	}
	class, err := c.classLister.Get(*name)
	if err != nil {
		return false
	}
	return class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// volumeEvents records how the volumes' waits changed from old to now: a
// Warning when a claim starts keeping the guest from starting, a Normal event
// when it stops doing so.
func (c *Controller) volumeEvents(vmi *virtv1.VirtualMachineInstance, old, now []virtv1.VolumeStatus) {
	before := map[string]virtv1.VolumeStatus{}
	for _, vs := range old {
		before[vs.Name] = vs
	}
	for _, vs := range now {
		prev := before[vs.Name]
		switch {
		case vs.Reason != "" && (vs.Reason != prev.Reason || vs.Message != prev.Message):
			c.recorder.Eventf(vmi, corev1.EventTypeWarning, vs.Reason, "Volume %s: %s", vs.Name, vs.Message)
		case vs.Reason == "" && prev.Reason != "":
			c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonPVCBound, "Volume %s: PersistentVolumeClaim %q is bound",
				vs.Name, vs.PersistentVolumeClaimInfo.ClaimName)
		}
	}
}

func volumeStatusEqual(a, b []virtv1.VolumeStatus) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return apiequality.Semantic.DeepEqual(a, b)
}
