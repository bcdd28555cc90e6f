package virtualmachineinstance

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// withClaim gives the VMI a disk "data" on the claim of that name.
func withClaim(claim string) func(*virtv1.VirtualMachineInstance) {
	return func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.Disks = append(v.Spec.Domain.Devices.Disks, virtv1.Disk{
			Name: "data", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio}}})
		v.Spec.Volumes = append(v.Spec.Volumes, virtv1.Volume{Name: "data", VolumeSource: virtv1.VolumeSource{
			PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
}

func newClaim(name string, mutate ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: ptr.To("immediate"),
			VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

// Mutations of test claims.
func bound(c *corev1.PersistentVolumeClaim) {
	c.Spec.VolumeName = "pv-" + c.Name
	c.Status.Phase = corev1.ClaimBound
	c.Status.AccessModes = c.Spec.AccessModes
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
}

func block(c *corev1.PersistentVolumeClaim) {
	c.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
}

func ofClass(name string) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To(name) }
}

// addClaim puts a claim in the API and, when cached, in the controller's
// cache.
func (f *fixture) addClaim(c *corev1.PersistentVolumeClaim, cached bool) {
	f.t.Helper()
	_, err := f.kube.CoreV1().PersistentVolumeClaims(c.Namespace).Create(f.t.Context(), c, metav1.CreateOptions{})
	f.must(err)
	if cached {
		f.must(f.claimStore.Add(c))
	}
}

// updateClaim changes a claim in the API and the cache, as its informer
// would deliver it.
func (f *fixture) updateClaim(c *corev1.PersistentVolumeClaim) {
	f.t.Helper()
	_, err := f.kube.CoreV1().PersistentVolumeClaims(c.Namespace).Update(f.t.Context(), c, metav1.UpdateOptions{})
	f.must(err)
	f.must(f.claimStore.Update(c))
	f.ctrl.enqueueClaimUsers(c)
}

func (f *fixture) addClasses() {
	f.t.Helper()
	for name, mode := range map[string]storagev1.VolumeBindingMode{
		"immediate": storagev1.VolumeBindingImmediate, "wffc": storagev1.VolumeBindingWaitForFirstConsumer,
	} {
		f.must(f.classStore.Add(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name},
			Provisioner: "example.com/none", VolumeBindingMode: ptr.To(mode)}))
	}
}

func TestMissingClaimFailsTheVMI(t *testing.T) {
	vmi := newVMI(withClaim("nope"))
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	f.addClasses()
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	got := f.vmi(vmi)
	if got.Status.Phase != virtv1.Failed || got.Status.Reason != virtv1.ReasonPVCNotFound {
		t.Fatalf("phase %s reason %q, want Failed %s", got.Status.Phase, got.Status.Reason, virtv1.ReasonPVCNotFound)
	}
	ready := got.Status.Condition(virtv1.VirtualMachineInstanceReady)
	if ready == nil || !strings.Contains(ready.Message, `"nope"`) || !strings.Contains(ready.Message, `"data"`) {
		t.Errorf("Ready condition %+v does not name the claim and its volume", ready)
	}
	if n := len(f.pods()); n != 0 {
		t.Errorf("%d launcher pods for a VMI whose claim does not exist, want 0", n)
	}
	f.expectEvent("Warning PVCNotFound PersistentVolumeClaim \"nope\"")
}

// A claim created just before the VMI may not be in the cache yet: failing
// cannot be undone, so the API is asked first.
func TestClaimOnlyInTheAPIIsNotMissing(t *testing.T) {
	vmi := newVMI(withClaim("data"))
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	f.addClasses()
	f.addClaim(newClaim("data", bound), false)
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	got := f.vmi(vmi)
	if got.Status.Phase != virtv1.Scheduling {
		t.Fatalf("phase %s reason %q, want Scheduling", got.Status.Phase, got.Status.Reason)
	}
	if n := len(f.pods()); n != 1 {
		t.Errorf("%d launcher pods, want 1", n)
	}
}

