package migration

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
)

// syncVMI keeps a running VMI's LiveMigratable condition current and creates
// the evacuation migration a drain asked for (status.evacuationNodeName,
// set by the eviction webhook).
func (c *Controller) syncVMI(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get VMI %s: %w", key, err)
	}
	if vmi.Status.NodeName == "" || vmi.Status.Phase.IsFinal() || vmi.DeletionTimestamp != nil {
		return 0, nil
	}
	status, reason, msg := c.liveMigratable(vmi)
	next := vmi.DeepCopy()
	if old := vmi.Status.Condition(virtv1.VirtualMachineInstanceIsMigratable); old == nil ||
		old.Status != status || old.Reason != reason || old.Message != msg {
		next.Status.SetCondition(virtv1.VirtualMachineInstanceCondition{
			Type: virtv1.VirtualMachineInstanceIsMigratable, Status: status, Reason: reason, Message: msg}, c.now())
	}
	if e := vmi.Status.EvacuationNodeName; e != "" && e != vmi.Status.NodeName && !c.hasUnfinished(vmi) {
		// The guest left the drained node: the mark is done with, and
		// must not send the guest away again should it ever come back.
		next.Status.EvacuationNodeName = ""
	}
	if !equality.Semantic.DeepEqual(vmi.Status, next.Status) {
		// The write's event requeues the VMI for the evacuation below.
		return 0, c.updateVMIStatus(ctx, vmi, next)
	}
	if !c.wantsEvacuation(vmi) || status != corev1.ConditionTrue {
		return 0, nil
	}
	if c.hasUnfinished(vmi) {
		return 0, nil
	}
	if wait := c.evacuationsAt.pending(vmi.UID, c.vmimLister); wait > 0 {
		// Created, not yet in the cache: do not create a second one.
		return wait, nil
	}
	m := &virtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    vmi.Namespace,
			GenerateName: virtv1.EvacuationGenerateNamePrefix,
			Labels:       map[string]string{virtv1.MigrationVMINameLabel: vmi.Name},
			Annotations:  map[string]string{virtv1.EvacuationMigrationAnnotation: vmi.Status.EvacuationNodeName},
		},
		Spec: virtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmi.Name},
	}
	created, err := c.virt.VirtualizationV1().VirtualMachineInstanceMigrations(vmi.Namespace).Create(ctx, m, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("create the evacuation migration of VMI %s: %w", key, err)
	}
	c.evacuationsAt.add(vmi.UID, created.Namespace, created.Name)
	klog.FromContext(ctx).Info("Created an evacuation migration", "migration", klog.KObj(created), "node", vmi.Status.EvacuationNodeName)
	c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonEvacuationCreated, "Created migration %s to evacuate node %s", created.Name, vmi.Status.EvacuationNodeName)
	return 0, nil
}

// wantsEvacuation: a drain marked the VMI on the node it still runs on, and
// its strategy says to migrate (External VMIs are someone else's).
func (c *Controller) wantsEvacuation(vmi *virtv1.VirtualMachineInstance) bool {
	if vmi.Status.EvacuationNodeName == "" || vmi.Status.EvacuationNodeName != vmi.Status.NodeName || vmi.Status.Phase != virtv1.Running {
		return false
	}
	s := vmi.Spec.EvictionStrategy
	return s != nil && (*s == virtv1.EvictionStrategyLiveMigrate || *s == virtv1.EvictionStrategyLiveMigrateIfPossible)
}

// hasUnfinished says whether the VMI has a migration that has not ended.
func (c *Controller) hasUnfinished(vmi *virtv1.VirtualMachineInstance) bool {
	objs, _ := c.vmimIndexer.ByIndex(vmiIndex, vmi.Namespace+"/"+vmi.Name)
	for _, obj := range objs {
		if m := obj.(*virtv1.VirtualMachineInstanceMigration); !m.Status.Phase.Final() {
			return true
		}
	}
	return false
}

// liveMigratable computes the VMI's LiveMigratable condition from its spec
// and its claims in the cache.
func (c *Controller) liveMigratable(vmi *virtv1.VirtualMachineInstance) (corev1.ConditionStatus, string, string) {
	claims := map[string]*corev1.PersistentVolumeClaim{}
	for _, name := range claimNames(vmi) {
		if claim, err := c.pvcLister.PersistentVolumeClaims(vmi.Namespace).Get(name); err == nil {
			claims[name] = claim
		}
	}
	return launcherpod.LiveMigratable(vmi, claims)
}

// notMigratable says why the VMI cannot migrate now, or "".
func (c *Controller) notMigratable(vmi *virtv1.VirtualMachineInstance) string {
	if status, reason, msg := c.liveMigratable(vmi); status != corev1.ConditionTrue {
		return fmt.Sprintf("%s: %s", reason, msg)
	}
	return ""
}

// claimNames are the claims the VMI's volumes use.
func claimNames(vmi *virtv1.VirtualMachineInstance) []string {
	var names []string
	for _, vol := range vmi.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			names = append(names, vol.PersistentVolumeClaim.ClaimName)
		case vol.DataVolume != nil:
			names = append(names, vol.DataVolume.Name)
		case vol.Ephemeral != nil && vol.Ephemeral.PersistentVolumeClaim != nil:
			names = append(names, vol.Ephemeral.PersistentVolumeClaim.ClaimName)
		}
	}
	return names
}

