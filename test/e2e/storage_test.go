package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/virtctl/stream"
)

// The guest's disks in these tests: vmi-tiny boots from a kernel image, so
// the one disk on a claim is the guest's first virtio disk.
const (
	claimDiskName = "data"
	guestDisk     = "vda"
	// sectorSize is the unit of /sys/block/<disk>/size.
	sectorSize = 512
)

// TestPVCMissingClaim: a VMI whose volume names a claim that does not exist
// fails before any launcher pod is made, with a reason naming the claim.
func TestPVCMissingClaim(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmi := tinyWithClaim(t, "vmi-missing-claim", "no-such-claim")
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cluster.WaitVMI(ctx, ns, vmi.Name, time.Minute, "Failed", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.Status.Phase.IsFinal(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != virtv1.Failed || got.Status.Reason != virtv1.ReasonPVCNotFound {
		t.Errorf("phase %s reason %q, want Failed with %s", got.Status.Phase, got.Status.Reason, virtv1.ReasonPVCNotFound)
	}
	if c := got.Status.Condition(virtv1.VirtualMachineInstanceReady); c == nil || !strings.Contains(c.Message, `"no-such-claim"`) {
		t.Errorf("Ready condition %+v does not name the claim", c)
	}
	if pods, err := cluster.LauncherPods(ctx, got); err != nil || len(pods) != 0 {
		t.Errorf("%d launcher pods (err %v) for a VMI whose claim does not exist, want none", len(pods), err)
	}
	if err := waitEvent(ctx, got, virtv1.ReasonPVCNotFound, `"no-such-claim"`); err != nil {
		t.Error(err)
	}
}

// TestPVCPendingUntilBound: a VMI whose claim waits for a PersistentVolume
// says so in status.volumeStatus and an event, and starts once the test
// creates a volume the claim binds to; the launcher then makes the claim's
// disk image, sized from the bound capacity.
func TestPVCPendingUntilBound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	suffix := utilrand.String(5)
	// A directory the launcher's unprivileged user may write: a hostPath
	// volume gets no fsGroup. Made (and removed) outside the namespace's
	// life, so that it outlives the pod that uses it.
	dir, err := os.MkdirTemp("", "virt-e2e-pv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	class := manualStorageClass(t, "e2e-manual-"+suffix, storagev1.VolumeBindingImmediate)
	pvName := "e2e-pending-" + suffix
	deletePVAtCleanup(t, pvName)
	ns := cluster.Namespace(t)

	createClaim(t, ns, claimDiskName, &class, corev1.PersistentVolumeFilesystem, "64Mi")
	vmi := tinyWithClaim(t, "vmi-pending-claim", claimDiskName)
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waiting, err := cluster.WaitVMI(ctx, ns, vmi.Name, time.Minute, "waiting for its claim", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		if v.Status.Phase.IsFinal() {
			return false, fmt.Errorf("ended %s (%s)", v.Status.Phase, v.Status.Reason)
		}
		vs := volumeStatus(v, claimDiskName)
		return vs != nil && vs.Reason == virtv1.ReasonPVCNotBound, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if vs := volumeStatus(waiting, claimDiskName); !strings.Contains(vs.Message, `"`+claimDiskName+`"`) {
		t.Errorf("volumeStatus message %q does not name the claim", vs.Message)
	}
	if waiting.Status.Phase == virtv1.Running {
		t.Errorf("the VMI runs while its claim is not bound")
	}
	if err := waitEvent(ctx, waiting, virtv1.ReasonPVCNotBound, `"`+claimDiskName+`"`); err != nil {
		t.Error(err)
	}

	// The volume the claim waited for.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claimDiskName},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)},
			},
		},
	}
	if _, err := cluster.Kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, err := cluster.WaitVMIRunning(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	vs := volumeStatus(running, claimDiskName)
	if vs == nil || vs.Reason != "" || vs.PersistentVolumeClaimInfo == nil {
		t.Fatalf("volumeStatus of a running VMI: %+v", vs)
	}
	if c := vs.PersistentVolumeClaimInfo.Capacity.Storage(); c.Cmp(resource.MustParse("64Mi")) != 0 {
		t.Errorf("recorded capacity %s, want the volume's 64Mi", c)
	}
	if err := waitEvent(ctx, running, "PVCBound", `"`+claimDiskName+`"`); err != nil {
		t.Error(err)
	}
	// 64 MiB less KubeVirt's 5.5 % file system overhead, aligned down: 60 MiB.
	st, err := os.Stat(filepath.Join(dir, "disk.img"))
	if err != nil {
		t.Fatalf("the launcher made no disk image on the claim: %v", err)
	}
	if st.Size() != 60<<20 {
		t.Errorf("disk image of %d bytes, want 60 MiB", st.Size())
	}
}

// TestPVCBlock: a Block claim on a static local volume backed by a loop
// device is the guest's disk, of the device's size.
func TestPVCBlock(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const size = 64 << 20
	suffix := utilrand.String(5)
	dev := loopDevice(t, size)
	class := manualStorageClass(t, "e2e-local-"+suffix, storagev1.VolumeBindingImmediate)
	pvName := "e2e-block-" + suffix
	deletePVAtCleanup(t, pvName)
	ns := cluster.Namespace(t)

	node, err := schedulableNode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(size, resource.BinarySI)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeBlock),
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claimDiskName},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dev}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
	if _, err := cluster.Kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createClaim(t, ns, claimDiskName, &class, corev1.PersistentVolumeBlock, "64Mi")
	vmi := tinyWithClaim(t, "vmi-block", claimDiskName)
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, err := cluster.WaitVMIRunning(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	if vs := volumeStatus(running, claimDiskName); vs == nil || vs.PersistentVolumeClaimInfo == nil ||
		ptr.Deref(vs.PersistentVolumeClaimInfo.VolumeMode, "") != corev1.PersistentVolumeBlock {
		t.Errorf("volumeStatus %+v, want the claim recorded in Block mode", vs)
	}
	pod, err := cluster.LauncherPod(ctx, running)
	if err != nil {
		t.Fatal(err)
	}
	if devices := pod.Spec.Containers[0].VolumeDevices; len(devices) != 1 {
		t.Errorf("launcher container's volumeDevices %+v, want the claim's device", devices)
	}
	if err := guestReady(ctx, t, running); err != nil {
		t.Fatal(err)
	}
	console := openConsole(t, ns, running.Name)
	want := fmt.Sprintf("SIZE=%d\r", size/sectorSize)
	if err := console.run(ctx, "echo SIZE=$(cat /sys/block/"+guestDisk+"/size)", want); err != nil {
		t.Fatalf("%v (does the test guest load virtio_blk? hack/build-guest.sh)", err)
	}
}

