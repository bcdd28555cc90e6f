package virtualmachine

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	"kubevirt.dev/virt/internal/instancetype"
)

// Event and condition reasons of instancetypes and preferences.
const (
	// ReasonRevisionCaptured: the VM now runs with a copy of its
	// instancetype or preference, unaffected by later edits of it.
	ReasonRevisionCaptured = "RevisionCaptured"
	// ReasonInstancetypeError: the VM's references cannot be resolved or
	// conflict with its template; no instance is created until they can.
	ReasonInstancetypeError = "InstancetypeError"
)

// Instancetypes is where the VM controller reads the instancetypes and
// preferences VMs reference (informers of the four kinds) and keeps the
// revisions it captures of them (VirtualMachineInstancetypeRevisions in
// the VM's namespace, in the platform's store, where KubeVirt keeps
// ControllerRevisions in the kube-apiserver).
type Instancetypes struct {
	virt   virtclient.Interface
	source instancetype.Source
	synced []cache.InformerSynced
	// informers enqueue the VMs that reference an object when it appears
	// or changes: a VM waiting for a missing one goes on at once.
	informers []cache.SharedIndexInformer
}

// NewInstancetypes reads the four kinds from informers and revisions
// through virt.
func NewInstancetypes(virt virtclient.Interface, informers virtinformers.Interface) *Instancetypes {
	its, cits := informers.VirtualMachineInstancetypes(), informers.VirtualMachineClusterInstancetypes()
	prefs, cprefs := informers.VirtualMachinePreferences(), informers.VirtualMachineClusterPreferences()
	i := &Instancetypes{virt: virt}
	for _, inf := range []cache.SharedIndexInformer{its.Informer(), cits.Informer(), prefs.Informer(), cprefs.Informer()} {
		i.synced = append(i.synced, inf.HasSynced)
		i.informers = append(i.informers, inf)
	}
	i.source = instancetype.Source{
		Instancetype: func(_ context.Context, ns, name string) (*virtv1.VirtualMachineInstancetype, error) {
			return its.Lister().VirtualMachineInstancetypes(ns).Get(name)
		},
		ClusterInstancetype: func(_ context.Context, name string) (*virtv1.VirtualMachineClusterInstancetype, error) {
			return cits.Lister().Get(name)
		},
		Preference: func(_ context.Context, ns, name string) (*virtv1.VirtualMachinePreference, error) {
			return prefs.Lister().VirtualMachinePreferences(ns).Get(name)
		},
		ClusterPreference: func(_ context.Context, name string) (*virtv1.VirtualMachineClusterPreference, error) {
			return cprefs.Lister().Get(name)
		},
		// Revisions are immutable and read only when an instance is
		// created; a GET, unlike a cache, also finds the revision this
		// controller created a moment ago.
		Revision: func(ctx context.Context, ns, name string) (*virtv1.VirtualMachineInstancetypeRevision, error) {
			return virt.VirtualizationV1().VirtualMachineInstancetypeRevisions(ns).Get(ctx, name, metav1.GetOptions{})
		},
	}
	return i
}

func hasReferences(vm *virtv1.VirtualMachine) bool {
	return vm.Spec.Instancetype != nil || vm.Spec.Preference != nil
}

// watchInstancetypes enqueues the VMs referencing an instancetype or
// preference when it is added or changed.
func (c *Controller) watchInstancetypes(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for _, inf := range c.sizes.informers {
		enqueue := func(obj any) {
			m, err := cache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				return
			}
			ns, name, _ := cache.SplitMetaNamespaceKey(m)
			c.enqueueReferencing(ns, name)
		}
		if _, err := inf.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj any) { enqueue(obj) },
		}, cache.HandlerOptions{Logger: &logger}); err != nil {
			return fmt.Errorf("watch instancetypes and preferences: %w", err)
		}
		c.synced = append(c.synced, inf.HasSynced)
	}
	return nil
}

