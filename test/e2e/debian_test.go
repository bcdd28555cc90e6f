package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/generated/clientset/versioned/scheme"
	"kubevirt.dev/virt/test/e2e/framework"
)

// debianBoot bounds a Debian guest's boot to its cloud-init runcmd under
// TCG on a loaded 2-core machine (about a minute when idle).
const debianBoot = 6 * time.Minute

// TestDebianGuest boots the example Debian VM as a user would, with their
// own cloud-init: the runcmd's marker on the serial console, the guest
// agent's report in the VMI, SSH with the user's key through the pod
// network; then a data disk on a PersistentVolumeClaim of the default
// StorageClass keeps what the guest wrote across a restart while the
// containerDisk root starts pristine again; and a stop is an ACPI shutdown
// the guest completes.
func TestDebianGuest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vms := cluster.Virt.VirtualizationV1().VirtualMachines(ns)

	signer, authorized := sshKey(t)
	marker := "VIRT-E2E-RUNCMD-" + utilrand.String(8)
	if _, err := cluster.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("256Mi")}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vm := exampleVM(t, "vm-debian.yaml")
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyAlways)
	vm.Spec.Running = nil
	spec := &vm.Spec.Template.Spec
	setUserData(t, spec, fmt.Sprintf(`#cloud-config
users:
  - name: debian
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/bash
    ssh_authorized_keys: [%q]
runcmd:
  - echo %s > /dev/ttyS0
`, authorized, marker))
	// Ready once the guest agent answers.
	spec.ReadinessProbe = &virtv1.Probe{Handler: virtv1.Handler{GuestAgentPing: &virtv1.GuestAgentPing{}}, PeriodSeconds: 2}
	spec.Volumes = append(spec.Volumes, virtv1.Volume{Name: "data", VolumeSource: virtv1.VolumeSource{
		PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}})
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, virtv1.Disk{Name: "data", Serial: "data",
		DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio}}})
	if _, err := vms.Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	first := debianUp(ctx, t, ns, vm.Name, marker)
	t.Run("the guest agent reports the OS", func(t *testing.T) {
		vmi, err := cluster.WaitVMI(ctx, ns, vm.Name, 3*time.Minute, "AgentConnected and guestOSInfo", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			return framework.Condition(v, virtv1.VirtualMachineInstanceAgentConnected) == corev1.ConditionTrue && v.Status.GuestOSInfo.ID != "", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if info := vmi.Status.GuestOSInfo; info.ID != "debian" || info.VersionID != "12" || info.KernelRelease == "" {
			t.Errorf("guestOSInfo = %+v, want Debian 12 with a kernel", info)
		}
		// The guestAgentPing readiness probe passes with the agent up.
		if _, err := cluster.WaitVMI(ctx, ns, vm.Name, time.Minute, "Ready by guestAgentPing", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			c := conditionOf(v, virtv1.VirtualMachineInstanceReady)
			return c != nil && c.Status == corev1.ConditionTrue, nil
		}); err != nil {
			t.Error(err)
		}
	})

	ip := first.Status.Interfaces[0].IPAddress
	t.Run("SSH with the user's key through the pod network", func(t *testing.T) {
		out, err := sshRun(ctx, ip, signer, "id -un && cat /etc/os-release")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "debian\n") || !strings.Contains(out, "ID=debian") {
			t.Errorf("ssh answered %q", out)
		}
	})

	t.Run("the PVC disk keeps its data across a restart, the containerDisk root does not", func(t *testing.T) {
		const prepare = `set -e
dev=/dev/disk/by-id/virtio-data
sudo mkfs.ext4 -q -F $dev
sudo mkdir -p /mnt/data && sudo mount $dev /mnt/data
echo kept-on-the-pvc | sudo tee /mnt/data/file >/dev/null
sudo touch /var/lib/root-marker
sync`
		if out, err := sshRun(ctx, ip, signer, prepare); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if err := put(ctx, cluster.Virt, ns, "virtualmachines", vm.Name, "restart", &virtv1.RestartOptions{}); err != nil {
			t.Fatal(err)
		}
		second := debianUpAfter(ctx, t, ns, vm.Name, marker, first.UID)
		ip = second.Status.Interfaces[0].IPAddress
		out, err := sshRun(ctx, ip, signer, `sudo mkdir -p /mnt/data && sudo mount /dev/disk/by-id/virtio-data /mnt/data && cat /mnt/data/file && if test -e /var/lib/root-marker; then echo root-kept; else echo root-pristine; fi`)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if out != "kept-on-the-pvc\nroot-pristine\n" {
			t.Errorf("after the restart the guest says %q, want the PVC's file and a pristine root", out)
		}
	})

	t.Run("stop is an ACPI shutdown the guest completes", func(t *testing.T) {
		vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Every version of the instance is watched: its final status lives
		// only until virt-controller lets the VMI go.
		var mu sync.Mutex
		var ended *virtv1.VirtualMachineInstanceStatus
		w, err := cluster.WatchVMI(ctx, ns, vm.Name, func(v *virtv1.VirtualMachineInstance) error {
			if v != nil && v.UID == vmi.UID && v.Status.Phase.IsFinal() {
				mu.Lock()
				ended = v.Status.DeepCopy()
				mu.Unlock()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := put(ctx, cluster.Virt, ns, "virtualmachines", vm.Name, "stop", &virtv1.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		err = framework.WaitFor(ctx, 3*time.Minute, "the instance to go", func(ctx context.Context) (bool, error) {
			_, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Stop(); err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		// Powered off by the guest, not destroyed at the deadline: gone well
		// within the grace period, and ended as a shutdown when an end was
		// recorded (a VMI being deleted may go before its end is written).
		grace := time.Duration(*vm.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
		if took := time.Since(start); took >= grace/2 {
			t.Errorf("the guest took %v to go, grace period %v: it must power off on the ACPI button", took.Round(time.Second), grace)
		}
		if ended != nil && ended.Reason != virtv1.ReasonGuestShutdown {
			t.Errorf("the guest ended as %+v, want %s", ended, virtv1.ReasonGuestShutdown)
		}
	})
}

// debianUp waits for the VM's instance to run with its guest past the
// cloud-init runcmd that prints marker, and returns the instance.
func debianUp(ctx context.Context, t *testing.T, ns, name, marker string) *virtv1.VirtualMachineInstance {
	t.Helper()
	return debianUpAfter(ctx, t, ns, name, marker, "")
}

// debianUpAfter is debianUp for an instance other than previous.
func debianUpAfter(ctx context.Context, t *testing.T, ns, name, marker string, previous types.UID) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi, err := cluster.WaitVMI(ctx, ns, name, 3*time.Minute, "a new Running instance", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.UID != previous && v.Status.Phase == virtv1.Running && len(v.Status.Interfaces) > 0 &&
			v.Status.Interfaces[0].IPAddress != "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	noSyncRetries(ctx, t, vmi)
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	serial := cluster.FollowSerial(t, pod)
	if err := serial.WaitFor(ctx, marker, debianBoot); err != nil {
		t.Fatalf("%v\nserial console:\n%s", err, serial.Output())
	}
	return vmi
}

// noSyncRetries fails the test if the node had to retry the start of vmi,
// a VMI with a containerDisk root: its launcher pod is Ready only once the
// disk's container has written its record, so the first Sync finds the
// disk (before, it could answer Unavailable and the node retried, with a
// SyncRetrying event).
func noSyncRetries(ctx context.Context, t *testing.T, vmi *virtv1.VirtualMachineInstance) {
	t.Helper()
	events, err := cluster.Kube.CoreV1().Events(vmi.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(vmi.UID)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "SyncRetrying" {
			t.Errorf("the node retried the start of VMI %s: %s", vmi.Name, e.Message)
		}
	}
}

// exampleVM reads a VirtualMachine manifest of artifacts/examples.
func exampleVM(t *testing.T, file string) *virtv1.VirtualMachine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cluster.Root, "artifacts", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	vm, ok := obj.(*virtv1.VirtualMachine)
	if !ok {
		t.Fatalf("%s holds a %T, not a VirtualMachine", file, obj)
	}
	return vm
}

// setUserData replaces the user data of the spec's cloud-init volume.
func setUserData(t *testing.T, spec *virtv1.VirtualMachineInstanceSpec, userData string) {
	t.Helper()
	for i := range spec.Volumes {
		if ci := spec.Volumes[i].CloudInitNoCloud; ci != nil {
			ci.UserData, ci.UserDataBase64, ci.SecretRef = userData, "", nil
			return
		}
	}
	t.Fatal("the example has no cloudInitNoCloud volume")
}

// sshKey makes the test user's key pair: the signer and the authorized_keys
// line.
func sshKey(t *testing.T) (ssh.Signer, string) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return signer, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
}

// sshRun runs command as user debian on the guest at ip, retrying the
// connection until sshd answers, and returns its standard output.
func sshRun(ctx context.Context, ip string, signer ssh.Signer, command string) (string, error) {
	cfg := &ssh.ClientConfig{
		User: "debian", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		// A fresh guest makes new host keys at every boot.
		HostKeyCallback: ssh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	}
	var client *ssh.Client
	err := framework.WaitFor(ctx, 3*time.Minute, "SSH to "+ip, func(context.Context) (bool, error) {
		var err error
		client, err = ssh.Dial("tcp", net.JoinHostPort(ip, "22"), cfg)
		return err == nil, nil
	})
	if err != nil {
		return "", err
	}
	defer client.Close()
	session, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer session.Close()
	var stdout, stderr bytes.Buffer
	session.Stdout, session.Stderr = &stdout, &stderr
	if err := session.Run(command); err != nil {
		return stdout.String(), fmt.Errorf("ssh %s %q: %w: %s", ip, command, err, stderr.String())
	}
	return stdout.String(), nil
}
