package nodefence

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/nodehealth"
)

// Event reasons.
const (
	// ReasonNodeFenced: the Warning event on the Node and on each of its
	// VMIs when this controller tainted the Node out of service.
	ReasonNodeFenced = "NodeFenced"
	// ReasonInvalidFenceAfter: the Warning event on a VMI whose
	// FenceNodeAfterAnnotation is no duration; it asks for nothing.
	ReasonInvalidFenceAfter = "InvalidFenceNodeAfter"
)

// OutOfServiceTaint is the taint of Kubernetes' non-graceful node shutdown
// that fencing adds: kube-controller-manager then force-deletes the node's
// pods and detaches its volumes, and nodehealth fails its VMIs.
func OutOfServiceTaint(now time.Time) corev1.Taint {
	return corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute,
		TimeAdded: &metav1.Time{Time: now}}
}

// ParseFenceAfter reads a FenceNodeAfterAnnotation value: a duration, or
// FenceNodeNever. 0 and never are 0: nothing asked.
func ParseFenceAfter(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == virtv1.FenceNodeNever {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q is neither a non-negative duration (90s) nor %q", virtv1.FenceNodeAfterAnnotation, s, virtv1.FenceNodeNever)
	}
	return d, nil
}

// demand is the fence-after of a node: the smallest its VMIs ask for, and
// who asked.
type demand struct {
	after time.Duration
	by    string
	vmis  []*virtv1.VirtualMachineInstance // that have not ended
}

// demandOf is what the VMIs of a node ask for.
func (c *Controller) demandOf(ctx context.Context, objs []any) demand {
	var d demand
	for _, obj := range objs {
		vmi, ok := obj.(*virtv1.VirtualMachineInstance)
		if !ok || vmi.Status.Phase.IsFinal() {
			continue
		}
		d.vmis = append(d.vmis, vmi)
		after, by := c.cfg.After, "virt-controller's --fence-unresponsive-nodes-after"
		if v, ok := vmi.Annotations[virtv1.FenceNodeAfterAnnotation]; ok && c.cfg.HonorAnnotations {
			var err error
			by = fmt.Sprintf("the %s annotation of VMI %s/%s", virtv1.FenceNodeAfterAnnotation, vmi.Namespace, vmi.Name)
			if after, err = ParseFenceAfter(v); err != nil {
				// Asks for nothing rather than the cluster's time: the
				// user meant something else, and fencing is the one
				// step not to take by mistake. Validation at admission
				// would be better; this is the backstop.
				klog.FromContext(ctx).Info("Ignoring an invalid fence-after", "vmi", klog.KObj(vmi), "err", err)
				c.recorder.Event(vmi, corev1.EventTypeWarning, ReasonInvalidFenceAfter, err.Error()+": it asks for no fencing")
				continue
			}
		}
		if after > 0 && (d.after == 0 || after < d.after) {
			d.after, d.by = after, by
		}
	}
	return d
}