// enqueueReferencing enqueues the VMs that reference an object called name
// (in ns, or cluster-wide when ns is empty). Instancetypes change rarely;
// scanning the VM cache then is cheaper than keeping an index.
func (c *Controller) enqueueReferencing(ns, name string) {
	vms, err := c.vmLister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, vm := range vms {
		if ns != "" && vm.Namespace != ns {
			continue
		}
		if (vm.Spec.Instancetype != nil && vm.Spec.Instancetype.Name == name) || (vm.Spec.Preference != nil && vm.Spec.Preference.Name == name) {
			c.enqueue(vm)
		}
	}
}

// captureRevisions pins vm to copies of the instancetype and preference it
// references and has no revision of yet: it stores each as a
// VirtualMachineInstancetypeRevision owned by the VM and records its name in the VM's
// spec (revisionName), so that later edits of the instancetype change no
// instance of this VM. It reports whether it updated the VM; the update
// brings the VM back to the queue.
func (c *Controller) captureRevisions(ctx context.Context, vm *virtv1.VirtualMachine) (bool, error) {
	it, pref := vm.Spec.Instancetype, vm.Spec.Preference
	needIT, needPref := it != nil && it.RevisionName == "", pref != nil && pref.RevisionName == ""
	if !needIT && !needPref {
		return false, nil
	}
	// The template must take the instancetype as it is now before the VM
	// is pinned to it: an instancetype edited between the VM's admission
	// and this capture could conflict with it.
	e, errs, err := c.sizes.source.Resolve(ctx, vm)
	if err != nil {
		return false, err
	}
	if len(errs) == 0 {
		_, errs = instancetype.ExpandVM(vm, e)
	}
	if len(errs) > 0 {
		return false, fmt.Errorf("VM %s/%s: %w", vm.Namespace, vm.Name, errs.ToAggregate())
	}

	next := vm.DeepCopy()
	if needIT {
		obj, err := c.liveObject(ctx, vm.Namespace, virtv1.NormalizeInstancetypeKind, it.Kind, it.Name)
		if err != nil {
			return false, err
		}
		if next.Spec.Instancetype.RevisionName, err = c.storeRevision(ctx, vm, obj); err != nil {
			return false, err
		}
	}
	if needPref {
		obj, err := c.liveObject(ctx, vm.Namespace, virtv1.NormalizePreferenceKind, pref.Kind, pref.Name)
		if err != nil {
			return false, err
		}
		if next.Spec.Preference.RevisionName, err = c.storeRevision(ctx, vm, obj); err != nil {
			return false, err
		}
	}
	if _, err := c.virt.VirtualizationV1().VirtualMachines(vm.Namespace).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return false, fmt.Errorf("record revisions in VM %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	c.recorder.Eventf(vm, corev1.EventTypeNormal, ReasonRevisionCaptured, "Pinned to %s", revisionNames(next))
	klog.FromContext(ctx).V(2).Info("Captured revisions", "instancetype", next.Spec.Instancetype, "preference", next.Spec.Preference)
	return true, nil
}

// liveObject reads the object a reference names, as it is now.
func (c *Controller) liveObject(ctx context.Context, ns string, normalize func(string) (string, bool), kind, name string) (runtime.Object, error) {
	k, _ := normalize(kind)
	switch k {
	case virtv1.InstancetypeKind:
		return c.sizes.source.Instancetype(ctx, ns, name)
	case virtv1.ClusterInstancetypeKind:
		return c.sizes.source.ClusterInstancetype(ctx, name)
	case virtv1.PreferenceKind:
		return c.sizes.source.Preference(ctx, ns, name)
	case virtv1.ClusterPreferenceKind:
		return c.sizes.source.ClusterPreference(ctx, name)
	}
	return nil, fmt.Errorf("%q is not an instancetype or preference kind", kind)
}

// storeRevision creates the revision of obj for vm, or finds the one an
// earlier attempt created (its name follows from the object's identity and
// generation), and returns its name.
func (c *Controller) storeRevision(ctx context.Context, vm *virtv1.VirtualMachine, obj runtime.Object) (string, error) {
	r, err := instancetype.NewRevision(vm, obj)
	if err != nil {
		return "", err
	}
	revisions := c.sizes.virt.VirtualizationV1().VirtualMachineInstancetypeRevisions(vm.Namespace)
	_, err = revisions.Create(ctx, r, metav1.CreateOptions{})
	if err == nil {
		return r.Name, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create revision %s/%s: %w", r.Namespace, r.Name, err)
	}
	have, err := revisions.Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read revision %s/%s: %w", r.Namespace, r.Name, err)
	}
	// Same name, other content: someone else's revision, or a recreated
	// object that kept name, UID and generation. Using it would pin the
	// VM to something it never saw.
	want, err := instancetype.ReadRevision(r)
	if err != nil {
		return "", err
	}
	got, err := instancetype.ReadRevision(have)
	if err != nil || !metav1.IsControlledBy(have, vm) ||
		!apiequality.Semantic.DeepEqual(want.Instancetype, got.Instancetype) || !apiequality.Semantic.DeepEqual(want.Preference, got.Preference) {
		return "", fmt.Errorf("revision %s/%s exists and does not hold this VM's copy of %s", r.Namespace, r.Name, want.Name)
	}
	return have.Name, nil
}