func TestBoundClaim(t *testing.T) {
	for _, tt := range []struct {
		name        string
		claim       *corev1.PersistentVolumeClaim
		wantMode    corev1.PersistentVolumeMode
		wantOverhed *virtv1.Percent
	}{
		{"Filesystem", newClaim("data", bound), corev1.PersistentVolumeFilesystem, ptr.To(virtv1.DefaultFilesystemOverhead)},
		{"Block", newClaim("data", bound, block), corev1.PersistentVolumeBlock, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newVMI(withClaim("data"))
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
			f.addClasses()
			f.addClaim(tt.claim, true)
			if err := f.sync(vmi); err != nil {
				t.Fatal(err)
			}
			got := f.vmi(vmi)
			want := []virtv1.VolumeStatus{{Name: "data", PersistentVolumeClaimInfo: &virtv1.PersistentVolumeClaimInfo{
				ClaimName:          "data",
				AccessModes:        []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				VolumeMode:         ptr.To(tt.wantMode),
				Capacity:           corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")},
				Requests:           corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				FilesystemOverhead: tt.wantOverhed,
			}}}
			if diff := cmp.Diff(want, got.Status.VolumeStatus); diff != "" {
				t.Errorf("volumeStatus (-want +got):\n%s", diff)
			}
			if got.Status.Phase != virtv1.Scheduling {
				t.Errorf("phase %s, want Scheduling", got.Status.Phase)
			}
			pods := f.pods()
			if len(pods) != 1 {
				t.Fatalf("%d launcher pods, want 1", len(pods))
			}
			compute := pods[0].Spec.Containers[0]
			var mounts []string
			for _, m := range compute.VolumeMounts {
				if m.Name == "pvc-0" {
					mounts = append(mounts, m.MountPath)
				}
			}
			var devices []corev1.VolumeDevice
			for _, d := range compute.VolumeDevices {
				if d.Name == "pvc-0" {
					devices = append(devices, d)
				}
			}
			switch tt.wantMode {
			case corev1.PersistentVolumeBlock:
				wantDevices := []corev1.VolumeDevice{{Name: "pvc-0", DevicePath: layout.PVCDevice(layout.PVCDeviceRoot, "data")}}
				if diff := cmp.Diff(wantDevices, devices); diff != "" || len(mounts) != 0 {
					t.Errorf("a Block claim is mounted at %q; its devices (-want +got):\n%s", mounts, diff)
				}
			default:
				if want := []string{layout.PVCDirRoot + "/data"}; !cmp.Equal(want, mounts) || len(devices) != 0 {
					t.Errorf("a Filesystem claim is mounted at %q (want %q) and is the device(s) %v", mounts, want, devices)
				}
			}
			for _, e := range f.events() {
				if strings.HasPrefix(e, "Warning") {
					t.Errorf("event %q for a bound claim", e)
				}
			}
		})
	}
}