func isEvacuation(m *virtv1.VirtualMachineInstanceMigration) bool {
	_, ok := m.Annotations[virtv1.EvacuationMigrationAnnotation]
	return ok
}

// admit says whether the limits let the pending m start now, and if so
// reserves its place until the informer shows it past Pending; release
// gives the place back when m did not start after all (an error before or
// in the write of its next phase).
func (c *Controller) admit(m *virtv1.VirtualMachineInstanceMigration) (ok bool, release func()) {
	r := c.reserved
	r.mu.Lock()
	defer r.mu.Unlock()
	key := m.Namespace + "/" + m.Name
	release = func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.keys, key)
	}
	var pending, started []candidate
	seen := map[string]bool{}
	for _, obj := range c.vmimIndexer.List() {
		o := obj.(*virtv1.VirtualMachineInstanceMigration)
		okey := o.Namespace + "/" + o.Name
		seen[okey] = true
		if o.Status.Phase != virtv1.MigrationPending {
			// Past Pending (or never there): the cache tells from now on.
			delete(r.keys, okey)
		}
		if o.Status.Phase.Final() || o.Status.Phase == virtv1.MigrationPhaseUnset {
			continue
		}
		cand := candidate{key: okey, evacuation: isEvacuation(o), created: o.CreationTimestamp.Time}
		if ms := o.Status.MigrationState; ms != nil && ms.SourceNode != "" {
			cand.sourceNode = ms.SourceNode
		} else if vmi, err := c.vmiLister.VirtualMachineInstances(o.Namespace).Get(o.Spec.VMIName); err == nil {
			cand.sourceNode = vmi.Status.NodeName
		}
		if o.Status.Phase == virtv1.MigrationPending && !r.keys[okey] {
			if o.DeletionTimestamp == nil {
				pending = append(pending, cand)
			}
			continue
		}
		started = append(started, cand)
	}
	for k := range r.keys {
		if !seen[k] {
			delete(r.keys, k)
		}
	}
	if r.keys[key] {
		// Admitted by an earlier sync whose write has not shown yet.
		return true, release
	}
	if !admit(pending, started, limits{perCluster: c.cfg.ParallelPerCluster, outboundPerNode: c.cfg.ParallelOutboundPerNode})[key] {
		return false, nil
	}
	r.keys[key] = true
	return true, release
}

// evacuationFailures are when the VMI's evacuation migrations failed since
// its last successful migration.
func (c *Controller) evacuationFailures(m *virtv1.VirtualMachineInstanceMigration) []time.Time {
	objs, _ := c.vmimIndexer.ByIndex(vmiIndex, m.Namespace+"/"+m.Spec.VMIName)
	var lastSuccess time.Time
	var failures []time.Time
	for _, obj := range objs {
		o := obj.(*virtv1.VirtualMachineInstanceMigration)
		at := phaseTime(o, o.Status.Phase)
		switch {
		case o.Status.Phase == virtv1.MigrationSucceeded && at.After(lastSuccess):
			lastSuccess = at
		case o.Status.Phase == virtv1.MigrationFailed && isEvacuation(o):
			failures = append(failures, at)
		}
	}
	var out []time.Time
	for _, f := range failures {
		if f.After(lastSuccess) {
			out = append(out, f)
		}
	}
	return out
}

// phaseTime is when m entered phase, or its creation.
func phaseTime(m *virtv1.VirtualMachineInstanceMigration, phase virtv1.VirtualMachineInstanceMigrationPhase) time.Time {
	for _, t := range m.Status.PhaseTransitionTimestamps {
		if t.Phase == phase {
			return t.PhaseTransitionTimestamp.Time
		}
	}
	return m.CreationTimestamp.Time
}

// otherSchedulableNode says whether a node other than source could take a
// target pod: virt-handler runs there, it is Ready and not cordoned.
func (c *Controller) otherSchedulableNode(source string) bool {
	nodes, err := c.nodeLister.List(labels.SelectorFromSet(labels.Set{virtv1.SchedulableNodeLabel: "true"}))
	if err != nil {
		return false
	}
	for _, n := range nodes {
		if n.Name == source || n.Spec.Unschedulable {
			continue
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// createdCache remembers the evacuation migrations this controller created
// until its cache shows them: generateName gives no AlreadyExists to stop a
// second create from a stale cache.
type createdCache struct {
	mu      sync.Mutex
	clock   clock.PassiveClock
	entries map[types.UID]createdEntry
}

type createdEntry struct {
	namespace, name string
	at              time.Time
}

func newCreatedCache(c clock.PassiveClock) *createdCache {
	return &createdCache{clock: c, entries: map[types.UID]createdEntry{}}
}

func (cc *createdCache) add(vmi types.UID, namespace, name string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.entries[vmi] = createdEntry{namespace: namespace, name: name, at: cc.clock.Now()}
}

// pending is how long to wait for the VMI's created migration to show in
// the cache; 0 once it does, or once waiting longer makes no sense.
func (cc *createdCache) pending(vmi types.UID, lister virtlisters.VirtualMachineInstanceMigrationLister) time.Duration {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	e, ok := cc.entries[vmi]
	if !ok {
		return 0
	}
	if _, err := lister.VirtualMachineInstanceMigrations(e.namespace).Get(e.name); err == nil {
		delete(cc.entries, vmi)
		return 0
	}
	left := e.at.Add(evacuationCreatedCacheTTL).Sub(cc.clock.Now())
	if left <= 0 {
		delete(cc.entries, vmi)
		return 0
	}
	return left
}