func revisionNames(vm *virtv1.VirtualMachine) string {
	var s string
	if it := vm.Spec.Instancetype; it != nil {
		s = "instancetype " + it.Name + " (revision " + it.RevisionName + ")"
	}
	if p := vm.Spec.Preference; p != nil {
		if s != "" {
			s += " and "
		}
		s += "preference " + p.Name + " (revision " + p.RevisionName + ")"
	}
	return s
}

// instanceOf is the VMI vm runs now: for a VM with references its template
// expanded with the revisions it captured, annotated with what it was
// expanded with.
func (c *Controller) instanceOf(ctx context.Context, vm *virtv1.VirtualMachine) (*virtv1.VirtualMachineInstance, error) {
	if !hasReferences(vm) {
		return NewInstance(vm)
	}
	e, errs, err := c.sizes.source.Resolve(ctx, vm)
	if err != nil {
		return nil, err
	}
	var expanded *virtv1.VirtualMachine
	if len(errs) == 0 {
		expanded, errs = instancetype.ExpandVM(vm, e)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("expand VM %s/%s: %w", vm.Namespace, vm.Name, errs.ToAggregate())
	}
	vmi, err := NewInstance(expanded)
	if err != nil {
		return nil, err
	}
	annotations := maps.Clone(vmi.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if it := vm.Spec.Instancetype; it != nil {
		key := virtv1.ClusterInstancetypeAnnotation
		if e.InstancetypeKind == virtv1.InstancetypeKind {
			key = virtv1.InstancetypeAnnotation
		}
		annotations[key] = it.Name
	}
	if p := vm.Spec.Preference; p != nil {
		key := virtv1.ClusterPreferenceAnnotation
		if e.PreferenceKind == virtv1.PreferenceKind {
			key = virtv1.PreferenceAnnotation
		}
		annotations[key] = p.Name
	}
	vmi.Annotations = annotations
	return vmi, nil
}

// setInstancetypeRefs records in status which instancetype and preference,
// and which revisions of them, the VM's instances are created with.
func setInstancetypeRefs(vm *virtv1.VirtualMachine, status *virtv1.VirtualMachineStatus) {
	status.InstancetypeRef, status.PreferenceRef = nil, nil
	if it := vm.Spec.Instancetype; it != nil {
		kind, _ := virtv1.NormalizeInstancetypeKind(it.Kind)
		status.InstancetypeRef = statusRef(it.Name, kind, it.RevisionName)
	}
	if p := vm.Spec.Preference; p != nil {
		kind, _ := virtv1.NormalizePreferenceKind(p.Kind)
		status.PreferenceRef = statusRef(p.Name, kind, p.RevisionName)
	}
}

func statusRef(name, kind, revision string) *virtv1.InstancetypeStatusRef {
	ref := &virtv1.InstancetypeStatusRef{Name: name, Kind: kind}
	if revision != "" {
		ref.ControllerRevisionRef = &virtv1.ControllerRevisionRef{Name: revision}
	}
	return ref
}