// TestPVCFilesystemPersists: a claim of the cluster's default StorageClass
// (local-path) holds a VM's disk image across a restart of the VM: what the
// guest wrote to the disk is there when it comes back.
func TestPVCFilesystemPersists(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	createClaim(t, ns, claimDiskName, nil, corev1.PersistentVolumeFilesystem, "128Mi")
	tiny := tinyWithClaim(t, "vm-pvc", claimDiskName)
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: tiny.Name},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(virtv1.RunStrategyAlways),
			Template:    &virtv1.VirtualMachineInstanceTemplateSpec{Spec: tiny.Spec},
		},
	}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := cluster.WaitVMIRunning(ctx, ns, vm.Name)
	if err != nil {
		t.Fatal(err)
	}
	claim, err := cluster.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claimDiskName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if class := ptr.Deref(claim.Spec.StorageClassName, ""); class != "local-path" || claim.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim of class %q is %s, want bound by the default class local-path", class, claim.Status.Phase)
	}
	if err := guestReady(ctx, t, first); err != nil {
		t.Fatal(err)
	}

	console := openConsole(t, ns, vm.Name)
	// 128 MiB less KubeVirt's 5.5 % file system overhead is 120.96 MiB:
	// 120 MiB once aligned down, in 512-byte sectors.
	if err := console.run(ctx, "echo SIZE=$(cat /sys/block/"+guestDisk+"/size)", fmt.Sprintf("SIZE=%d\r", 120<<20/sectorSize)); err != nil {
		t.Fatalf("%v (does the test guest load virtio_blk? hack/build-guest.sh)", err)
	}
	// printf assembles the marker, so the typed command never contains it
	// and only the disk's content can match.
	token := utilrand.String(8)
	marker := "VIRT-PVC-" + token
	if err := console.run(ctx, "printf 'VIRT-PVC-%s\\n' "+token+" > /dev/"+guestDisk+"; sync; echo WROTE-$((40+2))", "WROTE-42\r"); err != nil {
		t.Fatal(err)
	}
	console.close()

	if err := put(ctx, cluster.Virt, ns, "virtualmachines", vm.Name, "restart", &virtv1.RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	second, err := cluster.WaitVMI(ctx, ns, vm.Name, 3*time.Minute, "a new instance Running", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.UID != first.UID && v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := guestReady(ctx, t, second); err != nil {
		t.Fatal(err)
	}
	console = openConsole(t, ns, vm.Name)
	read := "echo \"GOT[$(head -c 32 /dev/" + guestDisk + " | tr -d '\\000' | tr '\\n' ' ')]\""
	if err := console.run(ctx, read, "GOT["+marker+" ]"); err != nil {
		t.Fatalf("the marker did not survive the restart: %v", err)
	}
	console.close()

	// Deleting the claim deletes its volume (reclaimPolicy Delete) and the
	// provisioner removes its directory on the node.
	pvName := claim.Spec.VolumeName
	pv, err := cluster.Kube.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Delete(ctx, vm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitVMIGone(ctx, ns, vm.Name, deleteTimeout); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claimDiskName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = framework.WaitFor(ctx, 2*time.Minute, "PersistentVolume "+pvName+" deleted", func(ctx context.Context) (bool, error) {
		_, err := cluster.Kube.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.HostPath != nil {
		if _, err := os.Stat(pv.Spec.HostPath.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the volume's directory %s is still on the node: %v", pv.Spec.HostPath.Path, err)
		}
	}
}

// tinyWithClaim is vmi-tiny named name, with a virtio disk on the claim.
func tinyWithClaim(t *testing.T, name, claim string) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name = name
	vmi.Labels = map[string]string{"app": name}
	vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, virtv1.Disk{
		Name: claimDiskName, DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio}}})
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, virtv1.Volume{Name: claimDiskName, VolumeSource: virtv1.VolumeSource{
		PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	return vmi
}

func createClaim(t *testing.T, ns, name string, class *string, mode corev1.PersistentVolumeMode, size string) {
	t.Helper()
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: class,
			VolumeMode:       ptr.To(mode),
		},
	}
	if _, err := cluster.Kube.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// manualStorageClass is a class nothing provisions for: its claims bind
// only to the volumes a test creates. Deleted when the test ends.
func manualStorageClass(t *testing.T, name string, mode storagev1.VolumeBindingMode) string {
	t.Helper()
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(mode),
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
	}
	if _, err := cluster.Kube.StorageV1().StorageClasses().Create(t.Context(), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := cluster.Kube.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete StorageClass %s: %v", name, err)
		}
	})
	return name
}

