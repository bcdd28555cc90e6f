package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/testserver"
	virtv1apply "kubevirt.dev/virt/generated/applyconfiguration/virtualization/v1"
	"kubevirt.dev/virt/generated/informers/externalversions"
)

// TestNodeInformerSeesOnlyItsNode is what each node daemon relies on: an
// informer with the status.nodeName field selector lists and watches only
// the VMIs handed to its node.
func TestNodeInformerSeesOnlyItsNode(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)
	handOff := func(name, node string) {
		t.Helper()
		vmi, err := vmis.Create(ctx, tinyVMI(name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vmi.Status.SetPhase(virtv1.Scheduled, "", metav1.Now())
		vmi.Status.NodeName = node
		if _, err := vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	handOff("before-a", "node-a") // listed at start
	handOff("before-b", "node-b")

	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0,
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "status.nodeName=node-a" }))
	informer := factory.Virtualization().V1().VirtualMachineInstances()
	lister := informer.Lister()
	informer.Informer() // register before Start
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown() // waits for the informers, so stop them first
	defer close(stop)
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}

	handOff("after-a", "node-a") // arrives by watch
	handOff("after-b", "node-b")
	if _, err := vmis.Create(ctx, tinyVMI("pending"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		items, _ := lister.List(labels.Everything())
		return len(items) == 2, nil
	})
	items, _ := lister.List(labels.Everything())
	var names []string
	for _, v := range items {
		names = append(names, v.Name)
		if v.Status.NodeName != "node-a" {
			t.Errorf("node-a's informer holds %s of node %q", v.Name, v.Status.NodeName)
		}
	}
	if err != nil || len(items) != 2 {
		t.Errorf("node-a's informer holds %v, want [before-a after-a]", names)
	}
}