// sync fences nodeName if it has looked dead for longer than its VMIs'
// fence-after, and looks again when it would have.
func (c *Controller) sync(ctx context.Context, nodeName string) error {
	node, err := c.nodeLister.Get(nodeName)
	if apierrors.IsNotFound(err) {
		return nil // a deleted Node is nodehealth's, not ours
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", nodeName, err)
	}
	if outOfService(node) {
		return nil // fenced already, by us or by its administrator
	}
	objs, err := c.vmiIndexer.ByIndex(nodehealth.VMINodeIndex, nodeName)
	if err != nil {
		return fmt.Errorf("list VMIs of node %s: %w", nodeName, err)
	}
	notReadySince, notReady := notReadySince(node)
	if !notReady {
		return nil // the Node's update requeues it when it turns NotReady
	}
	// Only now: what the VMIs ask matters (and is complained about) only
	// while their node is NotReady.
	d := c.demandOf(ctx, objs)
	if d.after == 0 {
		return nil
	}
	silentSince, err := c.silentSince(nodeName)
	if err != nil {
		return err
	}
	// Dead since both heartbeats stopped; the later of the two.
	deadSince := notReadySince
	if silentSince.After(deadSince) {
		deadSince = silentSince
	}
	if remaining := deadSince.Add(d.after).Sub(c.clock.Now()); remaining >= 0 {
		c.queue.AddAfter(nodeName, remaining+time.Second)
		return nil
	}
	// The cache may lag a renewal that came just now: ask the API before
	// the one step that cannot be undone.
	lease, err := c.kube.CoordinationV1().Leases(c.cfg.LeaseNamespace).Get(ctx, virtv1.HandlerLeaseName(nodeName), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("confirm the virt-handler Lease of node %s is stale: %w", nodeName, err)
	case lease.Spec.RenewTime != nil && c.clock.Since(lease.Spec.RenewTime.Time) < c.cfg.HeartbeatTimeout:
		return nil // its update event brings the node back here
	}
	return c.fence(ctx, node, d, notReadySince, silentSince)
}

// fence taints node out of service and says why on it and its VMIs. The
// update carries the cached Node's resourceVersion: a Node that changed
// since it was judged (the kubelet reported Ready again) is not fenced, the
// conflict requeues it for a fresh look.
func (c *Controller) fence(ctx context.Context, node *corev1.Node, d demand, notReadySince, silentSince time.Time) error {
	next := node.DeepCopy()
	next.Spec.Taints = append(next.Spec.Taints, OutOfServiceTaint(c.clock.Now()))
	if _, err := c.kube.CoreV1().Nodes().Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("taint node %s out of service: %w", node.Name, err)
	}
	silent := "has no virt-handler Lease"
	if !silentSince.IsZero() {
		silent = fmt.Sprintf("its virt-handler silent since %s", silentSince.UTC().Format(time.RFC3339))
	}
	msg := fmt.Sprintf("node %s fenced: NotReady since %s and %s, for more than %s (%s); tainted %s=nodeshutdown:NoExecute, "+
		"which assumes the node is off: its pods are force-deleted and its VMIs fail NodeUnresponsive",
		node.Name, notReadySince.UTC().Format(time.RFC3339), silent, d.after, d.by, corev1.TaintNodeOutOfService)
	klog.FromContext(ctx).Info("Fenced node", "reason", msg, "vmis", len(d.vmis))
	// Events of cluster-scoped objects go to the default namespace; the
	// object reference names the Node.
	c.recorder.Event(node, corev1.EventTypeWarning, ReasonNodeFenced, msg)
	for _, vmi := range d.vmis {
		c.recorder.Event(vmi, corev1.EventTypeWarning, ReasonNodeFenced, msg)
	}
	return nil
}

// notReadySince reports whether node is NotReady (Ready False or Unknown)
// and since when. A Node without a Ready condition has not reported yet:
// not NotReady.
func notReadySince(node *corev1.Node) (time.Time, bool) {
	i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
	if i < 0 || node.Status.Conditions[i].Status == corev1.ConditionTrue {
		return time.Time{}, false
	}
	return node.Status.Conditions[i].LastTransitionTime.Time, true
}

// silentSince is when the node's virt-handler Lease went stale (its last
// renewal plus the heartbeat timeout, possibly still ahead); the zero time
// when there is no Lease or renewal to go by.
func (c *Controller) silentSince(nodeName string) (time.Time, error) {
	lease, err := c.leaseLister.Get(virtv1.HandlerLeaseName(nodeName))
	switch {
	case apierrors.IsNotFound(err):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("get the virt-handler Lease of node %s: %w", nodeName, err)
	case lease.Spec.RenewTime == nil:
		return time.Time{}, nil
	}
	return lease.Spec.RenewTime.Add(c.cfg.HeartbeatTimeout), nil
}

func outOfService(node *corev1.Node) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeOutOfService })
}
