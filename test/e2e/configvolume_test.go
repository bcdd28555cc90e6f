package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestConfigVolumesAndAccessCredentials boots the Debian guest once with
// what KubeVirt users put into ordinary VMs: its cloud-init user data on a
// config drive (no NoCloud volume: the runcmd's marker on the serial
// console says the guest ran it), a ConfigMap, a Secret and a service
// account as read-only disks found by serial with the API's contents, and
// SSH keys from a Secret propagated by the guest agent: a key added to the
// Secret lets ssh in while the guest runs, without a restart.
func TestConfigVolumesAndAccessCredentials(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	core := cluster.Kube.CoreV1()

	signer, authorized := sshKey(t)
	later, laterAuthorized := sshKey(t)
	marker := "VIRT-E2E-CONFIGDRIVE-" + utilrand.String(8)
	if _, err := core.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app-config"},
		Data:       map[string]string{"greeting": "hello from a configmap\n"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "app-secret"},
		StringData: map[string]string{"password": "s3cr3t-" + marker},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The guest agent replaces authorized_keys with the Secret's keys, so
	// the Secret holds the first key too.
	if _, err := core.Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ssh-keys"},
		StringData: map[string]string{"first": authorized},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	password := "pw-" + utilrand.String(12)
	if _, err := core.Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "passwords"},
		StringData: map[string]string{"debian": password},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := framework.WaitFor(ctx, time.Minute, "the namespace's default service account", func(ctx context.Context) (bool, error) {
		_, err := core.ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal(err)
	}

	vm := exampleVM(t, "vm-debian.yaml")
	vm.Name = "vm-config"
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyAlways)
	vm.Spec.Running = nil
	spec := &vm.Spec.Template.Spec
	for i := range spec.Volumes {
		if spec.Volumes[i].CloudInitNoCloud != nil {
			spec.Volumes[i].VolumeSource = virtv1.VolumeSource{CloudInitConfigDrive: &virtv1.CloudInitConfigDriveSource{UserData: fmt.Sprintf(`#cloud-config
users:
  - name: debian
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/bash
    ssh_authorized_keys: [%q]
runcmd:
  - echo %s > /dev/ttyS0
`, authorized, marker)}}
		}
	}
	addDisk := func(name string, src virtv1.VolumeSource) {
		spec.Volumes = append(spec.Volumes, virtv1.Volume{Name: name, VolumeSource: src})
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, virtv1.Disk{Name: name, Serial: name,
			DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio}}})
	}
	addDisk("cfg", virtv1.VolumeSource{ConfigMap: &virtv1.ConfigMapVolumeSource{Name: "app-config"}})
	addDisk("sec", virtv1.VolumeSource{Secret: &virtv1.SecretVolumeSource{SecretName: "app-secret", VolumeLabel: "appsecret"}})
	addDisk("sa", virtv1.VolumeSource{ServiceAccount: &virtv1.ServiceAccountVolumeSource{ServiceAccountName: "default"}})
	spec.AccessCredentials = []virtv1.AccessCredential{{SSHPublicKey: &virtv1.SSHPublicKeyAccessCredential{
		Source: virtv1.SSHPublicKeyAccessCredentialSource{Secret: &virtv1.AccessCredentialSecretSource{SecretName: "ssh-keys"}},
		PropagationMethod: virtv1.SSHPublicKeyAccessCredentialPropagationMethod{
			QemuGuestAgent: &virtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"debian"}}},
	}}, {UserPassword: &virtv1.UserPasswordAccessCredential{
		Source:            virtv1.UserPasswordAccessCredentialSource{Secret: &virtv1.AccessCredentialSecretSource{SecretName: "passwords"}},
		PropagationMethod: virtv1.UserPasswordAccessCredentialPropagationMethod{QemuGuestAgent: &virtv1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}},
	}}}
	// Ready only while the guest agent runs the probe's command and it
	// succeeds: the file exists only once the test creates it.
	spec.ReadinessProbe = &virtv1.Probe{
		Handler:       virtv1.Handler{Exec: &corev1.ExecAction{Command: []string{"cat", readyFile}}},
		PeriodSeconds: 2, FailureThreshold: 1, TimeoutSeconds: 5,
	}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	vmi := debianUp(ctx, t, ns, vm.Name, marker)
	t.Logf("config-drive user data ran %v after the create", time.Since(start).Round(time.Second))
	ip := vmi.Status.Interfaces[0].IPAddress

	t.Run("ConfigMap, Secret and service account are read-only disks with the API's contents", func(t *testing.T) {
		const script = `set -e
for d in cfg sec sa; do
  sudo mkdir -p /mnt/$d
  sudo mount -o ro /dev/disk/by-id/virtio-$d /mnt/$d
  echo "label $d $(sudo blkid -s LABEL -o value /dev/disk/by-id/virtio-$d)"
done
echo "ro $(cat /sys/block/$(basename $(readlink -f /dev/disk/by-id/virtio-cfg))/ro)"
echo "greeting $(cat /mnt/cfg/greeting)"
echo "password $(cat /mnt/sec/password)"
echo "namespace $(cat /mnt/sa/namespace)"
echo "token $(head -c 3 /mnt/sa/token)"
echo "ca $(head -n 1 /mnt/sa/ca.crt)"
echo "configdrive $(sudo blkid -L config-2 >/dev/null && echo found)"`
		out, err := sshRun(ctx, ip, signer, script)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []string{
			"label cfg cfgdata\n", "label sec appsecret\n", "label sa cfgdata\n", "ro 1\n",
			"greeting hello from a configmap\n", "password s3cr3t-" + marker + "\n",
			"namespace " + ns + "\n", "token eyJ\n", "ca -----BEGIN CERTIFICATE-----\n", "configdrive found\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the guest lacks %q; it says:\n%s", want, out)
			}
		}
	})

	t.Run("an exec readiness probe runs its command in the guest through the agent", func(t *testing.T) {
		ready := func(want corev1.ConditionStatus, reason string) {
			t.Helper()
			if _, err := cluster.WaitVMI(ctx, ns, vm.Name, 2*time.Minute, fmt.Sprintf("Ready %s %s", want, reason), func(v *virtv1.VirtualMachineInstance) (bool, error) {
				c := conditionOf(v, virtv1.VirtualMachineInstanceReady)
				return c != nil && c.Status == want && c.Reason == reason, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		ready(corev1.ConditionFalse, "ReadinessProbeFailed")
		if out, err := sshRun(ctx, ip, signer, "echo ready | sudo tee "+readyFile); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		ready(corev1.ConditionTrue, "")
	})

	t.Run("a userPassword Secret sets the user's password through the agent", func(t *testing.T) {
		// The guest checks the password against its own shadow entry
		// (yescrypt on Debian 12, through libxcrypt).
		check := `sudo python3 -W ignore -c 'import crypt, spwd, sys; h = spwd.getspnam("debian").sp_pwdp; print("match" if crypt.crypt(sys.argv[1], h) == h else "differs")' ` + password
		var last string
		if err := framework.WaitFor(ctx, 2*time.Minute, "the Secret's password in the guest's shadow file", func(ctx context.Context) (bool, error) {
			out, err := sshRun(ctx, ip, signer, check)
			last = fmt.Sprintf("%q %v", out, err)
			return err == nil && out == "match\n", nil
		}); err != nil {
			t.Fatalf("%v; the guest said %s", err, last)
		}
	})

	t.Run("a key added to the accessCredentials Secret lets ssh in without a restart", func(t *testing.T) {
		if out, err := sshRunOnce(ctx, ip, later, "true"); err == nil {
			t.Fatalf("the second key logs in before it is in the Secret (%q)", out)
		}
		s, err := core.Secrets(ns).Get(ctx, "ssh-keys", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.StringData = map[string]string{"second": laterAuthorized}
		if _, err := core.Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		added := time.Now()
		// The kubelet refreshes the Secret's volume within its sync period
		// (about a minute), the launcher looks every few seconds.
		if err := framework.WaitFor(ctx, 3*time.Minute, "ssh with the added key", func(ctx context.Context) (bool, error) {
			out, err := sshRunOnce(ctx, ip, later, "id -un")
			return err == nil && out == "debian\n", nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("the added key worked %v after the Secret's update", time.Since(added).Round(time.Second))
		now, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if now.UID != vmi.UID {
			t.Errorf("the instance was replaced (%s, was %s): the key must arrive without a restart", now.UID, vmi.UID)
		}
		if _, err := sshRunOnce(ctx, ip, signer, "true"); err != nil {
			t.Errorf("the first key, still in the Secret, no longer logs in: %v", err)
		}
	})
}

// readyFile is the file the exec readiness probe of
// TestConfigVolumesAndAccessCredentials reads in the guest.
const readyFile = "/run/virt-e2e-ready"

// sshRunOnce is sshRun with a single connection attempt: for a key that
// must not (yet) log in.
func sshRunOnce(ctx context.Context, ip string, signer ssh.Signer, command string) (string, error) {
	cfg := &ssh.ClientConfig{
		User: "debian", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	}
	client, err := ssh.Dial("tcp", net.JoinHostPort(ip, "22"), cfg)
	if err != nil {
		return "", err
	}
	defer client.Close()
	session, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer session.Close()
	out, err := session.Output(command)
	return string(out), err
}