// deletePVAtCleanup deletes the (cluster-scoped) volume name when the test
// ends. Registered before the test's namespace, it runs after the namespace
// and its claims are gone.
func deletePVAtCleanup(t *testing.T, name string) {
	t.Cleanup(func() {
		ctx := context.Background()
		err := cluster.Kube.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Errorf("delete PersistentVolume %s: %v", name, err)
			return
		}
		err = framework.WaitFor(ctx, time.Minute, "PersistentVolume "+name+" deleted", func(ctx context.Context) (bool, error) {
			_, err := cluster.Kube.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Error(err)
		}
	})
}

// loopDevice attaches a sparse file of size bytes to a free loop device and
// returns the device's path; both go when the test ends (registered before
// the namespace, after the pod that used the device).
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	backing, err := os.CreateTemp("", "virt-e2e-block-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		backing.Close()
		os.Remove(backing.Name())
	})
	if err := backing.Truncate(size); err != nil {
		t.Fatal(err)
	}
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/loop-control (the test makes a loop device): %v", err)
	}
	defer ctl.Close()
	// Another process may take the free device between the two calls:
	// LOOP_SET_FD then fails with EBUSY and the next free one is tried.
	for attempt := 0; attempt < 10; attempt++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			t.Fatalf("LOOP_CTL_GET_FREE: %v", err)
		}
		path := fmt.Sprintf("/dev/loop%d", n)
		loop, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		err = unix.IoctlSetInt(int(loop.Fd()), unix.LOOP_SET_FD, int(backing.Fd()))
		if errors.Is(err, unix.EBUSY) {
			loop.Close()
			continue
		}
		if err != nil {
			loop.Close()
			t.Fatalf("LOOP_SET_FD %s: %v", path, err)
		}
		t.Cleanup(func() {
			defer loop.Close()
			// Still open elsewhere (a kubelet that has not let go yet), the
			// kernel detaches it once the last user closes it.
			if err := unix.IoctlSetInt(int(loop.Fd()), unix.LOOP_CLR_FD, 0); err != nil {
				t.Errorf("LOOP_CLR_FD %s: %v", path, err)
			}
		})
		return path
	}
	t.Fatal("no free loop device after 10 attempts")
	return ""
}