// TestPendingClaim follows a VMI whose claim waits for a volume: the pod is
// created (nothing else could ever bind a WaitForFirstConsumer claim), the
// VMI says why it waits, and says so no more once the claim is bound.
func TestPendingClaim(t *testing.T) {
	vmi := newVMI(withClaim("data"))
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	f.addClasses()
	claim := newClaim("data")
	f.addClaim(claim, true)
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	got := f.vmi(vmi)
	if got.Status.Phase != virtv1.Scheduling || len(f.pods()) != 1 {
		t.Fatalf("phase %s with %d pods, want Scheduling with its pod", got.Status.Phase, len(f.pods()))
	}
	if len(got.Status.VolumeStatus) != 1 {
		t.Fatalf("volumeStatus %+v, want one entry", got.Status.VolumeStatus)
	}
	vs := got.Status.VolumeStatus[0]
	if vs.Reason != virtv1.ReasonPVCNotBound || !strings.Contains(vs.Message, `"data"`) {
		t.Errorf("volumeStatus reason %q message %q, want %s naming the claim", vs.Reason, vs.Message, virtv1.ReasonPVCNotBound)
	}
	if vs.PersistentVolumeClaimInfo == nil || vs.PersistentVolumeClaimInfo.Capacity != nil {
		t.Errorf("persistentVolumeClaimInfo %+v, want one without capacity", vs.PersistentVolumeClaimInfo)
	}
	f.expectEvent("Warning PVCNotBound Volume data: PersistentVolumeClaim \"data\" is Pending")

	// Nothing changed: nothing is written, nothing is said again.
	f.refresh()
	writes := f.statusWrites()
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	if n := f.statusWrites() - writes; n != 0 {
		t.Errorf("%d status writes while the claim stays Pending, want 0", n)
	}
	if e := f.events(); len(e) != 0 {
		t.Errorf("events while the claim stays Pending: %q", e)
	}

	// The claim's change requeues the VMI.
	bound(claim)
	claim.ResourceVersion = "2"
	f.updateClaim(claim)
	if n := f.ctrl.queue.Len(); n != 1 {
		t.Errorf("queue holds %d keys after the claim changed, want the VMI's", n)
	}
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	got = f.vmi(vmi)
	vs = got.Status.VolumeStatus[0]
	if vs.Reason != "" || vs.Message != "" {
		t.Errorf("a bound claim still has reason %q message %q", vs.Reason, vs.Message)
	}
	if c := vs.PersistentVolumeClaimInfo.Capacity.Storage(); c.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("capacity %s, want the bound volume's 2Gi", c)
	}
	if n := f.statusWrites() - writes; n != 1 {
		t.Errorf("%d status writes when the claim bound, want 1", n)
	}
	f.expectEvent("Normal PVCBound Volume data")
}

// A WaitForFirstConsumer claim waits for the launcher pod itself: that is
// no reason to report, only a message.
func TestWaitForFirstConsumerClaim(t *testing.T) {
	vmi := newVMI(withClaim("data"))
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	f.addClasses()
	f.addClaim(newClaim("data", ofClass("wffc")), true)
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	got := f.vmi(vmi)
	if len(f.pods()) != 1 {
		t.Fatalf("%d pods, want 1", len(f.pods()))
	}
	vs := got.Status.VolumeStatus[0]
	if vs.Reason != "" || !strings.Contains(vs.Message, "WaitForFirstConsumer") {
		t.Errorf("reason %q message %q, want no reason and a message on WaitForFirstConsumer", vs.Reason, vs.Message)
	}
	for _, e := range f.events() {
		if strings.HasPrefix(e, "Warning") {
			t.Errorf("event %q for a claim waiting for its first consumer", e)
		}
	}
}

// The hand-off reads the claims from the API when the cache does not have
// them bound: the launcher sizes disk images from the bound capacity, and
// a ready launcher pod means the claim is bound.
func TestHandOffReadsLaggingClaims(t *testing.T) {
	vmi := newVMI(withClaim("data"), scheduling("pod-uid"))
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{newPod(vmi, boundTo("node1"), running(true))})
	f.addClasses()
	f.addClaim(newClaim("data", ofClass("wffc")), true)
	bound := newClaim("data", ofClass("wffc"), bound)
	bound.ResourceVersion = "2"
	_, err := f.kube.CoreV1().PersistentVolumeClaims("ns").Update(t.Context(), bound, metav1.UpdateOptions{})
	f.must(err)
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	got := f.vmi(vmi)
	if got.Status.Phase != virtv1.Scheduled {
		t.Fatalf("phase %s, want Scheduled", got.Status.Phase)
	}
	info := got.Status.VolumeStatus[0].PersistentVolumeClaimInfo
	if info == nil || info.Capacity.Storage().IsZero() {
		t.Errorf("handed off with persistentVolumeClaimInfo %+v, want the bound capacity", info)
	}
}

func TestIndexByClaim(t *testing.T) {
	vmi := newVMI(withClaim("a"), func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Volumes = append(v.Spec.Volumes,
			virtv1.Volume{Name: "b", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "b"}}},
			virtv1.Volume{Name: "e", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Mi")}}})
	})
	keys, err := indexByClaim(vmi)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ns/a", "ns/b"}; !cmp.Equal(want, keys) {
		t.Errorf("keys %q, want %q", keys, want)
	}
}