// TestServerSideApply: two field managers own different fields of the same
// VMI; a third applying a field owned by another gets a conflict; status is
// applied through /status.
func TestServerSideApply(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)

	tiny := tinyVMI("ssa")
	apply := virtv1apply.VirtualMachineInstance("ssa", ns).
		WithLabels(map[string]string{"owner": "alice"}).
		WithSpec(virtv1apply.VirtualMachineInstanceSpec().
			WithDomain(virtv1apply.DomainSpec().
				WithResources(virtv1apply.ResourceRequirements().WithRequests(tiny.Spec.Domain.Resources.Requests)).
				WithFirmware(virtv1apply.Firmware().WithKernelBoot(virtv1apply.KernelBoot().
					WithContainer(virtv1apply.KernelBootContainer().WithImage("localhost/virt-guest:dev").WithKernelPath("/boot/vmlinuz"))))))
	if _, err := vmis.Apply(ctx, apply, metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
		t.Fatal(err)
	}
	// bob adds his own label; alice's stays.
	bob := virtv1apply.VirtualMachineInstance("ssa", ns).WithLabels(map[string]string{"reviewed-by": "bob"})
	vmi, err := vmis.Apply(ctx, bob, metav1.ApplyOptions{FieldManager: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Labels["owner"] != "alice" || vmi.Labels["reviewed-by"] != "bob" {
		t.Errorf("labels = %v, want both managers' labels", vmi.Labels)
	}
	managers := map[string]bool{}
	for _, f := range vmi.ManagedFields {
		managers[f.Manager] = true
	}
	if !managers["alice"] || !managers["bob"] {
		t.Errorf("managedFields managers = %v, want alice and bob", managers)
	}
	// carol takes alice's label without force: conflict.
	carol := virtv1apply.VirtualMachineInstance("ssa", ns).WithLabels(map[string]string{"owner": "carol"})
	if _, err := vmis.Apply(ctx, carol, metav1.ApplyOptions{FieldManager: "carol"}); !apierrors.IsConflict(err) {
		t.Errorf("apply of a field owned by another manager: err = %v, want 409", err)
	}
	// The controller applies status through /status: a change of phase
	// carries its transition, appended to the (atomic) history.
	var history []*virtv1apply.VirtualMachineInstancePhaseTransitionTimestampApplyConfiguration
	vmi.Status.SetPhase(virtv1.Scheduling, "", metav1.Now())
	for _, ts := range vmi.Status.PhaseTransitionTimestamps {
		history = append(history, virtv1apply.VirtualMachineInstancePhaseTransitionTimestamp().
			WithPhase(ts.Phase).WithPhaseTransitionTimestamp(ts.PhaseTransitionTimestamp))
	}
	status := virtv1apply.VirtualMachineInstance("ssa", ns).WithStatus(virtv1apply.VirtualMachineInstanceStatus().
		WithPhase(virtv1.Scheduling).WithPhaseTransitionTimestamps(history...))
	vmi, err = vmis.ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: "virt-controller", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Status.Phase != virtv1.Scheduling {
		t.Errorf("phase after ApplyStatus = %s, want Scheduling", vmi.Status.Phase)
	}
}

// TestProtobufClient: the platform's components speak protobuf to the
// server, for requests, responses and watches.
func TestProtobufClient(t *testing.T) {
	s, _ := start(t)
	ctx := t.Context()
	var mu sync.Mutex
	seen := map[string]int{}
	config := rest.CopyConfig(s.ClientConfig)
	config.ContentType = "application/vnd.kubernetes.protobuf"
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil {
				mu.Lock()
				seen[strings.Split(resp.Header.Get("Content-Type"), ";")[0]]++
				mu.Unlock()
			}
			return resp, err
		})
	})
	client := newClient(t, config)
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)

	w, err := vmis.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := vmis.Create(ctx, fullVMI("pb"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := vmis.Get(ctx, "pb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Volumes[1].EmptyDisk.Capacity.String() != "1Gi" || got.Spec.Domain.Devices.Interfaces[0].Ports[0].Port != 22 || got.UID != created.UID {
		t.Errorf("object changed on a protobuf round trip: %+v", got.Spec)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Object.(*virtv1.VirtualMachineInstance).Name != "pb" {
			t.Errorf("watch event for %v", ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["application/vnd.kubernetes.protobuf"] < 3 || len(seen) != 1 {
		t.Errorf("response content types = %v, want only protobuf", seen)
	}
}

// TestRestartKeepsEveryObject: stopping the server and starting it on the
// same data directory loses nothing that was acknowledged.
func TestRestartKeepsEveryObject(t *testing.T) {
	s, client := start(t)
	ctx := t.Context()
	const n = 25
	for i := range n {
		if _, err := client.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, tinyVMI(fmt.Sprintf("vmi-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.VirtualizationV1().VirtualMachines(ns).Create(ctx, vmFor(fmt.Sprintf("vm-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Open watches, like every component's, must not hold the shutdown
	// beyond a pod's grace period.
	w, err := client.VirtualizationV1().VirtualMachineInstances(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	stopped := make(chan struct{})
	go func() { s.Stop(t); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop within 20s with a watch open; the kubelet would kill it")
	}

	again := newClient(t, testserver.Start(t, s.DataDir).ClientConfig)
	vmis, err := again.VirtualizationV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vms, err := again.VirtualizationV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(vmis.Items) != n || len(vms.Items) != n {
		t.Errorf("after restart: %d VMIs and %d VMs, want %d of each", len(vmis.Items), len(vms.Items), n)
	}
}

// TestTableOutput: kubectl asks for a Table and gets the platform's columns.
func TestTableOutput(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	if _, err := client.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, tinyVMI("tbl"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	table := &metav1.Table{}
	err := client.VirtualizationV1().RESTClient().Get().Namespace(ns).Resource("virtualmachineinstances").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(table)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if strings.Join(cols, " ") != "Name Age Phase IP NodeName Ready" || len(table.Rows) != 1 {
		t.Errorf("columns %v, %d rows", cols, len(table.Rows))
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