// schedulableNode is the node launcher pods run on.
func schedulableNode(ctx context.Context) (string, error) {
	nodes, err := cluster.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: virtv1.SchedulableNodeLabel + "=true"})
	if err != nil {
		return "", err
	}
	if len(nodes.Items) == 0 {
		return "", fmt.Errorf("no node is labelled %s=true", virtv1.SchedulableNodeLabel)
	}
	return nodes.Items[0].Labels[corev1.LabelHostname], nil
}

func volumeStatus(vmi *virtv1.VirtualMachineInstance, volume string) *virtv1.VolumeStatus {
	for i := range vmi.Status.VolumeStatus {
		if vmi.Status.VolumeStatus[i].Name == volume {
			return &vmi.Status.VolumeStatus[i]
		}
	}
	return nil
}

// waitEvent waits for an event of reason on vmi whose message contains text.
func waitEvent(ctx context.Context, vmi *virtv1.VirtualMachineInstance, reason, text string) error {
	return framework.WaitFor(ctx, 30*time.Second, fmt.Sprintf("event %s on VMI %s/%s mentioning %s", reason, vmi.Namespace, vmi.Name, text),
		func(ctx context.Context) (bool, error) {
			events, err := cluster.Kube.CoreV1().Events(vmi.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(vmi.UID)})
			if err != nil {
				return false, err
			}
			var seen []string
			for _, e := range events.Items {
				if e.Reason == reason && strings.Contains(e.Message, text) {
					return true, nil
				}
				seen = append(seen, e.Reason+": "+e.Message)
			}
			return false, fmt.Errorf("events so far: %q", seen)
		})
}

// guestConsole is a serial console session with the test guest's shell.
type guestConsole struct {
	conn io.WriteCloser
	out  *output
}

func openConsole(t *testing.T, ns, name string) *guestConsole {
	t.Helper()
	conn, err := stream.Dial(t.Context(), cluster.Config, ns, name, "console")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &guestConsole{conn: conn, out: readInto(conn)}
}

// run types cmd into the guest's shell and waits for want in its output.
func (c *guestConsole) run(ctx context.Context, cmd, want string) error {
	if _, err := io.WriteString(c.conn, cmd+"\r"); err != nil {
		return fmt.Errorf("type %q: %w", cmd, err)
	}
	return c.out.waitFor(ctx, want)
}

func (c *guestConsole) close() { c.conn.Close() }
